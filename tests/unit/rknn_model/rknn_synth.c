/* rknn_synth.c: the `.rknn` writer of the tests (rknn_synth.h). */
#include "rknn_synth.h"

#include <stdlib.h>
#include <string.h>

static void put(rs_ab *a, const void *p, size_t n)
{
    if (a->n + n <= a->cap)
        memcpy(a->b + a->n, p, n);
    a->n += n;
}

static void key(rs_ab *a, int tag, const char *k)
{
    uint8_t t = (uint8_t)tag;
    put(a, &t, 1);
    put(a, k, strlen(k) + 1);
}

void rs_ab_init(rs_ab *a, uint8_t *buf, size_t cap)
{
    memset(a, 0, sizeof *a);
    a->b = buf;
    a->cap = cap;
    a->n = 4; /* total length, written by finish */
}

void rs_ab_int(rs_ab *a, const char *k, int32_t v)
{
    key(a, 0x10, k);
    put(a, &v, 4);
}

void rs_ab_f64(rs_ab *a, const char *k, double v)
{
    key(a, 0x01, k);
    put(a, &v, 8);
}

void rs_ab_str(rs_ab *a, const char *k, const char *v)
{
    key(a, 0x02, k);
    uint32_t n = (uint32_t)strlen(v) + 1;
    put(a, &n, 4);
    put(a, v, n);
}

void rs_ab_open(rs_ab *a, int tag, const char *k)
{
    key(a, tag, k);
    if (a->depth < 8)
        a->open[a->depth++] = a->n;
    uint32_t zero = 0;
    put(a, &zero, 4);
}

void rs_ab_close(rs_ab *a)
{
    uint8_t end = 0;
    put(a, &end, 1);
    if (a->depth == 0)
        return;
    size_t at = a->open[--a->depth];
    uint32_t n = (uint32_t)(a->n - at);
    if (at + 4 <= a->cap)
        memcpy(a->b + at, &n, 4);
}

size_t rs_ab_finish(rs_ab *a)
{
    uint8_t end = 0;
    put(a, &end, 1);
    uint32_t n = (uint32_t)a->n;
    if (a->cap >= 4)
        memcpy(a->b, &n, 4);
    return a->n;
}

/* {"dilations": {dtype: 'is', value: [2, 1]}, "group": {dtype: 'i', value: 1}, "alpha": 0.5} as the toolkit
   stores attributes (the list keys out of order on purpose) */
static const uint8_t *make_conv_attrs(uint8_t *buf, size_t cap, size_t *len)
{
    rs_ab a;
    rs_ab_init(&a, buf, cap);
    rs_ab_open(&a, 3, "dilations");
    rs_ab_str(&a, "dtype", "is");
    rs_ab_open(&a, 4, "value");
    rs_ab_int(&a, "1", 1);
    rs_ab_int(&a, "0", 2);
    rs_ab_close(&a);
    rs_ab_close(&a);
    rs_ab_open(&a, 3, "group");
    rs_ab_str(&a, "dtype", "i");
    rs_ab_int(&a, "value", 1);
    rs_ab_close(&a);
    rs_ab_f64(&a, "alpha", 0.5);
    *len = rs_ab_finish(&a);
    return buf;
}

static const uint8_t output_struct[16] = {0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 6, 0, 0, 0};

void rs_demo(rs_model *m)
{
    memset(m, 0, sizeof *m);
    m->version = 6;
    m->schema = 6;
    m->format = "RKNPU lite";
    m->target = "rk3566";
    m->compiler = "1.6.2-test(compiler version: 1.6.2b0 (0000000@2024-01-01T00:00:00))";
    m->compiler_num = 10602;
    m->source = "ONNX";
    m->shape_mode = "static_shape";
    m->dict = "{'attrs': {'x': {'idx': 0, 'shape': [1, 3, 4, 4], 'layout': 'nchw', 'is_output': False, "
              "'dtype': 'float32', 'mean': [127.5, 127.5, 127.5], 'std': [58.5, 57.0, 57.5], "
              "'reorder': '2 1 0'}, 'y': {'is_output': True, 'idx': 0, 'shape': ['y_dim_0', 4], "
              "'dtype': 'float32', 'layout': 'nchw'}}, 'quant_tab': {'x': {'dtype': 'float32', 'qmethod': "
              "'layer', 'qtype': 'asym', 'min': [-2.17], 'max': [2.2], 'scale': [], 'zero_point': [], "
              "'ori_min': [-2.5], 'ori_max': [2.5e-05]}}, 'dynamic_shapes': {}}";
    m->input_json = "{\"x\": {\"dtype\": \"int8\", \"layout\": \"NHWC\"}}";
    m->output_json = "{\"y\": {\"dtype\": \"int8\", \"layout\": \"NCHW\"}}";
    m->json = "{\"connection\": [], \"const_tensor\": [], \"graph\": [{\"left\": \"input\", \"left_tensor_id\": 0, "
              "\"right\": \"norm_tensor\", \"right_tensor_id\": 0}, {\"left\": \"output\", \"left_tensor_id\": 0, "
              "\"right\": \"norm_tensor\", \"right_tensor_id\": 1}], \"name\": \"rknn model\", "
              "\"network_platform\": \"ONNX\", \"norm_tensor\": [{\"dim_num\": 4, \"dtype\": {\"qnt_method\": "
              "\"layer\", \"qnt_type\": \"int8\", \"vx_type\": \"int8\"}, \"size\": [1, 3, 4, 4], \"tensor_id\": 0, "
              "\"url\": \"x\"}, {\"dim_num\": 4, \"dtype\": {\"qnt_method\": \"layer\", \"qnt_type\": \"int8\", "
              "\"vx_type\": \"int8\"}, \"size\": [1, 8, 4, 4], \"tensor_id\": 1, \"url\": \"y\"}], "
              "\"target_platform\": [\"rk3566\"], \"version\": \"1.6.2-test\"}";
    rs_tensor *t = m->tensors;
    t[0] = (rs_tensor){.name = "", .blob = -1};
    t[1] = (rs_tensor){"x",     3,      64, 1,        4,      {1, 3, 4, 4}, 5,    {1, 1, 4, 4, 3},
                       "layer", "int8", 1,  {-2.17f}, {2.2f}, {0.0172549f}, {-2}, 48,
                       0,       -1};
    t[2] = (rs_tensor){"w", 3, 65, 4, 4, {8, 3, 3, 3}, 6, {1, 1, 3, 3, 8, 8}, "", "", 0, {0}, {0}, {0}, {0}, 576, 0, 1};
    t[3] = (rs_tensor){"b", 6, 0, 4, 1, {8}, 1, {32}, "", "", 0, {0}, {0}, {0}, {0}, 128, 0, 2};
    t[4] = (rs_tensor){"r",           3,   64,  3,  4, {1, 8, 4, 4}, 5, {1, 1, 4, 4, 8}, "layer", "int8", 1, {-1}, {1},
                       {0.00784314f}, {0}, 128, 64, -1};
    t[5] = (rs_tensor){"y",
                       3,
                       64,
                       2,
                       4,
                       {1, 8, 4, 4},
                       5,
                       {1, 1, 4, 4, 8},
                       "channel",
                       "int8",
                       4,
                       {-1, -2, -3, -4},
                       {1, 2, 3, 4},
                       {0.1f, 0.2f, 0.3f, 0.4f},
                       {1, -2, 3, -4},
                       128,
                       192,
                       -1};
    m->n_tensors = 6;
    rs_node *n = m->nodes;
    size_t alen;
    const uint8_t *attrs = make_conv_attrs(m->storage, 256, &alen);
    uint8_t *bias = m->storage + 256, *weight = m->storage + 384;
    /* [8, 3, 3, 3] packed as [1, 1, 3, 3, 8, 8]: ((y * 3 + x) * 8 + o) * 8 + i */
    for (int o = 0; o < 8; o++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 3; x++)
                for (int i = 0; i < 8; i++)
                    weight[((y * 3 + x) * 8 + o) * 8 + i] =
                        (uint8_t)(int8_t)(i < 3 ? o * 27 + i * 9 + y * 3 + x - 100 : o - 4);
    n[0] = (rs_node){"InputOperator", "InputOperator:x", -1, 0, {0}, 1, {1}, 0, NULL, 0, 1, {0}};
    n[1] = (rs_node){"Conv", "Conv:conv_r", 2, 3, {1, 2, 3}, 1, {4}, 1, attrs, alen, 1, {1}};
    n[2] = (rs_node){"ConvAdd", "Conv:conv_y", 2, 4, {1, 2, 3, 4}, 1, {5}, 1, NULL, 0, 1, {1}};
    n[3] = (rs_node){"OutputOperator", "OutputOperator:y", 2, 1, {5}, 0, {0}, 0, output_struct, 16, 1, {2}};
    m->n_nodes = 4;
    m->n_inputs = 1;
    m->inputs[0] = 1;
    m->n_outputs = 1;
    m->outputs[0] = 5;
    for (size_t i = 0; i < 128; i++)
        bias[i] = (uint8_t)i;
    m->blobs[0] = NULL;
    m->blobs[1] = weight;
    m->blob_len[1] = 576;
    m->blobs[2] = bias;
    m->blob_len[2] = 128;
    m->n_blobs = 3;
}

static rd_fbb_ref ints(rd_fbb *b, const int *v, int n)
{
    int32_t tmp[8];
    for (int i = 0; i < n && i < 8; i++)
        tmp[i] = v[i];
    return rd_fbb_vector(b, tmp, (size_t)n, 4, 0);
}

static void add_str(rd_fbb *b, rd_fbb_ref t, unsigned slot, const char *s)
{
    if (s)
        rd_fbb_add_ref(b, t, slot, rd_fbb_string(b, s));
}

static void add_u8(rd_fbb *b, rd_fbb_ref t, unsigned slot, int v)
{
    uint8_t x = (uint8_t)v;
    rd_fbb_add_scalar(b, t, slot, &x, 1);
}

static void add_u32(rd_fbb *b, rd_fbb_ref t, unsigned slot, uint32_t v)
{
    rd_fbb_add_scalar(b, t, slot, &v, 4);
}

static rd_fbb_ref tensor(rd_fbb *b, const rs_tensor *x)
{
    rd_fbb_ref t = rd_fbb_table(b);
    add_u8(b, t, 0, x->dtype);
    add_u8(b, t, 1, x->layout);
    add_u8(b, t, 2, x->role);
    rd_fbb_add_ref(b, t, 3, ints(b, x->native, x->native_rank));
    rd_fbb_add_ref(b, t, 4, ints(b, x->shape, x->rank));
    add_str(b, t, 5, x->name);
    add_str(b, t, 6, x->qmethod ? x->qmethod : "");
    add_str(b, t, 7, x->qtype ? x->qtype : "");
    rd_fbb_add_ref(b, t, 8, rd_fbb_vector(b, x->min, (size_t)x->n_q, 4, 0));
    rd_fbb_add_ref(b, t, 9, rd_fbb_vector(b, x->max, (size_t)x->n_q, 4, 0));
    rd_fbb_add_ref(b, t, 10, rd_fbb_vector(b, x->scale, (size_t)x->n_q, 4, 0));
    rd_fbb_add_ref(b, t, 11, rd_fbb_vector(b, x->zp, (size_t)x->n_q, 4, 0));
    add_u32(b, t, 12, x->size);
    if (x->offset)
        add_u32(b, t, 13, x->offset);
    if (x->blob >= 0)
        add_u32(b, t, 18, (uint32_t)x->blob);
    return t;
}

static rd_fbb_ref params(rd_fbb *b, int type)
{
    rd_fbb_ref p = rd_fbb_table(b);
    static const int one[] = {1, 1}, k3[] = {3, 3}, pads[] = {1, 1, 1, 1}, split[] = {4, 4};
    int32_t axis = 1;
    switch (type) {
    case 1:
        add_str(b, p, 0, "NOTSET");
        rd_fbb_add_ref(b, p, 1, ints(b, one, 2));
        rd_fbb_add_ref(b, p, 3, ints(b, k3, 2));
        rd_fbb_add_ref(b, p, 4, ints(b, pads, 4));
        rd_fbb_add_ref(b, p, 5, ints(b, one, 2));
        break;
    case 19:
        rd_fbb_add_scalar(b, p, 0, &axis, 4);
        break;
    case 20:
        rd_fbb_add_scalar(b, p, 0, &axis, 4);
        rd_fbb_add_ref(b, p, 1, ints(b, split, 2));
        break;
    case 26:
        add_str(b, p, 0, "half_pixel");
        add_str(b, p, 4, "nearest");
        add_str(b, p, 5, "round_prefer_floor");
        break;
    default: /* fields this reader does not know: a byte, a string, an int list, an int */
        add_u8(b, p, 0, 7);
        add_str(b, p, 1, "guess");
        rd_fbb_add_ref(b, p, 2, ints(b, pads, 4));
        rd_fbb_add_scalar(b, p, 3, &(int32_t){-5}, 4);
        break;
    }
    return p;
}

static rd_fbb_ref node(rd_fbb *b, const rs_node *x)
{
    rd_fbb_ref t = rd_fbb_table(b);
    add_str(b, t, 1, x->type);
    add_str(b, t, 2, x->name);
    if (x->target >= 0)
        add_u8(b, t, 3, x->target);
    rd_fbb_add_ref(b, t, 4, ints(b, x->in, x->n_in));
    rd_fbb_add_ref(b, t, 5, ints(b, x->out, x->n_out));
    if (x->param_type) {
        add_u8(b, t, 7, x->param_type);
        rd_fbb_add_ref(b, t, 8, params(b, x->param_type));
    }
    if (x->attrs)
        rd_fbb_add_ref(b, t, 9, rd_fbb_vector(b, x->attrs, x->attrs_len, 1, 0));
    rd_fbb_add_ref(b, t, 10, ints(b, x->tasks, x->n_tasks));
    rd_fbb_add_ref(b, t, 11, ints(b, (const int[]){0}, 1));
    return t;
}

static rd_status flatbuffer(const rs_model *m, uint8_t **out, size_t *len, rd_error *err)
{
    rd_fbb *b = rd_fbb_create();
    rd_fbb_ref ts[RS_MAX], ns[RS_MAX], bl[RS_MAX];
    for (int i = 0; i < m->n_tensors; i++)
        ts[i] = tensor(b, &m->tensors[i]);
    for (int i = 0; i < m->n_nodes; i++)
        ns[i] = node(b, &m->nodes[i]);
    rd_fbb_ref g = rd_fbb_table(b);
    rd_fbb_add_ref(b, g, 0, rd_fbb_vector_refs(b, ts, (size_t)m->n_tensors));
    rd_fbb_add_ref(b, g, 1, rd_fbb_vector_refs(b, ns, (size_t)m->n_nodes));
    rd_fbb_add_ref(b, g, 2, ints(b, m->inputs, m->n_inputs));
    rd_fbb_add_ref(b, g, 3, ints(b, m->outputs, m->n_outputs));
    for (int i = 0; i < m->n_blobs; i++) {
        bl[i] = rd_fbb_table(b);
        rd_fbb_add_ref(b, bl[i], 0, rd_fbb_vector(b, m->blobs[i], m->blob_len[i], 1, 64));
    }
    rd_fbb_ref root = rd_fbb_table(b);
    rd_fbb_add_scalar(b, root, 0, &(int32_t){m->schema}, 4);
    add_str(b, root, 1, m->format);
    rd_fbb_add_ref(b, root, 2, rd_fbb_vector_refs(b, &g, 1));
    add_str(b, root, 3, m->dict);
    rd_fbb_add_scalar(b, root, 6, &(int32_t){m->compiler_num}, 4);
    add_str(b, root, 7, m->compiler);
    add_str(b, root, 8, m->target);
    add_str(b, root, 9, m->source);
    add_u8(b, root, 10, 2);
    add_str(b, root, 12, m->input_json);
    add_str(b, root, 13, m->output_json);
    add_str(b, root, 14, "0");
    add_str(b, root, 16, m->shape_mode);
    rd_fbb_add_ref(b, root, (m->version & 0xff) > 5 ? 20 : 4, rd_fbb_vector_refs(b, bl, (size_t)m->n_blobs));
    rd_fbb_add_scalar(b, root, 21, &(uint64_t){12345}, 8);
    rd_status st = rd_fbb_finish(b, root, "RKNN", out, len, err);
    rd_fbb_destroy(b);
    return st;
}

rd_status rs_write(const rs_model *m, uint8_t **out, size_t *len, rd_error *err)
{
    uint8_t *fb;
    size_t fb_len;
    rd_status st = flatbuffer(m, &fb, &fb_len, err);
    if (st != RD_OK)
        return st;
    size_t padded = (fb_len + 63) / 64 * 64, header = (m->version & 0xff) > 1 ? 64 : 24;
    size_t jlen = m->json && !m->no_json ? strlen(m->json) : 0;
    size_t total = header + padded + (m->no_json ? 0 : 8 + jlen);
    uint8_t *f = calloc(1, total);
    if (!f) {
        free(fb);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    memcpy(f, "RKNN", 4);
    memcpy(f + 8, &m->version, 8);
    uint64_t d = padded, j = jlen;
    memcpy(f + 16, &d, 8);
    memcpy(f + header, fb, fb_len);
    if (!m->no_json) {
        memcpy(f + header + padded, &j, 8);
        if (jlen)
            memcpy(f + header + padded + 8, m->json, jlen);
    }
    free(fb);
    *out = f;
    *len = total;
    return RD_OK;
}

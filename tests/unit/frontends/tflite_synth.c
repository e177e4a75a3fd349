/*
 * tflite_synth.c: the .tflite writer of tests and fuzz seeds (tflite_synth.h). Slots follow schema.fbs: Model
 * {version 0, operator_codes 1, subgraphs 2, description 3, buffers 4}, OperatorCode {deprecated_builtin_code 0,
 * custom_code 1, version 2, builtin_code 3}, SubGraph {tensors 0, inputs 1, outputs 2, operators 3, name 4},
 * Buffer {data 0}, Tensor {shape 0, type 1, buffer 2, name 3, quantization 4}, QuantizationParameters {scale 2,
 * zero_point 3, quantized_dimension 6}, Operator {opcode_index 0, inputs 1, outputs 2, builtin_options_type 3,
 * builtin_options 4}.
 */
#include "tflite_synth.h"

#include <stdlib.h>
#include <string.h>

#define TFS_MAX 256

typedef struct tfs_tdef {
    char name[128];
    int type, rank;
    int32_t dims[8];
    uint8_t *data;
    size_t len;
    int n_q, qdim;
    float scales[64];
    int64_t zps[64];
} tfs_tdef;

typedef struct tfs_opdef {
    int code;
    char custom[64];
    int in[32], out[8], n_in, n_out;
    int opt_type, n_fields;
    tfs_field fields[16];
} tfs_opdef;

struct tfs_model {
    tfs_tdef t[TFS_MAX];
    int n_t;
    tfs_opdef o[TFS_MAX];
    int n_o;
    int in[16], out[16], n_in, n_out;
};

tfs_model *tfs_create(void)
{
    return calloc(1, sizeof(tfs_model));
}

void tfs_destroy(tfs_model *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_t; i++)
        free(m->t[i].data);
    free(m);
}

int tfs_tensor(tfs_model *m, const char *name, int type, int rank, const int32_t *dims, const void *data, size_t len)
{
    if (m->n_t == TFS_MAX || rank > 8)
        return -1;
    tfs_tdef *t = &m->t[m->n_t];
    memset(t, 0, sizeof *t);
    strncpy(t->name, name ? name : "", sizeof t->name - 1);
    t->type = type;
    t->rank = rank;
    if (rank > 0)
        memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
    if (data && len) {
        t->data = malloc(len);
        if (!t->data)
            return -1;
        memcpy(t->data, data, len);
        t->len = len;
    }
    return m->n_t++;
}

void tfs_quant(tfs_model *m, int t, const float *scales, const int64_t *zero_points, int n, int qdim)
{
    if (t < 0 || t >= m->n_t || n > 64)
        return;
    m->t[t].n_q = n;
    m->t[t].qdim = qdim;
    memcpy(m->t[t].scales, scales, (size_t)n * sizeof *scales);
    if (zero_points)
        memcpy(m->t[t].zps, zero_points, (size_t)n * sizeof *zero_points);
}

int tfs_op(tfs_model *m, int code, const int *in, int n_in, const int *out, int n_out, int opt_type,
           const tfs_field *fields, int n_fields)
{
    if (m->n_o == TFS_MAX || n_in > 32 || n_out > 8 || n_fields > 16)
        return -1;
    tfs_opdef *o = &m->o[m->n_o];
    memset(o, 0, sizeof *o);
    o->code = code;
    memcpy(o->in, in, (size_t)n_in * sizeof *in);
    memcpy(o->out, out, (size_t)n_out * sizeof *out);
    o->n_in = n_in;
    o->n_out = n_out;
    o->opt_type = opt_type;
    o->n_fields = n_fields;
    if (n_fields)
        memcpy(o->fields, fields, (size_t)n_fields * sizeof *fields);
    return m->n_o++;
}

int tfs_custom_op(tfs_model *m, const char *custom, const int *in, int n_in, const int *out, int n_out)
{
    int k = tfs_op(m, 32, in, n_in, out, n_out, 0, NULL, 0);
    if (k >= 0)
        strncpy(m->o[k].custom, custom, sizeof m->o[k].custom - 1);
    return k;
}

int64_t tfs_f32(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return bits;
}

void tfs_io(tfs_model *m, const int *in, int n_in, const int *out, int n_out)
{
    memcpy(m->in, in, (size_t)n_in * sizeof *in);
    memcpy(m->out, out, (size_t)n_out * sizeof *out);
    m->n_in = n_in;
    m->n_out = n_out;
}

static rd_fbb_ref ints(rd_fbb *b, const int *v, int n)
{
    int32_t w[32];
    for (int i = 0; i < n; i++)
        w[i] = v[i];
    return rd_fbb_vector(b, w, (size_t)n, 4, 4);
}

rd_status tfs_finish(tfs_model *m, uint8_t **buf, size_t *len, rd_error *err)
{
    rd_fbb *b = rd_fbb_create();
    /* buffers: 0 is the empty one, then one per constant tensor */
    rd_fbb_ref buffers[TFS_MAX + 1], tensors[TFS_MAX], ops[TFS_MAX], codes[TFS_MAX];
    int n_buf = 1, n_codes = 0, code_of[TFS_MAX];
    buffers[0] = rd_fbb_table(b);
    for (int i = 0; i < m->n_t; i++) {
        const tfs_tdef *t = &m->t[i];
        uint32_t bi = 0;
        if (t->data) {
            buffers[n_buf] = rd_fbb_table(b);
            rd_fbb_add_ref(b, buffers[n_buf], 0, rd_fbb_vector(b, t->data, t->len, 1, 16));
            bi = (uint32_t)n_buf++;
        }
        rd_fbb_ref tt = rd_fbb_table(b);
        rd_fbb_add_ref(b, tt, 0, rd_fbb_vector(b, t->dims, (size_t)t->rank, 4, 4));
        int8_t type = (int8_t)t->type;
        rd_fbb_add_scalar(b, tt, 1, &type, 1);
        rd_fbb_add_scalar(b, tt, 2, &bi, 4);
        rd_fbb_add_ref(b, tt, 3, rd_fbb_string(b, t->name));
        if (t->n_q) {
            rd_fbb_ref q = rd_fbb_table(b);
            rd_fbb_add_ref(b, q, 2, rd_fbb_vector(b, t->scales, (size_t)t->n_q, 4, 4));
            rd_fbb_add_ref(b, q, 3, rd_fbb_vector(b, t->zps, (size_t)t->n_q, 8, 8));
            int32_t qd = t->qdim;
            rd_fbb_add_scalar(b, q, 6, &qd, 4);
            rd_fbb_add_ref(b, tt, 4, q);
        }
        tensors[i] = tt;
    }
    for (int i = 0; i < m->n_o; i++) {
        const tfs_opdef *o = &m->o[i];
        int k = 0;
        while (k < n_codes && !(m->o[code_of[k]].code == o->code && strcmp(m->o[code_of[k]].custom, o->custom) == 0))
            k++;
        if (k == n_codes) {
            code_of[n_codes] = i;
            rd_fbb_ref c = rd_fbb_table(b);
            int8_t dep = o->code < 127 ? (int8_t)o->code : 127;
            int32_t code = o->code, version = 1;
            rd_fbb_add_scalar(b, c, 0, &dep, 1);
            if (o->custom[0])
                rd_fbb_add_ref(b, c, 1, rd_fbb_string(b, o->custom));
            rd_fbb_add_scalar(b, c, 2, &version, 4);
            rd_fbb_add_scalar(b, c, 3, &code, 4);
            codes[n_codes++] = c;
        }
        rd_fbb_ref ot = rd_fbb_table(b);
        uint32_t idx = (uint32_t)k;
        rd_fbb_add_scalar(b, ot, 0, &idx, 4);
        rd_fbb_add_ref(b, ot, 1, ints(b, o->in, o->n_in));
        rd_fbb_add_ref(b, ot, 2, ints(b, o->out, o->n_out));
        if (o->opt_type) {
            rd_fbb_ref opt = rd_fbb_table(b);
            for (int f = 0; f < o->n_fields; f++) {
                int64_t v = o->fields[f].value;
                if (o->fields[f].size == 1) {
                    int8_t v8 = (int8_t)v;
                    rd_fbb_add_scalar(b, opt, o->fields[f].slot, &v8, 1);
                } else {
                    int32_t v32 = (int32_t)v;
                    rd_fbb_add_scalar(b, opt, o->fields[f].slot, &v32, 4);
                }
            }
            uint8_t ty = (uint8_t)o->opt_type;
            rd_fbb_add_scalar(b, ot, 3, &ty, 1);
            rd_fbb_add_ref(b, ot, 4, opt);
        }
        ops[i] = ot;
    }
    rd_fbb_ref sg = rd_fbb_table(b);
    rd_fbb_add_ref(b, sg, 0, rd_fbb_vector_refs(b, tensors, (size_t)m->n_t));
    rd_fbb_add_ref(b, sg, 1, ints(b, m->in, m->n_in));
    rd_fbb_add_ref(b, sg, 2, ints(b, m->out, m->n_out));
    rd_fbb_add_ref(b, sg, 3, rd_fbb_vector_refs(b, ops, (size_t)m->n_o));
    rd_fbb_ref root = rd_fbb_table(b);
    uint32_t version = 3;
    rd_fbb_add_scalar(b, root, 0, &version, 4);
    rd_fbb_add_ref(b, root, 1, rd_fbb_vector_refs(b, codes, (size_t)n_codes));
    rd_fbb_add_ref(b, root, 2, rd_fbb_vector_refs(b, &sg, 1));
    rd_fbb_add_ref(b, root, 4, rd_fbb_vector_refs(b, buffers, (size_t)n_buf));
    rd_status st = rd_fbb_finish(b, root, "TFL3", buf, len, err);
    rd_fbb_destroy(b);
    return st;
}

/* ---- example models ------------------------------------------------------------------------------------- */

static int act(tfs_model *m, const char *name, int type, int rank, const int32_t *dims)
{
    return tfs_tensor(m, name, type, rank, dims, NULL, 0);
}

static int ivec(tfs_model *m, const char *name, const int32_t *v, int n)
{
    return tfs_tensor(m, name, TFS_INT32, 1, (const int32_t[]){n}, v, (size_t)n * 4);
}

tfs_model *tfs_example_zoo(void)
{
    tfs_model *m = tfs_create();
    const int32_t d4[4] = {1, 4, 4, 4};
    int x = act(m, "x", TFS_FLOAT32, 4, d4);
    /* PAD 1 on H and W, AVERAGE_POOL_2D 3x3 VALID -> 4x4 */
    int pads = tfs_tensor(m, "pad/paddings", TFS_INT32, 2, (const int32_t[]){4, 2},
                          (const int32_t[]){0, 0, 1, 1, 1, 1, 0, 0}, 32);
    int p = act(m, "pad", TFS_FLOAT32, 4, (const int32_t[]){1, 6, 6, 4});
    tfs_op(m, 34, (const int[]){x, pads}, 2, &p, 1, 22, NULL, 0);
    int ap = act(m, "avgpool", TFS_FLOAT32, 4, d4);
    tfs_op(m, 1, &p, 1, &ap, 1, 5, (const tfs_field[]){{0, 1, 1}, {1, 4, 1}, {2, 4, 1}, {3, 4, 3}, {4, 4, 3}}, 5);
    /* ADD with RELU, SUB with RELU_N1_TO_1, MUL: broadcasting a [4] constant */
    float c4[4] = {0.5f, -0.25f, 1.5f, -1.0f};
    int c = tfs_tensor(m, "scale4", TFS_FLOAT32, 1, (const int32_t[]){4}, c4, sizeof c4);
    int a = act(m, "add", TFS_FLOAT32, 4, d4);
    tfs_op(m, 0, (const int[]){ap, x}, 2, &a, 1, 11, (const tfs_field[]){{0, 1, 1}}, 1);
    int s = act(m, "sub", TFS_FLOAT32, 4, d4);
    tfs_op(m, 41, (const int[]){a, c}, 2, &s, 1, 28, (const tfs_field[]){{0, 1, 2}}, 1);
    int mu = act(m, "mul", TFS_FLOAT32, 4, d4);
    tfs_op(m, 18, (const int[]){s, c}, 2, &mu, 1, 21, NULL, 0);
    /* CONCATENATION on channels, LEAKY_RELU, HARD_SWISH, LOGISTIC */
    int cat = act(m, "concat", TFS_FLOAT32, 4, (const int32_t[]){1, 4, 4, 8});
    tfs_op(m, 2, (const int[]){mu, x}, 2, &cat, 1, 10, (const tfs_field[]){{0, 4, 3}}, 1);
    int lr = act(m, "leaky", TFS_FLOAT32, 4, (const int32_t[]){1, 4, 4, 8});
    tfs_op(m, 98, &cat, 1, &lr, 1, 75, (const tfs_field[]){{0, 4, tfs_f32(0.1f)}}, 1);
    int hs = act(m, "hswish", TFS_FLOAT32, 4, (const int32_t[]){1, 4, 4, 8});
    tfs_op(m, 117, &lr, 1, &hs, 1, 0, NULL, 0);
    /* DEPTH_TO_SPACE 2: [1, 8, 8, 2]; RESIZE_BILINEAR (half pixel) to 16x16; RESIZE_NEAREST (align corners) */
    int d2s = act(m, "d2s", TFS_FLOAT32, 4, (const int32_t[]){1, 8, 8, 2});
    tfs_op(m, 5, &hs, 1, &d2s, 1, 94, (const tfs_field[]){{0, 4, 2}}, 1);
    int size = ivec(m, "resize/size", (const int32_t[]){16, 12}, 2);
    int rb = act(m, "bilinear", TFS_FLOAT32, 4, (const int32_t[]){1, 16, 12, 2});
    tfs_op(m, 23, (const int[]){d2s, size}, 2, &rb, 1, 15, (const tfs_field[]){{3, 1, 1}}, 1);
    int size2 = ivec(m, "resize2/size", (const int32_t[]){5, 7}, 2);
    int rn = act(m, "out_a", TFS_FLOAT32, 4, (const int32_t[]){1, 5, 7, 2});
    tfs_op(m, 97, (const int[]){rb, size2}, 2, &rn, 1, 74, (const tfs_field[]){{0, 1, 1}}, 1);
    /* TRANSPOSE, STRIDED_SLICE with a shrunk axis, MEAN keep_dims, LOGISTIC */
    int perm = ivec(m, "transpose/perm", (const int32_t[]){0, 3, 1, 2}, 4);
    int tr = act(m, "transpose", TFS_FLOAT32, 4, (const int32_t[]){1, 8, 4, 4});
    tfs_op(m, 39, (const int[]){hs, perm}, 2, &tr, 1, 26, NULL, 0);
    int b = ivec(m, "ss/begin", (const int32_t[]){0, 1, 0, 3}, 4);
    int e = ivec(m, "ss/end", (const int32_t[]){1, 7, 4, 4}, 4);
    int st = ivec(m, "ss/strides", (const int32_t[]){1, 2, 1, 1}, 4);
    int ss = act(m, "slice", TFS_FLOAT32, 3, (const int32_t[]){1, 3, 4});
    tfs_op(m, 45, (const int[]){tr, b, e, st}, 4, &ss, 1, 32, (const tfs_field[]){{0, 4, 0}, {1, 4, 4}, {4, 4, 8}}, 3);
    int sig = act(m, "out_b", TFS_FLOAT32, 3, (const int32_t[]){1, 3, 4});
    tfs_op(m, 14, &ss, 1, &sig, 1, 0, NULL, 0);
    int axes = ivec(m, "mean/axes", (const int32_t[]){1, 2}, 2);
    int mean = act(m, "mean", TFS_FLOAT32, 4, (const int32_t[]){1, 1, 1, 8});
    tfs_op(m, 40, (const int[]){hs, axes}, 2, &mean, 1, 27, (const tfs_field[]){{0, 1, 1}}, 1);
    /* SOFTMAX beta 2 on [1, 8]; SPLIT in two; GATHER */
    int rs = ivec(m, "flat/shape", (const int32_t[]){1, 8}, 2);
    int flat = act(m, "flat", TFS_FLOAT32, 2, (const int32_t[]){1, 8});
    tfs_op(m, 22, (const int[]){mean, rs}, 2, &flat, 1, 17, NULL, 0);
    int sm = act(m, "softmax", TFS_FLOAT32, 2, (const int32_t[]){1, 8});
    tfs_op(m, 25, &flat, 1, &sm, 1, 9, (const tfs_field[]){{0, 4, tfs_f32(2.0f)}}, 1);
    int ax = tfs_tensor(m, "split/axis", TFS_INT32, 0, NULL, (const int32_t[]){1}, 4);
    int h0 = act(m, "out_c", TFS_FLOAT32, 2, (const int32_t[]){1, 4});
    int h1 = act(m, "half1", TFS_FLOAT32, 2, (const int32_t[]){1, 4});
    tfs_op(m, 49, (const int[]){ax, sm}, 2, (const int[]){h0, h1}, 2, 35, (const tfs_field[]){{0, 4, 2}}, 1);
    int idx = ivec(m, "gather/indices", (const int32_t[]){3, 0}, 2);
    int g = act(m, "out_d", TFS_FLOAT32, 2, (const int32_t[]){1, 2});
    tfs_op(m, 36, (const int[]){h1, idx}, 2, &g, 1, 23, (const tfs_field[]){{0, 4, 1}}, 1);
    tfs_io(m, &x, 1, (const int[]){rn, sig, h0, g}, 4);
    return m;
}

tfs_model *tfs_example_int16(void)
{
    tfs_model *m = tfs_create();
    int x = act(m, "x", TFS_INT16, 4, (const int32_t[]){1, 5, 6, 3});
    tfs_quant(m, x, (const float[]){1.0f / 4096}, (const int64_t[]){0}, 1, 0);
    int8_t w[4 * 2 * 2 * 3];
    for (int i = 0; i < 48; i++)
        w[i] = (int8_t)((i * 53) % 251 - 125);
    int wt = tfs_tensor(m, "conv/w", TFS_INT8, 4, (const int32_t[]){4, 2, 2, 3}, w, sizeof w);
    tfs_quant(m, wt, (const float[]){0.004f, 0.002f, 0.003f, 0.001f}, (const int64_t[]){0, 0, 0, 0}, 4, 0);
    int64_t bias[4] = {1000, -30000, 5, 123456};
    int bt = tfs_tensor(m, "conv/b", TFS_INT64, 1, (const int32_t[]){4}, bias, sizeof bias);
    tfs_quant(m, bt, (const float[]){0.004f / 4096, 0.002f / 4096, 0.003f / 4096, 0.001f / 4096},
              (const int64_t[]){0, 0, 0, 0}, 4, 0);
    int y = act(m, "y", TFS_INT16, 4, (const int32_t[]){1, 3, 5, 4});
    tfs_quant(m, y, (const float[]){1.0f / 2048}, (const int64_t[]){0}, 1, 0);
    /* VALID, stride 1, dilation h 2: 5 - 2 -> 3 rows, 6 - 1 -> 5 columns; RELU6 */
    tfs_op(m, 3, (const int[]){x, wt, bt}, 3, &y, 1, 1,
           (const tfs_field[]){{0, 1, 1}, {1, 4, 1}, {2, 4, 1}, {3, 1, 3}, {4, 4, 1}, {5, 4, 2}}, 6);
    int8_t dw[1 * 3 * 3 * 4];
    for (int i = 0; i < 36; i++)
        dw[i] = (int8_t)((i * 71) % 241 - 120);
    int dwt = tfs_tensor(m, "dw/w", TFS_INT8, 4, (const int32_t[]){1, 3, 3, 4}, dw, sizeof dw);
    tfs_quant(m, dwt, (const float[]){0.01f}, (const int64_t[]){0}, 1, 3);
    int z = act(m, "z", TFS_INT16, 4, (const int32_t[]){1, 2, 3, 4});
    tfs_quant(m, z, (const float[]){1.0f / 1024}, (const int64_t[]){0}, 1, 0);
    tfs_op(m, 4, (const int[]){y, dwt, -1}, 3, &z, 1, 2,
           (const tfs_field[]){{0, 1, 0}, {1, 4, 2}, {2, 4, 2}, {3, 4, 1}, {4, 1, 0}}, 5);
    int ap = act(m, "pool", TFS_INT16, 4, (const int32_t[]){1, 1, 1, 4});
    tfs_quant(m, ap, (const float[]){1.0f / 1024}, (const int64_t[]){0}, 1, 0);
    tfs_op(m, 1, &z, 1, &ap, 1, 5, (const tfs_field[]){{0, 1, 1}, {1, 4, 1}, {2, 4, 1}, {3, 4, 3}, {4, 4, 2}}, 5);
    int shape = ivec(m, "flat/shape", (const int32_t[]){1, 4}, 2);
    int flat = act(m, "flat", TFS_INT16, 2, (const int32_t[]){1, 4});
    tfs_quant(m, flat, (const float[]){1.0f / 1024}, (const int64_t[]){0}, 1, 0);
    tfs_op(m, 22, (const int[]){ap, shape}, 2, &flat, 1, 17, NULL, 0);
    int8_t fw[2 * 4] = {10, -20, 30, -40, 50, 60, -70, 80};
    int fwt = tfs_tensor(m, "fc/w", TFS_INT8, 2, (const int32_t[]){2, 4}, fw, sizeof fw);
    tfs_quant(m, fwt, (const float[]){0.02f}, (const int64_t[]){0}, 1, 0);
    int fc = act(m, "fc", TFS_INT16, 2, (const int32_t[]){1, 2});
    tfs_quant(m, fc, (const float[]){1.0f / 512}, (const int64_t[]){0}, 1, 0);
    tfs_op(m, 9, (const int[]){flat, fwt, -1}, 3, &fc, 1, 8, NULL, 0);
    int out = act(m, "out", TFS_FLOAT32, 2, (const int32_t[]){1, 2});
    tfs_op(m, 6, &fc, 1, &out, 1, 0, NULL, 0);
    tfs_io(m, &x, 1, &out, 1);
    return m;
}

/*
 * model_fb.c: the FlatBuffer section of a `.rknn` file: the Model root table, its graphs and their
 * tensors, and the weight-blob list (sections 4.1, 4.2, 4.4 and 4.5 of ../shared/docs/rknn-model-format.md;
 * slot numbers below are the ones used there). Nodes are node_fb.c's.
 *
 * Strings point into the model's copy of the file (FlatBuffer strings are NUL-terminated); numeric vectors
 * are copied into the arena with their element counts bounded by the limits.
 */
#include "internal.h"

/* Model (root) slots */
enum {
    M_SCHEMA = 0,
    M_FORMAT = 1,
    M_GRAPHS = 2,
    M_DICT = 3,
    M_BLOBS_OLD = 4,
    M_COMPILER_NUM = 6,
    M_COMPILER = 7,
    M_TARGET = 8,
    M_SOURCE = 9,
    M_INPUT_JSON = 12,
    M_OUTPUT_JSON = 13,
    M_SHAPE_MODE = 16,
    M_BLOBS = 20
};
/* Graph slots */
enum { G_TENSORS = 0, G_NODES = 1, G_INPUTS = 2, G_OUTPUTS = 3 };
/* Tensor slots */
enum {
    T_DTYPE = 0,
    T_LAYOUT = 1,
    T_ROLE = 2,
    T_NATIVE = 3,
    T_SHAPE = 4,
    T_NAME = 5,
    T_QMETHOD = 6,
    T_QTYPE = 7,
    T_MIN = 8,
    T_MAX = 9,
    T_SCALE = 10,
    T_ZP = 11,
    T_SIZE = 12,
    T_OFFSET = 13,
    T_BLOB = 18
};

/* A string field; "" when absent. A NUL byte inside cuts it there (with a warning naming where). */
static rd_status get_str(rd_rknn_model *m, const rd_fb_table *t, unsigned slot, const char *what, const char **out,
                         size_t *out_len, rd_error *err)
{
    size_t n = 0;
    rd_status st = rd_fb_string(t, slot, out, &n, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", what);
    if (!*out)
        *out = "";
    else if (strlen(*out) != n)
        rk_warn(m, "%s (byte %zu): a NUL byte inside the string; read up to it", what, rd_fb_field_offset(t, slot));
    if (out_len)
        *out_len = *out ? strlen(*out) : 0;
    return RD_OK;
}

/* The [int] vector at slot, of at most max entries (noun: what they are, for the message). */
static rd_status int_vector(const rd_fb_table *t, unsigned slot, size_t max, const char *what, const char *noun,
                            rd_fb_vec *v, rd_error *err)
{
    rd_status st = rd_fb_vector(t, slot, 4, v, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", what);
    if (v->n > max)
        return rd_errorf(err, RD_E_LIMIT, "%s (byte %zu): %u %s, more than the %zu allowed", what,
                         rd_fb_field_offset(t, slot), v->n, noun, max);
    return RD_OK;
}

/* An [int] vector as int64 (shapes); *n bounded by max. */
static rd_status get_ints(rd_rknn_model *m, const rd_fb_table *t, unsigned slot, size_t max, const char *what,
                          const int64_t **out, size_t *n, rd_error *err)
{
    rd_fb_vec v;
    *out = NULL;
    *n = 0;
    rd_status st = int_vector(t, slot, max, what, "entries", &v, err);
    if (st != RD_OK)
        return st;
    int64_t *a = rk_alloc_array(&m->arena, v.n, sizeof *a, what, err);
    if (!a)
        return err->code;
    for (uint32_t i = 0; i < v.n; i++)
        a[i] = rd_fb_vec_i32(&v, i);
    *out = a;
    *n = v.n;
    return RD_OK;
}

/* A [float] or [int32] vector copied as is (4-byte elements). */
static rd_status get_vec4(rd_rknn_model *m, const rd_fb_table *t, unsigned slot, const char *what, const void **out,
                          size_t *n, rd_error *err)
{
    rd_fb_vec v;
    *out = NULL;
    *n = 0;
    rd_status st = int_vector(t, slot, m->lim.max_vector, what, "entries", &v, err);
    if (st != RD_OK)
        return st;
    void *a = rk_alloc_array(&m->arena, v.n, 4, what, err);
    if (!a)
        return err->code;
    if (v.n)
        memcpy(a, rd_fb_vec_data(&v), (size_t)v.n * 4);
    *out = a;
    *n = v.n;
    return RD_OK;
}

static rd_status read_tensor(rd_rknn_model *m, const rd_fb_table *t, rd_rknn_tensor *x, rd_error *err)
{
    char what[96];
    snprintf(what, sizeof what, "tensor #%d", x->index);
    uint8_t u8;
    rd_status st = rd_fb_u8(t, T_DTYPE, 0, &u8, err);
    x->dtype = u8;
    if (st == RD_OK && (st = rd_fb_u8(t, T_LAYOUT, 0, &u8, err)) == RD_OK)
        x->layout = u8;
    if (st == RD_OK && (st = rd_fb_u8(t, T_ROLE, 0, &u8, err)) == RD_OK)
        x->role = u8;
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", what);
    st = get_str(m, t, T_NAME, what, &x->name, NULL, err);
    if (st != RD_OK)
        return st;
    snprintf(what, sizeof what, "tensor #%d '%.48s'", x->index, x->name);
    char field[160];
    snprintf(field, sizeof field, "%s: native shape (slot 3)", what);
    if ((st = get_ints(m, t, T_NATIVE, RD_RKNN_MAX_RANK, field, &x->native_shape, &x->native_rank, err)) != RD_OK)
        return st;
    snprintf(field, sizeof field, "%s: shape (slot 4)", what);
    if ((st = get_ints(m, t, T_SHAPE, RD_RKNN_MAX_RANK, field, &x->shape, &x->rank, err)) != RD_OK)
        return st;
    if ((st = get_str(m, t, T_QMETHOD, what, &x->qmethod, NULL, err)) != RD_OK ||
        (st = get_str(m, t, T_QTYPE, what, &x->qtype, NULL, err)) != RD_OK)
        return st;
    static const char *const qnames[] = {"min (slot 8)", "max (slot 9)", "scale (slot 10)", "zero point (slot 11)"};
    const void **qv[] = {(const void **)&x->min, (const void **)&x->max, (const void **)&x->scale,
                         (const void **)&x->zero_point};
    size_t *qn[] = {&x->n_min, &x->n_max, &x->n_scale, &x->n_zero_point};
    for (int k = 0; k < 4; k++) {
        snprintf(field, sizeof field, "%s: %s", what, qnames[k]);
        if ((st = get_vec4(m, t, (unsigned)(T_MIN + k), field, qv[k], qn[k], err)) != RD_OK)
            return st;
    }
    uint32_t size, off, blob;
    if ((st = rd_fb_u32(t, T_SIZE, 0, &size, err)) != RD_OK || (st = rd_fb_u32(t, T_OFFSET, 0, &off, err)) != RD_OK ||
        (st = rd_fb_u32(t, T_BLOB, UINT32_MAX, &blob, err)) != RD_OK)
        return rd_error_prefix(err, "%s", what);
    x->size = size;
    x->mem_offset = off;
    x->blob = blob == UINT32_MAX || blob > INT32_MAX ? -1 : (int)blob;
    if (blob != UINT32_MAX && blob > INT32_MAX)
        return rd_errorf(err, RD_E_PARSE, "%s (byte %zu): weight-blob index %u", what, rd_fb_field_offset(t, T_BLOB),
                         blob);
    x->producer = -1;
    return RD_OK;
}

rd_status rk_index_list(rd_rknn_model *m, const rd_fb_table *t, unsigned slot, size_t max, size_t n_tensors,
                        const char *what, const int32_t **out, size_t *n, rd_error *err)
{
    rd_fb_vec v;
    *out = NULL;
    *n = 0;
    rd_status st = int_vector(t, slot, max, what, "tensors", &v, err);
    if (st != RD_OK)
        return st;
    int32_t *a = rk_alloc_array(&m->arena, v.n, sizeof *a, what, err);
    if (!a)
        return err->code;
    for (uint32_t i = 0; i < v.n; i++) {
        a[i] = rd_fb_vec_i32(&v, i);
        if (a[i] < 0 || (size_t)a[i] >= n_tensors)
            return rd_errorf(err, RD_E_PARSE, "%s (byte %zu): entry %u is tensor %d, the graph has %zu tensors", what,
                             rd_fb_field_offset(t, slot), i, a[i], n_tensors);
    }
    *out = a;
    *n = v.n;
    return RD_OK;
}

static rd_status read_graph(rd_rknn_model *m, const rd_fb_table *gt, size_t gi, rd_rknn_graph *g, rd_error *err)
{
    rd_fb_vec tv;
    rd_status st = rd_fb_vector(gt, G_TENSORS, RD_FB_REF, &tv, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "graph %zu: tensors (slot 0)", gi);
    if (tv.n > m->lim.max_tensors)
        return rd_errorf(err, RD_E_LIMIT, "graph %zu: %u tensors, more than the %zu allowed", gi, tv.n,
                         m->lim.max_tensors);
    rd_rknn_tensor *ts = rk_alloc_array(&m->arena, tv.n, sizeof *ts, "tensors", err);
    if (!ts)
        return err->code;
    g->tensors = ts;
    g->n_tensors = tv.n;
    for (uint32_t i = 0; i < tv.n; i++) {
        rd_fb_table t;
        ts[i].index = (int)i;
        if ((st = rd_fb_vec_table(&tv, i, &t, err)) != RD_OK)
            return rd_error_prefix(err, "graph %zu: tensor #%u", gi, i);
        if ((st = read_tensor(m, &t, &ts[i], err)) != RD_OK)
            return rd_error_prefix(err, "graph %zu", gi);
    }
    char what[64];
    snprintf(what, sizeof what, "graph %zu: inputs (slot 2)", gi);
    if ((st = rk_index_list(m, gt, G_INPUTS, m->lim.max_tensors, g->n_tensors, what, &g->inputs, &g->n_inputs, err)) !=
        RD_OK)
        return st;
    snprintf(what, sizeof what, "graph %zu: outputs (slot 3)", gi);
    if ((st = rk_index_list(m, gt, G_OUTPUTS, m->lim.max_tensors, g->n_tensors, what, &g->outputs, &g->n_outputs,
                            err)) != RD_OK)
        return st;
    if ((st = rk_read_nodes(m, gt, g, gi, err)) != RD_OK)
        return st;
    return rk_index_graph(m, g, err);
}

/* Model slot 20 (slot 4 in format <= 5): a vector of tables whose slot 0 is the [ubyte] blob. */
static rd_status read_blobs(rd_rknn_model *m, const rd_fb_table *root, rd_error *err)
{
    unsigned slot = (m->info.format_version & 0xff) > 5 ? M_BLOBS : M_BLOBS_OLD;
    unsigned other = slot == M_BLOBS ? M_BLOBS_OLD : M_BLOBS;
    if (!rd_fb_has(root, slot) && rd_fb_has(root, other)) {
        rk_warn(m,
                "weight blobs: format version %llu keeps them in Model slot %u, this file in slot %u: read from "
                "there",
                (unsigned long long)m->info.format_version, slot, other);
        slot = other;
    }
    rd_fb_vec v;
    rd_status st = rd_fb_vector(root, slot, RD_FB_REF, &v, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "weight blobs (Model slot %u)", slot);
    m->blobs = rk_alloc_array(&m->arena, v.n, sizeof *m->blobs, "weight blobs", err);
    if (!m->blobs)
        return err->code;
    m->n_blobs = v.n;
    for (uint32_t i = 0; i < v.n; i++) {
        rd_fb_table t;
        rd_fb_vec bytes;
        if ((st = rd_fb_vec_table(&v, i, &t, err)) != RD_OK || (st = rd_fb_vector(&t, 0, 1, &bytes, err)) != RD_OK)
            return rd_error_prefix(err, "weight blob %u (Model slot %u)", i, slot);
        m->blobs[i].off = bytes.n ? (size_t)(rd_fb_vec_data(&bytes) - m->file) : 0;
        m->blobs[i].len = bytes.n;
    }
    return RD_OK;
}

/* "... compiler version: 1.6.2b0 (...)" -> "1.6.2b0" in the arena; "" when absent. */
static const char *compiler_version_of(rd_rknn_model *m, const char *s)
{
    const char *k = s ? strstr(s, "compiler version: ") : NULL;
    if (!k)
        return "";
    k += strlen("compiler version: ");
    size_t n = strcspn(k, " ()");
    const char *v = rk_strndup(&m->arena, k, n, NULL);
    return v ? v : "";
}

static rd_status read_versions(rd_rknn_model *m, const rd_fb_table *root, rd_error *err)
{
    rd_rknn_info *in = &m->info;
    rd_status st = rd_fb_i32(root, M_SCHEMA, 0, &in->schema_version, err);
    if (st == RD_OK)
        st = rd_fb_i32(root, M_COMPILER_NUM, 0, &in->compiler_version_number, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "Model");
    static const struct {
        unsigned slot;
        const char *name;
        size_t off;
    } strs[] = {
        {M_FORMAT, "Model slot 1 (format)", offsetof(rd_rknn_info, format)},
        {M_COMPILER, "Model slot 7 (compiler)", offsetof(rd_rknn_info, compiler)},
        {M_TARGET, "Model slot 8 (target platform)", offsetof(rd_rknn_info, target_platform)},
        {M_SOURCE, "Model slot 9 (source framework)", offsetof(rd_rknn_info, source_framework)},
        {M_INPUT_JSON, "Model slot 12 (input_json)", offsetof(rd_rknn_info, input_json)},
        {M_OUTPUT_JSON, "Model slot 13 (output_json)", offsetof(rd_rknn_info, output_json)},
        {M_SHAPE_MODE, "Model slot 16 (shape mode)", offsetof(rd_rknn_info, shape_mode)},
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if ((st = get_str(m, root, strs[i].slot, strs[i].name, (const char **)((char *)in + strs[i].off), NULL, err)) !=
            RD_OK)
            return st;
    in->compiler_version = compiler_version_of(m, in->compiler);
    if (!in->toolkit_version || !in->toolkit_version[0]) { /* no JSON "version": slot 7 up to '(' */
        size_t n = strcspn(in->compiler, "(");
        while (n && in->compiler[n - 1] == ' ')
            n--;
        in->toolkit_version = rk_strndup(&m->arena, in->compiler, n, err);
        if (!in->toolkit_version)
            return err->code;
    }
    return RD_OK;
}

rd_status rk_read_model(rd_rknn_model *m, rd_error *err)
{
    rd_fb fb;
    /* FlatBuffer messages name the file offset; the file name is added as a prefix below */
    rd_status st = rd_fb_init(&fb, m->file + m->data_off, (size_t)m->info.model_bytes, "FlatBuffer", m->data_off, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", m->info.path);
    fb.max_depth = m->lim.max_depth;
    rd_fb_table root;
    if ((st = rd_fb_root(&fb, "RKNN", &root, err)) != RD_OK)
        return rd_error_prefix(err, "%s: model data", m->info.path);
    if ((st = read_versions(m, &root, err)) != RD_OK)
        return rd_error_prefix(err, "%s", m->info.path);
    const char *dict;
    size_t dict_len = 0;
    if ((st = get_str(m, &root, M_DICT, "Model slot 3 (dict string)", &dict, &dict_len, err)) != RD_OK)
        return rd_error_prefix(err, "%s", m->info.path);
    size_t lead = strspn(dict, " \t\r\n");
    if (dict[lead] == '{') {
        if (dict_len > m->lim.max_text_bytes)
            return rd_errorf(err, RD_E_LIMIT, "%s: Model slot 3 (dict string): %zu bytes, more than the %zu allowed",
                             m->info.path, dict_len, m->lim.max_text_bytes);
        st = rk_read_dict(m, dict, dict_len, rd_fb_field_offset(&root, M_DICT), err);
    } else {
        m->info.generator = dict;
    }
    for (int k = 0; k < 2 && st == RD_OK; k++) {
        const char *j = k ? m->info.output_json : m->info.input_json;
        if (j[0])
            st = rk_read_runtime_io(m, j, strlen(j), k == 1,
                                    rd_fb_field_offset(&root, k ? M_OUTPUT_JSON : M_INPUT_JSON), err);
    }
    if (st == RD_OK)
        st = read_blobs(m, &root, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", m->info.path);
    rd_fb_vec gv;
    if ((st = rd_fb_vector(&root, M_GRAPHS, RD_FB_REF, &gv, err)) != RD_OK)
        return rd_error_prefix(err, "%s: graphs (Model slot 2)", m->info.path);
    if (gv.n == 0)
        return rd_errorf(err, RD_E_PARSE, "%s: model data: no graph (Model slot 2 is %s)", m->info.path,
                         rd_fb_has(&root, M_GRAPHS) ? "empty" : "absent");
    if (gv.n > m->lim.max_graphs)
        return rd_errorf(err, RD_E_LIMIT, "%s: %u graphs, more than the %zu allowed", m->info.path, gv.n,
                         m->lim.max_graphs);
    m->graphs = rk_alloc_array(&m->arena, gv.n, sizeof *m->graphs, "graphs", err);
    if (!m->graphs)
        return err->code;
    m->n_graphs = gv.n;
    for (uint32_t i = 0; i < gv.n; i++) {
        rd_fb_table gt;
        if ((st = rd_fb_vec_table(&gv, i, &gt, err)) != RD_OK ||
            (st = read_graph(m, &gt, i, &m->graphs[i], err)) != RD_OK)
            return rd_error_prefix(err, "%s", m->info.path);
        for (size_t t = 0; t < m->graphs[i].n_tensors; t++) {
            const rd_rknn_tensor *x = &m->graphs[i].tensors[t];
            if (x->blob >= 0 && (size_t)x->blob >= m->n_blobs)
                return rd_errorf(err, RD_E_PARSE,
                                 "%s: graph %u: tensor #%zu '%s': weight-blob index %d, the model has "
                                 "%zu blobs",
                                 m->info.path, i, t, x->name, x->blob, m->n_blobs);
        }
    }
    return RD_OK;
}

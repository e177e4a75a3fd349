/*
 * dict_io.c: the model's descriptions of its inputs and outputs:
 *  - the Python-dict string of Model slot 3 (section 5 of ../shared/docs/rknn-model-format.md):
 *    `attrs` (per I/O tensor: idx, shape, layout, dtype, mean, std, reorder), `quant_tab` (dtype, qmethod,
 *    qtype, min, max, scale, zero_point) and `dynamic_shapes`;
 *  - the trailing JSON envelope (section 3): version, target_platform, norm_tensor reached through graph;
 *  - the runtime I/O JSON of Model slots 12/13: {"name": {"dtype": ..., "layout": ...}}.
 *
 * A malformed dict or JSON is an error (the file is corrupt); a well-formed one with an unexpected value
 * type leaves that field empty and adds a warning.
 */
#include "internal.h"

#include <cjson/cJSON.h>

static const char *str_of(const rd_rknn_value *v)
{
    return v && v->kind == RD_RKNN_V_STRING ? v->s : "";
}

/* Numbers of a list or tuple (one nested level is flattened: [[0, 0, 0]]), or of a single number. */
static rd_status doubles_of(rd_rknn_model *m, const rd_rknn_value *v, const char *what, const double **out, size_t *n,
                            rd_error *err)
{
    *out = NULL;
    *n = 0;
    if (!v || v->kind == RD_RKNN_V_NONE)
        return RD_OK;
    const rd_rknn_value *items = v;
    size_t count = 1;
    if (v->kind == RD_RKNN_V_LIST || v->kind == RD_RKNN_V_TUPLE) {
        items = v->items;
        count = v->n;
        if (count == 1 && (items[0].kind == RD_RKNN_V_LIST || items[0].kind == RD_RKNN_V_TUPLE)) {
            count = items[0].n;
            items = items[0].items;
        }
    }
    double *a = rk_alloc_array(&m->arena, count, sizeof *a, what, err);
    if (!a)
        return err->code;
    for (size_t i = 0; i < count; i++) {
        if (!rd_rknn_value_is_number(&items[i])) {
            rk_warn(m, "%s: entry %zu is not a number: field left empty", what, i);
            return RD_OK;
        }
        a[i] = items[i].f;
    }
    *out = a;
    *n = count;
    return RD_OK;
}

static rd_status read_io_attr(rd_rknn_model *m, const char *name, const rd_rknn_value *v, void *out, rd_error *err)
{
    rd_rknn_io_attr *a = out;
    char what[160];
    snprintf(what, sizeof what, "dict string: attrs['%.64s']", name);
    a->name = name;
    a->raw = v;
    a->idx = -1;
    if (v->kind != RD_RKNN_V_MAP) {
        rk_warn(m, "%s is not a dict: ignored", what);
        a->layout = a->dtype = "";
        return RD_OK;
    }
    const rd_rknn_value *x = rd_rknn_value_get(v, "is_output");
    a->is_output = x && x->kind == RD_RKNN_V_BOOL && x->b;
    x = rd_rknn_value_get(v, "idx");
    if (x && x->kind == RD_RKNN_V_INT && x->i >= 0 && x->i <= INT32_MAX)
        a->idx = (int)x->i;
    x = rd_rknn_value_get(v, "shape");
    a->shape = x && (x->kind == RD_RKNN_V_LIST || x->kind == RD_RKNN_V_TUPLE) ? x : NULL;
    a->layout = str_of(rd_rknn_value_get(v, "layout"));
    a->dtype = str_of(rd_rknn_value_get(v, "dtype"));
    static const char *const reorder_keys[] = {"reorder", "reorder_channel", "rgb2bgr"};
    for (size_t k = 0; k < 3 && !a->reorder; k++)
        a->reorder = rd_rknn_value_get(v, reorder_keys[k]);
    char field[200];
    snprintf(field, sizeof field, "%s['mean']", what);
    rd_status st = doubles_of(m, rd_rknn_value_get(v, "mean"), field, &a->mean, &a->n_mean, err);
    snprintf(field, sizeof field, "%s['std']", what);
    if (st == RD_OK)
        st = doubles_of(m, rd_rknn_value_get(v, "std"), field, &a->std, &a->n_std, err);
    return st;
}

static rd_status read_quant_entry(rd_rknn_model *m, const char *name, const rd_rknn_value *v, void *out, rd_error *err)
{
    rd_rknn_quant_entry *q = out;
    char what[160];
    snprintf(what, sizeof what, "dict string: quant_tab['%.64s']", name);
    q->name = name;
    q->raw = v;
    q->dtype = q->qmethod = q->qtype = "";
    if (v->kind != RD_RKNN_V_MAP) {
        rk_warn(m, "%s is not a dict: ignored", what);
        return RD_OK;
    }
    q->dtype = str_of(rd_rknn_value_get(v, "dtype"));
    q->qmethod = str_of(rd_rknn_value_get(v, "qmethod"));
    q->qtype = str_of(rd_rknn_value_get(v, "qtype"));
    static const char *const keys[] = {"min", "max", "scale"};
    const double **outs[] = {&q->min, &q->max, &q->scale};
    size_t *ns[] = {&q->n_min, &q->n_max, &q->n_scale};
    char field[200];
    for (int k = 0; k < 3; k++) {
        snprintf(field, sizeof field, "%s['%s']", what, keys[k]);
        rd_status st = doubles_of(m, rd_rknn_value_get(v, keys[k]), field, outs[k], ns[k], err);
        if (st != RD_OK)
            return st;
    }
    const double *zp;
    size_t nzp;
    snprintf(field, sizeof field, "%s['zero_point']", what);
    rd_status st = doubles_of(m, rd_rknn_value_get(v, "zero_point"), field, &zp, &nzp, err);
    if (st != RD_OK)
        return st;
    int64_t *z = rk_alloc_array(&m->arena, nzp, sizeof *z, field, err);
    if (!z)
        return err->code;
    for (size_t i = 0; i < nzp; i++)
        z[i] = zp[i] >= -9.2e18 && zp[i] <= 9.2e18 ? (int64_t)zp[i] : 0;
    q->zero_point = z;
    q->n_zero_point = nzp;
    return RD_OK;
}

/* Reads one entry of a dict (name: its key) into out. */
typedef rd_status (*entry_fn)(rd_rknn_model *m, const char *name, const rd_rknn_value *v, void *out, rd_error *err);

/* The dict root[key], each entry read by read into an array of elem-byte items: *items and *n (left as they
   are when it is absent, or, with a note, not a dict). */
static rd_status read_entries(rd_rknn_model *m, const rd_rknn_value *root, const char *key, size_t elem, entry_fn read,
                              void **items, size_t *n, rd_error *err)
{
    const rd_rknn_value *map = rd_rknn_value_get(root, key);
    if (!map)
        return RD_OK;
    if (map->kind != RD_RKNN_V_MAP) {
        rk_warn(m, "dict string: '%s' is not a dict: ignored", key);
        return RD_OK;
    }
    char *a = rk_alloc_array(&m->arena, map->n, elem, key, err);
    if (!a)
        return err->code;
    for (size_t i = 0; i < map->n; i++) {
        rd_status st = read(m, map->keys[i], &map->items[i], a + i * elem, err);
        if (st != RD_OK)
            return st;
    }
    *items = a;
    *n = map->n;
    return RD_OK;
}

rd_status rk_read_dict(rd_rknn_model *m, const char *text, size_t len, size_t file_off, rd_error *err)
{
    (void)file_off;
    size_t base = (size_t)((const uint8_t *)text - m->file);
    rd_rknn_value *root = rk_alloc(&m->arena, sizeof *root, "dict string", err);
    if (!root)
        return err->code;
    rd_status st =
        rk_pylit_parse(&m->arena, text, len, "Model slot 3 (dict string)", base, m->lim.max_depth, root, NULL, err);
    if (st != RD_OK)
        return st;
    if (root->kind != RD_RKNN_V_MAP)
        return rd_errorf(err, RD_E_PARSE, "Model slot 3 (dict string): byte %zu: expected a dict", base);
    rd_rknn_info *in = &m->info;
    in->has_dict = true;
    in->dict = root;
    in->dynamic_shapes = rd_rknn_value_get(root, "dynamic_shapes");
    void *attrs = NULL, *quant_tab = NULL;
    st = read_entries(m, root, "attrs", sizeof *in->io_attrs, read_io_attr, &attrs, &in->n_io_attrs, err);
    in->io_attrs = attrs;
    if (st == RD_OK)
        st = read_entries(m, root, "quant_tab", sizeof *in->quant_tab, read_quant_entry, &quant_tab, &in->n_quant_tab,
                          err);
    in->quant_tab = quant_tab;
    return st;
}

/* A JSON string member copied into the arena; "" when absent or not a string. */
static const char *json_str(rd_rknn_model *m, const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    const char *s = cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
    const char *c = rk_strndup(&m->arena, s, strlen(s), NULL);
    return c ? c : "";
}

/* Parses text as one JSON value; RD_E_PARSE naming the byte where cJSON stopped. */
static rd_status parse_json(const char *text, size_t len, size_t file_off, const char *what, cJSON **out, rd_error *err)
{
    const char *end = NULL;
    *out = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (*out && end >= text && end <= text + len) { /* only blanks may follow the value */
        size_t at = (size_t)(end - text);
        while (at < len && (text[at] == ' ' || text[at] == '\n' || text[at] == '\r' || text[at] == '\t'))
            at++;
        if (at == len)
            return RD_OK;
        cJSON_Delete(*out);
        *out = NULL;
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: text after the JSON value (%zu bytes in all)", what,
                         file_off + at, len);
    }
    if (!*out && rd_json_well_formed(text, len, CJSON_NESTING_LIMIT)) /* cJSON failed on good text */
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory reading its JSON (%zu bytes)", what, len);
    cJSON_Delete(*out);
    *out = NULL;
    size_t at = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
    return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: not valid JSON there (%zu bytes in all)%s", what, file_off + at,
                     len, at + 1 >= len ? ": cut short?" : "");
}

static rd_status json_io_list(rd_rknn_model *m, const cJSON *root, rd_error *err)
{
    const cJSON *graph = cJSON_GetObjectItemCaseSensitive(root, "graph");
    const cJSON *norm = cJSON_GetObjectItemCaseSensitive(root, "norm_tensor");
    int n = cJSON_IsArray(graph) ? cJSON_GetArraySize(graph) : 0;
    rd_rknn_json_io *io = rk_alloc_array(&m->arena, (size_t)n, sizeof *io, "JSON graph", err);
    if (!io)
        return err->code;
    size_t k = 0;
    const cJSON *g;
    cJSON_ArrayForEach(g, graph)
    {
        const char *left = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(g, "left"));
        const cJSON *lid = cJSON_GetObjectItemCaseSensitive(g, "left_tensor_id");
        const cJSON *rid = cJSON_GetObjectItemCaseSensitive(g, "right_tensor_id");
        if (!left || (strcmp(left, "input") != 0 && strcmp(left, "output") != 0) || !cJSON_IsNumber(rid))
            continue;
        rd_rknn_json_io *x = &io[k++];
        x->is_output = strcmp(left, "output") == 0;
        x->index = cJSON_IsNumber(lid) ? lid->valueint : -1;
        x->name = x->qnt_method = x->qnt_type = x->vx_type = "";
        const cJSON *t;
        cJSON_ArrayForEach(t, norm)
        {
            const cJSON *tid = cJSON_GetObjectItemCaseSensitive(t, "tensor_id");
            if (!cJSON_IsNumber(tid) || tid->valuedouble != rid->valuedouble)
                continue;
            x->name = json_str(m, t, "url");
            const cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "dtype");
            x->qnt_method = json_str(m, dt, "qnt_method");
            x->qnt_type = json_str(m, dt, "qnt_type");
            x->vx_type = json_str(m, dt, "vx_type");
            const cJSON *size = cJSON_GetObjectItemCaseSensitive(t, "size");
            int rank = cJSON_IsArray(size) ? cJSON_GetArraySize(size) : 0;
            if (rank > RD_RKNN_MAX_RANK)
                rank = RD_RKNN_MAX_RANK;
            int64_t *dims = rk_alloc_array(&m->arena, (size_t)rank, sizeof *dims, "JSON size", err);
            if (!dims)
                return err->code;
            for (int d = 0; d < rank; d++) {
                const cJSON *e = cJSON_GetArrayItem(size, d);
                dims[d] = cJSON_IsNumber(e) && e->valuedouble >= -9e18 && e->valuedouble <= 9e18
                              ? (int64_t)e->valuedouble
                              : -1;
            }
            x->shape = dims;
            x->rank = (size_t)rank;
            break;
        }
    }
    m->info.json_io = io;
    m->info.n_json_io = k;
    return RD_OK;
}

rd_status rk_read_json(rd_rknn_model *m, const char *text, size_t len, size_t file_off, rd_error *err)
{
    if (len > m->lim.max_text_bytes)
        return rd_errorf(err, RD_E_LIMIT, "%s: byte %zu: JSON section of %zu bytes, more than the %zu allowed",
                         m->info.path, file_off, len, m->lim.max_text_bytes);
    cJSON *root;
    char what[300];
    snprintf(what, sizeof what, "%s: JSON section", m->info.path);
    rd_status st = parse_json(text, len, file_off, what, &root, err);
    if (st != RD_OK)
        return st;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: expected a JSON object", what, file_off);
    }
    rd_rknn_info *in = &m->info;
    in->has_json = true;
    in->toolkit_version = json_str(m, root, "version");
    in->json_name = json_str(m, root, "name");
    in->network_platform = json_str(m, root, "network_platform");
    in->ori_network_platform = json_str(m, root, "ori_network_platform");
    const cJSON *tp = cJSON_GetObjectItemCaseSensitive(root, "target_platform");
    int nt = cJSON_IsArray(tp) ? cJSON_GetArraySize(tp) : cJSON_IsString(tp) ? 1 : 0;
    const char **targets = rk_alloc_array(&m->arena, (size_t)nt, sizeof *targets, "target_platform", err);
    st = targets ? RD_OK : err->code;
    for (int i = 0; st == RD_OK && i < nt; i++) {
        const cJSON *e = cJSON_IsArray(tp) ? cJSON_GetArrayItem(tp, i) : tp;
        const char *s = cJSON_IsString(e) && e->valuestring ? e->valuestring : "";
        targets[i] = rk_strndup(&m->arena, s, strlen(s), err);
        if (!targets[i])
            st = err->code;
    }
    in->json_targets = targets;
    in->n_json_targets = st == RD_OK ? (size_t)nt : 0;
    if (st == RD_OK)
        st = json_io_list(m, root, err);
    cJSON_Delete(root);
    return st;
}

rd_status rk_read_runtime_io(rd_rknn_model *m, const char *text, size_t len, bool is_output, size_t file_off,
                             rd_error *err)
{
    cJSON *root;
    const char *what = is_output ? "Model slot 13 (output_json)" : "Model slot 12 (input_json)";
    rd_status st = parse_json(text, len, file_off, what, &root, err);
    if (st != RD_OK)
        return st;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: expected a JSON object {name: {dtype, layout}}", what,
                         file_off);
    }
    size_t old = m->info.n_runtime_io, n = (size_t)cJSON_GetArraySize(root);
    rd_rknn_runtime_io *io = rk_alloc_array(&m->arena, old + n, sizeof *io, what, err);
    if (!io) {
        cJSON_Delete(root);
        return err->code;
    }
    if (old)
        memcpy(io, m->info.runtime_io, old * sizeof *io);
    size_t k = old;
    const cJSON *e;
    cJSON_ArrayForEach(e, root)
    {
        rd_rknn_runtime_io *x = &io[k++];
        const char *name = e->string ? e->string : "";
        x->name = rk_strndup(&m->arena, name, strlen(name), err);
        x->is_output = is_output;
        x->dtype = json_str(m, e, "dtype");
        x->layout = json_str(m, e, "layout");
        if (!x->name) {
            cJSON_Delete(root);
            return err->code;
        }
    }
    cJSON_Delete(root);
    m->info.runtime_io = io;
    m->info.n_runtime_io = k;
    return RD_OK;
}

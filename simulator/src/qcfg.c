/* qcfg.c: RKNN's hybrid quantization file (<model>.quantization.cfg), read and written.
 *
 * The file is YAML with two top-level keys: custom_quantize_layers (tensor -> float16|int8|int16) and
 * quantize_parameters (tensor -> qtype, qmethod, dtype and per-channel lists). We write the layout
 * RKNN-Toolkit2 writes (PyYAML's dump with indent 5: keys at 5 and 10 spaces, block lists "-    v"
 * at the key's indentation, "{}" for an empty mapping) and floats as the shortest decimal that reads
 * back as the same float32, so that write-then-read is exact. Workload: up to a few thousand
 * tensors with up to a few thousand channels each. */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

/* ------------------------------------------------------------------------------------------------
 * The container.
 */

void rd_qcfg_init(rd_qcfg *q)
{
    memset(q, 0, sizeof *q);
}

static void param_fini(rd_qcfg_param *p)
{
    free(p->name);
    free(p->qtype);
    free(p->min);
    free(p->max);
    free(p->scale);
    free(p->ori_min);
    free(p->ori_max);
    free(p->zero_point);
    memset(p, 0, sizeof *p);
}

void rd_qcfg_fini(rd_qcfg *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->n_layers; i++)
        free(q->layers[i].name);
    free(q->layers);
    for (size_t i = 0; i < q->n_params; i++)
        param_fini(&q->params[i]);
    free(q->params);
    free(q->sorted);
    rd_qcfg_init(q);
}

/* qsort has no context argument in C11: sort an array of (name, index) pairs instead. */
typedef struct name_idx {
    const char *name;
    size_t idx;
} name_idx;

static int cmp_name_idx(const void *a, const void *b)
{
    const name_idx *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Builds q->sorted; reports the first name given twice (with both lines) when name is not NULL. */
static rd_status build_index(rd_qcfg *q, const char *name, rd_error *err)
{
    free(q->sorted);
    q->sorted = NULL;
    if (q->n_params == 0)
        return RD_OK;
    name_idx *tmp = sim_malloc_array(q->n_params, sizeof *tmp);
    size_t *sorted = sim_malloc_array(q->n_params, sizeof *sorted);
    if (!tmp || !sorted) {
        free(tmp);
        free(sorted);
        return rd_errorf(err, RD_E_NOMEM, "out of memory indexing %zu tensors", q->n_params);
    }
    for (size_t i = 0; i < q->n_params; i++)
        tmp[i] = (name_idx){q->params[i].name, i};
    qsort(tmp, q->n_params, sizeof *tmp, cmp_name_idx);
    for (size_t i = 0; i < q->n_params; i++) {
        if (i > 0 && !strcmp(tmp[i].name, tmp[i - 1].name)) {
            const rd_qcfg_param *a = &q->params[tmp[i - 1].idx], *b = &q->params[tmp[i].idx];
            rd_errorf(err, RD_E_PARSE, "%s:%d: quantize_parameters names tensor '%s' twice (first at line %d)",
                      name ? name : "qcfg", b->line, b->name, a->line);
            free(tmp);
            free(sorted);
            return RD_E_PARSE;
        }
        sorted[i] = tmp[i].idx;
    }
    free(tmp);
    q->sorted = sorted;
    return RD_OK;
}

const rd_qcfg_param *rd_qcfg_find(const rd_qcfg *q, const char *name)
{
    if (!q->sorted) {
        for (size_t i = 0; i < q->n_params; i++)
            if (!strcmp(q->params[i].name, name))
                return &q->params[i];
        return NULL;
    }
    size_t lo = 0, hi = q->n_params;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(q->params[q->sorted[mid]].name, name);
        if (c == 0)
            return &q->params[q->sorted[mid]];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const rd_qcfg_layer *rd_qcfg_find_layer(const rd_qcfg *q, const char *name)
{
    for (size_t i = 0; i < q->n_layers; i++)
        if (!strcmp(q->layers[i].name, name))
            return &q->layers[i];
    return NULL;
}

static float *dup_floats(const float *src, size_t n, bool *ok)
{
    if (!src)
        return NULL;
    float *d = sim_malloc_array(n, sizeof *d);
    if (!d) {
        *ok = false;
        return NULL;
    }
    memcpy(d, src, n * sizeof *d);
    return d;
}

rd_status rd_qcfg_add_param(rd_qcfg *q, const rd_qcfg_param *p, rd_error *err)
{
    if (!p->name || !p->name[0])
        return rd_errorf(err, RD_E_INVAL, "quantization parameters need a tensor name");
    if (rd_qcfg_find(q, p->name))
        return rd_errorf(err, RD_E_INVAL, "tensor '%s' already has quantization parameters", p->name);
    if (!sim_grow_for(&q->params, q->n_params, sizeof *q->params))
        return rd_errorf(err, RD_E_NOMEM, "out of memory adding tensor '%s'", p->name);
    rd_qcfg_param c = *p;
    bool ok = true;
    c.name = sim_strdup(p->name);
    c.qtype = p->qtype ? sim_strdup(p->qtype) : NULL;
    c.min = (p->has & RD_QCFG_HAS_MIN) ? dup_floats(p->min, p->n, &ok) : NULL;
    c.max = (p->has & RD_QCFG_HAS_MAX) ? dup_floats(p->max, p->n, &ok) : NULL;
    c.scale = (p->has & RD_QCFG_HAS_SCALE) ? dup_floats(p->scale, p->n, &ok) : NULL;
    c.ori_min = (p->has & RD_QCFG_HAS_ORI_MIN) ? dup_floats(p->ori_min, p->n, &ok) : NULL;
    c.ori_max = (p->has & RD_QCFG_HAS_ORI_MAX) ? dup_floats(p->ori_max, p->n, &ok) : NULL;
    c.zero_point = NULL;
    if ((p->has & RD_QCFG_HAS_ZERO_POINT) && p->zero_point) {
        c.zero_point = sim_malloc_array(p->n, sizeof *c.zero_point);
        if (c.zero_point)
            memcpy(c.zero_point, p->zero_point, p->n * sizeof *c.zero_point);
        else
            ok = false;
    }
    if (!ok || !c.name || (p->qtype && !c.qtype)) {
        param_fini(&c);
        return rd_errorf(err, RD_E_NOMEM, "out of memory adding tensor '%s'", p->name);
    }
    q->params[q->n_params++] = c;
    free(q->sorted); /* find falls back to a linear search until the next build_index */
    q->sorted = NULL;
    return RD_OK;
}

rd_status rd_qcfg_add_layer(rd_qcfg *q, const char *name, rd_dtype dtype, rd_error *err)
{
    if (dtype != RD_DT_F16 && dtype != RD_DT_I8 && dtype != RD_DT_I16)
        return rd_errorf(err, RD_E_INVAL, "tensor '%s': custom_quantize_layers takes float16, int8 or int16, not %s",
                         name, rd_dtype_name(dtype));
    if (rd_qcfg_find_layer(q, name))
        return rd_errorf(err, RD_E_INVAL, "tensor '%s' is already in custom_quantize_layers", name);
    if (!sim_grow_for(&q->layers, q->n_layers, sizeof *q->layers))
        return rd_errorf(err, RD_E_NOMEM, "out of memory adding layer '%s'", name);
    char *n = sim_strdup(name);
    if (!n)
        return rd_errorf(err, RD_E_NOMEM, "out of memory adding layer '%s'", name);
    q->layers[q->n_layers++] = (rd_qcfg_layer){.name = n, .dtype = dtype, .line = 0};
    return RD_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Reading.
 */

typedef struct qdtype_name {
    const char *name;
    rd_dtype dtype;
} qdtype_name;

/* The dtypes a quantize_parameters entry may carry, and those custom_quantize_layers may force. */
static const qdtype_name param_dtypes[] = {
    {"int8", RD_DT_I8}, {"uint8", RD_DT_U8}, {"int16", RD_DT_I16}, {"float16", RD_DT_F16}, {"float32", RD_DT_F32},
};
static const qdtype_name layer_dtypes[] = {{"float16", RD_DT_F16}, {"int8", RD_DT_I8}, {"int16", RD_DT_I16}};

static bool dtype_by_name(const qdtype_name *t, size_t n, const char *s, rd_dtype *out)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, s)) {
            *out = t[i].dtype;
            return true;
        }
    return false;
}

static const char *param_dtype_name(rd_dtype dt)
{
    for (size_t i = 0; i < sizeof param_dtypes / sizeof param_dtypes[0]; i++)
        if (param_dtypes[i].dtype == dt)
            return param_dtypes[i].name;
    return NULL;
}

typedef struct reader {
    const char *name;
    rd_qcfg *q;
    rd_error *err;
} reader;

/* Errors name the file and the node's line: "file:line: message". */
#define bad(r, at, code, ...) sim_yaml_err((r)->err, code, (r)->name, at, __VA_ARGS__)

/* A float32 from a YAML scalar: decimal text is converted once (strtof) so that our own output,
 * the shortest float32 round-trip form, reads back bit-exact. */
static bool yfloat(const sim_ynode *n, float *out)
{
    double d;
    if (!sim_yscalar_double(n, &d))
        return false;
    if (!isfinite(d)) {
        *out = (float)d;
        return true;
    }
    errno = 0;
    float f = strtof(n->str, NULL);
    if (errno == ERANGE && isinf(f))
        return false;
    *out = f;
    return true;
}

static bool yint32(const sim_ynode *n, int32_t *out)
{
    int64_t v;
    double d;
    if (sim_yscalar_int(n, &v)) {
        if (v < INT32_MIN || v > INT32_MAX)
            return false;
        *out = (int32_t)v;
        return true;
    }
    /* a zero point written as 0.0 by another tool */
    if (sim_yscalar_double(n, &d) && isfinite(d) && d == floor(d) && d >= INT32_MIN && d <= INT32_MAX) {
        *out = (int32_t)d;
        return true;
    }
    return false;
}

static rd_status read_list(const reader *r, const sim_ynode *tensor, const char *key, const sim_ynode *v,
                           rd_qcfg_param *p, float **out_f, int32_t **out_i)
{
    if (v->kind != SIM_Y_SEQ)
        return bad(r, v, RD_E_PARSE, "tensor '%s': %s must be a list of numbers, not %s", p->name, key,
                   sim_ynode_kind_name(v));
    if (v->n == 0)
        return bad(r, v, RD_E_PARSE, "tensor '%s': %s is an empty list", p->name, key);
    if (p->has && v->n != p->n)
        return bad(r, v, RD_E_PARSE, "tensor '%s': %s has %zu entries where the lists before it have %zu", p->name, key,
                   v->n, p->n);
    p->n = v->n;
    if (out_f) {
        float *a = sim_malloc_array(v->n, sizeof *a);
        if (!a)
            return bad(r, v, RD_E_NOMEM, "out of memory");
        *out_f = a;
        for (size_t i = 0; i < v->n; i++)
            if (!yfloat(v->items[i], &a[i]))
                return bad(r, v->items[i], RD_E_PARSE, "tensor '%s': %s[%zu] is not a float32 number ('%s')", p->name,
                           key, i, v->items[i]->kind == SIM_Y_SCALAR ? v->items[i]->str : "...");
    } else {
        int32_t *a = sim_malloc_array(v->n, sizeof *a);
        if (!a)
            return bad(r, v, RD_E_NOMEM, "out of memory");
        *out_i = a;
        for (size_t i = 0; i < v->n; i++)
            if (!yint32(v->items[i], &a[i]))
                return bad(r, v->items[i], RD_E_PARSE, "tensor '%s': %s[%zu] is not a 32-bit integer ('%s')", p->name,
                           key, i, v->items[i]->kind == SIM_Y_SCALAR ? v->items[i]->str : "...");
    }
    (void)tensor;
    return RD_OK;
}

static rd_status read_string(const reader *r, const rd_qcfg_param *p, const char *key, const sim_ynode *v,
                             const char **out)
{
    if (!sim_yscalar_str(v, out))
        return bad(r, v, RD_E_PARSE, "tensor '%s': %s must be a name, not %s", p->name, key,
                   v->kind == SIM_Y_SCALAR ? "empty" : sim_ynode_kind_name(v));
    return RD_OK;
}

static rd_status read_param(const reader *r, const sim_ynode *k, const sim_ynode *v, rd_qcfg_param *p)
{
    if (v->kind != SIM_Y_MAP)
        return bad(r, v, RD_E_PARSE, "tensor '%s': expected a mapping of qtype, qmethod, dtype, min, max, ..., not %s",
                   p->name, sim_ynode_kind_name(v));
    bool have_method = false, have_dtype = false;
    p->method = RD_QMETHOD_LAYER;
    p->dtype = RD_DT_I8;
    for (size_t i = 0; i < v->n; i++) {
        const sim_ynode *key = v->items[2 * i], *val = v->items[2 * i + 1];
        const char *ks;
        if (!sim_yscalar_str(key, &ks))
            return bad(r, key, RD_E_PARSE, "tensor '%s': keys must be names", p->name);
        const char *s;
        rd_status st = RD_OK;
        if (!strcmp(ks, "qtype")) {
            if ((st = read_string(r, p, ks, val, &s)) != RD_OK)
                return st;
            free(p->qtype);
            if (!(p->qtype = sim_strdup(s)))
                return bad(r, val, RD_E_NOMEM, "out of memory");
        } else if (!strcmp(ks, "qmethod")) {
            if ((st = read_string(r, p, ks, val, &s)) != RD_OK)
                return st;
            if (!strcmp(s, "layer"))
                p->method = RD_QMETHOD_LAYER;
            else if (!strcmp(s, "channel"))
                p->method = RD_QMETHOD_CHANNEL;
            else
                return bad(r, val, RD_E_PARSE, "tensor '%s': qmethod '%s' is not layer or channel", p->name, s);
            have_method = true;
        } else if (!strcmp(ks, "dtype")) {
            if ((st = read_string(r, p, ks, val, &s)) != RD_OK)
                return st;
            if (!dtype_by_name(param_dtypes, sizeof param_dtypes / sizeof param_dtypes[0], s, &p->dtype))
                return bad(r, val, RD_E_PARSE,
                           "tensor '%s': dtype '%s' is not one of int8, uint8, int16, float16, float32", p->name, s);
            have_dtype = true;
        } else {
            static const struct {
                const char *key;
                unsigned bit;
                size_t off;
            } lists[] = {
                {"min", RD_QCFG_HAS_MIN, offsetof(rd_qcfg_param, min)},
                {"max", RD_QCFG_HAS_MAX, offsetof(rd_qcfg_param, max)},
                {"scale", RD_QCFG_HAS_SCALE, offsetof(rd_qcfg_param, scale)},
                {"zero_point", RD_QCFG_HAS_ZERO_POINT, 0},
                {"ori_min", RD_QCFG_HAS_ORI_MIN, offsetof(rd_qcfg_param, ori_min)},
                {"ori_max", RD_QCFG_HAS_ORI_MAX, offsetof(rd_qcfg_param, ori_max)},
            };
            size_t j = 0;
            while (j < sizeof lists / sizeof lists[0] && strcmp(lists[j].key, ks))
                j++;
            if (j == sizeof lists / sizeof lists[0])
                return bad(r, key, RD_E_PARSE,
                           "tensor '%s': unknown key '%s' (expected qtype, qmethod, dtype, min, max, scale, "
                           "zero_point, ori_min, ori_max)",
                           p->name, ks);
            if (p->has & lists[j].bit)
                return bad(r, key, RD_E_PARSE, "tensor '%s': key '%s' given twice", p->name, ks);
            if (lists[j].bit == RD_QCFG_HAS_ZERO_POINT)
                st = read_list(r, k, ks, val, p, NULL, &p->zero_point);
            else
                st = read_list(r, k, ks, val, p, (float **)((char *)p + lists[j].off), NULL);
            if (st != RD_OK)
                return st;
            p->has |= lists[j].bit;
        }
    }
    (void)have_dtype;
    if (!have_method) /* absent: as the lists imply (several entries can only be per channel) */
        p->method = p->has && p->n > 1 ? RD_QMETHOD_CHANNEL : RD_QMETHOD_LAYER;
    if (have_method && p->method == RD_QMETHOD_LAYER && p->has && p->n != 1)
        return bad(r, k, RD_E_PARSE, "tensor '%s': qmethod layer takes one entry per list, found %zu", p->name, p->n);
    return RD_OK;
}

static rd_status read_params(const reader *r, const sim_ynode *v)
{
    if (sim_ynode_is_null(v))
        return RD_OK;
    if (v->kind != SIM_Y_MAP)
        return bad(r, v, RD_E_PARSE, "quantize_parameters must be a mapping of tensor names, not %s",
                   sim_ynode_kind_name(v));
    rd_qcfg *q = r->q;
    for (size_t i = 0; i < v->n; i++) {
        const sim_ynode *k = v->items[2 * i], *val = v->items[2 * i + 1];
        const char *name;
        if (!sim_yscalar_str(k, &name))
            return bad(r, k, RD_E_PARSE, "quantize_parameters: tensor names must be strings, not %s",
                       k->kind == SIM_Y_SCALAR ? "empty" : sim_ynode_kind_name(k));
        if (!sim_grow_for(&q->params, q->n_params, sizeof *q->params))
            return bad(r, k, RD_E_NOMEM, "out of memory");
        rd_qcfg_param *p = &q->params[q->n_params];
        memset(p, 0, sizeof *p);
        q->n_params++;
        p->line = k->line;
        if (!(p->name = sim_strdup(name)))
            return bad(r, k, RD_E_NOMEM, "out of memory");
        rd_status st = read_param(r, k, val, p);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

static rd_status read_layers(const reader *r, const sim_ynode *v)
{
    if (sim_ynode_is_null(v))
        return RD_OK;
    if (v->kind != SIM_Y_MAP)
        return bad(r, v, RD_E_PARSE, "custom_quantize_layers must be a mapping (tensor: float16), not %s",
                   sim_ynode_kind_name(v));
    rd_qcfg *q = r->q;
    for (size_t i = 0; i < v->n; i++) {
        const sim_ynode *k = v->items[2 * i], *val = v->items[2 * i + 1];
        const char *name, *s;
        if (!sim_yscalar_str(k, &name))
            return bad(r, k, RD_E_PARSE, "custom_quantize_layers: tensor names must be strings");
        if (!sim_yscalar_str(val, &s))
            return bad(r, val, RD_E_PARSE, "custom_quantize_layers: tensor '%s' needs float16, int8 or int16", name);
        rd_dtype dt;
        if (!dtype_by_name(layer_dtypes, sizeof layer_dtypes / sizeof layer_dtypes[0], s, &dt))
            return bad(r, val, RD_E_PARSE, "custom_quantize_layers: tensor '%s': '%s' is not float16, int8 or int16",
                       name, s);
        const rd_qcfg_layer *dup = rd_qcfg_find_layer(q, name);
        if (dup)
            return bad(r, k, RD_E_PARSE, "custom_quantize_layers names tensor '%s' twice (first at line %d)", name,
                       dup->line);
        rd_status st = rd_qcfg_add_layer(q, name, dt, r->err);
        if (st != RD_OK)
            return st;
        q->layers[q->n_layers - 1].line = k->line;
    }
    return RD_OK;
}

/* Blanks lines made only of "…" (U+2026) or runs of 3+ dots: RKNN's manual elides its sample that way. */
static void blank_elisions(char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && s[end] != '\n')
            end++;
        size_t dots = 0, ellipses = 0, other = 0;
        for (size_t k = i; k < end; k++) {
            unsigned char c = (unsigned char)s[k];
            if (c == '.')
                dots++;
            else if (c == 0xE2 && k + 2 < end + 1 && (unsigned char)s[k + 1] == 0x80 &&
                     (unsigned char)s[k + 2] == 0xA6) {
                ellipses++;
                k += 2;
            } else if (c != ' ' && c != '\t' && c != '\r')
                other++;
        }
        if (other == 0 && (ellipses > 0 || dots >= 3) && !(dots == 3 && ellipses == 0 && s[i] == '.'))
            for (size_t k = i; k < end; k++)
                s[k] = ' ';
        i = end + 1;
    }
}

rd_status rd_qcfg_parse(const char *buf, size_t len, const char *name, rd_qcfg *q, rd_error *err)
{
    rd_qcfg_init(q);
    char *copy = malloc(len + 1);
    if (!copy)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", name);
    memcpy(copy, buf, len);
    copy[len] = '\0';
    blank_elisions(copy, len);
    sim_ynode *root = NULL;
    rd_status st = sim_yaml_parse(copy, len, name, &root, err);
    free(copy);
    if (st != RD_OK)
        return st;
    reader r = {.name = name, .q = q, .err = err};
    if (!root) {
        st = rd_errorf(err, RD_E_PARSE, "%s: empty file (expected custom_quantize_layers and quantize_parameters)",
                       name);
        goto out;
    }
    if (root->kind != SIM_Y_MAP) {
        st = bad(&r, root, RD_E_PARSE, "expected a mapping with custom_quantize_layers and quantize_parameters, not %s",
                 sim_ynode_kind_name(root));
        goto out;
    }
    const sim_ynode *layers = NULL, *params = NULL;
    for (size_t i = 0; i < root->n; i++) {
        const sim_ynode *k = root->items[2 * i], *v = root->items[2 * i + 1];
        const char *ks = "";
        if (!sim_yscalar_str(k, &ks) || (strcmp(ks, "custom_quantize_layers") && strcmp(ks, "quantize_parameters"))) {
            st = bad(&r, k, RD_E_PARSE, "unknown key '%s' (expected custom_quantize_layers, quantize_parameters)",
                     k->kind == SIM_Y_SCALAR ? k->str : "...");
            goto out;
        }
        const sim_ynode **slot = !strcmp(ks, "quantize_parameters") ? &params : &layers;
        if (*slot) {
            st = bad(&r, k, RD_E_PARSE, "key '%s' given twice (first at line %d)", ks, (*slot)->line);
            goto out;
        }
        *slot = v;
    }
    if (params && (st = read_params(&r, params)) != RD_OK)
        goto out;
    if ((st = build_index(q, name, err)) != RD_OK)
        goto out;
    if (layers && (st = read_layers(&r, layers)) != RD_OK)
        goto out;
    /* RKNN refuses custom layers that are not quantizable tensors ("Invalid operands name") */
    for (size_t i = 0; q->n_params > 0 && i < q->n_layers; i++)
        if (!rd_qcfg_find(q, q->layers[i].name)) {
            st = rd_errorf(err, RD_E_PARSE,
                           "%s:%d: custom_quantize_layers names tensor '%s', which is not in "
                           "quantize_parameters",
                           name, q->layers[i].line, q->layers[i].name);
            goto out;
        }
out:
    sim_ynode_free(root);
    if (st != RD_OK)
        rd_qcfg_fini(q);
    return st;
}

rd_status rd_qcfg_load(const char *path, rd_qcfg *q, rd_error *err)
{
    rd_qcfg_init(q);
    sim_file_bytes f;
    rd_status st = sim_file_bytes_read(path, RD_MAX_QCFG_BYTES, &f, err);
    if (st == RD_OK)
        st = rd_qcfg_parse(f.buf, f.len, path, q, err);
    sim_file_bytes_free(&f);
    return st;
}

/* ------------------------------------------------------------------------------------------------
 * Writing.
 */

typedef struct outbuf {
    char *p;
    size_t len, cap;
    bool failed;
} outbuf;

static void put(outbuf *o, const char *s, size_t n)
{
    if (o->failed)
        return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n + 1)
            cap *= 2;
        char *p = realloc(o->p, cap);
        if (!p) {
            o->failed = true;
            return;
        }
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = '\0';
}

static void puts_(outbuf *o, const char *s)
{
    put(o, s, strlen(s));
}

/* The shortest decimal that strtof reads back as f, in a form PyYAML also reads as a float
 * (a '.' in the mantissa, a signed exponent): 1.0, 0.007843138, 1.0e-05, .inf, .nan. */
static void format_float(float f, char *buf, size_t cap)
{
    if (isnan(f)) {
        snprintf(buf, cap, ".nan");
        return;
    }
    if (isinf(f)) {
        snprintf(buf, cap, f < 0 ? "-.inf" : ".inf");
        return;
    }
    char tmp[48];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, (double)f);
        if (strtof(tmp, NULL) == f)
            break;
    }
    char *e = strchr(tmp, 'e');
    bool has_dot = strchr(tmp, '.') != NULL;
    if (e && !has_dot && e - tmp < (ptrdiff_t)sizeof tmp)
        snprintf(buf, cap, "%.*s.0%s", (int)(e - tmp), tmp, e);
    else if (!e && !has_dot)
        snprintf(buf, cap, "%s.0", tmp);
    else
        snprintf(buf, cap, "%s", tmp);
}

/* True when s can be written as a plain scalar that PyYAML and libyaml read back as the same string. */
static bool plain_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || strchr("-?:,[]{}#&*!|>'\"%@` \t", s[0]) || s[n - 1] == ':' || s[n - 1] == ' ')
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7f || strchr(",[]{}\"'", c))
            return false;
        if ((c == ':' && s[i + 1] == ' ') || (c == '#' && i > 0 && s[i - 1] == ' '))
            return false;
    }
    /* would resolve to a number, bool or null */
    sim_ynode probe = {.kind = SIM_Y_SCALAR, .str = (char *)s, .len = n, .plain = true};
    bool b;
    double d;
    int64_t iv;
    return !(sim_ynode_is_null(&probe) || sim_yscalar_bool(&probe, &b) || sim_yscalar_double(&probe, &d) ||
             sim_yscalar_int(&probe, &iv) || !strcmp(s, "=") || !strcmp(s, "<<"));
}

/* The escape of the UTF-8 character at c that YAML treats specially (the line breaks U+0085, U+2028, U+2029;
   what a stream may not hold raw: C1 controls, U+FFFE, U+FFFF) into esc; returns its bytes, 0 for others. */
static size_t multibyte_escape(const unsigned char *c, char *esc, size_t len)
{
    if (c[0] == 0xC2 && c[1] == 0x85)
        snprintf(esc, len, "\\N");
    else if (c[0] == 0xC2 && c[1] >= 0x80 && c[1] <= 0x9F)
        snprintf(esc, len, "\\u%04x", c[1]);
    else if (c[0] == 0xE2 && c[1] == 0x80 && (c[2] == 0xA8 || c[2] == 0xA9))
        snprintf(esc, len, "%s", c[2] == 0xA8 ? "\\L" : "\\P");
    else if (c[0] == 0xEF && c[1] == 0xBF && (c[2] == 0xBE || c[2] == 0xBF))
        snprintf(esc, len, "%s", c[2] == 0xBE ? "\\uFFFE" : "\\uFFFF");
    else
        return 0;
    return c[0] == 0xC2 ? 2 : 3;
}

/* Writes s as a YAML scalar: plain when safe, single-quoted (PyYAML's choice) for printable ASCII,
 * double-quoted with escapes otherwise. Non-ASCII goes double-quoted so that the Unicode line breaks
 * U+0085, U+2028 and U+2029 can be escaped (libyaml would fold them inside any other style), and the
 * characters YAML does not allow in a stream at all (C1 controls, U+FFFE, U+FFFF) as \u escapes. */
static void put_scalar(outbuf *o, const char *s)
{
    if (plain_ok(s)) {
        puts_(o, s);
        return;
    }
    bool special = false;
    for (const char *c = s; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            special = true;
    if (!special) {
        put(o, "'", 1);
        for (const char *c = s; *c; c++) {
            put(o, c, 1);
            if (*c == '\'')
                put(o, "'", 1);
        }
        put(o, "'", 1);
        return;
    }
    put(o, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        char esc[8];
        const size_t taken = multibyte_escape(c, esc, sizeof esc);
        if (taken) {
            puts_(o, esc);
            c += taken - 1;
            continue;
        }
        if (*c < 0x20 || *c == 0x7f)
            snprintf(esc, sizeof esc, "\\x%02x", *c);
        else if (*c == '"' || *c == '\\')
            snprintf(esc, sizeof esc, "\\%c", *c);
        else {
            esc[0] = (char)*c;
            esc[1] = '\0';
        }
        puts_(o, esc);
    }
    put(o, "\"", 1);
}

/* libyaml reads implicit keys of at most 1024 characters; longer names cannot be written as keys. */
#define MAX_KEY_BYTES 1000

#define IND1 "     " /* PyYAML indent 5, as RKNN writes */
#define IND2 "          "

static void put_list(outbuf *o, const char *key, const float *f, const int32_t *z, size_t n)
{
    puts_(o, IND2);
    puts_(o, key);
    puts_(o, ":\n");
    for (size_t i = 0; i < n; i++) {
        char num[64];
        if (f)
            format_float(f[i], num, sizeof num);
        else
            snprintf(num, sizeof num, "%d", (int)z[i]);
        puts_(o, IND2 "-    ");
        puts_(o, num);
        puts_(o, "\n");
    }
}

/* A tensor name YAML can hold as a key: at most MAX_KEY_BYTES, and valid UTF-8 (YAML is Unicode text: a name
   with a byte such as 0xff would make a file that no YAML reader, ours included, can read back). */
static rd_status check_key(const char *name, rd_error *err)
{
    size_t n = strlen(name);
    if (n > MAX_KEY_BYTES)
        return rd_errorf(err, RD_E_INVAL, "a tensor name of %zu bytes is too long for a YAML key (at most %d)", n,
                         MAX_KEY_BYTES);
    if (!rd_text_utf8_valid(name, n))
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "tensor '%s' has a name that is not valid UTF-8, which a "
                         ".quantization.cfg (YAML) cannot hold",
                         RD_TEXT_SHOWN(name));
    return RD_OK;
}

rd_status rd_qcfg_write(const rd_qcfg *q, char **out_buf, size_t *out_len, rd_error *err)
{
    *out_buf = NULL;
    *out_len = 0;
    outbuf o = {0};
    if (q->n_layers == 0)
        puts_(&o, "custom_quantize_layers: {}\n");
    else
        puts_(&o, "custom_quantize_layers:\n");
    for (size_t i = 0; i < q->n_layers; i++) {
        if (check_key(q->layers[i].name, err) != RD_OK) {
            free(o.p);
            return err ? err->code : RD_E_INVAL;
        }
        const char *dn = q->layers[i].dtype == RD_DT_F16   ? "float16"
                         : q->layers[i].dtype == RD_DT_I16 ? "int16"
                                                           : "int8";
        puts_(&o, IND1);
        put_scalar(&o, q->layers[i].name);
        puts_(&o, ": ");
        puts_(&o, dn);
        puts_(&o, "\n");
    }
    puts_(&o, q->n_params ? "quantize_parameters:\n" : "quantize_parameters: {}\n");
    for (size_t i = 0; i < q->n_params; i++) {
        const rd_qcfg_param *p = &q->params[i];
        const char *dn = param_dtype_name(p->dtype);
        if (check_key(p->name, err) != RD_OK) {
            free(o.p);
            return err ? err->code : RD_E_INVAL;
        }
        if (!dn) {
            free(o.p);
            return rd_errorf(err, RD_E_INVAL, "tensor '%s': dtype %s cannot be written in a quantization cfg", p->name,
                             rd_dtype_name(p->dtype));
        }
        if (p->method != RD_QMETHOD_LAYER && p->method != RD_QMETHOD_CHANNEL) {
            free(o.p);
            return rd_errorf(err, RD_E_INVAL, "tensor '%s': qmethod must be layer or channel", p->name);
        }
        puts_(&o, IND1);
        put_scalar(&o, p->name);
        puts_(&o, ":\n");
        if (p->qtype) {
            puts_(&o, IND2 "qtype: ");
            put_scalar(&o, p->qtype);
            puts_(&o, "\n");
        }
        puts_(&o, IND2 "qmethod: ");
        puts_(&o, rd_qmethod_name(p->method));
        puts_(&o, "\n" IND2 "dtype: ");
        puts_(&o, dn);
        puts_(&o, "\n");
        if (p->has && p->n == 0) {
            free(o.p);
            return rd_errorf(err, RD_E_INVAL, "tensor '%s': lists with no entries", p->name);
        }
        if (p->has & RD_QCFG_HAS_MIN)
            put_list(&o, "min", p->min, NULL, p->n);
        if (p->has & RD_QCFG_HAS_MAX)
            put_list(&o, "max", p->max, NULL, p->n);
        if (p->has & RD_QCFG_HAS_SCALE)
            put_list(&o, "scale", p->scale, NULL, p->n);
        if (p->has & RD_QCFG_HAS_ZERO_POINT)
            put_list(&o, "zero_point", NULL, p->zero_point, p->n);
        if (p->has & RD_QCFG_HAS_ORI_MIN)
            put_list(&o, "ori_min", p->ori_min, NULL, p->n);
        if (p->has & RD_QCFG_HAS_ORI_MAX)
            put_list(&o, "ori_max", p->ori_max, NULL, p->n);
    }
    if (o.failed) {
        free(o.p);
        return rd_errorf(err, RD_E_NOMEM, "out of memory writing the quantization cfg");
    }
    *out_buf = o.p;
    *out_len = o.len;
    return RD_OK;
}

rd_status rd_qcfg_save(const char *path, const rd_qcfg *q, rd_error *err)
{
    char *buf;
    size_t len;
    rd_status st = rd_qcfg_write(q, &buf, &len, err);
    return sim_save_written(st, path, buf, len, true, err);
}

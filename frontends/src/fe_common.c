/*
 * fe_common.c: the string map, unique names and the unsupported-operator list every frontend uses
 * (fe_internal.h). The map grows by doubling and stays at most half full; keys are hashed with FNV-1a.
 */
#include "fe_internal.h"

#include <stdio.h>

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

fe_map_slot *fe_map_get(const fe_map *m, const char *key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->slots[i].key)
            return NULL;
        if (strcmp(m->slots[i].key, key) == 0)
            return &m->slots[i];
    }
}

static bool grow(fe_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    fe_map_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t k = 0; k < m->cap; k++) {
        if (!m->slots[k].key)
            continue;
        size_t i = hash(m->slots[k].key) & (cap - 1);
        while (slots[i].key)
            i = (i + 1) & (cap - 1);
        slots[i] = m->slots[k];
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return true;
}

fe_map_slot *fe_map_put(fe_map *m, const char *key, void *val, bool *added)
{
    if (added)
        *added = false;
    fe_map_slot *s = fe_map_get(m, key);
    if (s)
        return s;
    if ((m->n + 1) * 2 > m->cap && !grow(m))
        return NULL;
    size_t i = hash(key) & (m->cap - 1);
    while (m->slots[i].key)
        i = (i + 1) & (m->cap - 1);
    m->slots[i].key = strdup(key);
    if (!m->slots[i].key)
        return NULL;
    m->slots[i].val = val;
    m->n++;
    if (added)
        *added = true;
    return &m->slots[i];
}

void fe_map_fini(fe_map *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->slots[i].key);
    free(m->slots);
    memset(m, 0, sizeof *m);
}

void fe_names_fini(fe_names *s)
{
    fe_map_fini(&s->used);
    for (size_t i = 0; i < s->n_owned; i++)
        free(s->owned[i]);
    free(s->owned);
    memset(s, 0, sizeof *s);
}

bool fe_names_claim(fe_names *s, const char *name, bool *nomem)
{
    bool added = false;
    if (!fe_map_put(&s->used, name, NULL, &added)) {
        if (nomem)
            *nomem = true;
        return false;
    }
    return added;
}

const char *fe_names_fresh(fe_names *s, const char *base, const char *suffix)
{
    size_t len = strlen(base) + strlen(suffix) + 24;
    char *name = malloc(len);
    if (!name)
        return NULL;
    snprintf(name, len, "%s%s", base, suffix);
    bool nomem = false;
    for (unsigned k = 2; !fe_names_claim(s, name, &nomem); k++) {
        if (nomem || k > 1000000u) {
            free(name);
            return NULL;
        }
        snprintf(name, len, "%s%s:%u", base, suffix, k);
    }
    if (s->n_owned == s->cap_owned) {
        size_t cap = s->cap_owned ? s->cap_owned * 2 : 64;
        char **grown = realloc(s->owned, cap * sizeof *grown);
        if (!grown) {
            free(name);
            return NULL;
        }
        s->owned = grown;
        s->cap_owned = cap;
    }
    s->owned[s->n_owned++] = name;
    return name;
}

void fe_unsupported_add(fe_unsupported *u, const char *kind, const char *where)
{
    u->n_total++;
    bool added = false;
    if (!fe_map_put(&u->seen, kind, NULL, &added) || !added)
        return;
    u->n_kinds++;
    if (u->used < sizeof u->text - 1) {
        int w = snprintf(u->text + u->used, sizeof u->text - u->used, "%s%s (%s)", u->used ? ", " : "", kind, where);
        if (w > 0)
            u->used += (size_t)w;
    }
}

rd_status fe_unsupported_finish(fe_unsupported *u, const char *file, const char *what, rd_error *err)
{
    rd_status st = RD_OK;
    if (u->n_kinds)
        st = rd_errorf(err, RD_E_UNSUPPORTED,
                       "%s: %zu %s%s of %zu kind%s not supported (first of each): %s%s; docs/frontends.md lists what "
                       "is",
                       file, u->n_total, what, u->n_total == 1 ? " is" : "s are", u->n_kinds,
                       u->n_kinds == 1 ? "" : "s", u->text, u->used >= sizeof u->text - 1 ? "..." : "");
    fe_map_fini(&u->seen);
    memset(u, 0, sizeof *u);
    return st;
}

float fe_load_float(rd_dtype dt, const void *data, int64_t i)
{
    switch (dt) {
    case RD_DT_F32:
        return ((const float *)data)[i];
    case RD_DT_F16:
        return rd_f16_to_f32(((const uint16_t *)data)[i]);
    case RD_DT_BF16:
        return rd_bf16_to_f32(((const uint16_t *)data)[i]);
    case RD_DT_F64:
        return (float)((const double *)data)[i];
    default:
        return 0.0f;
    }
}

rd_status fe_fail(rd_status *sticky, rd_error *err, rd_status code, const char *prefix, const char *fmt, ...)
{
    if (*sticky != RD_OK)
        return *sticky;
    char msg[RD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    *sticky = prefix ? rd_errorf(err, code, "%s: %s", prefix, msg) : rd_errorf(err, code, "%s", msg);
    return *sticky;
}

rd_onnx_node *fe_node(rd_onnx_builder *b, rd_status *sticky, rd_error *err, const char *op, const char *name,
                      const char *const *in, int n_in, const char *const *out, int n_out)
{
    if (*sticky != RD_OK)
        return NULL;
    for (int i = 0; i < n_in; i++)
        if (!in[i])
            return NULL;
    for (int i = 0; i < n_out; i++)
        if (!out[i])
            return NULL;
    rd_onnx_node *n = rd_onnx_add_node(b, op, name, in, n_in, out, n_out);
    if (!n)
        *sticky = rd_errorf(err, RD_E_NOMEM, "out of memory");
    return n;
}

void fe_tf_resize_attrs(rd_onnx_node *n, bool bilinear, bool align, bool half)
{
    rd_onnx_attr_string(n, "mode", bilinear ? "linear" : "nearest");
    rd_onnx_attr_string(n, "coordinate_transformation_mode",
                        align  ? "align_corners"
                        : half ? (bilinear ? "half_pixel" : "tf_half_pixel_for_nn")
                               : "asymmetric");
    if (!bilinear)
        rd_onnx_attr_string(n, "nearest_mode", align ? "round_prefer_ceil" : "floor");
}

/*
 * report_json_read.c: reads report.json (docs/report-schema.md) back into an rd_result, for `compare`
 * and for tests. Strict about what it knows: every required field must be present with its type,
 * enum strings must be known (except finding kinds, which later writers may add: those read as
 * "other"), integers must be integral and in range. Unknown keys are ignored so that additive schema
 * changes keep version 1. Every error names the JSON path of the offending value.
 */
#include "report_json.h"
#include "report_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Integers above 2^53 do not survive a JSON reader that uses doubles (most do): refuse them. */
#define MAX_JSON_INT 9007199254740992.0

typedef struct jctx {
    const char *name; /* file name for messages */
    rd_error *err;
    char path[256]; /* JSON path of the value being read: "$.layers[3].name" */
    size_t plen;
    rd_status st;
} jctx;

static size_t path_push_key(jctx *c, const char *key)
{
    size_t saved = c->plen;
    int n = snprintf(c->path + c->plen, sizeof c->path - c->plen, ".%s", key);
    if (n > 0)
        c->plen += (size_t)n < sizeof c->path - c->plen ? (size_t)n : sizeof c->path - c->plen - 1;
    return saved;
}

static size_t path_push_index(jctx *c, size_t i)
{
    size_t saved = c->plen;
    int n = snprintf(c->path + c->plen, sizeof c->path - c->plen, "[%zu]", i);
    if (n > 0)
        c->plen += (size_t)n < sizeof c->path - c->plen ? (size_t)n : sizeof c->path - c->plen - 1;
    return saved;
}

static void path_pop(jctx *c, size_t saved)
{
    c->plen = saved;
    c->path[saved] = '\0';
}

static const char *type_name(const cJSON *j)
{
    if (!j)
        return "nothing";
    if (cJSON_IsNull(j))
        return "null";
    if (cJSON_IsBool(j))
        return "a boolean";
    if (cJSON_IsNumber(j))
        return "a number";
    if (cJSON_IsString(j))
        return "a string";
    if (cJSON_IsArray(j))
        return "an array";
    if (cJSON_IsObject(j))
        return "an object";
    return "an invalid value";
}

static bool fail(jctx *c, rd_status code, const char *what, const cJSON *got)
{
    if (c->st == RD_OK) {
        if (got)
            rd_errorf(c->err, code, "%s: %s: expected %s, got %s", c->name, c->path, what, type_name(got));
        else
            rd_errorf(c->err, code, "%s: %s: %s", c->name, c->path, what);
        c->st = code;
    }
    return false;
}

/* The member key of obj; NULL (and an error if required) when absent. */
static const cJSON *member(jctx *c, const cJSON *obj, const char *key, bool required)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j && required) {
        size_t s = path_push_key(c, key);
        fail(c, RD_E_PARSE, "missing", NULL);
        path_pop(c, s);
    }
    return j;
}

/* Reads the string member key (nullable: null gives NULL). */
static bool get_string(jctx *c, const cJSON *obj, const char *key, bool nullable, char **out)
{
    *out = NULL;
    const cJSON *j = member(c, obj, key, true);
    if (!j)
        return false;
    size_t s = path_push_key(c, key);
    bool ok = true;
    if (nullable && cJSON_IsNull(j))
        ;
    else if (!cJSON_IsString(j) || !j->valuestring)
        ok = fail(c, RD_E_PARSE, nullable ? "a string or null" : "a string", j);
    else if (!(*out = strdup(j->valuestring)))
        ok = fail(c, RD_E_NOMEM, "out of memory", NULL);
    path_pop(c, s);
    return ok;
}

/* A number, or one of the strings "nan", "inf", "-inf". */
static bool as_double(jctx *c, const cJSON *j, double *out)
{
    if (cJSON_IsNumber(j)) {
        *out = j->valuedouble;
        return true;
    }
    if (cJSON_IsString(j) && j->valuestring) {
        if (!strcmp(j->valuestring, "nan")) {
            *out = NAN;
            return true;
        }
        if (!strcmp(j->valuestring, "inf") || !strcmp(j->valuestring, "-inf")) {
            *out = j->valuestring[0] == '-' ? -INFINITY : INFINITY;
            return true;
        }
    }
    return fail(c, RD_E_PARSE, "a number or \"nan\", \"inf\", \"-inf\"", j);
}

static bool get_double(jctx *c, const cJSON *obj, const char *key, double *out)
{
    const cJSON *j = member(c, obj, key, true);
    if (!j)
        return false;
    size_t s = path_push_key(c, key);
    bool ok = as_double(c, j, out);
    path_pop(c, s);
    return ok;
}

static bool as_int(jctx *c, const cJSON *j, double lo, double hi, int64_t *out)
{
    if (!cJSON_IsNumber(j))
        return fail(c, RD_E_PARSE, "an integer", j);
    double v = j->valuedouble;
    if (!isfinite(v) || v != floor(v) || v < lo || v > hi) {
        char what[128];
        snprintf(what, sizeof what, "an integer in [%.0f, %.0f], got %.17g", lo, hi, v);
        return fail(c, RD_E_PARSE, what, NULL);
    }
    *out = (int64_t)v;
    return true;
}

static bool get_int(jctx *c, const cJSON *obj, const char *key, double lo, double hi, int64_t *out)
{
    const cJSON *j = member(c, obj, key, true);
    if (!j)
        return false;
    size_t s = path_push_key(c, key);
    bool ok = as_int(c, j, lo, hi, out);
    path_pop(c, s);
    return ok;
}

/* An integer added within schema version 1: absent (a file from an older writer) reads as 0. */
static bool get_int_added(jctx *c, const cJSON *obj, const char *key, double lo, double hi, int64_t *out)
{
    *out = 0;
    return !member(c, obj, key, false) || get_int(c, obj, key, lo, hi, out);
}

/* Looks a string member up in a name table (index found in *out). */
static bool get_enum(jctx *c, const cJSON *obj, const char *key, const char *(*name_of)(int), int n, int *out)
{
    const cJSON *j = member(c, obj, key, true);
    if (!j)
        return false;
    size_t s = path_push_key(c, key);
    bool ok = false;
    if (!cJSON_IsString(j) || !j->valuestring) {
        fail(c, RD_E_PARSE, "a string", j);
    } else {
        for (int i = 0; i < n && !ok; i++)
            if (!strcmp(name_of(i), j->valuestring)) {
                *out = i;
                ok = true;
            }
        if (!ok) {
            char what[160];
            snprintf(what, sizeof what, "unknown value \"%.80s\"", j->valuestring);
            fail(c, RD_E_PARSE, what, NULL);
        }
    }
    path_pop(c, s);
    return ok;
}

static const char *deg_name(int i)
{
    return rd_degenerate_name((rd_degenerate)i);
}
static const char *sev_name(int i)
{
    return rd_severity_name((rd_severity)i);
}

/* The member key as an array (or object when want_object); NULL with an error otherwise. */
static const cJSON *get_container(jctx *c, const cJSON *obj, const char *key, bool want_object)
{
    const cJSON *j = member(c, obj, key, true);
    if (!j)
        return NULL;
    if (want_object ? cJSON_IsObject(j) : cJSON_IsArray(j))
        return j;
    size_t s = path_push_key(c, key);
    fail(c, RD_E_PARSE, want_object ? "an object" : "an array", j);
    path_pop(c, s);
    return NULL;
}

static bool read_group(jctx *c, const cJSON *o, rd_metric_group *g)
{
    if (!cJSON_IsObject(o))
        return fail(c, RD_E_PARSE, "an object", o);
    rd_metrics *m = &g->mean;
    int64_t v;
    int deg = 0;
    g->present = true;
    bool ok = get_int(c, o, "n_samples", 0, INT32_MAX, &v) && ((g->n_samples = (int)v), true) &&
              get_double(c, o, "cos", &m->cos) && get_double(c, o, "euc", &m->euc) &&
              get_double(c, o, "euc_rel", &m->euc_rel) && get_double(c, o, "sqnr_db", &m->sqnr_db) &&
              get_double(c, o, "max_abs", &m->max_abs) && get_double(c, o, "mean_abs", &m->mean_abs) &&
              get_double(c, o, "gain", &m->gain) && get_double(c, o, "offset", &m->offset) &&
              get_double(c, o, "sqnr_affine_db", &m->sqnr_affine_db) && get_double(c, o, "err_steps", &m->err_steps) &&
              get_double(c, o, "saturated_share", &m->saturated_share) &&
              get_double(c, o, "zero_share", &m->zero_share) &&
              get_int(c, o, "fp16_overflow", -MAX_JSON_INT, MAX_JSON_INT, &m->fp16_overflow) &&
              get_double(c, o, "fp16_max_abs", &m->fp16_max_abs) &&
              get_int(c, o, "count", -MAX_JSON_INT, MAX_JSON_INT, &m->count) &&
              get_enum(c, o, "degenerate", deg_name, RD_DEG_SHAPE + 1, &deg) &&
              ((m->degenerate = (rd_degenerate)deg), true) && get_double(c, o, "cos_min", &g->cos_min) &&
              get_double(c, o, "cos_p5", &g->cos_p5) && get_int(c, o, "worst_sample", -1, INT32_MAX, &v) &&
              ((g->worst_sample = (int)v), true) && get_int_added(c, o, "nan", 0, MAX_JSON_INT, &m->nan) &&
              get_int_added(c, o, "inf", 0, MAX_JSON_INT, &m->inf) &&
              get_int_added(c, o, "ref_nan", 0, MAX_JSON_INT, &m->ref_nan) &&
              get_int_added(c, o, "ref_inf", 0, MAX_JSON_INT, &m->ref_inf);
    return ok;
}

static bool read_u64_array(jctx *c, const cJSON *a, size_t n, uint64_t **out)
{
    if (!cJSON_IsArray(a))
        return fail(c, RD_E_PARSE, "an array", a);
    if ((size_t)cJSON_GetArraySize(a) != n) {
        char what[96];
        snprintf(what, sizeof what, "%d counts where the other histogram array has %zu", cJSON_GetArraySize(a), n);
        return fail(c, RD_E_PARSE, what, NULL);
    }
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out)
        return fail(c, RD_E_NOMEM, "out of memory", NULL);
    size_t i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        size_t s = path_push_index(c, i);
        int64_t v;
        bool ok = as_int(c, e, 0, MAX_JSON_INT, &v);
        path_pop(c, s);
        if (!ok)
            return false;
        (*out)[i] = (uint64_t)v;
    }
    return true;
}

static bool read_histogram(jctx *c, const cJSON *h, rd_histogram *out)
{
    if (!cJSON_IsObject(h))
        return fail(c, RD_E_PARSE, "an object", h);
    if (!get_double(c, h, "lo", &out->lo) || !get_double(c, h, "hi", &out->hi))
        return false;
    const cJSON *g = get_container(c, h, "golden", false);
    const cJSON *t = g ? get_container(c, h, "tested", false) : NULL;
    if (!t)
        return false;
    size_t n = (size_t)cJSON_GetArraySize(g);
    if (n == 0)
        return true; /* an empty histogram is the same as none */
    size_t s = path_push_key(c, "golden");
    bool ok = read_u64_array(c, g, n, &out->golden);
    path_pop(c, s);
    if (!ok)
        return false;
    s = path_push_key(c, "tested");
    ok = read_u64_array(c, t, n, &out->tested);
    path_pop(c, s);
    if (ok)
        out->n_bins = n;
    return ok;
}

static bool read_layer(jctx *c, const cJSON *o, rd_layer_result *l)
{
    if (!cJSON_IsObject(o))
        return fail(c, RD_E_PARSE, "an object", o);
    if (!get_string(c, o, "name", false, &l->name) || !get_string(c, o, "op_type", true, &l->op_type) ||
        !get_string(c, o, "fused_into", true, &l->fused_into) || !get_string(c, o, "precision", true, &l->precision))
        return false;
    /* npu_op came later: reports written before it have none */
    if (cJSON_GetObjectItemCaseSensitive(o, "npu_op") && !get_string(c, o, "npu_op", true, &l->npu_op))
        return false;
    const cJSON *shape = get_container(c, o, "shape", false);
    if (!shape)
        return false;
    size_t s = path_push_key(c, "shape");
    int rank = cJSON_GetArraySize(shape);
    if (rank > 8) {
        path_pop(c, s);
        s = path_push_key(c, "shape");
        fail(c, RD_E_PARSE, "more than 8 dimensions", NULL);
        path_pop(c, s);
        return false;
    }
    int d = 0;
    for (const cJSON *e = shape->child; e; e = e->next, d++) {
        size_t si = path_push_index(c, (size_t)d);
        bool ok = as_int(c, e, -1, MAX_JSON_INT, &l->dims[d]);
        path_pop(c, si);
        if (!ok) {
            path_pop(c, s);
            return false;
        }
    }
    path_pop(c, s);
    l->rank = rank;

    const cJSON *groups = get_container(c, o, "groups", true);
    if (!groups)
        return false;
    s = path_push_key(c, "groups");
    for (int g = 0; g < RD_GROUP_COUNT; g++) {
        const cJSON *gj = cJSON_GetObjectItemCaseSensitive(groups, rd_group_name((rd_group_id)g));
        if (!gj)
            continue;
        size_t sg = path_push_key(c, rd_group_name((rd_group_id)g));
        bool ok = read_group(c, gj, &l->groups[g]);
        path_pop(c, sg);
        if (!ok) {
            path_pop(c, s);
            return false;
        }
    }
    path_pop(c, s);

    const cJSON *ch = member(c, o, "channel_cos", false);
    if (ch) {
        s = path_push_key(c, "channel_cos");
        if (!cJSON_IsArray(ch)) {
            fail(c, RD_E_PARSE, "an array", ch);
            path_pop(c, s);
            return false;
        }
        size_t n = (size_t)cJSON_GetArraySize(ch);
        if (n > 0) {
            l->channels.cos = calloc(n, sizeof *l->channels.cos);
            if (!l->channels.cos) {
                path_pop(c, s);
                return fail(c, RD_E_NOMEM, "out of memory", NULL);
            }
            l->channels.n = n;
            size_t i = 0;
            for (const cJSON *e = ch->child; e; e = e->next, i++) {
                size_t si = path_push_index(c, i);
                bool ok = as_double(c, e, &l->channels.cos[i]);
                path_pop(c, si);
                if (!ok) {
                    path_pop(c, s);
                    return false;
                }
            }
        }
        path_pop(c, s);
    }
    const cJSON *h = member(c, o, "histogram", false);
    if (h) {
        s = path_push_key(c, "histogram");
        bool ok = read_histogram(c, h, &l->hist);
        path_pop(c, s);
        if (!ok)
            return false;
    }
    return true;
}

static bool read_finding(jctx *c, const cJSON *o, rd_finding *f)
{
    if (!cJSON_IsObject(o))
        return fail(c, RD_E_PARSE, "an object", o);
    const cJSON *k = member(c, o, "kind", true);
    if (!k)
        return false;
    if (!cJSON_IsString(k) || !k->valuestring) {
        size_t s = path_push_key(c, "kind");
        fail(c, RD_E_PARSE, "a string", k);
        path_pop(c, s);
        return false;
    }
    f->kind = RD_FIND_OTHER; /* kinds added by later writers read as "other" */
    for (int i = 0; i < RD_FIND_COUNT; i++)
        if (!strcmp(rd_finding_kind_name((rd_finding_kind)i), k->valuestring))
            f->kind = (rd_finding_kind)i;
    int sev = 0;
    bool ok = get_enum(c, o, "severity", sev_name, RD_SEV_ERROR + 1, &sev) &&
              get_string(c, o, "layer", true, &f->layer) && get_string(c, o, "title", false, &f->title) &&
              get_string(c, o, "evidence", false, &f->evidence) && get_string(c, o, "advice", true, &f->advice) &&
              get_double(c, o, "score", &f->score);
    f->severity = (rd_severity)sev;
    return ok;
}

/* Reads every element of the array member key with fn into a new array of elem_size-byte items. */
static bool read_array(jctx *c, const cJSON *root, const char *key, size_t elem_size, void **out, size_t *out_n,
                       bool (*fn)(jctx *, const cJSON *, void *))
{
    const cJSON *a = get_container(c, root, key, false);
    if (!a)
        return false;
    size_t n = (size_t)cJSON_GetArraySize(a);
    if (n == 0)
        return true;
    /* result.c's appenders keep no capacity field: they assume 8, then the next power of two */
    size_t cap = 8;
    while (cap < n)
        cap *= 2;
    char *items = calloc(cap, elem_size);
    if (!items)
        return fail(c, RD_E_NOMEM, "out of memory", NULL);
    *out = items;
    *out_n = n; /* set before reading so that rd_result_fini frees partial items */
    size_t s = path_push_key(c, key);
    size_t i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        size_t si = path_push_index(c, i);
        bool ok = fn(c, e, items + i * elem_size);
        path_pop(c, si);
        if (!ok) {
            path_pop(c, s);
            return false;
        }
    }
    path_pop(c, s);
    return true;
}

static bool layer_fn(jctx *c, const cJSON *j, void *p)
{
    return read_layer(c, j, p);
}
static bool finding_fn(jctx *c, const cJSON *j, void *p)
{
    return read_finding(c, j, p);
}
static bool fidelity_fn(jctx *c, const cJSON *j, void *p)
{
    rd_fidelity_item *f = p;
    if (!cJSON_IsObject(j))
        return fail(c, RD_E_PARSE, "an object", j);
    return get_string(c, j, "decision", false, &f->decision) && get_string(c, j, "source", false, &f->source) &&
           get_string(c, j, "detail", true, &f->detail);
}

static bool config_fn(jctx *c, const cJSON *j, void *p)
{
    rd_config_item *kv = p;
    if (!cJSON_IsObject(j))
        return fail(c, RD_E_PARSE, "an object", j);
    return get_string(c, j, "key", false, &kv->key) && get_string(c, j, "value", true, &kv->value);
}

/* A row index of the layers read before: 0..n_layers-1, or -1 where may_be_none. */
static bool get_row(jctx *c, const cJSON *o, const char *key, const rd_result *r, bool may_be_none, int *out)
{
    int64_t v;
    if (!get_int(c, o, key, may_be_none ? -1 : 0, (double)r->n_layers - 1, &v))
        return false;
    *out = (int)v;
    return true;
}

static bool read_sweep_point(jctx *c, const cJSON *o, const rd_result *r, rd_sweep_point *p)
{
    if (!cJSON_IsObject(o))
        return fail(c, RD_E_PARSE, "an object", o);
    int64_t k;
    return get_int(c, o, "k", 0, r->sweep.n_candidates, &k) && (p->k = (int)k, true) &&
           get_row(c, o, "layer", r, true, &p->layer) && get_double(c, o, "prefix_cos", &p->prefix_cos) &&
           get_double(c, o, "prefix_sqnr_db", &p->prefix_sqnr_db) &&
           get_double(c, o, "prefix_mac_share", &p->prefix_mac_share) &&
           get_double(c, o, "suffix_cos", &p->suffix_cos) && get_double(c, o, "suffix_sqnr_db", &p->suffix_sqnr_db) &&
           get_double(c, o, "suffix_mac_share", &p->suffix_mac_share);
}

static bool read_block(jctx *c, const cJSON *b, rd_result *r)
{
    rd_sweep *sw = &r->sweep;
    if (!cJSON_IsObject(b))
        return fail(c, RD_E_PARSE, "an object or null", b);
    int64_t start, end;
    if (!get_int(c, b, "start", 0, sw->n_candidates - 1, &start) || !get_int(c, b, "end", 1, sw->n_candidates, &end) ||
        !get_row(c, b, "first_layer", r, false, &sw->block_first_layer) ||
        !get_row(c, b, "last_layer", r, false, &sw->block_last_layer) || !get_double(c, b, "cos", &sw->block_cos) ||
        !get_double(c, b, "sqnr_db", &sw->block_sqnr_db) || !get_double(c, b, "mac_share", &sw->block_mac_share))
        return false;
    if (end <= start) {
        size_t s = path_push_key(c, "end");
        char what[96];
        snprintf(what, sizeof what, "expected an end above the start %lld, got %lld", (long long)start, (long long)end);
        fail(c, RD_E_PARSE, what, NULL);
        path_pop(c, s);
        return false;
    }
    sw->block_start = (int)start;
    sw->block_end = (int)end;
    return true;
}

/* The optional "sweep" member (added within version 1): absent or null reads as no sweep. */
static bool read_sweep(jctx *c, const cJSON *root, rd_result *r)
{
    const cJSON *o = member(c, root, "sweep", false);
    if (!o || cJSON_IsNull(o))
        return true;
    size_t s = path_push_key(c, "sweep");
    rd_sweep *sw = &r->sweep;
    int64_t n;
    bool ok = cJSON_IsObject(o) ? true : fail(c, RD_E_PARSE, "an object or null", o);
    ok = ok && get_int(c, o, "n_candidates", 1, INT32_MAX, &n) && get_string(c, o, "objective", true, &sw->objective);
    if (ok)
        sw->n_candidates = (int)n;
    const cJSON *pts = ok ? get_container(c, o, "points", false) : NULL;
    ok = ok && pts;
    size_t np = ok ? (size_t)cJSON_GetArraySize(pts) : 0;
    if (ok && (np < 2 || np > (size_t)n + 1))
        ok = fail(c, RD_E_PARSE, "expected a points array of 2 to n_candidates + 1 points", NULL);
    if (ok && !(sw->points = calloc(np, sizeof *sw->points)))
        ok = fail(c, RD_E_NOMEM, "out of memory", NULL);
    size_t sp = ok ? path_push_key(c, "points") : 0, i = 0;
    for (const cJSON *e = ok ? pts->child : NULL; e && ok; e = e->next, i++) {
        size_t si = path_push_index(c, i);
        ok = read_sweep_point(c, e, r, &sw->points[i]);
        if (ok && i > 0 && sw->points[i].k <= sw->points[i - 1].k)
            ok = fail(c, RD_E_PARSE, "expected points in increasing k", NULL);
        path_pop(c, si);
        sw->n_points = i + 1;
    }
    if (sw->points)
        path_pop(c, sp);
    const cJSON *b = ok ? member(c, o, "block", true) : NULL;
    if (ok && !b)
        ok = false;
    if (ok && !cJSON_IsNull(b)) {
        size_t sb = path_push_key(c, "block");
        ok = read_block(c, b, r);
        path_pop(c, sb);
    }
    path_pop(c, s);
    return ok;
}

/* Line and column (1-based) of byte offset off in text. */
static void line_col(const char *text, size_t off, size_t *line, size_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static bool read_root(jctx *c, const cJSON *root, rd_result *out)
{
    if (!cJSON_IsObject(root))
        return fail(c, RD_E_PARSE, "an object", root);
    const cJSON *ver = member(c, root, "schema_version", true);
    if (!ver)
        return false;
    if (!cJSON_IsNumber(ver) || ver->valuedouble != RD_REPORT_SCHEMA_VERSION) {
        size_t s = path_push_key(c, "schema_version");
        char what[128];
        if (cJSON_IsNumber(ver))
            snprintf(what, sizeof what, "version %.17g is not supported (this reader knows version %d)",
                     ver->valuedouble, RD_REPORT_SCHEMA_VERSION);
        fail(c, cJSON_IsNumber(ver) ? RD_E_UNSUPPORTED : RD_E_PARSE, cJSON_IsNumber(ver) ? what : "a number",
             cJSON_IsNumber(ver) ? NULL : ver);
        path_pop(c, s);
        return false;
    }
    int64_t ns;
    const cJSON *rt;
    if (!get_string(c, root, "tool", true, &out->tool) || !get_string(c, root, "model", true, &out->model) ||
        (member(c, root, "custom_string", false) && !get_string(c, root, "custom_string", true, &out->custom_string)) ||
        !read_array(c, root, "config", sizeof *out->config, (void **)&out->config, &out->n_config, config_fn) ||
        !get_int(c, root, "n_samples", 0, INT32_MAX, &ns) || !(rt = member(c, root, "has_runtime", true)))
        return false;
    out->n_samples = (int)ns;
    if (!cJSON_IsBool(rt)) {
        size_t s = path_push_key(c, "has_runtime");
        fail(c, RD_E_PARSE, "a boolean", rt);
        path_pop(c, s);
        return false;
    }
    out->has_runtime = cJSON_IsTrue(rt);
    return read_array(c, root, "layers", sizeof *out->layers, (void **)&out->layers, &out->n_layers, layer_fn) &&
           read_array(c, root, "findings", sizeof *out->findings, (void **)&out->findings, &out->n_findings,
                      finding_fn) &&
           (!member(c, root, "fidelity", false) || /* added within version 1: absent in older files */
            read_array(c, root, "fidelity", sizeof *out->fidelity, (void **)&out->fidelity, &out->n_fidelity,
                       fidelity_fn)) &&
           read_sweep(c, root, out);
}

rd_status rd_report_json_parse(const char *text, size_t len, const char *name, rd_result *out, rd_error *err)
{
    rd_result_init(out);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (!root) {
        if (rd_json_well_formed(text, len, CJSON_NESTING_LIMIT))
            return rd_errorf(err, RD_E_NOMEM, "%s: out of memory reading it", name);
        size_t off = (end && end >= text && end <= text + len) ? (size_t)(end - text) : 0;
        size_t line, col;
        line_col(text, off, &line, &col);
        if (len == 0)
            return rd_errorf(err, RD_E_PARSE, "%s: empty file, expected a JSON object", name);
        return rd_errorf(err, RD_E_PARSE, "%s:%zu:%zu: not valid JSON (or nested deeper than %d)", name, line, col,
                         CJSON_NESTING_LIMIT);
    }
    for (size_t i = (size_t)(end - text); i < len; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r') {
            size_t line, col;
            line_col(text, i, &line, &col);
            cJSON_Delete(root);
            return rd_errorf(err, RD_E_PARSE, "%s:%zu:%zu: unexpected data after the JSON object", name, line, col);
        }
    jctx c = {.name = name, .err = err, .path = "$", .plen = 1, .st = RD_OK};
    bool ok = read_root(&c, root, out);
    cJSON_Delete(root);
    if (!ok) {
        rd_result_fini(out);
        rd_result_init(out);
        return c.st;
    }
    return RD_OK;
}

rd_status rd_report_json_load(const char *path, rd_result *out, rd_error *err)
{
    rd_result_init(out);
    char *text;
    size_t len;
    rd_status st = rd_file_read_all(NULL, path, RD_REPORT_JSON_MAX_BYTES, &text, &len, err);
    if (st != RD_OK)
        return st;
    st = rd_report_json_parse(text, len, path, out, err);
    free(text);
    return st;
}

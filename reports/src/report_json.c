/*
 * report_json.c: writes report.json (schema: docs/report-schema.md) from an rd_result with cJSON.
 *
 * JSON has no NaN or infinity: such numbers are written as the strings "nan", "inf" and "-inf", and
 * the reader (report_json_read.c) accepts them wherever a number may be. Everything else is a plain
 * JSON number whose text reads back to the same double.
 */
#include "report_json.h"
#include "report_out.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A number, or "nan"/"inf"/"-inf" for what JSON cannot hold. Finite values are written with the
 * shortest digits that read back to the same double (Python's repr, as json.dumps writes them):
 * cJSON's own printer compares with a tolerance and can drop the last bit. */
static cJSON *make_double(double v)
{
    if (isnan(v))
        return cJSON_CreateString("nan");
    if (isinf(v))
        return cJSON_CreateString(v > 0 ? "inf" : "-inf");
    char buf[40];
    return cJSON_CreateRaw(rd_py_float_repr(v, buf, sizeof buf));
}

/* An integer, written exactly (readers limit it to 2^53). */
static cJSON *make_int(int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return cJSON_CreateRaw(buf);
}

/* Adds item under key; a NULL item (failed allocation) marks the whole tree as failed. */
static bool add(cJSON *obj, const char *key, cJSON *item, bool *ok)
{
    if (!item || !cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        *ok = false;
        return false;
    }
    return true;
}

static bool push(cJSON *arr, cJSON *item, bool *ok)
{
    if (!item || !cJSON_AddItemToArray(arr, item)) {
        cJSON_Delete(item);
        *ok = false;
        return false;
    }
    return true;
}

static cJSON *string_or_null(const char *s)
{
    return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static void add_metrics(cJSON *g, const rd_metrics *m, bool *ok)
{
    add(g, "cos", make_double(m->cos), ok);
    add(g, "euc", make_double(m->euc), ok);
    add(g, "euc_rel", make_double(m->euc_rel), ok);
    add(g, "sqnr_db", make_double(m->sqnr_db), ok);
    add(g, "max_abs", make_double(m->max_abs), ok);
    add(g, "mean_abs", make_double(m->mean_abs), ok);
    add(g, "gain", make_double(m->gain), ok);
    add(g, "offset", make_double(m->offset), ok);
    add(g, "sqnr_affine_db", make_double(m->sqnr_affine_db), ok);
    add(g, "err_steps", make_double(m->err_steps), ok);
    add(g, "saturated_share", make_double(m->saturated_share), ok);
    add(g, "zero_share", make_double(m->zero_share), ok);
    add(g, "fp16_overflow", make_int(m->fp16_overflow), ok);
    add(g, "fp16_max_abs", make_double(m->fp16_max_abs), ok);
    add(g, "count", make_int(m->count), ok);
    add(g, "degenerate", cJSON_CreateString(rd_degenerate_name(m->degenerate)), ok);
    add(g, "nan", make_int(m->nan), ok);
    add(g, "inf", make_int(m->inf), ok);
    add(g, "ref_nan", make_int(m->ref_nan), ok);
    add(g, "ref_inf", make_int(m->ref_inf), ok);
}

static cJSON *group_json(const rd_metric_group *g, bool *ok)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        *ok = false;
        return NULL;
    }
    add(o, "n_samples", make_int(g->n_samples), ok);
    add_metrics(o, &g->mean, ok);
    add(o, "cos_min", make_double(g->cos_min), ok);
    add(o, "cos_p5", make_double(g->cos_p5), ok);
    add(o, "worst_sample", make_int(g->worst_sample), ok);
    return o;
}

static cJSON *u64_array(const uint64_t *v, size_t n, bool *ok)
{
    cJSON *a = cJSON_CreateArray();
    if (!a) {
        *ok = false;
        return NULL;
    }
    for (size_t i = 0; i < n && *ok; i++)
        push(a, make_int(v[i] > INT64_MAX ? INT64_MAX : (int64_t)v[i]), ok);
    return a;
}

static cJSON *layer_json(const rd_layer_result *l, bool *ok)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        *ok = false;
        return NULL;
    }
    add(o, "name", string_or_null(l->name), ok);
    add(o, "op_type", string_or_null(l->op_type), ok);
    add(o, "npu_op", string_or_null(l->npu_op), ok);
    add(o, "fused_into", string_or_null(l->fused_into), ok);
    add(o, "precision", string_or_null(l->precision), ok);
    cJSON *shape = cJSON_CreateArray();
    if (add(o, "shape", shape, ok))
        for (int d = 0; d < l->rank && d < 8 && *ok; d++)
            push(shape, make_int(l->dims[d]), ok);
    cJSON *groups = cJSON_CreateObject();
    if (add(o, "groups", groups, ok))
        for (int g = 0; g < RD_GROUP_COUNT && *ok; g++)
            if (l->groups[g].present)
                add(groups, rd_group_name((rd_group_id)g), group_json(&l->groups[g], ok), ok);
    if (l->channels.n > 0 && l->channels.cos) {
        cJSON *ch = cJSON_CreateArray();
        if (add(o, "channel_cos", ch, ok))
            for (size_t i = 0; i < l->channels.n && *ok; i++)
                push(ch, make_double(l->channels.cos[i]), ok);
    }
    if (l->hist.n_bins > 0 && l->hist.golden && l->hist.tested) {
        cJSON *h = cJSON_CreateObject();
        if (add(o, "histogram", h, ok)) {
            add(h, "lo", make_double(l->hist.lo), ok);
            add(h, "hi", make_double(l->hist.hi), ok);
            add(h, "golden", u64_array(l->hist.golden, l->hist.n_bins, ok), ok);
            add(h, "tested", u64_array(l->hist.tested, l->hist.n_bins, ok), ok);
        }
    }
    return o;
}

static cJSON *finding_json(const rd_finding *f, bool *ok)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        *ok = false;
        return NULL;
    }
    add(o, "kind", cJSON_CreateString(rd_finding_kind_name(f->kind)), ok);
    add(o, "severity", cJSON_CreateString(rd_severity_name(f->severity)), ok);
    add(o, "layer", string_or_null(f->layer), ok);
    add(o, "title", string_or_null(f->title), ok);
    add(o, "evidence", string_or_null(f->evidence), ok);
    add(o, "advice", string_or_null(f->advice), ok);
    add(o, "score", make_double(f->score), ok);
    return o;
}

/* A new object; a failed allocation marks the tree as failed. */
static cJSON *new_object(bool *ok)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        *ok = false;
    return o;
}

/* The row's name, or null for a row outside the table. */
static cJSON *row_name(const rd_result *r, int row)
{
    return row >= 0 && (size_t)row < r->n_layers ? string_or_null(r->layers[row].name) : cJSON_CreateNull();
}

static cJSON *sweep_point_json(const rd_result *r, const rd_sweep_point *p, bool *ok)
{
    cJSON *o = new_object(ok);
    if (!o)
        return NULL;
    add(o, "k", make_int(p->k), ok);
    add(o, "layer", make_int(p->layer), ok);
    add(o, "tensor", row_name(r, p->layer), ok);
    const struct {
        const char *key;
        double v;
    } nums[] = {{"prefix_cos", p->prefix_cos},
                {"prefix_sqnr_db", p->prefix_sqnr_db},
                {"prefix_mac_share", p->prefix_mac_share},
                {"suffix_cos", p->suffix_cos},
                {"suffix_sqnr_db", p->suffix_sqnr_db},
                {"suffix_mac_share", p->suffix_mac_share}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        add(o, nums[i].key, make_double(nums[i].v), ok);
    return o;
}

/* The sweep (docs/report-schema.md), or null when none was made. */
static cJSON *sweep_json(const rd_result *r, bool *ok)
{
    const rd_sweep *sw = &r->sweep;
    if (sw->n_candidates <= 0)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject(), *pts = cJSON_CreateArray();
    if (!o || !pts) {
        cJSON_Delete(o);
        cJSON_Delete(pts);
        *ok = false;
        return NULL;
    }
    add(o, "n_candidates", make_int(sw->n_candidates), ok);
    add(o, "objective", string_or_null(sw->objective), ok);
    if (add(o, "points", pts, ok))
        for (size_t i = 0; i < sw->n_points && *ok; i++)
            push(pts, sweep_point_json(r, &sw->points[i], ok), ok);
    if (sw->block_end <= sw->block_start) {
        add(o, "block", cJSON_CreateNull(), ok);
        return o;
    }
    cJSON *b = new_object(ok);
    if (add(o, "block", b, ok)) {
        add(b, "start", make_int(sw->block_start), ok);
        add(b, "end", make_int(sw->block_end), ok);
        add(b, "first_layer", make_int(sw->block_first_layer), ok);
        add(b, "last_layer", make_int(sw->block_last_layer), ok);
        add(b, "first_tensor", row_name(r, sw->block_first_layer), ok);
        add(b, "last_tensor", row_name(r, sw->block_last_layer), ok);
        add(b, "cos", make_double(sw->block_cos), ok);
        add(b, "sqnr_db", make_double(sw->block_sqnr_db), ok);
        add(b, "mac_share", make_double(sw->block_mac_share), ok);
    }
    return o;
}

rd_status rd_report_json_sweep_write(const rd_result *r, char **out_text, size_t *out_len, rd_error *err)
{
    *out_text = NULL;
    *out_len = 0;
    bool ok = true;
    cJSON *o = sweep_json(r, &ok);
    char *text = ok && o ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (!text)
        return rd_errorf(err, RD_E_NOMEM, "sweep JSON: out of memory");
    *out_text = text;
    *out_len = strlen(text);
    return RD_OK;
}

rd_status rep_json_tree(const rd_result *r, cJSON **out, rd_error *err)
{
    *out = NULL;
    bool ok = true;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return rd_errorf(err, RD_E_NOMEM, "report.json: out of memory");
    add(root, "schema_version", make_int(RD_REPORT_SCHEMA_VERSION), &ok);
    add(root, "tool", string_or_null(r->tool), &ok);
    add(root, "model", string_or_null(r->model), &ok);
    add(root, "custom_string", string_or_null(r->custom_string), &ok);
    cJSON *cfg = cJSON_CreateArray();
    if (add(root, "config", cfg, &ok))
        for (size_t i = 0; i < r->n_config && ok; i++) {
            cJSON *kv = cJSON_CreateObject();
            if (push(cfg, kv, &ok)) {
                add(kv, "key", string_or_null(r->config[i].key), &ok);
                add(kv, "value", string_or_null(r->config[i].value), &ok);
            }
        }
    add(root, "n_samples", make_int(r->n_samples), &ok);
    add(root, "has_runtime", cJSON_CreateBool(r->has_runtime), &ok);
    cJSON *layers = cJSON_CreateArray();
    if (add(root, "layers", layers, &ok))
        for (size_t i = 0; i < r->n_layers && ok; i++)
            push(layers, layer_json(&r->layers[i], &ok), &ok);
    cJSON *findings = cJSON_CreateArray();
    if (add(root, "findings", findings, &ok))
        for (size_t i = 0; i < r->n_findings && ok; i++)
            push(findings, finding_json(&r->findings[i], &ok), &ok);
    cJSON *fidelity = cJSON_CreateArray();
    if (add(root, "fidelity", fidelity, &ok))
        for (size_t i = 0; i < r->n_fidelity && ok; i++) {
            cJSON *o = cJSON_CreateObject();
            if (push(fidelity, o, &ok)) {
                add(o, "decision", string_or_null(r->fidelity[i].decision), &ok);
                add(o, "source", string_or_null(r->fidelity[i].source), &ok);
                add(o, "detail", string_or_null(r->fidelity[i].detail), &ok);
            }
        }
    if (r->sweep.n_candidates > 0) /* absent without a sweep: files of older writers and runs without --sweep agree */
        add(root, "sweep", sweep_json(r, &ok), &ok);
    if (!ok) {
        cJSON_Delete(root);
        return rd_errorf(err, RD_E_NOMEM, "report.json: out of memory");
    }
    *out = root;
    return RD_OK;
}

rd_status rd_report_json_write(const rd_result *r, char **out_text, size_t *out_len, rd_error *err)
{
    *out_text = NULL;
    *out_len = 0;
    cJSON *root;
    rd_status st = rep_json_tree(r, &root, err);
    if (st != RD_OK)
        return st;
    char *raw = cJSON_Print(root);
    cJSON_Delete(root);
    /* names from outside may hold any byte and cJSON copies them as they are: each byte of an invalid UTF-8
       sequence becomes U+FFFD, so the file is always valid UTF-8, and C1 and bidirectional controls are
       written \uHHHH (docs/report-schema.md, "Names") */
    size_t n = 0;
    char *text = raw ? rd_text_json_safe(raw, strlen(raw), &n) : NULL;
    free(raw);
    if (!text)
        return rd_errorf(err, RD_E_NOMEM, "report.json: out of memory");
    /* add the final newline */
    char *withnl = realloc(text, n + 2);
    if (!withnl) {
        free(text);
        return rd_errorf(err, RD_E_NOMEM, "report.json: out of memory");
    }
    withnl[n] = '\n';
    withnl[n + 1] = '\0';
    *out_text = withnl;
    *out_len = n + 1;
    return RD_OK;
}

rd_status rd_report_json_save(const rd_result *r, const char *path, rd_error *err)
{
    return rep_save(r, rd_report_json_write, path, err);
}

/* result.c: lifecycle of the result model (rknn_diag/result.h): init, append, free. */
#include "rknn_diag/reports.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rd_result_init(rd_result *r)
{
    memset(r, 0, sizeof *r);
}

static void layer_fini(rd_layer_result *l)
{
    free(l->name);
    free(l->op_type);
    free(l->npu_op);
    free(l->fused_into);
    free(l->precision);
    free(l->channels.cos);
    free(l->hist.golden);
    free(l->hist.tested);
}

static void finding_fini(rd_finding *f)
{
    free(f->layer);
    free(f->title);
    free(f->evidence);
    free(f->advice);
}

void rd_result_fini(rd_result *r)
{
    if (!r)
        return;
    free(r->tool);
    free(r->model);
    free(r->custom_string);
    for (size_t i = 0; i < r->n_config; i++) {
        free(r->config[i].key);
        free(r->config[i].value);
    }
    free(r->config);
    for (size_t i = 0; i < r->n_layers; i++)
        layer_fini(&r->layers[i]);
    free(r->layers);
    for (size_t i = 0; i < r->n_findings; i++)
        finding_fini(&r->findings[i]);
    free(r->findings);
    for (size_t i = 0; i < r->n_fidelity; i++) {
        free(r->fidelity[i].decision);
        free(r->fidelity[i].source);
        free(r->fidelity[i].detail);
    }
    free(r->fidelity);
    free(r->sweep.objective);
    free(r->sweep.points);
    rd_result_init(r);
}

static rd_status dup_opt(const char *s, char **out, rd_error *err)
{
    *out = NULL;
    if (!s)
        return RD_OK;
    *out = strdup(s);
    return *out ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory copying a string of %zu bytes", strlen(s));
}

rd_status rd_result_set_string(char **dst, const char *value, rd_error *err)
{
    char *copy;
    rd_status st = dup_opt(value, &copy, err);
    if (st != RD_OK)
        return st;
    free(*dst);
    *dst = copy;
    return RD_OK;
}

/* Grows an array of elem-sized items by one slot (doubling); count is not changed. */
static rd_status grow(void **arr, size_t count, size_t elem, rd_error *err)
{
    /* capacity is 8 for counts 1..8, then the next power of two: full exactly at 0, 8, 16, 32, ... */
    if (count != 0 && (count < 8 || (count & (count - 1)) != 0))
        return RD_OK;
    size_t cap = count ? count * 2 : 8;
    if (cap > SIZE_MAX / elem)
        return rd_errorf(err, RD_E_LIMIT, "result has too many entries (%zu)", count);
    void *p = realloc(*arr, cap * elem);
    if (!p)
        return rd_errorf(err, RD_E_NOMEM, "out of memory growing the result to %zu entries", cap);
    *arr = p;
    return RD_OK;
}

void rd_metrics_unknown(rd_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->cos = m->euc = m->euc_rel = m->sqnr_db = m->max_abs = m->mean_abs = NAN;
    m->gain = m->offset = m->sqnr_affine_db = m->err_steps = NAN;
    m->saturated_share = m->zero_share = NAN;
    m->fp16_max_abs = NAN;
    m->degenerate = RD_DEG_NONE;
}

void rd_metric_group_single(rd_metric_group *g, const rd_metrics *m)
{
    memset(g, 0, sizeof *g);
    g->present = true;
    g->mean = *m;
    g->cos_min = g->cos_p5 = m->cos;
    g->worst_sample = 0;
    g->n_samples = 1;
}

rd_status rd_result_add_layer(rd_result *r, const char *name, const char *op_type, rd_layer_result **out_layer,
                              rd_error *err)
{
    if (!name)
        return rd_errorf(err, RD_E_INVAL, "rd_result_add_layer: layer name is NULL");
    rd_status st = grow((void **)&r->layers, r->n_layers, sizeof *r->layers, err);
    if (st != RD_OK)
        return st;
    rd_layer_result *l = &r->layers[r->n_layers];
    memset(l, 0, sizeof *l);
    if ((st = dup_opt(name, &l->name, err)) != RD_OK || (st = dup_opt(op_type, &l->op_type, err)) != RD_OK) {
        layer_fini(l);
        return st;
    }
    for (int g = 0; g < RD_GROUP_COUNT; g++) {
        rd_metrics_unknown(&l->groups[g].mean);
        l->groups[g].cos_min = l->groups[g].cos_p5 = NAN;
        l->groups[g].worst_sample = -1;
    }
    r->n_layers++;
    if (out_layer)
        *out_layer = l;
    return RD_OK;
}

rd_status rd_result_add_finding(rd_result *r, const rd_finding *f, rd_error *err)
{
    rd_status st = grow((void **)&r->findings, r->n_findings, sizeof *r->findings, err);
    if (st != RD_OK)
        return st;
    rd_finding *d = &r->findings[r->n_findings];
    *d = *f;
    d->layer = d->title = d->evidence = d->advice = NULL;
    if ((st = dup_opt(f->layer, &d->layer, err)) != RD_OK || (st = dup_opt(f->title, &d->title, err)) != RD_OK ||
        (st = dup_opt(f->evidence, &d->evidence, err)) != RD_OK ||
        (st = dup_opt(f->advice, &d->advice, err)) != RD_OK) {
        finding_fini(d);
        return st;
    }
    r->n_findings++;
    return RD_OK;
}

rd_status rd_result_set_config(rd_result *r, const char *key, const char *value, rd_error *err)
{
    if (!key)
        return rd_errorf(err, RD_E_INVAL, "rd_result_set_config: key is NULL");
    for (size_t i = 0; i < r->n_config; i++)
        if (strcmp(r->config[i].key, key) == 0)
            return rd_result_set_string(&r->config[i].value, value ? value : "", err);
    rd_status st = grow((void **)&r->config, r->n_config, sizeof *r->config, err);
    if (st != RD_OK)
        return st;
    rd_config_item *c = &r->config[r->n_config];
    c->key = c->value = NULL;
    if ((st = dup_opt(key, &c->key, err)) != RD_OK || (st = dup_opt(value ? value : "", &c->value, err)) != RD_OK) {
        free(c->key);
        free(c->value);
        return st;
    }
    r->n_config++;
    return RD_OK;
}

rd_status rd_result_add_fidelity(rd_result *r, const char *decision, const char *source, const char *detail,
                                 rd_error *err)
{
    if (!decision || !source)
        return rd_errorf(err, RD_E_INVAL, "rd_result_add_fidelity: decision or source is NULL");
    rd_status st = grow((void **)&r->fidelity, r->n_fidelity, sizeof *r->fidelity, err);
    if (st != RD_OK)
        return st;
    rd_fidelity_item *f = &r->fidelity[r->n_fidelity];
    memset(f, 0, sizeof *f);
    if ((st = dup_opt(decision, &f->decision, err)) != RD_OK || (st = dup_opt(source, &f->source, err)) != RD_OK ||
        (st = dup_opt(detail ? detail : "", &f->detail, err)) != RD_OK) {
        free(f->decision);
        free(f->source);
        free(f->detail);
        return st;
    }
    r->n_fidelity++;
    return RD_OK;
}

long rd_result_find_layer(const rd_result *r, const char *name)
{
    for (size_t i = 0; i < r->n_layers; i++)
        if (strcmp(r->layers[i].name, name) == 0)
            return (long)i;
    return -1;
}

const char *rd_degenerate_name(rd_degenerate d)
{
    static const char *const names[] = {
        [RD_DEG_NONE] = "none",           [RD_DEG_BOTH_ZERO] = "both_zero", [RD_DEG_REF_ZERO] = "ref_zero",
        [RD_DEG_TEST_ZERO] = "test_zero", [RD_DEG_CONSTANT] = "constant",   [RD_DEG_NONFINITE] = "nonfinite",
        [RD_DEG_SHAPE] = "shape",
    };
    if ((unsigned)d < sizeof names / sizeof names[0] && names[d])
        return names[d];
    return "unknown";
}

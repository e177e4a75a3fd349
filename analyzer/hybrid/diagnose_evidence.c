/*
 * diagnose_evidence.c: the direct evidence of `hybrid diagnose` (docs/hybrid.md):
 * BatchNormalization statistics against the preprocessed inputs, clipping by the calibrated ranges,
 * weight channel spread.
 */
#include "diagnose_evidence.h"
#include "qcfg_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The only consumer of value v, or -1 when it has none or several. */
static int only_consumer(const rd_model *m, int v)
{
    int found = -1;
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        for (int k = 0; k < ni.n_inputs; k++)
            if (ni.inputs[k] == v) {
                if (found >= 0 && found != (int)i)
                    return -1;
                found = (int)i;
            }
    }
    return found;
}

static const float *f32_vector(const rd_model *m, int v, int64_t n)
{
    if (v < 0)
        return NULL;
    const rd_tensor *t = rd_model_constant(m, (size_t)v);
    if (!t || t->dtype != RD_DT_F32 || rd_tensor_numel(t) != n)
        return NULL;
    return t->data;
}

bool an_diag_bn_find(const rd_model *m, size_t input, an_diag_bn_site *out)
{
    memset(out, 0, sizeof *out);
    int x = rd_model_input(m, input);
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        if (strcmp(ni.op_type, "Conv") != 0 || ni.n_inputs < 2 || ni.inputs[0] != x || ni.n_outputs != 1)
            continue;
        int bn = only_consumer(m, ni.outputs[0]);
        if (bn < 0)
            return false;
        rd_node_info bi;
        rd_model_node(m, (size_t)bn, &bi);
        if (strcmp(bi.op_type, "BatchNormalization") != 0 || bi.n_inputs < 5 || bi.inputs[0] != ni.outputs[0])
            return false;
        rd_value_info wi;
        rd_model_value(m, (size_t)ni.inputs[1], &wi);
        if (wi.rank < 1 || wi.dims[0] < 1)
            return false;
        out->n_ch = wi.dims[0];
        out->mean = f32_vector(m, bi.inputs[3], out->n_ch);
        out->var = f32_vector(m, bi.inputs[4], out->n_ch);
        if (!out->mean || !out->var)
            return false;
        out->epsilon = 1e-5f;
        rd_model_node_attr_float(m, (size_t)bn, "epsilon", &out->epsilon);
        rd_value_info ci;
        rd_model_value(m, (size_t)ni.outputs[0], &ci);
        out->conv_out = ni.outputs[0];
        out->conv_name = ci.name;
        return true;
    }
    return false;
}

typedef struct bn_acc {
    const an_diag_bn_site *site;
    double *sum, *sum2; /* per channel */
    double count;       /* values per channel so far */
    bool seen;
} bn_acc;

/* Accumulates the Conv output, then stops the run: nothing after it is needed. */
static rd_status bn_observe(void *user, const rd_observed *ev, rd_error *err)
{
    bn_acc *a = user;
    if (ev->value != a->site->conv_out)
        return RD_OK;
    const rd_tensor *t = ev->tensor;
    if (t->dtype != RD_DT_F32 || t->rank < 2 || t->dims[1] != a->site->n_ch)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: not a float32 N x %lld x ... tensor", ev->name,
                         (long long)a->site->n_ch);
    int64_t outer = t->dims[0], inner = 1;
    for (int d = 2; d < t->rank; d++)
        inner *= t->dims[d];
    const float *p = t->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t c = 0; c < a->site->n_ch; c++) {
            const float *q = p + (o * a->site->n_ch + c) * inner;
            double s = 0, s2 = 0;
            for (int64_t k = 0; k < inner; k++) {
                s += q[k];
                s2 += (double)q[k] * q[k];
            }
            a->sum[c] += s;
            a->sum2[c] += s2;
        }
    a->count += (double)(outer * inner);
    a->seen = true;
    return rd_errorf(err, RD_E_INVAL, "stop after %s", ev->name);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

rd_status an_diag_bn_fit(rd_model *m, const an_diag_bn_site *site, const rd_tensor *x, size_t n_samples, double *fit,
                         rd_error *err)
{
    *fit = NAN;
    size_t n_in = rd_model_input_count(m), n_ch = (size_t)site->n_ch;
    double *buf = calloc(n_ch * 3, sizeof *buf);
    if (!buf)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    bn_acc a = {.site = site, .sum = buf, .sum2 = buf + n_ch};
    rd_run_options ro = {.observer = bn_observe, .user = &a};
    for (size_t k = 0; k < n_samples; k++) {
        a.seen = false;
        rd_error e = {0};
        rd_status st = rd_model_run(m, &x[k * n_in], n_in, &ro, NULL, 0, &e);
        if (!a.seen) {
            free(buf);
            if (st == RD_OK)
                return rd_errorf(err, RD_E_INVAL, "%s was never computed", site->conv_name);
            *err = e;
            return st;
        }
    }
    /* KL(N(m, s2) || N(mu, v)) per channel; a constant channel gets a floor so the log stays finite
     */
    double *kl = buf + 2 * n_ch;
    size_t used = 0;
    for (size_t c = 0; c < n_ch; c++) {
        double v = (double)site->var[c] + site->epsilon;
        if (!(v > 0) || a.count <= 0)
            continue;
        double mo = a.sum[c] / a.count, s2 = fmax(a.sum2[c] / a.count - mo * mo, 1e-6 * v);
        double d = mo - site->mean[c];
        kl[used++] = 0.5 * (log(v / s2) + (s2 + d * d) / v - 1.0);
    }
    if (used > 0) {
        qsort(kl, used, sizeof *kl, cmp_double);
        *fit = kl[used / 2];
    }
    free(buf);
    return RD_OK;
}

rd_status an_diag_clip_measure(rd_sim *s, const rd_tensor *x, size_t n_samples, size_t n_in, int threads,
                               an_diag_clip *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    const rd_model *g = rd_sim_model(s);
    size_t nv = rd_model_value_count(g), n_out = rd_model_output_count(g);
    double *clip = calloc(nv * 2 + 1, sizeof *clip);
    rd_tensor *outs = calloc(n_out + 1, sizeof *outs);
    rd_status st = clip && outs ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory");
    double *count = clip + nv;
    (void)threads;
    rd_run_options ro = {0}; /* the simulation's pool (rd_sim_set_pool) */
    for (size_t k = 0; k < n_samples && st == RD_OK; k++) {
        st = rd_sim_run(s, &x[k * n_in], n_in, &ro, outs, n_out, err);
        for (size_t o = 0; o < n_out; o++)
            rd_tensor_fini(&outs[o]);
        for (size_t v = 0; v < nv && st == RD_OK; v++) {
            rd_sim_layer_stats ls;
            rd_sim_layer_stats_get(s, (int)v, &ls);
            clip[v] += (double)ls.saturated;
            count[v] += (double)ls.count;
        }
    }
    double all_clip = 0, all_count = 0;
    for (size_t v = 0; v < nv && st == RD_OK; v++) {
        rd_value_info vi;
        rd_model_value(g, v, &vi);
        rd_sim_tensor t;
        if (count[v] <= 0 || rd_sim_tensor_get(s, vi.name, &t, NULL) != RD_OK || !t.materialized ||
            t.precision != RD_PREC_INT8 || vi.producer < 0)
            continue; /* graph inputs are left out: their range is the preprocessing's, not a
                         layer's */
        all_clip += clip[v];
        all_count += count[v];
        double share = clip[v] / count[v];
        if (share > out->worst_share) {
            out->worst_share = share;
            snprintf(out->worst, sizeof out->worst, "%s", vi.name);
        }
    }
    out->share = all_count > 0 ? all_clip / all_count : 0;
    free(clip);
    free(outs);
    return st;
}

rd_status an_diag_range_log2_ratio(const rd_sim *s, const rd_sim *ref, double *out, rd_error *err)
{
    const rd_model *g = rd_sim_model(s);
    size_t nv = rd_model_value_count(g), used = 0;
    *out = NAN;
    double *r = calloc(nv + 1, sizeof *r);
    if (!r)
        return rd_errorf(err, RD_E_NOMEM, "out of memory (the range ratios)");
    for (size_t v = 0; v < nv; v++) {
        rd_value_info vi;
        rd_model_value(g, v, &vi);
        rd_sim_tensor a, b;
        if (vi.producer < 0 || rd_sim_tensor_get(s, vi.name, &a, NULL) != RD_OK || !a.materialized || !a.quantized ||
            rd_sim_tensor_get(ref, vi.name, &b, NULL) != RD_OK || !b.quantized)
            continue;
        if (a.scale > 0 && b.scale > 0)
            r[used++] = log2((double)a.scale / (double)b.scale);
    }
    if (used > 0) {
        qsort(r, used, sizeof *r, cmp_double);
        *out = r[used / 2];
    }
    free(r);
    return RD_OK;
}

rd_status an_diag_weight_spread(rd_sim *s, an_diag_wspread *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    out->worst = NAN;
    const rd_model *g = rd_sim_model(s);
    for (size_t i = 0; i < rd_model_node_count(g); i++) {
        rd_sim_weights sw;
        if (rd_sim_weights_get(s, (int)i, &sw, NULL) != RD_OK)
            continue;
        const rd_tensor *w = rd_model_constant(g, (size_t)sw.value);
        if (!w || w->dtype != RD_DT_F32 || sw.axis < 0 || sw.axis >= w->rank)
            continue;
        int64_t channels = w->dims[sw.axis] * (sw.group > 1 ? sw.group : 1);
        if (channels < 2 || channels > (1 << 20))
            continue;
        rd_sim_weights per_channel = sw;
        per_channel.n_scale = (int)channels;
        float *mx = calloc((size_t)channels, sizeof *mx);
        double *sorted = calloc((size_t)channels, sizeof *sorted);
        rd_error why = {0};
        rd_status st = mx && sorted ? an_weight_channel_max_abs(w, &per_channel, mx, &why)
                                    : rd_errorf(&why, RD_E_NOMEM, "out of memory (the weight channels)");
        if (st == RD_E_NOMEM) { /* a layer the spread would lack */
            free(mx);
            free(sorted);
            if (err)
                *err = why;
            return st;
        }
        if (st == RD_OK) {
            for (int64_t c = 0; c < channels; c++)
                sorted[c] = mx[c];
            qsort(sorted, (size_t)channels, sizeof *sorted, cmp_double);
            double median = sorted[channels / 2];
            double ratio = median > 0 ? sorted[channels - 1] / median : INFINITY;
            out->n_layers++;
            out->n_over += ratio > AN_DIAG_WSPREAD_HIGH;
            if (isnan(out->worst) || ratio > out->worst) {
                rd_node_info ni;
                rd_model_node(g, i, &ni);
                rd_value_info oi;
                rd_model_value(g, (size_t)ni.outputs[0], &oi);
                out->worst = ratio;
                snprintf(out->layer, sizeof out->layer, "%s", oi.name);
            }
        }
        free(mx);
        free(sorted);
    }
    return RD_OK;
}

typedef struct bn_all {
    const rd_model *m;
    int *site_of;                 /* value -> BatchNormalization node reading it, -1 */
    double **sum, **sum2, *count; /* per BatchNormalization node */
} bn_all;

static rd_status bn_all_observe(void *user, const rd_observed *ev, rd_error *err)
{
    (void)err;
    bn_all *a = user;
    int bn = a->site_of[ev->value];
    const rd_tensor *t = ev->tensor;
    if (bn < 0 || !a->sum[bn] || t->dtype != RD_DT_F32 || t->rank < 2)
        return RD_OK;
    rd_node_info bi;
    rd_model_node(a->m, (size_t)bn, &bi);
    rd_value_info mi;
    rd_model_value(a->m, (size_t)bi.inputs[3], &mi);
    int64_t ch = t->dims[1], outer = t->dims[0], inner = 1;
    if (mi.rank != 1 || mi.dims[0] != ch)
        return RD_OK;
    for (int d = 2; d < t->rank; d++)
        inner *= t->dims[d];
    const float *p = t->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t c = 0; c < ch; c++) {
            const float *q = p + (o * ch + c) * inner;
            for (int64_t k = 0; k < inner; k++) {
                a->sum[bn][c] += q[k];
                a->sum2[bn][c] += (double)q[k] * q[k];
            }
        }
    a->count[bn] += (double)(outer * inner);
    return RD_OK;
}

rd_status an_diag_bn_fit_all(rd_model *m, const rd_tensor *x, size_t n_samples, double *fit, size_t *n_layers,
                             rd_error *err)
{
    *fit = NAN;
    *n_layers = 0;
    size_t nn = rd_model_node_count(m), nv = rd_model_value_count(m), n_in = rd_model_input_count(m);
    bn_all a = {.m = m};
    a.site_of = malloc((nv + 1) * sizeof *a.site_of);
    a.sum = calloc(nn + 1, sizeof *a.sum);
    a.sum2 = calloc(nn + 1, sizeof *a.sum2);
    a.count = calloc(nn + 1, sizeof *a.count);
    rd_status st = a.site_of && a.sum && a.sum2 && a.count ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t v = 0; a.site_of && v < nv; v++)
        a.site_of[v] = -1;
    for (size_t i = 0; i < nn && st == RD_OK; i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        if (strcmp(ni.op_type, "BatchNormalization") != 0 || ni.n_inputs < 5 || ni.inputs[0] < 0 || ni.inputs[3] < 0 ||
            ni.inputs[4] < 0)
            continue;
        rd_value_info mi;
        rd_model_value(m, (size_t)ni.inputs[3], &mi);
        if (mi.rank != 1 || mi.dims[0] < 1 || !f32_vector(m, ni.inputs[3], mi.dims[0]) ||
            !f32_vector(m, ni.inputs[4], mi.dims[0]))
            continue;
        a.site_of[ni.inputs[0]] = (int)i;
        a.sum[i] = calloc((size_t)mi.dims[0], sizeof **a.sum);
        a.sum2[i] = calloc((size_t)mi.dims[0], sizeof **a.sum2);
        if (!a.sum[i] || !a.sum2[i])
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    rd_run_options ro = {.observer = bn_all_observe, .user = &a, .observe_inputs = true};
    for (size_t k = 0; k < n_samples && st == RD_OK; k++)
        st = rd_model_run(m, &x[k * n_in], n_in, &ro, NULL, 0, err);
    double total = 0;
    for (size_t i = 0; i < nn && st == RD_OK; i++) {
        if (!a.sum || !a.sum[i] || a.count[i] <= 0)
            continue;
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        rd_value_info mi;
        rd_model_value(m, (size_t)ni.inputs[3], &mi);
        an_diag_bn_site site = {.mean = f32_vector(m, ni.inputs[3], mi.dims[0]),
                                .var = f32_vector(m, ni.inputs[4], mi.dims[0]),
                                .epsilon = 1e-5f,
                                .n_ch = mi.dims[0]};
        rd_model_node_attr_float(m, i, "epsilon", &site.epsilon);
        double *kl = calloc((size_t)site.n_ch, sizeof *kl);
        if (!kl) {
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
            break;
        }
        size_t used = 0;
        for (int64_t c = 0; c < site.n_ch; c++) {
            double var = (double)site.var[c] + site.epsilon;
            if (!(var > 0))
                continue;
            double mo = a.sum[i][c] / a.count[i], s2 = fmax(a.sum2[i][c] / a.count[i] - mo * mo, 1e-6 * var);
            double d = mo - site.mean[c];
            kl[used++] = 0.5 * (log(var / s2) + (s2 + d * d) / var - 1.0);
        }
        if (used > 0) {
            qsort(kl, used, sizeof *kl, cmp_double);
            total += kl[used / 2];
            (*n_layers)++;
        }
        free(kl);
    }
    if (st == RD_OK && *n_layers > 0)
        *fit = total / (double)*n_layers;
    for (size_t i = 0; i < nn && a.sum; i++) {
        free(a.sum[i]);
        free(a.sum2[i]);
    }
    free(a.site_of);
    free(a.sum);
    free(a.sum2);
    free(a.count);
    return st;
}

/*
 * metrics.c: the per-layer metrics of docs/metrics.md in double precision, in three passes over the two
 * tensors (ranges and classes, sums, residual of the affine fit), and their aggregation over samples.
 * Workload: once per layer per sample per group; linear in the tensor size, no allocation.
 */
#include "metrics.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* scipy.spatial.distance.cosine, as RKNN uses it: cos = 1 - clip(1 - uv / sqrt(uu * vv), 0, 2). */
static double rknn_cos(double uv, double uu, double vv)
{
    double den = sqrt(uu * vv);
    if (!(den > 0) || isnan(uv))
        return NAN; /* 0/0 or a NaN: numpy prints nan */
    double dist = 1.0 - uv / den;
    if (isnan(dist))
        return NAN; /* inf/inf */
    if (dist < 0)
        dist = 0;
    if (dist > 2)
        dist = 2;
    return 1.0 - dist;
}

void an_metrics_shape_mismatch(int64_t n_ref, int64_t n_test, rd_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->cos = m->euc = m->euc_rel = m->sqnr_db = m->max_abs = m->mean_abs = NAN;
    m->gain = m->offset = m->sqnr_affine_db = m->err_steps = m->saturated_share = m->zero_share = NAN;
    m->fp16_max_abs = NAN;
    m->count = n_ref < n_test ? n_ref : n_test;
    m->degenerate = RD_DEG_SHAPE;
}

void an_metrics_compute(const float *ref, const float *test, int64_t n, const an_metrics_ctx *q, rd_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->count = n;

    /* pass 1: finiteness, zero and constant tensors, means */
    bool finite = true, r_zero = true, t_zero = true, r_const = true, t_const = true;
    double sum_r = 0, sum_t = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], t = test[i];
        finite &= isfinite(r) && isfinite(t);
        r_zero &= r == 0;
        t_zero &= t == 0;
        r_const &= ref[i] == ref[0];
        t_const &= test[i] == test[0];
        sum_r += r;
        sum_t += t;
    }
    double mr = n ? sum_r / (double)n : 0, mt = n ? sum_t / (double)n : 0;

    /* pass 2: products, errors, centred moments, int8 and zero statistics */
    double uu = 0, vv = 0, uv = 0, ee = 0, abs_sum = 0, abs_max = 0, sxx = 0, sxy = 0;
    int64_t n_sat = 0, n_ref_nonzero = 0, n_zeroed = 0;
    bool quant = q && q->quantized && q->scale > 0;
    double lo = 0, hi = 0, tol = 0;
    if (quant) {
        int qmin = q->qmin || q->qmax ? q->qmin : -128, qmax = q->qmin || q->qmax ? q->qmax : 127;
        lo = q->scale * (qmin - q->zero_point);
        hi = q->scale * (qmax - q->zero_point);
        tol = q->scale * 1e-3; /* codes are a scale apart: anything this close is the limit code */
    }
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], t = test[i], e = r - t;
        uu += r * r;
        vv += t * t;
        uv += r * t;
        ee += e * e;
        abs_sum += fabs(e);
        if (fabs(e) > abs_max || isnan(e))
            abs_max = isnan(abs_max) ? abs_max : fabs(e);
        sxx += (r - mr) * (r - mr);
        sxy += (r - mr) * (t - mt);
        /* saturated: held at a code limit while the reference lies beyond it by more than half a step (a
           ReLU's zeros sit at the lowest code without being clamped) */
        if (quant &&
            ((fabs(t - lo) <= tol && r < lo - 0.5 * q->scale) || (fabs(t - hi) <= tol && r > hi + 0.5 * q->scale)))
            n_sat++;
        if (r != 0) {
            n_ref_nonzero++;
            n_zeroed += t == 0;
        }
    }
    m->cos = rknn_cos(uv, uu, vv);
    m->euc = sqrt(ee);
    m->euc_rel = uu > 0 ? m->euc / sqrt(uu) : ee == 0 ? 0 : isnan(ee) ? NAN : INFINITY;
    m->sqnr_db = isnan(ee) || isnan(uu) ? NAN : ee == 0 ? INFINITY : uu == 0 ? -INFINITY : 10 * log10(uu / ee);
    m->max_abs = abs_max;
    m->mean_abs = n ? abs_sum / (double)n : 0;

    /* pass 3: residual of the least-squares fit t ~ gain*r + offset (undefined for a constant reference) */
    if (sxx > 0 && isfinite(sxx) && isfinite(sxy)) {
        m->gain = sxy / sxx;
        m->offset = mt - m->gain * mr;
        double rss = 0;
        for (int64_t i = 0; i < n; i++) {
            double d = test[i] - (m->gain * ref[i] + m->offset);
            rss += d * d;
        }
        double signal = 0; /* power of the fitted signal gain*r + offset */
        for (int64_t i = 0; i < n; i++) {
            double f = m->gain * ref[i] + m->offset;
            signal += f * f;
        }
        m->sqnr_affine_db = rss == 0 ? INFINITY : signal == 0 ? -INFINITY : 10 * log10(signal / rss);
    } else {
        m->gain = m->offset = m->sqnr_affine_db = NAN;
    }

    m->err_steps = quant && n ? sqrt(ee / (double)n) / q->scale : NAN;
    m->saturated_share = quant && n ? (double)n_sat / (double)n : 0;
    m->zero_share = n_ref_nonzero ? (double)n_zeroed / (double)n_ref_nonzero : 0;
    m->fp16_overflow = q ? q->fp16_overflow : 0;
    m->fp16_max_abs = q ? q->fp16_max_abs : 0;

    if (!finite) {
        /* how many, on which side; shares counted past NaN/Inf would read as ordinary numbers */
        for (int64_t i = 0; i < n; i++) {
            m->nan += isnan(test[i]);
            m->inf += isinf(test[i]);
            m->ref_nan += isnan(ref[i]);
            m->ref_inf += isinf(ref[i]);
        }
        m->saturated_share = m->zero_share = NAN;
        m->degenerate = RD_DEG_NONFINITE;
    } else if (r_zero && t_zero) {
        m->degenerate = RD_DEG_BOTH_ZERO;
    } else if (r_zero) {
        m->degenerate = RD_DEG_REF_ZERO;
    } else if (t_zero) {
        m->degenerate = RD_DEG_TEST_ZERO;
    } else if (r_const && t_const) {
        m->degenerate = RD_DEG_CONSTANT;
    } else {
        m->degenerate = RD_DEG_NONE;
    }
}

double an_cos_effective(const rd_metrics *m)
{
    switch (m->degenerate) {
    case RD_DEG_BOTH_ZERO:
        return 1.0;
    case RD_DEG_REF_ZERO:
    case RD_DEG_TEST_ZERO:
        return 0.0;
    case RD_DEG_NONFINITE:
    case RD_DEG_SHAPE:
        return NAN;
    default:
        return m->cos;
    }
}

/* ---- aggregation over samples ---- */

void an_group_acc_init(an_group_acc *acc)
{
    memset(acc, 0, sizeof *acc);
}

int an_ranked_by_cos(const void *pa, const void *pb)
{
    const an_ranked *a = pa, *b = pb;
    if (a->cos != b->cos)
        return a->cos < b->cos ? -1 : 1;
    return a->layer < b->layer ? -1 : (a->layer > b->layer);
}

void an_group_acc_fini(an_group_acc *acc)
{
    free(acc->samples);
    free(acc->sample_ids);
    an_group_acc_init(acc);
}

rd_status an_metric_group_add(an_group_acc *acc, const rd_metrics *m, int sample, rd_error *err)
{
    if (acc->n == acc->cap) {
        size_t cap = acc->cap ? acc->cap * 2 : 8;
        rd_metrics *s = realloc(acc->samples, cap * sizeof *s);
        if (!s)
            return rd_errorf(err, RD_E_NOMEM, "out of memory aggregating %zu samples", cap);
        acc->samples = s;
        int *ids = realloc(acc->sample_ids, cap * sizeof *ids);
        if (!ids)
            return rd_errorf(err, RD_E_NOMEM, "out of memory aggregating %zu samples", cap);
        acc->sample_ids = ids;
        acc->cap = cap;
    }
    acc->samples[acc->n] = *m;
    acc->sample_ids[acc->n] = sample;
    acc->n++;
    return RD_OK;
}

void an_group_acc_sort(an_group_acc *acc)
{
    /* insertion sort, stable: parts arrive nearly in order (a merge appends shard after shard) */
    for (size_t i = 1; i < acc->n; i++) {
        rd_metrics m = acc->samples[i];
        int id = acc->sample_ids[i];
        size_t j = i;
        for (; j > 0 && acc->sample_ids[j - 1] > id; j--) {
            acc->samples[j] = acc->samples[j - 1];
            acc->sample_ids[j] = acc->sample_ids[j - 1];
        }
        acc->samples[j] = m;
        acc->sample_ids[j] = id;
    }
}

/* NaN sorts first: it is the worst cosine. */
static int cmp_cos(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (isnan(x) || isnan(y))
        return isnan(y) - isnan(x);
    return (x > y) - (x < y);
}

/* Mean of the dB values that are finite; when none is, the first value (all +inf: identical). A NaN in
   any sample makes it NaN: the others' mean would read as the layer's. */
static double mean_db(const rd_metrics *s, size_t n, size_t offset)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double v = *(const double *)((const char *)&s[i] + offset);
        if (isnan(v))
            return NAN;
        if (isfinite(v)) {
            sum += v;
            k++;
        }
    }
    return k ? sum / (double)k : *(const double *)((const char *)&s[0] + offset);
}

bool an_metric_group_finish(const an_group_acc *acc, rd_metric_group *out)
{
    memset(out, 0, sizeof *out);
    out->worst_sample = -1;
    if (acc->n == 0) {
        out->cos_min = out->cos_p5 = NAN;
        return true;
    }
    size_t n = acc->n;
    const rd_metrics *s = acc->samples;
    rd_metrics *m = &out->mean;
    *m = s[0];
#define MEAN(field)                       \
    do {                                  \
        double sum_ = 0;                  \
        for (size_t i_ = 0; i_ < n; i_++) \
            sum_ += s[i_].field;          \
        m->field = sum_ / (double)n;      \
    } while (0)
    MEAN(cos);
    MEAN(euc);
    MEAN(euc_rel);
    MEAN(max_abs);
    MEAN(mean_abs);
    MEAN(gain);
    MEAN(offset);
    MEAN(err_steps);
    MEAN(saturated_share);
    MEAN(zero_share);
#undef MEAN
    m->sqnr_db = mean_db(s, n, offsetof(rd_metrics, sqnr_db));
    m->sqnr_affine_db = mean_db(s, n, offsetof(rd_metrics, sqnr_affine_db));
    m->degenerate = RD_DEG_NONE;
    for (size_t i = 0; i < n; i++) {
        if (s[i].fp16_overflow > m->fp16_overflow)
            m->fp16_overflow = s[i].fp16_overflow;
        if (s[i].fp16_max_abs > m->fp16_max_abs)
            m->fp16_max_abs = s[i].fp16_max_abs;
        m->nan = s[i].nan > m->nan ? s[i].nan : m->nan;
        m->inf = s[i].inf > m->inf ? s[i].inf : m->inf;
        m->ref_nan = s[i].ref_nan > m->ref_nan ? s[i].ref_nan : m->ref_nan;
        m->ref_inf = s[i].ref_inf > m->ref_inf ? s[i].ref_inf : m->ref_inf;
        if (m->degenerate == RD_DEG_NONE)
            m->degenerate = s[i].degenerate;
    }

    double *cos = malloc(n * sizeof *cos);
    size_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        double c = an_cos_effective(&s[i]), w = an_cos_effective(&s[worst]);
        if (cmp_cos(&c, &w) < 0)
            worst = i;
        if (cos)
            cos[i] = c;
    }
    out->cos_min = an_cos_effective(&s[worst]);
    out->worst_sample = acc->sample_ids[worst];
    if (s[worst].degenerate != RD_DEG_NONE)
        m->degenerate = s[worst].degenerate;
    if (cos) {
        qsort(cos, n, sizeof *cos, cmp_cos);
        size_t rank = (size_t)ceil(0.05 * (double)n); /* nearest rank, 1-based */
        out->cos_p5 = cos[rank ? rank - 1 : 0];
        free(cos);
    } else {
        return false; /* no percentile: a figure in its place would be a wrong one in the report */
    }
    out->present = true;
    out->n_samples = (int)n;
    return true;
}

/* ---- per-channel cosine and histograms ---- */

static double cos_effective_sums(double uv, double uu, double vv)
{
    if (!isfinite(uv) || !isfinite(uu) || !isfinite(vv))
        return NAN;
    if (uu == 0 && vv == 0)
        return 1.0;
    if (uu == 0 || vv == 0)
        return 0.0;
    return rknn_cos(uv, uu, vv);
}

rd_status an_channel_cos(const float *ref, const float *test, int rank, const int64_t *dims, rd_channel_cos *out,
                         rd_error *err)
{
    out->cos = NULL;
    out->n = 0;
    int64_t outer = 1, ch = 1, inner = 1;
    if (rank >= 2) {
        outer = dims[0];
        ch = dims[1];
        for (int k = 2; k < rank; k++)
            inner *= dims[k];
    } else if (rank == 1) {
        inner = dims[0];
    }
    if (ch <= 0)
        return RD_OK;
    double *acc = calloc((size_t)ch * 3, sizeof *acc);
    if (!acc)
        return rd_errorf(err, RD_E_NOMEM, "out of memory for %lld channel cosines", (long long)ch);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t c = 0; c < ch; c++) {
            const float *r = ref + (o * ch + c) * inner, *t = test + (o * ch + c) * inner;
            double *a = acc + 3 * c;
            for (int64_t k = 0; k < inner; k++) {
                a[0] += (double)r[k] * t[k];
                a[1] += (double)r[k] * r[k];
                a[2] += (double)t[k] * t[k];
            }
        }
    for (int64_t c = 0; c < ch; c++)
        acc[c] = cos_effective_sums(acc[3 * c], acc[3 * c + 1], acc[3 * c + 2]); /* c <= 3c: in place */
    double *shrunk = realloc(acc, (size_t)ch * sizeof *acc);
    out->cos = shrunk ? shrunk : acc;
    out->n = (size_t)ch;
    return RD_OK;
}

rd_status an_histogram(const float *ref, const float *test, int64_t n, size_t n_bins, rd_histogram *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    if (n_bins == 0 || n_bins > ((size_t)1 << 20))
        return rd_errorf(err, RD_E_INVAL, "histogram: %zu bins (1 to 1048576 expected)", n_bins);
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        if (isfinite(ref[i])) {
            lo = fmin(lo, ref[i]);
            hi = fmax(hi, ref[i]);
        }
        if (isfinite(test[i])) {
            lo = fmin(lo, test[i]);
            hi = fmax(hi, test[i]);
        }
    }
    if (lo > hi)
        lo = hi = 0; /* nothing finite */
    if (lo == hi) {
        double half = lo == 0 ? 0.5 : fabs(lo) * 0.5;
        lo -= half;
        hi += half;
    }
    out->golden = calloc(n_bins, sizeof *out->golden);
    out->tested = calloc(n_bins, sizeof *out->tested);
    if (!out->golden || !out->tested) {
        free(out->golden);
        free(out->tested);
        memset(out, 0, sizeof *out);
        return rd_errorf(err, RD_E_NOMEM, "out of memory for a %zu-bin histogram", n_bins);
    }
    out->lo = lo;
    out->hi = hi;
    out->n_bins = n_bins;
    double k = (double)n_bins / (hi - lo);
    for (int64_t i = 0; i < n; i++) {
        const float v[2] = {ref[i], test[i]};
        uint64_t *dst[2] = {out->golden, out->tested};
        for (int j = 0; j < 2; j++) {
            if (!isfinite(v[j]))
                continue;
            double b = (v[j] - lo) * k;
            size_t bin = b <= 0 ? 0 : b >= (double)n_bins ? n_bins - 1 : (size_t)b;
            dst[j][bin]++;
        }
    }
    return RD_OK;
}

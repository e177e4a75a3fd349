/* cli_model_args.c: --input, --input-shape and per-tensor statistics shared by commands. */
#include "cli_model_args.h"

#include <errno.h>
#include <math.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rd_status an_parse_input_shape(const char *text, an_name_buf *names, rd_input_shape *shapes, size_t *n, rd_error *err)
{
    const char *eq = strrchr(text, '=');
    if (!eq || eq == text)
        return rd_errorf(err, RD_E_USAGE, "--input-shape expects NAME=D0,D1,... (got '%s')", text);
    if (*n >= AN_MAX_INPUTS)
        return rd_errorf(err, RD_E_USAGE, "too many --input-shape options (at most %d)", AN_MAX_INPUTS);
    if ((size_t)(eq - text) >= sizeof names[*n].name)
        return rd_errorf(err, RD_E_USAGE, "--input-shape: input name too long");
    rd_input_shape *s = &shapes[*n];
    memset(s, 0, sizeof *s);
    snprintf(names[*n].name, sizeof names[*n].name, "%.*s", (int)(eq - text), text);
    s->name = names[*n].name;
    const char *p = eq + 1;
    while (*p) {
        if (s->rank == RD_MAX_RANK)
            return rd_errorf(err, RD_E_USAGE, "--input-shape %s: more than %d dims", text, RD_MAX_RANK);
        char *end = NULL;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || end == p || v < 0 || (*end && *end != ',' && *end != 'x'))
            return rd_errorf(err, RD_E_USAGE, "--input-shape %s: '%s' is not a list of non-negative integers", text,
                             eq + 1);
        s->dims[s->rank++] = v;
        p = *end ? end + 1 : end;
    }
    (*n)++;
    return RD_OK;
}

rd_status an_parse_named_file(const char *text, an_name_buf *name_buf, const char **name, const char **file,
                              rd_error *err)
{
    const char *eq = strchr(text, '=');
    if (!eq) {
        *name = NULL;
        *file = text;
        return RD_OK;
    }
    if (eq == text || eq[1] == '\0')
        return rd_errorf(err, RD_E_USAGE, "--input expects NAME=FILE.npy (got '%s')", text);
    if ((size_t)(eq - text) >= sizeof name_buf->name)
        return rd_errorf(err, RD_E_USAGE, "--input: input name too long");
    snprintf(name_buf->name, sizeof name_buf->name, "%.*s", (int)(eq - text), text);
    *name = name_buf->name;
    *file = eq + 1;
    return RD_OK;
}

rd_status an_load_graph_inputs(const rd_model *m, const char *const *names, const char *const *files, size_t n_given,
                               rd_tensor *tensors, rd_error *err)
{
    size_t n_in = rd_model_input_count(m);
    for (size_t k = 0; k < n_in; k++)
        memset(&tensors[k], 0, sizeof tensors[k]);
    /* every named input must exist */
    for (size_t g = 0; g < n_given; g++) {
        if (!names[g])
            continue;
        bool found = false;
        for (size_t k = 0; k < n_in; k++) {
            rd_value_info vi;
            rd_model_value(m, (size_t)rd_model_input(m, k), &vi);
            if (strcmp(vi.name, names[g]) == 0)
                found = true;
        }
        if (!found)
            return rd_errorf(err, RD_E_USAGE, "--input names '%s', which is not a graph input", names[g]);
    }
    size_t positional = 0;
    for (size_t k = 0; k < n_in; k++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, k), &vi);
        const char *file = NULL;
        for (size_t g = 0; g < n_given && !file; g++)
            if (names[g] && strcmp(names[g], vi.name) == 0)
                file = files[g];
        if (!file) { /* next unnamed file, in graph input order */
            size_t seen = 0;
            for (size_t g = 0; g < n_given && !file; g++)
                if (!names[g] && seen++ == positional) {
                    file = files[g];
                    positional++;
                }
        }
        if (!file) {
            for (size_t j = 0; j < k; j++)
                rd_tensor_fini(&tensors[j]);
            return rd_errorf(err, RD_E_USAGE, "no --input given for graph input '%s' (use --input %s=FILE.npy)",
                             vi.name, vi.name);
        }
        /* the graph tensor exactly as stored: a file of another dtype or shape is refused on its header */
        char what[300];
        snprintf(what, sizeof what, "graph input '%s'", vi.name);
        rd_npy_expect want = {.dtype = vi.dtype, .rank = vi.rank, .what = what};
        for (int d = 0; d < vi.rank; d++) /* a symbolic dim takes any size, as the executor allows */
            want.dims[d] = vi.dims[d] >= 0 && !vi.dim_params[d] ? vi.dims[d] : -1;
        rd_status st = rd_npy_load_expect(file, &want, &tensors[k], err);
        if (st != RD_OK) {
            for (size_t j = 0; j < k; j++)
                rd_tensor_fini(&tensors[j]);
            return st;
        }
    }
    return RD_OK;
}

/*
 * One branch-free pass over a span, sixteen lanes at a time: lane j keeps the smallest, the largest and the
 * sum in double of the elements i = j mod 16 in order; the lanes are then folded in order and the last
 * elements added one by one. A fixed order, so the figures depend on nothing but the data, and the vector and
 * portable paths give the same bits. x < lo ? x : lo is exactly vminps (NaN keeps lo), so both ignore NaN
 * alike. Sixteen lanes so that AVX's four-double accumulators form four independent chains of additions (eight
 * lanes in them would make two, each waiting on the adder's latency).
 */
enum { STATS_LANES = 16 };

typedef struct stats_lanes {
    float lo[STATS_LANES], hi[STATS_LANES];
    double sum[STATS_LANES];
} stats_lanes;

/* The lanes over v[0 .. k) for the largest k <= n that is a multiple of the lanes; returns k. */
static int64_t lanes_portable(const float *v, int64_t n, stats_lanes *l)
{
    int64_t k = 0;
    for (; k + STATS_LANES <= n; k += STATS_LANES)
        for (int j = 0; j < STATS_LANES; j++) {
            const float x = v[k + j];
            l->lo[j] = x < l->lo[j] ? x : l->lo[j];
            l->hi[j] = x > l->hi[j] ? x : l->hi[j];
            l->sum[j] += x;
        }
    return k;
}

#if defined(__x86_64__) || defined(__i386__)
#define STATS_HAVE_AVX 1
__attribute__((target("avx"))) static int64_t lanes_avx(const float *v, int64_t n, stats_lanes *l)
{
    __m256 lo0 = _mm256_loadu_ps(l->lo), lo1 = _mm256_loadu_ps(l->lo + 8);
    __m256 hi0 = _mm256_loadu_ps(l->hi), hi1 = _mm256_loadu_ps(l->hi + 8);
    __m256d s0 = _mm256_loadu_pd(l->sum), s1 = _mm256_loadu_pd(l->sum + 4), s2 = _mm256_loadu_pd(l->sum + 8),
            s3 = _mm256_loadu_pd(l->sum + 12);
    int64_t k = 0;
    for (; k + STATS_LANES <= n; k += STATS_LANES) {
        const __m256 x0 = _mm256_loadu_ps(v + k), x1 = _mm256_loadu_ps(v + k + 8);
        lo0 = _mm256_min_ps(x0, lo0);
        lo1 = _mm256_min_ps(x1, lo1);
        hi0 = _mm256_max_ps(x0, hi0);
        hi1 = _mm256_max_ps(x1, hi1);
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(x0)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(x0, 1)));
        s2 = _mm256_add_pd(s2, _mm256_cvtps_pd(_mm256_castps256_ps128(x1)));
        s3 = _mm256_add_pd(s3, _mm256_cvtps_pd(_mm256_extractf128_ps(x1, 1)));
    }
    _mm256_storeu_ps(l->lo, lo0);
    _mm256_storeu_ps(l->lo + 8, lo1);
    _mm256_storeu_ps(l->hi, hi0);
    _mm256_storeu_ps(l->hi + 8, hi1);
    _mm256_storeu_pd(l->sum, s0);
    _mm256_storeu_pd(l->sum + 4, s1);
    _mm256_storeu_pd(l->sum + 8, s2);
    _mm256_storeu_pd(l->sum + 12, s3);
    return k;
}
#endif

void an_stats_span(const float *v, int64_t n, bool vector, float *lo, float *hi, double *sum)
{
    stats_lanes l;
    for (int j = 0; j < STATS_LANES; j++) {
        l.lo[j] = INFINITY;
        l.hi[j] = -INFINITY;
        l.sum[j] = 0;
    }
    int64_t k = -1;
#ifdef STATS_HAVE_AVX
    if (vector && __builtin_cpu_supports("avx"))
        k = lanes_avx(v, n, &l);
#else
    (void)vector;
#endif
    if (k < 0)
        k = lanes_portable(v, n, &l);
    *lo = INFINITY;
    *hi = -INFINITY;
    *sum = 0;
    for (int j = 0; j < STATS_LANES; j++) {
        *lo = l.lo[j] < *lo ? l.lo[j] : *lo;
        *hi = l.hi[j] > *hi ? l.hi[j] : *hi;
        *sum += l.sum[j];
    }
    for (; k < n; k++) {
        *lo = v[k] < *lo ? v[k] : *lo;
        *hi = v[k] > *hi ? v[k] : *hi;
        *sum += v[k];
    }
}

/* A span's smallest, largest and sum, NaN ignored by the comparisons (an Inf or NaN sum sends the caller to
   the careful pass). */
typedef struct span_stats {
    float lo, hi;
    double sum;
} span_stats;

static span_stats span_pass(const float *v, int64_t n)
{
    span_stats r;
    an_stats_span(v, n, true, &r.lo, &r.hi, &r.sum);
    return r;
}

/* A large tensor is cut into at most STATS_MAX_SPANS spans of at least STATS_MIN_SPAN elements, by its size
   alone, and the spans' results are folded in order: the same figures for any thread count. */
enum { STATS_MIN_SPAN = 16384, STATS_MAX_SPANS = 256 };

typedef struct stats_job {
    const float *v;
    int64_t n, span;
    span_stats part[STATS_MAX_SPANS];
} stats_job;

static void stats_span_task(void *arg, int64_t task, int worker)
{
    (void)worker;
    stats_job *job = arg;
    const int64_t first = task * job->span;
    const int64_t len = job->n - first < job->span ? job->n - first : job->span;
    job->part[task] = span_pass(job->v + first, len);
}

/* The careful pass when NaN or Inf showed up: counts them, the mean of the finite values. */
static void stats_nonfinite(const float *v, int64_t n, an_tensor_stats *s)
{
    float lo = INFINITY, hi = -INFINITY;
    double sum = 0;
    int64_t finite = 0;
    for (int64_t i = 0; i < n; i++) {
        float x = v[i];
        if (isnan(x)) {
            s->n_nan++;
            continue;
        }
        if (isinf(x))
            s->n_inf++;
        else {
            sum += x;
            finite++;
        }
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    s->min = lo;
    s->max = hi;
    s->mean = finite ? sum / (double)finite : NAN;
    if (s->n_nan == n)
        s->min = s->max = NAN;
}

static void stats_f32(const float *v, int64_t n, rd_pool *pool, an_tensor_stats *s)
{
    stats_job job = {.v = v, .n = n, .span = n};
    int64_t spans = 1;
    if (n > STATS_MIN_SPAN) {
        spans = (n + STATS_MIN_SPAN - 1) / STATS_MIN_SPAN;
        spans = spans < STATS_MAX_SPANS ? spans : STATS_MAX_SPANS;
        job.span = ((n + spans - 1) / spans + STATS_LANES - 1) / STATS_LANES * STATS_LANES; /* whole lanes */
        spans = (n + job.span - 1) / job.span;
    }
    rd_pool_for(pool, spans, stats_span_task, &job);
    span_stats all = {INFINITY, -INFINITY, 0};
    for (int64_t i = 0; i < spans; i++) {
        all.lo = job.part[i].lo < all.lo ? job.part[i].lo : all.lo;
        all.hi = job.part[i].hi > all.hi ? job.part[i].hi : all.hi;
        all.sum += job.part[i].sum;
    }
    if (!(isfinite(all.sum) && isfinite(all.lo) && isfinite(all.hi))) {
        stats_nonfinite(v, n, s);
        return;
    }
    s->min = all.lo;
    s->max = all.hi;
    s->mean = n ? all.sum / (double)n : NAN;
    if (n == 0)
        s->min = s->max = NAN;
}

void an_tensor_stats_compute(const rd_tensor *t, rd_pool *pool, an_tensor_stats *s)
{
    memset(s, 0, sizeof *s);
    int64_t n = rd_tensor_numel(t);
    s->n = n;
    if (t->dtype == RD_DT_F32) {
        stats_f32(t->data, n, pool, s);
        return;
    }
    rd_tensor f;
    if (rd_tensor_to_f32(&f, t, NULL) != RD_OK) {
        s->min = s->max = s->mean = NAN;
        return;
    }
    stats_f32(f.data, n, pool, s);
    rd_tensor_fini(&f);
}

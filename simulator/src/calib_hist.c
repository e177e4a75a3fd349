/*
 * calib_hist.c: folding activations into per-tensor statistics, the hot loops of calibration.
 *
 * Each call sees one tensor once and keeps nothing of it. Results are exact and order-free (min, max,
 * integer counts), so merging workers in any order gives the same numbers.
 */
#include "calib_internal.h"

#include <math.h>

void sim_calib_stat_init(calib_stat *st)
{
    st->min = INFINITY;
    st->max = -INFINITY;
    st->seen = false;
}

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

/* v < m ? v : m lane by lane: false for a NaN v, which is thus skipped (GCC/clang vector extensions) */
static inline v4f vmin(v4f v, v4f m)
{
    v4i lt = v < m;
    return (v4f)(((v4i)v & lt) | ((v4i)m & ~lt));
}

static inline v4f vmax(v4f v, v4f m)
{
    v4i gt = v > m;
    return (v4f)(((v4i)v & gt) | ((v4i)m & ~gt));
}

void sim_calib_fold_range(calib_stat *st, const float *x, size_t n)
{
    /* 2 x 4 lanes; which of -0 and +0 a lane keeps depends on order: calib.c turns -0 into +0 after merging */
    v4f mn0, mx0, mn1, mx1;
    for (int k = 0; k < 4; k++) {
        mn0[k] = mn1[k] = st->min;
        mx0[k] = mx1[k] = st->max;
    }
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        v4f a, b;
        memcpy(&a, x + i, sizeof a);
        memcpy(&b, x + i + 4, sizeof b);
        mn0 = vmin(a, mn0);
        mx0 = vmax(a, mx0);
        mn1 = vmin(b, mn1);
        mx1 = vmax(b, mx1);
    }
    float lo = st->min, hi = st->max;
    for (; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    for (int k = 0; k < 4; k++) {
        lo = mn0[k] < lo ? mn0[k] : lo;
        lo = mn1[k] < lo ? mn1[k] : lo;
        hi = mx0[k] > hi ? mx0[k] : hi;
        hi = mx1[k] > hi ? mx1[k] : hi;
    }
    st->min = lo;
    st->max = hi;
    st->seen = true;
}

/*
 * The bin of x: one expression shared by both functions below, so a value never changes bin. -1 for NaN
 * and for exact zeros: int8 represents 0 exactly whatever the range (it always contains 0 and the zero
 * point is an integer), so zeros carry no error, and the spike of a ReLU output at 0 would otherwise
 * dominate KL's first level (docs/calibration.md).
 */
static inline int bin_of(float x, float amax, float inv)
{
    float f = (x + amax) * inv;
    f = f > 0.0f ? f : 0.0f; /* also catches -inf */
    f = f < (float)(CALIB_HIST_BINS - 1) ? f : (float)(CALIB_HIST_BINS - 1);
    return x == x && x != 0.0f ? (int)f : -1;
}

int sim_calib_bin(float x, float amax)
{
    return bin_of(x, amax, (float)CALIB_HIST_BINS / (2.0f * amax));
}

void sim_calib_fold_hist(uint64_t *hist, float amax, const float *x, size_t n)
{
    if (!(amax > 0.0f)) /* an all-zero tensor: nothing to count */
        return;
    /* bins of a block first (a loop the compiler vectorises), then the counts (scattered, scalar) */
    const float inv = (float)CALIB_HIST_BINS / (2.0f * amax);
    int idx[256];
    for (size_t i = 0; i < n; i += 256) {
        size_t c = n - i < 256 ? n - i : 256;
        for (size_t j = 0; j < c; j++)
            idx[j] = bin_of(x[i + j], amax, inv);
        for (size_t j = 0; j < c; j++)
            if (idx[j] >= 0)
                hist[idx[j]]++;
    }
}

void sim_calib_stat_merge(calib_stat *dst, const calib_stat *src)
{
    if (!src->seen)
        return;
    dst->min = src->min < dst->min ? src->min : dst->min;
    dst->max = src->max > dst->max ? src->max : dst->max;
    dst->seen = true;
}

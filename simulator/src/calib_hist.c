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

void sim_calib_fold_range(calib_stat *st, const float *x, size_t n)
{
    /* written as selects so that the compiler can use vector min/max; NaN compares false and is skipped */
    float mn = st->min, mx = st->max;
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    st->min = mn;
    st->max = mx;
    st->seen = true;
}

/* The bin of x: one expression shared by both functions below, so a value never changes bin. NaN: -1. */
static inline int bin_of(float x, float amax, float inv)
{
    float f = (x + amax) * inv;
    f = f > 0.0f ? f : 0.0f; /* also catches -inf */
    f = f < (float)(CALIB_HIST_BINS - 1) ? f : (float)(CALIB_HIST_BINS - 1);
    return x == x ? (int)f : -1;
}

int sim_calib_bin(float x, float amax)
{
    return bin_of(x, amax, (float)CALIB_HIST_BINS / (2.0f * amax));
}

void sim_calib_fold_hist(uint64_t *hist, float amax, const float *x, size_t n)
{
    if (!(amax > 0.0f)) { /* an all-zero tensor: everything in the bin just above 0 */
        hist[CALIB_HIST_BINS / 2] += n;
        return;
    }
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

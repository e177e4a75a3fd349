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

int sim_calib_bin(float x, float amax)
{
    float f = (x + amax) * ((float)CALIB_HIST_BINS / (2.0f * amax));
    if (f != f)
        return -1;
    if (!(f > 0.0f))
        return 0;
    if (f >= (float)CALIB_HIST_BINS)
        return CALIB_HIST_BINS - 1;
    return (int)f;
}

void sim_calib_fold_hist(uint64_t *hist, float amax, const float *x, size_t n)
{
    if (!(amax > 0.0f)) { /* an all-zero tensor: everything in the bin just above 0 */
        hist[CALIB_HIST_BINS / 2] += n;
        return;
    }
    /* the same float expression as sim_calib_bin, inlined: the bin of a value never depends on the worker */
    const float inv = (float)CALIB_HIST_BINS / (2.0f * amax);
    for (size_t i = 0; i < n; i++) {
        float f = (x[i] + amax) * inv;
        if (f != f)
            continue;
        int b = !(f > 0.0f) ? 0 : f >= (float)CALIB_HIST_BINS ? CALIB_HIST_BINS - 1 : (int)f;
        hist[b]++;
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

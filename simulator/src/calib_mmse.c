/*
 * calib_mmse.c: the clipping range minimising the mean squared quantize-dequantize error.
 *
 * The error of a candidate [lo, hi] is computed on the histogram with RKNN's int8 quantizer
 * (docs/numerics.md: scale = (hi - lo) / 255, zero_point = round(-128 - lo / scale) half to even, codes
 * clamped to [-128, 127]), taking the values of a bin as spread evenly over it (its part inside the
 * observed [min, max]). The squared error is then integrated exactly: a sawtooth between the grid's ends,
 * a parabola beyond them. Bin centres alone would be wrong once a bin is wider than a quantization step,
 * as happens when a heavy tail makes the best range a small part of the histogram.
 *
 * Search: coordinate descent from the observed range. Each side in turn, with the other fixed, tries 100
 * evenly spaced shrinkages toward 0 (lo = min * k / 100), then 20 finer steps around the best; rounds
 * repeat until neither side moves (at most MMSE_ROUNDS). Ties keep the wider range.
 */
#include "calib_internal.h"

#include <math.h>

#define MMSE_STEPS 100
#define MMSE_FINE 20
#define MMSE_ROUNDS 8

typedef struct mmse_bin {
    double a, b; /* the part of the bin inside [min, max]; a == b for a point */
    double n;    /* count */
} mmse_bin;

typedef struct mmse_problem {
    mmse_bin *bins; /* non-empty bins only */
    int n_bins;
    double total;
} mmse_problem;

/* The int8 grid of RKNN's rule for [lo, hi] (lo <= 0 <= hi, hi > lo): step s, first and last point. */
static void grid_of(double lo, double hi, double *s, double *gmin, double *gmax)
{
    double scale = (hi - lo) / 255.0;
    double zp = rint(-128.0 - lo / scale); /* default rounding mode: half to even */
    zp = zp < -128 ? -128 : zp > 127 ? 127 : zp;
    *s = scale;
    *gmin = scale * (-128.0 - zp);
    *gmax = scale * (127.0 - zp);
}

/* Integral over [0, y] (y >= 0) of the squared distance to the nearest multiple of s. */
static double sawtooth_integral(double y, double s)
{
    double k = floor(y / s + 0.5);
    double d = y - k * s;
    return k * s * s * s / 12.0 + d * d * d / 3.0;
}

static double cube(double x)
{
    return x * x * x;
}

/* Integral of the squared quantization error over [a, b] (a < b). */
static double interval_error(double a, double b, double s, double gmin, double gmax)
{
    double e = 0;
    if (a < gmin) { /* clipped to the lowest code */
        double u = b < gmin ? b : gmin;
        e += (cube(u - gmin) - cube(a - gmin)) / 3.0;
    }
    if (b > gmax) {
        double v = a > gmax ? a : gmax;
        e += (cube(b - gmax) - cube(v - gmax)) / 3.0;
    }
    double l = a > gmin ? a : gmin, r = b < gmax ? b : gmax;
    if (r > l)
        e += sawtooth_integral(r - gmin, s) - sawtooth_integral(l - gmin, s);
    return e;
}

static double point_error(double x, double s, double gmin, double gmax)
{
    double q = x <= gmin ? gmin : x >= gmax ? gmax : gmin + s * rint((x - gmin) / s);
    return (x - q) * (x - q);
}

static double problem_error(const mmse_problem *p, double lo, double hi)
{
    if (!(hi > lo))
        return INFINITY;
    double s, gmin, gmax;
    grid_of(lo, hi, &s, &gmin, &gmax);
    double e = 0;
    for (int k = 0; k < p->n_bins; k++) {
        const mmse_bin *bn = &p->bins[k];
        e += bn->b > bn->a ? bn->n * interval_error(bn->a, bn->b, s, gmin, gmax) / (bn->b - bn->a)
                           : bn->n * point_error(bn->a, s, gmin, gmax);
    }
    return e / p->total;
}

/* Fills p from the histogram; false when out of memory. */
static bool problem_init(mmse_problem *p, const uint64_t *hist, double min, double max)
{
    double amax = -min > max ? -min : max;
    double bw = 2.0 * amax / CALIB_HIST_BINS;
    p->bins = sim_malloc_array(CALIB_HIST_BINS, sizeof *p->bins);
    p->n_bins = 0;
    p->total = 0;
    if (!p->bins)
        return false;
    for (int k = 0; k < CALIB_HIST_BINS; k++) {
        if (!hist[k])
            continue;
        double a = -amax + k * bw, b = -amax + (k + 1) * bw;
        a = a < min ? min : a > max ? max : a;
        b = b > max ? max : b < min ? min : b;
        p->bins[p->n_bins++] = (mmse_bin){.a = a, .b = b, .n = (double)hist[k]};
        p->total += (double)hist[k];
    }
    return true;
}

double sim_calib_mmse_error(const uint64_t *hist, double min, double max, double lo, double hi)
{
    mmse_problem p;
    if (!problem_init(&p, hist, min, max)) {
        free(p.bins);
        return NAN;
    }
    double e = p.total > 0 ? problem_error(&p, lo, hi) : 0;
    free(p.bins);
    return e;
}

/*
 * Best end for one side: end = far * f with f in [0, 1], the other end fixed. Coarse steps from f = 1 down
 * (strict improvement: ties keep the wider range), then fine steps within one coarse step either side.
 */
static double search_side(const mmse_problem *p, double far, double other, bool low, double current)
{
    double best_f = current / far, best_e = low ? problem_error(p, current, other) : problem_error(p, other, current);
    for (int k = MMSE_STEPS; k >= 0; k--) {
        double f = (double)k / MMSE_STEPS;
        double e = low ? problem_error(p, far * f, other) : problem_error(p, other, far * f);
        if (e < best_e) {
            best_e = e;
            best_f = f;
        }
    }
    double center = best_f;
    for (int k = MMSE_FINE; k >= -MMSE_FINE; k--) {
        double f = center + (double)k / (MMSE_STEPS * MMSE_FINE);
        if (f < 0 || f > 1)
            continue;
        double e = low ? problem_error(p, far * f, other) : problem_error(p, other, far * f);
        if (e < best_e) {
            best_e = e;
            best_f = f;
        }
    }
    return best_f == 1.0 ? far : far * best_f;
}

bool sim_calib_mmse_range(const uint64_t *hist, float min, float max, float *out_lo, float *out_hi)
{
    *out_lo = min;
    *out_hi = max;
    double lo0 = min < 0 ? min : 0, hi0 = max > 0 ? max : 0;
    if (!(hi0 > lo0))
        return true;
    mmse_problem p;
    if (!problem_init(&p, hist, min, max)) {
        free(p.bins);
        return false;
    }
    if (p.total == 0) {
        free(p.bins);
        return true;
    }
    double lo = lo0, hi = hi0;
    for (int round = 0; round < MMSE_ROUNDS; round++) {
        double nlo = lo0 < 0 ? search_side(&p, lo0, hi, true, lo) : lo;
        double nhi = hi0 > 0 ? search_side(&p, hi0, nlo, false, hi) : hi;
        bool moved = nlo != lo || nhi != hi;
        lo = nlo;
        hi = nhi;
        if (!moved)
            break;
    }
    free(p.bins);
    *out_lo = lo == lo0 ? min : (float)lo;
    *out_hi = hi == hi0 ? max : (float)hi;
    return true;
}

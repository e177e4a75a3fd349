/*
 * calib_kl.c: entropy (KL-divergence) calibration, TensorRT's algorithm (Migacz, "8-bit Inference with
 * TensorRT", GTC 2017, as ported in MXNet's and TVM's _get_optimal_threshold) on the |x| histogram,
 * adapted to RKNN's asymmetric int8. docs/calibration.md explains each choice.
 *
 * For a candidate threshold of i bins (T = i * bin width):
 *   P = the first i bins, with the mass beyond T added to the last one (clipping);
 *   Q = the first i bins (without that mass) merged into nq levels and spread back evenly over the bins
 *       of each level that are non-zero in P;
 *   both smoothed (zero bins get eps = 1e-4 counts, the non-zero ones give it back evenly) and compared
 *   with KL(P || Q) after normalisation.
 * nq is the number of int8 steps that fall in [0, T] once the range is clipped to [max(min, -T),
 * min(max, T)] and cut in 255 steps: 128 for a symmetric tensor (TensorRT's value), 255 for a one-sided
 * one (a ReLU output gets all 256 codes), in between otherwise.
 *
 * Cost: prefix sums over the histogram make a candidate cost one log per level, not one per bin; the
 * smoothing shift e of the non-zero P bins before the last enters through (p - e) log(p - e) =
 * p log p - e (log p + 1) + e^2 / (2p) + O(e^3 / p^2), exact to 1e-3 counts since p >= 1 and e <= 0.21.
 */
#include "calib_internal.h"

#include <math.h>

#define KL_FIRST_BINS 128 /* TensorRT's first candidate */
#define KL_EPS 1e-4       /* smoothing mass per zero bin, in counts (MXNet/TVM's value) */

/* Prefix sums over the |x| histogram: count, non-zero bins, and over non-zero bins a log a, log a, 1/a. */
typedef struct kl_prefix {
    uint64_t count[CALIB_ABS_BINS + 1];
    int nonzero[CALIB_ABS_BINS + 1];
    double alog[CALIB_ABS_BINS + 1], log[CALIB_ABS_BINS + 1], inv[CALIB_ABS_BINS + 1];
} kl_prefix;

static void prefix_init(kl_prefix *k, const uint64_t *a)
{
    k->count[0] = 0;
    k->nonzero[0] = 0;
    k->alog[0] = k->log[0] = k->inv[0] = 0;
    for (int j = 0; j < CALIB_ABS_BINS; j++) {
        double v = (double)a[j], l = a[j] ? log(v) : 0;
        k->count[j + 1] = k->count[j] + a[j];
        k->nonzero[j + 1] = k->nonzero[j] + (a[j] != 0);
        k->alog[j + 1] = k->alog[j] + v * l;
        k->log[j + 1] = k->log[j] + l;
        k->inv[j + 1] = k->inv[j] + (a[j] ? 1.0 / v : 0);
    }
}

/* int8 steps over [0, T] for a threshold T: the clipped range is cut in 255 steps. */
static int levels_for(double t, double min, double max)
{
    double lo = min > -t ? min : -t;
    double hi = max < t ? max : t;
    long nq = lround(255.0 * t / (hi - lo));
    return nq < 128 ? 128 : nq > 255 ? 255 : (int)nq;
}

/* KL(P || Q) for a threshold of i bins (nq <= i) quantized to nq <= 255 levels; INFINITY if Q is empty. */
static double kl_candidate(const kl_prefix *k, const uint64_t *a, int i, int nq)
{
    const uint64_t total = k->count[CALIB_ABS_BINS];
    if (total == 0)
        return INFINITY;
    const uint64_t outliers = total - k->count[i];
    const double p_last = (double)a[i - 1] + (double)outliers;
    /* P's smoothing: its zero bins (the last holds the outliers) and the shift e of the others */
    const int p_nonzero = k->nonzero[i - 1] + (p_last > 0);
    const int p_zeros = i - p_nonzero;
    const double e = p_zeros ? KL_EPS * p_zeros / p_nonzero : 0;
    double sum_plogp = k->alog[i - 1] - e * (k->log[i - 1] + k->nonzero[i - 1]) + 0.5 * e * e * k->inv[i - 1];
    if (p_last > 0)
        sum_plogp += (p_last - e) * log(p_last - e);
    /* Q per level: the level's count over its non-zero P bins */
    uint64_t lsum[256];
    int lnnz[256];
    int q_nonzero = 0;
    double sum_q = 0;
    for (int l = 0; l < nq; l++) {
        int start = (int)((int64_t)l * i / nq), end = (int)((int64_t)(l + 1) * i / nq);
        lsum[l] = k->count[end] - k->count[start];
        lnnz[l] = k->nonzero[end] - k->nonzero[start];
        if (end == i) /* the last bin is non-zero in P when it holds outliers */
            lnnz[l] += (p_last > 0) - (a[i - 1] != 0);
        if (lsum[l] && lnnz[l]) {
            q_nonzero += lnnz[l];
            sum_q += (double)lsum[l];
        }
    }
    if (q_nonzero == 0)
        return INFINITY;
    const double e_q = KL_EPS * (i - q_nonzero) / q_nonzero;
    const double log_eps = log(KL_EPS);
    double cross = 0; /* sum over non-zero P bins of p' log q' */
    for (int l = 0; l < nq; l++) {
        if (!lnnz[l])
            continue;
        int end = (int)((int64_t)(l + 1) * i / nq);
        double p_mass = (double)lsum[l] + (end == i ? (double)outliers : 0) - e * lnnz[l];
        double q = lsum[l] ? (double)lsum[l] / lnnz[l] - e_q : 0;
        cross += p_mass * (q > 0 ? log(q) : log_eps);
    }
    /* zero P bins pair eps with eps and add nothing; sum_j p'_j/SP log((p'_j/SP) / (q'_j/SQ)): */
    return (sum_plogp - cross) / (double)total + log(sum_q / (double)total);
}

double sim_calib_kl_divergence(const uint64_t *a, int i, int nq)
{
    kl_prefix *k = malloc(sizeof *k);
    if (!k)
        return NAN;
    prefix_init(k, a);
    double d = kl_candidate(k, a, i, nq);
    free(k);
    return d;
}

double sim_calib_kl_threshold(const uint64_t *a, double amax, double min, double max)
{
    const int nb = CALIB_ABS_BINS;
    const double bw = amax / nb;
    kl_prefix *k = malloc(sizeof *k);
    if (!k)
        return NAN;
    prefix_init(k, a);
    int best_i = nb;
    double best = INFINITY;
    for (int i = KL_FIRST_BINS; i <= nb && k->count[nb] > 0; i++) {
        int nq = levels_for(i * bw, min, max);
        if (nq > i)
            continue;
        double kl = kl_candidate(k, a, i, nq);
        if (kl < best) { /* strict: the smallest threshold wins a tie */
            best = kl;
            best_i = i;
        }
    }
    free(k);
    return best_i * bw;
}

bool sim_calib_kl_range(const uint64_t *hist, float min, float max, float *out_lo, float *out_hi)
{
    float amax = sim_calib_amax(min, max);
    *out_lo = min;
    *out_hi = max;
    if (!(amax > 0.0f))
        return true;
    uint64_t a[CALIB_ABS_BINS];
    for (int j = 0; j < CALIB_ABS_BINS; j++) /* bin j of |x| is the pair around 0 */
        a[j] = hist[CALIB_ABS_BINS + j] + hist[CALIB_ABS_BINS - 1 - j];
    double t = sim_calib_kl_threshold(a, amax, min, max);
    if (t != t)
        return false;
    if (t < amax) {
        *out_lo = -t > min ? (float)-t : min;
        *out_hi = t < max ? (float)t : max;
    }
    return true;
}

/*
 * calib_kl.c: entropy (KL-divergence) calibration, TensorRT's algorithm (Migacz, "8-bit Inference with
 * TensorRT", GTC 2017, as ported in MXNet's and TVM's _get_optimal_threshold) on the |x| histogram,
 * adapted to RKNN's asymmetric int8. docs/calibration.md explains each choice.
 *
 * For a candidate threshold of i bins (T = i * bin width):
 *   P = the first i bins, with the mass beyond T added to the last one (clipping);
 *   Q = the first i bins (without that mass) merged into nq levels and spread back evenly over the bins
 *       of each level that are non-zero in P;
 *   both smoothed (zeros get eps, non-zeros give it back) and compared with KL(P || Q).
 * nq is the number of int8 steps that fall in [0, T] once the range is clipped to [max(min, -T),
 * min(max, T)] and cut in 255 steps: 128 for a symmetric tensor (TensorRT's value), 255 for a one-sided
 * one (a ReLU output gets all 256 codes), in between otherwise.
 */
#include "calib_internal.h"

#include <math.h>

#define KL_FIRST_BINS 128 /* TensorRT's first candidate */
#define KL_EPS 1e-4       /* smoothing mass per zero bin, in counts (MXNet/TVM's value) */

/* int8 steps over [0, T] for a threshold T: the clipped range is cut in 255 steps. */
static int levels_for(double t, double min, double max)
{
    double lo = min > -t ? min : -t;
    double hi = max < t ? max : t;
    long nq = lround(255.0 * t / (hi - lo));
    return nq < 128 ? 128 : nq > 255 ? 255 : (int)nq;
}

/*
 * KL(P || Q) for a threshold of i bins quantized to nq levels. a: the |x| histogram; outliers: the
 * count beyond bin i-1; total: the whole count (the sum of P). INFINITY when Q is empty.
 */
static double divergence(const uint64_t *a, int i, uint64_t outliers, uint64_t total, int nq)
{
    int p_zeros = 0;
    for (int j = 0; j < i; j++)
        p_zeros += a[j] == 0 && !(j == i - 1 && outliers);
    /* Q per level: its value on the level's non-zero P bins, 0 where the level holds nothing */
    double qv[256];
    int q_nonzero = 0;
    double sum_q = 0;
    for (int l = 0; l < nq; l++) {
        int start = (int)((int64_t)l * i / nq), end = (int)((int64_t)(l + 1) * i / nq);
        uint64_t sum = 0;
        int nnz = 0;
        for (int j = start; j < end; j++) {
            sum += a[j];
            nnz += a[j] != 0 || (j == i - 1 && outliers);
        }
        qv[l] = nnz && sum ? (double)sum / nnz : 0;
        if (qv[l] > 0) {
            q_nonzero += nnz;
            sum_q += (double)sum;
        }
    }
    if (q_nonzero == 0)
        return INFINITY;
    const double e1p = p_zeros ? KL_EPS * p_zeros / (i - p_zeros) : 0;
    const double e1q = KL_EPS * (i - q_nonzero) / q_nonzero;
    const double log_eps = log(KL_EPS);
    double acc = 0;
    for (int l = 0; l < nq; l++) {
        int start = (int)((int64_t)l * i / nq), end = (int)((int64_t)(l + 1) * i / nq);
        double qs = qv[l] > 0 ? qv[l] - e1q : 0;
        double log_q = qs > 0 ? log(qs) : log_eps;
        for (int j = start; j < end; j++) {
            double p = (double)a[j] + (j == i - 1 ? (double)outliers : 0);
            if (p == 0) /* a smoothed zero: eps against eps (Q is zero wherever P is), adds nothing */
                continue;
            double ps = p - e1p;
            acc += ps * (log(ps) - (qs > 0 ? log_q : log_eps));
        }
    }
    /* sum_j p'_j/SP * log((p'_j/SP) / (q'_j/SQ)), with sum p' = SP: */
    return acc / (double)total + log(sum_q / (double)total);
}

double sim_calib_kl_threshold(const uint64_t *a, double amax, double min, double max)
{
    const int nb = CALIB_ABS_BINS;
    const double bw = amax / nb;
    uint64_t total = 0, below = 0;
    for (int j = 0; j < nb; j++)
        total += a[j];
    if (total == 0)
        return amax;
    for (int j = 0; j < KL_FIRST_BINS - 1; j++)
        below += a[j];
    int best_i = nb;
    double best = INFINITY;
    for (int i = KL_FIRST_BINS; i <= nb; i++) {
        below += a[i - 1];
        int nq = levels_for(i * bw, min, max);
        if (nq > i)
            continue;
        double kl = divergence(a, i, total - below, total, nq);
        if (kl < best) { /* strict: the smallest threshold wins a tie */
            best = kl;
            best_i = i;
        }
    }
    return best_i * bw;
}

void sim_calib_kl_range(const uint64_t *hist, float min, float max, float *out_lo, float *out_hi)
{
    float amax = sim_calib_amax(min, max);
    *out_lo = min;
    *out_hi = max;
    if (!(amax > 0.0f))
        return;
    uint64_t a[CALIB_ABS_BINS];
    for (int j = 0; j < CALIB_ABS_BINS; j++) /* bin j of |x| is the pair around 0 */
        a[j] = hist[CALIB_ABS_BINS + j] + hist[CALIB_ABS_BINS - 1 - j];
    double t = sim_calib_kl_threshold(a, amax, min, max);
    if (t < amax) {
        *out_lo = -t > min ? (float)-t : min;
        *out_hi = t < max ? (float)t : max;
    }
}

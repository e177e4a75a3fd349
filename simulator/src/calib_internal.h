/*
 * calib_internal.h: the pieces of rd_calibrate (calib.c) shared by its files: the per-tensor statistics a
 * worker folds activations into (calib_hist.c), and the range searches over a merged histogram
 * (calib_kl.c, calib_mmse.c). docs/calibration.md gives the methods.
 */
#ifndef RD_SIM_CALIB_INTERNAL_H
#define RD_SIM_CALIB_INTERNAL_H

#include "internal.h"

/*
 * Histograms are signed: CALIB_HIST_BINS equal bins over [-A, A] where A = max|x| of the tensor over the
 * whole dataset (pass 1). The |x| histogram of KL (2048 bins over [0, A], as TensorRT) is the fold of the
 * two halves, exact because the middle edge is 0; MMSE uses the signed bins directly.
 */
#define CALIB_HIST_BINS 4096
#define CALIB_ABS_BINS (CALIB_HIST_BINS / 2)

/** The half-width A of a tensor's histogram: max|x| from its observed range. */
static inline float sim_calib_amax(float min, float max)
{
    return -min > max ? -min : max;
}

/** Running statistics of one tensor in one worker. */
typedef struct calib_stat {
    float min, max; /* +inf/-inf until a value is seen; NaN never counts */
    bool seen;      /* the tensor was produced at least once */
} calib_stat;

/** An empty statistic. */
void sim_calib_stat_init(calib_stat *st);

/** Folds n float32 values into min/max. */
void sim_calib_fold_range(calib_stat *st, const float *x, size_t n);

/**
 * Adds n values to hist (CALIB_HIST_BINS counts over [-amax, amax]); values beyond go to the end bins,
 * NaN and exact zeros are not counted.
 */
void sim_calib_fold_hist(uint64_t *hist, float amax, const float *x, size_t n);

/** Merges src into dst (order-free: min, max, sums). */
void sim_calib_stat_merge(calib_stat *dst, const calib_stat *src);

/** Bin of value x in a histogram over [-amax, amax] (amax > 0), clamped to the end bins; -1 for NaN and 0. */
int sim_calib_bin(float x, float amax);

/**
 * KL-divergence (entropy) calibration: the clipped range [lo, hi] of a tensor with observed range
 * [min, max] (min <= 0 <= max) and signed histogram hist. false: out of memory.
 */
bool sim_calib_kl_range(const uint64_t *hist, float min, float max, float *out_lo, float *out_hi);

/** The KL threshold (a multiple of the |x| bin width amax / CALIB_ABS_BINS); NaN when out of memory. */
double sim_calib_kl_threshold(const uint64_t *abs_hist, double amax, double min, double max);

/** KL(P || Q) of the candidate of i bins quantized to nq levels (for tests); NaN when out of memory. */
double sim_calib_kl_divergence(const uint64_t *abs_hist, int i, int nq);

/**
 * MMSE calibration: the range [lo, hi] within [min, max] (min <= 0 <= max) minimising the mean squared
 * quantize-dequantize error of the values described by hist under RKNN's int8 rule. false: out of memory.
 */
bool sim_calib_mmse_range(const uint64_t *hist, float min, float max, float *out_lo, float *out_hi);

/** Mean squared quantize-dequantize error of the histogram for range [lo, hi] (for tests). */
double sim_calib_mmse_error(const uint64_t *hist, double min, double max, double lo, double hi);

#endif

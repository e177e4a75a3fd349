/*
 * metrics.h: per-layer comparison metrics of a reference tensor r (FP32 golden) against a tested tensor t
 * (simulator or board), in double precision, and their aggregation over samples. Formulas and the
 * degenerate classes: docs/metrics.md.
 */
#ifndef RD_AN_METRICS_H
#define RD_AN_METRICS_H

#include "rknn_diag/result.h"
#include "rknn_diag/simulator.h"

/** What is known about the tested tensor beyond its values. */
typedef struct an_metrics_ctx {
    bool quantized; /* int8 parameters below are valid */
    double scale;   /* dequantized value = scale * (code - zero_point) */
    int zero_point;
    int qmin, qmax;        /* code limits; both 0 means -128 and 127 */
    int64_t fp16_overflow; /* values that overflowed float16 in this layer (copied to the metrics) */
    double fp16_max_abs;   /* largest magnitude before float16 rounding */
} an_metrics_ctx;

/**
 * All metrics of ref against test (n elements each). q: NULL for a float tensor with no overflow stats.
 * cos is what RKNN computes (scipy's 1 - clip(1 - uv/sqrt(uu*vv), 0, 2): NaN on a zero norm); the class
 * says why (docs/metrics.md), an_cos_effective gives the value to rank with.
 */
void an_metrics_compute(const float *ref, const float *test, int64_t n, const an_metrics_ctx *q, rd_metrics *out);

/** The metrics of two tensors whose element counts differ: class RD_DEG_SHAPE, every value NaN. */
void an_metrics_shape_mismatch(int64_t n_ref, int64_t n_test, rd_metrics *out);

/**
 * The cosine used to rank and gate: 1 for both_zero, 0 for ref_zero/test_zero, NaN for nonfinite/shape,
 * else m->cos.
 */
double an_cos_effective(const rd_metrics *m);

/** Accumulates one metric group over samples. Zero-initialise (or an_group_acc_init) before use. */
typedef struct an_group_acc {
    rd_metrics *samples; /* per-sample metrics, in order of arrival */
    int *sample_ids;
    size_t n, cap;
} an_group_acc;

void an_group_acc_init(an_group_acc *acc);
void an_group_acc_fini(an_group_acc *acc);
/** Adds the metrics of sample `sample`. RD_E_NOMEM only. */
rd_status an_metric_group_add(an_group_acc *acc, const rd_metrics *m, int sample, rd_error *err);
/** Puts the samples in order of their ids (stable): the order a single run adds them in. */
void an_group_acc_sort(an_group_acc *acc);
/**
 * Mean of each metric, minimum and 5th-percentile (nearest rank) effective cosine, worst sample (smallest
 * effective cosine, NaN counting as the worst). An empty accumulator gives an absent group. False when memory
 * for the percentile ran out (out is then not to be reported).
 */
bool an_metric_group_finish(const an_group_acc *acc, rd_metric_group *out);

/**
 * Cosine per output channel (axis 1 of an NCHW-like tensor; a rank < 2 tensor is one channel), with the
 * effective convention of an_cos_effective. out->cos is malloc'ed (caller or rd_result_fini frees).
 */
rd_status an_channel_cos(const float *ref, const float *test, int rank, const int64_t *dims, rd_channel_cos *out,
                         rd_error *err);

/**
 * Value histogram of ref and test over the range of their finite values, n_bins equal bins (the last one
 * closed). Non-finite values are not counted. out's arrays are malloc'ed.
 */
rd_status an_histogram(const float *ref, const float *test, int64_t n, size_t n_bins, rd_histogram *out, rd_error *err);

/** A layer (or row) and its cosine, to rank by. */
typedef struct an_ranked {
    size_t layer;
    double cos;
} an_ranked;

/** qsort order of an_ranked: lowest cosine first, ties by layer (NaN cosines must be left out). */
int an_ranked_by_cos(const void *a, const void *b);

#endif

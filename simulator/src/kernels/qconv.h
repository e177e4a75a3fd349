/*
 * qconv.h: integer Conv and ConvTranspose for the INT8 simulator, split into tasks over the run's threads.
 *
 * Inputs are int8 codes with a zero point, weights int8 codes (zero point 0), outputs int32 accumulators:
 * y = sum (x - zp) * w + bias, modulo 2^32 like an int32 register (exact whenever the sum fits, see qgemm.h).
 * Padding stands for the zero point, so it contributes nothing. Integer sums do not depend on their order,
 * so any split of the work gives the same accumulators: the strategy and tiles follow conv_f32.h.
 *   - pointwise: the integer GEMM, tasks of output channels x positions;
 *   - few taps per output (conv_direct_applies: depthwise, small-channel): the float direct loop on the
 *     centred codes (x - zp) and the weight codes as floats; every product and partial sum is an integer
 *     below 64 * 255 * 127 < 2^24, so float computes it exactly, and the bias is added in int32 after;
 *   - otherwise im2col (int8, the zero point as pad value) per tile of positions, then the integer GEMM.
 * ConvTranspose: per block of output channels, GEMM into an int32 column tile, then col2im scatter-add.
 */
#ifndef RD_KERNELS_QCONV_H
#define RD_KERNELS_QCONV_H

#include "conv_f32.h"

#include <stdint.h>

/** Operands of a whole integer conv (all batches and groups). */
typedef struct qconv_args {
    const int8_t *xq; /* input codes [N, C, in...] (GEMM and TILED plans) */
    const float *xc;  /* centred input codes x - zp as floats (DEPTHWISE plan) */
    int32_t x_zp;
    const int8_t *wq;    /* weight codes: Conv [M, C/group, k...], ConvTranspose [C, M/group, k...] */
    const float *wc;     /* the same codes as floats (DEPTHWISE plan) */
    const int32_t *bias; /* M values, or NULL */
    int32_t *y;          /* accumulators [N, M, out...] */
} qconv_args;

/** Strategy, tasks and per-worker scratch bytes (plan->scratch, 64-byte aligned) for an integer Conv. */
void qconv_plan_s8(const conv_geom *g, conv_plan *out);

/**
 * Conv on pool's threads; scratch holds plan->scratch bytes per worker (sim_pool_width). done (may be NULL)
 * is called on each finished region of y with done_user.
 */
void qconv_s8(const conv_geom *g, const conv_plan *plan, const qconv_args *a, void *scratch, struct rd_pool *pool,
              sim_tile_fn done, void *done_user);

/** Strategy, tasks and per-worker scratch bytes for an integer ConvTranspose. */
void qconv_transpose_plan_s8(const conv_geom *g, conv_plan *out);

/** ConvTranspose, as qconv_s8 (xq and wq only). */
void qconv_transpose_s8(const conv_geom *g, const conv_plan *plan, const qconv_args *a, void *scratch,
                        struct rd_pool *pool, sim_tile_fn done, void *done_user);

#endif

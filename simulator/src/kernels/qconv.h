/*
 * qconv.h: integer Conv and ConvTranspose for the INT8 simulator, one (batch, group) slice at a time.
 *
 * Inputs are int8 codes with a zero point, weights symmetric int8 codes (zero point 0), outputs int32
 * accumulators: y = sum (x - x_zp) * w + bias, modulo 2^32 like an int32 register (exact whenever the
 * sum fits, see qgemm.h). Padding stands for the zero point, so it contributes nothing. Strategies as in
 * conv_f32.h: pointwise convs go straight to the integer GEMM, depthwise 1-D/2-D convs run a direct loop,
 * everything else im2col (int8, the zero point as pad value) tiled so the column buffer stays under
 * CONV_SCRATCH_BUDGET bytes, then sim_qgemm_s8s8s32. ConvTranspose: GEMM into an int32 column tile, then
 * col2im scatter-add.
 */
#ifndef RD_KERNELS_QCONV_H
#define RD_KERNELS_QCONV_H

#include "conv_f32.h"

#include <stdint.h>

/** Strategy and scratch bytes (column tile plus GEMM workspace) for an integer Conv. */
void qconv_plan_s8(const conv_geom *g, conv_plan *out);

/**
 * One (batch, group) slice of Conv: xg [C/group, in...] codes, wg [M/group, C/group, k...], bias_g
 * (M/group values, may be NULL), yg [M/group, out...] accumulators. scratch: plan->scratch bytes,
 * 64-byte aligned.
 */
void qconv_s8_slice(const conv_geom *g, const conv_plan *plan, const int8_t *xg, int32_t x_zp, const int8_t *wg,
                    const int32_t *bias_g, int32_t *yg, void *scratch);

/** Strategy and scratch bytes for an integer ConvTranspose. */
void qconv_transpose_plan_s8(const conv_geom *g, conv_plan *out);

/** One (batch, group) slice of ConvTranspose: wg [C/group, M/group, k...]; otherwise as qconv_s8_slice. */
void qconv_transpose_s8_slice(const conv_geom *g, const conv_plan *plan, const int8_t *xg, int32_t x_zp,
                              const int8_t *wg, const int32_t *bias_g, int32_t *yg, void *scratch);

#endif

/*
 * conv_f32.h: fast float convolution and transposed convolution on OpenBLAS sgemm.
 *
 * Strategies (conv_plan picks one from the geometry):
 *   - 1x1, stride 1, no padding: Y_g = W_g * X_g straight through sgemm, no scratch;
 *   - depthwise (group == C, one input channel per group), 1-D or 2-D: a direct loop over output rows
 *     whose inner loop is contiguous for stride 1 (vectorisable), no scratch;
 *   - otherwise im2col tiled over flattened output positions (im2col_tmpl.h) so the column buffer
 *     stays under CONV_SCRATCH_BUDGET bytes, then sgemm per tile.
 * Results do not depend on the thread count: the ops keep OpenBLAS single-threaded (blas_threads.h)
 * and everything here runs in a fixed order. Float accumulators throughout.
 */
#ifndef RD_KERNELS_CONV_F32_H
#define RD_KERNELS_CONV_F32_H

#include "conv_geom.h"

#include <stddef.h>

#define CONV_SCRATCH_BUDGET ((size_t)8 << 20) /* bytes of im2col/col2im buffer per tile */

typedef enum conv_kind {
    CONV_KIND_GEMM = 0,  /* 1x1 stride 1 unpadded: one sgemm per (batch, group) */
    CONV_KIND_DEPTHWISE, /* direct loop (Conv only) */
    CONV_KIND_TILED,     /* im2col (Conv) or col2im (ConvTranspose) over tiles */
} conv_kind;

typedef struct conv_plan {
    conv_kind kind;
    int64_t tile;        /* positions per tile (output positions for Conv, input for ConvTranspose) */
    size_t scratch;      /* bytes of scratch the run needs */
} conv_plan;

/** Positions per tile so that rows * tile * elem_size <= budget (at least min(total, 16)). */
int64_t conv_tile_cols(int64_t rows, int64_t total, int64_t row_len, size_t elem_size, size_t budget);

/**
 * GEMM when pointwise, else im2col (Conv) or col2im (ConvTranspose) tiles of elements of elem_size bytes
 * under CONV_SCRATCH_BUDGET: the plan of every float and double kernel.
 */
void conv_plan_sized(const conv_geom *g, size_t elem_size, bool transpose, conv_plan *out);

/** Chooses the strategy for Conv with geometry g (float elements): conv_plan_sized, or depthwise. */
void conv_plan_f32(const conv_geom *g, conv_plan *out);
/** Y = conv(X, W) + B (b may be NULL); scratch has plan->scratch bytes (may be NULL when 0). */
void conv_f32(const conv_geom *g, const conv_plan *plan, const float *x, const float *w, const float *b,
              float *y, float *scratch);

/** Chooses the strategy for ConvTranspose with geometry g. */
void conv_transpose_plan_f32(const conv_geom *g, conv_plan *out);
/** Y = conv_transpose(X, W) + B (b may be NULL); scratch has plan->scratch bytes. */
void conv_transpose_f32(const conv_geom *g, const conv_plan *plan, const float *x, const float *w,
                        const float *b, float *y, float *scratch);

#endif

/*
 * pool_f32.h: max and average pooling over N-D windows (float), and the global variants.
 *
 * Geometry as for Conv (conv_geom.h) with in_c == out_c channels; pad_end bounds the padded region
 * that count_include_pad counts. Average sums in float over the valid taps in row-major tap order and
 * divides once; max keeps the first maximum (strictly greater replaces).
 */
#ifndef RD_KERNELS_POOL_F32_H
#define RD_KERNELS_POOL_F32_H

#include "conv_geom.h"

#include <stdbool.h>

/**
 * y = max over each window; indices (may be NULL) receive the flat index of the max in x (the whole
 * tensor, batch and channel included), spatial part row-major or, with col_major, column-major.
 * A window that sees no input (all padding) gives -FLT_MAX and index -1.
 */
void pool_max_f32(const conv_geom *g, const float *x, float *y, int64_t *indices, bool col_major);

/** y = average over each window: divided by the taps inside the input, or with count_include_pad by
 *  the taps inside input plus pads (not those past the end pads, which ceil_mode can add). */
void pool_avg_f32(const conv_geom *g, const float *x, float *y, bool count_include_pad);

/** y[p] = mean (or max) of x[p * len .. (p + 1) * len) for p < planes; the mean sums in double. */
void pool_global_f32(const float *x, int64_t planes, int64_t len, bool max, float *y);

#endif

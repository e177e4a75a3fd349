/*
 * ref_conv.h: naive reference kernels for convolution, transposed convolution and matrix product.
 *
 * Straight loops over the ONNX definitions, used as the oracle for the fast kernels (conv_f32.c,
 * BLAS) in the unit tests. Accumulation is in float, in the order (input channel, kernel taps) for
 * Conv and (input channel, input position, taps) for ConvTranspose; the bias is added last.
 */
#ifndef RD_KERNELS_REF_CONV_H
#define RD_KERNELS_REF_CONV_H

#include "conv_geom.h"

#include <stdbool.h>

/** Y[N, M, out...] = conv(X[N, C, in...], W[M, C/g, k...]) + B[M] (b may be NULL). */
void ref_conv_f32(const conv_geom *g, const float *x, const float *w, const float *b, float *y);

/** Y[N, M, out...] = conv_transpose(X[N, C, in...], W[C, M/g, k...]) + B[M] (b may be NULL). */
void ref_conv_transpose_f32(const conv_geom *g, const float *x, const float *w, const float *b, float *y);

/**
 * C[m, n] = alpha * sum_k op(A)[m, k] * op(B)[k, n] + beta * C[m, n], row-major, op = transpose when
 * ta/tb. A is [m, k] (or [k, m] when ta), B is [k, n] (or [n, k] when tb). beta == 0 ignores C's content.
 */
void ref_gemm_f32(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, const float *bm,
                  float beta, float *c);

#endif

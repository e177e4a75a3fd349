/*
 * ref_conv_int.h: integer convolution and matrix product for ConvInteger, QLinearConv, MatMulInteger
 * and QLinearMatMul. Pure: operands arrive zero-point-adjusted as int32, so padding (0) stands for
 * the zero point as the ONNX spec wants.
 *
 * Accumulator: int64, then wrapped to int32 on store. A product of two 8-bit values is below 2^16,
 * so int64 cannot overflow for any realistic K; the final wrap matches an int32 accumulator.
 */
#ifndef RD_KERNELS_REF_CONV_INT_H
#define RD_KERNELS_REF_CONV_INT_H

#include <stdint.h>

typedef struct ref_conv_int_geom {
    int64_t n, c, m, group;            /* batch, input channels, output channels, groups */
    int64_t in[3];                     /* input spatial dims (D, H, W); leading 1s for 1-D and 2-D */
    int64_t k[3];                      /* kernel dims */
    int64_t out[3];                    /* output dims */
    int64_t stride[3], dil[3], pad[3]; /* pad: leading padding per dim */
} ref_conv_int_geom;

/** y[n][m][od][oh][ow] = bias[m] + sum x * w; x NCDHW, w M x (C/group) x KD x KH x KW. bias may be NULL. */
void ref_conv_int32(const ref_conv_int_geom *g, const int32_t *x, const int32_t *w, const int32_t *bias, int32_t *y);

/** y (M x N) = a (M x K) * b (K x N), all row-major int32. */
void ref_matmul_int32(int64_t m, int64_t k, int64_t n, const int32_t *a, const int32_t *b, int32_t *y);

#endif

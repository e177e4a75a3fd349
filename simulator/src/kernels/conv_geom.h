/*
 * conv_geom.h: the geometry of a convolution or pooling window, shared by the reference and fast kernels.
 *
 * Kernels never see graph types: an op turns attributes and shapes into this plain struct once per eval.
 * Coordinates follow ONNX: input position i = o * stride + k * dilation - pad_begin for output o and
 * kernel tap k (for ConvTranspose the roles swap: output o = i * stride + k * dilation - pad_begin).
 * Convolutions need only the begin pads; the end pads are implied by the output size.
 */
#ifndef RD_KERNELS_CONV_GEOM_H
#define RD_KERNELS_CONV_GEOM_H

#include <stdbool.h>
#include <stdint.h>

#define CONV_MAX_SP 6 /* spatial dims: RD_MAX_RANK minus batch and channel */

typedef struct conv_geom {
    int nsp;                      /* number of spatial dims, 1..CONV_MAX_SP */
    int64_t batch;                /* N */
    int64_t in_c, out_c;          /* C and M (Conv: W is [M, C/group, k...]; ConvTranspose: [C, M/group, k...]) */
    int64_t group;                /* divides in_c and out_c */
    int64_t in[CONV_MAX_SP];      /* input spatial dims (X) */
    int64_t out[CONV_MAX_SP];     /* output spatial dims (Y) */
    int64_t k[CONV_MAX_SP];       /* kernel dims */
    int64_t stride[CONV_MAX_SP];  /* >= 1 */
    int64_t dil[CONV_MAX_SP];     /* >= 1 */
    int64_t pad[CONV_MAX_SP];     /* begin pads (ConvTranspose with output_shape may make them < 0) */
    int64_t pad_end[CONV_MAX_SP]; /* end pads: only AveragePool's count_include_pad reads them */
} conv_geom;

/** Product of the first nsp entries of v (1 for nsp == 0). */
static inline int64_t conv_prod(const int64_t *v, int nsp)
{
    int64_t p = 1;
    for (int i = 0; i < nsp; i++)
        p *= v[i];
    return p;
}

/** Advances the index vector idx over [0, dims) in row-major order; false once it wraps to all zeros. */
static inline bool conv_odo_next(int64_t *idx, const int64_t *dims, int n)
{
    for (int d = n - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return true;
        idx[d] = 0;
    }
    return false;
}

/** True when every kernel dim is 1, strides 1 and pads 0, so positions map one to one (a plain GEMM). */
static inline bool conv_is_pointwise(const conv_geom *g)
{
    for (int d = 0; d < g->nsp; d++)
        if (g->k[d] != 1 || g->stride[d] != 1 || g->pad[d] != 0 || g->in[d] != g->out[d])
            return false;
    return true;
}

#endif

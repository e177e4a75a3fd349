/*
 * ref_resize.h: the per-axis arithmetic of ONNX Resize/Upsample, graph-free. An N-d resize is separable:
 * each axis gets a table of taps (source index, weight) per output index, built here from the
 * coordinate transformation and interpolation mode, and the axes are then applied one after another
 * (innermost first, as the ONNX reference recursion does).
 */
#ifndef RD_KERNELS_REF_RESIZE_H
#define RD_KERNELS_REF_RESIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum rr_mode { RR_NEAREST, RR_LINEAR, RR_CUBIC } rr_mode;

typedef enum rr_coord {
    RR_HALF_PIXEL,
    RR_HALF_PIXEL_SYMMETRIC,
    RR_PYTORCH_HALF_PIXEL,
    RR_ALIGN_CORNERS,
    RR_ASYMMETRIC,
    RR_TF_HALF_PIXEL_FOR_NN,
    RR_TF_CROP_AND_RESIZE,
} rr_coord;

typedef enum rr_nearest {
    RR_ROUND_PREFER_FLOOR,
    RR_ROUND_PREFER_CEIL,
    RR_FLOOR,
    RR_CEIL,
    RR_SIMPLE, /* Upsample and Resize-10: floor when enlarging, ceil when shrinking */
} rr_nearest;

typedef struct rr_axis_params {
    rr_mode mode;
    rr_coord coord;
    rr_nearest nearest;
    double cubic_a;
    bool exclude_outside;
    bool antialias;
    int64_t in, out;           /* input and output length */
    double scale;              /* the scale of the coordinate transform (out/in when sizes were given) */
    double roi_start, roi_end; /* tf_crop_and_resize only */
} rr_axis_params;

/** Taps per output index for these parameters (1 nearest, 2 linear, 4 cubic, more with antialias). */
int rr_taps(const rr_axis_params *p);

/**
 * Fills idx[o*taps + t] (clamped into [0, in)) and w[o*taps + t] for every output index o, and
 * outside[o] (true where tf_crop_and_resize samples outside the input: the extrapolation value).
 * Weights are computed in double, following the ONNX reference (onnx/reference/ops/op_resize.py).
 */
void rr_axis_table(const rr_axis_params *p, int64_t *idx, double *w, unsigned char *outside);

/** True when the table maps every output index to the same input index with weight 1. */
bool rr_axis_is_identity(const rr_axis_params *p, const int64_t *idx, const double *w, const unsigned char *outside);

/**
 * One separable pass along an axis: src is [outer, in, inner], dst [outer, out, inner] (double
 * accumulators); rows whose outside flag is set get extrap.
 */
void rr_pass(const double *src, double *dst, int64_t outer, int64_t in, int64_t out, int64_t inner, int taps,
             const int64_t *idx, const double *w, const unsigned char *outside, double extrap);

#endif

/*
 * nn_spatial.h: the window attributes shared by Conv, ConvTranspose, MaxPool and AveragePool
 * (kernel_shape, strides, dilations, pads, auto_pad) and the output-size rules of the ONNX spec.
 */
#ifndef RD_OPS_NN_SPATIAL_H
#define RD_OPS_NN_SPATIAL_H

#include "../internal.h"
#include "../kernels/conv_geom.h"

typedef enum nn_auto_pad {
    NN_PAD_NOTSET = 0,
    NN_PAD_SAME_UPPER,
    NN_PAD_SAME_LOWER,
    NN_PAD_VALID,
} nn_auto_pad;

typedef struct nn_spatial {
    nn_auto_pad auto_pad;
    int n_kernel, n_strides, n_dil, n_pads; /* attribute lengths, 0 when absent */
    int64_t kernel[CONV_MAX_SP];            /* >= 1 */
    int64_t strides[CONV_MAX_SP];           /* >= 1 */
    int64_t dil[CONV_MAX_SP];               /* >= 1 */
    int64_t pads[2 * CONV_MAX_SP];          /* begins then ends, >= 0 */
} nn_spatial;

/** Reads and validates the window attributes of node n (values positive, lengths bounded). */
rd_status nn_spatial_parse(const sim_node *n, nn_spatial *s, rd_error *err);

/**
 * Fills g's spatial part for a forward window (Conv, pools) over input dims in[0..nsp-1] with kernel
 * dims k (the W dims for Conv, kernel_shape for pools): strides, dilations, begin/end pads and output
 * dims by the ONNX rules (ceil_mode for pools). Errors name the node when lengths disagree with nsp or
 * the window does not fit.
 */
rd_status nn_window_geom(const sim_op_ctx *ctx, const nn_spatial *s, int nsp, const int64_t *in, const int64_t *k,
                         bool ceil_mode, conv_geom *g, rd_error *err);

/** Checks that an INTS attribute given with length len matches nsp (0 = absent is fine). */
rd_status nn_check_len(const sim_op_ctx *ctx, const char *attr, int len, int nsp, rd_error *err);

#endif

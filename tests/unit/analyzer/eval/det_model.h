/* det_model.h: small detector-shaped models written by our own ONNX writer, for the decoder and eval tests. */
#ifndef RD_TEST_DET_MODEL_H
#define RD_TEST_DET_MODEL_H

#include "rknn_diag/simulator.h"

/** One output of a test model: its shape and its values when the image's mean pixel is 0. */
typedef struct det_out {
    const char *name;
    int rank;
    int64_t dims[5];
    const float *base; /* numel values (row-major) */
    float gain;        /* + gain * (mean of input channel 0) on every value: outputs that vary per image */
} det_out;

/**
 * Writes path: input "images" [1, 3, in_h, in_w]; each output = Reshape(MatMul(Flatten(GlobalAveragePool(x)),
 * W) + base), W sending channel 0's mean times gain to every value. With gain 0 the fp32 outputs are base
 * exactly. Returns RD_OK or the builder's error.
 */
rd_status det_model_write(const char *path, int in_h, int in_w, const det_out *outs, int n_outs, rd_error *err);

/** Writes a greyscale 8-bit PNG of w x h pixels (CUnit fatal failure if it cannot). */
void write_grey_png(const char *path, const uint8_t *px, int w, int h);

#endif

/* qcfg_build.h: a calibrated simulation's parameters as a .quantization.cfg (quantize, hybrid search). */
#ifndef RD_AN_QCFG_BUILD_H
#define RD_AN_QCFG_BUILD_H

#include "rknn_diag/simulator.h"

#include <stdio.h>

/** max|w| per output channel of a weight w (out: sw->n_scale entries), with the weight quantizer's channel map. */
rd_status an_weight_channel_max_abs(const rd_tensor *w, const rd_sim_weights *sw, float *out, rd_error *err);

/**
 * s's parameters under ONNX names of the optimised graph: activations in graph order, then weights, then the
 * float16 tensors in custom_quantize_layers. Prints a one-line count on errs.
 */
rd_status an_qcfg_collect(rd_sim *s, rd_qcfg *cfg, FILE *errs, rd_error *err);

/**
 * The toolkit's step-1 file at path with ours under its names where they match (by name and parameter
 * count); its other entries as they were. Reports the matches on errs.
 */
rd_status an_qcfg_merge_rknn(const rd_sim *s, const rd_qcfg *ours, const char *path, rd_qcfg *out, FILE *errs,
                             rd_error *err);

#endif

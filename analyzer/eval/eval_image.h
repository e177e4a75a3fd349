/* eval_image.h: a detection or segmentation sample as the model input, stretched or letterboxed. */
#ifndef RD_AN_EVAL_IMAGE_H
#define RD_AN_EVAL_IMAGE_H

#include "eval_task.h"

/**
 * Sample k of c's dataset as input 0 (in[0]) and where its pixels went (g): an image is decoded, then
 * letterboxed (letterbox) or stretched to the input size, then mean/std; a .npy sample is read as RKNN
 * reads it and g->orig_w stays 0. RD_E_INVAL for a model with more than one input or no known size.
 */
rd_status an_eval_image_input(an_eval_ctx *c, size_t k, bool letterbox, rd_tensor *in, an_eval_geom *g, rd_error *err);

#endif

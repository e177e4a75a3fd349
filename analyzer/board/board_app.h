/*
 * board_app.h: the application side of the emulated board (rknn-diag board-run, docs/board.md): the raw
 * input the application hands to librknnrt, the normalisation the runtime applies to it (the model's
 * mean/std/RGB2BGR), and the application mistakes made on purpose.
 */
#ifndef RD_AN_BOARD_APP_H
#define RD_AN_BOARD_APP_H

#include "rknn_diag/simulator.h"

#include <stdio.h>

typedef enum an_app_mistake {
    AN_MISTAKE_NONE = 0,
    AN_MISTAKE_RGB_BGR,      /* colour channels 0 and 2 swapped before the model */
    AN_MISTAKE_DOUBLE_NORM,  /* the application normalises itself; the runtime normalises again */
    AN_MISTAKE_NO_NORM,      /* the runtime skips the model's normalisation (pass_through with raw data) */
    AN_MISTAKE_NHWC_AS_NCHW, /* an NHWC buffer declared NCHW: its bytes reinterpreted */
    AN_MISTAKE_INT8_CLAMP,   /* uint8 values above 127 clamped into int8 */
    AN_MISTAKE_WRONG_SIZE,   /* resized to half the size, then back */
    AN_MISTAKE_OUTPUT_DTYPE, /* outputs saved as int8 codes instead of floats */
    AN_MISTAKE_COUNT
} an_app_mistake;

/** "rgb-bgr", "double-norm", "no-norm", ...; "none" for AN_MISTAKE_NONE. */
const char *an_app_mistake_name(an_app_mistake k);
/** RD_E_USAGE listing the valid names. */
rd_status an_app_mistake_parse(const char *name, an_app_mistake *out, rd_error *err);
/** True for the mistakes made on the input (all but output-dtype). */
bool an_app_mistake_on_input(an_app_mistake k);

/**
 * The raw input of a model input of shape dims (rank 4 NCHW for images) as the application holds it:
 * an image decoded (at most max_image_pixels, 0 for the default bound), turned grey or RGB and resized
 * to the model's size (uint8, NCHW); a .npy file in layout (NHWC files transposed to NCHW), uint8 and
 * int8 kept, other dtypes as float32. New tensor. *is_image tells which.
 */
rd_status an_app_raw_input(const char *path, rd_input_layout layout, uint64_t max_image_pixels, int rank,
                           const int64_t *dims, rd_tensor *out, bool *is_image, rd_error *err);

/**
 * What the runtime feeds the first layer from a raw NCHW input: RGB2BGR (images only), then
 * (x - mean) / std per channel, exactly as the host's input preparation computes it. New float32 tensor.
 */
rd_status an_app_normalise(const rd_tensor *raw, bool is_image, const rd_input_spec *spec, const char *name,
                           rd_tensor *out, rd_error *err);

/**
 * Makes an input mistake on raw (in place, or replaced by a new tensor of another dtype). spec is the
 * model's normalisation (double-norm applies it once more). RD_E_USAGE when the mistake cannot be made
 * on this input (rgb-bgr on 1 channel, int8-clamp on float data, ...); warns on errs when it changes
 * nothing (double-norm without mean/std).
 */
rd_status an_app_apply_mistake(an_app_mistake k, rd_tensor *raw, bool is_image, const rd_input_spec *spec,
                               const char *name, FILE *errs, rd_error *err);

/**
 * The output as the application saves it: float32 values, or with output-dtype the int8 codes it read
 * instead (the tensor's own parameters when quantized, else a symmetric max/127 scale). New tensor.
 */
rd_status an_app_output(const rd_tensor *out_f32, an_app_mistake k, const rd_sim_tensor *info, rd_tensor *saved,
                        rd_error *err);

#endif

/*
 * tfl_int.h: TensorFlow Lite's integer arithmetic, as its reference kernels compute it (tensorflow/lite/kernels/
 * internal/common.h and reference_integer_ops/{conv,depthwise_conv,fully_connected}.h), so a quantized .tflite
 * model run with its own quantization (`--precision model`) gives TFLite's codes bit for bit.
 *
 * Requantization: the real multiplier in_scale * w_scale / out_scale (double, from the float32 scales) is held
 * as a Q31 significand and a power-of-two shift (tfl_quantize_multiplier). An int32 accumulator (int8 models)
 * is scaled by a saturating rounding doubling high multiply and a rounding right shift (the default build,
 * not TFLITE_SINGLE_ROUNDING); an int64 accumulator (int16x8 models) by the significand reduced to 15 bits,
 * one multiply and one rounding shift. Pure functions, no graph types.
 */
#ifndef RD_SIM_KERNELS_TFL_INT_H
#define RD_SIM_KERNELS_TFL_INT_H

#include <stdbool.h>
#include <stdint.h>

/** TFLite's QuantizeMultiplier: m = significand * 2^(shift - 31), significand in [2^30, 2^31). */
void tfl_quantize_multiplier(double m, int32_t *significand, int *shift);

/** MultiplyByQuantizedMultiplier for an int32 accumulator (int8 kernels). */
int32_t tfl_mbqm32(int32_t x, int32_t significand, int shift);

/** MultiplyByQuantizedMultiplier for an int64 accumulator (int16x8 kernels); saturates instead of TFLite's
    debug check when x lies outside +-2^47. */
int32_t tfl_mbqm64(int64_t x, int32_t significand, int shift);

/** TFLite's rounding to the nearest integer, half away from zero (TfLiteRound, std::round). */
int64_t tfl_round(double v);

/** Geometry of one NHWC convolution (plain, depthwise, or a fully connected layer as a 1x1 one). */
typedef struct tfl_conv_geom {
    int64_t n, ih, iw, ic;    /* input NHWC */
    int64_t oh, ow, oc;       /* output H, W, C */
    int64_t kh, kw;           /* filter H, W */
    int64_t sh, sw, dh, dw;   /* strides and dilations */
    int64_t ph, pw;           /* padding before (top, left) */
    int64_t depth_multiplier; /* depthwise: output channels per input channel; 0 for a plain conv */
} tfl_conv_geom;

/** Per-output-channel requantization and the activation range. */
typedef struct tfl_requant {
    const int32_t *mult;      /* oc significands */
    const int *shift;         /* oc shifts */
    int32_t in_zp, out_zp;    /* the input's and output's zero points (0 for int16) */
    int32_t act_min, act_max; /* output clamp, in codes */
    bool wide;                /* int64 accumulator and the int16x8 requantization */
} tfl_requant;

/**
 * Conv2D / DepthwiseConv2D on integer codes: x is int8 or int16 (x16 selects), w int8 (plain: [oc, kh, kw, ic];
 * depthwise: [1, kh, kw, oc]), bias int32 (b32) or int64 (b64) per output channel or NULL, y int8 or int16 as x.
 */
void tfl_conv_int(const tfl_conv_geom *g, const tfl_requant *q, const void *x, bool x16, const int8_t *w,
                  const int32_t *b32, const int64_t *b64, void *y);

#endif

/*
 * quant.h: quantization math and the integer layer evaluations of the FP16/INT8 simulators
 * (docs/numerics.md, sections "FP16 simulator" and "INT8 simulator").
 *
 * Activations travel between layers as float32 values that are exact dequantized int8 codes
 * (scale * (q - zp)); the integer layers recover the codes, multiply them in int32 and hand back
 * float32 = dequantized accumulators. Nothing here keeps state.
 */
#ifndef RD_SIM_QUANT_H
#define RD_SIM_QUANT_H

#include "internal.h"

/* ---------------------------------------------------------------------------------------------------
 * Quantization math (quant.c)
 */

/**
 * Asymmetric int8 parameters of a calibrated range (RKNN's rule): the range is widened to include 0,
 * scale = (max - min) / 255 and zero_point = round(-128 - min / scale), ties to even, both computed in
 * double (RKNN's example min -1, max 1 gives -0.5 exactly, hence zero point 0), then the scale is stored
 * as float and the zero point clamped to [-128, 127]. A zero-width range gets scale 1, zero point 0.
 * NaN bounds count as 0; infinite ones as +-FLT_MAX.
 */
void sim_qparams_from_range(float min, float max, float *scale, int32_t *zero_point);

/**
 * In place: x = scale * (clamp(round(x / scale) + zp, -128, 127) - zp), the division in float32 and the
 * rounding half to even. saturated (may be NULL) receives the number of values that had to be clamped
 * (outside the code range before clamping, infinities included), rounded_to_zero (may be NULL) the
 * non-zero values that became 0. NaN becomes 0 (code zp) and is counted in neither. scale must be a
 * positive finite float; zp is meant to lie in [-128, 127] (clamped to +-2^20 if not).
 */
void sim_fake_quant_i8(float *x, int64_t n, float scale, int32_t zp, int64_t *saturated, int64_t *rounded_to_zero);

/**
 * int16 activations: the int8 rule widened. Asymmetric (dfp false): range widened to include 0,
 * scale = (max - min) / 65535, zero_point = round(-32768 - min / scale) ties to even, clamped to
 * [-32768, 32767]. Dynamic fixed point (dfp true, w16a16i_dfp): zero point 0 and scale = 2^-fl, the
 * smallest power of two with max(|min|, |max|) <= 32767 * scale (the largest fl whose grid holds the
 * range). A zero-width range gets scale 1, zero point 0.
 */
void sim_qparams16_from_range(float min, float max, bool dfp, float *scale, int32_t *zero_point);

/** sim_fake_quant_i8 on the int16 grid: codes clamped to [-32768, 32767]. */
void sim_fake_quant_i16(float *x, int64_t n, float scale, int32_t zp, int64_t *saturated, int64_t *rounded_to_zero);

/**
 * The centred codes q - zp as doubles, q = clamp(round(x / scale) + zp, qmin, qmax) with the arithmetic of
 * sim_fake_quant_i8 (the wide integer layers: int16 or int8 inputs of an int16 layer).
 */
void sim_quantize_centered(const float *x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, double *out);

/** sim_quantize_centered with float results (exact: the codes are small integers). */
void sim_quantize_centered_f32(const float *x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax,
                               float *out);

/** The int8 codes of sim_fake_quant_i8 (same arithmetic): q[i] = clamp(round(x[i] / scale) + zp, -128, 127). */
void sim_quantize_i8(const float *x, int64_t n, float scale, int32_t zp, int8_t *q);

/**
 * In place: x = half(x) back to float (round to nearest even, overflow to inf). overflow (may be NULL)
 * receives the count of finite values that became infinite, first_overflow (may be NULL) the flat index
 * of the first (-1 if none), max_abs (may be NULL) the largest finite magnitude before rounding (0 if
 * none). Uses F16C when the CPU has it (bit-identical to rd_f32_to_f16: tests/unit/simulator/fp16).
 */
void sim_round_f16(float *x, int64_t n, int64_t *overflow, int64_t *first_overflow, double *max_abs);

/**
 * Symmetric int8 weights: per output channel along axis (per_tensor: one scale), zero point 0,
 * scale = max|w| / 127 in float (a channel of zeros gets 1), q = clamp(round(w / scale), -127, 127)
 * with the division in float and ties to even. Output channels: Conv axis 0; Gemm axis 1 (transB = 0)
 * or 0 (transB = 1); MatMul the last axis of B (a 1-D B: per tensor). w must be float32 and finite.
 * *out_q (numel(w) codes, w's layout) and *out_scale (*out_n_scale entries) are malloc'ed, owned by the
 * caller. Errors: RD_E_INVAL (bad axis, non-finite weight: the message gives the flat offset), RD_E_NOMEM.
 */
rd_status sim_quant_weights_i8(const rd_tensor *w, int axis, bool per_tensor, int8_t **out_q, float **out_scale,
                               int *out_n_scale, rd_error *err);

/**
 * The same for weights whose output channels are split by groups over the leading axis: ConvTranspose's
 * W [C, M/group, k...] with axis 1 and group: channel = (c / (C / group)) * (M / group) + m, M scales.
 * group 1 is sim_quant_weights_i8.
 */
rd_status sim_quant_weights_i8_grouped(const rd_tensor *w, int axis, int64_t group, bool per_tensor, int8_t **out_q,
                                       float **out_scale, int *out_n_scale, rd_error *err);

/**
 * Weights quantized with given scales (an imported .quantization.cfg): n_scale is 1 or the channel count
 * of (axis, group) as above; each scale must be positive and finite. saturated (may be NULL) receives the
 * count of weights clamped to +-127. *out_q is malloc'ed, owned by the caller.
 */
rd_status sim_quant_weights_i8_scaled(const rd_tensor *w, int axis, int64_t group, const float *scale, int n_scale,
                                      int8_t **out_q, int64_t *saturated, rd_error *err);

/**
 * Asymmetric int8 weights, as the .rknn files of RKNN-Toolkit2 hold them (docs/numerics.md, "Weights"): per
 * output channel (channel map as sim_quant_weights_i8_grouped; per_tensor: one), each channel's range
 * [min(w, 0), max(w, 0)] gives its scale and zero point by sim_qparams_from_range, and
 * q = clamp(round(w / scale) + zp, -128, 127), the division in float, ties to even. *out_q, *out_scale and
 * *out_zp (*out_n entries each) are malloc'ed, owned by the caller.
 */
rd_status sim_quant_weights_i8_asym(const rd_tensor *w, int axis, int64_t group, bool per_tensor, int8_t **out_q,
                                    float **out_scale, int32_t **out_zp, int *out_n, rd_error *err);

/**
 * sim_quant_weights_i8_scaled with zero points (zp: n_scale entries in [-128, 127]): asymmetric codes
 * q = clamp(round(w / scale) + zp, -128, 127); saturated counts the clamped weights. zp NULL: the symmetric
 * codes of sim_quant_weights_i8_scaled (clamped to +-127).
 */
rd_status sim_quant_weights_i8_scaled_zp(const rd_tensor *w, int axis, int64_t group, const float *scale,
                                         const int32_t *zp, int n_scale, int8_t **out_q, int64_t *saturated,
                                         rd_error *err);

/**
 * Symmetric weights of `bits` bits (2..16; 16 for int16 layers, 8 for w8a16): qmax = 2^(bits-1) - 1,
 * scale = max|w| / qmax per channel (or tensor), or with pow2 (dfp) the smallest power of two with
 * max|w| <= qmax * scale; q = clamp(round(w / scale), -qmax, qmax) ties to even. Channel map as
 * sim_quant_weights_i8_grouped. *out_q and *out_scale are malloc'ed, owned by the caller.
 */
rd_status sim_quant_weights_wide(const rd_tensor *w, int axis, int64_t group, bool per_tensor, int bits, bool pow2,
                                 int16_t **out_q, float **out_scale, int *out_n_scale, rd_error *err);
/** The same with given scales (imported); saturated (may be NULL) counts weights clamped to +-qmax. */
rd_status sim_quant_weights_wide_scaled(const rd_tensor *w, int axis, int64_t group, int bits, const float *scale,
                                        int n_scale, int16_t **out_q, int64_t *saturated, rd_error *err);

/*
 * The int16 layers accumulate in double: every operand is an integer (codes minus zero point below 2^16,
 * weights below 2^15), so every product is an integer below 2^31 and every partial sum is exact while
 * it stays below 2^53, whatever order BLAS sums in. Layers are refused beyond SIM_ACC16_MAX_K taps
 * (2^21 * 2^31 = 2^52), and a bias is clamped to +-SIM_ACC16_LIMIT, so no sum can leave the exact range.
 */
#define SIM_ACC16_MAX_K ((int64_t)1 << 21)
#define SIM_ACC16_LIMIT 4503599627370496.0 /* 2^52 */

/**
 * One weight value w quantized as a channel holding only w is (sim_quant_weights_i8_grouped for bits 8,
 * sim_quant_weights_wide otherwise): *scale = |w| / qmax in float (with pow2 the power of two of
 * sim_quant_weights_wide; 1 for w = 0), *code = clamp(round(w / scale), -qmax, qmax), ties to even. For
 * the constant weights of a lowered op (GlobalAveragePool's 1 / (h * w)).
 */
void sim_quant_weight_one(float w, int bits, bool pow2, float *scale, int32_t *code);

/** A bias value as an integer at scale (in_scale * w_scale) for the wide accumulator: round half to even,
    clamped to +-SIM_ACC16_LIMIT; NaN gives 0. */
double sim_quant_bias_wide(double b, double scale);

/** A bias value quantized to int32 at scale (in_scale * w_scale, in double): round half to even, saturated
    to the int32 range; NaN gives 0. */
int32_t sim_quant_bias_i32(double b, double scale);

/* ---------------------------------------------------------------------------------------------------
 * Integer layer evaluations (quant_eval.c). ctx is the node's context as the executor built it: input 0
 * holds float32 values that are exact dequantized int8 codes for (in_scale, in_zp); they are recovered
 * with round(x / scale) + zp, saturating. Output 0 (float32, allocated) receives, per output channel c,
 *     out = (float)((double)acc * in_scale * w_scale[c])
 * where acc is the int32 accumulator sum (x_q - in_zp) * (w_q - w_zp[c]) (+ the bias quantized by
 * sim_quant_bias_i32 at in_scale * w_scale[c], added into the accumulator, wrapping like an int32 register).
 * A weight zero point (asymmetric weights, w_zp non-NULL) is applied as a correction after the symmetric
 * product: acc = sum (x_q - in_zp) * w_q - w_zp[c] * sum (x_q - in_zp) over the same taps, in wrapping
 * 32-bit arithmetic, so acc is exactly the int32 register's value of the true sum (bit-exact whenever it
 * fits int32: |x_q - in_zp|, |w_q - w_zp| <= 255, so any K up to 33025 taps).
 */

typedef struct sim_q8_layer {
    float in_scale;       /* input 0's quantization */
    int32_t in_zp;        /* in [-128, 127] */
    const int8_t *w_q;    /* input 1 quantized (sim_quant_weights_i8*), in the float weight's layout;
                             NULL for MatMul of two activations */
    const float *w_scale; /* n_w_scale entries: 1 (per tensor) or one per output channel */
    int n_w_scale;
    const int32_t *w_zp; /* n_w_scale weight zero points in [-128, 127] (asymmetric weights); NULL: all 0 */
    float b_scale;       /* MatMul with w_q == NULL: input 1's activation scale and zero point */
    int32_t b_zp;
    bool c_const; /* Gemm: input 2 (C) is a constant (it is folded into the accumulator when a vector) */
} sim_q8_layer;

/**
 * Conv: every attribute the float Conv handles (groups, depthwise, dilations, pads, strides, auto_pad,
 * 1-D to 6-D). Bias (input 2) quantized into the accumulator. Scratch bounded by the im2col tile budget
 * plus one (batch, group) slice of input codes.
 */
rd_status sim_q8_conv_eval(sim_op_ctx *ctx, const sim_q8_layer *q, rd_error *err);

/** ConvTranspose (W [C, M/group, k...], weights quantized with sim_quant_weights_i8_grouped(axis 1)). */
rd_status sim_q8_conv_transpose_eval(sim_op_ctx *ctx, const sim_q8_layer *q, rd_error *err);

/**
 * Gemm: Y = alpha * A B + beta * C. A constant vector C (c_const, broadcast along rows; alpha != 0) is
 * quantized into the accumulator as beta * C / alpha at in_scale * w_scale[n] and Y = alpha * deq(acc);
 * any other C is added in double: Y = alpha * deq(acc) + beta * C. Weights: channels along N.
 */
rd_status sim_q8_gemm_eval(sim_op_ctx *ctx, const sim_q8_layer *q, rd_error *err);

/**
 * MatMul with numpy batching and broadcasting. w_q set: B constant, channels along its last axis (n);
 * w_q NULL: B is an activation quantized with (b_scale, b_zp), out = acc * in_scale * b_scale.
 */
rd_status sim_q8_matmul_eval(sim_op_ctx *ctx, const sim_q8_layer *q, rd_error *err);

/**
 * GlobalAveragePool lowered to depthwise convs (kernels/gap_conv.h; only in_scale and in_zp are used): the
 * input's int8 codes, each stage's weight 1 / (kh * kw) quantized by the int8 weight rule
 * (sim_quant_weight_one), the intermediate of a two-stage plan requantized to the input's own parameters
 * (a guess: RKNN does not publish that tensor's calibration). A rank other than 4: sim_defer (float kernel).
 */
rd_status sim_q8_gap_conv_eval(sim_op_ctx *ctx, const sim_q8_layer *q, rd_error *err);

/** The lowered GlobalAveragePool of both widths: input codes on the (in_scale, in_zp) grid of in_bits bits,
    weights of w_bits bits (w_pow2: power-of-two scales). */
rd_status sim_gap_conv_codes(sim_op_ctx *ctx, float in_scale, int32_t in_zp, int in_bits, int w_bits, bool w_pow2,
                             rd_error *err);

/** The weight scales of an integer layer of either width against its n_chan output channels: one or n_chan of
    them, each positive and finite; zp (NULL: none) the int8 zero points, each in [-128, 127]. */
rd_status sim_check_weight_scales(const sim_op_ctx *ctx, const float *scale, const int32_t *zp, int n_scale,
                                  int64_t n_chan, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Wide integer layer evaluations (quant16_eval.c): the layers of int16 tensors (custom_quantize_layers
 * int16, w16a16i, w8a16, w16a16i_dfp). Input 0 holds exact dequantized codes of its own grid (int16, or
 * int8 when the producer is an int8 layer: the codes are taken as they are, no requantization); they are
 * recovered as centred codes (q - zp). The accumulator is the exact integer sum of (x_q - x_zp) * w_q
 * (+ the bias as an integer at in_scale * w_scale[c], sim_quant_bias_wide), computed in double (exact:
 * see SIM_ACC16_MAX_K), and out = (float)(acc * in_scale * w_scale[c]) as in the int8 layers.
 */

typedef struct sim_q16_layer {
    float in_scale;
    int32_t in_zp;
    int in_bits;          /* 8 or 16: the grid input 0 is held on */
    const double *w_c;    /* weight codes as doubles, in the float weight's layout; NULL for MatMul of two
                             activations */
    const float *w_scale; /* 1 or one per output channel */
    int n_w_scale;
    float b_scale; /* MatMul of two activations: input 1's grid */
    int32_t b_zp;
    int b_bits;
    bool c_const; /* Gemm: C is a constant (a vector C is folded into the accumulator) */
    int w_bits;   /* a lowered op's constant weights (GlobalAveragePool): their width */
    bool w_pow2;  /* and power-of-two scales (w16a16i_dfp) */
} sim_q16_layer;

rd_status sim_q16_conv_eval(sim_op_ctx *ctx, const sim_q16_layer *q, rd_error *err);
rd_status sim_q16_conv_transpose_eval(sim_op_ctx *ctx, const sim_q16_layer *q, rd_error *err);
rd_status sim_q16_gemm_eval(sim_op_ctx *ctx, const sim_q16_layer *q, rd_error *err);
rd_status sim_q16_matmul_eval(sim_op_ctx *ctx, const sim_q16_layer *q, rd_error *err);
/** sim_q8_gap_conv_eval on the input's int16 (or int8) grid with w_bits-bit weights, summed exactly. */
rd_status sim_q16_gap_conv_eval(sim_op_ctx *ctx, const sim_q16_layer *q, rd_error *err);

#endif /* RD_SIM_QUANT_H */

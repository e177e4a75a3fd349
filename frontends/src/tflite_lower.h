/*
 * tflite_lower.h: the writer context shared by tflite_lower.c (driver, constants, names, the model-precision
 * graph) and tflite_ops.c (each TFLite operator as ONNX nodes, float32).
 *
 * Names: every TFLite tensor keeps the model's name (made unique: an empty name becomes "tensor_N", a repeated
 * one "name:2"); values the translation adds are named after the tensor they serve with a suffix
 * (":nchw", ":act", ":dq", ":float", ...), also unique. NHWC stays the layout of every model tensor: an
 * operator that ONNX defines on NCHW (Conv, pools, Resize, DepthToSpace) reads a Transpose of its input made
 * once per tensor and writes a Transpose back to the model's tensor (docs/frontends.md says why).
 */
#ifndef RD_FE_TFLITE_LOWER_H
#define RD_FE_TFLITE_LOWER_H

#include "tflite.h"

typedef struct tl_ctx {
    const tfl_model *m;
    bool qmode; /* model precision: integer codes with the model's quantization */
    rd_onnx_builder *b;
    fe_names names;
    const char **tname; /* per tensor: its ONNX name */
    const char **c_f32; /* per tensor: its float32 initializer once written */
    const char **c_raw; /* per tensor: its initializer as stored once written */
    bool *tname_taken;  /* per tensor: an initializer already uses tname */
    fe_map nchw;        /* activation name -> its NCHW Transpose (value: const char *) */
    fe_unsupported unsup;
    const char *in_override[RD_FE_MAX_OP_IO]; /* quantized fallback: operand names of the current operator */
    size_t op_index;
    rd_status st; /* sticky: the first failure */
    rd_error *err;
} tl_ctx;

/* ---- tflite_lower.c ---- */

/** Records a failure (the first one wins) and returns it. */
#define tl_fail(L, code, ...) fe_fail(&(L)->st, (L)->err, code, (L)->m->path, __VA_ARGS__)
/** A fresh value name base + suffix. */
const char *tl_fresh(tl_ctx *L, const char *base, const char *suffix);
/** The operand of input k of o: an initializer for a constant (float32 when it is float or quantized, as
    stored otherwise), else the tensor's value (or the quantized fallback's float copy). NULL for an omitted
    input. */
const char *tl_in(tl_ctx *L, const tfl_op *o, int k);
/** The float32 initializer of constant tensor t, optionally transposed by perm (rank entries; NULL: none). */
const char *tl_const_f32(tl_ctx *L, int t, const int *perm);
/** The initializer of constant tensor t as stored (dtype and bytes of the model). */
const char *tl_const_raw(tl_ctx *L, int t);
/** A new 1-D int64 initializer. */
const char *tl_const_i64(tl_ctx *L, const char *base, const char *suffix, const int64_t *v, int n);
/** A new float32 scalar initializer. */
const char *tl_const_scalar(tl_ctx *L, const char *base, const char *suffix, float v);
/** The values of constant int tensor t (int32 or int64) into out[0..*n) (at most max); false with a failure
    recorded when it is not a constant int vector. */
bool tl_const_ints(tl_ctx *L, const tfl_op *o, int k, int64_t *out, int max, int *n);
/** Appends a node; NULL (failure recorded) on error. */
rd_onnx_node *tl_node(tl_ctx *L, const char *op_type, const char *out_base, const char *const *in, int n_in,
                      const char *const *out, int n_out);
/** The NCHW Transpose of an NHWC activation (made once per value). */
const char *tl_nchw(tl_ctx *L, const char *nhwc);
/** Transpose NCHW -> NHWC into out. */
void tl_to_nhwc(tl_ctx *L, const char *nchw, const char *out);
/** The fused activation act applied to x, written to out (a plain Identity-free rename is impossible, so
    act NONE with x != out writes an Identity). */
void tl_activation(tl_ctx *L, int act, const char *x, const char *out);

/* Options table readers (defaults when the operator has no options); the type must be expected_type. */
bool tl_opts(tl_ctx *L, const tfl_op *o, int expected_type);
int32_t tl_opt_i32(tl_ctx *L, const tfl_op *o, unsigned slot, int32_t def);
/** A byte field (enums: padding, fused activation, weights format). */
int tl_opt_u8(tl_ctx *L, const tfl_op *o, unsigned slot, int def);
float tl_opt_f32(tl_ctx *L, const tfl_op *o, unsigned slot, float def);
bool tl_opt_bool(tl_ctx *L, const tfl_op *o, unsigned slot, bool def);

/** "operator #12 'conv1' (CONV_2D)" for messages, into buf. */
const char *tl_where(tl_ctx *L, const tfl_op *o, char *buf, size_t len);

/* ---- tflite_ops.c ---- */

/** Writes operator o as float32 ONNX nodes producing out[0..o->n_out). false when the operator kind is not
    supported (nothing written; the caller records it). */
bool tl_lower_float(tl_ctx *L, const tfl_op *o, const char *const *out);

#endif

/*
 * tflite_ops.c: each supported TFLite operator as float32 ONNX nodes (tflite_lower.h). Options slots are those
 * of schema.fbs's *Options tables (the union type number is checked by tl_opts). TFLite's SAME padding is
 * ONNX's SAME_UPPER (the extra row and column at the end), with dilations as TensorFlow counts them.
 */
#include "tflite_lower.h"

#include <stdint.h>

/* BuiltinOptions union types */
enum {
    OPT_CONV = 1,
    OPT_DWCONV = 2,
    OPT_POOL = 5,
    OPT_FC = 8,
    OPT_SOFTMAX = 9,
    OPT_CONCAT = 10,
    OPT_ADD = 11,
    OPT_RESIZE_BILINEAR = 15,
    OPT_SPACE_TO_DEPTH = 19,
    OPT_MUL = 21,
    OPT_GATHER = 23,
    OPT_REDUCER = 27,
    OPT_SUB = 28,
    OPT_DIV = 29,
    OPT_STRIDED_SLICE = 32,
    OPT_SPLIT = 35,
    OPT_RESIZE_NEAREST = 74,
    OPT_LEAKY_RELU = 75,
    OPT_MIRROR_PAD = 77,
    OPT_DEPTH_TO_SPACE = 94,
};

#define IN1(a) ((const char *const[]){a})
#define OUT1(a) ((const char *const[]){a})

/* The name a step writes: out when it is the last step, else a fresh value named after out. */
static const char *step(tl_ctx *L, bool last, const char *out, const char *suffix)
{
    return last ? out : tl_fresh(L, out, suffix);
}

static const tfl_tensor *tensor_of(tl_ctx *L, const tfl_op *o, int k, bool in)
{
    int t = in ? (k < o->n_in ? o->in[k] : -1) : (k < o->n_out ? o->out[k] : -1);
    return t >= 0 ? &L->m->tensors[t] : NULL;
}

/* The op's activation input must be 4-D NHWC for the NCHW operators. */
static bool is_nhwc(tl_ctx *L, const tfl_op *o)
{
    const tfl_tensor *x = tensor_of(L, o, 0, true);
    return x && x->rank == 4;
}

/* act applied to y_nchw, then back to NHWC into out. */
static void finish_nchw(tl_ctx *L, int act, const char *y_nchw, const char *out)
{
    if (act != TFL_ACT_NONE) {
        const char *a = tl_fresh(L, out, ":act_nchw");
        tl_activation(L, act, y_nchw, a);
        y_nchw = a;
    }
    tl_to_nhwc(L, y_nchw, out);
}

/* x -> node -> act -> out, the node writing out directly when there is no activation. */
static rd_onnx_node *with_act(tl_ctx *L, const char *op_type, const char *const *in, int n_in, int act, const char *out)
{
    const char *y = step(L, act == TFL_ACT_NONE, out, ":preact");
    rd_onnx_node *n = tl_node(L, op_type, y, in, n_in, OUT1(y), 1);
    if (n && act != TFL_ACT_NONE)
        tl_activation(L, act, y, out);
    return n;
}

/* A weight in ONNX's layout: a transposed initializer for a constant, else a Transpose node (a weight computed
   from constants, as DEQUANTIZE of float16 weights: folded at load). */
static const char *weight(tl_ctx *L, const tfl_op *o, int k, const int *perm, int rank)
{
    const tfl_tensor *w = tensor_of(L, o, k, true);
    if (w->data)
        return tl_const_f32(L, o->in[k], perm);
    const char *in = tl_in(L, o, k);
    if (!perm)
        return in;
    const char *y = tl_fresh(L, in, ":t");
    rd_onnx_node *n = tl_node(L, "Transpose", y, IN1(in), 1, OUT1(y), 1);
    int64_t p[4];
    for (int d = 0; d < rank; d++)
        p[d] = perm[d];
    if (n)
        rd_onnx_attr_ints(n, "perm", p, (size_t)rank);
    return y;
}

static bool conv(tl_ctx *L, const tfl_op *o, const char *const *out, bool dw)
{
    const tfl_tensor *x = tensor_of(L, o, 0, true), *w = tensor_of(L, o, 1, true);
    if (!is_nhwc(L, o) || !w || w->rank != 4)
        return false;
    tl_opts(L, o, dw ? OPT_DWCONV : OPT_CONV);
    int pad = tl_opt_u8(L, o, 0, 0), act = tl_opt_u8(L, o, dw ? 4 : 3, 0);
    int64_t sw = tl_opt_i32(L, o, 1, 1), sh = tl_opt_i32(L, o, 2, 1);
    int64_t dil_w = tl_opt_i32(L, o, dw ? 5 : 4, 1), dil_h = tl_opt_i32(L, o, dw ? 6 : 5, 1);
    static const int ohwi_to_oihw[4] = {0, 3, 1, 2}, dw_to_oihw[4] = {3, 0, 1, 2};
    const char *in[3] = {tl_nchw(L, tl_in(L, o, 0)), weight(L, o, 1, dw ? dw_to_oihw : ohwi_to_oihw, 4),
                         tl_in(L, o, 2)};
    const char *y = tl_fresh(L, out[0], ":nchw");
    rd_onnx_node *n = tl_node(L, "Conv", y, in, in[2] ? 3 : 2, OUT1(y), 1);
    if (!n)
        return true;
    rd_onnx_attr_ints(n, "strides", (const int64_t[]){sh, sw}, 2);
    rd_onnx_attr_ints(n, "dilations", (const int64_t[]){dil_h, dil_w}, 2);
    rd_onnx_attr_string(n, "auto_pad", pad == 0 ? "SAME_UPPER" : "VALID");
    if (dw)
        rd_onnx_attr_int(n, "group", x->dims[3]);
    finish_nchw(L, act, y, out[0]);
    return true;
}

static bool fully_connected(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    const tfl_tensor *x = tensor_of(L, o, 0, true), *w = tensor_of(L, o, 1, true), *y = tensor_of(L, o, 0, false);
    if (!x || !w || w->rank != 2)
        return false;
    tl_opts(L, o, OPT_FC);
    int act = tl_opt_u8(L, o, 0, 0);
    if (tl_opt_u8(L, o, 1, 0) != 0)
        return false; /* shuffled int8 weights */
    const char *a = tl_in(L, o, 0);
    if (x->rank != 2) {
        const char *a2 = tl_fresh(L, a, ":2d");
        const char *shape = tl_const_i64(L, a2, ":shape", (const int64_t[]){-1, w->dims[1]}, 2);
        tl_node(L, "Reshape", a2, (const char *const[]){a, shape}, 2, OUT1(a2), 1);
        a = a2;
    }
    bool reshape = y->rank != 2;
    const char *g = step(L, !reshape && act == TFL_ACT_NONE, out[0], ":gemm");
    const char *b = tl_in(L, o, 2);
    rd_onnx_node *n =
        tl_node(L, "Gemm", g, (const char *const[]){a, weight(L, o, 1, NULL, 2), b}, b ? 3 : 2, OUT1(g), 1);
    if (n)
        rd_onnx_attr_int(n, "transB", 1);
    if (reshape) {
        const char *r = step(L, act == TFL_ACT_NONE, out[0], ":reshape");
        const char *shape = tl_const_i64(L, r, ":shape", y->dims, y->rank);
        tl_node(L, "Reshape", r, (const char *const[]){g, shape}, 2, OUT1(r), 1);
        g = r;
    }
    if (act != TFL_ACT_NONE)
        tl_activation(L, act, g, out[0]);
    return true;
}

static bool pool(tl_ctx *L, const tfl_op *o, const char *const *out, const char *op_type)
{
    if (!is_nhwc(L, o))
        return false;
    tl_opts(L, o, OPT_POOL);
    int pad = tl_opt_u8(L, o, 0, 0), act = tl_opt_u8(L, o, 5, 0);
    const char *y = tl_fresh(L, out[0], ":nchw");
    rd_onnx_node *n = tl_node(L, op_type, y, IN1(tl_nchw(L, tl_in(L, o, 0))), 1, OUT1(y), 1);
    if (!n)
        return true;
    rd_onnx_attr_ints(n, "kernel_shape", (const int64_t[]){tl_opt_i32(L, o, 4, 1), tl_opt_i32(L, o, 3, 1)}, 2);
    rd_onnx_attr_ints(n, "strides", (const int64_t[]){tl_opt_i32(L, o, 2, 1), tl_opt_i32(L, o, 1, 1)}, 2);
    rd_onnx_attr_string(n, "auto_pad", pad == 0 ? "SAME_UPPER" : "VALID");
    finish_nchw(L, act, y, out[0]);
    return true;
}

static bool binary(tl_ctx *L, const tfl_op *o, const char *const *out, const char *op_type, int opt_type)
{
    if (o->n_in != 2)
        return false;
    int act = TFL_ACT_NONE;
    if (opt_type && tl_opts(L, o, opt_type))
        act = tl_opt_u8(L, o, 0, 0);
    with_act(L, op_type, (const char *const[]){tl_in(L, o, 0), tl_in(L, o, 1)}, 2, act, out[0]);
    return true;
}

static bool concat(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    const char *in[RD_FE_MAX_OP_IO];
    for (int k = 0; k < o->n_in; k++)
        in[k] = tl_in(L, o, k);
    tl_opts(L, o, OPT_CONCAT);
    rd_onnx_node *n = with_act(L, "Concat", in, o->n_in, tl_opt_u8(L, o, 1, 0), out[0]);
    if (n)
        rd_onnx_attr_int(n, "axis", tl_opt_i32(L, o, 0, 0));
    return true;
}

/* RESHAPE, SQUEEZE, EXPAND_DIMS: to the output's declared shape (TFLite tensors carry their static shape). */
static bool reshape(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    const tfl_tensor *y = tensor_of(L, o, 0, false);
    const char *shape = tl_const_i64(L, out[0], ":shape", y->dims, y->rank);
    rd_onnx_node *n = tl_node(L, "Reshape", out[0], (const char *const[]){tl_in(L, o, 0), shape}, 2, out, 1);
    if (n)
        rd_onnx_attr_int(n, "allowzero", 1);
    return true;
}

static bool unary(tl_ctx *L, const tfl_op *o, const char *const *out, const char *op_type)
{
    tl_node(L, op_type, out[0], IN1(tl_in(L, o, 0)), 1, out, 1);
    return true;
}

static bool softmax(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    float beta = tl_opts(L, o, OPT_SOFTMAX) ? tl_opt_f32(L, o, 0, 1.0f) : 1.0f;
    const char *x = tl_in(L, o, 0);
    if (beta != 1.0f) {
        const char *xb = tl_fresh(L, out[0], ":beta_x");
        tl_node(L, "Mul", xb, (const char *const[]){x, tl_const_scalar(L, out[0], ":beta", beta)}, 2, OUT1(xb), 1);
        x = xb;
    }
    rd_onnx_node *n = tl_node(L, "Softmax", out[0], IN1(x), 1, out, 1);
    if (n)
        rd_onnx_attr_int(n, "axis", -1);
    return true;
}

static bool pad(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    const tfl_tensor *x = tensor_of(L, o, 0, true);
    int64_t p[2 * RD_MAX_RANK], pads[2 * RD_MAX_RANK];
    int n = 0;
    if (!x || !tl_const_ints(L, o, 1, p, 2 * RD_MAX_RANK, &n) || n != 2 * x->rank)
        return L->st != RD_OK;
    for (int d = 0; d < x->rank; d++) {
        pads[d] = p[2 * d];
        pads[x->rank + d] = p[2 * d + 1];
    }
    const char *mode = "constant";
    if (o->code == TFL_MIRROR_PAD) {
        if (tl_opts(L, o, OPT_MIRROR_PAD) && tl_opt_u8(L, o, 0, 0) != 0)
            return false; /* SYMMETRIC has no ONNX mode */
        mode = "reflect";
    }
    const char *in[3] = {tl_in(L, o, 0), tl_const_i64(L, out[0], ":pads", pads, 2 * x->rank),
                         o->code == TFL_PADV2 ? tl_in(L, o, 2) : NULL};
    rd_onnx_node *nd = tl_node(L, "Pad", out[0], in, in[2] ? 3 : 2, out, 1);
    if (nd)
        rd_onnx_attr_string(nd, "mode", mode);
    return true;
}

static bool reduce(tl_ctx *L, const tfl_op *o, const char *const *out, const char *op_type)
{
    int64_t axes[RD_MAX_RANK];
    int n = 0;
    if (!tl_const_ints(L, o, 1, axes, RD_MAX_RANK, &n))
        return true;
    bool keep = tl_opts(L, o, OPT_REDUCER) && tl_opt_bool(L, o, 0, false);
    rd_onnx_node *nd = tl_node(L, op_type, out[0], IN1(tl_in(L, o, 0)), 1, out, 1);
    if (nd) {
        rd_onnx_attr_ints(nd, "axes", axes, (size_t)n);
        rd_onnx_attr_int(nd, "keepdims", keep);
    }
    return true;
}

static bool resize(tl_ctx *L, const tfl_op *o, const char *const *out, bool bilinear)
{
    const tfl_tensor *x = tensor_of(L, o, 0, true);
    int64_t hw[2];
    int n = 0;
    if (!is_nhwc(L, o) || !tl_const_ints(L, o, 1, hw, 2, &n) || n != 2)
        return L->st != RD_OK;
    bool align = false, half = false;
    if (tl_opts(L, o, bilinear ? OPT_RESIZE_BILINEAR : OPT_RESIZE_NEAREST)) {
        align = tl_opt_bool(L, o, bilinear ? 2 : 0, false);
        half = tl_opt_bool(L, o, bilinear ? 3 : 1, false);
    }
    const char *y = tl_fresh(L, out[0], ":nchw");
    const char *sizes = tl_const_i64(L, y, ":sizes", (const int64_t[]){x->dims[0], x->dims[3], hw[0], hw[1]}, 4);
    rd_onnx_node *nd =
        tl_node(L, "Resize", y, (const char *const[]){tl_nchw(L, tl_in(L, o, 0)), NULL, NULL, sizes}, 4, OUT1(y), 1);
    if (!nd)
        return true;
    fe_tf_resize_attrs(nd, bilinear, align, half);
    finish_nchw(L, TFL_ACT_NONE, y, out[0]);
    return true;
}

static bool transpose(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    int64_t perm[RD_MAX_RANK];
    int n = 0;
    if (!tl_const_ints(L, o, 1, perm, RD_MAX_RANK, &n))
        return true;
    rd_onnx_node *nd = tl_node(L, "Transpose", out[0], IN1(tl_in(L, o, 0)), 1, out, 1);
    if (nd)
        rd_onnx_attr_ints(nd, "perm", perm, (size_t)n);
    return true;
}

/* STRIDED_SLICE (masks as TensorFlow defines them) and SLICE (begin, size) as Slice, then the declared shape. */
static bool slice(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    const tfl_tensor *x = tensor_of(L, o, 0, true), *y = tensor_of(L, o, 0, false);
    int64_t begin[RD_MAX_RANK], end[RD_MAX_RANK], strides[RD_MAX_RANK], axes[RD_MAX_RANK];
    int nb = 0, ne = 0, ns = 0;
    bool strided = o->code == TFL_STRIDED_SLICE;
    if (!x || !tl_const_ints(L, o, 1, begin, RD_MAX_RANK, &nb) || !tl_const_ints(L, o, 2, end, RD_MAX_RANK, &ne))
        return L->st != RD_OK;
    if (strided && !tl_const_ints(L, o, 3, strides, RD_MAX_RANK, &ns))
        return true;
    if (nb != ne || (strided && ns != nb) || nb > x->rank)
        return false;
    int32_t bmask = 0, emask = 0, shrink = 0;
    if (strided && tl_opts(L, o, OPT_STRIDED_SLICE)) {
        bmask = tl_opt_i32(L, o, 0, 0);
        emask = tl_opt_i32(L, o, 1, 0);
        shrink = tl_opt_i32(L, o, 4, 0);
        if (tl_opt_i32(L, o, 2, 0) || tl_opt_i32(L, o, 3, 0) || tl_opt_bool(L, o, 5, false))
            return false; /* ellipsis, new axes, offset */
    }
    for (int i = 0; i < nb; i++) {
        int64_t s = strided ? strides[i] : 1;
        if (s == 0)
            return false;
        axes[i] = i;
        if (!strided) {
            end[i] = end[i] < 0 ? INT64_MAX : begin[i] + end[i]; /* SLICE: size, -1 for "to the end" */
        } else if (shrink & (1 << i)) {
            end[i] = begin[i] == -1 ? INT64_MAX : begin[i] + 1;
            s = 1;
        } else {
            if (bmask & (1 << i))
                begin[i] = s > 0 ? 0 : INT64_MAX;
            if (emask & (1 << i))
                end[i] = s > 0 ? INT64_MAX : INT64_MIN;
        }
        strides[i] = s;
    }
    bool squeeze = shrink != 0;
    const char *s_out = step(L, !squeeze, out[0], ":slice");
    const char *in[5] = {tl_in(L, o, 0), tl_const_i64(L, s_out, ":starts", begin, nb),
                         tl_const_i64(L, s_out, ":ends", end, nb), tl_const_i64(L, s_out, ":axes", axes, nb),
                         tl_const_i64(L, s_out, ":steps", strides, nb)};
    tl_node(L, "Slice", s_out, in, 5, OUT1(s_out), 1);
    if (squeeze) {
        const char *shape = tl_const_i64(L, out[0], ":shape", y->dims, y->rank);
        tl_node(L, "Reshape", out[0], (const char *const[]){s_out, shape}, 2, out, 1);
    }
    return true;
}

static bool leaky_relu(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    float alpha = tl_opts(L, o, OPT_LEAKY_RELU) ? tl_opt_f32(L, o, 0, 0.2f) : 0.2f;
    rd_onnx_node *n = tl_node(L, "LeakyRelu", out[0], IN1(tl_in(L, o, 0)), 1, out, 1);
    if (n)
        rd_onnx_attr_float(n, "alpha", alpha);
    return true;
}

static bool dequantize(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    const tfl_tensor *x = tensor_of(L, o, 0, true);
    if (x && x->data && x->dtype == RD_DT_F16 && !L->in_override[0]) { /* float16 weights: the model's own bytes */
        const char *h = tl_const_raw(L, o->in[0]);
        rd_onnx_node *n = tl_node(L, "Cast", out[0], IN1(h), 1, out, 1);
        if (n)
            rd_onnx_attr_int(n, "to", RD_DT_F32);
        return true;
    }
    return unary(L, o, out, "Identity");
}

static bool gather(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    int axis = tl_opts(L, o, OPT_GATHER) ? tl_opt_i32(L, o, 0, 0) : 0;
    rd_onnx_node *n = tl_node(L, "Gather", out[0], (const char *const[]){tl_in(L, o, 0), tl_in(L, o, 1)}, 2, out, 1);
    if (n)
        rd_onnx_attr_int(n, "axis", axis);
    return true;
}

static bool split(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    int64_t axis[1];
    int n = 0;
    if (!tl_const_ints(L, o, 0, axis, 1, &n) || n != 1)
        return L->st != RD_OK;
    rd_onnx_node *nd = tl_node(L, "Split", out[0], IN1(tl_in(L, o, 1)), 1, out, o->n_out);
    if (nd)
        rd_onnx_attr_int(nd, "axis", axis[0]);
    return true;
}

static bool depth_space(tl_ctx *L, const tfl_op *o, const char *const *out, bool to_space)
{
    if (!is_nhwc(L, o))
        return false;
    int block = tl_opts(L, o, to_space ? OPT_DEPTH_TO_SPACE : OPT_SPACE_TO_DEPTH) ? tl_opt_i32(L, o, 0, 1) : 1;
    const char *y = tl_fresh(L, out[0], ":nchw");
    rd_onnx_node *n =
        tl_node(L, to_space ? "DepthToSpace" : "SpaceToDepth", y, IN1(tl_nchw(L, tl_in(L, o, 0))), 1, OUT1(y), 1);
    if (n) {
        rd_onnx_attr_int(n, "blocksize", block);
        if (to_space)
            rd_onnx_attr_string(n, "mode", "DCR");
    }
    finish_nchw(L, TFL_ACT_NONE, y, out[0]);
    return true;
}

static bool cast(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    const tfl_tensor *y = tensor_of(L, o, 0, false);
    if (y->dtype == RD_DT_UNDEFINED)
        return false;
    rd_onnx_node *n = tl_node(L, "Cast", out[0], IN1(tl_in(L, o, 0)), 1, out, 1);
    if (n)
        rd_onnx_attr_int(n, "to", y->dtype);
    return true;
}

/* RSQRT as Reciprocal(Sqrt), SQUARE as Mul(x, x), SQUARED_DIFFERENCE as Mul(d, d). */
static bool composite(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    const char *x = tl_in(L, o, 0);
    if (o->code == TFL_RSQRT) {
        const char *s = tl_fresh(L, out[0], ":sqrt");
        tl_node(L, "Sqrt", s, IN1(x), 1, OUT1(s), 1);
        tl_node(L, "Reciprocal", out[0], IN1(s), 1, out, 1);
        return true;
    }
    tl_node(L, "Mul", out[0], (const char *const[]){x, x}, 2, out, 1);
    return true;
}

bool tl_lower_float(tl_ctx *L, const tfl_op *o, const char *const *out)
{
    if (o->n_in < 1 || (o->in[0] < 0 && o->code != TFL_CONCATENATION))
        return false;
    switch (o->code) {
    case TFL_CONV_2D:
        return conv(L, o, out, false);
    case TFL_DEPTHWISE_CONV_2D:
        return conv(L, o, out, true);
    case TFL_FULLY_CONNECTED:
        return fully_connected(L, o, out);
    case TFL_AVERAGE_POOL_2D:
        return pool(L, o, out, "AveragePool");
    case TFL_MAX_POOL_2D:
        return pool(L, o, out, "MaxPool");
    case TFL_ADD:
        return binary(L, o, out, "Add", OPT_ADD);
    case TFL_SUB:
        return binary(L, o, out, "Sub", OPT_SUB);
    case TFL_MUL:
        return binary(L, o, out, "Mul", OPT_MUL);
    case TFL_DIV:
        return binary(L, o, out, "Div", OPT_DIV);
    case TFL_MAXIMUM:
        return binary(L, o, out, "Max", 0);
    case TFL_MINIMUM:
        return binary(L, o, out, "Min", 0);
    case TFL_POW:
        return binary(L, o, out, "Pow", 0);
    case TFL_PRELU:
        return binary(L, o, out, "PRelu", 0);
    case TFL_CONCATENATION:
        return concat(L, o, out);
    case TFL_RESHAPE:
    case TFL_SQUEEZE:
    case TFL_EXPAND_DIMS:
        return reshape(L, o, out);
    case TFL_SOFTMAX:
        return softmax(L, o, out);
    case TFL_LOGISTIC:
        return unary(L, o, out, "Sigmoid");
    case TFL_TANH:
        return unary(L, o, out, "Tanh");
    case TFL_RELU:
        return unary(L, o, out, "Relu");
    case TFL_RELU6:
        tl_activation(L, TFL_ACT_RELU6, tl_in(L, o, 0), out[0]);
        return true;
    case TFL_RELU_N1_TO_1:
        tl_activation(L, TFL_ACT_RELU_N1_TO_1, tl_in(L, o, 0), out[0]);
        return true;
    case TFL_LEAKY_RELU:
        return leaky_relu(L, o, out);
    case TFL_HARD_SWISH:
        return unary(L, o, out, "HardSwish");
    case TFL_ELU:
        return unary(L, o, out, "Elu");
    case TFL_EXP:
        return unary(L, o, out, "Exp");
    case TFL_LOG:
        return unary(L, o, out, "Log");
    case TFL_SQRT:
        return unary(L, o, out, "Sqrt");
    case TFL_ABS:
        return unary(L, o, out, "Abs");
    case TFL_NEG:
        return unary(L, o, out, "Neg");
    case TFL_FLOOR:
        return unary(L, o, out, "Floor");
    case TFL_CEIL:
        return unary(L, o, out, "Ceil");
    case TFL_RSQRT:
    case TFL_SQUARE:
        return composite(L, o, out);
    case TFL_PAD:
    case TFL_PADV2:
    case TFL_MIRROR_PAD:
        return pad(L, o, out);
    case TFL_MEAN:
        return reduce(L, o, out, "ReduceMean");
    case TFL_SUM:
        return reduce(L, o, out, "ReduceSum");
    case TFL_REDUCE_MAX:
        return reduce(L, o, out, "ReduceMax");
    case TFL_REDUCE_MIN:
        return reduce(L, o, out, "ReduceMin");
    case TFL_RESIZE_BILINEAR:
        return resize(L, o, out, true);
    case TFL_RESIZE_NEAREST_NEIGHBOR:
        return resize(L, o, out, false);
    case TFL_TRANSPOSE:
        return transpose(L, o, out);
    case TFL_STRIDED_SLICE:
    case TFL_SLICE:
        return slice(L, o, out);
    case TFL_QUANTIZE:
        return unary(L, o, out, "Identity");
    case TFL_DEQUANTIZE:
        return dequantize(L, o, out);
    case TFL_GATHER:
        return gather(L, o, out);
    case TFL_SPLIT:
        return split(L, o, out);
    case TFL_DEPTH_TO_SPACE:
        return depth_space(L, o, out, true);
    case TFL_SPACE_TO_DEPTH:
        return depth_space(L, o, out, false);
    case TFL_CAST:
        return cast(L, o, out);
    default:
        return false;
    }
}

/*
 * tf_ops.c: each TensorFlow op of a frozen graph as ONNX nodes (tf_lower.h). Convolution weights are constants
 * (HWIO, or HWCM for depthwise) transposed to ONNX's OIHW at load; SAME padding is ONNX's SAME_UPPER (the extra
 * pad at the end, as TensorFlow); AvgPool with SAME leaves the padding out of the average, as TensorFlow;
 * FusedBatchNorm is a per-channel Mul and Add with scale / sqrt(var + eps) and offset - mean * that, computed in
 * double.
 */
#include "tf_lower.h"

#include <math.h>
#include <stdio.h>

/* Unsupported option: false with nothing written, so the op is listed as unsupported. */
#define REFUSE false

static bool nchw_format(tf_ctx *C)
{
    char b[16];
    return strcmp(tf_attr_str(C, "data_format", "NHWC", b, sizeof b), "NCHW") == 0;
}

/* Spatial pair of a 4-entry list attribute in the data format's order (strides, dilations, ksize). */
static bool spatial(tf_ctx *C, const char *key, bool nchw, int64_t out[2])
{
    int64_t v[4];
    int n = 0;
    if (!tf_attr_ints(C, key, v, 4, &n))
        return true;
    if (n == 0) {
        out[0] = out[1] = 1;
        return true;
    }
    if (n != 4 || v[0] != 1 || v[nchw ? 1 : 3] != 1 || v[nchw ? 2 : 1] < 1 || v[nchw ? 3 : 2] < 1)
        return false;
    out[0] = v[nchw ? 2 : 1];
    out[1] = v[nchw ? 3 : 2];
    return true;
}

/* padding attribute: SAME_UPPER / VALID; false for EXPLICIT (and anything else). */
static const char *auto_pad(tf_ctx *C)
{
    char b[16];
    const char *p = tf_attr_str(C, "padding", "VALID", b, sizeof b);
    return !strcmp(p, "SAME") ? "SAME_UPPER" : !strcmp(p, "VALID") ? "VALID" : NULL;
}

/* x through an NCHW op: for NHWC graphs the Transpose in, the op, the Transpose out to the node's value. */
static rd_onnx_node *nchw_op(tf_ctx *C, bool nchw, const char *op, const char **in, int n_in)
{
    const char *out = tf_out(C);
    in[0] = nchw ? in[0] : tf_nchw(C, in[0]);
    const char *y = nchw ? out : tf_fresh(C, out ? out : "", ":nchw");
    rd_onnx_node *n = tf_add(C, op, in, n_in, &y, 1);
    if (!nchw)
        tf_to_nhwc(C, y, out);
    return n;
}

/* A constant 4-D filter permuted by perm (dims of the result: src dims in perm order). */
static bool permuted(tf_ctx *C, const rd_tensor *w, const int perm[4], rd_tensor *out)
{
    int64_t d[4] = {w->dims[perm[0]], w->dims[perm[1]], w->dims[perm[2]], w->dims[perm[3]]};
    if (rd_tensor_alloc(out, RD_DT_F32, 4, d, C->err) != RD_OK)
        return tf_fail(C, RD_E_NOMEM, "out of memory"), false;
    int64_t st[4] = {w->dims[1] * w->dims[2] * w->dims[3], w->dims[2] * w->dims[3], w->dims[3], 1};
    const float *s = w->data;
    float *o = out->data;
    for (int64_t a = 0, k = 0; a < d[0]; a++)
        for (int64_t b = 0; b < d[1]; b++)
            for (int64_t c = 0; c < d[2]; c++)
                for (int64_t e = 0; e < d[3]; e++)
                    o[k++] = s[a * st[perm[0]] + b * st[perm[1]] + c * st[perm[2]] + e * st[perm[3]]];
    return true;
}

/* What a Conv2D and a pooling op share: data format, padding and the per-axis window attributes. */
typedef struct tf_window {
    bool nchw;
    const char *pad; /* ONNX auto_pad */
    int64_t ksize[2], strides[2], dilations[2];
} tf_window;

/* Reads the window of a convolution (strides, dilations) or a pooling op (ksize, strides); false when an
   attribute has no ONNX equivalent. */
static bool read_window(tf_ctx *C, bool pooling, tf_window *w)
{
    w->nchw = nchw_format(C);
    w->pad = auto_pad(C);
    if (!w->pad)
        return false;
    if (pooling)
        return spatial(C, "ksize", w->nchw, w->ksize) && spatial(C, "strides", w->nchw, w->strides);
    return spatial(C, "strides", w->nchw, w->strides) && spatial(C, "dilations", w->nchw, w->dilations);
}

static bool conv(tf_ctx *C, bool depthwise)
{
    tf_window win;
    if (!read_window(C, false, &win))
        return REFUSE;
    const rd_tensor *w = tf_const_in(C, 1);
    char where[300];
    if (C->st != RD_OK)
        return true;
    if (!w || w->dtype != RD_DT_F32 || w->rank != 4)
        return tf_fail(C, RD_E_UNSUPPORTED, "%s: the filter must be a constant 4-D float tensor",
                       tf_where(C, where, sizeof where)),
               true;
    rd_tensor oihw;
    /* HWIO -> OIHW; depthwise HWCM -> (C*M)1HW: CMHW is that layout */
    if (!permuted(C, w, depthwise ? (const int[]){2, 3, 0, 1} : (const int[]){3, 2, 0, 1}, &oihw))
        return true;
    int64_t group = 1;
    if (depthwise) {
        group = oihw.dims[0];
        oihw.dims[0] *= oihw.dims[1];
        oihw.dims[1] = 1;
    }
    int64_t k[2] = {oihw.dims[2], oihw.dims[3]};
    const char *in[2] = {tf_in(C, 0), tf_init(C, tf_node_def(C)->name, ":filter", &oihw)};
    rd_onnx_node *n = nchw_op(C, win.nchw, "Conv", in, 2);
    if (n) {
        rd_onnx_attr_ints(n, "kernel_shape", k, 2);
        rd_onnx_attr_ints(n, "strides", win.strides, 2);
        rd_onnx_attr_ints(n, "dilations", win.dilations, 2);
        rd_onnx_attr_string(n, "auto_pad", win.pad);
        rd_onnx_attr_int(n, "group", group);
    }
    return true;
}

static bool pool(tf_ctx *C, bool max)
{
    tf_window win;
    if (!read_window(C, true, &win))
        return REFUSE;
    const char *in[1] = {tf_in(C, 0)};
    rd_onnx_node *n = nchw_op(C, win.nchw, max ? "MaxPool" : "AveragePool", in, 1);
    if (n) {
        rd_onnx_attr_ints(n, "kernel_shape", win.ksize, 2);
        rd_onnx_attr_ints(n, "strides", win.strides, 2);
        rd_onnx_attr_string(n, "auto_pad", win.pad);
    }
    return true;
}

/* A per-channel constant [c] shaped to broadcast on the channel axis of the data format. */
static const char *per_channel(tf_ctx *C, bool nchw, const char *suffix, const float *v, int64_t c)
{
    rd_tensor t = {0};
    if (rd_tensor_alloc(&t, RD_DT_F32, nchw ? 3 : 1, nchw ? (const int64_t[]){c, 1, 1} : (const int64_t[]){c},
                        C->err) != RD_OK)
        return tf_fail(C, RD_E_NOMEM, "out of memory"), NULL;
    memcpy(t.data, v, (size_t)c * sizeof *v);
    return tf_init(C, tf_node_def(C)->name, suffix, &t);
}

static bool bias_add(tf_ctx *C)
{
    const rd_tensor *b = tf_const_in(C, 1);
    bool nchw = nchw_format(C);
    const char *in[2] = {tf_in(C, 0), NULL}, *out = tf_out(C);
    if (nchw && b && b->dtype == RD_DT_F32 && b->rank == 1)
        in[1] = per_channel(C, true, ":bias", b->data, b->dims[0]);
    else
        in[1] = tf_in(C, 1);
    tf_add(C, "Add", in, 2, &out, 1);
    return true;
}

static bool batch_norm(tf_ctx *C)
{
    char where[300];
    if (tf_attr_bool(C, "is_training", true))
        return tf_fail(C, RD_E_UNSUPPORTED, "%s: is_training is true (a training graph: freeze it for inference)",
                       tf_where(C, where, sizeof where)),
               true;
    const rd_tensor *p[4] = {tf_const_in(C, 1), tf_const_in(C, 2), tf_const_in(C, 3), tf_const_in(C, 4)};
    if (C->st != RD_OK)
        return true;
    for (int i = 0; i < 4; i++)
        if (!p[i] || p[i]->dtype != RD_DT_F32 || p[i]->rank != 1 || p[i]->dims[0] != p[0]->dims[0])
            return tf_fail(C, RD_E_UNSUPPORTED,
                           "%s: scale, offset, mean and variance must be constant vectors of "
                           "one length",
                           tf_where(C, where, sizeof where)),
                   true;
    double eps = tf_attr_float(C, "epsilon", 1e-4f);
    int64_t c = p[0]->dims[0];
    float *sc = malloc((size_t)(2 * c + 1) * sizeof *sc);
    if (!sc)
        return tf_fail(C, RD_E_NOMEM, "out of memory"), true;
    float *sh = sc + c;
    const float *g = p[0]->data, *o = p[1]->data, *m = p[2]->data, *v = p[3]->data;
    for (int64_t i = 0; i < c; i++) {
        double s = g[i] / sqrt((double)v[i] + eps);
        sc[i] = (float)s;
        sh[i] = (float)(o[i] - m[i] * s);
    }
    bool nchw = nchw_format(C);
    const char *x = tf_in(C, 0), *out = tf_out(C), *mul = tf_fresh(C, out ? out : "", ":scaled");
    tf_add(C, "Mul", (const char *const[]){x, per_channel(C, nchw, ":scale", sc, c)}, 2, &mul, 1);
    tf_add(C, "Add", (const char *const[]){mul, per_channel(C, nchw, ":shift", sh, c)}, 2, &out, 1);
    free(sc);
    return true;
}

static bool matmul(tf_ctx *C)
{
    const char *a = tf_in(C, 0), *b = NULL, *out = tf_out(C);
    const rd_tensor *bc = tf_const_in(C, 1);
    bool ta = tf_attr_bool(C, "transpose_a", false), tb = tf_attr_bool(C, "transpose_b", false);
    if (ta) {
        const char *t = tf_fresh(C, out ? out : "", ":a_t");
        tf_add(C, "Transpose", &a, 1, &t, 1);
        a = t;
    }
    if (tb && bc && bc->dtype == RD_DT_F32 && bc->rank == 2) { /* transposed at load */
        rd_tensor t = {0};
        if (rd_tensor_alloc(&t, RD_DT_F32, 2, (const int64_t[]){bc->dims[1], bc->dims[0]}, C->err) != RD_OK)
            return tf_fail(C, RD_E_NOMEM, "out of memory"), true;
        for (int64_t i = 0; i < bc->dims[0]; i++)
            for (int64_t j = 0; j < bc->dims[1]; j++)
                ((float *)t.data)[j * bc->dims[0] + i] = ((const float *)bc->data)[i * bc->dims[1] + j];
        b = tf_init(C, tf_node_def(C)->name, ":b_t", &t);
    } else {
        b = tf_in(C, 1);
        if (tb) {
            const char *t = tf_fresh(C, out ? out : "", ":b_t");
            tf_add(C, "Transpose", &b, 1, &t, 1);
            b = t;
        }
    }
    tf_add(C, "MatMul", (const char *const[]){a, b}, 2, &out, 1);
    return true;
}

static bool resize(tf_ctx *C, bool bilinear)
{
    int64_t hw[2];
    int n = 2;
    bool computed = !tf_const_in(C, 1); /* a size the graph computes: folded at load once shapes are known */
    if (!computed && !tf_const_ints(C, 1, hw, 2, &n))
        return true;
    bool align = tf_attr_bool(C, "align_corners", false), half = tf_attr_bool(C, "half_pixel_centers", false);
    if (n != 2 || (align && half))
        return REFUSE;
    const char *x = tf_nchw(C, tf_in(C, 0)), *out = tf_out(C), *base = out ? out : "";
    /* sizes: N and C of the input, then the constant height and width */
    const char *shape = tf_fresh(C, base, ":shape"), *nc = tf_fresh(C, base, ":nc"),
               *sizes = tf_fresh(C, base, ":sizes");
    tf_add(C, "Shape", &x, 1, &shape, 1);
    tf_add(C, "Slice",
           (const char *const[]){shape, tf_init_i64(C, ":starts", (const int64_t[]){0}, 1),
                                 tf_init_i64(C, ":ends", (const int64_t[]){2}, 1)},
           3, &nc, 1);
    const char *size = computed ? tf_in(C, 1) : tf_init_i64(C, ":hw", hw, 2);
    rd_onnx_node *cat = tf_add(C, "Concat", (const char *const[]){nc, size}, 2, &sizes, 1);
    if (cat)
        rd_onnx_attr_int(cat, "axis", 0);
    const char *y = tf_fresh(C, base, ":nchw");
    rd_onnx_node *r = tf_add(C, "Resize", (const char *const[]){x, "", "", sizes}, 4, &y, 1);
    if (r)
        fe_tf_resize_attrs(r, bilinear, align, half);
    tf_to_nhwc(C, y, out);
    return true;
}

/* Mean, Max, Min, Sum over constant axes (keep_dims). */
static bool reduce(tf_ctx *C, const char *op)
{
    int64_t axes[RD_MAX_RANK];
    int n = 0;
    if (!tf_const_ints(C, 1, axes, RD_MAX_RANK, &n))
        return true;
    const char *x = tf_in(C, 0), *out = tf_out(C);
    bool keep = tf_attr_bool(C, "keep_dims", false);
    bool axes_input = !strcmp(op, "ReduceSum"); /* opset 13: ReduceSum takes its axes as an input */
    rd_onnx_node *r = axes_input ? tf_add(C, op, (const char *const[]){x, tf_init_i64(C, ":axes", axes, n)}, 2, &out, 1)
                                 : tf_add(C, op, &x, 1, &out, 1);
    if (r && !axes_input)
        rd_onnx_attr_ints(r, "axes", axes, (size_t)n);
    if (r)
        rd_onnx_attr_int(r, "keepdims", keep);
    return true;
}

static bool pad(tf_ctx *C, const char *op)
{
    int64_t p[2 * RD_MAX_RANK], pads[2 * RD_MAX_RANK];
    int n = 0;
    char mode[16] = "constant", b[16];
    if (!strcmp(op, "MirrorPad")) {
        if (strcmp(tf_attr_str(C, "mode", "", b, sizeof b), "REFLECT") != 0)
            return REFUSE; /* SYMMETRIC has no ONNX mode */
        snprintf(mode, sizeof mode, "reflect");
    }
    const char *in[3] = {tf_in(C, 0), NULL, NULL}, *out = tf_out(C);
    if (!tf_const_in(C, 1)) { /* [rank, 2] computed: ONNX's begins then ends are its transpose, flattened */
        const char *p2 = tf_in(C, 1), *t = tf_fresh(C, out ? out : "", ":pads_t");
        rd_onnx_node *tr = tf_add(C, "Transpose", &p2, 1, &t, 1);
        if (tr)
            rd_onnx_attr_ints(tr, "perm", (const int64_t[]){1, 0}, 2);
        in[1] = tf_fresh(C, out ? out : "", ":pads");
        tf_add(C, "Reshape", (const char *const[]){t, tf_init_i64(C, ":flat", (const int64_t[]){-1}, 1)}, 2, &in[1], 1);
    } else if (!tf_const_ints(C, 1, p, 2 * RD_MAX_RANK, &n)) {
        return true;
    } else {
        for (int i = 0; i < n / 2; i++) {
            pads[i] = p[2 * i];
            pads[n / 2 + i] = p[2 * i + 1];
        }
        in[1] = tf_init_i64(C, ":pads", pads, n);
    }
    if (!strcmp(op, "PadV2"))
        in[2] = tf_in(C, 2);
    rd_onnx_node *r = tf_add(C, "Pad", in, in[2] ? 3 : 2, &out, 1);
    if (r)
        rd_onnx_attr_string(r, "mode", mode);
    return true;
}

/* ConcatV2 (values, axis) and Concat (axis, values). */
static bool concat(tf_ctx *C, bool v2)
{
    int n = tf_n_inputs(C) - 1;
    int64_t axis;
    int na = 0;
    if (n < 1 || n > TF_MAX_IO)
        return REFUSE;
    if (!tf_const_ints(C, v2 ? n : 0, &axis, 1, &na))
        return true;
    const char *in[TF_MAX_IO], *out = tf_out(C);
    for (int i = 0; i < n; i++)
        in[i] = tf_in(C, v2 ? i : i + 1);
    rd_onnx_node *r = tf_add(C, "Concat", in, n, &out, 1);
    if (r)
        rd_onnx_attr_int(r, "axis", axis);
    return true;
}

/* v as a 1-D tensor. */
static const char *step_reshape(tf_ctx *C, const char *v)
{
    const char *out = tf_out(C), *y = tf_fresh(C, out ? out : "", ":axes");
    tf_add(C, "Reshape", (const char *const[]){v, tf_init_i64(C, ":flat", (const int64_t[]){-1}, 1)}, 2, &y, 1);
    return y;
}

/* Reshape, ExpandDims, Squeeze, Transpose: the shape, axes or permutation (constant for Squeeze, Transpose). */
static bool shape_op(tf_ctx *C, const char *op)
{
    int64_t v[RD_MAX_RANK];
    int n = 0;
    const char *x = tf_in(C, 0), *out = tf_out(C);
    if (!strcmp(op, "Squeeze")) {
        if (!tf_attr_ints(C, "squeeze_dims", v, RD_MAX_RANK, &n))
            return true;
        tf_add(C, "Squeeze", (const char *const[]){x, n ? tf_init_i64(C, ":axes", v, n) : NULL}, n ? 2 : 1, &out, 1);
        return true;
    }
    bool reshape = !strcmp(op, "Reshape");
    if (strcmp(op, "Transpose") && !tf_const_in(C, 1)) { /* computed: folded at load once shapes are known */
        const char *k = tf_in(C, 1);
        if (!reshape) /* ExpandDims' scalar axis as Unsqueeze's list */
            k = step_reshape(C, k);
        tf_add(C, reshape ? "Reshape" : "Unsqueeze", (const char *const[]){x, k}, 2, &out, 1);
        return true;
    }
    if (!tf_const_ints(C, 1, v, RD_MAX_RANK, &n))
        return true;
    if (!strcmp(op, "Transpose")) {
        rd_onnx_node *r = tf_add(C, "Transpose", &x, 1, &out, 1);
        if (r)
            rd_onnx_attr_ints(r, "perm", v, (size_t)n);
        return true;
    }
    const char *k = tf_init_i64(C, reshape ? ":shape" : ":axes", v, n);
    tf_add(C, reshape ? "Reshape" : "Unsqueeze", (const char *const[]){x, k}, 2, &out, 1);
    return true;
}

static bool softmax(tf_ctx *C)
{
    const char *x = tf_in(C, 0), *out = tf_out(C);
    rd_onnx_node *r = tf_add(C, "Softmax", &x, 1, &out, 1);
    if (r)
        rd_onnx_attr_int(r, "axis", -1);
    return true;
}

/* Element-wise ops with one ONNX counterpart, and the activations made of a few. */
static bool elementwise(tf_ctx *C, const char *op)
{
    static const struct {
        const char *tf, *onnx;
        int n_in;
    } table[] = {
        {"Add", "Add", 2},
        {"AddV2", "Add", 2},
        {"Sub", "Sub", 2},
        {"Mul", "Mul", 2},
        {"RealDiv", "Div", 2},
        {"Maximum", "Max", 2},
        {"Minimum", "Min", 2},
        {"Pow", "Pow", 2},
        {"Relu", "Relu", 1},
        {"Sigmoid", "Sigmoid", 1},
        {"Tanh", "Tanh", 1},
        {"Elu", "Elu", 1},
        {"Exp", "Exp", 1},
        {"Log", "Log", 1},
        {"Sqrt", "Sqrt", 1},
        {"Abs", "Abs", 1},
        {"Neg", "Neg", 1},
        {"Identity", "Identity", 1},
        {"StopGradient", "Identity", 1},
        {"Snapshot", "Identity", 1},
        {"PlaceholderWithDefault", "Identity", 1},
        {"Floor", "Floor", 1},
        {"Ceil", "Ceil", 1},
        {"Round", "Round", 1},
    };
    const char *out;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(op, table[i].tf)) {
            const char *in[2] = {tf_in(C, 0), table[i].n_in > 1 ? tf_in(C, 1) : NULL};
            out = tf_out(C);
            tf_add(C, table[i].onnx, in, table[i].n_in, &out, 1);
            return true;
        }
    if (strcmp(op, "Relu6") && strcmp(op, "LeakyRelu") && strcmp(op, "Rsqrt") && strcmp(op, "Square"))
        return false;
    const char *x = tf_in(C, 0);
    out = tf_out(C);
    if (!strcmp(op, "Relu6")) {
        tf_add(C, "Clip", (const char *const[]){x, tf_init_scalar(C, ":zero", 0.0f), tf_init_scalar(C, ":six", 6.0f)},
               3, &out, 1);
    } else if (!strcmp(op, "LeakyRelu")) {
        rd_onnx_node *r = tf_add(C, "LeakyRelu", &x, 1, &out, 1);
        if (r)
            rd_onnx_attr_float(r, "alpha", tf_attr_float(C, "alpha", 0.2f));
    } else if (!strcmp(op, "Rsqrt")) {
        const char *s = tf_fresh(C, out ? out : "", ":sqrt");
        tf_add(C, "Sqrt", &x, 1, &s, 1);
        tf_add(C, "Reciprocal", &s, 1, &out, 1);
    } else { /* Square */
        tf_add(C, "Mul", (const char *const[]){x, x}, 2, &out, 1);
    }
    return true;
}

bool tf_lower_node(tf_ctx *C, const char *op)
{
    bool shape_op_kind;
    bool done = tf_lower_shape_node(C, op, &shape_op_kind);
    if (shape_op_kind)
        return done;
    if (!strcmp(op, "Conv2D") || !strcmp(op, "DepthwiseConv2dNative"))
        return conv(C, op[0] == 'D');
    if (!strcmp(op, "MaxPool") || !strcmp(op, "AvgPool"))
        return pool(C, op[0] == 'M');
    if (!strcmp(op, "BiasAdd"))
        return bias_add(C);
    if (!strcmp(op, "FusedBatchNorm") || !strcmp(op, "FusedBatchNormV2") || !strcmp(op, "FusedBatchNormV3"))
        return batch_norm(C);
    if (!strcmp(op, "MatMul"))
        return matmul(C);
    if (!strcmp(op, "ResizeBilinear") || !strcmp(op, "ResizeNearestNeighbor"))
        return resize(C, op[6] == 'B');
    if (!strcmp(op, "Mean") || !strcmp(op, "Max") || !strcmp(op, "Min") || !strcmp(op, "Sum") || !strcmp(op, "Prod"))
        return reduce(C, op[1] == 'e'   ? "ReduceMean"
                         : op[1] == 'a' ? "ReduceMax"
                         : op[1] == 'i' ? "ReduceMin"
                         : op[1] == 'r' ? "ReduceProd"
                                        : "ReduceSum");
    if (!strcmp(op, "Pad") || !strcmp(op, "PadV2") || !strcmp(op, "MirrorPad"))
        return pad(C, op);
    if (!strcmp(op, "ConcatV2") || !strcmp(op, "Concat"))
        return concat(C, op[6] == 'V');
    if (!strcmp(op, "Reshape") || !strcmp(op, "ExpandDims") || !strcmp(op, "Squeeze") || !strcmp(op, "Transpose"))
        return shape_op(C, op);
    if (!strcmp(op, "Softmax"))
        return softmax(C);
    return elementwise(C, op);
}

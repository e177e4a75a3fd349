/*
 * caffe_layers.c: one function per Caffe layer type, each writing the ONNX nodes of the current layer
 * (caffe_lower.h). Parameters come from the .prototxt, weights from the .caffemodel (cf_blob).
 *
 * Rounding rules: Pooling rounds its output size up (Caffe's default round_mode CEIL; FLOOR as given), with
 * Caffe's rule that the last window starts inside the input or its begin pad, which is ONNX's ceil_mode; an
 * average divides by the window clipped to the padded input (ONNX count_include_pad = 1 with ceil_mode: the
 * same divisor). Deconvolution's output is (in - 1) * stride - 2 * pad + dilation * (k - 1) + 1: ONNX
 * ConvTranspose with those pads.
 *
 * Resizing: Upsample (the layer of the YOLO and other Caffe forks: upsample_param.scale, nearest) is ONNX Resize
 * nearest with integer scales; Interp (DeepLab/PSPNet: bilinear with the corners aligned) is Resize linear
 * align_corners to the size Caffe computes from the input's own: height/width as given, or
 * shrink_factor then zoom_factor ((h - 1) / shrink + 1, then (h - 1) * zoom + 1), built from Shape at run time.
 */
#include "caffe_lower.h"

#include <stdio.h>

/* kernel_size/stride/pad of convolution_param or pooling_param: the repeated key (one value for both dims, or
   h then w) or its _h/_w pair (kernel_h, stride_w, ...). */
static bool hw_param(cf_ctx *C, int p, const char *key, const char *hw, int64_t def, int64_t lo, int64_t out[2])
{
    int64_t v[2];
    int n = 0;
    rd_error le;
    char kh[32], kw[32];
    snprintf(kh, sizeof kh, "%s_h", hw);
    snprintf(kw, sizeof kw, "%s_w", hw);
    if (ct_ints(C->d, p, key, lo, 1 << 20, v, 2, &n, &le) ||
        ct_int(C->d, p, kh, n ? v[0] : def, lo, 1 << 20, &out[0], &le) ||
        ct_int(C->d, p, kw,
               n == 2 ? v[1]
               : n    ? v[0]
                      : def,
               lo, 1 << 20, &out[1], &le))
        return !cf_opt_fail(C, &le);
    return true;
}

/* num_output has no default in Caffe: a layer without it is refused. */
static bool has_num_output(cf_ctx *C, int p, int64_t num)
{
    if (num >= 1)
        return true;
    cf_fail(C, RD_E_PARSE, "%s:%d: layer '%s' has no num_output", C->d->path, C->d->nodes[p].line, cf_layer_name(C));
    return false;
}

/* The weights w (blob 0, read by the caller) as an initialiser, its name returned; with bias_term the bias, blob 1
   of num values, too (its name in *bn; left NULL when the blob is unusable). */
static const char *weights_and_bias(cf_ctx *C, rd_tensor *w, bool bias_term, int64_t num, const char **bn)
{
    const char *wn = cf_init(C, cf_layer_name(C), ":weights", w);
    if (bias_term) {
        rd_tensor b;
        if (cf_blob(C, 1, num, &b)) {
            cf_per_channel(&b, 2);
            *bn = cf_init(C, cf_layer_name(C), ":bias", &b);
        }
    }
    return wn;
}

static bool conv(cf_ctx *C, bool deconv)
{
    int p = ct_find(C->d, C->layer, "convolution_param", -1);
    if (p < 0)
        return cf_fail(C, RD_E_PARSE, "%s:%d: layer '%s' has no convolution_param", C->d->path,
                       C->d->nodes[C->layer].line, cf_layer_name(C)),
               true;
    int64_t num, group, k[2], s[2], pad[2], dil[2];
    bool bias_term;
    rd_error le;
    if (ct_int(C->d, p, "num_output", 0, 1, 1 << 24, &num, &le) ||
        ct_int(C->d, p, "group", 1, 1, 1 << 24, &group, &le) || ct_bool(C->d, p, "bias_term", true, &bias_term, &le))
        return cf_opt_fail(C, &le);
    if (!has_num_output(C, p, num))
        return true;
    if (!hw_param(C, p, "kernel_size", "kernel", 0, 1, k) || !hw_param(C, p, "stride", "stride", 1, 1, s) ||
        !hw_param(C, p, "pad", "pad", 0, 0, pad))
        return true;
    int64_t dv[2];
    int nd = 0;
    if (ct_ints(C->d, p, "dilation", 1, 1 << 20, dv, 2, &nd, &le))
        return cf_opt_fail(C, &le);
    dil[0] = nd ? dv[0] : 1;
    dil[1] = nd == 2 ? dv[1] : dil[0];
    const char *x = cf_bottom(C, 0);
    rd_tensor w;
    if (!cf_blob(C, 0, -1, &w))
        return true;
    if (w.rank != 4 || (!deconv && w.dims[0] != num) || (deconv && w.dims[1] * group != num) || w.dims[2] != k[0] ||
        w.dims[3] != k[1]) {
        cf_fail(C, RD_E_PARSE,
                "%s: layer '%s': weights of shape %lldx%lldx%lldx%lld, the .prototxt says %lld "
                "outputs of %lldx%lld",
                C->wname, cf_layer_name(C), (long long)w.dims[0], (long long)w.dims[1], (long long)w.dims[2],
                (long long)w.dims[3], (long long)num, (long long)k[0], (long long)k[1]);
        rd_tensor_fini(&w);
        return true;
    }
    const char *bn = NULL, *wn = weights_and_bias(C, &w, bias_term, num, &bn);
    const char *y = cf_top(C, 0, 4);
    rd_onnx_node *n =
        cf_node(C, deconv ? "ConvTranspose" : "Conv", (const char *const[]){x, wn, bn}, bias_term ? 3 : 2, &y, 1);
    if (n) {
        rd_onnx_attr_ints(n, "kernel_shape", k, 2);
        rd_onnx_attr_ints(n, "strides", s, 2);
        rd_onnx_attr_ints(n, "pads", (const int64_t[]){pad[0], pad[1], pad[0], pad[1]}, 4);
        rd_onnx_attr_ints(n, "dilations", dil, 2);
        rd_onnx_attr_int(n, "group", group);
    }
    return true;
}

static bool pooling(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "pooling_param", -1);
    int64_t k[2] = {0, 0}, s[2] = {1, 1}, pad[2] = {0, 0};
    bool global = false;
    rd_error le;
    const char *pool = p >= 0 ? ct_str(C->d, p, "pool", "MAX") : "MAX";
    const char *round = p >= 0 ? ct_str(C->d, p, "round_mode", "CEIL") : "CEIL";
    if (p >= 0 && (ct_bool(C->d, p, "global_pooling", false, &global, &le)))
        return cf_opt_fail(C, &le);
    if (p >= 0 && (!hw_param(C, p, "kernel_size", "kernel", 0, 0, k) || !hw_param(C, p, "stride", "stride", 1, 1, s) ||
                   !hw_param(C, p, "pad", "pad", 0, 0, pad)))
        return true;
    bool max = !strcmp(pool, "MAX") || !strcmp(pool, "0"), ave = !strcmp(pool, "AVE") || !strcmp(pool, "1");
    if (!max && !ave)
        return false; /* STOCHASTIC */
    const char *x = cf_bottom(C, 0), *y = cf_top(C, 0, 4);
    if (global)
        return cf_node(C, max ? "GlobalMaxPool" : "GlobalAveragePool", &x, 1, &y, 1), true;
    if (k[0] < 1 || k[1] < 1)
        return cf_fail(C, RD_E_PARSE, "%s:%d: layer '%s': pooling without kernel_size", C->d->path,
                       C->d->nodes[C->layer].line, cf_layer_name(C)),
               true;
    rd_onnx_node *n = cf_node(C, max ? "MaxPool" : "AveragePool", &x, 1, &y, 1);
    if (n) {
        rd_onnx_attr_ints(n, "kernel_shape", k, 2);
        rd_onnx_attr_ints(n, "strides", s, 2);
        rd_onnx_attr_ints(n, "pads", (const int64_t[]){pad[0], pad[1], pad[0], pad[1]}, 4);
        rd_onnx_attr_int(n, "ceil_mode", strcmp(round, "FLOOR") != 0);
        if (ave)
            rd_onnx_attr_int(n, "count_include_pad", 1);
    }
    return true;
}

static bool inner_product(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "inner_product_param", -1);
    int64_t num, axis;
    bool bias_term, transpose;
    rd_error le;
    if (p < 0 || ct_int(C->d, p, "num_output", 0, 1, 1 << 24, &num, &le) ||
        ct_int(C->d, p, "axis", 1, -8, 8, &axis, &le) || ct_bool(C->d, p, "bias_term", true, &bias_term, &le) ||
        ct_bool(C->d, p, "transpose", false, &transpose, &le))
        return p < 0 ? cf_fail(C, RD_E_PARSE, "%s:%d: layer '%s' has no inner_product_param", C->d->path,
                               C->d->nodes[C->layer].line, cf_layer_name(C)),
               true  : cf_opt_fail(C, &le);
    if (!has_num_output(C, p, num))
        return true;
    const char *x = cf_bottom(C, 0);
    rd_tensor w;
    if (!cf_blob(C, 0, -1, &w))
        return true;
    int64_t n = rd_tensor_numel(&w);
    int64_t kdim = n / num;
    if (kdim * num != n) {
        rd_tensor_fini(&w);
        return cf_fail(C, RD_E_PARSE, "%s: layer '%s': %lld weights for %lld outputs", C->wname, cf_layer_name(C),
                       (long long)n, (long long)num),
               true;
    }
    w.rank = 2; /* legacy blobs are 1x1xNxK */
    w.dims[0] = transpose ? kdim : num;
    w.dims[1] = transpose ? num : kdim;
    const char *bn = NULL, *wn = weights_and_bias(C, &w, bias_term, num, &bn);
    const char *flat = cf_fresh(C, cf_layer_name(C), ":flatten");
    rd_onnx_node *f = cf_node(C, "Flatten", &x, 1, &flat, 1);
    if (f)
        rd_onnx_attr_int(f, "axis", axis);
    const char *y = cf_top(C, 0, 2);
    rd_onnx_node *g = cf_node(C, "Gemm", (const char *const[]){flat, wn, bn}, bias_term ? 3 : 2, &y, 1);
    if (g)
        rd_onnx_attr_int(g, "transB", !transpose);
    return true;
}

/* BatchNorm: blobs mean, variance, scale factor (mean and variance are stored multiplied by it). */
static bool batch_norm(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "batch_norm_param", -1);
    float eps = 1e-5f;
    rd_error le;
    if (p >= 0 && ct_float(C->d, p, "eps", 1e-5f, &eps, &le))
        return cf_opt_fail(C, &le);
    const char *x = cf_bottom(C, 0);
    rd_tensor mean, var, factor;
    if (!cf_blob(C, 0, -1, &mean))
        return true;
    int64_t c = rd_tensor_numel(&mean);
    if (!cf_blob(C, 1, c, &var) || !cf_blob(C, 2, 1, &factor)) {
        rd_tensor_fini(&mean);
        rd_tensor_fini(&var);
        return true;
    }
    float f = *(float *)factor.data;
    f = f == 0.0f ? 0.0f : 1.0f / f;
    rd_tensor_fini(&factor);
    rd_tensor one = {0}, zero = {0};
    rd_error e;
    if (rd_tensor_alloc(&one, RD_DT_F32, 1, &c, &e) != RD_OK || rd_tensor_alloc(&zero, RD_DT_F32, 1, &c, &e) != RD_OK) {
        rd_tensor_fini(&mean);
        rd_tensor_fini(&var);
        rd_tensor_fini(&one);
        return cf_fail(C, e.code, "%s", e.msg), true;
    }
    for (int64_t i = 0; i < c; i++) {
        ((float *)mean.data)[i] *= f;
        ((float *)var.data)[i] *= f;
        ((float *)one.data)[i] = 1.0f;
    }
    mean.rank = var.rank = 1;
    mean.dims[0] = var.dims[0] = c;
    const char *in[5] = {x, cf_init(C, cf_layer_name(C), ":scale", &one), cf_init(C, cf_layer_name(C), ":bias", &zero),
                         cf_init(C, cf_layer_name(C), ":mean", &mean), cf_init(C, cf_layer_name(C), ":variance", &var)};
    const char *y = cf_top(C, 0, cf_rank_of(C, x ? x : ""));
    rd_onnx_node *n = cf_node(C, "BatchNormalization", in, 5, &y, 1);
    if (n)
        rd_onnx_attr_float(n, "epsilon", eps);
    return true;
}

/* Scale: x * gamma (+ beta) per channel of axis 1; with two bottoms the second is the scale. */
static bool scale(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "scale_param", -1);
    bool bias_term = false;
    int64_t axis = 1;
    rd_error le;
    if (p >= 0 &&
        (ct_bool(C->d, p, "bias_term", false, &bias_term, &le) || ct_int(C->d, p, "axis", 1, -8, 8, &axis, &le)))
        return cf_opt_fail(C, &le);
    if (axis != 1)
        return false;
    const char *x = cf_bottom(C, 0);
    int r = cf_rank_of(C, x ? x : "");
    const char *g = NULL;
    int wblob = 0;
    if (cf_count(C, "bottom") > 1) {
        g = cf_bottom(C, 1);
    } else {
        rd_tensor t;
        if (!cf_blob(C, 0, -1, &t))
            return true;
        cf_per_channel(&t, r);
        g = cf_init(C, cf_layer_name(C), ":gamma", &t);
        wblob = 1;
    }
    const char *y = cf_top(C, 0, r);
    const char *prod = bias_term ? cf_fresh(C, y ? y : "", ":mul") : y;
    cf_node(C, "Mul", (const char *const[]){x, g}, 2, &prod, 1);
    if (bias_term) {
        rd_tensor t;
        if (!cf_blob(C, wblob, -1, &t))
            return true;
        cf_per_channel(&t, r);
        const char *beta = cf_init(C, cf_layer_name(C), ":beta", &t);
        cf_node(C, "Add", (const char *const[]){prod, beta}, 2, &y, 1);
    }
    return true;
}

static bool relu(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "relu_param", -1);
    float slope = 0.0f;
    rd_error le;
    if (p >= 0 && ct_float(C->d, p, "negative_slope", 0.0f, &slope, &le))
        return cf_opt_fail(C, &le);
    const char *x = cf_bottom(C, 0), *y = cf_top(C, 0, cf_rank_of(C, x ? x : ""));
    rd_onnx_node *n = cf_node(C, slope != 0.0f ? "LeakyRelu" : "Relu", &x, 1, &y, 1);
    if (n && slope != 0.0f)
        rd_onnx_attr_float(n, "alpha", slope);
    return true;
}

static bool prelu(cf_ctx *C)
{
    const char *x = cf_bottom(C, 0);
    rd_tensor t;
    if (!cf_blob(C, 0, -1, &t))
        return true;
    cf_per_channel(&t, cf_rank_of(C, x ? x : ""));
    const char *slope = cf_init(C, cf_layer_name(C), ":slope", &t), *y = cf_top(C, 0, cf_rank_of(C, x ? x : ""));
    cf_node(C, "PRelu", (const char *const[]){x, slope}, 2, &y, 1);
    return true;
}

static bool eltwise(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "eltwise_param", -1);
    const char *op = p >= 0 ? ct_str(C->d, p, "operation", "SUM") : "SUM";
    int n = cf_count(C, "bottom");
    if (n < 2 || n > CF_MAX_IO)
        return cf_fail(C, RD_E_PARSE, "%s:%d: Eltwise layer '%s' has %d bottoms", C->d->path,
                       C->d->nodes[C->layer].line, cf_layer_name(C), n),
               true;
    const char *in[CF_MAX_IO];
    float coeff[CF_MAX_IO];
    int nc = 0;
    rd_error le;
    if (p >= 0 && ct_floats(C->d, p, "coeff", coeff, CF_MAX_IO, &nc, &le))
        return cf_opt_fail(C, &le);
    if (nc && nc != n)
        return cf_fail(C, RD_E_PARSE, "%s:%d: %d coeff for %d bottoms", C->d->path, ct_line(C->d, p, "coeff"), nc, n),
               true;
    bool sum = !strcmp(op, "SUM") || !strcmp(op, "1"), prod = !strcmp(op, "PROD") || !strcmp(op, "0");
    if (!sum && !prod && strcmp(op, "MAX") && strcmp(op, "2"))
        return false;
    for (int i = 0; i < n; i++) {
        in[i] = cf_bottom(C, i);
        if (nc && coeff[i] != 1.0f && sum) {
            const char *m = cf_fresh(C, cf_layer_name(C), ":coeff");
            cf_node(C, "Mul",
                    (const char *const[]){in[i], cf_init_scalar(C, cf_layer_name(C), ":coeff_value", coeff[i])}, 2, &m,
                    1);
            in[i] = m;
        }
    }
    const char *y = cf_top(C, 0, cf_rank_of(C, in[0] ? in[0] : ""));
    if (prod) { /* Mul is binary */
        const char *acc = in[0];
        for (int i = 1; i < n; i++) {
            const char *o = i == n - 1 ? y : cf_fresh(C, cf_layer_name(C), ":prod");
            cf_node(C, "Mul", (const char *const[]){acc, in[i]}, 2, &o, 1);
            acc = o;
        }
    } else {
        cf_node(C, sum ? "Sum" : "Max", in, n, &y, 1);
    }
    return true;
}

/* cf_node with its axis attribute: Concat, Softmax, Flatten, Split. */
static void axis_node(cf_ctx *C, const char *op, const char *const *in, int n_in, const char *const *out, int n_out,
                      int64_t axis)
{
    rd_onnx_node *n = cf_node(C, op, in, n_in, out, n_out);
    if (n)
        rd_onnx_attr_int(n, "axis", axis);
}

static bool concat(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "concat_param", -1);
    int64_t axis = 1, dim;
    rd_error le;
    if (p >= 0 &&
        (ct_int(C->d, p, "concat_dim", 1, 0, 8, &dim, &le) || ct_int(C->d, p, "axis", dim, -8, 8, &axis, &le)))
        return cf_opt_fail(C, &le);
    int n = cf_count(C, "bottom");
    if (n < 1 || n > CF_MAX_IO)
        return cf_fail(C, RD_E_PARSE, "%s:%d: Concat layer '%s' has %d bottoms", C->d->path, C->d->nodes[C->layer].line,
                       cf_layer_name(C), n),
               true;
    const char *in[CF_MAX_IO];
    for (int i = 0; i < n; i++)
        in[i] = cf_bottom(C, i);
    const char *y = cf_top(C, 0, cf_rank_of(C, in[0] ? in[0] : ""));
    axis_node(C, "Concat", in, n, &y, 1, axis);
    return true;
}

/* A layer with one input, one output and an axis-like parameter: Softmax, Flatten, Permute, Reshape. */
static bool shape_layer(cf_ctx *C, const char *type)
{
    rd_error le;
    const char *x = cf_bottom(C, 0);
    int r = cf_rank_of(C, x ? x : "");
    if (!strcmp(type, "Softmax")) {
        int p = ct_find(C->d, C->layer, "softmax_param", -1);
        int64_t axis = 1;
        if (p >= 0 && ct_int(C->d, p, "axis", 1, -8, 8, &axis, &le))
            return cf_opt_fail(C, &le);
        const char *y = cf_top(C, 0, r);
        axis_node(C, "Softmax", &x, 1, &y, 1, axis);
        return true;
    }
    if (!strcmp(type, "Flatten")) {
        int p = ct_find(C->d, C->layer, "flatten_param", -1);
        int64_t axis = 1, end = -1;
        if (p >= 0 &&
            (ct_int(C->d, p, "axis", 1, -8, 8, &axis, &le) || ct_int(C->d, p, "end_axis", -1, -8, 8, &end, &le)))
            return cf_opt_fail(C, &le);
        if (end != -1 && end != r - 1)
            return false;
        const char *y = cf_top(C, 0, (int)(axis < 0 ? axis + r : axis) + 1);
        axis_node(C, "Flatten", &x, 1, &y, 1, axis);
        return true;
    }
    if (!strcmp(type, "Permute")) {
        int p = ct_find(C->d, C->layer, "permute_param", -1);
        int64_t order[RD_MAX_RANK];
        int n = 0;
        if (p < 0 || ct_ints(C->d, p, "order", 0, RD_MAX_RANK - 1, order, RD_MAX_RANK, &n, &le))
            return p < 0 ? false : cf_opt_fail(C, &le);
        for (int i = n; i < r; i++) /* axes not named keep their order after the named ones */
            order[n++] = i;
        const char *y = cf_top(C, 0, n);
        rd_onnx_node *nd = cf_node(C, "Transpose", &x, 1, &y, 1);
        if (nd)
            rd_onnx_attr_ints(nd, "perm", order, (size_t)n);
        return true;
    }
    /* Reshape: shape { dim } with 0 (copy) and -1 (infer), as ONNX's Reshape */
    int p = ct_find(C->d, C->layer, "reshape_param", -1);
    int s = p >= 0 ? ct_find(C->d, p, "shape", -1) : -1;
    int64_t dims[RD_MAX_RANK], axis = 0, num_axes = -1;
    int n = 0;
    if (s < 0 || ct_ints(C->d, s, "dim", -1, 1 << 30, dims, RD_MAX_RANK, &n, &le) ||
        ct_int(C->d, p, "axis", 0, -8, 8, &axis, &le) || ct_int(C->d, p, "num_axes", -1, -1, 8, &num_axes, &le))
        return s < 0 ? cf_fail(C, RD_E_PARSE, "%s:%d: Reshape layer '%s' has no reshape_param.shape", C->d->path,
                               C->d->nodes[C->layer].line, cf_layer_name(C)),
               true  : cf_opt_fail(C, &le);
    if (axis != 0 || num_axes != -1)
        return false;
    const char *shape = cf_init_i64(C, cf_layer_name(C), ":shape", dims, n), *y = cf_top(C, 0, n);
    cf_node(C, "Reshape", (const char *const[]){x, shape}, 2, &y, 1);
    return true;
}

static bool slice(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "slice_param", -1);
    int64_t axis = 1, points[CF_MAX_IO];
    int n = 0;
    rd_error le;
    if (p >= 0 && (ct_int(C->d, p, "axis", 1, -8, 8, &axis, &le) ||
                   ct_ints(C->d, p, "slice_point", 0, 1 << 30, points, CF_MAX_IO, &n, &le)))
        return cf_opt_fail(C, &le);
    int tops = cf_count(C, "top");
    if (tops < 1 || tops > CF_MAX_IO || (n && n != tops - 1))
        return cf_fail(C, RD_E_PARSE, "%s:%d: Slice layer '%s': %d slice points for %d tops", C->d->path,
                       C->d->nodes[C->layer].line, cf_layer_name(C), n, tops),
               true;
    const char *x = cf_bottom(C, 0), *out[CF_MAX_IO];
    for (int i = 0; i < tops; i++)
        out[i] = cf_top(C, i, cf_rank_of(C, x ? x : ""));
    if (!n) {
        axis_node(C, "Split", &x, 1, out, tops, axis);
        return true;
    }
    /* slice points to the sizes of all but the last part; the last takes the rest: one Slice per top */
    for (int i = 0; i < tops; i++) {
        int64_t b = i ? points[i - 1] : 0, e = i < n ? points[i] : INT64_MAX;
        const char *in[4] = {x, cf_init_i64(C, out[i] ? out[i] : "", ":starts", &b, 1),
                             cf_init_i64(C, out[i] ? out[i] : "", ":ends", &e, 1),
                             cf_init_i64(C, out[i] ? out[i] : "", ":axes", &axis, 1)};
        cf_node(C, "Slice", in, 4, &out[i], 1);
    }
    return true;
}

static bool unary(cf_ctx *C, const char *op)
{
    const char *x = cf_bottom(C, 0), *y = cf_top(C, 0, cf_rank_of(C, x ? x : ""));
    cf_node(C, op, &x, 1, &y, 1);
    return true;
}

static bool input_layer(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "input_param", -1);
    int tops = cf_count(C, "top");
    int shape = -1;
    for (int i = 0; i < tops; i++) {
        int next = p >= 0 ? ct_find(C->d, p, "shape", shape) : -1;
        shape = next >= 0 ? next : shape; /* one shape for all tops, or one each */
        int64_t dims[RD_MAX_RANK];
        int n = 0;
        rd_error le;
        if (shape < 0)
            return cf_fail(C, RD_E_PARSE, "%s:%d: Input layer '%s' has no input_param.shape", C->d->path,
                           C->d->nodes[C->layer].line, cf_layer_name(C)),
                   true;
        if (ct_ints(C->d, shape, "dim", 0, 1 << 30, dims, RD_MAX_RANK, &n, &le))
            return cf_opt_fail(C, &le);
        const char *v = cf_top(C, i, n);
        if (v && rd_onnx_add_input(C->b, v, RD_DT_F32, n, dims, NULL) != RD_OK)
            cf_fail(C, RD_E_NOMEM, "out of memory");
    }
    return true;
}

/* Upsample: nearest by an integer factor (upsample_param.scale, or scale_h/scale_w). The SegNet form with a
   second bottom (the pooling mask) unpools instead: not supported. */
static bool upsample(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "upsample_param", -1);
    int64_t sc, sh, sw;
    rd_error le;
    if (cf_count(C, "bottom") != 1)
        return false;
    if (p >= 0 &&
        (ct_int(C->d, p, "scale", 2, 1, 1 << 10, &sc, &le) || ct_int(C->d, p, "scale_h", sc, 1, 1 << 10, &sh, &le) ||
         ct_int(C->d, p, "scale_w", sc, 1, 1 << 10, &sw, &le)))
        return cf_opt_fail(C, &le);
    if (p < 0)
        sh = sw = 2;
    const char *x = cf_bottom(C, 0);
    rd_tensor t = {0};
    if (rd_tensor_alloc(&t, RD_DT_F32, 1, (const int64_t[]){4}, &le) != RD_OK)
        return cf_opt_fail(C, &le);
    float *f = t.data;
    f[0] = f[1] = 1.0f;
    f[2] = (float)sh;
    f[3] = (float)sw;
    const char *scales = cf_init(C, cf_layer_name(C), ":scales", &t);
    const char *y = cf_top(C, 0, 4);
    rd_onnx_node *n = cf_node(C, "Resize", (const char *const[]){x, "", scales}, 3, &y, 1);
    if (n) {
        rd_onnx_attr_string(n, "mode", "nearest");
        rd_onnx_attr_string(n, "coordinate_transformation_mode", "asymmetric");
        rd_onnx_attr_string(n, "nearest_mode", "floor");
    }
    return true;
}

/* An int64 binary node on value a and a constant. */
static const char *i64_op(cf_ctx *C, const char *op, const char *a, int64_t v)
{
    const char *k = cf_init_i64(C, cf_layer_name(C), ":k", &v, 1), *o = cf_fresh(C, cf_layer_name(C), ":size");
    cf_node(C, op, (const char *const[]){a, k}, 2, &o, 1);
    return o;
}

/* Elements [b, e) of Shape(v). */
static const char *shape_part(cf_ctx *C, const char *v, int64_t b, int64_t e)
{
    const char *s = cf_fresh(C, cf_layer_name(C), ":shape"), *o = cf_fresh(C, cf_layer_name(C), ":dims");
    cf_node(C, "Shape", &v, 1, &s, 1);
    const char *in[4] = {s, cf_init_i64(C, cf_layer_name(C), ":starts", &b, 1),
                         cf_init_i64(C, cf_layer_name(C), ":ends", &e, 1),
                         cf_init_i64(C, cf_layer_name(C), ":axes", (const int64_t[]){0}, 1)};
    cf_node(C, "Slice", in, 4, &o, 1);
    return o;
}

/* Interp: bilinear, corners aligned, to the size of a second bottom, height/width, or shrink then zoom. */
static bool interp(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "interp_param", -1);
    int64_t zoom = 0, shrink = 0, h = 0, w = 0, pb = 0, pe = 0;
    rd_error le;
    if (p >= 0 &&
        (ct_int(C->d, p, "zoom_factor", 0, 1, 1 << 10, &zoom, &le) ||
         ct_int(C->d, p, "shrink_factor", 0, 1, 1 << 10, &shrink, &le) ||
         ct_int(C->d, p, "height", 0, 1, 1 << 20, &h, &le) || ct_int(C->d, p, "width", 0, 1, 1 << 20, &w, &le) ||
         ct_int(C->d, p, "pad_beg", 0, -(1 << 20), 1 << 20, &pb, &le) ||
         ct_int(C->d, p, "pad_end", 0, -(1 << 20), 1 << 20, &pe, &le)))
        return cf_opt_fail(C, &le);
    if (pb != 0 || pe != 0)
        return false; /* cropping before resizing */
    bool two = cf_count(C, "bottom") > 1, hw = h > 0 && w > 0;
    if ((int)two + (int)hw + (int)(zoom || shrink) != 1)
        return cf_fail(C, RD_E_PARSE,
                       "%s:%d: Interp layer '%s' needs exactly one size: a second bottom, "
                       "interp_param height and width, or zoom_factor/shrink_factor",
                       C->d->path, C->d->nodes[C->layer].line, cf_layer_name(C)),
               true;
    const char *x = cf_bottom(C, 0), *size;
    if (two) {
        size = shape_part(C, cf_bottom(C, 1), 2, 4);
    } else if (hw) {
        size = cf_init_i64(C, cf_layer_name(C), ":hw", (const int64_t[]){h, w}, 2);
    } else {
        size = shape_part(C, x, 2, 4);
        if (shrink) /* (h - 1) / shrink + 1 */
            size = i64_op(C, "Add", i64_op(C, "Div", i64_op(C, "Sub", size, 1), shrink), 1);
        if (zoom) /* (h - 1) * zoom + 1 */
            size = i64_op(C, "Add", i64_op(C, "Mul", i64_op(C, "Sub", size, 1), zoom), 1);
    }
    const char *sizes = cf_fresh(C, cf_layer_name(C), ":sizes");
    rd_onnx_node *cat = cf_node(C, "Concat", (const char *const[]){shape_part(C, x, 0, 2), size}, 2, &sizes, 1);
    if (cat)
        rd_onnx_attr_int(cat, "axis", 0);
    const char *y = cf_top(C, 0, 4);
    rd_onnx_node *n = cf_node(C, "Resize", (const char *const[]){x, "", "", sizes}, 4, &y, 1);
    if (n) {
        rd_onnx_attr_string(n, "mode", "linear");
        rd_onnx_attr_string(n, "coordinate_transformation_mode", "align_corners");
    }
    return true;
}

/* One layer; false when its type (or an option of it) is not supported. */
bool cf_lower_layer(cf_ctx *C, const char *type)
{
    static const struct {
        const char *type, *op;
    } unaries[] = {
        {"Dropout", "Identity"}, {"Sigmoid", "Sigmoid"}, {"TanH", "Tanh"}, {"AbsVal", "Abs"}, {"Split", NULL},
    };
    static const struct {
        const char *type;
        bool (*lower)(cf_ctx *);
    } layers[] = {
        {"Input", input_layer},    {"Pooling", pooling},   {"InnerProduct", inner_product},
        {"BatchNorm", batch_norm}, {"Scale", scale},       {"ReLU", relu},
        {"PReLU", prelu},          {"Eltwise", eltwise},   {"Concat", concat},
        {"Slice", slice},          {"Upsample", upsample}, {"Interp", interp},
    };
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
        if (!strcmp(type, layers[i].type))
            return layers[i].lower(C);
    if (!strcmp(type, "Convolution") || !strcmp(type, "Deconvolution"))
        return conv(C, !strcmp(type, "Deconvolution"));
    if (!strcmp(type, "Softmax") || !strcmp(type, "Flatten") || !strcmp(type, "Permute") || !strcmp(type, "Reshape"))
        return shape_layer(C, type);
    for (size_t i = 0; i < sizeof unaries / sizeof unaries[0]; i++)
        if (!strcmp(type, unaries[i].type)) {
            if (unaries[i].op)
                return unary(C, unaries[i].op);
            /* Split copies its bottom to every top */
            const char *x = cf_bottom(C, 0);
            for (int k = 0; k < cf_count(C, "top") && C->st == RD_OK; k++) {
                const char *y = cf_top(C, k, cf_rank_of(C, x ? x : ""));
                cf_node(C, "Identity", &x, 1, &y, 1);
            }
            return true;
        }
    return false;
}

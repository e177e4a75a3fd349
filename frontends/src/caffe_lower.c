/*
 * caffe_lower.c: a Caffe net (.prototxt tree, caffe_text.c) with its weights (.caffemodel, protobuf-c from
 * proto/caffe.proto) written as ONNX. Caffe is NCHW, as ONNX. Layer parameters come from the .prototxt and
 * weights from the .caffemodel, matched by layer name, as RKNN's load_caffe takes them.
 *
 * Names: a layer's output keeps its top's name; a layer that writes a top again (Caffe's in-place ReLU, BatchNorm,
 * Scale on "conv1") names its output after the layer ("relu1"), since an ONNX value is written once. Later
 * layers reading that top read the newest value, as Caffe does.
 *
 * Rounding rules: Pooling rounds its output size up (Caffe's default round_mode CEIL; FLOOR as given), with
 * Caffe's rule that the last window starts inside the input or its begin pad, which is ONNX's ceil_mode; an
 * average divides by the window clipped to the padded input (ONNX count_include_pad = 1 with ceil_mode: the
 * same divisor). Deconvolution's output is (in - 1) * stride - 2 * pad + dilation * (k - 1) + 1: ONNX
 * ConvTranspose with those pads.
 */
#include "caffe.h"

#include "caffe.pb-c.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#define CF_MAX_IO 64

typedef struct cf_ctx {
    const ct_doc *d;
    rd_onnx_builder *b;
    const Rdcaffe__NetParameter *net; /* the .caffemodel */
    const char *wname;
    fe_names names;
    fe_map blob;                /* top name -> current ONNX value (const char *) */
    fe_map rank;                /* ONNX value -> rank (intptr_t) */
    fe_map weights;             /* layer name -> its LayerParameter in the .caffemodel */
    const char **written;       /* every value a layer wrote, in order (outputs are those nobody reads) */
    size_t n_written, cap_written;
    fe_unsupported unsup;
    rd_status st;
    rd_error *err;
    int layer;                  /* node index of the layer being written */
    int index;                  /* its position among the layers */
} cf_ctx;

static rd_status fail(cf_ctx *C, rd_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static rd_status fail(cf_ctx *C, rd_status code, const char *fmt, ...)
{
    if (C->st != RD_OK)
        return C->st;
    char msg[RD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    C->st = rd_errorf(C->err, code, "%s", msg);
    return C->st;
}

static bool opt_fail(cf_ctx *C, const rd_error *le)
{
    fail(C, le->code, "%s", le->msg);
    return true;
}

static const char *layer_name(const cf_ctx *C)
{
    return ct_str(C->d, C->layer, "name", "");
}

static const char *fresh(cf_ctx *C, const char *base, const char *suffix)
{
    const char *s = fe_names_fresh(&C->names, base, suffix);
    if (!s)
        fail(C, RD_E_NOMEM, "out of memory");
    return s;
}

static void set_rank(cf_ctx *C, const char *v, int rank)
{
    fe_map_slot *s = fe_map_put(&C->rank, v, NULL, NULL);
    if (!s)
        fail(C, RD_E_NOMEM, "out of memory");
    else
        s->val = (void *)(intptr_t)rank;
}

static int rank_of(const cf_ctx *C, const char *v)
{
    fe_map_slot *s = fe_map_get(&C->rank, v);
    return s ? (int)(intptr_t)s->val : 4;
}

static rd_onnx_node *node(cf_ctx *C, const char *op, const char *const *in, int n_in, const char *const *out,
                          int n_out)
{
    if (C->st != RD_OK)
        return NULL;
    for (int i = 0; i < n_in; i++)
        if (!in[i])
            return NULL;
    for (int i = 0; i < n_out; i++)
        if (!out[i])
            return NULL;
    rd_onnx_node *n = rd_onnx_add_node(C->b, op, layer_name(C), in, n_in, out, n_out);
    if (!n)
        fail(C, RD_E_NOMEM, "out of memory");
    return n;
}

static const char *init(cf_ctx *C, const char *base, const char *suffix, rd_tensor *t)
{
    const char *nm = C->st == RD_OK ? fresh(C, base, suffix) : NULL;
    if (nm && rd_onnx_add_initializer(C->b, nm, t, RD_ONNX_RAW) != RD_OK)
        fail(C, RD_E_NOMEM, "out of memory");
    rd_tensor_fini(t);
    return C->st == RD_OK ? nm : NULL;
}

static const char *init_i64(cf_ctx *C, const char *base, const char *suffix, const int64_t *v, int n)
{
    rd_tensor t = {0};
    rd_error e;
    if (rd_tensor_alloc(&t, RD_DT_I64, 1, (const int64_t[]){n}, &e) != RD_OK)
        return fail(C, e.code, "%s", e.msg), NULL;
    if (n)
        memcpy(t.data, v, (size_t)n * sizeof *v);
    return init(C, base, suffix, &t);
}

static const char *init_scalar(cf_ctx *C, const char *base, const char *suffix, float v)
{
    rd_tensor t = {0};
    rd_error e;
    if (rd_tensor_alloc(&t, RD_DT_F32, 0, NULL, &e) != RD_OK)
        return fail(C, e.code, "%s", e.msg), NULL;
    *(float *)t.data = v;
    return init(C, base, suffix, &t);
}

/* ---- weights ------------------------------------------------------------------------------------------- */

/* Blob k of the current layer as float32 with its own shape (legacy num/channels/height/width when it has no
   BlobShape); want_numel >= 0 checks the element count. */
static bool blob(cf_ctx *C, int k, int64_t want_numel, rd_tensor *out)
{
    memset(out, 0, sizeof *out);
    if (C->st != RD_OK)
        return false;
    const char *name = layer_name(C);
    fe_map_slot *s = fe_map_get(&C->weights, name);
    const Rdcaffe__LayerParameter *lp = s ? s->val : NULL;
    if (!lp || (size_t)k >= lp->n_blobs)
        return fail(C, RD_E_PARSE, "%s: layer '%s' (%s line %d) has %zu weight blob%s, it needs blob %d: is it the "
                    ".caffemodel of this .prototxt?", C->wname, name, C->d->path, C->d->nodes[C->layer].line,
                    lp ? lp->n_blobs : 0, lp && lp->n_blobs == 1 ? "" : "s", k), false;
    const Rdcaffe__BlobProto *bp = lp->blobs[k];
    int rank = 0;
    int64_t dims[RD_MAX_RANK];
    if (bp->shape) {
        if (bp->shape->n_dim > RD_MAX_RANK)
            return fail(C, RD_E_PARSE, "%s: layer '%s' blob %d has rank %zu", C->wname, name, k, bp->shape->n_dim),
                   false;
        rank = (int)bp->shape->n_dim;
        for (int i = 0; i < rank; i++)
            dims[i] = bp->shape->dim[i];
    } else {
        rank = 4;
        dims[0] = bp->num;
        dims[1] = bp->channels;
        dims[2] = bp->height;
        dims[3] = bp->width;
    }
    rd_error e;
    if (rd_tensor_alloc(out, RD_DT_F32, rank, dims, &e) != RD_OK)
        return fail(C, e.code, "%s: layer '%s' blob %d: %s", C->wname, name, k, e.msg), false;
    int64_t n = rd_tensor_numel(out);
    size_t have = bp->n_data ? bp->n_data : bp->n_double_data;
    if ((size_t)n != have || (want_numel >= 0 && n != want_numel)) {
        rd_tensor_fini(out);
        return fail(C, RD_E_PARSE, "%s: layer '%s' blob %d holds %zu values for a shape of %lld%s%lld", C->wname, name,
                    k, have, (long long)n, want_numel >= 0 ? ", the .prototxt needs " : "",
                    (long long)(want_numel >= 0 ? want_numel : n)), false;
    }
    float *f = out->data;
    for (int64_t i = 0; i < n; i++) {
        f[i] = bp->n_data ? bp->data[i] : (float)bp->double_data[i];
        if (!isfinite(f[i])) {
            rd_tensor_fini(out);
            return fail(C, RD_E_PARSE, "%s: layer '%s' blob %d value %lld is not finite", C->wname, name, k,
                        (long long)i), false;
        }
    }
    return true;
}

/* A per-channel vector [c] shaped to broadcast on axis 1 of a rank-r tensor ([c, 1, 1] for 4-D). */
static void per_channel(rd_tensor *t, int r)
{
    int64_t c = rd_tensor_numel(t);
    t->rank = r > 1 ? r - 1 : 1;
    t->dims[0] = c;
    for (int i = 1; i < t->rank; i++)
        t->dims[i] = 1;
}

/* ---- layers --------------------------------------------------------------------------------------------- */

/* Bottom k's current value (NULL and a failure when the layer has no such bottom or it is unknown). */
static const char *bottom(cf_ctx *C, int k)
{
    int b = -1;
    for (int i = 0; i <= k; i++)
        if ((b = ct_find(C->d, C->layer, "bottom", b)) < 0)
            return fail(C, RD_E_PARSE, "%s:%d: layer '%s' needs %d bottom%s", C->d->path, C->d->nodes[C->layer].line,
                        layer_name(C), k + 1, k ? "s" : ""), NULL;
    const char *name = C->d->nodes[b].value ? C->d->nodes[b].value : "";
    fe_map_slot *s = fe_map_get(&C->blob, name);
    if (!s)
        return fail(C, RD_E_PARSE, "%s:%d: layer '%s' reads '%s', which no earlier layer or input writes", C->d->path,
                    C->d->nodes[b].line, layer_name(C), name), NULL;
    return s->val;
}

static int count(const cf_ctx *C, const char *key)
{
    int n = 0;
    for (int k = ct_find(C->d, C->layer, key, -1); k >= 0; k = ct_find(C->d, C->layer, key, k))
        n++;
    return n;
}

/* The value name top k of the layer is written to: the top's own name, or after the layer when the top exists
   (in place). */
static const char *top(cf_ctx *C, int k, int rank)
{
    int t = -1;
    for (int i = 0; i <= k; i++)
        if ((t = ct_find(C->d, C->layer, "top", t)) < 0)
            return fail(C, RD_E_PARSE, "%s:%d: layer '%s' needs %d top%s", C->d->path, C->d->nodes[C->layer].line,
                        layer_name(C), k + 1, k ? "s" : ""), NULL;
    const char *name = C->d->nodes[t].value ? C->d->nodes[t].value : "";
    bool exists = fe_map_get(&C->blob, name) != NULL;
    const char *v = fresh(C, exists && layer_name(C)[0] ? layer_name(C) : name[0] ? name : "top", "");
    fe_map_slot *s = v ? fe_map_put(&C->blob, name, NULL, NULL) : NULL;
    if (v && !s)
        fail(C, RD_E_NOMEM, "out of memory");
    if (s)
        s->val = (void *)v;
    if (v)
        set_rank(C, v, rank);
    if (v && C->n_written == C->cap_written) {
        size_t cap = C->cap_written ? 2 * C->cap_written : 64;
        const char **g = realloc(C->written, cap * sizeof *g);
        if (!g)
            return fail(C, RD_E_NOMEM, "out of memory"), NULL;
        C->written = g;
        C->cap_written = cap;
    }
    if (v)
        C->written[C->n_written++] = v;
    return v;
}

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
    if (ct_ints(C->d, p, key, lo, 1 << 20, v, 2, &n, &le) || ct_int(C->d, p, kh, n ? v[0] : def, lo, 1 << 20, &out[0], &le) ||
        ct_int(C->d, p, kw, n == 2 ? v[1] : n ? v[0] : def, lo, 1 << 20, &out[1], &le))
        return !opt_fail(C, &le);
    return true;
}

static bool conv(cf_ctx *C, bool deconv)
{
    int p = ct_find(C->d, C->layer, "convolution_param", -1);
    if (p < 0)
        return fail(C, RD_E_PARSE, "%s:%d: layer '%s' has no convolution_param", C->d->path,
                    C->d->nodes[C->layer].line, layer_name(C)), true;
    int64_t num, group, k[2], s[2], pad[2], dil[2];
    bool bias_term;
    rd_error le;
    if (ct_int(C->d, p, "num_output", 0, 1, 1 << 24, &num, &le) || ct_int(C->d, p, "group", 1, 1, 1 << 24, &group, &le) ||
        ct_bool(C->d, p, "bias_term", true, &bias_term, &le))
        return opt_fail(C, &le);
    if (!hw_param(C, p, "kernel_size", "kernel", 0, 1, k) || !hw_param(C, p, "stride", "stride", 1, 1, s) ||
        !hw_param(C, p, "pad", "pad", 0, 0, pad))
        return true;
    int64_t dv[2];
    int nd = 0;
    if (ct_ints(C->d, p, "dilation", 1, 1 << 20, dv, 2, &nd, &le))
        return opt_fail(C, &le);
    dil[0] = nd ? dv[0] : 1;
    dil[1] = nd == 2 ? dv[1] : dil[0];
    const char *x = bottom(C, 0);
    rd_tensor w;
    if (!blob(C, 0, -1, &w))
        return true;
    if (w.rank != 4 || (!deconv && w.dims[0] != num) || (deconv && w.dims[1] * group != num) || w.dims[2] != k[0] ||
        w.dims[3] != k[1]) {
        rd_tensor_fini(&w);
        return fail(C, RD_E_PARSE, "%s: layer '%s': weights of shape %lldx%lldx%lldx%lld, the .prototxt says %lld "
                    "outputs of %lldx%lld", C->wname, layer_name(C), (long long)w.dims[0], (long long)w.dims[1],
                    (long long)w.dims[2], (long long)w.dims[3], (long long)num, (long long)k[0], (long long)k[1]), true;
    }
    const char *wn = init(C, layer_name(C), ":weights", &w), *bn = NULL;
    if (bias_term) {
        rd_tensor b;
        if (blob(C, 1, num, &b)) {
            per_channel(&b, 2);
            bn = init(C, layer_name(C), ":bias", &b);
        }
    }
    const char *y = top(C, 0, 4);
    rd_onnx_node *n = node(C, deconv ? "ConvTranspose" : "Conv", (const char *const[]){x, wn, bn}, bias_term ? 3 : 2, &y, 1);
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
        return opt_fail(C, &le);
    if (p >= 0 && (!hw_param(C, p, "kernel_size", "kernel", 0, 0, k) || !hw_param(C, p, "stride", "stride", 1, 1, s) ||
                   !hw_param(C, p, "pad", "pad", 0, 0, pad)))
        return true;
    bool max = !strcmp(pool, "MAX") || !strcmp(pool, "0"), ave = !strcmp(pool, "AVE") || !strcmp(pool, "1");
    if (!max && !ave)
        return false; /* STOCHASTIC */
    const char *x = bottom(C, 0), *y = top(C, 0, 4);
    if (global)
        return node(C, max ? "GlobalMaxPool" : "GlobalAveragePool", &x, 1, &y, 1), true;
    if (k[0] < 1 || k[1] < 1)
        return fail(C, RD_E_PARSE, "%s:%d: layer '%s': pooling without kernel_size", C->d->path,
                    C->d->nodes[C->layer].line, layer_name(C)), true;
    rd_onnx_node *n = node(C, max ? "MaxPool" : "AveragePool", &x, 1, &y, 1);
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
    if (p < 0 || ct_int(C->d, p, "num_output", 0, 1, 1 << 24, &num, &le) || ct_int(C->d, p, "axis", 1, -8, 8, &axis, &le) ||
        ct_bool(C->d, p, "bias_term", true, &bias_term, &le) || ct_bool(C->d, p, "transpose", false, &transpose, &le))
        return p < 0 ? fail(C, RD_E_PARSE, "%s:%d: layer '%s' has no inner_product_param", C->d->path,
                            C->d->nodes[C->layer].line, layer_name(C)), true : opt_fail(C, &le);
    const char *x = bottom(C, 0);
    rd_tensor w;
    if (!blob(C, 0, -1, &w))
        return true;
    int64_t n = rd_tensor_numel(&w);
    int64_t kdim = n / num;
    if (kdim * num != n) {
        rd_tensor_fini(&w);
        return fail(C, RD_E_PARSE, "%s: layer '%s': %lld weights for %lld outputs", C->wname, layer_name(C),
                    (long long)n, (long long)num), true;
    }
    w.rank = 2; /* legacy blobs are 1x1xNxK */
    w.dims[0] = transpose ? kdim : num;
    w.dims[1] = transpose ? num : kdim;
    const char *wn = init(C, layer_name(C), ":weights", &w), *bn = NULL;
    if (bias_term) {
        rd_tensor b;
        if (blob(C, 1, num, &b)) {
            per_channel(&b, 2);
            bn = init(C, layer_name(C), ":bias", &b);
        }
    }
    const char *flat = fresh(C, layer_name(C), ":flatten");
    rd_onnx_node *f = node(C, "Flatten", &x, 1, &flat, 1);
    if (f)
        rd_onnx_attr_int(f, "axis", axis);
    const char *y = top(C, 0, 2);
    rd_onnx_node *g = node(C, "Gemm", (const char *const[]){flat, wn, bn}, bias_term ? 3 : 2, &y, 1);
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
        return opt_fail(C, &le);
    const char *x = bottom(C, 0);
    rd_tensor mean, var, factor;
    if (!blob(C, 0, -1, &mean))
        return true;
    int64_t c = rd_tensor_numel(&mean);
    if (!blob(C, 1, c, &var) || !blob(C, 2, 1, &factor)) {
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
        return fail(C, e.code, "%s", e.msg), true;
    }
    for (int64_t i = 0; i < c; i++) {
        ((float *)mean.data)[i] *= f;
        ((float *)var.data)[i] *= f;
        ((float *)one.data)[i] = 1.0f;
    }
    mean.rank = var.rank = 1;
    mean.dims[0] = var.dims[0] = c;
    const char *in[5] = {x, init(C, layer_name(C), ":scale", &one), init(C, layer_name(C), ":bias", &zero),
                         init(C, layer_name(C), ":mean", &mean), init(C, layer_name(C), ":variance", &var)};
    const char *y = top(C, 0, rank_of(C, x ? x : ""));
    rd_onnx_node *n = node(C, "BatchNormalization", in, 5, &y, 1);
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
    if (p >= 0 && (ct_bool(C->d, p, "bias_term", false, &bias_term, &le) || ct_int(C->d, p, "axis", 1, -8, 8, &axis, &le)))
        return opt_fail(C, &le);
    if (axis != 1)
        return false;
    const char *x = bottom(C, 0);
    int r = rank_of(C, x ? x : "");
    const char *g = NULL;
    int wblob = 0;
    if (count(C, "bottom") > 1) {
        g = bottom(C, 1);
    } else {
        rd_tensor t;
        if (!blob(C, 0, -1, &t))
            return true;
        per_channel(&t, r);
        g = init(C, layer_name(C), ":gamma", &t);
        wblob = 1;
    }
    const char *y = top(C, 0, r);
    const char *prod = bias_term ? fresh(C, y ? y : "", ":mul") : y;
    node(C, "Mul", (const char *const[]){x, g}, 2, &prod, 1);
    if (bias_term) {
        rd_tensor t;
        if (!blob(C, wblob, -1, &t))
            return true;
        per_channel(&t, r);
        const char *beta = init(C, layer_name(C), ":beta", &t);
        node(C, "Add", (const char *const[]){prod, beta}, 2, &y, 1);
    }
    return true;
}

static bool relu(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "relu_param", -1);
    float slope = 0.0f;
    rd_error le;
    if (p >= 0 && ct_float(C->d, p, "negative_slope", 0.0f, &slope, &le))
        return opt_fail(C, &le);
    const char *x = bottom(C, 0), *y = top(C, 0, rank_of(C, x ? x : ""));
    rd_onnx_node *n = node(C, slope != 0.0f ? "LeakyRelu" : "Relu", &x, 1, &y, 1);
    if (n && slope != 0.0f)
        rd_onnx_attr_float(n, "alpha", slope);
    return true;
}

static bool prelu(cf_ctx *C)
{
    const char *x = bottom(C, 0);
    rd_tensor t;
    if (!blob(C, 0, -1, &t))
        return true;
    per_channel(&t, rank_of(C, x ? x : ""));
    const char *slope = init(C, layer_name(C), ":slope", &t), *y = top(C, 0, rank_of(C, x ? x : ""));
    node(C, "PRelu", (const char *const[]){x, slope}, 2, &y, 1);
    return true;
}

static bool eltwise(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "eltwise_param", -1);
    const char *op = p >= 0 ? ct_str(C->d, p, "operation", "SUM") : "SUM";
    int n = count(C, "bottom");
    if (n < 2 || n > CF_MAX_IO)
        return fail(C, RD_E_PARSE, "%s:%d: Eltwise layer '%s' has %d bottoms", C->d->path, C->d->nodes[C->layer].line,
                    layer_name(C), n), true;
    const char *in[CF_MAX_IO];
    float coeff[CF_MAX_IO];
    int nc = 0;
    rd_error le;
    if (p >= 0 && ct_floats(C->d, p, "coeff", coeff, CF_MAX_IO, &nc, &le))
        return opt_fail(C, &le);
    if (nc && nc != n)
        return fail(C, RD_E_PARSE, "%s:%d: %d coeff for %d bottoms", C->d->path, ct_line(C->d, p, "coeff"), nc, n), true;
    bool sum = !strcmp(op, "SUM") || !strcmp(op, "1"), prod = !strcmp(op, "PROD") || !strcmp(op, "0");
    if (!sum && !prod && strcmp(op, "MAX") && strcmp(op, "2"))
        return false;
    for (int i = 0; i < n; i++) {
        in[i] = bottom(C, i);
        if (nc && coeff[i] != 1.0f && sum) {
            const char *m = fresh(C, layer_name(C), ":coeff");
            node(C, "Mul", (const char *const[]){in[i], init_scalar(C, layer_name(C), ":coeff_value", coeff[i])}, 2,
                 &m, 1);
            in[i] = m;
        }
    }
    const char *y = top(C, 0, rank_of(C, in[0] ? in[0] : ""));
    if (prod) { /* Mul is binary */
        const char *acc = in[0];
        for (int i = 1; i < n; i++) {
            const char *o = i == n - 1 ? y : fresh(C, layer_name(C), ":prod");
            node(C, "Mul", (const char *const[]){acc, in[i]}, 2, &o, 1);
            acc = o;
        }
    } else {
        node(C, sum ? "Sum" : "Max", in, n, &y, 1);
    }
    return true;
}

static bool concat(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "concat_param", -1);
    int64_t axis = 1, dim;
    rd_error le;
    if (p >= 0 && (ct_int(C->d, p, "concat_dim", 1, 0, 8, &dim, &le) || ct_int(C->d, p, "axis", dim, -8, 8, &axis, &le)))
        return opt_fail(C, &le);
    int n = count(C, "bottom");
    if (n < 1 || n > CF_MAX_IO)
        return fail(C, RD_E_PARSE, "%s:%d: Concat layer '%s' has %d bottoms", C->d->path, C->d->nodes[C->layer].line,
                    layer_name(C), n), true;
    const char *in[CF_MAX_IO];
    for (int i = 0; i < n; i++)
        in[i] = bottom(C, i);
    const char *y = top(C, 0, rank_of(C, in[0] ? in[0] : ""));
    rd_onnx_node *nd = node(C, "Concat", in, n, &y, 1);
    if (nd)
        rd_onnx_attr_int(nd, "axis", axis);
    return true;
}

/* A layer with one input, one output and an axis-like parameter: Softmax, Flatten, Permute, Reshape. */
static bool shape_layer(cf_ctx *C, const char *type)
{
    rd_error le;
    const char *x = bottom(C, 0);
    int r = rank_of(C, x ? x : "");
    if (!strcmp(type, "Softmax")) {
        int p = ct_find(C->d, C->layer, "softmax_param", -1);
        int64_t axis = 1;
        if (p >= 0 && ct_int(C->d, p, "axis", 1, -8, 8, &axis, &le))
            return opt_fail(C, &le);
        const char *y = top(C, 0, r);
        rd_onnx_node *n = node(C, "Softmax", &x, 1, &y, 1);
        if (n)
            rd_onnx_attr_int(n, "axis", axis);
        return true;
    }
    if (!strcmp(type, "Flatten")) {
        int p = ct_find(C->d, C->layer, "flatten_param", -1);
        int64_t axis = 1, end = -1;
        if (p >= 0 && (ct_int(C->d, p, "axis", 1, -8, 8, &axis, &le) || ct_int(C->d, p, "end_axis", -1, -8, 8, &end, &le)))
            return opt_fail(C, &le);
        if (end != -1 && end != r - 1)
            return false;
        const char *y = top(C, 0, (int)(axis < 0 ? axis + r : axis) + 1);
        rd_onnx_node *n = node(C, "Flatten", &x, 1, &y, 1);
        if (n)
            rd_onnx_attr_int(n, "axis", axis);
        return true;
    }
    if (!strcmp(type, "Permute")) {
        int p = ct_find(C->d, C->layer, "permute_param", -1);
        int64_t order[RD_MAX_RANK];
        int n = 0;
        if (p < 0 || ct_ints(C->d, p, "order", 0, RD_MAX_RANK - 1, order, RD_MAX_RANK, &n, &le))
            return p < 0 ? false : opt_fail(C, &le);
        for (int i = n; i < r; i++) /* axes not named keep their order after the named ones */
            order[n++] = i;
        const char *y = top(C, 0, n);
        rd_onnx_node *nd = node(C, "Transpose", &x, 1, &y, 1);
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
        return s < 0 ? fail(C, RD_E_PARSE, "%s:%d: Reshape layer '%s' has no reshape_param.shape", C->d->path,
                            C->d->nodes[C->layer].line, layer_name(C)), true : opt_fail(C, &le);
    if (axis != 0 || num_axes != -1)
        return false;
    const char *shape = init_i64(C, layer_name(C), ":shape", dims, n), *y = top(C, 0, n);
    node(C, "Reshape", (const char *const[]){x, shape}, 2, &y, 1);
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
        return opt_fail(C, &le);
    int tops = count(C, "top");
    if (tops < 1 || tops > CF_MAX_IO || (n && n != tops - 1))
        return fail(C, RD_E_PARSE, "%s:%d: Slice layer '%s': %d slice points for %d tops", C->d->path,
                    C->d->nodes[C->layer].line, layer_name(C), n, tops), true;
    const char *x = bottom(C, 0), *out[CF_MAX_IO];
    for (int i = 0; i < tops; i++)
        out[i] = top(C, i, rank_of(C, x ? x : ""));
    if (!n) {
        rd_onnx_node *nd = node(C, "Split", &x, 1, out, tops);
        if (nd)
            rd_onnx_attr_int(nd, "axis", axis);
        return true;
    }
    /* slice points to the sizes of all but the last part; the last takes the rest: one Slice per top */
    for (int i = 0; i < tops; i++) {
        int64_t b = i ? points[i - 1] : 0, e = i < n ? points[i] : INT64_MAX;
        const char *in[4] = {x, init_i64(C, out[i] ? out[i] : "", ":starts", &b, 1),
                             init_i64(C, out[i] ? out[i] : "", ":ends", &e, 1),
                             init_i64(C, out[i] ? out[i] : "", ":axes", &axis, 1)};
        node(C, "Slice", in, 4, &out[i], 1);
    }
    return true;
}

static bool unary(cf_ctx *C, const char *op)
{
    const char *x = bottom(C, 0), *y = top(C, 0, rank_of(C, x ? x : ""));
    node(C, op, &x, 1, &y, 1);
    return true;
}

static bool input_layer(cf_ctx *C)
{
    int p = ct_find(C->d, C->layer, "input_param", -1);
    int tops = count(C, "top");
    int shape = -1;
    for (int i = 0; i < tops; i++) {
        int next = p >= 0 ? ct_find(C->d, p, "shape", shape) : -1;
        shape = next >= 0 ? next : shape; /* one shape for all tops, or one each */
        int64_t dims[RD_MAX_RANK];
        int n = 0;
        rd_error le;
        if (shape < 0)
            return fail(C, RD_E_PARSE, "%s:%d: Input layer '%s' has no input_param.shape", C->d->path,
                        C->d->nodes[C->layer].line, layer_name(C)), true;
        if (ct_ints(C->d, shape, "dim", 0, 1 << 30, dims, RD_MAX_RANK, &n, &le))
            return opt_fail(C, &le);
        const char *v = top(C, i, n);
        if (v && rd_onnx_add_input(C->b, v, RD_DT_F32, n, dims, NULL) != RD_OK)
            fail(C, RD_E_NOMEM, "out of memory");
    }
    return true;
}

/* One layer; false when its type (or an option of it) is not supported. */
static bool lower_layer(cf_ctx *C, const char *type)
{
    static const struct { const char *type, *op; } unaries[] = {
        {"Dropout", "Identity"}, {"Sigmoid", "Sigmoid"}, {"TanH", "Tanh"}, {"AbsVal", "Abs"}, {"Split", NULL},
    };
    if (!strcmp(type, "Input"))
        return input_layer(C);
    if (!strcmp(type, "Convolution") || !strcmp(type, "Deconvolution"))
        return conv(C, !strcmp(type, "Deconvolution"));
    if (!strcmp(type, "Pooling"))
        return pooling(C);
    if (!strcmp(type, "InnerProduct"))
        return inner_product(C);
    if (!strcmp(type, "BatchNorm"))
        return batch_norm(C);
    if (!strcmp(type, "Scale"))
        return scale(C);
    if (!strcmp(type, "ReLU"))
        return relu(C);
    if (!strcmp(type, "PReLU"))
        return prelu(C);
    if (!strcmp(type, "Eltwise"))
        return eltwise(C);
    if (!strcmp(type, "Concat"))
        return concat(C);
    if (!strcmp(type, "Softmax") || !strcmp(type, "Flatten") || !strcmp(type, "Permute") || !strcmp(type, "Reshape"))
        return shape_layer(C, type);
    if (!strcmp(type, "Slice"))
        return slice(C);
    for (size_t i = 0; i < sizeof unaries / sizeof unaries[0]; i++)
        if (!strcmp(type, unaries[i].type)) {
            if (unaries[i].op)
                return unary(C, unaries[i].op);
            /* Split copies its bottom to every top */
            const char *x = bottom(C, 0);
            for (int k = 0; k < count(C, "top") && C->st == RD_OK; k++) {
                const char *y = top(C, k, rank_of(C, x ? x : ""));
                node(C, "Identity", &x, 1, &y, 1);
            }
            return true;
        }
    return false;
}

/* Net-level inputs: input + input_shape { dim } (or input_dim x 4 per input). */
static void net_inputs(cf_ctx *C)
{
    int k = -1, shape = -1, n_in = 0;
    int64_t legacy[4 * RD_MAX_RANK];
    int n_legacy = 0;
    rd_error le;
    if (ct_ints(C->d, 0, "input_dim", 0, 1 << 30, legacy, 4 * RD_MAX_RANK, &n_legacy, &le)) {
        opt_fail(C, &le);
        return;
    }
    while ((k = ct_find(C->d, 0, "input", k)) >= 0 && C->st == RD_OK) {
        const char *name = C->d->nodes[k].value;
        int64_t dims[RD_MAX_RANK];
        int n = 0;
        shape = ct_find(C->d, 0, "input_shape", shape);
        if (shape >= 0) {
            if (ct_ints(C->d, shape, "dim", 0, 1 << 30, dims, RD_MAX_RANK, &n, &le)) {
                opt_fail(C, &le);
                return;
            }
        } else if (n_legacy >= 4 * (n_in + 1)) {
            memcpy(dims, legacy + 4 * n_in, 4 * sizeof *dims);
            n = 4;
        } else {
            fail(C, RD_E_PARSE, "%s:%d: input '%s' has no shape (input_shape or input_dim)", C->d->path,
                 C->d->nodes[k].line, name ? name : "");
            return;
        }
        const char *v = name ? fresh(C, name, "") : NULL;
        fe_map_slot *s = v ? fe_map_put(&C->blob, name, NULL, NULL) : NULL;
        if (s)
            s->val = (void *)v;
        if (v)
            set_rank(C, v, n);
        if (v && rd_onnx_add_input(C->b, v, RD_DT_F32, n, dims, NULL) != RD_OK)
            fail(C, RD_E_NOMEM, "out of memory");
        n_in++;
    }
}

static rd_status load_weights(cf_ctx *C, const void *w, size_t wlen, rd_pb_msg **msg)
{
    rd_status st = rd_pb_unpack(&rdcaffe__net_parameter__descriptor, w, wlen, "Caffe NetParameter", msg, C->err);
    if (st != RD_OK)
        return rd_error_prefix(C->err, "%s", C->wname);
    C->net = (const Rdcaffe__NetParameter *)rd_pb_msg_get(*msg);
    if (C->net->n_layer == 0 && C->net->n_layers > 0)
        return rd_errorf(C->err, RD_E_UNSUPPORTED, "%s: layers in Caffe's V1 format (before 2015): convert it with "
                         "Caffe's upgrade_net_proto_binary first", C->wname);
    for (size_t i = 0; i < C->net->n_layer; i++) {
        const Rdcaffe__LayerParameter *lp = C->net->layer[i];
        fe_map_slot *s = fe_map_put(&C->weights, lp->name ? lp->name : "", NULL, NULL);
        if (!s)
            return rd_errorf(C->err, RD_E_NOMEM, "out of memory");
        if (!s->val || lp->n_blobs) /* the layer that carries blobs wins over a same-named one without */
            s->val = (void *)lp;
    }
    return RD_OK;
}

/* Graph outputs: tops that no later layer reads (Caffe's net outputs). */
static void net_outputs(cf_ctx *C, fe_map *read)
{
    size_t n = 0;
    for (size_t i = 0; i < C->n_written; i++) {
        if (fe_map_get(read, C->written[i]))
            continue;
        if (rd_onnx_add_output(C->b, C->written[i], RD_DT_F32, -1, NULL, NULL) != RD_OK)
            fail(C, RD_E_NOMEM, "out of memory");
        n++;
    }
    if (n == 0)
        fail(C, RD_E_PARSE, "%s: the net has no output (every top is read by a later layer)", C->d->path);
}

rd_status caffe_lower(const ct_doc *net, const void *weights, size_t wlen, const char *wname, void **out_buf,
                      size_t *out_len, char *detail, size_t detail_len, rd_error *err)
{
    *out_buf = NULL;
    *out_len = 0;
    cf_ctx C = {.d = net, .wname = wname, .err = err};
    rd_pb_msg *msg = NULL;
    C.st = load_weights(&C, weights, wlen, &msg);
    if (C.st == RD_OK && ct_find(net, 0, "layers", -1) >= 0)
        C.st = rd_errorf(err, RD_E_UNSUPPORTED, "%s:%d: 'layers' in Caffe's V1 format (before 2015): convert it with "
                         "Caffe's upgrade_net_proto_text first", net->path, ct_line(net, 0, "layers"));
    if (C.st == RD_OK && !(C.b = rd_onnx_builder_create(8, 13)))
        C.st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (C.st == RD_OK)
        net_inputs(&C);
    fe_map read = {0};
    int n_layers = 0;
    for (int l = ct_find(net, 0, "layer", -1); l >= 0 && C.st == RD_OK; l = ct_find(net, 0, "layer", l), n_layers++) {
        C.layer = l;
        C.index = n_layers;
        const char *type = ct_str(net, l, "type", "");
        for (int b = ct_find(net, l, "bottom", -1); b >= 0; b = ct_find(net, l, "bottom", b)) {
            fe_map_slot *s = fe_map_get(&C.blob, net->nodes[b].value ? net->nodes[b].value : "");
            if (s && !fe_map_put(&read, s->val, NULL, NULL))
                fail(&C, RD_E_NOMEM, "out of memory");
        }
        if (!lower_layer(&C, type)) {
            char where[200], kind[96];
            snprintf(where, sizeof where, "layer '%s', %s line %d", layer_name(&C), net->path, net->nodes[l].line);
            snprintf(kind, sizeof kind, "%s%s", type,
                     !strcmp(type, "PriorBox") || !strcmp(type, "DetectionOutput") ? " (SSD post-processing: cut the "
                     "net before it with subgraphs.outputs)" : "");
            fe_unsupported_add(&C.unsup, kind, where);
        }
    }
    if (C.st == RD_OK && n_layers == 0)
        fail(&C, RD_E_PARSE, "%s: no layer { } (not a Caffe .prototxt?)", net->path);
    if (C.st == RD_OK && !C.unsup.n_kinds)
        net_outputs(&C, &read);
    rd_status unsup = fe_unsupported_finish(&C.unsup, net->path, "layer", C.st == RD_OK ? err : NULL);
    if (C.st == RD_OK && unsup != RD_OK)
        C.st = unsup;
    if (C.st == RD_OK) {
        snprintf(detail, detail_len, "Caffe, %d layers, weights %s", n_layers, wname);
        rd_onnx_set_producer(C.b, "rknn-diag caffe frontend", "");
        if (rd_onnx_builder_write(C.b, out_buf, out_len, err) != RD_OK)
            C.st = err ? err->code : RD_E_NOMEM;
    }
    fe_map_fini(&read);
    rd_onnx_builder_destroy(C.b);
    fe_names_fini(&C.names);
    fe_map_fini(&C.blob);
    fe_map_fini(&C.rank);
    fe_map_fini(&C.weights);
    free(C.written);
    rd_pb_msg_free(msg);
    return C.st;
}

/*
 * darknet_lower.c: a parsed Darknet .cfg and its .weights written as ONNX (darknet.h). Darknet is NCHW, as ONNX:
 * no layout change. Shapes are followed layer by layer as Darknet's parser computes them (they decide how many
 * floats each layer reads from the .weights).
 *
 * Names: Darknet layers have none; each output is named "<index>_<kind>" after Darknet's own layer table
 * ("0_conv", "1_max", "13_route", "16_yolo"), so a row of rknn-diag's tables is the line of Darknet's printout.
 * The network input is "input" [1, channels, height, width].
 *
 * Layers: convolutional (batch_normalize, groups, pad/padding, activations linear, leaky, relu, logistic, tanh,
 * elu, mish, swish), maxpool (Darknet's padding: size - 1 by default, half before), avgpool (global), route
 * (layers, groups/group_id), shortcut (from, alpha, beta, activation; same shapes), upsample (stride, scale),
 * connected, softmax, dropout, and yolo / region / detection as graph outputs carrying their input (the raw
 * convolution: Darknet's yolo layer applies the logistic to x, y, objectness and classes itself, and RKNN's
 * YOLO post-processing does the same on the raw outputs).
 *
 * Batch normalization follows Darknet's normalize_cpu: (x - mean) / (sqrt(var) + 1e-6), written as ONNX
 * BatchNormalization with epsilon 0 and variance (sqrt(var) + 1e-6)^2.
 */
#include "darknet.h"

#include <math.h>
#include <stdio.h>

#define DN_MAX_ROUTE 64

typedef struct dn_shape {
    int64_t c, h, w;
} dn_shape;

typedef struct dn_ctx {
    const dn_cfg *cfg;
    rd_onnx_builder *b;
    const uint8_t *w; /* the .weights */
    size_t wlen, wpos;
    const char *wname;
    dn_shape *shape; /* per layer */
    char **name;     /* per layer: its output value */
    fe_names names;
    fe_unsupported unsup;
    rd_status st;
    rd_error *err;
    size_t layer; /* index of the layer being written */
} dn_ctx;

/* Records the first failure (D->st) with a message; returns D->st. */
#define fail(D, code, ...) fe_fail(&(D)->st, (D)->err, code, NULL, __VA_ARGS__)

static const char *fresh(dn_ctx *D, const char *base, const char *suffix)
{
    const char *s = fe_names_fresh(&D->names, base, suffix);
    if (!s)
        fail(D, RD_E_NOMEM, "out of memory");
    return s;
}

/* The next floats of the .weights as a new tensor of the given shape (t zeroed on failure). */
static bool take_floats(dn_ctx *D, int rank, const int64_t *dims, const char *what, rd_tensor *t)
{
    memset(t, 0, sizeof *t);
    if (D->st != RD_OK)
        return false;
    rd_error e;
    if (rd_tensor_alloc(t, RD_DT_F32, rank, dims, &e) != RD_OK)
        return fail(D, e.code, "%s: layer %zu: %s", D->cfg->path, D->layer, e.msg), false;
    const dn_section *s = &D->cfg->sec[D->layer + 1];
    size_t bytes = rd_tensor_nbytes(t);
    if (bytes > D->wlen - D->wpos) {
        rd_tensor_fini(t);
        return fail(D, RD_E_PARSE,
                    "%s: layer %zu ([%s], %s line %d) needs %zu bytes of %s at offset %zu, the file "
                    "ends at %zu: is it the .weights of this .cfg?",
                    D->wname, D->layer, s->type, D->cfg->path, s->line, bytes, what, D->wpos, D->wlen),
               false;
    }
    memcpy(t->data, D->w + D->wpos, bytes);
    const float *f = t->data;
    for (int64_t i = 0; i < rd_tensor_numel(t); i++)
        if (!isfinite(f[i])) {
            rd_tensor_fini(t);
            return fail(D, RD_E_PARSE, "%s: layer %zu ([%s]): %s value %lld at offset %zu is not finite", D->wname,
                        D->layer, s->type, what, (long long)i, D->wpos + 4 * (size_t)i),
                   false;
        }
    D->wpos += bytes;
    return true;
}

/* t as an initializer named base + suffix (made unique); t is freed. */
static const char *init(dn_ctx *D, const char *base, const char *suffix, rd_tensor *t)
{
    const char *nm = D->st == RD_OK ? fresh(D, base, suffix) : NULL;
    if (nm && rd_onnx_add_initializer(D->b, nm, t, RD_ONNX_RAW) != RD_OK)
        fail(D, RD_E_NOMEM, "out of memory");
    rd_tensor_fini(t);
    return D->st == RD_OK ? nm : NULL;
}

static const char *read_floats(dn_ctx *D, const char *base, const char *suffix, int rank, const int64_t *dims,
                               const char *what)
{
    rd_tensor t;
    return take_floats(D, rank, dims, what, &t) ? init(D, base, suffix, &t) : NULL;
}

/* An option error (le) as the context's failure. */
static bool opt_fail(dn_ctx *D, const rd_error *le)
{
    fail(D, le->code, "%s", le->msg);
    return true;
}

static rd_onnx_node *node(dn_ctx *D, const char *op, const char *const *in, int n_in, const char *out)
{
    if (D->st != RD_OK || !out)
        return NULL;
    for (int i = 0; i < n_in; i++)
        if (!in[i])
            return NULL;
    rd_onnx_node *n = rd_onnx_add_node(D->b, op, out, in, n_in, &out, 1);
    if (!n)
        fail(D, RD_E_NOMEM, "out of memory");
    return n;
}

static const char *scalar(dn_ctx *D, const char *base, const char *suffix, float v)
{
    const char *nm = fresh(D, base, suffix);
    rd_tensor t = {.dtype = RD_DT_F32, .rank = 0, .data = &v};
    if (nm && rd_onnx_add_initializer(D->b, nm, &t, RD_ONNX_RAW) != RD_OK)
        fail(D, RD_E_NOMEM, "out of memory");
    return nm;
}

/* The activation key of section s applied to x, written to out. false: an activation not supported. */
static bool activation(dn_ctx *D, const dn_section *s, const char *x, const char *out)
{
    const char *a = dn_str(D->cfg, s, "activation", "linear");
    if (!strcmp(a, "linear")) {
        node(D, "Identity", &x, 1, out);
    } else if (!strcmp(a, "leaky")) {
        rd_onnx_node *n = node(D, "LeakyRelu", &x, 1, out);
        if (n)
            rd_onnx_attr_float(n, "alpha", 0.1f);
    } else if (!strcmp(a, "relu")) {
        node(D, "Relu", &x, 1, out);
    } else if (!strcmp(a, "logistic")) {
        node(D, "Sigmoid", &x, 1, out);
    } else if (!strcmp(a, "tanh")) {
        node(D, "Tanh", &x, 1, out);
    } else if (!strcmp(a, "elu")) {
        node(D, "Elu", &x, 1, out);
    } else if (!strcmp(a, "mish")) {
        node(D, "Mish", &x, 1, out);
    } else if (!strcmp(a, "swish")) {
        const char *sg = fresh(D, out, ":sigmoid");
        node(D, "Sigmoid", &x, 1, sg);
        node(D, "Mul", (const char *const[]){x, sg}, 2, out);
    } else {
        return false;
    }
    return true;
}

static bool is_linear(const dn_cfg *c, const dn_section *s)
{
    return !strcmp(dn_str(c, s, "activation", "linear"), "linear");
}

/* Convolutional layer: Conv (+ bias or BatchNormalization), activation. Weights: biases[n], then with
   batch_normalize scales[n], rolling_mean[n], rolling_variance[n]; then weights[n][c/groups][size][size]. */
static bool conv(dn_ctx *D, const dn_section *s, const char *x, dn_shape in, const char *out, dn_shape *o)
{
    int64_t n, size, stride, pad, padding, groups, bn;
    rd_error le;
    const dn_cfg *c = D->cfg;
    if (dn_int(c, s, "filters", 1, 1, 1 << 20, &n, &le) || dn_int(c, s, "size", 1, 1, 1024, &size, &le) ||
        dn_int(c, s, "stride", 1, 1, 1024, &stride, &le) || dn_int(c, s, "pad", 0, 0, 1, &pad, &le) ||
        dn_int(c, s, "padding", 0, 0, 1024, &padding, &le) || dn_int(c, s, "groups", 1, 1, 1 << 20, &groups, &le) ||
        dn_int(c, s, "batch_normalize", 0, 0, 1, &bn, &le))
        return opt_fail(D, &le);
    if (pad)
        padding = size / 2;
    if (in.c % groups || n % groups)
        return fail(D, RD_E_PARSE, "%s:%d: groups=%lld does not divide %lld input and %lld output channels", c->path,
                    dn_line(s, c, "groups"), (long long)groups, (long long)in.c, (long long)n),
               true;
    if (in.h + 2 * padding < size || in.w + 2 * padding < size)
        return fail(D, RD_E_PARSE, "%s:%d: a %lldx%lld filter on a %lldx%lld input", c->path, s->line, (long long)size,
                    (long long)size, (long long)in.h, (long long)in.w),
               true;
    *o = (dn_shape){n, (in.h + 2 * padding - size) / stride + 1, (in.w + 2 * padding - size) / stride + 1};
    char base[48];
    snprintf(base, sizeof base, "%zu_conv", D->layer);
    const char *bias = read_floats(D, base, ":biases", 1, (const int64_t[]){n}, "biases");
    const char *scales = NULL, *mean = NULL, *var = NULL;
    if (bn) {
        rd_tensor v;
        scales = read_floats(D, base, ":scales", 1, (const int64_t[]){n}, "scales");
        mean = read_floats(D, base, ":mean", 1, (const int64_t[]){n}, "rolling_mean");
        if (take_floats(D, 1, (const int64_t[]){n}, "rolling_variance", &v)) {
            /* Darknet divides by sqrt(var) + 1e-6: ONNX gets the variance whose square root that is */
            float *f = v.data;
            for (int64_t k = 0; k < n; k++) {
                double sd = sqrt(f[k] > 0.0f ? (double)f[k] : 0.0) + 1e-6;
                f[k] = (float)(sd * sd);
            }
            var = init(D, base, ":variance", &v);
        }
    }
    const char *w = read_floats(D, base, ":weights", 4, (const int64_t[]){n, in.c / groups, size, size}, "weights");
    bool linear = is_linear(c, s);
    const char *y = !bn && linear ? out : fresh(D, out, ":conv");
    rd_onnx_node *nd = node(D, "Conv", (const char *const[]){x, w, bias}, bn ? 2 : 3, y);
    if (nd) {
        rd_onnx_attr_ints(nd, "kernel_shape", (const int64_t[]){size, size}, 2);
        rd_onnx_attr_ints(nd, "strides", (const int64_t[]){stride, stride}, 2);
        rd_onnx_attr_ints(nd, "pads", (const int64_t[]){padding, padding, padding, padding}, 4);
        rd_onnx_attr_int(nd, "group", groups);
    }
    if (bn) {
        const char *z = linear ? out : fresh(D, out, ":bn");
        rd_onnx_node *b = node(D, "BatchNormalization", (const char *const[]){y, scales, bias, mean, var}, 5, z);
        if (b)
            rd_onnx_attr_float(b, "epsilon", 0.0f);
        y = z;
    }
    return linear || activation(D, s, y, out);
}

static bool maxpool(dn_ctx *D, const dn_section *s, const char *x, dn_shape in, const char *out, dn_shape *o)
{
    int64_t size, stride, padding;
    rd_error le;
    if (dn_int(D->cfg, s, "size", 1, 1, 1024, &size, &le) || dn_int(D->cfg, s, "stride", 1, 1, 1024, &stride, &le) ||
        dn_int(D->cfg, s, "padding", size - 1, 0, 1024, &padding, &le))
        return opt_fail(D, &le);
    *o = (dn_shape){in.c, (in.h + padding - size) / stride + 1, (in.w + padding - size) / stride + 1};
    if (o->h < 1 || o->w < 1)
        return fail(D, RD_E_PARSE, "%s:%d: maxpool %lld on a %lldx%lld input", D->cfg->path, s->line, (long long)size,
                    (long long)in.h, (long long)in.w),
               true;
    int64_t before = padding / 2;
    /* the end padding that covers the last window (Darknet clips windows to the input) */
    int64_t end_h = (o->h - 1) * stride + size - in.h - before, end_w = (o->w - 1) * stride + size - in.w - before;
    rd_onnx_node *n = node(D, "MaxPool", &x, 1, out);
    if (n) {
        rd_onnx_attr_ints(n, "kernel_shape", (const int64_t[]){size, size}, 2);
        rd_onnx_attr_ints(n, "strides", (const int64_t[]){stride, stride}, 2);
        rd_onnx_attr_ints(n, "pads", (const int64_t[]){before, before, end_h > 0 ? end_h : 0, end_w > 0 ? end_w : 0},
                          4);
    }
    return true;
}

/* Layer index k of a route/shortcut reference (negative: relative). */
static bool ref_layer(dn_ctx *D, const dn_section *s, int64_t k, size_t *out)
{
    int64_t idx = k < 0 ? (int64_t)D->layer + k : k;
    if (idx < 0 || idx >= (int64_t)D->layer)
        return fail(D, RD_E_PARSE, "%s:%d: layer reference %lld from layer %zu is outside 0..%zu", D->cfg->path,
                    dn_line(s, D->cfg, "layers"), (long long)k, D->layer, D->layer ? D->layer - 1 : 0),
               false;
    *out = (size_t)idx;
    return true;
}

static bool route(dn_ctx *D, const dn_section *s, const char *out, dn_shape *o)
{
    int64_t refs[DN_MAX_ROUTE], groups, group_id;
    int n = 0;
    rd_error le;
    if (dn_ints(D->cfg, s, "layers", refs, DN_MAX_ROUTE, &n, &le) ||
        dn_int(D->cfg, s, "groups", 1, 1, 1 << 20, &groups, &le) ||
        dn_int(D->cfg, s, "group_id", 0, 0, 1 << 20, &group_id, &le))
        return opt_fail(D, &le);
    if (n == 0)
        return fail(D, RD_E_PARSE, "%s:%d: route without layers=", D->cfg->path, s->line), true;
    const char *in[DN_MAX_ROUTE];
    *o = (dn_shape){0, 0, 0};
    for (int i = 0; i < n; i++) {
        size_t k;
        if (!ref_layer(D, s, refs[i], &k))
            return true;
        dn_shape sh = D->shape[k];
        if (i && (sh.h != o->h || sh.w != o->w))
            return fail(D, RD_E_PARSE, "%s:%d: route joins %lldx%lld and %lldx%lld outputs", D->cfg->path, s->line,
                        (long long)o->h, (long long)o->w, (long long)sh.h, (long long)sh.w),
                   true;
        o->h = sh.h;
        o->w = sh.w;
        o->c += sh.c;
        in[i] = D->name[k];
    }
    if (groups > 1 && (o->c % groups || group_id >= groups))
        return fail(D, RD_E_PARSE, "%s:%d: groups=%lld, group_id=%lld on %lld channels", D->cfg->path, s->line,
                    (long long)groups, (long long)group_id, (long long)o->c),
               true;
    const char *cat = groups > 1 ? (n > 1 ? fresh(D, out, ":concat") : in[0]) : out;
    if (n > 1) {
        rd_onnx_node *nd = node(D, "Concat", in, n, cat);
        if (nd)
            rd_onnx_attr_int(nd, "axis", 1);
    } else if (groups == 1) {
        node(D, "Identity", in, 1, out);
    }
    if (groups > 1) { /* AlexeyAB's channel groups: the group_id-th slice */
        int64_t part = o->c / groups;
        const char *st = fresh(D, out, ":starts"), *en = fresh(D, out, ":ends"), *ax = fresh(D, out, ":axes");
        int64_t sv = part * group_id, ev = part * (group_id + 1), av = 1;
        rd_tensor ts = {.dtype = RD_DT_I64, .rank = 1, .dims = {1}, .data = &sv};
        rd_tensor te = {.dtype = RD_DT_I64, .rank = 1, .dims = {1}, .data = &ev};
        rd_tensor ta = {.dtype = RD_DT_I64, .rank = 1, .dims = {1}, .data = &av};
        if (st && en && ax &&
            (rd_onnx_add_initializer(D->b, st, &ts, RD_ONNX_RAW) != RD_OK ||
             rd_onnx_add_initializer(D->b, en, &te, RD_ONNX_RAW) != RD_OK ||
             rd_onnx_add_initializer(D->b, ax, &ta, RD_ONNX_RAW) != RD_OK))
            fail(D, RD_E_NOMEM, "out of memory");
        node(D, "Slice", (const char *const[]){cat, st, en, ax}, 4, out);
        o->c = part;
    }
    return true;
}

static bool shortcut(dn_ctx *D, const dn_section *s, const char *x, dn_shape in, const char *out, dn_shape *o)
{
    int64_t from;
    float alpha, beta;
    rd_error le;
    if (dn_int(D->cfg, s, "from", 0, -1000000, 1000000, &from, &le) ||
        dn_float(D->cfg, s, "alpha", 1.0f, &alpha, &le) || dn_float(D->cfg, s, "beta", 1.0f, &beta, &le))
        return opt_fail(D, &le);
    size_t k;
    if (!dn_str(D->cfg, s, "from", NULL))
        return fail(D, RD_E_PARSE, "%s:%d: shortcut without from=", D->cfg->path, s->line), true;
    if (!ref_layer(D, s, from, &k))
        return true;
    dn_shape a = D->shape[k];
    if (a.c != in.c || a.h != in.h || a.w != in.w)
        return false; /* Darknet's strided shortcut between shapes: not supported */
    *o = in;
    const char *p = x, *q = D->name[k];
    if (alpha != 1.0f) {
        const char *m = fresh(D, out, ":alpha");
        node(D, "Mul", (const char *const[]){p, scalar(D, out, ":alpha_value", alpha)}, 2, m);
        p = m;
    }
    if (beta != 1.0f) {
        const char *m = fresh(D, out, ":beta");
        node(D, "Mul", (const char *const[]){q, scalar(D, out, ":beta_value", beta)}, 2, m);
        q = m;
    }
    const char *sum = is_linear(D->cfg, s) ? out : fresh(D, out, ":add");
    node(D, "Add", (const char *const[]){p, q}, 2, sum);
    return sum == out || activation(D, s, sum, out);
}

static bool upsample(dn_ctx *D, const dn_section *s, const char *x, dn_shape in, const char *out, dn_shape *o)
{
    int64_t stride;
    float scale;
    rd_error le;
    if (dn_int(D->cfg, s, "stride", 2, -64, 64, &stride, &le) || dn_float(D->cfg, s, "scale", 1.0f, &scale, &le))
        return opt_fail(D, &le);
    if (stride < 1)
        return false; /* negative stride: Darknet's downsampling mode */
    *o = (dn_shape){in.c, in.h * stride, in.w * stride};
    const char *y = scale == 1.0f ? out : fresh(D, out, ":nearest");
    const char *sc = fresh(D, out, ":scales");
    float sv[4] = {1.0f, 1.0f, (float)stride, (float)stride};
    rd_tensor t = {.dtype = RD_DT_F32, .rank = 1, .dims = {4}, .data = sv};
    if (sc && rd_onnx_add_initializer(D->b, sc, &t, RD_ONNX_RAW) != RD_OK)
        fail(D, RD_E_NOMEM, "out of memory");
    rd_onnx_node *n = node(D, "Resize", (const char *const[]){x, "", sc}, 3, y);
    if (n) {
        rd_onnx_attr_string(n, "mode", "nearest");
        rd_onnx_attr_string(n, "coordinate_transformation_mode", "asymmetric");
        rd_onnx_attr_string(n, "nearest_mode", "floor");
    }
    if (scale != 1.0f)
        node(D, "Mul", (const char *const[]){y, scalar(D, out, ":scale", scale)}, 2, out);
    return true;
}

/* Connected layer: Flatten, Gemm (weights [outputs][inputs]), BatchNormalization, activation. Weights: biases,
   weights, then with batch_normalize scales, rolling_mean, rolling_variance. */
static bool connected(dn_ctx *D, const dn_section *s, const char *x, dn_shape in, const char *out, dn_shape *o)
{
    int64_t n, bn;
    rd_error le;
    if (dn_int(D->cfg, s, "output", 1, 1, 1 << 24, &n, &le) || dn_int(D->cfg, s, "batch_normalize", 0, 0, 1, &bn, &le))
        return opt_fail(D, &le);
    if (bn)
        return false;
    int64_t k = in.c * in.h * in.w;
    char base[48];
    snprintf(base, sizeof base, "%zu_connected", D->layer);
    const char *bias = read_floats(D, base, ":biases", 1, (const int64_t[]){n}, "biases");
    const char *w = read_floats(D, base, ":weights", 2, (const int64_t[]){n, k}, "weights");
    const char *flat = fresh(D, out, ":flatten");
    node(D, "Flatten", &x, 1, flat);
    const char *g = fresh(D, out, ":gemm");
    rd_onnx_node *nd = node(D, "Gemm", (const char *const[]){flat, w, bias}, 3, g);
    if (nd)
        rd_onnx_attr_int(nd, "transB", 1);
    *o = (dn_shape){n, 1, 1};
    const char *act = is_linear(D->cfg, s) ? g : fresh(D, out, ":act");
    if (act != g && !activation(D, s, g, act))
        return false;
    /* back to Darknet's [n, 1, 1] (C, H, W) */
    const char *shape = fresh(D, out, ":shape");
    int64_t dims[4] = {1, n, 1, 1};
    rd_tensor t = {.dtype = RD_DT_I64, .rank = 1, .dims = {4}, .data = dims};
    if (shape && rd_onnx_add_initializer(D->b, shape, &t, RD_ONNX_RAW) != RD_OK)
        fail(D, RD_E_NOMEM, "out of memory");
    node(D, "Reshape", (const char *const[]){act, shape}, 2, out);
    return true;
}

static bool softmax(dn_ctx *D, const dn_section *s, const char *x, dn_shape in, const char *out, dn_shape *o)
{
    int64_t groups;
    rd_error le;
    if (dn_int(D->cfg, s, "groups", 1, 1, 1, &groups, &le))
        return false; /* grouped softmax (YOLO9000's tree): not supported */
    *o = in;
    const char *flat = fresh(D, out, ":flatten");
    node(D, "Flatten", &x, 1, flat);
    const char *sm = fresh(D, out, ":softmax");
    rd_onnx_node *n = node(D, "Softmax", &flat, 1, sm);
    if (n)
        rd_onnx_attr_int(n, "axis", -1);
    const char *shape = fresh(D, out, ":shape");
    int64_t dims[4] = {1, in.c, in.h, in.w};
    rd_tensor t = {.dtype = RD_DT_I64, .rank = 1, .dims = {4}, .data = dims};
    if (shape && rd_onnx_add_initializer(D->b, shape, &t, RD_ONNX_RAW) != RD_OK)
        fail(D, RD_E_NOMEM, "out of memory");
    node(D, "Reshape", (const char *const[]){sm, shape}, 2, out);
    return true;
}

/* Darknet's short names in its layer table. */
static const char *short_kind(const char *type)
{
    static const char *const map[][2] = {
        {"convolutional", "conv"}, {"conv", "conv"},   {"maxpool", "max"},         {"max", "max"},
        {"avgpool", "avg"},        {"avg", "avg"},     {"connected", "connected"}, {"conn", "connected"},
        {"softmax", "softmax"},    {"soft", "softmax"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(type, map[i][0]))
            return map[i][1];
    return type;
}

static bool is_output_layer(const char *t)
{
    return !strcmp(t, "yolo") || !strcmp(t, "region") || !strcmp(t, "detection");
}

/* A kind this frontend writes (whatever its options). */
static bool known_kind(const char *t)
{
    static const char *const kinds[] = {"convolutional", "conv",     "maxpool",  "max",       "avgpool",  "avg",
                                        "route",         "shortcut", "upsample", "connected", "conn",     "softmax",
                                        "soft",          "dropout",  "yolo",     "region",    "detection"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(t, kinds[i]))
            return true;
    return false;
}

/* One layer (section k + 1 of the .cfg): false when its kind is not supported. */
static bool lower_layer(dn_ctx *D, const dn_section *s, const char *x, dn_shape in, const char *out, dn_shape *o)
{
    const char *t = s->type;
    *o = in;
    if (!strcmp(t, "convolutional") || !strcmp(t, "conv"))
        return conv(D, s, x, in, out, o);
    if (!strcmp(t, "maxpool") || !strcmp(t, "max"))
        return maxpool(D, s, x, in, out, o);
    if (!strcmp(t, "avgpool") || !strcmp(t, "avg")) {
        *o = (dn_shape){in.c, 1, 1};
        return node(D, "GlobalAveragePool", &x, 1, out), true;
    }
    if (!strcmp(t, "route"))
        return route(D, s, out, o);
    if (!strcmp(t, "shortcut"))
        return shortcut(D, s, x, in, out, o);
    if (!strcmp(t, "upsample"))
        return upsample(D, s, x, in, out, o);
    if (!strcmp(t, "connected") || !strcmp(t, "conn"))
        return connected(D, s, x, in, out, o);
    if (!strcmp(t, "softmax") || !strcmp(t, "soft"))
        return softmax(D, s, x, in, out, o);
    if (!strcmp(t, "dropout") || is_output_layer(t))
        return node(D, "Identity", &x, 1, out), true;
    return false;
}

static rd_status net_input(dn_ctx *D, dn_shape *in)
{
    const dn_cfg *c = D->cfg;
    const dn_section *net = &c->sec[0];
    if (strcmp(net->type, "net") && strcmp(net->type, "network"))
        return rd_errorf(D->err, RD_E_PARSE, "%s:%d: the first section is [%s], expected [net]", c->path, net->line,
                         net->type);
    int64_t w, h, ch;
    rd_status st;
    if ((st = dn_int(c, net, "width", 0, 1, 65536, &w, D->err)) ||
        (st = dn_int(c, net, "height", 0, 1, 65536, &h, D->err)) ||
        (st = dn_int(c, net, "channels", 0, 1, 65536, &ch, D->err)))
        return st;
    if (!dn_str(c, net, "width", NULL) || !dn_str(c, net, "height", NULL) || !dn_str(c, net, "channels", NULL))
        return rd_errorf(D->err, RD_E_PARSE, "%s:%d: [net] needs width, height and channels", c->path, net->line);
    *in = (dn_shape){ch, h, w};
    size_t bytes;
    return rd_shape_bytes(RD_DT_F32, 4, (const int64_t[]){1, ch, h, w}, &bytes, D->err);
}

/* The .weights header; D->wpos after it. */
static rd_status weights_header(dn_ctx *D, char *version, size_t vlen)
{
    int32_t v[3];
    if (D->wlen < 16)
        return rd_errorf(D->err, RD_E_PARSE, "%s: %zu bytes: too short for a .weights header", D->wname, D->wlen);
    memcpy(v, D->w, 12);
    bool wide_seen = (int64_t)v[0] * 10 + v[1] >= 2 && v[0] < 1000 && v[1] < 1000;
    D->wpos = wide_seen ? 20 : 16;
    if (D->wpos > D->wlen)
        return rd_errorf(D->err, RD_E_PARSE, "%s: %zu bytes: too short for a version %d.%d header", D->wname, D->wlen,
                         v[0], v[1]);
    if (v[0] < 0 || v[1] < 0 || v[0] > 1000 || v[1] > 1000)
        return rd_errorf(D->err, RD_E_UNSUPPORTED, "%s: weights version %d.%d.%d (transposed or unknown layout)",
                         D->wname, v[0], v[1], v[2]);
    snprintf(version, vlen, "%d.%d.%d", v[0], v[1], v[2]);
    return RD_OK;
}

rd_status dn_lower(const dn_cfg *c, const uint8_t *weights, size_t wlen, const char *wname, void **out_buf,
                   size_t *out_len, char *detail, size_t detail_len, rd_error *err)
{
    *out_buf = NULL;
    *out_len = 0;
    dn_ctx D = {.cfg = c, .w = weights, .wlen = wlen, .wname = wname, .err = err};
    size_t n_layers = c->n_sec - 1;
    dn_shape in = {0};
    char version[48];
    rd_status st = net_input(&D, &in);
    if (st == RD_OK)
        st = weights_header(&D, version, sizeof version);
    if (st != RD_OK)
        return st;
    if (n_layers == 0)
        return rd_errorf(err, RD_E_PARSE, "%s: no layer after [net]", c->path);
    D.shape = calloc(n_layers, sizeof *D.shape);
    D.name = calloc(n_layers, sizeof *D.name);
    D.b = rd_onnx_builder_create(8, 13);
    if (!D.shape || !D.name || !D.b)
        fail(&D, RD_E_NOMEM, "out of memory");
    if (D.st == RD_OK && rd_onnx_add_input(D.b, "input", RD_DT_F32, 4, (const int64_t[]){1, in.c, in.h, in.w}, NULL))
        fail(&D, RD_E_NOMEM, "out of memory");
    fe_names_claim(&D.names, "input", NULL);
    const char *x = "input";
    size_t n_out = 0;
    bool scan_only = false; /* after an unsupported layer: only list the others */
    for (size_t i = 0; i < n_layers && D.st == RD_OK; i++) {
        const dn_section *s = &c->sec[i + 1];
        D.layer = i;
        char base[96];
        snprintf(base, sizeof base, "%zu_%s", i, short_kind(s->type));
        D.name[i] = (char *)fresh(&D, base, "");
        dn_shape o = in;
        if (scan_only ? !known_kind(s->type) : D.name[i] && !lower_layer(&D, s, x, in, D.name[i], &o)) {
            char where[160];
            snprintf(where, sizeof where, "layer %zu, %s line %d", i, c->path, s->line);
            char kind[80];
            snprintf(kind, sizeof kind, "[%s]", s->type);
            fe_unsupported_add(&D.unsup, kind, where);
            scan_only = true;
        }
        D.shape[i] = o;
        in = o;
        x = D.name[i];
        if (is_output_layer(s->type)) {
            if (rd_onnx_add_output(D.b, D.name[i], RD_DT_F32, -1, NULL, NULL) != RD_OK)
                fail(&D, RD_E_NOMEM, "out of memory");
            n_out++;
        }
    }
    if (D.st == RD_OK && !scan_only && n_out == 0 &&
        rd_onnx_add_output(D.b, D.name[n_layers - 1], RD_DT_F32, -1, NULL, NULL) != RD_OK)
        fail(&D, RD_E_NOMEM, "out of memory");
    rd_status unsup = fe_unsupported_finish(&D.unsup, c->path, "layer", D.st == RD_OK ? err : NULL);
    if (D.st == RD_OK && unsup != RD_OK)
        D.st = unsup;
    if (D.st == RD_OK) {
        snprintf(detail, detail_len, "Darknet, %zu layers, weights %s (%zu bytes%s)", n_layers, version, wlen,
                 D.wpos < wlen ? ", some unread" : "");
        rd_onnx_set_producer(D.b, "rknn-diag darknet frontend", version);
        if (rd_onnx_builder_write(D.b, out_buf, out_len, err) != RD_OK)
            D.st = err ? err->code : RD_E_NOMEM;
    }
    rd_onnx_builder_destroy(D.b);
    fe_names_fini(&D.names);
    free(D.shape);
    free(D.name);
    return D.st;
}

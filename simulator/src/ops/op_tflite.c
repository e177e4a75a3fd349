/*
 * op_tflite.c: TensorFlow Lite's quantized operators on integer codes, in the domain "tflite" (docs/formats.md,
 * "TFLite"): what a quantized .tflite model computes with its own quantization (`--precision model`), bit for bit
 * as TFLite's reference kernels do (kernels/tfl_int.c). NHWC, as TFLite keeps it.
 *
 *   TFLiteConv2D(x, w [oc,kh,kw,ic], bias?)           int8 or int16 x, int8 w, int32 or int64 bias
 *   TFLiteDepthwiseConv2D(x, w [1,kh,kw,oc], bias?)   the same, oc = ic * depth_multiplier
 *   TFLiteFullyConnected(x [..., k], w [n, k], bias?) a 1x1 convolution of every row
 *   TFLiteQuantize(x)                                 float32 -> codes (round half away from zero, as TFLite),
 *                                                     or codes -> codes of other parameters (TFLite's Requantize)
 *
 * Attributes (written by the TFLite frontend): strides, dilations [h, w], padding "SAME" | "VALID",
 * depth_multiplier, keep_num_dims; x_scale, x_zero_point, w_scales (one or one per output channel), y_scale,
 * y_zero_point; act_min, act_max (the fused activation's range in output codes); to (the output dtype of
 * TFLiteQuantize, an ONNX dtype number).
 */
#include "../internal.h"
#include "../kernels/tfl_int.h"

#include <math.h>

#define TFL_DOMAIN "tflite"

struct tfl_params {
    int64_t sh, sw, dh, dw;
    bool same;
    int64_t depth_multiplier;
    bool keep_num_dims;
    float x_scale, y_scale;
    int64_t x_zp, y_zp;
    const float *w_scales; /* points into the node's attribute (same lifetime as the node) */
    size_t n_w_scales;
    int64_t act_min, act_max;
    rd_dtype to;
};

static rd_status bad_attr(const sim_node *n, const char *what, rd_error *err)
{
    return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): %s", n->name, n->op_type, what);
}

static rd_status parse_quant(const sim_node *n, struct tfl_params *p, rd_error *err)
{
    p->x_scale = sim_attr_float(n, "x_scale", 0.0f);
    p->y_scale = sim_attr_float(n, "y_scale", 0.0f);
    p->x_zp = sim_attr_int(n, "x_zero_point", 0);
    p->y_zp = sim_attr_int(n, "y_zero_point", 0);
    p->act_min = sim_attr_int(n, "act_min", INT32_MIN);
    p->act_max = sim_attr_int(n, "act_max", INT32_MAX);
    if (!(p->y_scale > 0.0f) || !isfinite(p->y_scale))
        return bad_attr(n, "y_scale must be a positive number", err);
    if (p->x_zp < -32768 || p->x_zp > 65535 || p->y_zp < -32768 || p->y_zp > 65535)
        return bad_attr(n, "a zero point is outside the 16-bit range", err);
    if (p->act_min > p->act_max)
        return bad_attr(n, "act_min is above act_max", err);
    return RD_OK;
}

static rd_status conv_parse(const sim_node *n, void *params, rd_error *err)
{
    struct tfl_params *p = params;
    rd_status st = parse_quant(n, p, err);
    if (st != RD_OK)
        return st;
    if (!(p->x_scale > 0.0f) || !isfinite(p->x_scale))
        return bad_attr(n, "x_scale must be a positive number", err);
    size_t cnt = 0;
    const int64_t *v = sim_attr_ints(n, "strides", &cnt);
    p->sh = cnt == 2 ? v[0] : 1;
    p->sw = cnt == 2 ? v[1] : 1;
    v = sim_attr_ints(n, "dilations", &cnt);
    p->dh = cnt == 2 ? v[0] : 1;
    p->dw = cnt == 2 ? v[1] : 1;
    if (p->sh < 1 || p->sw < 1 || p->dh < 1 || p->dw < 1 || p->sh > 65536 || p->sw > 65536 || p->dh > 65536 ||
        p->dw > 65536)
        return bad_attr(n, "strides and dilations must be 1..65536", err);
    const char *pad = sim_attr_str(n, "padding", "VALID");
    if (strcmp(pad, "SAME") != 0 && strcmp(pad, "VALID") != 0)
        return bad_attr(n, "padding must be SAME or VALID", err);
    p->same = strcmp(pad, "SAME") == 0;
    p->depth_multiplier = sim_attr_int(n, "depth_multiplier", 1);
    if (p->depth_multiplier < 1 || p->depth_multiplier > 65536)
        return bad_attr(n, "depth_multiplier must be 1..65536", err);
    p->keep_num_dims = sim_attr_int(n, "keep_num_dims", 0) != 0;
    p->w_scales = sim_attr_floats(n, "w_scales", &p->n_w_scales);
    if (p->n_w_scales == 0)
        return bad_attr(n, "w_scales is missing", err);
    for (size_t i = 0; i < p->n_w_scales; i++)
        if (!(p->w_scales[i] >= 0.0f) || !isfinite(p->w_scales[i]))
            return bad_attr(n, "w_scales must be non-negative numbers", err);
    return RD_OK;
}

static bool is_dw(const sim_op_ctx *ctx)
{
    return strcmp(ctx->node->op_type, "TFLiteDepthwiseConv2D") == 0;
}

static bool is_fc(const sim_op_ctx *ctx)
{
    return strcmp(ctx->node->op_type, "TFLiteFullyConnected") == 0;
}

/* Output size and padding before of one spatial dim, as TFLite's ComputePaddingHeightWidth. */
static void out_dim(bool same, int64_t in, int64_t k, int64_t s, int64_t d, int64_t *out, int64_t *pad)
{
    int64_t eff = (k - 1) * d + 1;
    *out = same ? (in + s - 1) / s : (in >= eff ? (in - eff + s) / s : 0);
    int64_t total = (*out - 1) * s + eff - in;
    *pad = same && total > 0 ? total / 2 : 0;
}

static rd_status geometry(const sim_op_ctx *ctx, tfl_conv_geom *g, rd_error *err)
{
    const struct tfl_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0], *w = ctx->in[1], *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    const char *nm = ctx->node->name, *op = ctx->node->op_type;
    if (x->dtype != RD_DT_I8 && x->dtype != RD_DT_I16)
        return sim_err_dtype(ctx, 0, err);
    if (w->dtype != RD_DT_I8)
        return sim_err_dtype(ctx, 1, err);
    if (b && b->dtype != RD_DT_I32 && b->dtype != RD_DT_I64)
        return sim_err_dtype(ctx, 2, err);
    memset(g, 0, sizeof *g);
    if (is_fc(ctx)) {
        if (x->rank < 1 || w->rank != 2 || w->dims[1] != x->dims[x->rank - 1] || w->dims[1] < 1)
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input's last dim and W [n, k] do not match", nm, op);
        g->ic = w->dims[1];
        g->n = rd_tensor_numel(x) / g->ic;
        g->ih = g->iw = g->oh = g->ow = g->kh = g->kw = g->sh = g->sw = g->dh = g->dw = 1;
        g->oc = w->dims[0];
    } else {
        if (x->rank != 4 || w->rank != 4)
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input and filter must be 4-D (NHWC, %s)", nm, op,
                             is_dw(ctx) ? "[1, kh, kw, oc]" : "[oc, kh, kw, ic]");
        g->n = x->dims[0];
        g->ih = x->dims[1];
        g->iw = x->dims[2];
        g->ic = x->dims[3];
        g->kh = w->dims[1];
        g->kw = w->dims[2];
        g->sh = p->sh;
        g->sw = p->sw;
        g->dh = p->dh;
        g->dw = p->dw;
        if (g->kh < 1 || g->kw < 1)
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): empty filter", nm, op);
        if (is_dw(ctx)) {
            g->depth_multiplier = p->depth_multiplier;
            g->oc = w->dims[3];
            if (w->dims[0] != 1 || g->oc != g->ic * g->depth_multiplier)
                return rd_errorf(err, RD_E_INVAL,
                                 "node '%s' (%s): filter has %lld channels, input %lld x depth "
                                 "multiplier %lld",
                                 nm, op, (long long)g->oc, (long long)g->ic, (long long)g->depth_multiplier);
        } else {
            g->oc = w->dims[0];
            if (w->dims[3] != g->ic)
                return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): filter takes %lld channels, input has %lld", nm, op,
                                 (long long)w->dims[3], (long long)g->ic);
        }
        out_dim(p->same, g->ih, g->kh, g->sh, g->dh, &g->oh, &g->ph);
        out_dim(p->same, g->iw, g->kw, g->sw, g->dw, &g->ow, &g->pw);
    }
    if (b && (b->rank != 1 || b->dims[0] != g->oc))
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): bias must hold %lld values", nm, op, (long long)g->oc);
    if (p->n_w_scales != 1 && (int64_t)p->n_w_scales != g->oc)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): %zu weight scales for %lld output channels", nm, op,
                         p->n_w_scales, (long long)g->oc);
    return RD_OK;
}

static rd_status conv_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct tfl_params *p = ctx->params;
    tfl_conv_geom g;
    rd_status st = geometry(ctx, &g, err);
    if (st != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0];
    if (is_fc(ctx)) {
        int64_t dims[RD_MAX_RANK];
        if (p->keep_num_dims) {
            memcpy(dims, x->dims, sizeof dims);
            dims[x->rank - 1] = g.oc;
            sim_set_shape(&ctx->out[0], x->dtype, x->rank, dims);
        } else {
            dims[0] = g.n;
            dims[1] = g.oc;
            sim_set_shape(&ctx->out[0], x->dtype, 2, dims);
        }
        return RD_OK;
    }
    const int64_t dims[4] = {g.n, g.oh, g.ow, g.oc};
    sim_set_shape(&ctx->out[0], x->dtype, 4, dims);
    return RD_OK;
}

static rd_status conv_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct tfl_params *p = ctx->params;
    tfl_conv_geom g;
    rd_status st = geometry(ctx, &g, err);
    if (st != RD_OK)
        return st;
    size_t oc = (size_t)g.oc;
    int32_t *mult = sim_scratch_get(ctx, oc * (sizeof(int32_t) + sizeof(int)), err);
    if (!mult)
        return err ? err->code : RD_E_NOMEM;
    int *shift = (int *)(mult + oc);
    for (size_t c = 0; c < oc; c++) {
        float ws = p->w_scales[p->n_w_scales == 1 ? 0 : c];
        tfl_quantize_multiplier((double)p->x_scale * (double)ws / (double)p->y_scale, &mult[c], &shift[c]);
    }
    const rd_tensor *x = ctx->in[0], *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    bool x16 = x->dtype == RD_DT_I16;
    int64_t lo = x16 ? INT16_MIN : INT8_MIN, hi = x16 ? INT16_MAX : INT8_MAX;
    tfl_requant q = {.mult = mult,
                     .shift = shift,
                     .in_zp = (int32_t)p->x_zp,
                     .out_zp = (int32_t)p->y_zp,
                     .act_min = (int32_t)(p->act_min > lo ? p->act_min : lo),
                     .act_max = (int32_t)(p->act_max < hi ? p->act_max : hi),
                     .wide = x16};
    tfl_conv_int(&g, &q, x->data, x16, ctx->in[1]->data, b && b->dtype == RD_DT_I32 ? b->data : NULL,
                 b && b->dtype == RD_DT_I64 ? b->data : NULL, ctx->out[0].data);
    return RD_OK;
}

static int64_t conv_macs(const sim_op_ctx *ctx)
{
    const rd_tensor *w = ctx->in[1];
    if (!w || ctx->out[0].rank < 1)
        return 0;
    int64_t per_out = rd_tensor_numel(w) / (w->dims[is_dw(ctx) ? 3 : 0] ? w->dims[is_dw(ctx) ? 3 : 0] : 1);
    return sim_count_mul(rd_tensor_numel(&ctx->out[0]), per_out);
}

/* ---- TFLiteQuantize ----------------------------------------------------------------------------- */

static rd_status quantize_parse(const sim_node *n, void *params, rd_error *err)
{
    struct tfl_params *p = params;
    rd_status st = parse_quant(n, p, err);
    if (st != RD_OK)
        return st;
    p->to = (rd_dtype)sim_attr_int(n, "to", RD_DT_I8);
    if (p->to != RD_DT_I8 && p->to != RD_DT_U8 && p->to != RD_DT_I16)
        return bad_attr(n, "to must be int8, uint8 or int16", err);
    return RD_OK;
}

static rd_status quantize_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct tfl_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    bool codes = x->dtype == RD_DT_I8 || x->dtype == RD_DT_U8 || x->dtype == RD_DT_I16;
    if (x->dtype != RD_DT_F32 && !codes)
        return sim_err_dtype(ctx, 0, err);
    if (codes && (!(p->x_scale > 0.0f) || !isfinite(p->x_scale)))
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): requantizing codes needs a positive x_scale",
                         ctx->node->name, ctx->node->op_type);
    sim_set_shape(&ctx->out[0], p->to, x->rank, x->dims);
    return RD_OK;
}

/* a + b, held at the int64 range (the result is clamped to the code range next). */
static int64_t add_saturated(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static rd_status quantize_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const struct tfl_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    int64_t n = rd_tensor_numel(x);
    int64_t lo = p->to == RD_DT_I8 ? INT8_MIN : p->to == RD_DT_U8 ? 0 : INT16_MIN;
    int64_t hi = p->to == RD_DT_I8 ? INT8_MAX : p->to == RD_DT_U8 ? UINT8_MAX : INT16_MAX;
    int32_t mult = 0;
    int shift = 0;
    if (x->dtype != RD_DT_F32)
        tfl_quantize_multiplier((double)p->x_scale / (double)p->y_scale, &mult, &shift);
    for (int64_t i = 0; i < n; i++) {
        int64_t v;
        if (x->dtype == RD_DT_F32) /* AffineQuantize: round(x / scale) + zp in float, half away from zero */
            v = add_saturated(tfl_round((double)(((const float *)x->data)[i] / p->y_scale)), p->y_zp);
        else { /* Requantize: (q - zp_in) times the multiplier, + zp_out */
            int64_t q = x->dtype == RD_DT_I8   ? ((const int8_t *)x->data)[i]
                        : x->dtype == RD_DT_U8 ? ((const uint8_t *)x->data)[i]
                                               : ((const int16_t *)x->data)[i];
            v = add_saturated(tfl_mbqm32((int32_t)(q - p->x_zp), mult, shift), p->y_zp);
        }
        v = v < lo ? lo : v > hi ? hi : v;
        if (p->to == RD_DT_I8)
            ((int8_t *)ctx->out[0].data)[i] = (int8_t)v;
        else if (p->to == RD_DT_U8)
            ((uint8_t *)ctx->out[0].data)[i] = (uint8_t)v;
        else
            ((int16_t *)ctx->out[0].data)[i] = (int16_t)v;
    }
    return RD_OK;
}

#define TFL_CONV_DEF(sym, opname)                 \
    const sim_op_def sym = {                      \
        .name = opname,                           \
        .domain = TFL_DOMAIN,                     \
        .since = 1,                               \
        .min_in = 2,                              \
        .max_in = 3,                              \
        .min_out = 1,                             \
        .max_out = 1,                             \
        .params_size = sizeof(struct tfl_params), \
        .parse = conv_parse,                      \
        .infer = conv_infer,                      \
        .eval = {[SIM_PREC_F32] = conv_eval},     \
        .macs = conv_macs,                        \
        .qrule = RD_OP_Q_NONE,                    \
    }

TFL_CONV_DEF(op_tflite_conv2d, "TFLiteConv2D");
TFL_CONV_DEF(op_tflite_depthwise_conv2d, "TFLiteDepthwiseConv2D");
TFL_CONV_DEF(op_tflite_fully_connected, "TFLiteFullyConnected");

const sim_op_def op_tflite_quantize = {
    .name = "TFLiteQuantize",
    .domain = TFL_DOMAIN,
    .since = 1,
    .min_in = 1,
    .max_in = 1,
    .min_out = 1,
    .max_out = 1,
    .params_size = sizeof(struct tfl_params),
    .parse = quantize_parse,
    .infer = quantize_infer,
    .eval = {[SIM_PREC_F32] = quantize_eval},
    .qrule = RD_OP_Q_NONE,
};

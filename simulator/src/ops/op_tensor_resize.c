/*
 * op_tensor_resize.c: Resize (10, 11, 13, 18 axes/antialias/keep_aspect_ratio_policy, 19
 * half_pixel_symmetric) and Upsample (7 scales attribute, 9 scales input). Nearest works on any dtype
 * by bytes; linear and cubic run on float types through double accumulators (kernels/ref_resize.c).
 */
#include "../kernels/ref_resize.h"
#include "tensor_common.h"

#include <math.h>

enum keep_aspect { KEEP_STRETCH, KEEP_NOT_LARGER, KEEP_NOT_SMALLER };

struct resize_params {
    rr_mode mode;
    rr_coord coord;
    rr_nearest nearest;
    double cubic_a;
    bool exclude_outside, antialias;
    double extrapolation;
    enum keep_aspect keep;
    bool has_axes;
    size_t n_axes;
    int64_t axes[RD_MAX_RANK];
    bool upsample; /* Upsample: input 1 is scales (9) or scales come from the attribute (7) */
    size_t n_attr_scales;
    float attr_scales[RD_MAX_RANK];
};

/* Index of a string in a list, -1 if absent. */
static int pick(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static rd_status resize_parse(const sim_node *n, void *params, rd_error *err)
{
    struct resize_params *p = params;
    bool upsample = strcmp(n->op_type, "Upsample") == 0;
    p->upsample = upsample;
    const char *mode = sim_attr_str(n, "mode", "nearest");
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    int m = pick(mode, modes, 3);
    if (m < 0 && (upsample || n->opset < 11) && strcmp(mode, "bilinear") == 0)
        m = RR_LINEAR;
    if (m < 0 || (m == RR_CUBIC && (upsample || n->opset < 11)))
        return tc_node_err(n, err, RD_E_PARSE, "unknown mode '%s'", mode);
    p->mode = (rr_mode)m;
    if (upsample || n->opset < 11) {
        /* Resize-10 and Upsample: asymmetric coordinates, nearest floors when enlarging */
        p->coord = RR_ASYMMETRIC;
        p->nearest = RR_SIMPLE;
        p->cubic_a = -0.75;
        p->keep = KEEP_STRETCH;
        if (upsample && n->opset < 9) {
            const float *s = sim_attr_floats(n, "scales", &p->n_attr_scales);
            if (!s || p->n_attr_scales > RD_MAX_RANK)
                return tc_node_err(n, err, RD_E_PARSE, "attribute 'scales' is required (at most %d values)",
                                   RD_MAX_RANK);
            memcpy(p->attr_scales, s, p->n_attr_scales * sizeof *s);
        }
        return RD_OK;
    }
    static const char *const coords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                         "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    const char *coord = sim_attr_str(n, "coordinate_transformation_mode", "half_pixel");
    int c = pick(coord, coords, 7);
    if (c < 0 || (c == RR_HALF_PIXEL_SYMMETRIC && n->opset < 19) || (c == RR_TF_HALF_PIXEL_FOR_NN && n->opset >= 13))
        return tc_node_err(n, err, RD_E_PARSE, "unknown coordinate_transformation_mode '%s'", coord);
    p->coord = (rr_coord)c;
    static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *nm = sim_attr_str(n, "nearest_mode", "round_prefer_floor");
    int k = pick(nm, nearest, 4);
    if (k < 0)
        return tc_node_err(n, err, RD_E_PARSE, "unknown nearest_mode '%s'", nm);
    p->nearest = (rr_nearest)k;
    p->cubic_a = sim_attr_float(n, "cubic_coeff_a", -0.75f);
    p->exclude_outside = sim_attr_int(n, "exclude_outside", 0) != 0;
    p->extrapolation = sim_attr_float(n, "extrapolation_value", 0.0f);
    if (n->opset >= 18) {
        p->antialias = sim_attr_int(n, "antialias", 0) != 0 && p->mode != RR_NEAREST;
        static const char *const keeps[] = {"stretch", "not_larger", "not_smaller"};
        const char *kp = sim_attr_str(n, "keep_aspect_ratio_policy", "stretch");
        int kk = pick(kp, keeps, 3);
        if (kk < 0)
            return tc_node_err(n, err, RD_E_PARSE, "unknown keep_aspect_ratio_policy '%s'", kp);
        p->keep = (enum keep_aspect)kk;
        const int64_t *axes = sim_attr_ints(n, "axes", &p->n_axes);
        if (p->n_axes > RD_MAX_RANK)
            return tc_node_err(n, err, RD_E_INVAL, "%zu axes, at most %d allowed", p->n_axes, RD_MAX_RANK);
        p->has_axes = axes != NULL;
        if (p->n_axes)
            memcpy(p->axes, axes, p->n_axes * sizeof *axes);
    }
    return RD_OK;
}

/* Input index of scales, sizes and roi for this node (-1 when the version has none). */
static void resize_inputs(const sim_op_ctx *ctx, int *roi, int *scales, int *sizes)
{
    const struct resize_params *p = ctx->params;
    if (p->upsample || ctx->opset < 11) {
        *roi = -1;
        *sizes = -1;
        *scales = p->upsample && ctx->opset < 9 ? -1 : 1;
        return;
    }
    *roi = 1;
    *scales = 2;
    *sizes = 3;
}

/* An optional input counts as given when present and non-empty. */
static bool given(const sim_op_ctx *ctx, int k)
{
    return k >= 0 && tc_has(ctx, k) && rd_tensor_numel(ctx->in[k]) > 0;
}

/* Per-axis output lengths, scales and roi; sim_defer while scales or sizes are unknown (never at eval:
   infer ran on the same inputs). */
static rd_status resize_plan(sim_op_ctx *ctx, rr_axis_params *ax, bool need_roi, rd_error *err)
{
    const struct resize_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    int r = x->rank, k_roi, k_scales, k_sizes;
    resize_inputs(ctx, &k_roi, &k_scales, &k_sizes);
    int axes[RD_MAX_RANK];
    int na = r;
    bool seen[RD_MAX_RANK] = {false};
    if (p->has_axes) {
        na = (int)p->n_axes;
        for (int i = 0; i < na; i++) {
            rd_status st = sim_norm_axis(ctx, p->axes[i], r, &axes[i], err);
            if (st != RD_OK)
                return st;
            if (seen[axes[i]])
                return tc_err(ctx, err, RD_E_INVAL, "axis %d appears twice", axes[i]);
            seen[axes[i]] = true;
        }
    } else {
        for (int i = 0; i < r; i++)
            axes[i] = i;
    }
    for (int i = 0; i < r; i++) {
        memset(&ax[i], 0, sizeof ax[i]);
        ax[i].mode = p->mode;
        ax[i].coord = p->coord;
        ax[i].nearest = p->nearest;
        ax[i].cubic_a = p->cubic_a;
        ax[i].exclude_outside = p->exclude_outside;
        ax[i].antialias = p->antialias;
        ax[i].in = ax[i].out = x->dims[i];
        ax[i].scale = 1.0;
        ax[i].roi_start = 0.0;
        ax[i].roi_end = 1.0;
    }
    bool has_scales = p->upsample && ctx->opset < 9 ? true : given(ctx, k_scales);
    bool has_sizes = given(ctx, k_sizes);
    if (has_scales == has_sizes)
        return tc_err(ctx, err, RD_E_INVAL, "exactly one of scales and sizes must be given");
    if ((has_scales && k_scales >= 0 && !ctx->in[k_scales]->data) || (has_sizes && !ctx->in[k_sizes]->data))
        return sim_defer(ctx);
    if (has_scales) {
        const rd_tensor *s = k_scales >= 0 ? ctx->in[k_scales] : NULL;
        int64_t cnt = s ? rd_tensor_numel(s) : (int64_t)p->n_attr_scales;
        if (s && !rd_dtype_get(s->dtype)->is_float)
            return tc_err(ctx, err, RD_E_INVAL, "scales must be a float tensor");
        if (cnt != na)
            return tc_err(ctx, err, RD_E_INVAL, "%lld scales for %d axes", (long long)cnt, na);
        for (int i = 0; i < na; i++) {
            double v = s ? sim_get_f64(s, i) : (double)p->attr_scales[i];
            if (!(v > 0.0) || !isfinite(v))
                return tc_err(ctx, err, RD_E_INVAL, "scale %g for axis %d must be positive", v, axes[i]);
            rr_axis_params *a = &ax[axes[i]];
            double o = floor(v * (double)a->in);
            if (o > 9.0e15)
                return tc_err(ctx, err, RD_E_LIMIT, "scale %g makes axis %d too long", v, axes[i]);
            a->scale = v;
            a->out = (int64_t)o;
        }
    } else {
        const rd_tensor *s = ctx->in[k_sizes];
        if (rd_dtype_get(s->dtype)->is_float)
            return tc_err(ctx, err, RD_E_INVAL, "sizes must be an integer tensor");
        if (rd_tensor_numel(s) != na)
            return tc_err(ctx, err, RD_E_INVAL, "%lld sizes for %d axes", (long long)rd_tensor_numel(s), na);
        double common = p->keep == KEEP_NOT_LARGER ? INFINITY : 0.0;
        for (int i = 0; i < na; i++) {
            int64_t v = sim_get_int(s, i);
            rr_axis_params *a = &ax[axes[i]];
            if (v < 0 || (a->in == 0 && v > 0))
                return tc_err(ctx, err, RD_E_INVAL, "size %lld for axis %d of length %lld", (long long)v, axes[i],
                              (long long)a->in);
            a->out = v;
            a->scale = a->in ? (double)v / (double)a->in : 1.0;
            common = p->keep == KEEP_NOT_LARGER ? fmin(common, a->scale) : fmax(common, a->scale);
        }
        if (p->keep != KEEP_STRETCH)
            for (int i = 0; i < na; i++) {
                rr_axis_params *a = &ax[axes[i]];
                a->scale = common;
                a->out = (int64_t)(common * (double)a->in + 0.5);
            }
    }
    for (int i = 0; i < r; i++)
        if (ax[i].out > 0 && ax[i].in == 0)
            return tc_err(ctx, err, RD_E_INVAL, "cannot resize the empty axis %d", i);
    if (need_roi && p->coord == RR_TF_CROP_AND_RESIZE && given(ctx, k_roi)) {
        const rd_tensor *roi = ctx->in[k_roi];
        if (rd_tensor_numel(roi) != 2 * na)
            return tc_err(ctx, err, RD_E_INVAL, "roi has %lld values for %d axes", (long long)rd_tensor_numel(roi), na);
        for (int i = 0; i < na; i++) {
            ax[axes[i]].roi_start = sim_get_f64(roi, i);
            ax[axes[i]].roi_end = sim_get_f64(roi, na + i);
        }
    }
    return RD_OK;
}

static rd_status resize_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct resize_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    if (p->mode != RR_NEAREST && !rd_dtype_get(x->dtype)->is_float)
        return sim_err_dtype(ctx, 0, err);
    rr_axis_params ax[RD_MAX_RANK];
    if ((st = resize_plan(ctx, ax, false, err)) != RD_OK || ctx->deferred)
        return st;
    int64_t d[RD_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        d[i] = ax[i].out;
    if ((st = tc_check_shape(ctx, x->dtype, x->rank, d, err)) != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], x->dtype, x->rank, d);
    return RD_OK;
}

/* Scratch layout: tap tables of every axis, then (linear/cubic) two double buffers. */
struct resize_tables {
    int taps[RD_MAX_RANK];
    int64_t *idx[RD_MAX_RANK];
    double *w[RD_MAX_RANK];
    unsigned char *outside[RD_MAX_RANK];
};

static size_t align16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

static rd_status resize_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct resize_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    rd_tensor *o = &ctx->out[0];
    int r = x->rank;
    rr_axis_params ax[RD_MAX_RANK];
    rd_status st = resize_plan(ctx, ax, true, err);
    if (st != RD_OK)
        return st;
    int64_t total = rd_tensor_numel(o);
    if (total == 0)
        return RD_OK;
    /* sizes: tap tables, then the largest intermediate numel for the separable passes */
    size_t table_bytes = 0;
    for (int i = 0; i < r; i++) {
        size_t n = (size_t)ax[i].out * (size_t)rr_taps(&ax[i]);
        table_bytes += align16(n * sizeof(int64_t)) + align16(n * sizeof(double)) + align16((size_t)ax[i].out);
    }
    int64_t cur[RD_MAX_RANK], max_numel = rd_tensor_numel(x), numel = max_numel;
    for (int i = 0; i < r; i++)
        cur[i] = x->dims[i];
    for (int i = r - 1; i >= 0; i--) {
        numel = numel / cur[i] * ax[i].out;
        cur[i] = ax[i].out;
        if (numel > max_numel)
            max_numel = numel;
    }
    size_t buf_bytes = p->mode == RR_NEAREST ? 0 : 2 * align16((size_t)max_numel * sizeof(double));
    char *scr = sim_scratch_get(ctx, table_bytes + buf_bytes, err);
    if (!scr)
        return err ? err->code : RD_E_NOMEM;
    struct resize_tables t;
    char *at = scr;
    for (int i = 0; i < r; i++) {
        size_t n = (size_t)ax[i].out * (size_t)rr_taps(&ax[i]);
        t.taps[i] = rr_taps(&ax[i]);
        t.idx[i] = (int64_t *)at;
        at += align16(n * sizeof(int64_t));
        t.w[i] = (double *)at;
        at += align16(n * sizeof(double));
        t.outside[i] = (unsigned char *)at;
        at += align16((size_t)ax[i].out);
        rr_axis_table(&ax[i], t.idx[i], t.w[i], t.outside[i]);
    }
    if (p->mode == RR_NEAREST) {
        size_t es = tc_elem_size(x->dtype);
        unsigned char ext[16] = {0};
        rd_tensor ev = {.dtype = x->dtype, .rank = 0, .data = ext};
        sim_set_f64(&ev, 0, p->extrapolation);
        int64_t str[RD_MAX_RANK], idx[RD_MAX_RANK] = {0};
        tc_strides(r, x->dims, str);
        char *dst = o->data;
        for (int64_t e = 0; e < total; e++) {
            int64_t off = 0;
            bool outside = false;
            for (int i = 0; i < r; i++) {
                outside |= t.outside[i][idx[i]] != 0;
                off += t.idx[i][idx[i]] * str[i];
            }
            memcpy(dst + e * (int64_t)es, outside ? (const char *)ext : (const char *)x->data + off * (int64_t)es, es);
            for (int i = r - 1; i >= 0; i--) {
                if (++idx[i] < o->dims[i])
                    break;
                idx[i] = 0;
            }
        }
        return RD_OK;
    }
    double *a = (double *)at, *b = (double *)(at + align16((size_t)max_numel * sizeof(double)));
    int64_t n_in = rd_tensor_numel(x);
    for (int64_t e = 0; e < n_in; e++)
        a[e] = sim_get_f64(x, e);
    for (int i = 0; i < r; i++)
        cur[i] = x->dims[i];
    for (int i = r - 1; i >= 0; i--) {
        if (rr_axis_is_identity(&ax[i], t.idx[i], t.w[i], t.outside[i]))
            continue;
        int64_t outer = 1, inner = 1;
        for (int k = 0; k < i; k++)
            outer *= cur[k];
        for (int k = i + 1; k < r; k++)
            inner *= cur[k];
        rr_pass(a, b, outer, cur[i], ax[i].out, inner, t.taps[i], t.idx[i], t.w[i], t.outside[i], p->extrapolation);
        cur[i] = ax[i].out;
        double *tmp = a;
        a = b;
        b = tmp;
    }
    for (int64_t e = 0; e < total; e++)
        sim_set_f64(o, e, a[e]);
    return RD_OK;
}

const sim_op_def op_resize = {.name = "Resize",
                              .domain = "",
                              .since = 10,
                              .min_in = 1,
                              .max_in = 4,
                              .min_out = 1,
                              .max_out = 1,
                              .params_size = sizeof(struct resize_params),
                              .parse = resize_parse,
                              .infer = resize_infer,
                              .eval = {[SIM_PREC_F32] = resize_eval},
                              .qrule = RD_OP_Q_PASS,
                              .same_from = 11};

const sim_op_def op_upsample = {.name = "Upsample",
                                .domain = "",
                                .since = 7,
                                .min_in = 1,
                                .max_in = 2,
                                .min_out = 1,
                                .max_out = 1,
                                .params_size = sizeof(struct resize_params),
                                .parse = resize_parse,
                                .infer = resize_infer,
                                .eval = {[SIM_PREC_F32] = resize_eval},
                                .until = 10,
                                .qrule = RD_OP_Q_PASS};

/*
 * op_norm.c: BatchNormalization (6..15, inference), InstanceNormalization (6..22) and
 * LayerNormalization (17..22), float32. Statistics are accumulated in double (two passes: mean, then
 * squared deviations) and the normalisation is applied in float.
 */
#include "../internal.h"

#include <math.h>

struct bn_params {
    float epsilon;
    bool training; /* training_mode = 1 (opset 14+) */
};

static rd_status bn_parse(const sim_node *n, void *params, rd_error *err)
{
    struct bn_params *p = params;
    (void)err;
    p->epsilon = sim_attr_float(n, "epsilon", 1e-5f);
    /* opset 6's is_test is ignored as ONNX Runtime does: training shows in the extra outputs */
    p->training = n->opset >= 14 && sim_attr_int(n, "training_mode", 0) != 0;
    return RD_OK;
}

/* Checks operands; *per_elem says the parameters are [C, spatial...] (opset 7-8 spatial = 0). */
static rd_status bn_check(const sim_op_ctx *ctx, bool *per_elem, rd_error *err)
{
    const struct bn_params *p = ctx->params;
    const char *nm = ctx->node->name, *op = ctx->node->op_type;
    bool extra_out = false;
    for (int k = 1; k < ctx->n_out; k++)
        extra_out |= ctx->out_present[k];
    if (p->training || extra_out)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "node '%s' (%s): training mode (batch statistics and running mean/var outputs) is not "
                         "supported; only inference",
                         nm, op);
    const rd_tensor *x = ctx->in[0];
    for (int i = 0; i < 5; i++)
        if (ctx->in[i]->dtype != RD_DT_F32)
            return sim_err_dtype(ctx, i, err);
    if (x->rank < 2)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): X has rank %d, expected >= 2", nm, op, x->rank);
    const int64_t c = x->dims[1];
    const int64_t nc = x->dims[0] * c;
    const int64_t plane = nc ? rd_tensor_numel(x) / nc : 0;
    const int64_t n0 = rd_tensor_numel(ctx->in[1]);
    *per_elem = n0 != c && n0 == c * plane;
    for (int i = 1; i < 5; i++) {
        const int64_t ni = rd_tensor_numel(ctx->in[i]);
        if (ni != (*per_elem ? c * plane : c))
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input %d has %lld values for %lld channels", nm, op, i,
                             (long long)ni, (long long)c);
    }
    return RD_OK;
}

static rd_status bn_infer(sim_op_ctx *ctx, rd_error *err)
{
    bool per_elem = false;
    rd_status st = bn_check(ctx, &per_elem, err);
    if (st == RD_OK)
        sim_set_shape(&ctx->out[0], RD_DT_F32, ctx->in[0]->rank, ctx->in[0]->dims);
    return st;
}

/* The factor of channel (or element) k: scale / sqrt(var + eps) in double, rounded to float. */
static float bn_factor(const float *sc, const float *va, int64_t k, float epsilon)
{
    return (float)((double)sc[k] / sqrt((double)va[k] + (double)epsilon));
}

/* One channel's run of n values. */
static void bn_row(const float *x, float *y, int64_t n, float mu, float a, float b)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (x[i] - mu) * a + b;
}

/* A region of per-channel BatchNormalization (bn_eval's rows, one per channel); false for per-element
   parameters. */
static bool bn_region(const sim_node *n, const rd_tensor *const *in, rd_tensor *out, const sim_region *r)
{
    const struct bn_params *p = n->params;
    for (int k = 0; k < 5; k++)
        if (in[k]->dtype != RD_DT_F32 || (k > 0 && rd_tensor_numel(in[k]) != r->view_c))
            return false;
    if (out->dtype != RD_DT_F32 || in[0]->rank < 2 || in[0]->dims[1] != r->view_c)
        return false;
    const float *sc = in[1]->data, *bi = in[2]->data, *mu = in[3]->data, *va = in[4]->data;
    for (int64_t c = r->c0; c < r->c1; c++) {
        const int64_t off = sim_region_offset(r, c);
        bn_row((const float *)in[0]->data + off, (float *)out->data + off, r->p1 - r->p0, mu[c],
               bn_factor(sc, va, c, p->epsilon), bi[c]);
    }
    return true;
}

/* y = (x - mean) * (scale / sqrt(var + eps)) + B; the factor is computed in double, applied in float. */
static rd_status bn_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct bn_params *p = ctx->params;
    bool per_elem = false;
    rd_status st = bn_check(ctx, &per_elem, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    const rd_tensor *x = ctx->in[0];
    const float *xd = x->data, *sc = ctx->in[1]->data, *bi = ctx->in[2]->data, *mu = ctx->in[3]->data,
                *va = ctx->in[4]->data;
    float *y = ctx->out[0].data;
    const int64_t n = x->dims[0], c = x->dims[1], plane = rd_tensor_numel(x) / (n * c);
    for (int64_t b = 0; b < n; b++) {
        for (int64_t ch = 0; ch < c; ch++) {
            const float *xp = xd + (b * c + ch) * plane;
            float *yp = y + (b * c + ch) * plane;
            if (!per_elem) {
                bn_row(xp, yp, plane, mu[ch], bn_factor(sc, va, ch, p->epsilon), bi[ch]);
                continue;
            }
            for (int64_t i = 0; i < plane; i++) {
                const int64_t k = ch * plane + i;
                yp[i] = (xp[i] - mu[k]) * bn_factor(sc, va, k, p->epsilon) + bi[k];
            }
        }
    }
    return RD_OK;
}

const sim_op_def op_batch_normalization = {
    .name = "BatchNormalization",
    .domain = "",
    .since = 6,
    .min_in = 5,
    .max_in = 5,
    .min_out = 1,
    .max_out = 5,
    .params_size = sizeof(struct bn_params),
    .parse = bn_parse,
    .infer = bn_infer,
    .eval = {[SIM_PREC_F32] = bn_eval},
    .flags = SIM_OP_CHANNELWISE | SIM_OP_FULL_WRITE,
    .region_f32 = bn_region,
    .prune = RD_OP_PRUNE_AFFINE,
    .same_from = 9,
};

/* ------------------------------------------------------------------------------------------------- */

struct eps_params {
    float epsilon;
    int64_t axis; /* LayerNormalization */
};

static rd_status in_parse(const sim_node *n, void *params, rd_error *err)
{
    struct eps_params *p = params;
    (void)err;
    p->epsilon = sim_attr_float(n, "epsilon", 1e-5f);
    return RD_OK;
}

static rd_status in_infer(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    for (int i = 0; i < 3; i++)
        if (ctx->in[i]->dtype != RD_DT_F32)
            return sim_err_dtype(ctx, i, err);
    if (x->rank < 3)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input has rank %d, expected >= 3", ctx->node->name,
                         ctx->node->op_type, x->rank);
    for (int i = 1; i < 3; i++)
        if (rd_tensor_numel(ctx->in[i]) != x->dims[1])
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input %d must hold %lld values (one per channel)",
                             ctx->node->name, ctx->node->op_type, i, (long long)x->dims[1]);
    sim_set_shape(&ctx->out[0], RD_DT_F32, x->rank, x->dims);
    return RD_OK;
}

/* Mean and population variance of v[0..n-1] in double (two passes). */
static void mean_var(const float *v, int64_t n, double *mean, double *var)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++)
        s += v[i];
    const double m = n ? s / (double)n : 0.0;
    double q = 0.0;
    for (int64_t i = 0; i < n; i++)
        q += ((double)v[i] - m) * ((double)v[i] - m);
    *mean = m;
    *var = n ? q / (double)n : 0.0;
}

static rd_status in_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct eps_params *p = ctx->params;
    rd_status st = in_infer(ctx, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    const rd_tensor *x = ctx->in[0];
    const float *sc = ctx->in[1]->data, *bi = ctx->in[2]->data;
    const int64_t c = x->dims[1], planes = x->dims[0] * c, len = rd_tensor_numel(x) / planes;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = (const float *)x->data + pl * len;
        float *yp = (float *)ctx->out[0].data + pl * len;
        double mean, var;
        mean_var(xp, len, &mean, &var);
        const float inv = (float)(1.0 / sqrt(var + (double)p->epsilon));
        const float s = sc[pl % c] * inv, m = (float)mean, b = bi[pl % c];
        for (int64_t i = 0; i < len; i++)
            yp[i] = (xp[i] - m) * s + b;
    }
    return RD_OK;
}

const sim_op_def op_instance_normalization = {
    .name = "InstanceNormalization",
    .domain = "",
    .since = 6,
    .min_in = 3,
    .max_in = 3,
    .min_out = 1,
    .max_out = 1,
    .params_size = sizeof(struct eps_params),
    .parse = in_parse,
    .infer = in_infer,
    .eval = {[SIM_PREC_F32] = in_eval},
};

/* ------------------------------------------------------------------------------------------------- */

static rd_status ln_parse(const sim_node *n, void *params, rd_error *err)
{
    struct eps_params *p = params;
    p->epsilon = sim_attr_float(n, "epsilon", 1e-5f);
    p->axis = sim_attr_int(n, "axis", -1);
    const int64_t stash = sim_attr_int(n, "stash_type", 1);
    if (stash != 1)
        return rd_errorf(err, RD_E_UNSUPPORTED, "node '%s' (%s): stash_type %lld (only 1, float, is supported)",
                         n->name, n->op_type, (long long)stash);
    return RD_OK;
}

/* Checks LayerNormalization operands; *axis normalised, scale/B must broadcast to X.shape[axis:]. */
static rd_status ln_check(const sim_op_ctx *ctx, int *axis, rd_error *err)
{
    const struct eps_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    for (int i = 0; i < 3 && i < ctx->n_in; i++)
        if (ctx->in[i] && ctx->in[i]->dtype != RD_DT_F32)
            return sim_err_dtype(ctx, i, err);
    rd_status st = sim_norm_axis(ctx, p->axis, x->rank, axis, err);
    if (st != RD_OK)
        return st;
    const int nr = x->rank - *axis;
    for (int i = 1; i < 3 && i < ctx->n_in; i++) {
        const rd_tensor *t = ctx->in[i];
        if (!t)
            continue;
        bool ok = t->rank <= nr;
        for (int d = 0; ok && d < t->rank; d++) {
            const int64_t want = x->dims[x->rank - t->rank + d];
            ok = t->dims[d] == want || t->dims[d] == 1;
        }
        if (!ok)
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input %d does not broadcast to the normalised dims",
                             ctx->node->name, ctx->node->op_type, i);
    }
    return RD_OK;
}

static rd_status ln_infer(sim_op_ctx *ctx, rd_error *err)
{
    int axis;
    rd_status st = ln_check(ctx, &axis, err);
    if (st != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0];
    sim_set_shape(&ctx->out[0], RD_DT_F32, x->rank, x->dims);
    int64_t sdims[RD_MAX_RANK];
    for (int d = 0; d < x->rank; d++)
        sdims[d] = d < axis ? x->dims[d] : 1;
    for (int k = 1; k < 3 && k < ctx->n_out; k++)
        if (ctx->out_present[k])
            sim_set_shape(&ctx->out[k], RD_DT_F32, x->rank, sdims);
    return RD_OK;
}

/* Index into a parameter t broadcast to the normalised dims nd[0..nr-1] for flat position j. */
static int64_t bcast_index(const rd_tensor *t, const int64_t *nd, int nr, int64_t j)
{
    int64_t idx = 0, stride = 1;
    for (int d = nr - 1; d >= 0; d--) {
        const int64_t pos = j % nd[d];
        j /= nd[d];
        const int td = t->rank - (nr - d);
        if (td >= 0) {
            if (t->dims[td] != 1)
                idx += pos * stride;
            stride *= t->dims[td];
        }
    }
    return idx;
}

static rd_status ln_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct eps_params *p = ctx->params;
    int axis;
    rd_status st = ln_check(ctx, &axis, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    const rd_tensor *x = ctx->in[0], *sc = ctx->in[1], *bi = ctx->n_in > 2 ? ctx->in[2] : NULL;
    const int nr = x->rank - axis;
    const int64_t *nd = x->dims + axis;
    int64_t len = 1;
    for (int d = 0; d < nr; d++)
        len *= nd[d];
    const int64_t rows = len ? rd_tensor_numel(x) / len : 0;
    const bool sc_full = rd_tensor_numel(sc) == len, bi_full = !bi || rd_tensor_numel(bi) == len;
    float *mean_out = ctx->n_out > 1 && ctx->out_present[1] ? ctx->out[1].data : NULL;
    float *inv_out = ctx->n_out > 2 && ctx->out_present[2] ? ctx->out[2].data : NULL;
    const float *scd = sc->data, *bid = bi ? bi->data : NULL;
    for (int64_t r = 0; r < rows; r++) {
        const float *xp = (const float *)x->data + r * len;
        float *yp = (float *)ctx->out[0].data + r * len;
        double mean, var;
        mean_var(xp, len, &mean, &var);
        const float inv = (float)(1.0 / sqrt(var + (double)p->epsilon)), m = (float)mean;
        for (int64_t j = 0; j < len; j++) {
            const float s = scd[sc_full ? j : bcast_index(sc, nd, nr, j)];
            const float b = bid ? bid[bi_full ? j : bcast_index(bi, nd, nr, j)] : 0.0f;
            yp[j] = (xp[j] - m) * inv * s + b;
        }
        if (mean_out)
            mean_out[r] = m;
        if (inv_out)
            inv_out[r] = inv;
    }
    return RD_OK;
}

const sim_op_def op_layer_normalization = {
    .name = "LayerNormalization",
    .domain = "",
    .since = 17,
    .min_in = 2,
    .max_in = 3,
    .min_out = 1,
    .max_out = 3,
    .params_size = sizeof(struct eps_params),
    .parse = ln_parse,
    .infer = ln_infer,
    .eval = {[SIM_PREC_F32] = ln_eval},
    .qrule = RD_OP_Q_FLOAT16,
    .npu_op = "exNorm",
};

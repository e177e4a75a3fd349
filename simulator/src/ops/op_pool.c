/*
 * op_pool.c: MaxPool (1..22, optional Indices), AveragePool (1..22), GlobalAveragePool and
 * GlobalMaxPool, over 1-D to 6-D windows. Computed in float: float32 directly, float16 (and uint8/int8
 * for MaxPool, exact in float) through a converted copy in scratch, outputs rounded back.
 */
#include "nn_spatial.h"
#include "../kernels/gap_conv.h"
#include "../quant.h"
#include "../kernels/pool_f32.h"

struct pool_params {
    nn_spatial sp;
    bool ceil_mode;
    bool count_include_pad;
    bool col_major; /* MaxPool storage_order 1 */
    bool is_max;
};

static rd_status pool_parse_common(const sim_node *n, struct pool_params *p, bool is_max, rd_error *err)
{
    rd_status st = nn_spatial_parse(n, &p->sp, err);
    if (st != RD_OK)
        return st;
    if (p->sp.n_kernel == 0)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): attribute kernel_shape is required", n->name, n->op_type);
    p->is_max = is_max;
    p->ceil_mode = sim_attr_int(n, "ceil_mode", 0) != 0;
    p->count_include_pad = sim_attr_int(n, "count_include_pad", 0) != 0;
    const int64_t so = sim_attr_int(n, "storage_order", 0);
    if (so != 0 && so != 1)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): storage_order %lld is not 0 or 1", n->name, n->op_type,
                         (long long)so);
    p->col_major = so == 1;
    return RD_OK;
}

static rd_status maxpool_parse(const sim_node *n, void *params, rd_error *err)
{
    return pool_parse_common(n, params, true, err);
}

static rd_status avgpool_parse(const sim_node *n, void *params, rd_error *err)
{
    return pool_parse_common(n, params, false, err);
}

/* Dtypes computed through float without loss. */
static bool dtype_ok(rd_dtype dt, bool is_max)
{
    return dt == RD_DT_F32 || dt == RD_DT_F16 || (is_max && (dt == RD_DT_U8 || dt == RD_DT_I8));
}

static rd_status pool_geometry(const sim_op_ctx *ctx, conv_geom *g, rd_error *err)
{
    const struct pool_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    if (!dtype_ok(x->dtype, p->is_max))
        return sim_err_dtype(ctx, 0, err);
    if (x->rank < 3 || x->rank > CONV_MAX_SP + 2)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input has rank %d, expected 3..%d", ctx->node->name,
                         ctx->node->op_type, x->rank, CONV_MAX_SP + 2);
    memset(g, 0, sizeof *g);
    const int nsp = x->rank - 2;
    rd_status st = nn_check_len(ctx, "kernel_shape", p->sp.n_kernel, nsp, err);
    if (st != RD_OK)
        return st;
    g->batch = x->dims[0];
    g->in_c = g->out_c = g->group = x->dims[1];
    return nn_window_geom(ctx, &p->sp, nsp, x->dims + 2, p->sp.kernel, p->ceil_mode, g, err);
}

static rd_status pool_infer(sim_op_ctx *ctx, rd_error *err)
{
    conv_geom g;
    rd_status st = pool_geometry(ctx, &g, err);
    if (st != RD_OK)
        return st;
    int64_t dims[RD_MAX_RANK];
    dims[0] = g.batch;
    dims[1] = g.in_c;
    for (int d = 0; d < g.nsp; d++)
        dims[d + 2] = g.out[d];
    sim_set_shape(&ctx->out[0], ctx->in[0]->dtype, g.nsp + 2, dims);
    if (ctx->n_out > 1 && ctx->out_present[1])
        sim_set_shape(&ctx->out[1], RD_DT_I64, g.nsp + 2, dims);
    return RD_OK;
}

/*
 * Float views of input and output: the tensors themselves for float32, else areas of one scratch
 * request (input converted on the way in; the caller converts the output back with store_f32).
 */
static rd_status float_views(sim_op_ctx *ctx, const float **xf, float **yf, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    rd_tensor *y = &ctx->out[0];
    if (x->dtype == RD_DT_F32) {
        *xf = x->data;
        *yf = y->data;
        return RD_OK;
    }
    const int64_t nx = rd_tensor_numel(x), ny = rd_tensor_numel(y);
    float *buf = sim_scratch_get(ctx, (size_t)(nx + ny) * sizeof(float), err);
    if (!buf)
        return err ? err->code : RD_E_NOMEM;
    for (int64_t i = 0; i < nx; i++)
        buf[i] = (float)sim_get_f64(x, i);
    *xf = buf;
    *yf = buf + nx;
    return RD_OK;
}

/* Rounds the float results into y when y is not float32 (float16 round to nearest even). */
static void store_f32(rd_tensor *y, const float *yf)
{
    if (y->dtype == RD_DT_F32)
        return;
    const int64_t n = rd_tensor_numel(y);
    for (int64_t i = 0; i < n; i++)
        sim_set_f64(y, i, yf[i]);
}

static rd_status pool_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct pool_params *p = ctx->params;
    conv_geom g;
    rd_status st = pool_geometry(ctx, &g, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    const float *xf;
    float *yf;
    st = float_views(ctx, &xf, &yf, err);
    if (st != RD_OK)
        return st;
    if (p->is_max) {
        int64_t *idx = ctx->n_out > 1 && ctx->out_present[1] ? ctx->out[1].data : NULL;
        pool_max_f32(&g, xf, yf, idx, p->col_major);
    } else {
        pool_avg_f32(&g, xf, yf, p->count_include_pad);
    }
    store_f32(&ctx->out[0], yf);
    return RD_OK;
}

static int64_t pool_macs(const sim_op_ctx *ctx)
{
    const struct pool_params *p = ctx->params;
    int64_t k = 1;
    for (int d = 0; d < p->sp.n_kernel; d++)
        k = sim_count_mul(k, p->sp.kernel[d]);
    return sim_count_mul(rd_tensor_numel(&ctx->out[0]), k);
}

/* The windowed pools share params, shape rule and kernel; MaxPool's optional second output holds the argmax
   indices. */
#define LOCAL_POOL_OP(sym, nm, parse_, max_out_, ...)                  \
    const sim_op_def sym = {.name = nm,                                \
                            .domain = "",                              \
                            .since = 1,                                \
                            .min_in = 1,                               \
                            .max_in = 1,                               \
                            .min_out = 1,                              \
                            .max_out = max_out_,                       \
                            .params_size = sizeof(struct pool_params), \
                            .parse = parse_,                           \
                            .infer = pool_infer,                       \
                            .eval = {[SIM_PREC_F32] = pool_eval},      \
                            .macs = pool_macs,                         \
                            .prune = RD_OP_PRUNE_CHANNELWISE,          \
                            __VA_ARGS__}
LOCAL_POOL_OP(op_max_pool, "MaxPool", maxpool_parse, 2, .qrule = RD_OP_Q_PASS);
LOCAL_POOL_OP(op_average_pool, "AveragePool", avgpool_parse, 1);

/* ------------------------------------------------------------------------------------------------- */

static rd_status global_infer(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    if (!dtype_ok(x->dtype, false))
        return sim_err_dtype(ctx, 0, err);
    if (x->rank < 3)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input has rank %d, expected >= 3", ctx->node->name,
                         ctx->node->op_type, x->rank);
    int64_t dims[RD_MAX_RANK];
    for (int d = 0; d < x->rank; d++)
        dims[d] = d < 2 ? x->dims[d] : 1;
    sim_set_shape(&ctx->out[0], x->dtype, x->rank, dims);
    return RD_OK;
}

static rd_status global_eval(sim_op_ctx *ctx, bool max, rd_error *err)
{
    rd_status st = global_infer(ctx, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    const rd_tensor *x = ctx->in[0];
    const int64_t planes = x->dims[0] * x->dims[1];
    const int64_t len = planes ? rd_tensor_numel(x) / planes : 0;
    const float *xf;
    float *yf;
    st = float_views(ctx, &xf, &yf, err);
    if (st != RD_OK)
        return st;
    pool_global_f32(xf, planes, len, max, yf);
    store_f32(&ctx->out[0], yf);
    return RD_OK;
}

static rd_status global_avg_eval(sim_op_ctx *ctx, rd_error *err)
{
    return global_eval(ctx, false, err);
}

static rd_status global_max_eval(sim_op_ctx *ctx, rd_error *err)
{
    return global_eval(ctx, true, err);
}

/* GlobalAveragePool as the NPU computes it in float16 once RKNN lowered it to depthwise convs
   (kernels/gap_conv.h): weights 1 / (kh * kw) rounded to half, products summed in float32 in window order
   (float16 layers accumulate in float32 here: docs/numerics.md), the intermediate of a two-stage plan
   rounded to half. Other ranks and empty maps: the float32 kernel. */
static rd_status global_avg_f16_eval(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    if (x->dtype != RD_DT_F32 || x->rank != 4 || rd_tensor_numel(x) == 0 || !ctx->out[0].data)
        return global_avg_eval(ctx, err);
    const int64_t planes = x->dims[0] * x->dims[1], h = x->dims[2], w = x->dims[3];
    gap_plan plan;
    gap_plan_make(h, w, &plan);
    float wt[2];
    for (int s = 0; s < plan.n_stages; s++)
        wt[s] = rd_f16_to_f32(rd_f32_to_f16(1.0f / (float)(plan.kh[s] * plan.kw[s])));
    const int64_t mh = h / plan.kh[0], mw = w / plan.kw[0];
    float *mid = sim_scratch_get(ctx, (size_t)(mh * mw) * sizeof(float), err);
    if (!mid)
        return err ? err->code : RD_E_NOMEM;
    const float *xf = x->data;
    float *y = ctx->out[0].data;
    for (int64_t p = 0; p < planes; p++) {
        const float *xp = xf + p * h * w;
        for (int64_t i = 0; i < mh; i++)
            for (int64_t j = 0; j < mw; j++) {
                float s = 0.0f;
                for (int64_t a = 0; a < plan.kh[0]; a++)
                    for (int64_t b = 0; b < plan.kw[0]; b++)
                        s += xp[(i * plan.kh[0] + a) * w + j * plan.kw[0] + b] * wt[0];
                mid[i * mw + j] = plan.n_stages == 1 ? s : rd_f16_to_f32(rd_f32_to_f16(s));
            }
        if (plan.n_stages == 1) {
            y[p] = mid[0];
            continue;
        }
        float s = 0.0f;
        for (int64_t i = 0; i < mh * mw; i++)
            s += mid[i] * wt[1];
        y[p] = s;
    }
    return RD_OK;
}

static int64_t global_macs(const sim_op_ctx *ctx)
{
    return rd_tensor_numel(ctx->in[0]);
}

const sim_op_def op_global_average_pool = {
    .name = "GlobalAveragePool",
    .domain = "",
    .since = 1,
    .min_in = 1,
    .max_in = 1,
    .min_out = 1,
    .max_out = 1,
    .infer = global_infer,
    .eval = {[SIM_PREC_F32] = global_avg_eval, [SIM_PREC_F16] = global_avg_f16_eval},
    .macs = global_macs,
    .flags = SIM_OP_LOWERED_KERNELS,
    .eval_i8 = sim_q8_gap_conv_eval,
    .eval_i16 = sim_q16_gap_conv_eval,
    .prune = RD_OP_PRUNE_CHANNELWISE,
    .npu_op = "Conv",
};

const sim_op_def op_global_max_pool = {
    .name = "GlobalMaxPool",
    .domain = "",
    .since = 1,
    .min_in = 1,
    .max_in = 1,
    .min_out = 1,
    .max_out = 1,
    .infer = global_infer,
    .eval = {[SIM_PREC_F32] = global_max_eval},
    .macs = global_macs,
    .qrule = RD_OP_Q_PASS,
    .prune = RD_OP_PRUNE_CHANNELWISE,
};

/*
 * op_quant.c: QuantizeLinear, DequantizeLinear (per-tensor, per-axis from opset 13, blocked from
 * opset 21), DynamicQuantizeLinear, and the integer operators ConvInteger, MatMulInteger, QLinearConv
 * and QLinearMatMul.
 *
 * Quantized dtypes: uint8, int8, uint16, int16 (and int32 input of DequantizeLinear); float8 and
 * int4 are reported unsupported. Rounding is half to even (rintf in the default rounding mode), then
 * saturation to the target range, as in the ONNX reference. Requantization of QLinear* outputs:
 * int32 accumulator times the float32 multiplier (a_scale * b_scale / y_scale, computed in float32 as
 * the reference does), in double, rounded half to even, plus the output zero point, saturated.
 */
#include "../kernels/ref_conv_int.h"
#include "elem_common.h"

static bool q_dtype_ok(rd_dtype dt)
{
    return dt == RD_DT_U8 || dt == RD_DT_I8 || dt == RD_DT_U16 || dt == RD_DT_I16;
}

/** Rounds half to even, adds zp, saturates and stores into a quantized buffer. */
static inline void q_store(void *y, rd_dtype dt, int64_t i, double v, int64_t zp, double lo, double hi)
{
    double r = rint(v) + (double)zp;
    r = r < lo ? lo : r > hi ? hi : r;
    if (r != r)
        r = 0.0;
    ec_st_i64(y, dt, i, (int64_t)r);
}

/* How scale and zero point map onto x: one value, one per index along axis, or blocks along axis. */
typedef struct q_layout {
    int64_t outer, len, inner; /* x viewed as outer x len x inner around axis */
    int mode;                  /* 0 per tensor, 1 per axis, 2 blocked */
    int64_t block, slen;       /* blocked: block size and scale dim along axis */
} q_layout;

static rd_status q_layout_make(const sim_op_ctx *ctx, const rd_tensor *x, const rd_tensor *scale, const rd_tensor *zp,
                               int64_t axis, int64_t block, q_layout *q, rd_error *err)
{
    memset(q, 0, sizeof *q);
    q->outer = 1;
    q->len = 1;
    q->inner = 1;
    if (zp && (zp->rank != scale->rank || memcmp(zp->dims, scale->dims, sizeof(int64_t) * (size_t)scale->rank) != 0))
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): zero point and scale shapes differ", ctx->node->name,
                         ctx->node->op_type);
    if (rd_tensor_numel(scale) == 1 && scale->rank <= 1 && block == 0) {
        q->inner = rd_tensor_numel(x);
        return RD_OK;
    }
    int ax;
    rd_status st = sim_norm_axis(ctx, axis, x->rank, &ax, err);
    if (st != RD_OK)
        return st;
    for (int d = 0; d < ax; d++)
        q->outer *= x->dims[d];
    q->len = x->dims[ax];
    for (int d = ax + 1; d < x->rank; d++)
        q->inner *= x->dims[d];
    if (block > 0) {
        if (scale->rank != x->rank)
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): blocked scale must have the rank of x", ctx->node->name,
                             ctx->node->op_type);
        for (int d = 0; d < x->rank; d++) {
            int64_t want = d == ax ? (x->dims[d] + block - 1) / block : x->dims[d];
            if (scale->dims[d] != want)
                return rd_errorf(err, RD_E_INVAL,
                                 "node '%s' (%s): scale dim %d is %lld, expected %lld for block_size %lld",
                                 ctx->node->name, ctx->node->op_type, d, (long long)scale->dims[d], (long long)want,
                                 (long long)block);
        }
        q->mode = 2;
        q->block = block;
        q->slen = scale->dims[ax];
        return RD_OK;
    }
    if (scale->rank != 1 || scale->dims[0] != q->len)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): scale has %lld elements, expected 1 or %lld (axis %d)",
                         ctx->node->name, ctx->node->op_type, (long long)rd_tensor_numel(scale), (long long)q->len, ax);
    q->mode = 1;
    return RD_OK;
}

static inline int64_t q_sidx(const q_layout *q, int64_t o, int64_t k, int64_t i)
{
    return q->mode == 0 ? 0 : q->mode == 1 ? k : (o * q->slen + k / q->block) * q->inner + i;
}

struct qdq_params {
    int64_t axis, block;
    rd_dtype out_dtype; /* QuantizeLinear 21: output_dtype, 0 when absent */
};

static rd_status qdq_parse(const sim_node *n, void *params, rd_error *err)
{
    struct qdq_params *p = params;
    p->axis = sim_attr_int(n, "axis", 1);
    p->block = sim_attr_int(n, "block_size", 0);
    int64_t od = sim_attr_int(n, "output_dtype", 0);
    if (p->block < 0)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): block_size %lld is negative", n->name, n->op_type,
                         (long long)p->block);
    if (od != 0 && (od < 0 || od >= RD_DT_COUNT || !q_dtype_ok((rd_dtype)od)))
        return rd_errorf(err, RD_E_UNSUPPORTED, "node '%s' (%s): output_dtype %lld is not supported", n->name,
                         n->op_type, (long long)od);
    p->out_dtype = (rd_dtype)od;
    return RD_OK;
}

static rd_status quant_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct qdq_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0], *s = ctx->in[1], *zp = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if (!(x->dtype == RD_DT_F32 || x->dtype == RD_DT_F16 || x->dtype == RD_DT_I32))
        return sim_err_dtype(ctx, 0, err);
    if (!(s->dtype == RD_DT_F32 || s->dtype == RD_DT_F16))
        return sim_err_dtype(ctx, 1, err);
    rd_dtype out = zp ? zp->dtype : p->out_dtype ? p->out_dtype : RD_DT_U8;
    if (!q_dtype_ok(out))
        return zp ? sim_err_dtype(ctx, 2, err)
                  : rd_errorf(err, RD_E_UNSUPPORTED, "node '%s': output dtype %s", ctx->node->name, rd_dtype_name(out));
    q_layout q;
    rd_status st = q_layout_make(ctx, x, s, zp, p->axis, p->block, &q, err);
    if (st != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], out, x->rank, x->dims);
    return RD_OK;
}

static rd_status quant_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct qdq_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0], *s = ctx->in[1], *zp = ctx->n_in > 2 ? ctx->in[2] : NULL;
    rd_tensor *y = &ctx->out[0];
    q_layout q;
    rd_status st = q_layout_make(ctx, x, s, zp, p->axis, p->block, &q, err);
    if (st != RD_OK || !y->data)
        return st;
    double lo, hi;
    ec_int_range(y->dtype, &lo, &hi);
    int64_t idx = 0;
    for (int64_t o = 0; o < q.outer; o++)
        for (int64_t k = 0; k < q.len; k++)
            for (int64_t i = 0; i < q.inner; i++, idx++) {
                int64_t si = q_sidx(&q, o, k, i);
                /* x / scale in float32, as the reference divides float32 arrays */
                float v = (float)ec_ld_f64(x->data, x->dtype, idx) / (float)ec_ld_f64(s->data, s->dtype, si);
                q_store(y->data, y->dtype, idx, v, zp ? ec_ld_i64(zp->data, zp->dtype, si) : 0, lo, hi);
            }
    return RD_OK;
}

static rd_status dequant_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct qdq_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0], *s = ctx->in[1], *zp = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if (!(q_dtype_ok(x->dtype) || x->dtype == RD_DT_I32))
        return sim_err_dtype(ctx, 0, err);
    if (!(s->dtype == RD_DT_F32 || s->dtype == RD_DT_F16))
        return sim_err_dtype(ctx, 1, err);
    if (zp && zp->dtype != x->dtype)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (DequantizeLinear): zero point is %s but x is %s", ctx->node->name,
                         rd_dtype_name(zp->dtype), rd_dtype_name(x->dtype));
    q_layout q;
    rd_status st = q_layout_make(ctx, x, s, zp, p->axis, p->block, &q, err);
    if (st != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], s->dtype, x->rank, x->dims);
    return RD_OK;
}

static rd_status dequant_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct qdq_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0], *s = ctx->in[1], *zp = ctx->n_in > 2 ? ctx->in[2] : NULL;
    rd_tensor *y = &ctx->out[0];
    q_layout q;
    rd_status st = q_layout_make(ctx, x, s, zp, p->axis, p->block, &q, err);
    if (st != RD_OK || !y->data)
        return st;
    int64_t idx = 0;
    for (int64_t o = 0; o < q.outer; o++)
        for (int64_t k = 0; k < q.len; k++)
            for (int64_t i = 0; i < q.inner; i++, idx++) {
                int64_t si = q_sidx(&q, o, k, i);
                int64_t d = ec_ld_i64(x->data, x->dtype, idx) - (zp ? ec_ld_i64(zp->data, zp->dtype, si) : 0);
                float v = (float)d * (float)ec_ld_f64(s->data, s->dtype, si); /* float32 product */
                ec_st_f64(y->data, y->dtype, idx, v);
            }
    return RD_OK;
}

const sim_op_def op_quantize_linear = {.name = "QuantizeLinear",
                                       .domain = "",
                                       .since = 10,
                                       .min_in = 2,
                                       .max_in = 3,
                                       .min_out = 1,
                                       .max_out = 1,
                                       .params_size = sizeof(struct qdq_params),
                                       .parse = qdq_parse,
                                       .infer = quant_infer,
                                       .eval = {[SIM_PREC_F32] = quant_eval},
                                       .qrule = RD_OP_Q_NONE};
const sim_op_def op_dequantize_linear = {.name = "DequantizeLinear",
                                         .domain = "",
                                         .since = 10,
                                         .min_in = 2,
                                         .max_in = 3,
                                         .min_out = 1,
                                         .max_out = 1,
                                         .params_size = sizeof(struct qdq_params),
                                         .parse = qdq_parse,
                                         .infer = dequant_infer,
                                         .eval = {[SIM_PREC_F32] = dequant_eval}};

/* ---------------------------------------------------------------------------------------------------
 * DynamicQuantizeLinear: uint8 with scale and zero point from the data range (which always
 * includes 0), all in float32 as the spec's formula.
 */

static rd_status dynq_infer(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    if (x->dtype != RD_DT_F32)
        return sim_err_dtype(ctx, 0, err);
    sim_set_shape(&ctx->out[0], RD_DT_U8, x->rank, x->dims);
    sim_set_shape(&ctx->out[1], RD_DT_F32, 0, NULL);
    sim_set_shape(&ctx->out[2], RD_DT_U8, 0, NULL);
    return RD_OK;
}

static rd_status dynq_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const rd_tensor *x = ctx->in[0];
    const float *xv = x->data;
    int64_t n = rd_tensor_numel(x);
    float mn = 0.0f, mx = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        mn = xv[i] < mn ? xv[i] : mn;
        mx = xv[i] > mx ? xv[i] : mx;
    }
    float scale = (mx - mn) / 255.0f;
    float zpf = scale != 0.0f ? 0.0f - mn / scale : 0.0f;
    zpf = zpf < 0.0f ? 0.0f : zpf > 255.0f ? 255.0f : zpf;
    uint8_t zp = (uint8_t)rintf(zpf);
    if (ctx->out_present[1])
        *(float *)ctx->out[1].data = scale;
    if (ctx->out_present[2])
        *(uint8_t *)ctx->out[2].data = zp;
    if (ctx->out_present[0] && ctx->out[0].data)
        for (int64_t i = 0; i < n; i++)
            q_store(ctx->out[0].data, RD_DT_U8, i, scale != 0.0f ? xv[i] / scale : 0.0f, zp, 0.0, 255.0);
    return RD_OK;
}

const sim_op_def op_dynamic_quantize_linear = {.name = "DynamicQuantizeLinear",
                                               .domain = "",
                                               .since = 11,
                                               .min_in = 1,
                                               .max_in = 1,
                                               .min_out = 3,
                                               .max_out = 3,
                                               .infer = dynq_infer,
                                               .eval = {[SIM_PREC_F32] = dynq_eval},
                                               .qrule = RD_OP_Q_NONE};

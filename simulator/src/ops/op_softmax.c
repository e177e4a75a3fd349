/*
 * op_softmax.c: Softmax and LogSoftmax (1..22), float32 and float16 (computed in float, rounded).
 * Before opset 13 the input is coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])] (default axis 1)
 * and each row is normalised; from 13 the op normalises along the single axis (default -1).
 * Max is subtracted first; the sum of exponentials is accumulated in double.
 */
#include "../internal.h"

#include <math.h>

struct softmax_params {
    int64_t axis;
    bool log;
};

static rd_status softmax_parse_common(const sim_node *n, struct softmax_params *p, bool log)
{
    p->axis = sim_attr_int(n, "axis", n->opset >= 13 ? -1 : 1);
    p->log = log;
    return RD_OK;
}

static rd_status softmax_parse(const sim_node *n, void *params, rd_error *err)
{
    (void)err;
    return softmax_parse_common(n, params, false);
}

static rd_status logsoftmax_parse(const sim_node *n, void *params, rd_error *err)
{
    (void)err;
    return softmax_parse_common(n, params, true);
}

/* outer x len x inner view of the input: normalise over len with stride inner. */
static rd_status softmax_view(const sim_op_ctx *ctx, int64_t *outer, int64_t *len, int64_t *inner, rd_error *err)
{
    const struct softmax_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    if (x->dtype != RD_DT_F32 && x->dtype != RD_DT_F16)
        return sim_err_dtype(ctx, 0, err);
    int axis;
    rd_status st = sim_norm_axis(ctx, p->axis, x->rank, &axis, err);
    if (st != RD_OK)
        return st;
    *outer = 1;
    *len = 1;
    *inner = 1;
    for (int d = 0; d < x->rank; d++) {
        if (d < axis)
            *outer *= x->dims[d];
        else if (d == axis || ctx->opset < 13)
            *len *= x->dims[d];
        else
            *inner *= x->dims[d];
    }
    return RD_OK;
}

static rd_status softmax_infer(sim_op_ctx *ctx, rd_error *err)
{
    int64_t o, l, i;
    rd_status st = softmax_view(ctx, &o, &l, &i, err);
    if (st == RD_OK)
        sim_set_shape(&ctx->out[0], ctx->in[0]->dtype, ctx->in[0]->rank, ctx->in[0]->dims);
    return st;
}

static float load(const rd_tensor *t, int64_t i)
{
    return t->dtype == RD_DT_F32 ? ((const float *)t->data)[i] : rd_f16_to_f32(((const uint16_t *)t->data)[i]);
}

static void store(rd_tensor *t, int64_t i, float v)
{
    if (t->dtype == RD_DT_F32)
        ((float *)t->data)[i] = v;
    else
        ((uint16_t *)t->data)[i] = rd_f32_to_f16(v);
}

static rd_status softmax_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct softmax_params *p = ctx->params;
    int64_t outer, len, inner;
    rd_status st = softmax_view(ctx, &outer, &len, &inner, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    const rd_tensor *x = ctx->in[0];
    rd_tensor *y = &ctx->out[0];
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            const int64_t base = o * len * inner + in;
            float mx = -INFINITY;
            for (int64_t j = 0; j < len; j++) {
                const float v = load(x, base + j * inner);
                if (v > mx)
                    mx = v;
            }
            double sum = 0.0;
            for (int64_t j = 0; j < len; j++)
                sum += exp((double)load(x, base + j * inner) - (double)mx);
            if (p->log) {
                const double ls = log(sum);
                for (int64_t j = 0; j < len; j++)
                    store(y, base + j * inner, (float)((double)load(x, base + j * inner) - (double)mx - ls));
            } else {
                for (int64_t j = 0; j < len; j++)
                    store(y, base + j * inner, (float)(exp((double)load(x, base + j * inner) - (double)mx) / sum));
            }
        }
    }
    return RD_OK;
}

const sim_op_def op_softmax = {
    .name = "Softmax", .domain = "", .since = 1, .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
    .params_size = sizeof(struct softmax_params), .parse = softmax_parse, .infer = softmax_infer,
    .eval = {[SIM_PREC_F32] = softmax_eval},
};

const sim_op_def op_log_softmax = {
    .name = "LogSoftmax", .domain = "", .since = 1, .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
    .params_size = sizeof(struct softmax_params), .parse = logsoftmax_parse, .infer = softmax_infer,
    .eval = {[SIM_PREC_F32] = softmax_eval},
};

/*
 * op_softmax.c: Softmax, LogSoftmax and Hardmax (1..22), float32 and float16 (computed in float, rounded).
 * Before opset 13 the input is coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])] (default axis 1)
 * and each row is normalised; from 13 the op normalises along the single axis (default -1).
 * Max is subtracted first; the sum of exponentials is accumulated in double. Hardmax writes 1 at the
 * first largest value of each row and 0 elsewhere.
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

static rd_status hardmax_parse(const sim_node *n, void *params, rd_error *err)
{
    (void)err;
    return softmax_parse_common(n, params, false);
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

/* One row of the view: len values from x[base] with stride inner, written to y at the same places. */
typedef struct softmax_row {
    const rd_tensor *x;
    rd_tensor *y;
    int64_t base, len, inner;
} softmax_row;

typedef void (*softmax_row_fn)(const softmax_row *r, const struct softmax_params *p);

/* Softmax and LogSoftmax of one row: the max subtracted, the sum of exponentials in double. */
static void softmax_of_row(const softmax_row *r, const struct softmax_params *p)
{
    float mx = -INFINITY;
    for (int64_t j = 0; j < r->len; j++) {
        const float v = load(r->x, r->base + j * r->inner);
        if (v > mx)
            mx = v;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < r->len; j++)
        sum += exp((double)load(r->x, r->base + j * r->inner) - (double)mx);
    const double ls = p->log ? log(sum) : 0.0;
    for (int64_t j = 0; j < r->len; j++) {
        const int64_t i = r->base + j * r->inner;
        store(r->y, i,
              p->log ? (float)((double)load(r->x, i) - (double)mx - ls)
                     : (float)(exp((double)load(r->x, i) - (double)mx) / sum));
    }
}

/* Hardmax of one row: 1 at the first largest value (NaN counts as largest, as numpy.argmax has it). */
static void hardmax_of_row(const softmax_row *r, const struct softmax_params *p)
{
    (void)p;
    int64_t best = 0;
    for (int64_t j = 1; j < r->len && !isnan(load(r->x, r->base + best * r->inner)); j++) {
        const float v = load(r->x, r->base + j * r->inner);
        if (v > load(r->x, r->base + best * r->inner) || isnan(v))
            best = j;
    }
    for (int64_t j = 0; j < r->len; j++)
        store(r->y, r->base + j * r->inner, j == best ? 1.0f : 0.0f);
}

/* Applies fn to every row of the node's view (softmax_view). */
static rd_status each_row(sim_op_ctx *ctx, softmax_row_fn fn, rd_error *err)
{
    int64_t outer = 0, len = 0, inner = 0;
    rd_status st = softmax_view(ctx, &outer, &len, &inner, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    softmax_row r = {.x = ctx->in[0], .y = &ctx->out[0], .len = len, .inner = inner};
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            r.base = o * len * inner + in;
            fn(&r, ctx->params);
        }
    }
    return RD_OK;
}

static rd_status softmax_eval(sim_op_ctx *ctx, rd_error *err)
{
    return each_row(ctx, softmax_of_row, err);
}

static rd_status hardmax_eval(sim_op_ctx *ctx, rd_error *err)
{
    return each_row(ctx, hardmax_of_row, err);
}

/* RKNN turns a softmax over the last axis into exSoftmax13 (convert_softmax_to_exsoftmax13_equal: "equal" to
   opset 13's meaning); others stay Softmax (the caffe MobileNetV2 log: axis 1 of [1, 1000, 1, 1]). Both
   run in float16 (qrule). The rule is our reading of those two logs (docs/numerics.md). */
static const char *softmax_npu_op(const sim_node *n, const rd_model *m)
{
    const struct softmax_params *p = n->params;
    int rank = n->in[0] >= 0 ? m->values[n->in[0]].rank : -1;
    if (!p || rank <= 0)
        return "Softmax";
    int64_t axis = p->axis < 0 ? p->axis + rank : p->axis;
    return axis == rank - 1 ? "exSoftmax13" : "Softmax";
}

const sim_op_def op_softmax = {
    .name = "Softmax",
    .domain = "",
    .since = 1,
    .min_in = 1,
    .max_in = 1,
    .min_out = 1,
    .max_out = 1,
    .params_size = sizeof(struct softmax_params),
    .parse = softmax_parse,
    .infer = softmax_infer,
    .eval = {[SIM_PREC_F32] = softmax_eval},
    .qrule = RD_OP_Q_FLOAT16,
    .npu_op_of = softmax_npu_op,
    .same_from = 13,
    .same_on_last_axis = true,
};

const sim_op_def op_log_softmax = {
    .name = "LogSoftmax",
    .domain = "",
    .since = 1,
    .min_in = 1,
    .max_in = 1,
    .min_out = 1,
    .max_out = 1,
    .params_size = sizeof(struct softmax_params),
    .parse = logsoftmax_parse,
    .infer = softmax_infer,
    .eval = {[SIM_PREC_F32] = softmax_eval},
    .same_from = 13,
    .same_on_last_axis = true,
};

const sim_op_def op_hardmax = {
    .name = "Hardmax",
    .domain = "",
    .since = 1,
    .min_in = 1,
    .max_in = 1,
    .min_out = 1,
    .max_out = 1,
    .params_size = sizeof(struct softmax_params),
    .parse = hardmax_parse,
    .infer = softmax_infer,
    .eval = {[SIM_PREC_F32] = hardmax_eval},
    .same_from = 13,
    .same_on_last_axis = true,
};

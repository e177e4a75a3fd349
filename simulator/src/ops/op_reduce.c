/*
 * op_reduce.c: ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp, ArgMax and ArgMin.
 *
 * Axes come from the `axes` attribute before opset 13 (ReduceSum) or 18 (the others) and from the
 * optional second input after; empty axes mean "all axes" unless noop_with_empty_axes is set, in which
 * case nothing is reduced but each element still gets the operator's own function (|x| for L1 and L2,
 * x*x for SumSquare, log x for LogSum), as ONNX settled in onnx/onnx#7394 and ONNX Runtime does. Accumulators are
 * double (one per output element, in scratch), summed in input order, so results do not depend on threads; LogSumExp
 * subtracts the per-output maximum first so that large inputs do not overflow. Integer results of Mean truncate.
 */
#include "../kernels/broadcast.h"
#include "elem_common.h"

typedef enum red_kind { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_SSQ, R_LOGSUM, R_LSE } red_kind;

static const struct {
    const char *name;
    red_kind kind;
} red_names[] = {
    {"ReduceSum", R_SUM},       {"ReduceMean", R_MEAN},     {"ReduceMax", R_MAX}, {"ReduceMin", R_MIN},
    {"ReduceProd", R_PROD},     {"ReduceL1", R_L1},         {"ReduceL2", R_L2},   {"ReduceSumSquare", R_SSQ},
    {"ReduceLogSum", R_LOGSUM}, {"ReduceLogSumExp", R_LSE},
};

struct red_params {
    red_kind kind;
    bool keepdims;
    bool noop_empty; /* noop_with_empty_axes */
    bool axes_input; /* axes come from input 1 (ReduceSum 13+, others 18+) */
    int n_axes;
    int64_t axes[RD_MAX_RANK];
};

static rd_status red_parse(const sim_node *n, void *params, rd_error *err)
{
    struct red_params *p = params;
    size_t i = 0;
    while (i < sizeof red_names / sizeof red_names[0] && strcmp(red_names[i].name, n->op_type) != 0)
        i++;
    if (i == sizeof red_names / sizeof red_names[0])
        return rd_errorf(err, RD_E_INVAL, "node '%s': op %s is not a reduction", n->name, n->op_type);
    p->kind = red_names[i].kind;
    p->keepdims = sim_attr_int(n, "keepdims", 1) != 0;
    p->noop_empty = sim_attr_int(n, "noop_with_empty_axes", 0) != 0;
    p->axes_input = n->opset >= (p->kind == R_SUM ? 13 : 18);
    size_t na = 0;
    const int64_t *axes = sim_attr_ints(n, "axes", &na);
    if (na > RD_MAX_RANK)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): %zu axes, at most %d supported", n->name, n->op_type, na,
                         RD_MAX_RANK);
    if (na && p->axes_input)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): opset %d takes axes as an input, not an attribute", n->name,
                         n->op_type, n->opset);
    p->n_axes = (int)na;
    for (size_t k = 0; k < na; k++)
        p->axes[k] = axes[k];
    return RD_OK;
}

static bool red_dtype_ok(rd_dtype dt)
{
    return dt == RD_DT_F32 || dt == RD_DT_F64 || dt == RD_DT_F16 || ec_is_int(dt);
}

/* Reduced-axis mask from the attribute or input; *noop when noop_with_empty_axes leaves every axis; sim_defer
   while the axes input is unknown. */
static rd_status red_axes(sim_op_ctx *ctx, bool mask[RD_MAX_RANK], bool *noop, rd_error *err)
{
    const struct red_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    int64_t axes[RD_MAX_RANK];
    int64_t na = p->n_axes;
    memcpy(axes, p->axes, sizeof axes);
    if (p->axes_input && ctx->n_in > 1 && ctx->in[1]) {
        const rd_tensor *a = ctx->in[1];
        if (a->dtype != RD_DT_I64 || a->rank > 1)
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): axes must be a 1-D int64 tensor", ctx->node->name,
                             ctx->node->op_type);
        na = rd_tensor_numel(a);
        if (na > RD_MAX_RANK)
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): %lld axes for rank %d", ctx->node->name,
                             ctx->node->op_type, (long long)na, x->rank);
        if (na && !a->data)
            return sim_defer(ctx);
        for (int64_t k = 0; k < na; k++)
            axes[k] = ((const int64_t *)a->data)[k];
    }
    *noop = na == 0 && p->noop_empty;
    for (int d = 0; d < RD_MAX_RANK; d++)
        mask[d] = na == 0;
    if (na) {
        for (int d = 0; d < RD_MAX_RANK; d++)
            mask[d] = false;
        for (int64_t k = 0; k < na; k++) {
            int ax;
            rd_status st = sim_norm_axis(ctx, axes[k], x->rank, &ax, err);
            if (st != RD_OK)
                return st;
            mask[ax] = true;
        }
    }
    return RD_OK;
}

static rd_status red_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct red_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    /* bool joined ReduceMax and ReduceMin at opset 20 */
    bool bool_ok = x->dtype == RD_DT_BOOL && (p->kind == R_MAX || p->kind == R_MIN) && ctx->opset >= 20;
    if (!red_dtype_ok(x->dtype) && !bool_ok)
        return sim_err_dtype(ctx, 0, err);
    bool mask[RD_MAX_RANK], noop;
    rd_status st = red_axes(ctx, mask, &noop, err);
    if (st != RD_OK || ctx->deferred)
        return st;
    if (noop) {
        sim_set_shape(&ctx->out[0], x->dtype, x->rank, x->dims);
        return RD_OK;
    }
    int64_t dims[RD_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
        if (!mask[d])
            dims[r++] = x->dims[d];
        else if (p->keepdims)
            dims[r++] = 1;
    }
    sim_set_shape(&ctx->out[0], x->dtype, r, dims);
    return RD_OK;
}

typedef struct red_state {
    red_kind kind;
    const void *x;
    rd_dtype dt;
    double *acc;
    const double *shift; /* LogSumExp: per-output maximum */
} red_state;

#define RED_LOOP(LD)                             \
    switch (s->kind) {                           \
    case R_SUM:                                  \
    case R_MEAN:                                 \
    case R_LOGSUM:                               \
        for (int64_t j = 0; j < n; j++)          \
            a[j * sa] += LD(j);                  \
        break;                                   \
    case R_L1:                                   \
        for (int64_t j = 0; j < n; j++)          \
            a[j * sa] += fabs((double)LD(j));    \
        break;                                   \
    case R_L2:                                   \
    case R_SSQ:                                  \
        for (int64_t j = 0; j < n; j++) {        \
            double v = LD(j);                    \
            a[j * sa] += v * v;                  \
        }                                        \
        break;                                   \
    case R_PROD:                                 \
        for (int64_t j = 0; j < n; j++)          \
            a[j * sa] *= LD(j);                  \
        break;                                   \
    case R_MAX:                                  \
        for (int64_t j = 0; j < n; j++) {        \
            double v = LD(j);                    \
            if (v > a[j * sa] || v != v)         \
                a[j * sa] = v;                   \
        }                                        \
        break;                                   \
    case R_MIN:                                  \
        for (int64_t j = 0; j < n; j++) {        \
            double v = LD(j);                    \
            if (v < a[j * sa] || v != v)         \
                a[j * sa] = v;                   \
        }                                        \
        break;                                   \
    case R_LSE:                                  \
        for (int64_t j = 0; j < n; j++)          \
            a[j * sa] += exp(LD(j) - m[j * sa]); \
        break;                                   \
    }

static void red_row(void *user, int64_t n, const int64_t *off, const int64_t *inner)
{
    const red_state *s = user;
    double *a = s->acc + off[1];
    const double *m = s->shift ? s->shift + off[1] : NULL;
    int64_t sa = inner[1];
    (void)m;
    if (s->dt == RD_DT_F32) {
        const float *x = (const float *)s->x + off[0];
#define LD_F32(j) ((double)x[j])
        RED_LOOP(LD_F32)
#undef LD_F32
    } else {
        const void *x = s->x;
        int64_t o = off[0];
        rd_dtype dt = s->dt;
#define LD_ANY(j) ec_ld_f64(x, dt, o + (j))
        RED_LOOP(LD_ANY)
#undef LD_ANY
    }
}

static double red_init(red_kind k)
{
    return k == R_PROD ? 1.0 : k == R_MAX ? -INFINITY : k == R_MIN ? INFINITY : 0.0;
}

static rd_status red_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct red_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    rd_tensor *y = &ctx->out[0];
    bool mask[RD_MAX_RANK], noop;
    rd_status st = red_axes(ctx, mask, &noop, err);
    if (st == RD_OK && ctx->deferred)
        st = rd_errorf(err, RD_E_INVAL, "node '%s': axes unknown at run time", ctx->node->name);
    if (st != RD_OK)
        return st;
    int64_t nx = rd_tensor_numel(x), ny = rd_tensor_numel(y);
    if (noop) {
        bool identity = p->kind == R_SUM || p->kind == R_MEAN || p->kind == R_MAX || p->kind == R_MIN ||
                        p->kind == R_PROD || p->kind == R_LSE;
        if (identity) {
            if (nx)
                memcpy(y->data, x->data, rd_tensor_nbytes(x));
            return RD_OK;
        }
        for (int d = 0; d < RD_MAX_RANK; d++)
            mask[d] = false; /* a one-element reduction per element applies the operator's function */
    }
    if (ny == 0)
        return RD_OK;
    size_t bytes;
    bool lse = p->kind == R_LSE;
    if (!sim_mul_ok((size_t)ny, lse ? 2 * sizeof(double) : sizeof(double), &bytes))
        return rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): accumulator size overflows", ctx->node->name,
                         ctx->node->op_type);
    double *acc = sim_scratch_get(ctx, bytes, err);
    if (!acc)
        return err ? err->code : RD_E_NOMEM;
    double *shift = lse ? acc + ny : NULL;
    /* operand 0 walks x contiguously, operand 1 the accumulators (stride 0 along reduced axes) */
    int64_t strides[2][RD_MAX_RANK];
    int64_t sx = 1, sy = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
        strides[0][d] = sx;
        sx *= x->dims[d];
        strides[1][d] = mask[d] ? 0 : sy;
        if (!mask[d])
            sy *= x->dims[d];
    }
    bc_plan plan;
    bc_plan_strided(&plan, x->rank, x->dims, 2, (const int64_t(*)[RD_MAX_RANK])strides);
    red_state s = {.kind = p->kind, .x = x->data, .dt = x->dtype, .acc = acc};
    if (lse) {
        s.kind = R_MAX;
        s.acc = shift;
        for (int64_t i = 0; i < ny; i++)
            shift[i] = -INFINITY;
        if (nx)
            bc_run(&plan, red_row, &s);
        for (int64_t i = 0; i < ny; i++)
            if (!isfinite(shift[i]))
                shift[i] = 0.0;
        s.kind = R_LSE;
        s.acc = acc;
        s.shift = shift;
    }
    for (int64_t i = 0; i < ny; i++)
        acc[i] = red_init(s.kind);
    if (nx)
        bc_run(&plan, red_row, &s);
    double count = (double)nx / (double)ny;
    for (int64_t i = 0; i < ny; i++) {
        double v = acc[i];
        switch (p->kind) {
        case R_MEAN:
            v /= count;
            break;
        case R_L2:
            v = sqrt(v);
            break;
        case R_LOGSUM:
            v = log(v);
            break;
        case R_LSE:
            v = shift[i] + log(v);
            break;
        default:
            break;
        }
        if (y->dtype == RD_DT_BOOL && isinf(v))
            v = v > 0; /* an empty set: the dtype's lowest (Max) or highest (Min) value */
        if (y->dtype == RD_DT_F32)
            ((float *)y->data)[i] = (float)v;
        else
            ec_st_f64(y->data, y->dtype, i, v);
    }
    return RD_OK;
}

/* One reduction; the optional trailing arguments are its table traits (docs/internals/ops.md). */
#define RED_OP(sym, nm, ...)                                          \
    const sim_op_def sym = {.name = nm,                               \
                            .domain = "",                             \
                            .since = 1,                               \
                            .min_in = 1,                              \
                            .max_in = 2,                              \
                            .min_out = 1,                             \
                            .max_out = 1,                             \
                            .params_size = sizeof(struct red_params), \
                            .parse = red_parse,                       \
                            .infer = red_infer,                       \
                            .eval = {[SIM_PREC_F32] = red_eval},      \
                            __VA_ARGS__};
RED_OP(op_reduce_sum, "ReduceSum", .attrs_to_inputs_at = 13, .attrs_to_inputs = {"axes"})
RED_OP(op_reduce_mean, "ReduceMean")
RED_OP(op_reduce_max, "ReduceMax")
RED_OP(op_reduce_min, "ReduceMin")
RED_OP(op_reduce_prod, "ReduceProd")
RED_OP(op_reduce_l1, "ReduceL1")
RED_OP(op_reduce_l2, "ReduceL2")
RED_OP(op_reduce_sum_square, "ReduceSumSquare")
RED_OP(op_reduce_log_sum, "ReduceLogSum")
RED_OP(op_reduce_log_sum_exp, "ReduceLogSumExp")

/* ---------------------------------------------------------------------------------------------------
 * ArgMax / ArgMin: int64 indices along one axis; ties give the first index unless
 * select_last_index (opset 12); a NaN wins (numpy.argmax returns the first NaN).
 */

struct arg_params {
    bool is_max;
    int64_t axis;
    bool keepdims;
    bool last;
};

static rd_status arg_parse(const sim_node *n, void *params, rd_error *err)
{
    (void)err;
    struct arg_params *p = params;
    p->is_max = strcmp(n->op_type, "ArgMax") == 0;
    p->axis = sim_attr_int(n, "axis", 0);
    p->keepdims = sim_attr_int(n, "keepdims", 1) != 0;
    p->last = sim_attr_int(n, "select_last_index", 0) != 0;
    return RD_OK;
}

static rd_status arg_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct arg_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    if (!red_dtype_ok(x->dtype))
        return sim_err_dtype(ctx, 0, err);
    int ax;
    rd_status st = sim_norm_axis(ctx, p->axis, x->rank, &ax, err);
    if (st != RD_OK)
        return st;
    int64_t dims[RD_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
        if (d != ax)
            dims[r++] = x->dims[d];
        else if (p->keepdims)
            dims[r++] = 1;
    }
    sim_set_shape(&ctx->out[0], RD_DT_I64, r, dims);
    return RD_OK;
}

static rd_status arg_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct arg_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    int ax;
    rd_status st = sim_norm_axis(ctx, p->axis, x->rank, &ax, err);
    if (st != RD_OK)
        return st;
    int64_t outer = 1, inner = 1, len = x->rank ? x->dims[ax] : 1;
    for (int d = 0; d < ax; d++)
        outer *= x->dims[d];
    for (int d = ax + 1; d < x->rank; d++)
        inner *= x->dims[d];
    int64_t *y = ctx->out[0].data;
    if (!y)
        return RD_OK;
    if (len == 0)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): cannot take the arg of an empty axis", ctx->node->name,
                         ctx->node->op_type);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * len * inner + i, best = 0;
            double bv = ec_ld_f64(x->data, x->dtype, base);
            for (int64_t k = 1; k < len && bv == bv; k++) {
                double v = ec_ld_f64(x->data, x->dtype, base + k * inner);
                bool better = v != v || (p->is_max ? (p->last ? v >= bv : v > bv) : (p->last ? v <= bv : v < bv));
                if (better) {
                    bv = v;
                    best = k;
                }
            }
            y[o * inner + i] = best;
        }
    }
    return RD_OK;
}

/* ArgMax and ArgMin differ only by name: arg_parse tells them apart by the node's op type. */
#define ARG_OP(sym, nm)                                               \
    const sim_op_def sym = {.name = nm,                               \
                            .domain = "",                             \
                            .since = 1,                               \
                            .min_in = 1,                              \
                            .max_in = 1,                              \
                            .min_out = 1,                             \
                            .max_out = 1,                             \
                            .params_size = sizeof(struct arg_params), \
                            .parse = arg_parse,                       \
                            .infer = arg_infer,                       \
                            .eval = {[SIM_PREC_F32] = arg_eval},      \
                            .qrule = RD_OP_Q_NONE}
ARG_OP(op_argmax, "ArgMax");
ARG_OP(op_argmin, "ArgMin");

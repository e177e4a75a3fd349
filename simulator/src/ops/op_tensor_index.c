/*
 * op_tensor_index.c: operators driven by index data: Gather, GatherElements, GatherND, Scatter,
 * ScatterElements, ScatterND, TopK, NonZero. Indices come from outside data: every one is range-checked
 * before any element is read or written, and a bad one fails with RD_E_INVAL naming it.
 */
#include "tensor_common.h"

#include <math.h>

/* Index i of an indices tensor, made non-negative against dim; RD_E_INVAL when outside [-dim, dim). */
static rd_status fetch_index(const sim_op_ctx *ctx, const rd_tensor *ind, int64_t i, int64_t dim, int64_t *out,
                             rd_error *err)
{
    int64_t v = sim_get_int(ind, i);
    if (v < -dim || v >= dim)
        return tc_err(ctx, err, RD_E_INVAL, "index %lld (element %lld of the indices) is outside [-%lld, %lld)",
                      (long long)v, (long long)i, (long long)dim, (long long)dim);
    *out = v < 0 ? v + dim : v;
    return RD_OK;
}

static rd_status check_indices_dtype(const sim_op_ctx *ctx, int k, rd_error *err)
{
    if (!tc_has(ctx, k) || (ctx->in[k]->dtype != RD_DT_I64 && ctx->in[k]->dtype != RD_DT_I32))
        return sim_err_dtype(ctx, k, err);
    return RD_OK;
}

/* ---------------------------------------------------------------------------------------------------
 * Gather (1, 11 negative indices, 13)
 */

static rd_status gather_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct tc_axis_params *p = ctx->params;
    rd_status st;
    if ((st = tc_check_movable(ctx, 0, err)) != RD_OK || (st = check_indices_dtype(ctx, 1, err)) != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0], *ind = ctx->in[1];
    int axis;
    if ((st = sim_norm_axis(ctx, p->axis, x->rank, &axis, err)) != RD_OK)
        return st;
    if (x->rank == 0)
        return tc_err(ctx, err, RD_E_INVAL, "data must have rank >= 1");
    int r = x->rank - 1 + ind->rank;
    if (r > RD_MAX_RANK)
        return tc_err(ctx, err, RD_E_LIMIT, "output rank %d exceeds %d", r, RD_MAX_RANK);
    int64_t d[RD_MAX_RANK];
    int j = 0;
    for (int i = 0; i < axis; i++)
        d[j++] = x->dims[i];
    for (int i = 0; i < ind->rank; i++)
        d[j++] = ind->dims[i];
    for (int i = axis + 1; i < x->rank; i++)
        d[j++] = x->dims[i];
    if ((st = tc_check_shape(ctx, x->dtype, r, d, err)) != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], x->dtype, r, d);
    return RD_OK;
}

static rd_status gather_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct tc_axis_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0], *ind = ctx->in[1];
    int axis;
    rd_status st = sim_norm_axis(ctx, p->axis, x->rank, &axis, err);
    if (st != RD_OK)
        return st;
    int64_t n_idx = rd_tensor_numel(ind), dim = x->dims[axis], outer = 1, inner = 1;
    for (int i = 0; i < axis; i++)
        outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++)
        inner *= x->dims[i];
    if (rd_tensor_numel(&ctx->out[0]) == 0)
        return RD_OK;
    int64_t *idx = sim_scratch_get(ctx, (size_t)n_idx * sizeof *idx, err);
    if (!idx)
        return err ? err->code : RD_E_NOMEM;
    for (int64_t i = 0; i < n_idx; i++)
        if ((st = fetch_index(ctx, ind, i, dim, &idx[i], err)) != RD_OK)
            return st;
    size_t es = tc_elem_size(x->dtype), row = (size_t)inner * es;
    char *dst = ctx->out[0].data;
    const char *src = x->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < n_idx; i++) {
            memcpy(dst, src + ((size_t)o * (size_t)dim + (size_t)idx[i]) * row, row);
            dst += row;
        }
    return RD_OK;
}

const sim_op_def op_gather = {.name = "Gather",
                              .domain = "",
                              .since = 1,
                              .min_in = 2,
                              .max_in = 2,
                              .min_out = 1,
                              .max_out = 1,
                              .params_size = sizeof(struct tc_axis_params),
                              .parse = tc_axis0_parse,
                              .infer = gather_infer,
                              .eval = {[SIM_PREC_F32] = gather_eval}};

/* ---------------------------------------------------------------------------------------------------
 * GatherElements (11, 13) and ScatterElements (11, 13, 16 reduction, 18 min/max), Scatter (9): the
 * indices tensor has the data's rank; its element at coordinates c names the data coordinate c with
 * c[axis] replaced.
 */

/* Checks that indices (input k) fits in data along every axis but `axis`. */
static rd_status check_elements_shape(const sim_op_ctx *ctx, int k, int axis, rd_error *err)
{
    const rd_tensor *x = ctx->in[0], *ind = ctx->in[k];
    if (ind->rank != x->rank)
        return tc_err(ctx, err, RD_E_INVAL, "indices have rank %d, data rank %d", ind->rank, x->rank);
    for (int i = 0; i < x->rank; i++)
        if (i != axis && ind->dims[i] > x->dims[i])
            return tc_err(ctx, err, RD_E_INVAL, "indices dim %d = %lld exceeds the data's %lld", i,
                          (long long)ind->dims[i], (long long)x->dims[i]);
    return RD_OK;
}

/* Calls visit(offset in data, element number in indices) for every index element, after checking it. */
typedef void (*elements_visit)(void *user, int64_t data_off, int64_t i);

static rd_status walk_elements(const sim_op_ctx *ctx, const rd_tensor *ind, int axis, elements_visit visit, void *user,
                               rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    int r = x->rank;
    int64_t str[RD_MAX_RANK], c[RD_MAX_RANK] = {0}, n = rd_tensor_numel(ind);
    tc_strides(r, x->dims, str);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = 0;
        rd_status st = fetch_index(ctx, ind, i, x->dims[axis], &v, err);
        if (st != RD_OK)
            return st;
        int64_t off = 0;
        for (int k = 0; k < r; k++)
            off += (k == axis ? v : c[k]) * str[k];
        visit(user, off, i);
        for (int k = r - 1; k >= 0; k--) {
            if (++c[k] < ind->dims[k])
                break;
            c[k] = 0;
        }
    }
    return RD_OK;
}

struct gather_el_ctx {
    const char *src;
    char *dst;
    size_t es;
};

static void gather_el_visit(void *user, int64_t off, int64_t i)
{
    struct gather_el_ctx *g = user;
    memcpy(g->dst + (size_t)i * g->es, g->src + (size_t)off * g->es, g->es);
}

static rd_status gather_elements_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct tc_axis_params *p = ctx->params;
    rd_status st;
    int axis;
    if ((st = tc_check_movable(ctx, 0, err)) != RD_OK || (st = check_indices_dtype(ctx, 1, err)) != RD_OK ||
        (st = sim_norm_axis(ctx, p->axis, ctx->in[0]->rank, &axis, err)) != RD_OK ||
        (st = check_elements_shape(ctx, 1, axis, err)) != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], ctx->in[0]->dtype, ctx->in[1]->rank, ctx->in[1]->dims);
    return RD_OK;
}

static rd_status gather_elements_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct tc_axis_params *p = ctx->params;
    int axis;
    rd_status st = sim_norm_axis(ctx, p->axis, ctx->in[0]->rank, &axis, err);
    if (st != RD_OK)
        return st;
    struct gather_el_ctx g = {ctx->in[0]->data, ctx->out[0].data, tc_elem_size(ctx->in[0]->dtype)};
    return walk_elements(ctx, ctx->in[1], axis, gather_el_visit, &g, err);
}

const sim_op_def op_gather_elements = {.name = "GatherElements",
                                       .domain = "",
                                       .since = 11,
                                       .min_in = 2,
                                       .max_in = 2,
                                       .min_out = 1,
                                       .max_out = 1,
                                       .params_size = sizeof(struct tc_axis_params),
                                       .parse = tc_axis0_parse,
                                       .infer = gather_elements_infer,
                                       .eval = {[SIM_PREC_F32] = gather_elements_eval}};

enum scatter_reduce { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

struct scatter_params {
    int64_t axis;
    enum scatter_reduce red;
};

static rd_status scatter_parse(const sim_node *n, void *params, rd_error *err)
{
    struct scatter_params *p = params;
    p->axis = sim_attr_int(n, "axis", 0);
    const char *red = sim_attr_str(n, "reduction", "none");
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    for (int i = 0; i < 5; i++)
        if (strcmp(red, names[i]) == 0) {
            p->red = (enum scatter_reduce)i;
            return RD_OK;
        }
    return tc_node_err(n, err, RD_E_PARSE, "unknown reduction '%s'", red);
}

/* Combines an update into an existing element; integers go through double (exact below 2^53). */
static void reduce_into(rd_tensor *o, int64_t at, const rd_tensor *u, int64_t ui, enum scatter_reduce red, size_t es)
{
    if (red == RED_NONE) {
        memcpy((char *)o->data + (size_t)at * es, (const char *)u->data + (size_t)ui * es, es);
        return;
    }
    double a = sim_get_f64(o, at), b = sim_get_f64(u, ui), r = a;
    switch (red) {
    case RED_ADD:
        r = a + b;
        break;
    case RED_MUL:
        r = a * b;
        break;
    case RED_MAX:
        r = b > a ? b : a;
        break;
    case RED_MIN:
        r = b < a ? b : a;
        break;
    case RED_NONE:
        break;
    }
    sim_set_f64(o, at, r);
}

static rd_status scatter_check(sim_op_ctx *ctx, int *axis, rd_error *err)
{
    const struct scatter_params *p = ctx->params;
    rd_status st;
    if ((st = tc_check_movable(ctx, 0, err)) != RD_OK || (st = check_indices_dtype(ctx, 1, err)) != RD_OK)
        return st;
    if (!tc_has(ctx, 2) || ctx->in[2]->dtype != ctx->in[0]->dtype)
        return tc_err(ctx, err, RD_E_INVAL, "updates must have the data's dtype");
    if (p->red != RED_NONE && ctx->in[0]->dtype == RD_DT_BOOL)
        return sim_err_dtype(ctx, 0, err);
    return axis ? sim_norm_axis(ctx, p->axis, ctx->in[0]->rank, axis, err) : RD_OK;
}

static rd_status scatter_elements_infer(sim_op_ctx *ctx, rd_error *err)
{
    int axis;
    rd_status st = scatter_check(ctx, &axis, err);
    if (st != RD_OK || (st = check_elements_shape(ctx, 1, axis, err)) != RD_OK)
        return st;
    const rd_tensor *ind = ctx->in[1], *u = ctx->in[2];
    if (u->rank != ind->rank || memcmp(u->dims, ind->dims, (size_t)ind->rank * sizeof *ind->dims) != 0)
        return tc_err(ctx, err, RD_E_INVAL, "updates and indices differ in shape");
    sim_set_shape(&ctx->out[0], ctx->in[0]->dtype, ctx->in[0]->rank, ctx->in[0]->dims);
    return RD_OK;
}

struct scatter_el_ctx {
    rd_tensor *out;
    const rd_tensor *upd;
    enum scatter_reduce red;
    size_t es;
};

static void scatter_el_visit(void *user, int64_t off, int64_t i)
{
    struct scatter_el_ctx *s = user;
    reduce_into(s->out, off, s->upd, i, s->red, s->es);
}

static rd_status scatter_elements_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct scatter_params *p = ctx->params;
    int axis;
    rd_status st = sim_norm_axis(ctx, p->axis, ctx->in[0]->rank, &axis, err);
    if (st != RD_OK)
        return st;
    size_t n = rd_tensor_nbytes(ctx->in[0]);
    if (n)
        memcpy(ctx->out[0].data, ctx->in[0]->data, n);
    /* a bad index stops the walk with an error; the partly written output is then discarded */
    struct scatter_el_ctx s = {&ctx->out[0], ctx->in[2], p->red, tc_elem_size(ctx->in[0]->dtype)};
    return walk_elements(ctx, ctx->in[1], axis, scatter_el_visit, &s, err);
}

const sim_op_def op_scatter_elements = {.name = "ScatterElements",
                                        .domain = "",
                                        .since = 11,
                                        .min_in = 3,
                                        .max_in = 3,
                                        .min_out = 1,
                                        .max_out = 1,
                                        .params_size = sizeof(struct scatter_params),
                                        .parse = scatter_parse,
                                        .infer = scatter_elements_infer,
                                        .eval = {[SIM_PREC_F32] = scatter_elements_eval}};

const sim_op_def op_scatter = {.name = "Scatter",
                               .domain = "",
                               .since = 9,
                               .min_in = 3,
                               .max_in = 3,
                               .min_out = 1,
                               .max_out = 1,
                               .params_size = sizeof(struct scatter_params),
                               .parse = scatter_parse,
                               .infer = scatter_elements_infer,
                               .eval = {[SIM_PREC_F32] = scatter_elements_eval},
                               .until = 11};

/* ---------------------------------------------------------------------------------------------------
 * GatherND (11, 12 batch_dims, 13) and ScatterND (11, 16 reduction, 18 min/max)
 */

struct gathernd_params {
    int64_t batch_dims;
};

static rd_status gathernd_parse(const sim_node *n, void *params, rd_error *err)
{
    (void)err;
    struct gathernd_params *p = params;
    p->batch_dims = n->opset >= 12 ? sim_attr_int(n, "batch_dims", 0) : 0;
    return RD_OK;
}

/* Shape facts shared by GatherND and ScatterND: batch count, tuples per batch, tuple length m, slice size. */
struct nd_plan {
    int b, m;
    int64_t batches, tuples, slice;
};

static rd_status nd_plan_make(const sim_op_ctx *ctx, int64_t batch_dims, struct nd_plan *pl, rd_error *err)
{
    const rd_tensor *x = ctx->in[0], *ind = ctx->in[1];
    if (ind->rank < 1)
        return tc_err(ctx, err, RD_E_INVAL, "indices must have rank >= 1");
    if (batch_dims < 0 || batch_dims >= ind->rank || batch_dims >= x->rank)
        return tc_err(ctx, err, RD_E_INVAL, "batch_dims %lld is out of range", (long long)batch_dims);
    pl->b = (int)batch_dims;
    int64_t m = ind->dims[ind->rank - 1];
    if (m < 1 || m > x->rank - pl->b)
        return tc_err(ctx, err, RD_E_INVAL, "index tuples of length %lld for data of rank %d", (long long)m, x->rank);
    pl->m = (int)m;
    pl->batches = 1;
    for (int i = 0; i < pl->b; i++) {
        if (ind->dims[i] != x->dims[i])
            return tc_err(ctx, err, RD_E_INVAL, "batch dim %d differs: %lld vs %lld", i, (long long)ind->dims[i],
                          (long long)x->dims[i]);
        pl->batches *= x->dims[i];
    }
    pl->tuples = 1;
    for (int i = pl->b; i < ind->rank - 1; i++)
        pl->tuples *= ind->dims[i];
    pl->slice = 1;
    for (int i = pl->b + pl->m; i < x->rank; i++)
        pl->slice *= x->dims[i];
    return RD_OK;
}

/* Element offset inside one batch of data for tuple t of batch bt (indices checked). */
static rd_status nd_offset(const sim_op_ctx *ctx, const struct nd_plan *pl, int64_t bt, int64_t t, int64_t *off,
                           rd_error *err)
{
    const rd_tensor *x = ctx->in[0], *ind = ctx->in[1];
    int64_t base = (bt * pl->tuples + t) * pl->m, o = 0;
    for (int k = 0; k < pl->m; k++) {
        int64_t v = 0;
        rd_status st = fetch_index(ctx, ind, base + k, x->dims[pl->b + k], &v, err);
        if (st != RD_OK)
            return st;
        o = o * x->dims[pl->b + k] + v;
    }
    *off = o * pl->slice;
    return RD_OK;
}

static rd_status gathernd_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct gathernd_params *p = ctx->params;
    rd_status st;
    struct nd_plan pl;
    if ((st = tc_check_movable(ctx, 0, err)) != RD_OK || (st = check_indices_dtype(ctx, 1, err)) != RD_OK ||
        (st = nd_plan_make(ctx, p->batch_dims, &pl, err)) != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0], *ind = ctx->in[1];
    int r = ind->rank - 1 + x->rank - pl.b - pl.m;
    if (r > RD_MAX_RANK)
        return tc_err(ctx, err, RD_E_LIMIT, "output rank %d exceeds %d", r, RD_MAX_RANK);
    int64_t d[RD_MAX_RANK];
    int j = 0;
    for (int i = 0; i < ind->rank - 1; i++)
        d[j++] = ind->dims[i];
    for (int i = pl.b + pl.m; i < x->rank; i++)
        d[j++] = x->dims[i];
    if ((st = tc_check_shape(ctx, x->dtype, r, d, err)) != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], x->dtype, r, d);
    return RD_OK;
}

static rd_status gathernd_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct gathernd_params *p = ctx->params;
    struct nd_plan pl;
    rd_status st = nd_plan_make(ctx, p->batch_dims, &pl, err);
    if (st != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0];
    size_t es = tc_elem_size(x->dtype), row = (size_t)pl.slice * es;
    int64_t per_batch = rd_tensor_numel(x) / (pl.batches ? pl.batches : 1);
    char *dst = ctx->out[0].data;
    for (int64_t bt = 0; bt < pl.batches; bt++)
        for (int64_t t = 0; t < pl.tuples; t++) {
            int64_t off;
            if ((st = nd_offset(ctx, &pl, bt, t, &off, err)) != RD_OK)
                return st;
            if (row)
                memcpy(dst, (const char *)x->data + (size_t)(bt * per_batch + off) * es, row);
            dst += row;
        }
    return RD_OK;
}

const sim_op_def op_gather_nd = {.name = "GatherND",
                                 .domain = "",
                                 .since = 11,
                                 .min_in = 2,
                                 .max_in = 2,
                                 .min_out = 1,
                                 .max_out = 1,
                                 .params_size = sizeof(struct gathernd_params),
                                 .parse = gathernd_parse,
                                 .infer = gathernd_infer,
                                 .eval = {[SIM_PREC_F32] = gathernd_eval}};

static rd_status scatternd_infer(sim_op_ctx *ctx, rd_error *err)
{
    rd_status st;
    struct nd_plan pl;
    if ((st = scatter_check(ctx, NULL, err)) != RD_OK || (st = nd_plan_make(ctx, 0, &pl, err)) != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0], *ind = ctx->in[1], *u = ctx->in[2];
    /* updates shape = indices.shape[:-1] + data.shape[m:] */
    int r = ind->rank - 1 + x->rank - pl.m;
    bool ok = u->rank == r;
    for (int i = 0; ok && i < ind->rank - 1; i++)
        ok = u->dims[i] == ind->dims[i];
    for (int i = 0; ok && i < x->rank - pl.m; i++)
        ok = u->dims[ind->rank - 1 + i] == x->dims[pl.m + i];
    if (!ok)
        return tc_err(ctx, err, RD_E_INVAL, "updates shape does not match indices and data");
    sim_set_shape(&ctx->out[0], x->dtype, x->rank, x->dims);
    return RD_OK;
}

static rd_status scatternd_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct scatter_params *p = ctx->params;
    struct nd_plan pl;
    rd_status st = nd_plan_make(ctx, 0, &pl, err);
    if (st != RD_OK)
        return st;
    size_t n = rd_tensor_nbytes(ctx->in[0]), es = tc_elem_size(ctx->in[0]->dtype);
    if (n)
        memcpy(ctx->out[0].data, ctx->in[0]->data, n);
    for (int64_t t = 0; t < pl.tuples; t++) {
        int64_t off;
        if ((st = nd_offset(ctx, &pl, 0, t, &off, err)) != RD_OK)
            return st;
        for (int64_t j = 0; j < pl.slice; j++)
            reduce_into(&ctx->out[0], off + j, ctx->in[2], t * pl.slice + j, p->red, es);
    }
    return RD_OK;
}

const sim_op_def op_scatter_nd = {.name = "ScatterND",
                                  .domain = "",
                                  .since = 11,
                                  .min_in = 3,
                                  .max_in = 3,
                                  .min_out = 1,
                                  .max_out = 1,
                                  .params_size = sizeof(struct scatter_params),
                                  .parse = scatter_parse,
                                  .infer = scatternd_infer,
                                  .eval = {[SIM_PREC_F32] = scatternd_eval}};

/* ---------------------------------------------------------------------------------------------------
 * TopK (1 k attribute, 10 k input, 11 largest/sorted, 24 ...): values and int64 indices along an axis.
 * Equal values keep the lower index first; output is always sorted (allowed when sorted=0).
 */

struct topk_params {
    int64_t axis, k;
    bool largest;
};

static rd_status topk_parse(const sim_node *n, void *params, rd_error *err)
{
    struct topk_params *p = params;
    p->axis = sim_attr_int(n, "axis", -1);
    p->largest = n->opset < 11 || sim_attr_int(n, "largest", 1) != 0;
    if (n->opset < 10) {
        if (!sim_attr_find(n, "k"))
            return tc_node_err(n, err, RD_E_PARSE, "attribute 'k' is required");
        p->k = sim_attr_int(n, "k", 0);
    }
    return RD_OK;
}

/* The axis and K; sim_defer while K is unknown (never at eval: infer ran on the same inputs). */
static rd_status topk_k(sim_op_ctx *ctx, int *axis, int64_t *k, rd_error *err)
{
    const struct topk_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    rd_status st = sim_norm_axis(ctx, p->axis, x->rank, axis, err);
    if (st != RD_OK)
        return st;
    if (ctx->opset >= 10) {
        if (!tc_has(ctx, 1))
            return tc_err(ctx, err, RD_E_INVAL, "input K is required");
        if (!ctx->in[1]->data)
            return sim_defer(ctx);
        if (rd_tensor_numel(ctx->in[1]) != 1)
            return tc_err(ctx, err, RD_E_INVAL, "K must hold one value");
        *k = sim_get_int(ctx->in[1], 0);
    } else {
        *k = p->k;
    }
    int64_t dim = x->rank ? x->dims[*axis] : 1;
    if (*k < 0 || *k > dim)
        return tc_err(ctx, err, RD_E_INVAL, "k = %lld is outside 0..%lld", (long long)*k, (long long)dim);
    return RD_OK;
}

static rd_status topk_infer(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    const rd_dtype_info *info = rd_dtype_get(x->dtype);
    if (tc_elem_size(x->dtype) == 0 || x->dtype == RD_DT_BOOL || !info->supported)
        return sim_err_dtype(ctx, 0, err);
    int axis;
    int64_t k;
    rd_status st = topk_k(ctx, &axis, &k, err);
    if (st != RD_OK || ctx->deferred)
        return st;
    int64_t d[RD_MAX_RANK];
    memcpy(d, x->dims, sizeof d);
    d[axis] = k;
    sim_set_shape(&ctx->out[0], x->dtype, x->rank, d);
    if (ctx->n_out > 1 && ctx->out_present[1])
        sim_set_shape(&ctx->out[1], RD_DT_I64, x->rank, d);
    return RD_OK;
}

/* a goes before b: larger (or smaller) value first, NaN first when largest, ties by lower index. */
static bool topk_before(const double *v, int64_t a, int64_t b, bool largest)
{
    double va = v[a], vb = v[b];
    bool na = isnan(va), nb = isnan(vb);
    if (na || nb) {
        if (na && nb)
            return a < b;
        return largest ? na : nb;
    }
    if (va != vb)
        return largest ? va > vb : va < vb;
    return a < b;
}

/* Stable bottom-up merge sort of idx[0..n) by topk_before, tmp as work space. */
static void topk_sort(const double *v, int64_t *idx, int64_t *tmp, int64_t n, bool largest)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                tmp[o++] = topk_before(v, idx[j], idx[i], largest) ? idx[j++] : idx[i++];
            while (i < mid)
                tmp[o++] = idx[i++];
            while (j < hi)
                tmp[o++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

static rd_status topk_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct topk_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    int axis;
    int64_t k;
    rd_status st = topk_k(ctx, &axis, &k, err);
    if (st != RD_OK)
        return st;
    int64_t dim = x->rank ? x->dims[axis] : 1, outer = 1, inner = 1;
    for (int i = 0; i < axis; i++)
        outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++)
        inner *= x->dims[i];
    if (k == 0 || outer * inner == 0)
        return RD_OK;
    char *scr = sim_scratch_get(ctx, (size_t)dim * (sizeof(double) + 2 * sizeof(int64_t)), err);
    if (!scr)
        return err ? err->code : RD_E_NOMEM;
    double *v = (double *)scr;
    int64_t *idx = (int64_t *)(v + dim), *tmp = idx + dim;
    size_t es = tc_elem_size(x->dtype);
    bool want_idx = ctx->n_out > 1 && ctx->out_present[1];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * dim * inner + in;
            for (int64_t j = 0; j < dim; j++) {
                v[j] = sim_get_f64(x, base + j * inner);
                idx[j] = j;
            }
            topk_sort(v, idx, tmp, dim, p->largest);
            int64_t obase = o * k * inner + in;
            for (int64_t j = 0; j < k; j++) {
                memcpy((char *)ctx->out[0].data + (size_t)(obase + j * inner) * es,
                       (const char *)x->data + (size_t)(base + idx[j] * inner) * es, es);
                if (want_idx)
                    ((int64_t *)ctx->out[1].data)[obase + j * inner] = idx[j];
            }
        }
    return RD_OK;
}

const sim_op_def op_topk = {.name = "TopK",
                            .domain = "",
                            .since = 1,
                            .min_in = 1,
                            .max_in = 2,
                            .min_out = 1,
                            .max_out = 2,
                            .params_size = sizeof(struct topk_params),
                            .parse = topk_parse,
                            .infer = topk_infer,
                            .eval = {[SIM_PREC_F32] = topk_eval},
                            .same_from = 10};

/* ---------------------------------------------------------------------------------------------------
 * NonZero (9, 13): [rank, count] int64 coordinates of the non-zero elements in row-major order.
 */

static int64_t nonzero_count(const rd_tensor *x)
{
    int64_t n = rd_tensor_numel(x), c = 0;
    for (int64_t i = 0; i < n; i++)
        c += sim_get_f64(x, i) != 0.0;
    return c;
}

static rd_status nonzero_infer(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    if (tc_elem_size(x->dtype) == 0)
        return sim_err_dtype(ctx, 0, err);
    if (!x->data && rd_tensor_numel(x) > 0)
        return sim_defer(ctx);
    int64_t d[2] = {x->rank, nonzero_count(x)};
    sim_set_shape(&ctx->out[0], RD_DT_I64, 2, d);
    return RD_OK;
}

static rd_status nonzero_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const rd_tensor *x = ctx->in[0];
    int64_t n = rd_tensor_numel(x), cnt = ctx->out[0].dims[1], c[RD_MAX_RANK] = {0}, j = 0;
    int64_t *o = ctx->out[0].data;
    for (int64_t i = 0; i < n && j < cnt; i++) {
        if (sim_get_f64(x, i) != 0.0) {
            for (int k = 0; k < x->rank; k++)
                o[k * cnt + j] = c[k];
            j++;
        }
        for (int k = x->rank - 1; k >= 0; k--) {
            if (++c[k] < x->dims[k])
                break;
            c[k] = 0;
        }
    }
    return RD_OK;
}

const sim_op_def op_nonzero = {.name = "NonZero",
                               .domain = "",
                               .since = 9,
                               .min_in = 1,
                               .max_in = 1,
                               .min_out = 1,
                               .max_out = 1,
                               .infer = nonzero_infer,
                               .eval = {[SIM_PREC_F32] = nonzero_eval},
                               .qrule = RD_OP_Q_NONE};

/*
 * op_tensor_layout.c: operators that rearrange elements without arithmetic: Concat, Split, Slice,
 * Transpose, Expand, Tile, Pad, DepthToSpace, SpaceToDepth. All work on any fixed-size dtype by bytes
 * (Pad converts its constant value to the data's dtype once).
 */
#include "tensor_common.h"

/* ---------------------------------------------------------------------------------------------------
 * Concat (4, 11 negative axis, 13)
 */

static rd_status concat_parse(const sim_node *n, void *params, rd_error *err)
{
    struct tc_axis_params *p = params;
    if (!sim_attr_find(n, "axis"))
        return tc_node_err(n, err, RD_E_PARSE, "attribute 'axis' is required");
    p->axis = sim_attr_int(n, "axis", 0);
    return RD_OK;
}

static rd_status concat_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct tc_axis_params *p = ctx->params;
    const rd_tensor *x0 = ctx->in[0];
    rd_status st;
    int axis;
    if ((st = sim_norm_axis(ctx, p->axis, x0->rank, &axis, err)) != RD_OK)
        return st;
    if (x0->rank == 0)
        return tc_err(ctx, err, RD_E_INVAL, "inputs must have rank >= 1");
    int64_t d[RD_MAX_RANK];
    memcpy(d, x0->dims, sizeof d);
    d[axis] = 0;
    for (int k = 0; k < ctx->n_in; k++) {
        if ((st = tc_check_movable(ctx, k, err)) != RD_OK)
            return st;
        const rd_tensor *x = ctx->in[k];
        if (x->dtype != x0->dtype)
            return tc_err(ctx, err, RD_E_INVAL, "input %d is %s, input 0 is %s", k, rd_dtype_name(x->dtype),
                          rd_dtype_name(x0->dtype));
        if (x->rank != x0->rank)
            return tc_err(ctx, err, RD_E_INVAL, "input %d has rank %d, input 0 rank %d", k, x->rank, x0->rank);
        for (int i = 0; i < x->rank; i++)
            if (i != axis && x->dims[i] != x0->dims[i])
                return tc_err(ctx, err, RD_E_INVAL, "input %d has dim %d = %lld, input 0 has %lld", k, i,
                              (long long)x->dims[i], (long long)x0->dims[i]);
        d[axis] += x->dims[axis];
    }
    if ((st = tc_check_shape(ctx, x0->dtype, x0->rank, d, err)) != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], x0->dtype, x0->rank, d);
    return RD_OK;
}

static rd_status concat_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct tc_axis_params *p = ctx->params;
    rd_tensor *o = &ctx->out[0];
    int axis;
    rd_status st = sim_norm_axis(ctx, p->axis, o->rank, &axis, err);
    if (st != RD_OK)
        return st;
    size_t es = tc_elem_size(o->dtype);
    int64_t outer = 1;
    for (int i = 0; i < axis; i++)
        outer *= o->dims[i];
    char *dst = o->data;
    for (int64_t j = 0; j < outer; j++) {
        for (int k = 0; k < ctx->n_in; k++) {
            const rd_tensor *x = ctx->in[k];
            size_t chunk = (size_t)(rd_tensor_numel(x) / (outer ? outer : 1)) * es;
            if (!chunk)
                continue;
            memcpy(dst, (const char *)x->data + (size_t)j * chunk, chunk);
            dst += chunk;
        }
    }
    return RD_OK;
}

const sim_op_def op_concat = {.name = "Concat",
                              .domain = "",
                              .since = 4,
                              .min_in = 1,
                              .max_in = 4096,
                              .min_out = 1,
                              .max_out = 1,
                              .params_size = sizeof(struct tc_axis_params),
                              .parse = concat_parse,
                              .infer = concat_infer,
                              .eval = {[SIM_PREC_F32] = concat_eval},
                              .qrule = RD_OP_Q_UNION,
                              .prune = RD_OP_PRUNE_CONCAT,
                              .same_from = 4};

/* ---------------------------------------------------------------------------------------------------
 * Split (2, 11, 13 split as input, 18 num_outputs with a smaller last chunk)
 */

#define SPLIT_MAX_ATTR 4096

struct split_params {
    int64_t axis;
    int64_t num_outputs;  /* 0 when absent */
    size_t n_split;       /* split attribute (before 13) */
    const int64_t *split; /* owned by the node */
};

static rd_status split_parse(const sim_node *n, void *params, rd_error *err)
{
    struct split_params *p = params;
    p->axis = sim_attr_int(n, "axis", 0);
    if (n->opset < 13)
        p->split = sim_attr_ints(n, "split", &p->n_split);
    if (n->opset >= 18) {
        p->num_outputs = sim_attr_int(n, "num_outputs", 0);
        if (sim_attr_find(n, "num_outputs") && p->num_outputs != n->n_out)
            return tc_node_err(n, err, RD_E_INVAL, "num_outputs %lld differs from the %d outputs",
                               (long long)p->num_outputs, n->n_out);
    }
    return RD_OK;
}

/* Sizes along the axis of each output; sim_defer when the split input is not known yet (never at eval: infer ran on the
 * same inputs). */
static rd_status split_sizes(sim_op_ctx *ctx, int *axis, int64_t *sizes, rd_error *err)
{
    const struct split_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    rd_status st = sim_norm_axis(ctx, p->axis, x->rank, axis, err);
    if (st != RD_OK)
        return st;
    int64_t dim = x->rank ? x->dims[*axis] : 0;
    int n_out = ctx->n_out;
    size_t n = 0;
    if (tc_has(ctx, 1) && ctx->opset >= 13) {
        if (!ctx->in[1]->data && rd_tensor_numel(ctx->in[1]) > 0)
            return sim_defer(ctx);
        if ((st = tc_read_ints(ctx, 1, sizes, (size_t)n_out, &n, err)) != RD_OK)
            return st;
    } else if (p->split) {
        if (p->n_split > (size_t)n_out)
            return tc_err(ctx, err, RD_E_INVAL, "split has %zu sizes for %d outputs", p->n_split, n_out);
        n = p->n_split;
        memcpy(sizes, p->split, n * sizeof *sizes);
    }
    if (n > 0) {
        if (n != (size_t)n_out)
            return tc_err(ctx, err, RD_E_INVAL, "split has %zu sizes for %d outputs", n, n_out);
        int64_t sum = 0;
        for (size_t i = 0; i < n; i++) {
            if (sizes[i] < 0 || sizes[i] > dim)
                return tc_err(ctx, err, RD_E_INVAL, "split size %lld is outside 0..%lld", (long long)sizes[i],
                              (long long)dim);
            sum += sizes[i];
        }
        if (sum != dim)
            return tc_err(ctx, err, RD_E_INVAL, "split sizes sum to %lld, the axis has %lld", (long long)sum,
                          (long long)dim);
        return RD_OK;
    }
    int64_t chunk = (dim + n_out - 1) / n_out;
    if (ctx->opset < 18 && dim % n_out != 0)
        return tc_err(ctx, err, RD_E_INVAL, "axis of size %lld does not split into %d equal parts", (long long)dim,
                      n_out);
    int64_t left = dim;
    for (int i = 0; i < n_out; i++) {
        sizes[i] = left < chunk ? left : chunk;
        left -= sizes[i];
    }
    return RD_OK;
}

static rd_status split_infer(sim_op_ctx *ctx, rd_error *err)
{
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0];
    int64_t *sizes = sim_malloc_array((size_t)ctx->n_out, sizeof *sizes);
    if (!sizes)
        return tc_err(ctx, err, RD_E_NOMEM, "out of memory");
    int axis;
    st = split_sizes(ctx, &axis, sizes, err);
    if (st == RD_OK && !ctx->deferred) {
        for (int k = 0; k < ctx->n_out; k++) {
            int64_t d[RD_MAX_RANK];
            memcpy(d, x->dims, sizeof d);
            d[axis] = sizes[k];
            if (ctx->out_present[k])
                sim_set_shape(&ctx->out[k], x->dtype, x->rank, d);
        }
    }
    free(sizes);
    return st;
}

static rd_status split_eval(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    int64_t *sizes = sim_scratch_get(ctx, (size_t)ctx->n_out * sizeof *sizes, err);
    if (!sizes)
        return err ? err->code : RD_E_NOMEM;
    int axis;
    rd_status st = split_sizes(ctx, &axis, sizes, err);
    if (st != RD_OK)
        return st;
    size_t es = tc_elem_size(x->dtype);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++)
        outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++)
        inner *= x->dims[i];
    size_t row = (size_t)(x->dims[axis] * inner) * es;
    size_t off = 0;
    for (int k = 0; k < ctx->n_out; k++) {
        size_t chunk = (size_t)(sizes[k] * inner) * es;
        if (ctx->out_present[k] && chunk)
            for (int64_t j = 0; j < outer; j++)
                memcpy((char *)ctx->out[k].data + (size_t)j * chunk, (const char *)x->data + (size_t)j * row + off,
                       chunk);
        off += chunk;
    }
    return RD_OK;
}

const sim_op_def op_split = {.name = "Split",
                             .domain = "",
                             .since = 2,
                             .min_in = 1,
                             .max_in = 2,
                             .min_out = 1,
                             .max_out = 4096,
                             .params_size = sizeof(struct split_params),
                             .parse = split_parse,
                             .infer = split_infer,
                             .eval = {[SIM_PREC_F32] = split_eval},
                             .attrs_to_inputs_at = 13,
                             .attrs_to_inputs = {"split"}};

/* ---------------------------------------------------------------------------------------------------
 * Slice (1 attributes, 10 inputs, 11 negative steps and axes, 13)
 */

struct slice_params {
    bool attrs; /* opset < 10 */
    size_t n_starts, n_ends, n_axes;
    const int64_t *starts, *ends, *axes; /* owned by the node */
};

static rd_status slice_parse(const sim_node *n, void *params, rd_error *err)
{
    struct slice_params *p = params;
    p->attrs = n->opset < 10;
    if (!p->attrs)
        return RD_OK;
    p->starts = sim_attr_ints(n, "starts", &p->n_starts);
    p->ends = sim_attr_ints(n, "ends", &p->n_ends);
    p->axes = sim_attr_ints(n, "axes", &p->n_axes);
    if (!p->starts || !p->ends || p->n_starts != p->n_ends || (p->axes && p->n_axes != p->n_starts))
        return tc_node_err(n, err, RD_E_PARSE, "starts, ends and axes must be given with equal lengths");
    if (p->n_starts > RD_MAX_RANK)
        return tc_node_err(n, err, RD_E_INVAL, "%zu sliced axes, at most %d allowed", p->n_starts, RD_MAX_RANK);
    return RD_OK;
}

/* Output dims, first element and per-axis step of the slice; sim_defer when inputs are unknown (never at
   eval: infer ran on the same inputs). */
static rd_status slice_plan(sim_op_ctx *ctx, int64_t *odims, int64_t *first, int64_t *steps, rd_error *err)
{
    const struct slice_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    int64_t st_[RD_MAX_RANK], en_[RD_MAX_RANK], ax_[RD_MAX_RANK], sp_[RD_MAX_RANK];
    size_t n, ne, na, ns;
    rd_status st;
    if (p->attrs) {
        n = ne = p->n_starts;
        memcpy(st_, p->starts, n * sizeof *st_);
        memcpy(en_, p->ends, n * sizeof *en_);
        na = p->axes ? n : 0;
        if (na)
            memcpy(ax_, p->axes, n * sizeof *ax_);
        ns = 0;
    } else {
        for (int k = 1; k < 5; k++)
            if (tc_has(ctx, k) && !ctx->in[k]->data && rd_tensor_numel(ctx->in[k]) > 0)
                return sim_defer(ctx);
        if (!tc_has(ctx, 1) || !tc_has(ctx, 2))
            return tc_err(ctx, err, RD_E_INVAL, "starts and ends are required");
        if ((st = tc_read_ints(ctx, 1, st_, RD_MAX_RANK, &n, err)) != RD_OK ||
            (st = tc_read_ints(ctx, 2, en_, RD_MAX_RANK, &ne, err)) != RD_OK)
            return st;
        na = ns = 0;
        if (tc_has(ctx, 3) && (st = tc_read_ints(ctx, 3, ax_, RD_MAX_RANK, &na, err)) != RD_OK)
            return st;
        if (tc_has(ctx, 4) && (st = tc_read_ints(ctx, 4, sp_, RD_MAX_RANK, &ns, err)) != RD_OK)
            return st;
        if (ne != n || (tc_has(ctx, 3) && na != n) || (tc_has(ctx, 4) && ns != n))
            return tc_err(ctx, err, RD_E_INVAL, "starts, ends, axes and steps differ in length");
    }
    for (int i = 0; i < x->rank; i++) {
        odims[i] = x->dims[i];
        first[i] = 0;
        steps[i] = 1;
    }
    bool seen[RD_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++) {
        int a = (int)i;
        if (na && (st = sim_norm_axis(ctx, ax_[i], x->rank, &a, err)) != RD_OK)
            return st;
        if (a >= x->rank)
            return tc_err(ctx, err, RD_E_INVAL, "%zu starts for a rank-%d input", n, x->rank);
        if (seen[a])
            return tc_err(ctx, err, RD_E_INVAL, "axis %d is sliced twice", a);
        seen[a] = true;
        int64_t step = ns ? sp_[i] : 1;
        if (step == 0)
            return tc_err(ctx, err, RD_E_INVAL, "step for axis %d is zero", a);
        int64_t d = x->dims[a];
        int64_t s = st_[i], e = en_[i];
        if (s < 0)
            s += d;
        if (e < 0)
            e += d;
        int64_t cnt;
        if (step > 0) {
            s = s < 0 ? 0 : s > d ? d : s;
            e = e < 0 ? 0 : e > d ? d : e;
            cnt = e > s ? (e - s - 1) / step + 1 : 0;
        } else {
            s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            /* -step may overflow for INT64_MIN; one element is taken when the stride exceeds the span */
            cnt = s > e ? (step < -d ? 1 : (s - e - 1) / -step + 1) : 0;
        }
        odims[a] = cnt;
        first[a] = cnt ? s : 0;
        steps[a] = cnt > 1 ? step : 1;
    }
    return RD_OK;
}

static rd_status slice_infer(sim_op_ctx *ctx, rd_error *err)
{
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    int64_t d[RD_MAX_RANK], f[RD_MAX_RANK], s[RD_MAX_RANK];
    if ((st = slice_plan(ctx, d, f, s, err)) != RD_OK || ctx->deferred)
        return st;
    sim_set_shape(&ctx->out[0], ctx->in[0]->dtype, ctx->in[0]->rank, d);
    return RD_OK;
}

static rd_status slice_eval(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    int64_t d[RD_MAX_RANK], f[RD_MAX_RANK], s[RD_MAX_RANK], str[RD_MAX_RANK];
    rd_status st = slice_plan(ctx, d, f, s, err);
    if (st != RD_OK)
        return st;
    if (rd_tensor_numel(&ctx->out[0]) == 0)
        return RD_OK;
    tc_strides(x->rank, x->dims, str);
    int64_t base = 0;
    for (int i = 0; i < x->rank; i++) {
        base += f[i] * str[i];
        s[i] *= str[i];
    }
    tc_view_copy(tc_elem_size(x->dtype), x->rank, d, x->data, base, s, ctx->out[0].data);
    return RD_OK;
}

const sim_op_def op_slice = {.name = "Slice",
                             .domain = "",
                             .since = 1,
                             .min_in = 1,
                             .max_in = 5,
                             .min_out = 1,
                             .max_out = 1,
                             .params_size = sizeof(struct slice_params),
                             .parse = slice_parse,
                             .infer = slice_infer,
                             .eval = {[SIM_PREC_F32] = slice_eval},
                             .attrs_to_inputs_at = 10,
                             .attrs_to_inputs = {"starts", "ends", "axes"}};

/* ---------------------------------------------------------------------------------------------------
 * Transpose (1, 13, 21): perm defaults to reversing the axes.
 */

struct transpose_params {
    bool has_perm;
    size_t n_perm;
    int64_t perm[RD_MAX_RANK];
};

static rd_status transpose_parse(const sim_node *n, void *params, rd_error *err)
{
    struct transpose_params *p = params;
    const int64_t *perm = sim_attr_ints(n, "perm", &p->n_perm);
    p->has_perm = perm != NULL;
    if (p->n_perm > RD_MAX_RANK)
        return tc_node_err(n, err, RD_E_INVAL, "perm has %zu entries, at most %d allowed", p->n_perm, RD_MAX_RANK);
    if (p->n_perm)
        memcpy(p->perm, perm, p->n_perm * sizeof *perm);
    return RD_OK;
}

/* The permutation for a rank, validated. */
static rd_status transpose_perm(sim_op_ctx *ctx, int rank, int *perm, rd_error *err)
{
    const struct transpose_params *p = ctx->params;
    if (!p->has_perm) {
        for (int i = 0; i < rank; i++)
            perm[i] = rank - 1 - i;
        return RD_OK;
    }
    if ((int)p->n_perm != rank)
        return tc_err(ctx, err, RD_E_INVAL, "perm has %zu entries for a rank-%d input", p->n_perm, rank);
    bool used[RD_MAX_RANK] = {false};
    for (int i = 0; i < rank; i++) {
        int a;
        rd_status st = sim_norm_axis(ctx, p->perm[i], rank, &a, err);
        if (st != RD_OK)
            return st;
        if (used[a])
            return tc_err(ctx, err, RD_E_INVAL, "perm repeats axis %d", a);
        used[a] = true;
        perm[i] = a;
    }
    return RD_OK;
}

static rd_status transpose_infer(sim_op_ctx *ctx, rd_error *err)
{
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0];
    int perm[RD_MAX_RANK];
    if ((st = transpose_perm(ctx, x->rank, perm, err)) != RD_OK)
        return st;
    int64_t d[RD_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        d[i] = x->dims[perm[i]];
    sim_set_shape(&ctx->out[0], x->dtype, x->rank, d);
    return RD_OK;
}

static rd_status transpose_eval(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    int perm[RD_MAX_RANK];
    rd_status st = transpose_perm(ctx, x->rank, perm, err);
    if (st != RD_OK)
        return st;
    int64_t str[RD_MAX_RANK], step[RD_MAX_RANK];
    tc_strides(x->rank, x->dims, str);
    for (int i = 0; i < x->rank; i++)
        step[i] = str[perm[i]];
    if (rd_tensor_numel(x) > 0)
        tc_view_copy(tc_elem_size(x->dtype), x->rank, ctx->out[0].dims, x->data, 0, step, ctx->out[0].data);
    return RD_OK;
}

const sim_op_def op_transpose = {.name = "Transpose",
                                 .domain = "",
                                 .since = 1,
                                 .min_in = 1,
                                 .max_in = 1,
                                 .min_out = 1,
                                 .max_out = 1,
                                 .params_size = sizeof(struct transpose_params),
                                 .parse = transpose_parse,
                                 .infer = transpose_infer,
                                 .eval = {[SIM_PREC_F32] = transpose_eval},
                                 .qrule = RD_OP_Q_PASS};

/* ---------------------------------------------------------------------------------------------------
 * Expand (8, 13): bidirectional broadcast of the input to a shape.
 */

static rd_status expand_infer(sim_op_ctx *ctx, rd_error *err)
{
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0];
    if (!ctx->in[1]->data && rd_tensor_numel(ctx->in[1]) > 0)
        return sim_defer(ctx);
    int64_t shape[RD_MAX_RANK], d[RD_MAX_RANK];
    size_t n;
    if ((st = tc_read_ints(ctx, 1, shape, RD_MAX_RANK, &n, err)) != RD_OK)
        return st;
    for (size_t i = 0; i < n; i++)
        if (shape[i] < 0)
            return tc_err(ctx, err, RD_E_INVAL, "shape[%zu] = %lld is negative", i, (long long)shape[i]);
    int r;
    if (sim_broadcast_shape(x->rank, x->dims, (int)n, shape, &r, d) != RD_OK)
        return tc_err(ctx, err, RD_E_INVAL, "input shape does not broadcast to the requested shape");
    if ((st = tc_check_shape(ctx, x->dtype, r, d, err)) != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], x->dtype, r, d);
    return RD_OK;
}

static rd_status expand_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const rd_tensor *x = ctx->in[0];
    const rd_tensor *o = &ctx->out[0];
    if (rd_tensor_numel(o) == 0)
        return RD_OK;
    int64_t str[RD_MAX_RANK], step[RD_MAX_RANK];
    tc_strides(x->rank, x->dims, str);
    int lead = o->rank - x->rank;
    for (int i = 0; i < o->rank; i++) {
        int j = i - lead;
        step[i] = j < 0 || x->dims[j] == 1 ? 0 : str[j];
    }
    tc_view_copy(tc_elem_size(x->dtype), o->rank, o->dims, x->data, 0, step, o->data);
    return RD_OK;
}

const sim_op_def op_expand = {.name = "Expand",
                              .domain = "",
                              .since = 8,
                              .min_in = 2,
                              .max_in = 2,
                              .min_out = 1,
                              .max_out = 1,
                              .infer = expand_infer,
                              .eval = {[SIM_PREC_F32] = expand_eval}};

/* ---------------------------------------------------------------------------------------------------
 * Tile (6, 13): out dim i = dim i * repeats[i]. Seen as a rank-2r view [rep0, d0, rep1, d1, ...].
 */

static rd_status tile_infer(sim_op_ctx *ctx, rd_error *err)
{
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0];
    if (!ctx->in[1]->data && rd_tensor_numel(ctx->in[1]) > 0)
        return sim_defer(ctx);
    int64_t rep[RD_MAX_RANK], d[RD_MAX_RANK];
    size_t n;
    if ((st = tc_read_ints(ctx, 1, rep, RD_MAX_RANK, &n, err)) != RD_OK)
        return st;
    if ((int)n != x->rank)
        return tc_err(ctx, err, RD_E_INVAL, "repeats has %zu values for a rank-%d input", n, x->rank);
    for (int i = 0; i < x->rank; i++) {
        if (rep[i] < 0)
            return tc_err(ctx, err, RD_E_INVAL, "repeats[%d] = %lld is negative", i, (long long)rep[i]);
        if (x->dims[i] && rep[i] > INT64_MAX / x->dims[i])
            return tc_err(ctx, err, RD_E_LIMIT, "repeats[%d] = %lld overflows", i, (long long)rep[i]);
        d[i] = x->dims[i] * rep[i];
    }
    if ((st = tc_check_shape(ctx, x->dtype, x->rank, d, err)) != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], x->dtype, x->rank, d);
    return RD_OK;
}

static rd_status tile_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const rd_tensor *x = ctx->in[0];
    const rd_tensor *o = &ctx->out[0];
    if (rd_tensor_numel(o) == 0)
        return RD_OK;
    int64_t str[RD_MAX_RANK], vd[TC_MAX_VIEW_RANK], vs[TC_MAX_VIEW_RANK];
    tc_strides(x->rank, x->dims, str);
    for (int i = 0; i < x->rank; i++) {
        vd[2 * i] = o->dims[i] / x->dims[i];
        vs[2 * i] = 0;
        vd[2 * i + 1] = x->dims[i];
        vs[2 * i + 1] = str[i];
    }
    tc_view_copy(tc_elem_size(x->dtype), 2 * x->rank, vd, x->data, 0, vs, o->data);
    return RD_OK;
}

const sim_op_def op_tile = {.name = "Tile",
                            .domain = "",
                            .since = 6,
                            .min_in = 2,
                            .max_in = 2,
                            .min_out = 1,
                            .max_out = 1,
                            .infer = tile_infer,
                            .eval = {[SIM_PREC_F32] = tile_eval}};

/* ---------------------------------------------------------------------------------------------------
 * Pad (2 attributes, 11 inputs, 13, 18 axes, 19 wrap, 21). Negative pads crop, before the mode pads what
 * is left (so wrap and reflect fold over the cropped window).
 */

enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

struct pad_params {
    enum pad_mode mode;
    bool attrs; /* opset < 11: pads and value are attributes */
    float value;
    size_t n_pads;
    const int64_t *pads; /* owned by the node */
};

static rd_status pad_parse(const sim_node *n, void *params, rd_error *err)
{
    struct pad_params *p = params;
    const char *mode = sim_attr_str(n, "mode", "constant");
    if (strcmp(mode, "constant") == 0)
        p->mode = PAD_CONSTANT;
    else if (strcmp(mode, "reflect") == 0)
        p->mode = PAD_REFLECT;
    else if (strcmp(mode, "edge") == 0)
        p->mode = PAD_EDGE;
    else if (strcmp(mode, "wrap") == 0 && n->opset >= 19)
        p->mode = PAD_WRAP;
    else
        return tc_node_err(n, err, RD_E_PARSE, "unknown mode '%s'", mode);
    p->attrs = n->opset < 11;
    if (p->attrs) {
        p->pads = sim_attr_ints(n, n->opset < 2 ? "paddings" : "pads", &p->n_pads);
        if (!p->pads)
            return tc_node_err(n, err, RD_E_PARSE, "attribute 'pads' is required");
        p->value = sim_attr_float(n, "value", 0.0f);
    }
    return RD_OK;
}

/* Begin and end pads per axis; sim_defer while pads or axes are unknown (never at eval: infer ran on the same inputs).
 */
static rd_status pad_amounts(sim_op_ctx *ctx, int64_t *pb, int64_t *pe, rd_error *err)
{
    const struct pad_params *p = ctx->params;
    int rank = ctx->in[0]->rank;
    int64_t pads[2 * RD_MAX_RANK], axes[RD_MAX_RANK];
    size_t n, na;
    rd_status st;
    if (p->attrs) {
        if (p->n_pads > 2 * RD_MAX_RANK)
            return tc_err(ctx, err, RD_E_INVAL, "%zu pads, at most %d allowed", p->n_pads, 2 * RD_MAX_RANK);
        n = p->n_pads;
        memcpy(pads, p->pads, n * sizeof *pads);
    } else {
        if (!tc_has(ctx, 1))
            return tc_err(ctx, err, RD_E_INVAL, "pads input is required");
        for (int k = 1; k < 4; k++)
            if (tc_has(ctx, k) && !ctx->in[k]->data && rd_tensor_numel(ctx->in[k]) > 0)
                return sim_defer(ctx);
        if ((st = tc_read_ints(ctx, 1, pads, 2 * RD_MAX_RANK, &n, err)) != RD_OK)
            return st;
    }
    if (tc_has(ctx, 3) && ctx->opset >= 18) {
        if ((st = tc_read_ints(ctx, 3, axes, RD_MAX_RANK, &na, err)) != RD_OK)
            return st;
    } else {
        na = (size_t)rank;
        for (int i = 0; i < rank; i++)
            axes[i] = i;
    }
    if (n != 2 * na)
        return tc_err(ctx, err, RD_E_INVAL, "%zu pads for %zu axes (need twice as many)", n, na);
    for (int i = 0; i < rank; i++)
        pb[i] = pe[i] = 0;
    bool seen[RD_MAX_RANK] = {false};
    for (size_t i = 0; i < na; i++) {
        int a;
        if ((st = sim_norm_axis(ctx, axes[i], rank, &a, err)) != RD_OK)
            return st;
        if (seen[a])
            return tc_err(ctx, err, RD_E_INVAL, "axis %d appears twice", a);
        seen[a] = true;
        int64_t d = ctx->in[0]->dims[a];
        if (pads[i] < -d || pads[na + i] < -d || pads[i] > INT64_MAX / 4 || pads[na + i] > INT64_MAX / 4 ||
            d + pads[i] + pads[na + i] < 0)
            return tc_err(ctx, err, RD_E_INVAL, "pads %lld and %lld do not fit axis %d of size %lld",
                          (long long)pads[i], (long long)pads[na + i], a, (long long)d);
        pb[a] = pads[i];
        pe[a] = pads[na + i];
    }
    return RD_OK;
}

static rd_status pad_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct pad_params *p = ctx->params;
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0];
    int64_t pb[RD_MAX_RANK], pe[RD_MAX_RANK], d[RD_MAX_RANK];
    if ((st = pad_amounts(ctx, pb, pe, err)) != RD_OK || ctx->deferred)
        return st;
    for (int i = 0; i < x->rank; i++) {
        d[i] = x->dims[i] + pb[i] + pe[i];
        int64_t kept = x->dims[i] - (pb[i] < 0 ? -pb[i] : 0) - (pe[i] < 0 ? -pe[i] : 0);
        if (p->mode != PAD_CONSTANT && kept <= 0 && d[i] > 0)
            return tc_err(ctx, err, RD_E_INVAL, "cannot pad axis %d in this mode: nothing is left after cropping", i);
    }
    if (tc_has(ctx, 2) && ctx->in[2]->dtype != x->dtype)
        return tc_err(ctx, err, RD_E_INVAL, "constant_value is %s, the data %s", rd_dtype_name(ctx->in[2]->dtype),
                      rd_dtype_name(x->dtype));
    if ((st = tc_check_shape(ctx, x->dtype, x->rank, d, err)) != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], x->dtype, x->rank, d);
    return RD_OK;
}

/* Source index along an axis of size d for output index o (o - pad_begin outside [0, d) is folded by
 * the mode); -1 selects the constant. */
static int64_t pad_source(enum pad_mode mode, int64_t c, int64_t d)
{
    if (c >= 0 && c < d)
        return c;
    switch (mode) {
    case PAD_CONSTANT:
        return -1;
    case PAD_EDGE:
        return c < 0 ? 0 : d - 1;
    case PAD_WRAP:
        return ((c % d) + d) % d;
    case PAD_REFLECT:
        if (d == 1)
            return 0;
        else {
            int64_t period = 2 * (d - 1), m = ((c % period) + period) % period;
            return m < d ? m : period - m;
        }
    }
    return -1;
}

static rd_status pad_eval(sim_op_ctx *ctx, rd_error *err)
{
    const struct pad_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    rd_tensor *o = &ctx->out[0];
    int64_t pb[RD_MAX_RANK], pe[RD_MAX_RANK], str[RD_MAX_RANK];
    rd_status st = pad_amounts(ctx, pb, pe, err);
    if (st != RD_OK)
        return st;
    int64_t total = rd_tensor_numel(o);
    if (total == 0)
        return RD_OK;
    size_t es = tc_elem_size(x->dtype);
    int r = x->rank;
    /* per-axis source maps (element offsets, -1 for the constant) in one scratch block */
    int64_t sum = 0;
    for (int i = 0; i < r; i++)
        sum += o->dims[i];
    int64_t *maps = sim_scratch_get(ctx, (size_t)(sum + 1) * sizeof *maps + 16, err);
    if (!maps)
        return err ? err->code : RD_E_NOMEM;
    tc_strides(r, x->dims, str);
    int64_t *m[RD_MAX_RANK];
    int64_t at = 0;
    for (int i = 0; i < r; i++) {
        /* negative pads crop first; the mode then pads the cropped window (ONNX reference, ORT) */
        int64_t cb = pb[i] < 0 ? -pb[i] : 0, ce = pe[i] < 0 ? -pe[i] : 0, kept = x->dims[i] - cb - ce;
        m[i] = maps + at;
        for (int64_t j = 0; j < o->dims[i]; j++) {
            int64_t s = kept > 0 ? pad_source(p->mode, j - (pb[i] > 0 ? pb[i] : 0), kept) : -1;
            m[i][j] = s < 0 ? -1 : (s + cb) * str[i];
        }
        at += o->dims[i];
    }
    unsigned char cval[16] = {0};
    if (p->mode == PAD_CONSTANT) {
        rd_tensor cv = {.dtype = x->dtype, .rank = 0, .data = cval};
        if (tc_has(ctx, 2) && rd_tensor_numel(ctx->in[2]) > 0)
            memcpy(cval, ctx->in[2]->data, es);
        else if (p->attrs)
            sim_set_f64(&cv, 0, p->value);
    }
    int64_t idx[RD_MAX_RANK] = {0};
    char *dst = o->data;
    const char *src = x->data;
    for (int64_t e = 0; e < total; e++) {
        int64_t off = 0;
        bool konst = false;
        for (int i = 0; i < r; i++) {
            int64_t s = m[i][idx[i]];
            if (s < 0) {
                konst = true;
                break;
            }
            off += s;
        }
        memcpy(dst + e * (int64_t)es, konst ? (const char *)cval : src + off * (int64_t)es, es);
        for (int i = r - 1; i >= 0; i--) {
            if (++idx[i] < o->dims[i])
                break;
            idx[i] = 0;
        }
    }
    return RD_OK;
}

const sim_op_def op_pad = {.name = "Pad",
                           .domain = "",
                           .since = 2,
                           .min_in = 1,
                           .max_in = 4,
                           .min_out = 1,
                           .max_out = 1,
                           .params_size = sizeof(struct pad_params),
                           .parse = pad_parse,
                           .infer = pad_infer,
                           .eval = {[SIM_PREC_F32] = pad_eval},
                           .same_from = 11};

/* ---------------------------------------------------------------------------------------------------
 * DepthToSpace (1, 11 mode DCR/CRD, 13) and SpaceToDepth (1, 13): 4-D, as 6-D transposed views.
 */

struct d2s_params {
    int64_t block;
    bool crd;
};

static rd_status d2s_parse(const sim_node *n, void *params, rd_error *err)
{
    struct d2s_params *p = params;
    p->block = sim_attr_int(n, "blocksize", 0);
    if (p->block <= 0 || p->block > 1 << 20)
        return tc_node_err(n, err, RD_E_PARSE, "blocksize %lld must be positive", (long long)p->block);
    const char *mode = sim_attr_str(n, "mode", "DCR");
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return tc_node_err(n, err, RD_E_PARSE, "unknown mode '%s'", mode);
    p->crd = strcmp(mode, "CRD") == 0;
    return RD_OK;
}

static rd_status d2s_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct d2s_params *p = ctx->params;
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0];
    int64_t b = p->block;
    if (x->rank != 4)
        return tc_err(ctx, err, RD_E_INVAL, "input must be 4-D, got rank %d", x->rank);
    int64_t d[4];
    if (strcmp(ctx->node->op_type, "DepthToSpace") == 0) {
        if (x->dims[1] % (b * b) != 0)
            return tc_err(ctx, err, RD_E_INVAL, "channels %lld are not a multiple of blocksize^2 = %lld",
                          (long long)x->dims[1], (long long)(b * b));
        int64_t dd[4] = {x->dims[0], x->dims[1] / (b * b), x->dims[2] * b, x->dims[3] * b};
        memcpy(d, dd, sizeof d);
    } else {
        if (x->dims[2] % b != 0 || x->dims[3] % b != 0)
            return tc_err(ctx, err, RD_E_INVAL, "height %lld and width %lld must be multiples of blocksize %lld",
                          (long long)x->dims[2], (long long)x->dims[3], (long long)b);
        int64_t dd[4] = {x->dims[0], x->dims[1] * b * b, x->dims[2] / b, x->dims[3] / b};
        memcpy(d, dd, sizeof d);
    }
    if ((st = tc_check_shape(ctx, x->dtype, 4, d, err)) != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], x->dtype, 4, d);
    return RD_OK;
}

static rd_status d2s_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const struct d2s_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    if (rd_tensor_numel(x) == 0)
        return RD_OK;
    int64_t b = p->block, n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
    int64_t in6[6], str[6], od[6], os[6];
    int perm[6];
    if (strcmp(ctx->node->op_type, "DepthToSpace") == 0) {
        int64_t cc = c / (b * b);
        if (p->crd) { /* [n, cc, b1, b2, h, w] -> [n, cc, h, b1, w, b2] */
            int64_t v[6] = {n, cc, b, b, h, w};
            int pp[6] = {0, 1, 4, 2, 5, 3};
            memcpy(in6, v, sizeof v);
            memcpy(perm, pp, sizeof pp);
        } else { /* DCR: [n, b1, b2, cc, h, w] -> [n, cc, h, b1, w, b2] */
            int64_t v[6] = {n, b, b, cc, h, w};
            int pp[6] = {0, 3, 4, 1, 5, 2};
            memcpy(in6, v, sizeof v);
            memcpy(perm, pp, sizeof pp);
        }
    } else { /* [n, c, h/b, b1, w/b, b2] -> [n, b1, b2, c, h/b, w/b] */
        int64_t v[6] = {n, c, h / b, b, w / b, b};
        int pp[6] = {0, 3, 5, 1, 2, 4};
        memcpy(in6, v, sizeof v);
        memcpy(perm, pp, sizeof pp);
    }
    tc_strides(6, in6, str);
    for (int i = 0; i < 6; i++) {
        od[i] = in6[perm[i]];
        os[i] = str[perm[i]];
    }
    tc_view_copy(tc_elem_size(x->dtype), 6, od, x->data, 0, os, ctx->out[0].data);
    return RD_OK;
}

const sim_op_def op_depth_to_space = {.name = "DepthToSpace",
                                      .domain = "",
                                      .since = 1,
                                      .min_in = 1,
                                      .max_in = 1,
                                      .min_out = 1,
                                      .max_out = 1,
                                      .params_size = sizeof(struct d2s_params),
                                      .parse = d2s_parse,
                                      .infer = d2s_infer,
                                      .eval = {[SIM_PREC_F32] = d2s_eval},
                                      .qrule = RD_OP_Q_PASS};

const sim_op_def op_space_to_depth = {.name = "SpaceToDepth",
                                      .domain = "",
                                      .since = 1,
                                      .min_in = 1,
                                      .max_in = 1,
                                      .min_out = 1,
                                      .max_out = 1,
                                      .params_size = sizeof(struct d2s_params),
                                      .parse = d2s_parse,
                                      .infer = d2s_infer,
                                      .eval = {[SIM_PREC_F32] = d2s_eval},
                                      .qrule = RD_OP_Q_PASS};

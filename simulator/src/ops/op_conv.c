/*
 * op_conv.c: Conv (1..22) and ConvTranspose (1..22), float32, 1-D to 6-D kernels, groups, dilations,
 * pads and auto_pad. Geometry is resolved in infer; eval hands it to the kernels in conv_f32.c (tiles over the
 * run's threads, every region reported to ctx->tile_done for fusion) whose oracles are kernels/ref_conv.c.
 */
#include "nn_spatial.h"
#include "../quant.h"
#include "linear_shapes.h"
#include "../kernels/conv_f32.h"

#include <limits.h>

struct conv_params {
    nn_spatial sp;
    int64_t group;                      /* >= 1 */
    int n_out_pad, n_out_shape;         /* ConvTranspose attribute lengths */
    int64_t out_pad[CONV_MAX_SP];       /* output_padding, >= 0 */
    int64_t out_shape[CONV_MAX_SP + 2]; /* output_shape as given (spatial, or with N and C) */
};

/* Reads the optional int list attribute `name` into out: at most max values, each in [0, limit]. */
static rd_status parse_bounded_ints(const sim_node *n, const char *name, size_t max, int64_t limit, int64_t *out,
                                    int *n_out, rd_error *err)
{
    size_t cnt = 0;
    const int64_t *v = sim_attr_ints(n, name, &cnt);
    if (cnt > max)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): %s has %zu values", n->name, n->op_type, name, cnt);
    for (size_t i = 0; i < cnt; i++) {
        if (v[i] < 0 || v[i] > limit)
            return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): %s[%zu] = %lld is out of range", n->name, n->op_type,
                             name, i, (long long)v[i]);
        out[i] = v[i];
    }
    *n_out = (int)cnt;
    return RD_OK;
}

static rd_status conv_parse(const sim_node *n, void *params, rd_error *err)
{
    struct conv_params *p = params;
    rd_status st = nn_spatial_parse(n, &p->sp, err);
    if (st != RD_OK)
        return st;
    p->group = sim_attr_int(n, "group", 1);
    if (p->group < 1)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): group %lld must be >= 1", n->name, n->op_type,
                         (long long)p->group);
    st = parse_bounded_ints(n, "output_padding", CONV_MAX_SP, (int64_t)1 << 30, p->out_pad, &p->n_out_pad, err);
    if (st != RD_OK)
        return st;
    return parse_bounded_ints(n, "output_shape", CONV_MAX_SP + 2, (int64_t)1 << 40, p->out_shape, &p->n_out_shape, err);
}

/* Checks the X, W and B shapes shared by both ops; sets nsp and the channel fields of g. */
static rd_status check_operands(const sim_op_ctx *ctx, bool transpose, conv_geom *g, rd_error *err)
{
    const struct conv_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0], *w = ctx->in[1], *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    const char *nm = ctx->node->name, *op = ctx->node->op_type;
    for (int i = 0; i < 3 && i < ctx->n_in; i++)
        if (ctx->in[i] && ctx->in[i]->dtype != RD_DT_F32)
            return sim_err_dtype(ctx, i, err);
    if (x->rank < 3 || x->rank > CONV_MAX_SP + 2)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input X has rank %d, expected 3..%d", nm, op, x->rank,
                         CONV_MAX_SP + 2);
    if (w->rank != x->rank)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): W has rank %d, X has rank %d", nm, op, w->rank, x->rank);
    memset(g, 0, sizeof *g);
    g->nsp = x->rank - 2;
    g->batch = x->dims[0];
    g->in_c = x->dims[1];
    g->group = p->group;
    const int64_t wc = transpose ? w->dims[0] : w->dims[1] * p->group;
    g->out_c = transpose ? w->dims[1] * p->group : w->dims[0];
    if (g->in_c % p->group || g->out_c % p->group || wc != g->in_c)
        return rd_errorf(
            err, RD_E_INVAL,
            "node '%s' (%s): X has %lld channels, W is %lldx%lld... with group %lld: channels do not match", nm, op,
            (long long)g->in_c, (long long)w->dims[0], (long long)w->dims[1], (long long)p->group);
    if (p->sp.n_kernel) {
        if (p->sp.n_kernel != g->nsp)
            return nn_check_len(ctx, "kernel_shape", p->sp.n_kernel, g->nsp, err);
        for (int d = 0; d < g->nsp; d++)
            if (p->sp.kernel[d] != w->dims[d + 2])
                return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): kernel_shape[%d] = %lld but W has %lld", nm, op, d,
                                 (long long)p->sp.kernel[d], (long long)w->dims[d + 2]);
    }
    for (int d = 0; d < g->nsp; d++)
        if (w->dims[d + 2] < 1)
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): W has an empty kernel dim %d", nm, op, d);
    if (b && (b->rank != 1 || b->dims[0] != g->out_c))
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): B must be a vector of %lld values", nm, op,
                         (long long)g->out_c);
    return RD_OK;
}

/* BLAS takes int sizes: every matrix dim the kernels pass must fit. */
static rd_status check_blas_dims(const sim_op_ctx *ctx, const conv_geom *g, rd_error *err)
{
    const int64_t ksz = conv_prod(g->k, g->nsp);
    const int64_t dims[] = {conv_prod(g->in, g->nsp), conv_prod(g->out, g->nsp), g->in_c * ksz, g->out_c * ksz};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (dims[i] > INT_MAX)
            return rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): a matrix dimension of %lld exceeds the BLAS limit",
                             ctx->node->name, ctx->node->op_type, (long long)dims[i]);
    return RD_OK;
}

rd_status sim_conv_geometry(const sim_op_ctx *ctx, conv_geom *g, rd_error *err)
{
    const struct conv_params *p = ctx->params;
    rd_status st = check_operands(ctx, false, g, err);
    if (st == RD_OK)
        st = nn_window_geom(ctx, &p->sp, g->nsp, ctx->in[0]->dims + 2, ctx->in[1]->dims + 2, false, g, err);
    if (st == RD_OK)
        st = check_blas_dims(ctx, g, err);
    return st;
}

static void set_out_shape(sim_op_ctx *ctx, const conv_geom *g)
{
    int64_t dims[RD_MAX_RANK];
    dims[0] = g->batch;
    dims[1] = g->out_c;
    for (int d = 0; d < g->nsp; d++)
        dims[d + 2] = g->out[d];
    sim_set_shape(&ctx->out[0], RD_DT_F32, g->nsp + 2, dims);
}

static rd_status conv_infer(sim_op_ctx *ctx, rd_error *err)
{
    conv_geom g;
    rd_status st = sim_conv_geometry(ctx, &g, err);
    if (st == RD_OK)
        set_out_shape(ctx, &g);
    return st;
}

/* Scratch of every worker of the pool (plan->scratch bytes each); NULL with nothing to allocate. */
static rd_status plan_scratch(sim_op_ctx *ctx, const conv_plan *plan, float **out, rd_error *err)
{
    *out = NULL;
    if (!plan->scratch)
        return RD_OK;
    size_t bytes;
    if (!sim_mul_ok(plan->scratch, (size_t)sim_pool_width(ctx->pool), &bytes))
        return rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): scratch size overflows", ctx->node->name,
                         ctx->node->op_type);
    *out = sim_scratch_get(ctx, bytes, err);
    return *out ? RD_OK : err ? err->code : RD_E_NOMEM;
}

static rd_status conv_eval(sim_op_ctx *ctx, rd_error *err)
{
    conv_geom g;
    rd_status st = sim_conv_geometry(ctx, &g, err);
    if (st != RD_OK)
        return st;
    if (!ctx->out[0].data)
        return RD_OK;
    conv_plan plan;
    conv_plan_f32(&g, &plan);
    float *scratch = NULL;
    st = plan_scratch(ctx, &plan, &scratch, err);
    if (st != RD_OK)
        return st;
    const rd_tensor *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    conv_f32(&g, &plan, ctx->in[0]->data, ctx->in[1]->data, b ? b->data : NULL, ctx->out[0].data, scratch, ctx->pool,
             ctx->tile_done, ctx->tile_user);
    return RD_OK;
}

static int64_t conv_macs(const sim_op_ctx *ctx)
{
    const rd_tensor *w = ctx->in[1];
    const rd_tensor *y = &ctx->out[0];
    if (y->rank < 3 || w->rank != y->rank)
        return 0;
    /* each output element: (C/group) * prod(k) products, and W holds exactly M * that many */
    int64_t per_out = 1;
    for (int d = 1; d < w->rank; d++)
        per_out = sim_count_mul(per_out, w->dims[d]);
    int64_t out_pos = y->dims[0];
    for (int d = 2; d < y->rank; d++)
        out_pos = sim_count_mul(out_pos, y->dims[d]);
    return sim_count_mul(sim_count_mul(out_pos, y->dims[1]), per_out);
}

/*
 * ConvTranspose output size, per spatial dim (ONNX):
 *   natural = stride * (in - 1) + output_padding + (k - 1) * dilation + 1
 *   explicit pads: out = natural - pad_begin - pad_end
 *   output_shape given: out = output_shape, total pad = natural - out, split as auto_pad says
 *   SAME_*: out = in * stride, split likewise (SAME_UPPER puts the odd one at the end)
 */
rd_status sim_conv_transpose_geometry(const sim_op_ctx *ctx, conv_geom *g, rd_error *err)
{
    const struct conv_params *p = ctx->params;
    const char *nm = ctx->node->name, *op = ctx->node->op_type;
    rd_status st = check_operands(ctx, true, g, err);
    if (st != RD_OK)
        return st;
    const int nsp = g->nsp;
    const nn_spatial *s = &p->sp;
    st = nn_check_len(ctx, "strides", s->n_strides, nsp, err);
    if (st == RD_OK)
        st = nn_check_len(ctx, "dilations", s->n_dil, nsp, err);
    if (st == RD_OK)
        st = nn_check_len(ctx, "output_padding", p->n_out_pad, nsp, err);
    if (st == RD_OK && s->n_pads != 0 && s->n_pads != 2 * nsp)
        st = rd_errorf(err, RD_E_INVAL, "node '%s' (%s): pads has %d values for %d spatial dims", nm, op, s->n_pads,
                       nsp);
    if (st == RD_OK && p->n_out_shape != 0 && p->n_out_shape != nsp && p->n_out_shape != nsp + 2)
        st = rd_errorf(err, RD_E_INVAL, "node '%s' (%s): output_shape has %d values for %d spatial dims", nm, op,
                       p->n_out_shape, nsp);
    if (st != RD_OK)
        return st;
    const int64_t *want = p->n_out_shape ? p->out_shape + (p->n_out_shape - nsp) : NULL;
    for (int d = 0; d < nsp; d++) {
        const int64_t in = ctx->in[0]->dims[d + 2];
        g->in[d] = in;
        g->k[d] = ctx->in[1]->dims[d + 2];
        g->stride[d] = s->n_strides ? s->strides[d] : 1;
        g->dil[d] = s->n_dil ? s->dil[d] : 1;
        const int64_t opad = p->n_out_pad ? p->out_pad[d] : 0;
        const int64_t natural = g->stride[d] * (in - 1) + opad + (g->k[d] - 1) * g->dil[d] + 1;
        int64_t out, pb = 0, pe = 0;
        if (want || s->auto_pad == NN_PAD_SAME_UPPER || s->auto_pad == NN_PAD_SAME_LOWER) {
            out = want ? want[d] : in * g->stride[d];
            /* floor division as in the ONNX reference: a negative total (output_shape larger than
             * natural) leaves the begin pad at 0 and grows the end, like output_padding */
            const int64_t total = natural - out;
            const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
            if (s->auto_pad == NN_PAD_SAME_UPPER) {
                pb = half;
                pe = total - half;
            } else {
                pe = half;
                pb = total - half;
            }
        } else if (s->auto_pad == NN_PAD_VALID) {
            out = natural;
        } else {
            pb = s->n_pads ? s->pads[d] : 0;
            pe = s->n_pads ? s->pads[nsp + d] : 0;
            out = natural - pb - pe;
        }
        if (out < 0 || (out == 0 && in > 0))
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): spatial dim %d: output size %lld is not positive", nm,
                             op, d, (long long)out);
        g->out[d] = out;
        g->pad[d] = pb;
        g->pad_end[d] = pe;
    }
    return check_blas_dims(ctx, g, err);
}

static rd_status convt_infer(sim_op_ctx *ctx, rd_error *err)
{
    conv_geom g;
    rd_status st = sim_conv_transpose_geometry(ctx, &g, err);
    if (st == RD_OK)
        set_out_shape(ctx, &g);
    return st;
}

static rd_status convt_eval(sim_op_ctx *ctx, rd_error *err)
{
    conv_geom g;
    rd_status st = sim_conv_transpose_geometry(ctx, &g, err);
    if (st != RD_OK)
        return st;
    if (!ctx->out[0].data)
        return RD_OK;
    if (!ctx->in[0]->data) /* empty input: the output is the bias */
        g.batch = 0;
    conv_plan plan;
    conv_transpose_plan_f32(&g, &plan);
    float *scratch = NULL;
    st = plan_scratch(ctx, &plan, &scratch, err);
    if (st != RD_OK)
        return st;
    const rd_tensor *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    conv_transpose_f32(&g, &plan, ctx->in[0]->data, ctx->in[1]->data, b ? b->data : NULL, ctx->out[0].data, scratch,
                       ctx->pool, ctx->tile_done, ctx->tile_user);
    return RD_OK;
}

static int64_t convt_macs(const sim_op_ctx *ctx)
{
    const rd_tensor *x = ctx->in[0], *w = ctx->in[1];
    if (x->rank < 3 || w->rank != x->rank)
        return 0;
    /* every input element meets (M/group) * prod(k) weights */
    int64_t per_in = 1;
    for (int d = 1; d < w->rank; d++)
        per_in = sim_count_mul(per_in, w->dims[d]);
    return sim_count_mul(rd_tensor_numel(x), per_in);
}

const sim_op_def op_conv = {
    .name = "Conv",
    .domain = "",
    .since = 1,
    .min_in = 2,
    .max_in = 3,
    .min_out = 1,
    .max_out = 1,
    .params_size = sizeof(struct conv_params),
    .parse = conv_parse,
    .infer = conv_infer,
    .eval = {[SIM_PREC_F32] = conv_eval},
    .macs = conv_macs,
    .flags = SIM_OP_TILE_DONE | SIM_OP_FULL_WRITE,
    .eval_i8 = sim_q8_conv_eval,
    .eval_i16 = sim_q16_conv_eval,
    .weight_in = 1,
    .weight = RD_OP_WEIGHT_CONV,
    .prune = RD_OP_PRUNE_WEIGHTS,
    .fuse = SIM_FUSE_CONV,
};

const sim_op_def op_conv_transpose = {
    .name = "ConvTranspose",
    .domain = "",
    .since = 1,
    .min_in = 2,
    .max_in = 3,
    .min_out = 1,
    .max_out = 1,
    .params_size = sizeof(struct conv_params),
    .parse = conv_parse,
    .infer = convt_infer,
    .eval = {[SIM_PREC_F32] = convt_eval},
    .macs = convt_macs,
    .flags = SIM_OP_TILE_DONE,
    .eval_i8 = sim_q8_conv_transpose_eval,
    .eval_i16 = sim_q16_conv_transpose_eval,
    .weight_in = 1,
    .weight = RD_OP_WEIGHT_CONV_T,
    .fuse = SIM_FUSE_DECONV,
};

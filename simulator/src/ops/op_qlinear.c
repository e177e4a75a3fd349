/*
 * op_qlinear.c: integer convolution and matrix products: ConvInteger, MatMulInteger (int32 out),
 * QLinearConv and QLinearMatMul (requantized to the output zero point's dtype).
 *
 * Operands are converted once into int32 scratch with their zero points subtracted (per tensor, or
 * per row of A / per column of B / per output channel of W), then multiplied by the plain integer
 * kernels of kernels/ref_conv_int.c. Requantization: see op_quant.c. Batched MatMul follows numpy
 * (1-D operands promoted and the added dim removed, batch dims broadcast).
 */
#include "../kernels/broadcast.h"
#include "../kernels/qconv.h"
#include "../kernels/ref_conv_int.h"
#include "elem_common.h"

static bool q8(rd_dtype dt)
{
    return dt == RD_DT_U8 || dt == RD_DT_I8;
}

static rd_status need(const sim_op_ctx *ctx, int k, rd_error *err)
{
    if (k < ctx->n_in && ctx->in[k])
        return RD_OK;
    return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input %d is required", ctx->node->name, ctx->node->op_type, k);
}

/* Zero point / scale element for row (or channel) r of count rows: per tensor when it has one element. */
static rd_status per_index_ok(const sim_op_ctx *ctx, const rd_tensor *t, int k, int64_t count, rd_error *err)
{
    if (!t)
        return RD_OK;
    int64_t n = rd_tensor_numel(t);
    if (n == 1 || (t->rank == 1 && n == count))
        return RD_OK;
    return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input %d has %lld elements, expected 1 or %lld", ctx->node->name,
                     ctx->node->op_type, k, (long long)n, (long long)count);
}

static inline int64_t zp_at(const rd_tensor *zp, int64_t r)
{
    if (!zp)
        return 0;
    return ec_ld_i64(zp->data, zp->dtype, rd_tensor_numel(zp) == 1 ? 0 : r);
}

static inline float f_at(const rd_tensor *t, int64_t r)
{
    return (float)ec_ld_f64(t->data, t->dtype, rd_tensor_numel(t) == 1 ? 0 : r);
}

/* ---------------------------------------------------------------------------------------------------
 * MatMulInteger(A, B, a_zp?, b_zp?) and QLinearMatMul(a, as, azp, b, bs, bzp, ys, yzp).
 */

typedef struct mm_geom {
    int64_t m, k, n;
    int brank; /* broadcast batch rank */
    int64_t batch[RD_MAX_RANK];
    int a_brank, b_brank;
    int64_t a_batch[RD_MAX_RANK], b_batch[RD_MAX_RANK];
    int out_rank;
    int64_t out_dims[RD_MAX_RANK];
} mm_geom;

static rd_status mm_geom_make(const sim_op_ctx *ctx, const rd_tensor *a, const rd_tensor *b, mm_geom *g, rd_error *err)
{
    memset(g, 0, sizeof *g);
    if (a->rank < 1 || b->rank < 1)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): operands must have rank >= 1", ctx->node->name,
                         ctx->node->op_type);
    g->m = a->rank == 1 ? 1 : a->dims[a->rank - 2];
    g->k = a->dims[a->rank - 1];
    int64_t kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    g->n = b->rank == 1 ? 1 : b->dims[b->rank - 1];
    if (kb != g->k)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): inner dims differ (%lld vs %lld)", ctx->node->name,
                         ctx->node->op_type, (long long)g->k, (long long)kb);
    g->a_brank = a->rank > 2 ? a->rank - 2 : 0;
    g->b_brank = b->rank > 2 ? b->rank - 2 : 0;
    memcpy(g->a_batch, a->dims, sizeof(int64_t) * (size_t)g->a_brank);
    memcpy(g->b_batch, b->dims, sizeof(int64_t) * (size_t)g->b_brank);
    if (sim_broadcast_shape(g->a_brank, g->a_batch, g->b_brank, g->b_batch, &g->brank, g->batch) != RD_OK)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): batch dims do not broadcast", ctx->node->name,
                         ctx->node->op_type);
    int r = g->brank;
    memcpy(g->out_dims, g->batch, sizeof(int64_t) * (size_t)r);
    if (a->rank > 1)
        g->out_dims[r++] = g->m;
    if (b->rank > 1)
        g->out_dims[r++] = g->n;
    g->out_rank = r;
    return RD_OK;
}

typedef struct mm_run {
    const mm_geom *g;
    const int32_t *a, *b;
    int32_t *y;
} mm_run;

static void mm_row(void *user, int64_t n, const int64_t *off, const int64_t *inner)
{
    const mm_run *s = user;
    const mm_geom *g = s->g;
    for (int64_t j = 0; j < n; j++)
        ref_matmul_int32(g->m, g->k, g->n, s->a + (off[1] + j * inner[1]) * g->m * g->k,
                         s->b + (off[2] + j * inner[2]) * g->k * g->n, s->y + (off[0] + j * inner[0]) * g->m * g->n);
}

/* y (int32, numel of the output) = (A - azp) x (B - bzp), zero points per tensor / row / column. */
static rd_status mm_compute(sim_op_ctx *ctx, const mm_geom *g, const rd_tensor *a, const rd_tensor *azp,
                            const rd_tensor *b, const rd_tensor *bzp, int32_t *y, int32_t *scratch)
{
    int64_t na = rd_tensor_numel(a), nb = rd_tensor_numel(b);
    int32_t *ai = scratch, *bi = scratch + na;
    for (int64_t i = 0; i < na; i++)
        ai[i] = (int32_t)(ec_ld_i64(a->data, a->dtype, i) - zp_at(azp, (i / g->k) % g->m));
    for (int64_t i = 0; i < nb; i++)
        bi[i] = (int32_t)(ec_ld_i64(b->data, b->dtype, i) - zp_at(bzp, i % g->n));
    bc_plan plan;
    int ranks[2] = {g->a_brank, g->b_brank};
    const int64_t *dims[2] = {g->a_batch, g->b_batch};
    bc_plan_broadcast(&plan, g->brank, g->batch, 2, ranks, dims);
    mm_run s = {.g = g, .a = ai, .b = bi, .y = y};
    (void)ctx;
    bc_run(&plan, mm_row, &s);
    return RD_OK;
}

static rd_status mmi_infer(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *a = ctx->in[0], *b = ctx->in[1];
    const rd_tensor *azp = ctx->n_in > 2 ? ctx->in[2] : NULL, *bzp = ctx->n_in > 3 ? ctx->in[3] : NULL;
    if (!q8(a->dtype))
        return sim_err_dtype(ctx, 0, err);
    if (!q8(b->dtype))
        return sim_err_dtype(ctx, 1, err);
    mm_geom g;
    rd_status st = mm_geom_make(ctx, a, b, &g, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, azp, 2, g.m, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, bzp, 3, g.n, err);
    if (st != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], RD_DT_I32, g.out_rank, g.out_dims);
    return RD_OK;
}

static int32_t *int_scratch(sim_op_ctx *ctx, int64_t count, rd_error *err)
{
    size_t bytes;
    if (count < 0 || !sim_mul_ok((size_t)count, sizeof(int32_t), &bytes)) {
        rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): scratch size overflows", ctx->node->name, ctx->node->op_type);
        return NULL;
    }
    return sim_scratch_get(ctx, bytes ? bytes : 4, err);
}

static rd_status mmi_eval(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *a = ctx->in[0], *b = ctx->in[1];
    const rd_tensor *azp = ctx->n_in > 2 ? ctx->in[2] : NULL, *bzp = ctx->n_in > 3 ? ctx->in[3] : NULL;
    mm_geom g;
    rd_status st = mm_geom_make(ctx, a, b, &g, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    int32_t *scr = int_scratch(ctx, rd_tensor_numel(a) + rd_tensor_numel(b), err);
    if (!scr)
        return err ? err->code : RD_E_NOMEM;
    return mm_compute(ctx, &g, a, azp, b, bzp, ctx->out[0].data, scr);
}

const sim_op_def op_matmul_integer = {.name = "MatMulInteger",
                                      .domain = "",
                                      .since = 10,
                                      .min_in = 2,
                                      .max_in = 4,
                                      .min_out = 1,
                                      .max_out = 1,
                                      .infer = mmi_infer,
                                      .eval = {[SIM_PREC_F32] = mmi_eval},
                                      .qrule = RD_OP_Q_NONE};

static rd_status qlmm_infer(sim_op_ctx *ctx, rd_error *err)
{
    for (int k = 0; k < 8; k++) {
        rd_status st = need(ctx, k, err);
        if (st != RD_OK)
            return st;
    }
    const rd_tensor *a = ctx->in[0], *b = ctx->in[3];
    if (!q8(a->dtype))
        return sim_err_dtype(ctx, 0, err);
    if (!q8(b->dtype))
        return sim_err_dtype(ctx, 3, err);
    if (!q8(ctx->in[7]->dtype))
        return sim_err_dtype(ctx, 7, err);
    static const int scales[3] = {1, 4, 6};
    for (int i = 0; i < 3; i++)
        if (ctx->in[scales[i]]->dtype != RD_DT_F32)
            return sim_err_dtype(ctx, scales[i], err);
    mm_geom g;
    rd_status st = mm_geom_make(ctx, a, b, &g, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, ctx->in[1], 1, g.m, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, ctx->in[2], 2, g.m, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, ctx->in[4], 4, g.n, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, ctx->in[5], 5, g.n, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, ctx->in[6], 6, 1, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, ctx->in[7], 7, 1, err);
    if (st != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], ctx->in[7]->dtype, g.out_rank, g.out_dims);
    return RD_OK;
}

static rd_status qlmm_eval(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *a = ctx->in[0], *as = ctx->in[1], *azp = ctx->in[2], *b = ctx->in[3], *bs = ctx->in[4];
    const rd_tensor *bzp = ctx->in[5], *ys = ctx->in[6], *yzp = ctx->in[7];
    rd_tensor *y = &ctx->out[0];
    mm_geom g;
    rd_status st = mm_geom_make(ctx, a, b, &g, err);
    if (st != RD_OK || !y->data)
        return st;
    int64_t ny = rd_tensor_numel(y);
    int32_t *scr = int_scratch(ctx, rd_tensor_numel(a) + rd_tensor_numel(b) + ny, err);
    if (!scr)
        return err ? err->code : RD_E_NOMEM;
    int32_t *acc = scr + rd_tensor_numel(a) + rd_tensor_numel(b);
    mm_compute(ctx, &g, a, azp, b, bzp, acc, scr);
    double lo, hi;
    ec_int_range(y->dtype, &lo, &hi);
    float ysc = f_at(ys, 0);
    int64_t yz = zp_at(yzp, 0);
    for (int64_t i = 0; i < ny; i++) {
        int64_t col = i % g.n, row = (i / g.n) % g.m;
        float mult = f_at(as, row) * f_at(bs, col) / ysc; /* float32, as the reference */
        double v = rint((double)acc[i] * (double)mult) + (double)yz;
        v = v < lo ? lo : v > hi ? hi : v;
        ec_st_i64(y->data, y->dtype, i, (int64_t)(v == v ? v : 0.0));
    }
    return RD_OK;
}

const sim_op_def op_qlinear_matmul = {.name = "QLinearMatMul",
                                      .domain = "",
                                      .since = 10,
                                      .min_in = 8,
                                      .max_in = 8,
                                      .min_out = 1,
                                      .max_out = 1,
                                      .infer = qlmm_infer,
                                      .eval = {[SIM_PREC_F32] = qlmm_eval},
                                      .qrule = RD_OP_Q_NONE};

/* ---------------------------------------------------------------------------------------------------
 * ConvInteger(x, w, x_zp?, w_zp?) and QLinearConv(x, xs, xzp, w, ws, wzp, ys, yzp, B?).
 */

struct qconv_params {
    int auto_pad; /* 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID */
    int64_t group;
    size_t n_k, n_pads, n_strides, n_dil;
    int64_t kernel[3], pads[6], strides[3], dil[3];
};

static rd_status qconv_parse(const sim_node *n, void *params, rd_error *err)
{
    struct qconv_params *p = params;
    const char *ap = sim_attr_str(n, "auto_pad", "NOTSET");
    static const char *const names[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    p->auto_pad = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(ap, names[i]) == 0)
            p->auto_pad = i;
    if (p->auto_pad < 0)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): unknown auto_pad \"%s\"", n->name, n->op_type, ap);
    p->group = sim_attr_int(n, "group", 1);
    if (p->group < 1)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): group %lld must be >= 1", n->name, n->op_type,
                         (long long)p->group);
    struct {
        const char *name;
        int64_t *dst;
        size_t *count, max;
    } lists[] = {{"kernel_shape", p->kernel, &p->n_k, 3},
                 {"pads", p->pads, &p->n_pads, 6},
                 {"strides", p->strides, &p->n_strides, 3},
                 {"dilations", p->dil, &p->n_dil, 3}};
    for (size_t l = 0; l < 4; l++) {
        size_t c;
        const int64_t *v = sim_attr_ints(n, lists[l].name, &c);
        if (c > lists[l].max)
            return rd_errorf(err, RD_E_UNSUPPORTED, "node '%s' (%s): %s has %zu values; at most 3 spatial dims",
                             n->name, n->op_type, lists[l].name, c);
        for (size_t i = 0; i < c; i++) {
            if (v[i] < 0 || (v[i] == 0 && l != 1))
                return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): %s[%zu] = %lld is invalid", n->name, n->op_type,
                                 lists[l].name, i, (long long)v[i]);
            lists[l].dst[i] = v[i];
        }
        *lists[l].count = c;
    }
    return RD_OK;
}

/* Geometry from x (N, C, spatial...) and w (M, C/group, k...); out_dims receives the output shape. */
static rd_status qconv_geom(const sim_op_ctx *ctx, const rd_tensor *x, const rd_tensor *w, ref_conv_int_geom *g,
                            int64_t *out_dims, rd_error *err)
{
    const struct qconv_params *p = ctx->params;
    int ns = x->rank - 2;
    if (ns < 1 || ns > 3 || w->rank != x->rank)
        return rd_errorf(err, RD_E_UNSUPPORTED, "node '%s' (%s): x rank %d / w rank %d (1 to 3 spatial dims supported)",
                         ctx->node->name, ctx->node->op_type, x->rank, w->rank);
    if ((p->n_k && (int)p->n_k != ns) || (p->n_strides && (int)p->n_strides != ns) ||
        (p->n_dil && (int)p->n_dil != ns) || (p->n_pads && (int)p->n_pads != 2 * ns))
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): attribute lengths do not match %d spatial dims",
                         ctx->node->name, ctx->node->op_type, ns);
    memset(g, 0, sizeof *g);
    g->n = x->dims[0];
    g->c = x->dims[1];
    g->m = w->dims[0];
    g->group = p->group;
    if (g->c % g->group || g->m % g->group || w->dims[1] != g->c / g->group)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): channels (x %lld, w %lldx%lld) do not fit group %lld",
                         ctx->node->name, ctx->node->op_type, (long long)g->c, (long long)w->dims[0],
                         (long long)w->dims[1], (long long)g->group);
    out_dims[0] = g->n;
    out_dims[1] = g->m;
    for (int d = 0; d < 3; d++) {
        g->in[d] = g->k[d] = g->out[d] = g->stride[d] = g->dil[d] = 1;
        g->pad[d] = 0;
    }
    for (int i = 0; i < ns; i++) {
        int d = 3 - ns + i;
        g->in[d] = x->dims[2 + i];
        g->k[d] = w->dims[2 + i];
        if (p->n_k && p->kernel[i] != g->k[d])
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): kernel_shape[%d] = %lld but w has %lld", ctx->node->name,
                             ctx->node->op_type, i, (long long)p->kernel[i], (long long)g->k[d]);
        g->stride[d] = p->n_strides ? p->strides[i] : 1;
        g->dil[d] = p->n_dil ? p->dil[i] : 1;
        int64_t ext = (g->k[d] - 1) * g->dil[d] + 1, pb = 0, pe = 0, o;
        if (p->auto_pad == 0) {
            pb = p->n_pads ? p->pads[i] : 0;
            pe = p->n_pads ? p->pads[i + ns] : 0;
            o = g->in[d] + pb + pe >= ext ? (g->in[d] + pb + pe - ext) / g->stride[d] + 1 : 0;
        } else if (p->auto_pad == 3) {
            o = g->in[d] >= ext ? (g->in[d] - ext) / g->stride[d] + 1 : 0;
        } else {
            o = (g->in[d] + g->stride[d] - 1) / g->stride[d];
            int64_t total = (o - 1) * g->stride[d] + ext - g->in[d];
            total = total < 0 ? 0 : total;
            pb = p->auto_pad == 1 ? total / 2 : total - total / 2;
        }
        g->pad[d] = pb;
        g->out[d] = o;
        out_dims[2 + i] = o;
    }
    return RD_OK;
}

/* Zero-point-adjusted int32 copies of x and w (w_zp per tensor or per output channel). */
static void qconv_prepare(const rd_tensor *x, const rd_tensor *xzp, const rd_tensor *w, const rd_tensor *wzp,
                          int32_t *xi, int32_t *wi)
{
    int64_t nx = rd_tensor_numel(x), nw = rd_tensor_numel(w), per_m = w->dims[0] ? nw / w->dims[0] : 1;
    int64_t xz = zp_at(xzp, 0);
    for (int64_t i = 0; i < nx; i++)
        xi[i] = (int32_t)(ec_ld_i64(x->data, x->dtype, i) - xz);
    for (int64_t i = 0; i < nw; i++)
        wi[i] = (int32_t)(ec_ld_i64(w->data, w->dtype, i) - zp_at(wzp, i / per_m));
}

static rd_status convi_infer(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0], *w = ctx->in[1];
    const rd_tensor *xzp = ctx->n_in > 2 ? ctx->in[2] : NULL, *wzp = ctx->n_in > 3 ? ctx->in[3] : NULL;
    if (!q8(x->dtype))
        return sim_err_dtype(ctx, 0, err);
    if (!q8(w->dtype))
        return sim_err_dtype(ctx, 1, err);
    ref_conv_int_geom g;
    int64_t od[RD_MAX_RANK];
    rd_status st = qconv_geom(ctx, x, w, &g, od, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, xzp, 2, 1, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, wzp, 3, g.m, err);
    if (st != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], RD_DT_I32, x->rank, od);
    return RD_OK;
}

static size_t align64(size_t v)
{
    return (v + 63) & ~(size_t)63;
}

/*
 * ConvInteger through the INT8 simulator's kernels (kernels/qconv.c) instead of the plain loops: x as
 * int8 codes (uint8 shifted by 128, its zero point too), w - w_zp as int8. The sums are the same modulo
 * 2^32. Taken when x's zero point is per tensor and every w - w_zp fits int8 (always for symmetric int8
 * weights written as uint8 with zero point 128, as export-qdq --integer does); returns false otherwise.
 */
static bool convi_fast(sim_op_ctx *ctx, const ref_conv_int_geom *rg, rd_status *st, rd_error *err)
{
    const rd_tensor *x = ctx->in[0], *w = ctx->in[1];
    const rd_tensor *xzp = ctx->n_in > 2 ? ctx->in[2] : NULL, *wzp = ctx->n_in > 3 ? ctx->in[3] : NULL;
    if (xzp && rd_tensor_numel(xzp) != 1)
        return false;
    int64_t nx = rd_tensor_numel(x), nw = rd_tensor_numel(w), per_m = rg->m ? nw / rg->m : 1;
    conv_geom g = {.nsp = x->rank - 2, .batch = rg->n, .in_c = rg->c, .out_c = rg->m, .group = rg->group};
    for (int i = 0; i < g.nsp; i++) {
        int d = 3 - g.nsp + i;
        g.in[i] = rg->in[d];
        g.out[i] = rg->out[d];
        g.k[i] = rg->k[d];
        g.stride[i] = rg->stride[d];
        g.dil[i] = rg->dil[d];
        g.pad[i] = rg->pad[d];
    }
    conv_plan plan;
    qconv_plan_s8(&g, &plan);
    const bool direct = plan.kind == CONV_KIND_DEPTHWISE; /* the float loop on centred codes (qconv.h) */
    const size_t xb = align64((size_t)nx), wb = align64((size_t)nw);
    const size_t fb = direct ? align64((size_t)(nx + nw) * sizeof(float)) : 0;
    size_t work;
    if (!sim_mul_ok(plan.scratch, (size_t)sim_pool_width(ctx->pool), &work))
        return false;
    char *scr = sim_scratch_get(ctx, xb + wb + fb + work + 64, err);
    if (!scr) {
        *st = err ? err->code : RD_E_NOMEM;
        return true;
    }
    int8_t *x8 = (int8_t *)scr, *w8 = (int8_t *)(scr + xb);
    for (int64_t i = 0; i < nw; i++) {
        int64_t v = ec_ld_i64(w->data, w->dtype, i) - zp_at(wzp, i / per_m);
        if (v < -128 || v > 127)
            return false;
        w8[i] = (int8_t)v;
    }
    int32_t shift = x->dtype == RD_DT_U8 ? 128 : 0;
    for (int64_t i = 0; i < nx; i++)
        x8[i] = (int8_t)(ec_ld_i64(x->data, x->dtype, i) - shift);
    int32_t x_zp = (int32_t)zp_at(xzp, 0) - shift;
    qconv_args a = {.xq = x8, .x_zp = x_zp, .wq = w8, .y = ctx->out[0].data};
    if (direct) {
        float *xc = (float *)(void *)(scr + xb + wb), *wc = xc + nx;
        for (int64_t i = 0; i < nx; i++)
            xc[i] = (float)(x8[i] - x_zp);
        for (int64_t i = 0; i < nw; i++)
            wc[i] = w8[i];
        a.xc = xc;
        a.wc = wc;
    }
    qconv_s8(&g, &plan, &a, scr + xb + wb + fb, ctx->pool, NULL, NULL);
    *st = RD_OK;
    return true;
}

static rd_status convi_eval(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0], *w = ctx->in[1];
    const rd_tensor *xzp = ctx->n_in > 2 ? ctx->in[2] : NULL, *wzp = ctx->n_in > 3 ? ctx->in[3] : NULL;
    ref_conv_int_geom g;
    int64_t od[RD_MAX_RANK];
    rd_status st = qconv_geom(ctx, x, w, &g, od, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    if (convi_fast(ctx, &g, &st, err))
        return st;
    int64_t nx = rd_tensor_numel(x);
    int32_t *scr = int_scratch(ctx, nx + rd_tensor_numel(w), err);
    if (!scr)
        return err ? err->code : RD_E_NOMEM;
    qconv_prepare(x, xzp, w, wzp, scr, scr + nx);
    ref_conv_int32(&g, scr, scr + nx, NULL, ctx->out[0].data);
    return RD_OK;
}

static int64_t qconv_macs(const sim_op_ctx *ctx)
{
    int wi = strcmp(ctx->node->op_type, "ConvInteger") == 0 ? 1 : 3;
    const rd_tensor *w = ctx->in[wi];
    if (!w || ctx->out[0].rank < 2)
        return 0;
    int64_t per_out = 1;
    for (int d = 1; d < w->rank; d++)
        per_out = sim_count_mul(per_out, w->dims[d]);
    return sim_count_mul(rd_tensor_numel(&ctx->out[0]), per_out);
}

const sim_op_def op_conv_integer = {.name = "ConvInteger",
                                    .domain = "",
                                    .since = 10,
                                    .min_in = 2,
                                    .max_in = 4,
                                    .min_out = 1,
                                    .max_out = 1,
                                    .params_size = sizeof(struct qconv_params),
                                    .parse = qconv_parse,
                                    .infer = convi_infer,
                                    .eval = {[SIM_PREC_F32] = convi_eval},
                                    .macs = qconv_macs,
                                    .qrule = RD_OP_Q_NONE};

static rd_status qlconv_infer(sim_op_ctx *ctx, rd_error *err)
{
    for (int k = 0; k < 8; k++) {
        rd_status st = need(ctx, k, err);
        if (st != RD_OK)
            return st;
    }
    const rd_tensor *x = ctx->in[0], *w = ctx->in[3], *bias = ctx->n_in > 8 ? ctx->in[8] : NULL;
    if (!q8(x->dtype))
        return sim_err_dtype(ctx, 0, err);
    if (!q8(w->dtype))
        return sim_err_dtype(ctx, 3, err);
    if (!q8(ctx->in[7]->dtype))
        return sim_err_dtype(ctx, 7, err);
    static const int scales[3] = {1, 4, 6};
    for (int i = 0; i < 3; i++)
        if (ctx->in[scales[i]]->dtype != RD_DT_F32)
            return sim_err_dtype(ctx, scales[i], err);
    if (bias && bias->dtype != RD_DT_I32)
        return sim_err_dtype(ctx, 8, err);
    ref_conv_int_geom g;
    int64_t od[RD_MAX_RANK];
    rd_status st = qconv_geom(ctx, x, w, &g, od, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, ctx->in[1], 1, 1, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, ctx->in[2], 2, 1, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, ctx->in[4], 4, g.m, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, ctx->in[5], 5, g.m, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, ctx->in[6], 6, 1, err);
    if (st == RD_OK)
        st = per_index_ok(ctx, ctx->in[7], 7, 1, err);
    if (st == RD_OK && bias && (bias->rank != 1 || bias->dims[0] != g.m))
        st = rd_errorf(err, RD_E_INVAL, "node '%s' (QLinearConv): bias must have %lld elements", ctx->node->name,
                       (long long)g.m);
    if (st != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], ctx->in[7]->dtype, x->rank, od);
    return RD_OK;
}

static rd_status qlconv_eval(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0], *xs = ctx->in[1], *xzp = ctx->in[2], *w = ctx->in[3], *ws = ctx->in[4];
    const rd_tensor *wzp = ctx->in[5], *ys = ctx->in[6], *yzp = ctx->in[7], *bias = ctx->n_in > 8 ? ctx->in[8] : NULL;
    rd_tensor *y = &ctx->out[0];
    ref_conv_int_geom g;
    int64_t od[RD_MAX_RANK];
    rd_status st = qconv_geom(ctx, x, w, &g, od, err);
    if (st != RD_OK || !y->data)
        return st;
    int64_t nx = rd_tensor_numel(x), nw = rd_tensor_numel(w), ny = rd_tensor_numel(y);
    int32_t *scr = int_scratch(ctx, nx + nw + ny, err);
    if (!scr)
        return err ? err->code : RD_E_NOMEM;
    int32_t *acc = scr + nx + nw;
    qconv_prepare(x, xzp, w, wzp, scr, scr + nx);
    ref_conv_int32(&g, scr, scr + nx, bias ? bias->data : NULL, acc);
    double lo, hi;
    ec_int_range(y->dtype, &lo, &hi);
    int64_t plane = g.out[0] * g.out[1] * g.out[2], yz = zp_at(yzp, 0);
    float xsc = f_at(xs, 0), ysc = f_at(ys, 0);
    for (int64_t i = 0; i < ny; i++) {
        int64_t m = (i / plane) % g.m;
        float mult = xsc * f_at(ws, m) / ysc; /* float32, as the reference */
        double v = rint((double)acc[i] * (double)mult) + (double)yz;
        v = v < lo ? lo : v > hi ? hi : v;
        ec_st_i64(y->data, y->dtype, i, (int64_t)(v == v ? v : 0.0));
    }
    return RD_OK;
}

const sim_op_def op_qlinear_conv = {.name = "QLinearConv",
                                    .domain = "",
                                    .since = 10,
                                    .min_in = 8,
                                    .max_in = 9,
                                    .min_out = 1,
                                    .max_out = 1,
                                    .params_size = sizeof(struct qconv_params),
                                    .parse = qconv_parse,
                                    .infer = qlconv_infer,
                                    .eval = {[SIM_PREC_F32] = qlconv_eval},
                                    .macs = qconv_macs,
                                    .qrule = RD_OP_Q_NONE};

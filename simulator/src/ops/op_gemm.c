/*
 * op_gemm.c: Gemm (1..21; the broadcast attribute of 1-6 is implied) and MatMul (1..21), float32.
 * Gemm: Y = alpha * op(A) op(B) + beta * C, C unidirectionally broadcast to [M, N] and optional from 11.
 * MatMul: numpy matmul with 1-D operands promoted and removed again, batch dims broadcast; when B has
 * no batch the whole of A is one product. Both run kernels/matmul_f32.c over the run's threads: every
 * element is one fma chain, so results do not depend on the thread count.
 */
#include "linear_shapes.h"
#include "../quant.h"
#include "../kernels/matmul_f32.h"

#include <limits.h>

static rd_status gemm_parse(const sim_node *n, void *params, rd_error *err)
{
    sim_gemm_params *p = params;
    (void)err;
    p->alpha = sim_attr_float(n, "alpha", 1.0f);
    p->beta = sim_attr_float(n, "beta", 1.0f);
    p->trans_a = sim_attr_int(n, "transA", 0) != 0;
    p->trans_b = sim_attr_int(n, "transB", 0) != 0;
    return RD_OK;
}

/* M, N, K of a Gemm node after checking A, B and C. */
rd_status sim_gemm_dims(const sim_op_ctx *ctx, int64_t *m, int64_t *n, int64_t *k, rd_error *err)
{
    const sim_gemm_params *p = ctx->params;
    const char *nm = ctx->node->name, *op = ctx->node->op_type;
    const rd_tensor *a = ctx->in[0], *b = ctx->in[1], *c = ctx->n_in > 2 ? ctx->in[2] : NULL;
    for (int i = 0; i < 3 && i < ctx->n_in; i++)
        if (ctx->in[i] && ctx->in[i]->dtype != RD_DT_F32)
            return sim_err_dtype(ctx, i, err);
    if (a->rank != 2 || b->rank != 2)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): A and B must be 2-D (ranks %d and %d)", nm, op, a->rank,
                         b->rank);
    *m = p->trans_a ? a->dims[1] : a->dims[0];
    *k = p->trans_a ? a->dims[0] : a->dims[1];
    const int64_t kb = p->trans_b ? b->dims[1] : b->dims[0];
    *n = p->trans_b ? b->dims[0] : b->dims[1];
    if (kb != *k)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): inner dims differ (A gives K = %lld, B gives %lld)", nm, op,
                         (long long)*k, (long long)kb);
    if (*m > INT_MAX || *n > INT_MAX || *k > INT_MAX)
        return rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): a matrix dimension exceeds the BLAS limit", nm, op);
    if (c) {
        bool ok = c->rank <= 2;
        if (ok && c->rank >= 1)
            ok = c->dims[c->rank - 1] == *n || c->dims[c->rank - 1] == 1;
        if (ok && c->rank == 2)
            ok = c->dims[0] == *m || c->dims[0] == 1;
        if (!ok)
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): C of rank %d cannot broadcast to %lldx%lld", nm, op,
                             c->rank, (long long)*m, (long long)*n);
    } else if (ctx->opset < 11) {
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input C is required before opset 11", nm, op);
    }
    return RD_OK;
}

static rd_status gemm_infer(sim_op_ctx *ctx, rd_error *err)
{
    int64_t m = 0, n = 0, k = 0;
    rd_status st = sim_gemm_dims(ctx, &m, &n, &k, err);
    if (st == RD_OK)
        sim_set_shape(&ctx->out[0], RD_DT_F32, 2, (int64_t[]){m, n});
    return st;
}

/* Runs the products of mm on the pool with every worker's scratch, after extra bytes for the caller (*extra). */
static rd_status mm_run(sim_op_ctx *ctx, const mm_f32 *mm, size_t extra_bytes, void **extra, rd_error *err)
{
    const size_t lead = (extra_bytes + 63) & ~(size_t)63;
    size_t per = mm_f32_scratch(mm), bytes;
    if (!sim_mul_ok(per, (size_t)sim_pool_width(ctx->pool), &bytes) || bytes > SIZE_MAX - lead)
        return rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): scratch size overflows", ctx->node->name,
                         ctx->node->op_type);
    char *s = sim_scratch_get(ctx, lead + bytes, err);
    if (!s)
        return err ? err->code : RD_E_NOMEM;
    if (extra)
        *extra = s;
    return RD_OK;
}

static rd_status gemm_eval(sim_op_ctx *ctx, rd_error *err)
{
    const sim_gemm_params *p = ctx->params;
    int64_t m = 0, n = 0, k = 0;
    rd_status st = sim_gemm_dims(ctx, &m, &n, &k, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    const rd_tensor *a = ctx->in[0], *b = ctx->in[1], *c = ctx->n_in > 2 ? ctx->in[2] : NULL;
    mm_f32 mm = {.m = m, .n = n, .k = k, .n_batch = 1, .y = ctx->out[0].data, .alpha = p->alpha, .beta = p->beta};
    mm.a = p->trans_a ? (sgemm_mat){.data = a->data, .rs = 1, .cs = m} : (sgemm_mat){.data = a->data, .rs = k, .cs = 1};
    mm.b = p->trans_b ? (sgemm_mat){.data = b->data, .rs = 1, .cs = k} : (sgemm_mat){.data = b->data, .rs = n, .cs = 1};
    if (c && c->data) { /* C broadcast to [M, N] */
        mm.c = c->data;
        mm.c_cs = c->rank >= 1 && c->dims[c->rank - 1] == n ? 1 : 0;
        mm.c_rs = c->rank == 2 && c->dims[0] == m ? c->dims[1] : 0;
    }
    void *s = NULL;
    st = mm_run(ctx, &mm, 0, &s, err);
    if (st == RD_OK)
        mm_f32_run(&mm, s, ctx->pool);
    return st;
}

static int64_t gemm_macs(const sim_op_ctx *ctx)
{
    const sim_gemm_params *p = ctx->params;
    const rd_tensor *a = ctx->in[0];
    if (a->rank != 2 || ctx->out[0].rank != 2)
        return 0;
    return sim_count_mul(sim_count_mul(ctx->out[0].dims[0], ctx->out[0].dims[1]), p->trans_a ? a->dims[0] : a->dims[1]);
}

const sim_op_def op_gemm = {
    .name = "Gemm",
    .domain = "",
    .since = 1,
    .min_in = 2,
    .max_in = 3,
    .min_out = 1,
    .max_out = 1,
    .params_size = sizeof(sim_gemm_params),
    .parse = gemm_parse,
    .infer = gemm_infer,
    .eval = {[SIM_PREC_F32] = gemm_eval},
    .macs = gemm_macs,
    .eval_i8 = sim_q8_gemm_eval,
    .eval_i16 = sim_q16_gemm_eval,
    .weight_in = 1,
    .weight = RD_OP_WEIGHT_GEMM,
    .prune = RD_OP_PRUNE_WEIGHTS,
    .npu_op = "Conv",
    .fuse = SIM_FUSE_CONV,
    .same_from = 7,
};

/* ------------------------------------------------------------------------------------------------- */

sim_gemm_c sim_gemm_c_of(const sim_op_ctx *ctx, int64_t m, int64_t n)
{
    const rd_tensor *c = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if (!c)
        return (sim_gemm_c){0};
    return (sim_gemm_c){.data = c->data,
                        .cs_col = c->rank >= 1 && c->dims[c->rank - 1] == n ? 1 : 0,
                        .cs_row = c->rank == 2 && c->dims[0] == m ? c->dims[1] : 0,
                        .row_vector = c->rank < 2 || c->dims[0] == 1};
}

void sim_matmul_batch_at(const sim_matmul_shape *s, int64_t bi, int64_t *a_mat, int64_t *b_mat)
{
    int64_t oa = 0, ob = 0;
    for (int i = s->nb - 1; i >= 0; i--) {
        const int64_t idx = bi % s->batch[i];
        bi /= s->batch[i];
        oa += idx * s->a_bs[i];
        ob += idx * s->b_bs[i];
    }
    *a_mat = oa;
    *b_mat = ob;
}

rd_status sim_matmul_shape_of(const sim_op_ctx *ctx, sim_matmul_shape *s, rd_error *err)
{
    const char *nm = ctx->node->name, *op = ctx->node->op_type;
    const rd_tensor *a = ctx->in[0], *b = ctx->in[1];
    for (int i = 0; i < 2; i++)
        if (ctx->in[i]->dtype != RD_DT_F32)
            return sim_err_dtype(ctx, i, err);
    if (a->rank < 1 || b->rank < 1)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): operands must have rank >= 1 (got %d and %d)", nm, op,
                         a->rank, b->rank);
    memset(s, 0, sizeof *s);
    s->m = a->rank == 1 ? 1 : a->dims[a->rank - 2];
    s->k = a->dims[a->rank - 1];
    const int64_t kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    s->n = b->rank == 1 ? 1 : b->dims[b->rank - 1];
    if (kb != s->k)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): inner dims differ (%lld vs %lld)", nm, op, (long long)s->k,
                         (long long)kb);
    const int ra = a->rank > 2 ? a->rank - 2 : 0, rb = b->rank > 2 ? b->rank - 2 : 0;
    if (sim_broadcast_shape(ra, a->dims, rb, b->dims, &s->nb, s->batch) != RD_OK)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): batch dims of A and B do not broadcast", nm, op);
    /* strides in whole matrices, right-aligned, 0 on broadcast dims */
    int64_t sa = 1, sb = 1;
    s->b_shared = true;
    for (int i = s->nb - 1; i >= 0; i--) {
        const int ia = i - (s->nb - ra), ib = i - (s->nb - rb);
        const int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        s->a_bs[i] = da == 1 ? 0 : sa;
        s->b_bs[i] = db == 1 ? 0 : sb;
        if (db != 1)
            s->b_shared = false;
        sa *= da;
        sb *= db;
    }
    s->n_batch = 1;
    for (int i = 0; i < s->nb; i++)
        s->n_batch *= s->batch[i];
    if (s->m > INT_MAX || s->n > INT_MAX || s->k > INT_MAX || s->m * s->n_batch > INT_MAX)
        return rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): a matrix dimension exceeds the BLAS limit", nm, op);
    return RD_OK;
}

static rd_status matmul_infer(sim_op_ctx *ctx, rd_error *err)
{
    sim_matmul_shape s;
    rd_status st = sim_matmul_shape_of(ctx, &s, err);
    if (st != RD_OK)
        return st;
    int64_t dims[RD_MAX_RANK + 2];
    int r = s.nb;
    memcpy(dims, s.batch, (size_t)r * sizeof(int64_t));
    if (ctx->in[0]->rank > 1)
        dims[r++] = s.m;
    if (ctx->in[1]->rank > 1)
        dims[r++] = s.n;
    if (r > RD_MAX_RANK)
        return rd_errorf(err, RD_E_UNSUPPORTED, "node '%s' (%s): output rank %d exceeds %d", ctx->node->name,
                         ctx->node->op_type, r, RD_MAX_RANK);
    sim_set_shape(&ctx->out[0], RD_DT_F32, r, dims);
    return RD_OK;
}

static rd_status matmul_eval(sim_op_ctx *ctx, rd_error *err)
{
    sim_matmul_shape s;
    rd_status st = sim_matmul_shape_of(ctx, &s, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    mm_f32 mm = {.m = s.m,
                 .n = s.n,
                 .k = s.k,
                 .n_batch = s.n_batch,
                 .y = ctx->out[0].data,
                 .alpha = 1.0f,
                 .a = {.data = ctx->in[0]->data, .rs = s.k, .cs = 1},
                 .b = {.data = ctx->in[1]->data, .rs = s.n, .cs = 1}};
    const bool a_full = s.nb == 0 || rd_tensor_numel(ctx->in[0]) == s.n_batch * s.m * s.k;
    if (s.b_shared && a_full) { /* one matrix B for all of A: fold A's batch into M */
        mm.m = s.n_batch * s.m;
        mm.n_batch = 1;
        void *sc = NULL;
        st = mm_run(ctx, &mm, 0, &sc, err);
        if (st == RD_OK)
            mm_f32_run(&mm, sc, ctx->pool);
        return st;
    }
    int64_t *off = NULL;
    size_t off_bytes;
    if (!sim_mul_ok((size_t)s.n_batch, 2 * sizeof(int64_t), &off_bytes))
        return rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): too many batch elements", ctx->node->name,
                         ctx->node->op_type);
    st = mm_run(ctx, &mm, off_bytes, (void **)&off, err);
    if (st != RD_OK)
        return st;
    for (int64_t bi = 0; bi < s.n_batch; bi++) {
        int64_t oa, ob;
        sim_matmul_batch_at(&s, bi, &oa, &ob);
        off[bi] = oa * s.m * s.k;
        off[s.n_batch + bi] = ob * s.k * s.n;
    }
    mm.a_off = off;
    mm.b_off = off + s.n_batch;
    mm_f32_run(&mm, (float *)(void *)((char *)off + ((off_bytes + 63) & ~(size_t)63)), ctx->pool);
    return RD_OK;
}

static int64_t matmul_macs(const sim_op_ctx *ctx)
{
    const rd_tensor *a = ctx->in[0];
    if (a->rank < 1)
        return 0;
    /* every output element is one K-long dot product */
    return sim_count_mul(rd_tensor_numel(&ctx->out[0]), a->dims[a->rank - 1]);
}

/* RKNN runs a MatMul of a constant weight as a 1x1 Conv (convert_gemm_by_conv, exmatmul -> conv); a product of
   two activations stays a MatMul. */
static const char *matmul_npu_op(const sim_node *n, const rd_model *m)
{
    return n->n_in > 1 && n->in[1] >= 0 && m->values[n->in[1]].konst ? "Conv" : "MatMul";
}

const sim_op_def op_matmul = {
    .name = "MatMul",
    .domain = "",
    .since = 1,
    .min_in = 2,
    .max_in = 2,
    .min_out = 1,
    .max_out = 1,
    .infer = matmul_infer,
    .eval = {[SIM_PREC_F32] = matmul_eval},
    .macs = matmul_macs,
    .eval_i8 = sim_q8_matmul_eval,
    .eval_i16 = sim_q16_matmul_eval,
    .weight_in = 1,
    .weight = RD_OP_WEIGHT_MATMUL,
    .npu_op_of = matmul_npu_op,
    .fuse = SIM_FUSE_CONV,
};

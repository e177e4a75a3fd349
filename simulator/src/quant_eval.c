/*
 * quant_eval.c: the INT8 simulator's integer Conv, ConvTranspose, Gemm and MatMul (contracts in quant.h).
 *
 * Each eval checks the node exactly as the float op does (shared shape rules, ops/linear_shapes.h),
 * recovers the input codes, runs the integer kernels (kernels/qconv.c, kernels/qgemm.c) into the float
 * output buffer viewed as int32 accumulators, and dequantizes them in place: the output has the same
 * element size, so no accumulator copy of the whole output is needed.
 */
#include "quant.h"
#include "kernels/gap_conv.h"
#include "kernels/qconv.h"
#include "kernels/qgemm.h"
#include "ops/linear_shapes.h"

#include <math.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define QEVAL_HAVE_AVX2 1
#endif

static size_t align64(size_t v)
{
    return (v + 63) & ~(size_t)63;
}

static bool scale_ok(float s)
{
    return s > 0 && isfinite(s);
}

static bool zp_ok(int32_t zp)
{
    return zp >= -128 && zp <= 127;
}

/* The layer's quantization against the node: activation params, weights present, scale count. */
static rd_status check_layer(const sim_op_ctx *ctx, const sim_q8_layer *q, int64_t n_chan, bool need_w, rd_error *err)
{
    const char *nm = ctx->node->name, *op = ctx->node->op_type;
    if (!scale_ok(q->in_scale) || !zp_ok(q->in_zp))
        return rd_errorf(err, RD_E_INVAL,
                         "node '%s' (%s): input scale %g / zero point %d are not valid int8 parameters", nm, op,
                         (double)q->in_scale, (int)q->in_zp);
    if (!need_w) {
        if (!scale_ok(q->b_scale) || !zp_ok(q->b_zp))
            return rd_errorf(err, RD_E_INVAL,
                             "node '%s' (%s): input 1 scale %g / zero point %d are not valid int8 parameters", nm, op,
                             (double)q->b_scale, (int)q->b_zp);
        return RD_OK;
    }
    if (!q->w_q || !q->w_scale)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): no quantized weights", nm, op);
    return sim_check_weight_scales(ctx, q->w_scale, q->w_zp, q->n_w_scale, n_chan, err);
}

rd_status sim_check_weight_scales(const sim_op_ctx *ctx, const float *scale, const int32_t *zp, int n_scale,
                                  int64_t n_chan, rd_error *err)
{
    const char *nm = ctx->node->name, *op = ctx->node->op_type;
    if (n_scale != 1 && n_scale != n_chan)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): %d weight scales for %lld output channels", nm, op, n_scale,
                         (long long)n_chan);
    for (int c = 0; c < n_scale; c++) {
        if (!scale_ok(scale[c]))
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): weight scale %d is %g", nm, op, c, (double)scale[c]);
        if (zp && !zp_ok(zp[c]))
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): weight zero point %d is %d, expected -128..127", nm, op,
                             c, (int)zp[c]);
    }
    return RD_OK;
}

static double w_scale_of(const sim_q8_layer *q, int64_t c)
{
    return q->w_scale[q->n_w_scale == 1 ? 0 : c];
}

/* The weight zero point of output channel c as a 32-bit register operand (0 for symmetric weights). */
static uint32_t w_zp_of(const sim_q8_layer *q, int64_t c)
{
    return q->w_zp ? (uint32_t)q->w_zp[q->n_w_scale == 1 ? 0 : c] : 0;
}

/* The weight zero point's share of an accumulator: acc -= zp * sum, modulo 2^32 (quant.h). */
static void zp_correct(float *y, int64_t i, uint32_t zp, uint32_t sum)
{
    uint32_t a;
    memcpy(&a, y + i, sizeof a);
    a -= zp * sum;
    memcpy(y + i, &a, sizeof a);
}

/* Sum of the centred codes (a - zp) of each of rows rows of len entries (element (r, k) at r * rs + k * cs),
   as 32-bit register values. */
static void centred_row_sums(const int8_t *a, int64_t rows, int64_t len, int64_t rs, int64_t cs, int32_t zp,
                             uint32_t *out)
{
    for (int64_t r = 0; r < rows; r++) {
        uint32_t acc = 0;
        for (int64_t k = 0; k < len; k++)
            acc += (uint32_t)((int32_t)a[r * rs + k * cs] - zp);
        out[r] = acc;
    }
}

/* Int32 accumulator read from / float written to the same 4 bytes (memcpy: no aliasing assumptions). */
static int32_t acc_at(const float *y, int64_t i)
{
    int32_t a;
    memcpy(&a, y + i, sizeof a);
    return a;
}

static void *get_scratch(sim_op_ctx *ctx, size_t bytes, rd_error *err)
{
    return sim_scratch_get(ctx, bytes ? bytes : 64, err);
}

/* Bias quantized per output channel at in_scale * w_scale[c] into bq (NULL b: returns NULL). */
static const int32_t *quant_bias(const rd_tensor *b, const sim_q8_layer *q, int64_t n, int32_t *bq)
{
    if (!b || !b->data)
        return NULL;
    const float *bd = b->data;
    for (int64_t c = 0; c < n; c++)
        bq[c] = sim_quant_bias_i32(bd[c], (double)q->in_scale * w_scale_of(q, c));
    return bq;
}

/* ---- Conv and ConvTranspose ------------------------------------------------------------------------ */

#define CODE_CHUNK 65536 /* input values quantized per task */

typedef struct codes_job {
    const float *x;
    int64_t n;
    float scale;
    int32_t zp;
    int8_t *q; /* int8 codes, or */
    float *c;  /* centred codes as floats */
} codes_job;

static void codes_task(void *arg, int64_t task, int worker)
{
    (void)worker;
    const codes_job *j = arg;
    const int64_t i0 = task * CODE_CHUNK, len = j->n - i0 < CODE_CHUNK ? j->n - i0 : CODE_CHUNK;
    if (j->q)
        sim_quantize_i8(j->x + i0, len, j->scale, j->zp, j->q + i0);
    else
        sim_quantize_centered_f32(j->x + i0, len, j->scale, j->zp, -128, 127, j->c + i0);
}

/* Codes of n values (int8 into q, or centred floats into c) in chunks over the pool. */
static void codes_of(sim_op_ctx *ctx, codes_job *j)
{
    if (j->x && j->n > 0)
        sim_parallel(ctx->pool, sim_blocks(j->n, CODE_CHUNK), codes_task, j);
}

static void quantize_codes(sim_op_ctx *ctx, const float *x, int64_t n, float scale, int32_t zp, int8_t *q)
{
    codes_job j = {.x = x, .n = n, .scale = scale, .zp = zp, .q = q};
    codes_of(ctx, &j);
}

/* The layer's output regions from accumulators to floats: out = (float)(acc * in_scale * w_scale[c]). */
typedef struct dequant_job {
    const sim_q8_layer *q;
    float *y;
    int64_t channels, plane;
} dequant_job;

#ifdef QEVAL_HAVE_AVX2
/* dequant_row's whole groups of eight: the same double products and rounding to float, four lanes a time
   where SSE2 takes two; returns how many it did. */
__attribute__((target("avx2"))) static int64_t dequant_row_avx2(float *yr, int64_t n, double in_scale, double ws)
{
    const __m256d s = _mm256_set1_pd(in_scale), w = _mm256_set1_pd(ws);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(yr + i));
        const __m256d lo = _mm256_mul_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(a)), s), w);
        const __m256d hi = _mm256_mul_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(a, 1)), s), w);
        _mm256_storeu_ps(yr + i, _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo)));
    }
    return i;
}
#endif

/* n accumulators of one channel, in place, to (float)(acc * in_scale * ws). */
static void dequant_row(float *yr, int64_t n, double in_scale, double ws)
{
    int64_t i = 0;
#ifdef QEVAL_HAVE_AVX2
    if (__builtin_cpu_supports("avx2"))
        i = dequant_row_avx2(yr, n, in_scale, ws);
#endif
    for (; i < n; i++)
        yr[i] = (float)((double)acc_at(yr, i) * in_scale * ws);
}

static void dequant_tile(void *user, const sim_tile *t, int worker)
{
    (void)worker;
    const dequant_job *j = user;
    for (int64_t c = t->c0; c < t->c1; c++)
        dequant_row(j->y + (t->n * j->channels + c) * j->plane + t->p0, t->p1 - t->p0, j->q->in_scale,
                    w_scale_of(j->q, c));
}

/* How a weight zero point is applied: the same kernel with one output channel of all-one weights per group
   gives, per output position, the sum of the centred input codes over exactly the taps that position reads;
   each channel's accumulators then lose zp[c] times it (quant.h). */
typedef struct zp_pass {
    conv_geom g1; /* the geometry with one output channel per group */
    conv_plan plan1;
    int64_t n_ones; /* weight codes of g1: in_c * taps, for Conv and ConvTranspose alike */
    size_t ones_bytes, ones_c_bytes, sums_bytes;
} zp_pass;

static void zp_pass_make(const conv_geom *g, bool transpose, zp_pass *z)
{
    z->g1 = *g;
    z->g1.out_c = g->group;
    if (transpose)
        qconv_transpose_plan_s8(&z->g1, &z->plan1);
    else
        qconv_plan_s8(&z->g1, &z->plan1);
    z->n_ones = g->in_c * conv_prod(g->k, g->nsp);
    z->ones_bytes = align64((size_t)z->n_ones);
    z->ones_c_bytes = align64((size_t)z->n_ones * sizeof(float));
    z->sums_bytes = align64((size_t)(g->batch * g->group * conv_prod(g->out, g->nsp)) * sizeof(int32_t));
}

/* Asymmetric weights: the accumulators in y (bias included) lose each channel's zero point times the tap
   sums, then become floats as dequant_tile makes them. */
static void zp_correct_and_dequant(const conv_geom *g, const sim_q8_layer *q, const int32_t *sums, float *y)
{
    const int64_t mg = g->out_c / g->group, plane = conv_prod(g->out, g->nsp);
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t c = 0; c < g->out_c; c++) {
            float *yr = y + (n * g->out_c + c) * plane;
            const int32_t *sr = sums + (n * g->group + c / mg) * plane;
            const double ws = w_scale_of(q, c);
            for (int64_t p = 0; p < plane; p++) {
                zp_correct(yr, p, w_zp_of(q, c), (uint32_t)sr[p]);
                yr[p] = (float)((double)acc_at(yr, p) * q->in_scale * ws);
            }
        }
}

static void conv_kernel(const conv_geom *g, const conv_plan *plan, const qconv_args *a, void *scratch, rd_pool *pool,
                        bool transpose, sim_tile_fn done, void *done_user)
{
    if (transpose)
        qconv_transpose_s8(g, plan, a, scratch, pool, done, done_user);
    else
        qconv_s8(g, plan, a, scratch, pool, done, done_user);
}

/* Shared driver of Conv and ConvTranspose: input codes, then the kernel's regions dequantized as they finish
   (with asymmetric weights: after the zero point's correction). */
static rd_status conv_run(sim_op_ctx *ctx, const sim_q8_layer *q, const conv_geom *g, const conv_plan *plan,
                          bool transpose, rd_error *err)
{
    rd_status st = check_layer(ctx, q, g->out_c, true, err);
    if (st != RD_OK)
        return st;
    zp_pass z = {0};
    if (q->w_zp)
        zp_pass_make(g, transpose, &z);
    const bool direct = plan->kind == CONV_KIND_DEPTHWISE, direct1 = q->w_zp && z.plan1.kind == CONV_KIND_DEPTHWISE;
    const bool need_q = !direct || (q->w_zp && !direct1), need_c = direct || direct1;
    const int64_t nx = rd_tensor_numel(ctx->in[0]), nw = g->out_c * (g->in_c / g->group) * conv_prod(g->k, g->nsp);
    const size_t bias_bytes = align64((size_t)g->out_c * sizeof(int32_t));
    const size_t xq_bytes = need_q ? align64((size_t)nx) : 0,
                 xc_bytes = need_c ? align64((size_t)nx * sizeof(float)) : 0;
    const size_t w_bytes = direct ? align64((size_t)nw * sizeof(float)) : 0;
    const size_t zp_bytes = q->w_zp ? z.ones_bytes + (direct1 ? z.ones_c_bytes : 0) + z.sums_bytes : 0;
    const size_t per_worker = plan->scratch > z.plan1.scratch ? plan->scratch : z.plan1.scratch;
    size_t work;
    if (!sim_mul_ok(per_worker, (size_t)sim_pool_width(ctx->pool), &work))
        return rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): scratch size overflows", ctx->node->name,
                         ctx->node->op_type);
    char *s = get_scratch(ctx, bias_bytes + xq_bytes + xc_bytes + w_bytes + zp_bytes + work, err);
    if (!s)
        return err ? err->code : RD_E_NOMEM;
    char *at = s + bias_bytes;
    qconv_args a = {.x_zp = q->in_zp, .wq = q->w_q, .y = (int32_t *)ctx->out[0].data};
    a.bias = quant_bias(ctx->n_in > 2 ? ctx->in[2] : NULL, q, g->out_c, (int32_t *)(void *)s);
    if (need_q) {
        codes_job cj = {.x = ctx->in[0]->data, .n = nx, .scale = q->in_scale, .zp = q->in_zp, .q = (int8_t *)at};
        codes_of(ctx, &cj);
        a.xq = cj.q;
        at += xq_bytes;
    }
    if (need_c) {
        codes_job cj = {.x = ctx->in[0]->data, .n = nx, .scale = q->in_scale, .zp = q->in_zp, .c = (float *)(void *)at};
        codes_of(ctx, &cj);
        a.xc = cj.c;
        at += xc_bytes;
    }
    if (direct) {
        float *wc = (float *)(void *)at;
        for (int64_t i = 0; i < nw; i++)
            wc[i] = q->w_q[i];
        a.wc = wc;
        at += w_bytes;
    }
    void *scratch = s + bias_bytes + xq_bytes + xc_bytes + w_bytes + zp_bytes;
    if (!q->w_zp) {
        dequant_job dj = {.q = q, .y = ctx->out[0].data, .channels = g->out_c, .plane = conv_prod(g->out, g->nsp)};
        conv_kernel(g, plan, &a, scratch, ctx->pool, transpose, dequant_tile, &dj);
        return RD_OK;
    }
    conv_kernel(g, plan, &a, scratch, ctx->pool, transpose, NULL, NULL);
    int8_t *ones = (int8_t *)at;
    memset(ones, 1, (size_t)z.n_ones);
    at += z.ones_bytes;
    qconv_args a1 = {.xq = a.xq, .xc = a.xc, .x_zp = q->in_zp, .wq = ones};
    if (direct1) {
        float *ones_c = (float *)(void *)at;
        for (int64_t i = 0; i < z.n_ones; i++)
            ones_c[i] = 1.0f;
        a1.wc = ones_c;
        at += z.ones_c_bytes;
    }
    a1.y = (int32_t *)(void *)at;
    conv_kernel(&z.g1, &z.plan1, &a1, scratch, ctx->pool, transpose, NULL, NULL);
    zp_correct_and_dequant(g, q, a1.y, ctx->out[0].data);
    return RD_OK;
}

rd_status sim_q8_conv_eval(sim_op_ctx *ctx, const sim_q8_layer *q, rd_error *err)
{
    conv_geom g;
    rd_status st = sim_conv_geometry(ctx, &g, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    conv_plan plan;
    qconv_plan_s8(&g, &plan);
    return conv_run(ctx, q, &g, &plan, false, err);
}

rd_status sim_q8_conv_transpose_eval(sim_op_ctx *ctx, const sim_q8_layer *q, rd_error *err)
{
    conv_geom g;
    rd_status st = sim_conv_transpose_geometry(ctx, &g, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    conv_plan plan;
    qconv_transpose_plan_s8(&g, &plan);
    return conv_run(ctx, q, &g, &plan, true, err);
}

/* ------------------------------------------------------------------------------------------------- */

rd_status sim_q8_gemm_eval(sim_op_ctx *ctx, const sim_q8_layer *q, rd_error *err)
{
    const sim_gemm_params *p = ctx->params;
    int64_t m = 0, n = 0, k = 0;
    rd_status st = sim_gemm_dims(ctx, &m, &n, &k, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    st = check_layer(ctx, q, n, true, err);
    if (st != RD_OK)
        return st;
    const sim_gemm_c c = sim_gemm_c_of(ctx, m, n);
    const bool fold = c.data && q->c_const && c.row_vector && p->alpha != 0.0f;
    const size_t a_bytes = align64((size_t)(m * k)), b_bytes = align64((size_t)n * sizeof(int32_t));
    const size_t sum_bytes = q->w_zp ? align64((size_t)m * sizeof(uint32_t)) : 0;
    size_t work;
    if (!sim_mul_ok(qgemm_parallel_scratch(m, n, k), (size_t)sim_pool_width(ctx->pool), &work))
        return rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): scratch size overflows", ctx->node->name,
                         ctx->node->op_type);
    char *s = get_scratch(ctx, a_bytes + b_bytes + sum_bytes + work, err);
    if (!s)
        return err ? err->code : RD_E_NOMEM;
    int8_t *aq = (int8_t *)s;
    int32_t *bq = (int32_t *)(void *)(s + a_bytes);
    uint32_t *row_sums = (uint32_t *)(void *)(s + a_bytes + b_bytes);
    quantize_codes(ctx, ctx->in[0]->data, m * k, q->in_scale, q->in_zp, aq);
    if (fold) /* alpha * (acc + bq) * s_n == alpha * acc * s_n + beta * C[n] up to the rounding of bq */
        for (int64_t j = 0; j < n; j++)
            bq[j] = sim_quant_bias_i32((double)p->beta * c.data[j * c.cs_col] / p->alpha,
                                       (double)q->in_scale * w_scale_of(q, j));
    const qgemm_mat a = p->trans_a ? (qgemm_mat){.data = aq, .rs = 1, .cs = m, .zp = q->in_zp}
                                   : (qgemm_mat){.data = aq, .rs = k, .cs = 1, .zp = q->in_zp};
    const qgemm_mat b = p->trans_b ? (qgemm_mat){.data = q->w_q, .rs = 1, .cs = k, .zp = 0}
                                   : (qgemm_mat){.data = q->w_q, .rs = n, .cs = 1, .zp = 0};
    float *y = ctx->out[0].data;
    sim_qgemm_s8s8s32_parallel(m, n, k, &a, &b, fold ? bq : NULL, QGEMM_BIAS_PER_N, (int32_t *)(void *)y, n,
                               s + a_bytes + b_bytes + sum_bytes, ctx->pool);
    if (q->w_zp)
        centred_row_sums(aq, m, k, a.rs, a.cs, q->in_zp, row_sums);
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            if (q->w_zp)
                zp_correct(y, i * n + j, w_zp_of(q, j), row_sums[i]);
            y[i * n + j] =
                sim_gemm_c_add(&c, fold, p->beta, i, j,
                               (double)p->alpha * ((double)acc_at(y, i * n + j) * q->in_scale * w_scale_of(q, j)));
        }
    }
    return RD_OK;
}

/* ------------------------------------------------------------------------------------------------- */

rd_status sim_q8_matmul_eval(sim_op_ctx *ctx, const sim_q8_layer *q, rd_error *err)
{
    sim_matmul_shape s;
    rd_status st = sim_matmul_shape_of(ctx, &s, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    const bool act_b = q->w_q == NULL;
    st = check_layer(ctx, q, s.n, !act_b, err);
    if (st != RD_OK)
        return st;
    const int64_t na = rd_tensor_numel(ctx->in[0]), nb = rd_tensor_numel(ctx->in[1]);
    const bool a_full = s.nb == 0 || na == s.n_batch * s.m * s.k;
    const bool one_call = s.b_shared && a_full; /* one B for all of A: fold A's batch into M */
    const int64_t rows = one_call ? s.n_batch * s.m : s.m;
    const bool wzp = !act_b && q->w_zp;
    const size_t a_bytes = align64((size_t)na), b_bytes = act_b ? align64((size_t)nb) : 0;
    const size_t sum_bytes = wzp ? align64((size_t)(rows > s.m ? rows : s.m) * sizeof(uint32_t)) : 0;
    size_t work;
    if (!sim_mul_ok(qgemm_parallel_scratch(rows, s.n, s.k), (size_t)sim_pool_width(ctx->pool), &work))
        return rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): scratch size overflows", ctx->node->name,
                         ctx->node->op_type);
    char *sc = get_scratch(ctx, a_bytes + b_bytes + sum_bytes + work, err);
    if (!sc)
        return err ? err->code : RD_E_NOMEM;
    int8_t *aq = (int8_t *)sc;
    const int8_t *bq = q->w_q;
    quantize_codes(ctx, ctx->in[0]->data, na, q->in_scale, q->in_zp, aq);
    if (act_b) {
        quantize_codes(ctx, ctx->in[1]->data, nb, q->b_scale, q->b_zp, (int8_t *)(sc + a_bytes));
        bq = (const int8_t *)(sc + a_bytes);
    }
    uint32_t *row_sums = (uint32_t *)(void *)(sc + a_bytes + b_bytes);
    void *ws = sc + a_bytes + b_bytes + sum_bytes;
    const int32_t b_zp = act_b ? q->b_zp : 0;
    float *y = ctx->out[0].data;
    int32_t *acc = (int32_t *)(void *)y;
    if (one_call) {
        const qgemm_mat a = {.data = aq, .rs = s.k, .cs = 1, .zp = q->in_zp};
        const qgemm_mat b = {.data = bq, .rs = s.n, .cs = 1, .zp = b_zp};
        sim_qgemm_s8s8s32_parallel(rows, s.n, s.k, &a, &b, NULL, QGEMM_BIAS_NONE, acc, s.n, ws, ctx->pool);
        if (wzp) {
            centred_row_sums(aq, rows, s.k, s.k, 1, q->in_zp, row_sums);
            for (int64_t i = 0; i < rows; i++)
                for (int64_t j = 0; j < s.n; j++)
                    zp_correct(y, i * s.n + j, w_zp_of(q, j), row_sums[i]);
        }
    } else {
        for (int64_t bi = 0; bi < s.n_batch; bi++) {
            int64_t oa, ob;
            sim_matmul_batch_at(&s, bi, &oa, &ob);
            const qgemm_mat a = {.data = aq + oa * s.m * s.k, .rs = s.k, .cs = 1, .zp = q->in_zp};
            const qgemm_mat b = {.data = bq + ob * s.k * s.n, .rs = s.n, .cs = 1, .zp = b_zp};
            sim_qgemm_s8s8s32_parallel(s.m, s.n, s.k, &a, &b, NULL, QGEMM_BIAS_NONE, acc + bi * s.m * s.n, s.n, ws,
                                       ctx->pool);
            if (wzp) {
                centred_row_sums(aq + oa * s.m * s.k, s.m, s.k, s.k, 1, q->in_zp, row_sums);
                for (int64_t i = 0; i < s.m; i++)
                    for (int64_t j = 0; j < s.n; j++)
                        zp_correct(y, (bi * s.m + i) * s.n + j, w_zp_of(q, j), row_sums[i]);
            }
        }
    }
    const int64_t total = s.n_batch * s.m * s.n;
    for (int64_t i = 0; i < total; i++) {
        const double ws_n = act_b ? (double)q->b_scale : w_scale_of(q, i % s.n);
        y[i] = (float)((double)acc_at(y, i) * q->in_scale * ws_n);
    }
    return RD_OK;
}

/* ------------------------------------------------------------------------------------------------- */

typedef struct grid {
    float scale;
    int32_t zp, qmin, qmax;
} grid;

/* The centred code of v on grid g (sim_quantize_centered's arithmetic). */
static double centred_code(float v, const void *user)
{
    const grid *g = user;
    double c;
    sim_quantize_centered(&v, 1, g->scale, g->zp, g->qmin, g->qmax, &c);
    return c;
}

rd_status sim_gap_conv_codes(sim_op_ctx *ctx, float in_scale, int32_t in_zp, int in_bits, int w_bits, bool w_pow2,
                             rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    if (x->dtype != RD_DT_F32 || x->rank != 4 || ctx->out[0].dtype != RD_DT_F32)
        return sim_defer(ctx);
    if (!ctx->out[0].data)
        return RD_OK;
    const int64_t planes = x->dims[0] * x->dims[1], h = x->dims[2], w = x->dims[3];
    if (planes == 0 || h == 0 || w == 0)
        return sim_defer(ctx); /* the float kernel's empty-map rules */
    gap_plan plan;
    gap_plan_make(h, w, &plan);
    double w_code[2];
    float w_scale[2];
    for (int s = 0; s < plan.n_stages; s++) {
        int32_t code;
        sim_quant_weight_one(1.0f / (float)(plan.kh[s] * plan.kw[s]), w_bits, w_pow2, &w_scale[s], &code);
        w_code[s] = code;
    }
    const size_t xb = align64((size_t)(planes * h * w) * sizeof(double));
    const size_t mb = (size_t)((h / plan.kh[0]) * (w / plan.kw[0])) * sizeof(double);
    char *sc = get_scratch(ctx, xb + mb, err);
    if (!sc)
        return err ? err->code : RD_E_NOMEM;
    const grid g = {
        .scale = in_scale, .zp = in_zp, .qmin = in_bits == 8 ? -128 : -32768, .qmax = in_bits == 8 ? 127 : 32767};
    double *codes = (double *)(void *)sc;
    sim_quantize_centered(x->data, planes * h * w, in_scale, in_zp, g.qmin, g.qmax, codes);
    gap_conv_int(codes, planes, h, w, &plan, w_code, w_scale, in_scale, centred_code, &g, (double *)(void *)(sc + xb),
                 ctx->out[0].data);
    return RD_OK;
}

rd_status sim_q8_gap_conv_eval(sim_op_ctx *ctx, const sim_q8_layer *q, rd_error *err)
{
    if (!scale_ok(q->in_scale) || !zp_ok(q->in_zp))
        return rd_errorf(err, RD_E_INVAL,
                         "node '%s' (%s): input scale %g / zero point %d are not valid int8 parameters",
                         ctx->node->name, ctx->node->op_type, (double)q->in_scale, (int)q->in_zp);
    return sim_gap_conv_codes(ctx, q->in_scale, q->in_zp, 8, 8, false, err);
}

/*
 * quant16_eval.c: the wide integer layers (int16 activations; int16 or int8 weights): Conv, ConvTranspose,
 * Gemm and MatMul accumulating exactly (contracts in quant.h). Codes travel as integer-valued doubles so
 * that OpenBLAS dgemm and the double conv (kernels/conv_f64.c) sum them exactly; shapes are checked by the
 * rules the float ops use (ops/linear_shapes.h).
 */
#include "quant.h"
#include "kernels/blas_threads.h"
#include "kernels/conv_f64.h"
#include "ops/linear_shapes.h"

#include <cblas.h>
#include <math.h>

static size_t align64(size_t v)
{
    return (v + 63) & ~(size_t)63;
}

static bool grid_ok(float scale, int32_t zp, int bits)
{
    const int32_t lo = bits == 8 ? -128 : -32768, hi = bits == 8 ? 127 : 32767;
    return scale > 0 && isfinite(scale) && zp >= lo && zp <= hi && (bits == 8 || bits == 16);
}

static void centred(const float *x, int64_t n, float scale, int32_t zp, int bits, double *out)
{
    if (bits == 8)
        sim_quantize_centered(x, n, scale, zp, -128, 127, out);
    else
        sim_quantize_centered(x, n, scale, zp, -32768, 32767, out);
}

static rd_status check_layer(const sim_op_ctx *ctx, const sim_q16_layer *q, int64_t n_chan, int64_t k, bool need_w,
                             rd_error *err)
{
    const char *nm = ctx->node->name, *op = ctx->node->op_type;
    if (!grid_ok(q->in_scale, q->in_zp, q->in_bits))
        return rd_errorf(err, RD_E_INVAL,
                         "node '%s' (%s): input scale %g / zero point %d are not valid int%d parameters", nm, op,
                         (double)q->in_scale, (int)q->in_zp, q->in_bits);
    if (k > SIM_ACC16_MAX_K)
        return rd_errorf(err, RD_E_LIMIT,
                         "node '%s' (%s): %lld taps per output exceed the %lld the exact int16 "
                         "accumulation supports",
                         nm, op, (long long)k, (long long)SIM_ACC16_MAX_K);
    if (!need_w) {
        if (!grid_ok(q->b_scale, q->b_zp, q->b_bits))
            return rd_errorf(err, RD_E_INVAL,
                             "node '%s' (%s): input 1 scale %g / zero point %d are not valid int%d "
                             "parameters",
                             nm, op, (double)q->b_scale, (int)q->b_zp, q->b_bits);
        return RD_OK;
    }
    if (!q->w_c || !q->w_scale)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): no quantized weights", nm, op);
    return sim_check_weight_scales(ctx, q->w_scale, NULL, q->n_w_scale, n_chan, err);
}

static double w_scale_of(const sim_q16_layer *q, int64_t c)
{
    return q->w_scale[q->n_w_scale == 1 ? 0 : c];
}

static void *get_scratch(sim_op_ctx *ctx, size_t bytes, rd_error *err)
{
    return sim_scratch_get(ctx, bytes ? bytes : 64, err);
}

typedef enum { CONV_FWD, CONV_TRANSPOSED } conv_dir;

static rd_status conv_eval(sim_op_ctx *ctx, const sim_q16_layer *q, conv_dir dir, rd_error *err)
{
    conv_geom g;
    rd_status st = dir == CONV_FWD ? sim_conv_geometry(ctx, &g, err) : sim_conv_transpose_geometry(ctx, &g, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    const int64_t ksz = conv_prod(g.k, g.nsp);
    const int64_t taps = (g.in_c / g.group) * ksz; /* products summed into one output, at most */
    st = check_layer(ctx, q, g.out_c, taps, true, err);
    if (st != RD_OK)
        return st;
    conv_plan plan;
    if (dir == CONV_FWD)
        conv_plan_f64(&g, &plan);
    else
        conv_transpose_plan_f64(&g, &plan);
    const int64_t nx = rd_tensor_numel(ctx->in[0]), ny = rd_tensor_numel(&ctx->out[0]);
    const size_t xb = align64((size_t)nx * sizeof(double)), yb = align64((size_t)ny * sizeof(double)),
                 bb = align64((size_t)g.out_c * sizeof(double));
    size_t work;
    if (!sim_mul_ok(plan.scratch, (size_t)sim_pool_width(ctx->pool), &work))
        return rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): scratch size overflows", ctx->node->name,
                         ctx->node->op_type);
    char *s = get_scratch(ctx, xb + yb + bb + work, err);
    if (!s)
        return err ? err->code : RD_E_NOMEM;
    double *xc = (double *)(void *)s, *acc = (double *)(void *)(s + xb), *bias = NULL;
    if (nx > 0)
        centred(ctx->in[0]->data, nx, q->in_scale, q->in_zp, q->in_bits, xc);
    const rd_tensor *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if (b && b->data) {
        bias = (double *)(void *)(s + xb + yb);
        for (int64_t c = 0; c < g.out_c; c++)
            bias[c] = sim_quant_bias_wide(((const float *)b->data)[c], (double)q->in_scale * w_scale_of(q, c));
    }
    double *scratch = (double *)(void *)(s + xb + yb + bb);
    if (dir == CONV_FWD)
        conv_f64(&g, &plan, xc, q->w_c, bias, acc, scratch, ctx->pool);
    else
        conv_transpose_f64(&g, &plan, xc, q->w_c, bias, acc, scratch, ctx->pool);
    const int64_t plane = conv_prod(g.out, g.nsp);
    float *y = ctx->out[0].data;
    for (int64_t i = 0; i < ny; i++)
        y[i] = (float)(acc[i] * q->in_scale * w_scale_of(q, (i / plane) % g.out_c));
    return RD_OK;
}

rd_status sim_q16_conv_eval(sim_op_ctx *ctx, const sim_q16_layer *q, rd_error *err)
{
    return conv_eval(ctx, q, CONV_FWD, err);
}

rd_status sim_q16_conv_transpose_eval(sim_op_ctx *ctx, const sim_q16_layer *q, rd_error *err)
{
    return conv_eval(ctx, q, CONV_TRANSPOSED, err);
}

rd_status sim_q16_gemm_eval(sim_op_ctx *ctx, const sim_q16_layer *q, rd_error *err)
{
    const sim_gemm_params *p = ctx->params;
    int64_t m = 0, n = 0, k = 0;
    rd_status st = sim_gemm_dims(ctx, &m, &n, &k, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    st = check_layer(ctx, q, n, k, true, err);
    if (st != RD_OK)
        return st;
    const sim_gemm_c c = sim_gemm_c_of(ctx, m, n);
    const bool fold = c.data && q->c_const && c.row_vector && p->alpha != 0.0f;
    const size_t ab = align64((size_t)(m * k) * sizeof(double)), yb = align64((size_t)(m * n) * sizeof(double));
    char *s = get_scratch(ctx, ab + yb, err);
    if (!s)
        return err ? err->code : RD_E_NOMEM;
    double *a = (double *)(void *)s, *acc = (double *)(void *)(s + ab);
    if (m * k > 0)
        centred(ctx->in[0]->data, m * k, q->in_scale, q->in_zp, q->in_bits, a);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            acc[i * n + j] = fold ? sim_quant_bias_wide((double)p->beta * c.data[j * c.cs_col] / p->alpha,
                                                        (double)q->in_scale * w_scale_of(q, j))
                                  : 0.0;
    blas_use_one_thread();
    if (m > 0 && n > 0 && k > 0)
        cblas_dgemm(CblasRowMajor, p->trans_a ? CblasTrans : CblasNoTrans, p->trans_b ? CblasTrans : CblasNoTrans,
                    (int)m, (int)n, (int)k, 1.0, a, p->trans_a ? (int)m : (int)k, q->w_c, p->trans_b ? (int)k : (int)n,
                    1.0, acc, (int)n);
    float *y = ctx->out[0].data;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            y[i * n + j] = sim_gemm_c_add(&c, fold, p->beta, i, j,
                                          (double)p->alpha * (acc[i * n + j] * q->in_scale * w_scale_of(q, j)));
    return RD_OK;
}

rd_status sim_q16_matmul_eval(sim_op_ctx *ctx, const sim_q16_layer *q, rd_error *err)
{
    sim_matmul_shape s;
    rd_status st = sim_matmul_shape_of(ctx, &s, err);
    if (st != RD_OK || !ctx->out[0].data)
        return st;
    const bool act_b = q->w_c == NULL;
    st = check_layer(ctx, q, s.n, s.k, !act_b, err);
    if (st != RD_OK)
        return st;
    const int64_t na = rd_tensor_numel(ctx->in[0]), nb = rd_tensor_numel(ctx->in[1]);
    const int64_t total = s.n_batch * s.m * s.n;
    const size_t ab = align64((size_t)na * sizeof(double)), bb = act_b ? align64((size_t)nb * sizeof(double)) : 0,
                 yb = align64((size_t)total * sizeof(double));
    char *sc = get_scratch(ctx, ab + bb + yb, err);
    if (!sc)
        return err ? err->code : RD_E_NOMEM;
    double *a = (double *)(void *)sc, *acc = (double *)(void *)(sc + ab + bb);
    const double *b = q->w_c;
    if (na > 0)
        centred(ctx->in[0]->data, na, q->in_scale, q->in_zp, q->in_bits, a);
    if (act_b) {
        double *bc = (double *)(void *)(sc + ab);
        if (nb > 0)
            centred(ctx->in[1]->data, nb, q->b_scale, q->b_zp, q->b_bits, bc);
        b = bc;
    }
    blas_use_one_thread();
    for (int64_t bi = 0; bi < s.n_batch; bi++) {
        int64_t oa, ob;
        sim_matmul_batch_at(&s, bi, &oa, &ob);
        double *c = acc + bi * s.m * s.n;
        if (s.k == 0) {
            for (int64_t i = 0; i < s.m * s.n; i++)
                c[i] = 0.0;
        } else if (s.m > 0 && s.n > 0) {
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s.m, (int)s.n, (int)s.k, 1.0,
                        a + oa * s.m * s.k, (int)s.k, b + ob * s.k * s.n, (int)s.n, 0.0, c, (int)s.n);
        }
    }
    float *y = ctx->out[0].data;
    for (int64_t i = 0; i < total; i++) {
        const double ws = act_b ? (double)q->b_scale : w_scale_of(q, i % s.n);
        y[i] = (float)(acc[i] * q->in_scale * ws);
    }
    return RD_OK;
}

rd_status sim_q16_gap_conv_eval(sim_op_ctx *ctx, const sim_q16_layer *q, rd_error *err)
{
    if (!grid_ok(q->in_scale, q->in_zp, q->in_bits))
        return rd_errorf(err, RD_E_INVAL,
                         "node '%s' (%s): input scale %g / zero point %d are not valid int%d parameters",
                         ctx->node->name, ctx->node->op_type, (double)q->in_scale, (int)q->in_zp, q->in_bits);
    return sim_gap_conv_codes(ctx, q->in_scale, q->in_zp, q->in_bits, q->w_bits, q->w_pow2, err);
}

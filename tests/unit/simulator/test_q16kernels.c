/*
 * test_q16kernels.c: the int16 layers (quant16_eval.c, kernels/conv_f64.c) against naive int64 loops, and
 * the int16 quantization math (parameters from ranges, fake-quantization, wide weights).
 *
 * The evals' float outputs must equal, bit for bit, (float)(acc * in_scale * w_scale[c]) with acc the exact
 * int64 sum of (x_q - zp) * w_q (+ the integer bias). Inputs are int16 codes (zero points at both extremes
 * of [-32768, 32767]) or int8 codes; weights 16-bit or 8-bit (w8a16), per channel or per tensor. Shapes are
 * drawn from a seeded generator: groups, depthwise, dilations, pads, strides, auto_pad, 1-D to 3-D.
 */
#include "rd_test.h"
#include "free_all.h"
#include "qkernel_harness.h"
#include "quant.h"
#include "ops/linear_shapes.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

typedef struct grid {
    int bits;
    int32_t zp, lo, hi;
    float scale;
} grid;

static grid pick_grid(uint32_t *s, int bits)
{
    static const int32_t z16[] = {-32768, 32767, 0, -1, 12345};
    static const int32_t z8[] = {-128, 127, 0, 55, -7};
    grid g = {.bits = bits, .lo = bits == 8 ? -128 : -32768, .hi = bits == 8 ? 127 : 32767};
    g.zp = bits == 8 ? z8[qk_rng(s) % 5] : z16[qk_rng(s) % 5];
    g.scale = (bits == 8 ? 0.02f : 0.0003f) + (float)qk_rr(s, 0, 100) / (bits == 8 ? 1000.0f : 300000.0f);
    return g;
}

/* Float activations that are exact dequantized codes of g; codes in q. */
static void make_act(uint32_t *s, int64_t n, const grid *g, int32_t *q, float *x)
{
    for (int64_t i = 0; i < n; i++) {
        q[i] = (int32_t)qk_rr(s, g->lo, g->hi);
        x[i] = g->scale * (float)(q[i] - g->zp);
    }
}

static double *as_doubles(const int16_t *q, int64_t n)
{
    double *d = malloc((size_t)n * sizeof *d + 8);
    for (int64_t i = 0; i < n; i++)
        d[i] = q[i];
    return d;
}

/* ------------------------------------------------------------------------------------------------- */
/* Conv and ConvTranspose */

static int run_conv_case(const qk_conv_case *cc, bool transpose, uint32_t *s, int case_no)
{
    qk_conv_io io;
    qk_conv_begin(cc, transpose, &io);
    const grid gr = pick_grid(s, cc->in_bits);
    int32_t *xq = malloc((size_t)io.nx * 4 + 4);
    make_act(s, io.nx, &gr, xq, io.x);
    if (!qk_conv_setup(cc, s, &io, case_no)) {
        qk_conv_end(&io);
        free(xq);
        return 1;
    }
    int16_t *wq = NULL;
    float *ws = NULL;
    int nws = 0;
    rd_error err;
    rd_status st = sim_quant_weights_wide(&io.tw, transpose ? 1 : 0, transpose ? cc->group : 1, cc->per_tensor,
                                          cc->w_bits, false, &wq, &ws, &nws, &err);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    double *wc = as_doubles(wq, io.nw);
    const sim_q16_layer q = {
        .in_scale = gr.scale, .in_zp = gr.zp, .in_bits = gr.bits, .w_c = wc, .w_scale = ws, .n_w_scale = nws};
    int64_t *bq = malloc((size_t)cc->m * 8);
    for (int64_t c = 0; c < cc->m; c++)
        bq[c] = (int64_t)sim_quant_bias_wide(io.b[c], (double)gr.scale * ws[nws == 1 ? 0 : c]);
    int64_t *want = malloc((size_t)io.ny * 8 + 8);
    int32_t *w_codes = qk_widen_s16(wq, io.nw);
    const qk_conv_ref ref = {.x = xq, .x_zp = gr.zp, .w = w_codes, .bias = cc->bias ? bq : NULL};
    qk_conv_reference(&io, &ref, want);
    st =
        transpose ? sim_q16_conv_transpose_eval(&io.r.ctx, &q, &io.r.err) : sim_q16_conv_eval(&io.r.ctx, &q, &io.r.err);
    const qk_scales sc = {gr.scale, ws, nws, false};
    const int fails = qk_conv_check(&io, st, want, &sc, case_no);
    RD_FREE_ALL(want, w_codes, bq, wq, wc, ws, xq);
    qk_conv_end(&io);
    return fails;
}

/* The input's and the weights' widths of a random case: a quarter of each at 8 bits. */
static void draw_widths(uint32_t *s, int case_no, qk_conv_case *cc)
{
    (void)case_no;
    cc->in_bits = (qk_rng(s) % 4) == 0 ? 8 : 16;
    cc->w_bits = (qk_rng(s) % 4) == 0 ? 8 : 16;
}

/* A fixed geometry with 16-bit inputs and weights. */
static int run_conv_case16(qk_conv_case cc, bool transpose, uint32_t *s, int case_no)
{
    cc.in_bits = cc.w_bits = 16;
    return run_conv_case(&cc, transpose, s, case_no);
}

static void test_conv_random(void)
{
    uint32_t s = 4242;
    int fails = qk_run_random_convs(run_conv_case, draw_widths, false, &s, 120);
    /* pointwise (straight dgemm), depthwise with pads, and several im2col tiles */
    fails += run_conv_case16(qk_pointwise_case(2, 20, 13, 1, 7, 9), false, &s, 1000);
    fails += run_conv_case16(qk_conv3x3_case(8, 8, 8, 13, 10, 2), false, &s, 1001);
    fails += run_conv_case16(qk_conv3x3_case(32, 2, 1, 100, 100, 1), false, &s, 1002);
    CU_ASSERT_EQUAL(fails, 0);
}

static void test_conv_transpose_random(void)
{
    uint32_t s = 99;
    int fails = qk_run_random_convs(run_conv_case, draw_widths, true, &s, 60);
    fails += run_conv_case16(qk_pointwise_case(1, 6, 4, 2, 5, 4), true, &s, 1000);
    CU_ASSERT_EQUAL(fails, 0);
}

/* ------------------------------------------------------------------------------------------------- */
/* Gemm */

static int64_t bias_wide(double b, double scale)
{
    return (int64_t)sim_quant_bias_wide(b, scale);
}

static int run_gemm_case(uint32_t *s, int case_no)
{
    qk_gemm_case gc;
    qk_gemm_begin(s, &gc);
    const int64_t m = gc.m, n = gc.n, k = gc.k;
    const grid gr = pick_grid(s, (qk_rng(s) % 4) == 0 ? 8 : 16);
    const int w_bits = (qk_rng(s) % 3) == 0 ? 8 : 16;
    int32_t *aq = malloc((size_t)(m * k) * 4);
    make_act(s, m * k, &gr, aq, gc.a);
    qk_gemm_setup(s, &gc);
    int16_t *wq;
    float *ws;
    int nws;
    rd_error err;
    const bool per_tensor = (qk_rng(s) % 3) == 0;
    CU_ASSERT_EQUAL_FATAL(
        sim_quant_weights_wide(&gc.t_b, gc.tb ? 0 : 1, 1, per_tensor, w_bits, false, &wq, &ws, &nws, &err), RD_OK);
    double *wc = as_doubles(wq, k * n);
    const sim_q16_layer q = {.in_scale = gr.scale,
                             .in_zp = gr.zp,
                             .in_bits = gr.bits,
                             .w_c = wc,
                             .w_scale = ws,
                             .n_w_scale = nws,
                             .c_const = gc.c_kind != 4};
    const rd_status st = sim_q16_gemm_eval(&gc.r.ctx, &q, &gc.r.err);
    int32_t *w_codes = qk_widen_s16(wq, k * n);
    int64_t *acc = malloc((size_t)(m * n) * 8);
    qk_ref_gemm(&gc, aq, gr.zp, w_codes, NULL, 1, acc);
    const qk_scales sc = {gr.scale, ws, nws, false};
    const int fails = qk_gemm_check(&gc, st, acc, &sc, bias_wide, case_no);
    RD_FREE_ALL(acc, w_codes, wq, wc, ws, aq);
    qk_gemm_end(&gc);
    return fails;
}

static void test_gemm_random(void)
{
    uint32_t s = 1616;
    CU_ASSERT_EQUAL(qk_run_cases(run_gemm_case, &s, 80), 0);
}

/* ------------------------------------------------------------------------------------------------- */
/* MatMul */

static int run_matmul_case(const qk_mm_case *mc, uint32_t *s, int case_no)
{
    qk_mm_io io;
    qk_mm_begin(mc, &io);
    const int64_t na = io.na, nb = io.nb;
    const grid ga = pick_grid(s, 16), gb = pick_grid(s, (qk_rng(s) & 1) ? 16 : 8);
    int32_t *aq = malloc((size_t)na * 4), *bq = malloc((size_t)nb * 4);
    make_act(s, na, &ga, aq, io.a);
    int16_t *wq = NULL;
    double *wc = NULL;
    float *ws = NULL;
    int nws = 1;
    rd_error err;
    if (mc->act_b) {
        make_act(s, nb, &gb, bq, io.b);
    } else {
        qk_make_f32(s, nb, 1.0f, io.b);
        CU_ASSERT_EQUAL_FATAL(
            sim_quant_weights_wide(&io.tb, mc->rb - 1, 1, mc->rb == 1, 16, false, &wq, &ws, &nws, &err), RD_OK);
        for (int64_t i = 0; i < nb; i++)
            bq[i] = wq[i];
        wc = as_doubles(wq, nb);
    }
    qk_mm_setup(&io);
    const sim_q16_layer q = {.in_scale = ga.scale,
                             .in_zp = ga.zp,
                             .in_bits = 16,
                             .w_c = wc,
                             .w_scale = ws,
                             .n_w_scale = nws,
                             .b_scale = gb.scale,
                             .b_zp = gb.zp,
                             .b_bits = gb.bits};
    const rd_status st = sim_q16_matmul_eval(&io.r.ctx, &q, &io.r.err);
    const qk_mm_ref ref = {.a = aq, .a_zp = ga.zp, .b = bq, .b_zp = mc->act_b ? gb.zp : 0};
    const qk_scales sc = {ga.scale, mc->act_b ? &gb.scale : ws, mc->act_b ? 1 : nws, false};
    const int fails = qk_mm_check(mc, &io, st, &ref, &sc, case_no);
    RD_FREE_ALL(wq, wc, ws, aq, bq);
    qk_mm_end(&io);
    return fails;
}

static void test_matmul(void)
{
    static const qk_mm_case cases[] = {
        {4, 2, {2, 3, 5, 7}, {7, 4}, false}, {2, 3, {5, 7}, {3, 7, 4}, false}, {4, 3, {2, 1, 5, 7}, {3, 7, 4}, true},
        {1, 2, {7}, {7, 4}, false},          {2, 1, {5, 7}, {7}, false},       {3, 3, {4, 9, 300}, {4, 300, 17}, true},
        {2, 2, {1, 1}, {1, 1}, true},
    };
    uint32_t s = 8;
    int fails = 0;
    for (int rep = 0; rep < 3; rep++)
        for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++)
            fails += run_matmul_case(&cases[t], &s, (int)t);
    CU_ASSERT_EQUAL(fails, 0);
}

/* ------------------------------------------------------------------------------------------------- */
/* Quantization math */

static void test_qparams16(void)
{
    float s;
    int32_t zp;
    /* the int8 rule widened: [-1, 1] gives scale 2/65535 and zero point round(-0.5) = 0 (ties to even) */
    sim_qparams16_from_range(-1.0f, 1.0f, false, &s, &zp);
    CU_ASSERT_EQUAL(s, (float)(2.0 / 65535.0));
    CU_ASSERT_EQUAL(zp, 0);
    /* [0, 6] (a Relu6): zero point at the bottom */
    sim_qparams16_from_range(0.0f, 6.0f, false, &s, &zp);
    CU_ASSERT_EQUAL(s, (float)(6.0 / 65535.0));
    CU_ASSERT_EQUAL(zp, -32768);
    /* widened to include 0 */
    sim_qparams16_from_range(2.0f, 4.0f, false, &s, &zp);
    CU_ASSERT_EQUAL(s, (float)(4.0 / 65535.0));
    CU_ASSERT_EQUAL(zp, -32768);
    sim_qparams16_from_range(-4.0f, -2.0f, false, &s, &zp);
    CU_ASSERT_EQUAL(zp, 32767);
    /* -3 .. 1: zp = round(-32768 + 3 * 65535 / 4) = round(16383.25) */
    sim_qparams16_from_range(-3.0f, 1.0f, false, &s, &zp);
    CU_ASSERT_EQUAL(zp, (int32_t)nearbyint(-32768.0 - -3.0 / (double)(4.0 / 65535.0)));
    /* zero width */
    sim_qparams16_from_range(0.0f, 0.0f, false, &s, &zp);
    CU_ASSERT_EQUAL(s, 1.0f);
    CU_ASSERT_EQUAL(zp, 0);
    /* dfp: the smallest power of two holding max|x| in 32767 steps, zero point 0 */
    sim_qparams16_from_range(-1.0f, 0.5f, true, &s, &zp);
    CU_ASSERT_EQUAL(zp, 0);
    CU_ASSERT_EQUAL(s, 0x1p-14f); /* 32767 * 2^-15 < 1 <= 32767 * 2^-14 */
    sim_qparams16_from_range(0.0f, 32767.0f, true, &s, &zp);
    CU_ASSERT_EQUAL(s, 1.0f);
    sim_qparams16_from_range(0.0f, 32768.0f, true, &s, &zp);
    CU_ASSERT_EQUAL(s, 2.0f);
    sim_qparams16_from_range(-3e-3f, 0.0f, true, &s, &zp);
    CU_ASSERT(s >= 3e-3f / 32767.0f && s / 2 < 3e-3f / 32767.0f);
    CU_ASSERT_EQUAL(frexpf(s, &zp), 0.5f); /* a power of two */
}

static void test_fake_quant16(void)
{
    const float scale = 0.5f;
    float x[] = {0.25f, 0.75f, -0.25f, 1.25f, 20000.0f, -20000.0f, NAN, 16383.25f, 0.1f};
    int64_t sat = 0, zero = 0;
    sim_fake_quant_i16(x, 9, scale, 0, &sat, &zero);
    CU_ASSERT_EQUAL(x[0], 0.0f);      /* 0.5 -> 0 (even) */
    CU_ASSERT_EQUAL(x[1], 1.0f);      /* 1.5 -> 2 */
    CU_ASSERT_EQUAL(x[2], -0.0f);     /* -0.5 -> 0 */
    CU_ASSERT_EQUAL(x[3], 1.0f);      /* 2.5 -> 2 */
    CU_ASSERT_EQUAL(x[4], 16383.5f);  /* 40000 -> 32767 */
    CU_ASSERT_EQUAL(x[5], -16384.0f); /* -40000 -> -32768 */
    CU_ASSERT_EQUAL(x[6], 0.0f);
    CU_ASSERT_EQUAL(x[7], 16383.0f); /* 32766.5 -> 32766 (even) */
    CU_ASSERT_EQUAL(sat, 2);
    CU_ASSERT_EQUAL(zero, 3); /* 0.25, -0.25, 0.1 */
    /* an asymmetric grid saturates at its own ends */
    float y[] = {-1.0f, 100.0f};
    sim_fake_quant_i16(y, 2, 1.0f / 65535.0f * 10.0f, -32768, &sat, NULL);
    CU_ASSERT_EQUAL(y[0], 0.0f);
    CU_ASSERT(fabsf(y[1] - 10.0f) < 1e-3f);
    CU_ASSERT_EQUAL(sat, 2);
    /* centred codes */
    const float z[] = {-3.0f, 0.0f, 3.0f, 1e9f, 0.75f};
    double c[5];
    sim_quantize_centered(z, 5, 0.5f, -32768, -32768, 32767, c);
    CU_ASSERT_EQUAL(c[0], 0.0); /* -6 + zp clamps to -32768: centred 0 */
    CU_ASSERT_EQUAL(c[1], 0.0);
    CU_ASSERT_EQUAL(c[2], 6.0);
    CU_ASSERT_EQUAL(c[3], 65535.0);
    CU_ASSERT_EQUAL(c[4], 2.0); /* 1.5 -> 2 */
}

static void test_wide_weights(void)
{
    float w[] = {1.0f, -0.5f, 0.25f, 0.0f, 0.0f, 0.0f, 3.0f, -3.0f};
    rd_tensor t = H_T(RD_DT_F32, w, 4, 2);
    int16_t *q;
    float *s;
    int n;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(sim_quant_weights_wide(&t, 0, 1, false, 16, false, &q, &s, &n, &err), RD_OK);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT_EQUAL(s[0], 1.0f / 32767.0f);
    CU_ASSERT_EQUAL(s[2], 1.0f); /* a channel of zeros */
    CU_ASSERT_EQUAL(q[0], 32767);
    CU_ASSERT_EQUAL(q[1], -16384); /* -16383.5 -> even */
    CU_ASSERT_EQUAL(q[6], 32767);
    CU_ASSERT_EQUAL(q[7], -32767);
    free(q);
    free(s);
    CU_ASSERT_EQUAL_FATAL(sim_quant_weights_wide(&t, 0, 1, true, 8, false, &q, &s, &n, &err), RD_OK);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(s[0], 3.0f / 127.0f);
    CU_ASSERT_EQUAL(q[6], 127);
    free(q);
    free(s);
    /* dfp: powers of two */
    CU_ASSERT_EQUAL_FATAL(sim_quant_weights_wide(&t, 0, 1, false, 16, true, &q, &s, &n, &err), RD_OK);
    CU_ASSERT_EQUAL(s[0], 0x1p-14f); /* 32767 * 2^-15 < 1 */
    CU_ASSERT_EQUAL(q[0], 16384);
    CU_ASSERT_EQUAL(s[3], 0x1p-13f); /* 3 <= 32767 * 2^-13 = 3.9999 */
    free(q);
    free(s);
    /* imported scales that clip */
    const float sc[1] = {1.0f / 32767.0f};
    int64_t sat = 0;
    CU_ASSERT_EQUAL_FATAL(sim_quant_weights_wide_scaled(&t, 0, 1, 16, sc, 1, &q, &sat, &err), RD_OK);
    CU_ASSERT_EQUAL(sat, 2);
    free(q);
    CU_ASSERT_EQUAL(sim_quant_weights_wide_scaled(&t, 0, 1, 17, sc, 1, &q, NULL, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "17 bits"));
}

static void test_bad_layer(void)
{
    qk_zero_conv zc;
    qk_zero_conv_setup(&zc);
    qk_run *r = &zc.r;
    double wc[72] = {0};
    const float ws[3] = {1, 1, 1};
    sim_q16_layer q = {.in_scale = 0.1f, .in_zp = 40000, .in_bits = 16, .w_c = wc, .w_scale = ws, .n_w_scale = 2};
    CU_ASSERT_EQUAL(sim_q16_conv_eval(&r->ctx, &q, &r->err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->err.msg, "int16 parameters"));
    q.in_zp = 200;
    q.in_bits = 8;
    CU_ASSERT_EQUAL(sim_q16_conv_eval(&r->ctx, &q, &r->err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->err.msg, "int8 parameters"));
    q.in_zp = 0;
    q.n_w_scale = 3;
    CU_ASSERT_EQUAL(sim_q16_conv_eval(&r->ctx, &q, &r->err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->err.msg, "3 weight scales for 2"));
    q.n_w_scale = 2;
    CU_ASSERT_EQUAL(sim_q16_conv_eval(&r->ctx, &q, &r->err), RD_OK);
    qk_fini(r);
}

RD_TEST_REGISTER(register_q16kernels)
{
    RD_SUITE("q16kernels", {"Conv int16: random geometries", test_conv_random},
             {"ConvTranspose int16: random geometries", test_conv_transpose_random},
             {"Gemm int16: transposes, alpha/beta, C", test_gemm_random},
             {"MatMul int16: batched, broadcast, activations", test_matmul},
             {"int16 parameters from ranges (asymmetric, dfp)", test_qparams16},
             {"int16 fake-quantization: rounding, saturation", test_fake_quant16},
             {"wide weights: 16/8 bits, dfp, imported", test_wide_weights},
             {"int16 evals: invalid layers", test_bad_layer});
}

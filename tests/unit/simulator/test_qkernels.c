/*
 * test_qkernels.c: the INT8 simulator's integer kernels and layer evaluations against naive int64 loops.
 *
 * Accumulators must be identical (the kernels' int32 against the reference's int64 wrapped to int32), and
 * the evals' float outputs identical to the reference's (float)((double)acc * in_scale * w_scale[c]).
 * Shapes are drawn from a seeded generator: groups, depthwise, dilations, pads, strides, auto_pad, 1-D to
 * 3-D, Gemm transposes and C variants, MatMul batching and broadcasting, zero points at both extremes.
 */
#include "rd_test.h"
#include "free_all.h"
#include "qkernel_harness.h"
#include "quant.h"
#include "kernels/qconv.h"
#include "kernels/qgemm.h"
#include "ops/linear_shapes.h"

#include <stdio.h>

static int32_t pick_zp(uint32_t *s)
{
    static const int32_t z[] = {-128, 127, 0, -1, 55};
    return z[qk_rng(s) % 5];
}

/* ------------------------------------------------------------------------------------------------- */
/* qgemm */

static void ref_qgemm(int64_t m, int64_t n, int64_t k, const qgemm_mat *a, const qgemm_mat *b, const int32_t *bias,
                      qgemm_bias mode, int32_t *c)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t acc = !bias ? 0 : mode == QGEMM_BIAS_PER_N ? bias[j] : mode == QGEMM_BIAS_PER_M ? bias[i] : 0;
            for (int64_t p = 0; p < k; p++)
                acc += (int64_t)(a->data[i * a->rs + p * a->cs] - a->zp) * (b->data[p * b->rs + j * b->cs] - b->zp);
            c[i * n + j] = qk_wrap32(acc);
        }
}

static void test_qgemm_shapes(void)
{
    static const int64_t shapes[][3] = {{1, 1, 1},     {7, 17, 3},   {6, 16, 256},    {6, 16, 257},   {13, 33, 600},
                                        {97, 1030, 5}, {2, 5, 0},    {0, 4, 4},       {100, 20, 513}, {5, 1, 31},
                                        {1, 40, 301},  {1, 1030, 7}, {1, 1000, 1280}, {37, 1, 16},    {3, 1, 47}};
    uint32_t s = 42;
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        for (int variant = 0; variant < 4; variant++) {
            const int64_t m = shapes[t][0], n = shapes[t][1], k = shapes[t][2];
            int8_t *a = malloc((size_t)(m * k) + 1), *b = malloc((size_t)(k * n) + 1);
            for (int64_t i = 0; i < m * k; i++)
                a[i] = (int8_t)qk_rng(&s);
            for (int64_t i = 0; i < k * n; i++)
                b[i] = (int8_t)qk_rng(&s);
            const bool ta = variant & 1, tb = variant & 2;
            const qgemm_mat am = {.data = a, .rs = ta ? 1 : k, .cs = ta ? m : 1, .zp = pick_zp(&s)};
            const qgemm_mat bm = {.data = b, .rs = tb ? 1 : n, .cs = tb ? k : 1, .zp = pick_zp(&s)};
            int32_t bias[1100];
            for (int i = 0; i < 1100; i++)
                bias[i] = (int32_t)qk_rng(&s);
            const qgemm_bias mode = (qgemm_bias)(variant % 3);
            int32_t *want = malloc((size_t)(m * n) * 4 + 4), *got = malloc((size_t)(m * n) * 4 + 4);
            int32_t *got_p = malloc((size_t)(m * n) * 4 + 4);
            void *work = aligned_alloc(64, qgemm_workspace_bytes(m, n, k) + 64);
            ref_qgemm(m, n, k, &am, &bm, bias, mode, want);
            sim_qgemm_s8s8s32(m, n, k, &am, &bm, bias, mode, got, n, work);
            sim_qgemm_s8s8s32_portable(m, n, k, &am, &bm, bias, mode, got_p, n, work);
            const size_t bytes = (size_t)(m * n) * sizeof(int32_t);
            if (memcmp(want, got, bytes) != 0 || memcmp(want, got_p, bytes) != 0) {
                fprintf(stderr, "qgemm mismatch m=%lld n=%lld k=%lld variant %d\n", (long long)m, (long long)n,
                        (long long)k, variant);
                CU_FAIL("qgemm accumulators differ from the reference");
            }
            RD_FREE_ALL(a, b, want, got, got_p, work);
        }
    }
}

/* An int8 layer: the input's parameters and the weights as quantized (w_zp NULL for symmetric ones). */
static sim_q8_layer q8_layer(float in_scale, int32_t in_zp, const int8_t *w_q, const float *w_scale, int n_w_scale,
                             const int32_t *w_zp)
{
    return (sim_q8_layer){
        .in_scale = in_scale, .in_zp = in_zp, .w_q = w_q, .w_scale = w_scale, .n_w_scale = n_w_scale, .w_zp = w_zp};
}

/* Float activations that are exact dequantized codes. */
static void make_act(uint32_t *s, int64_t n, float scale, int32_t zp, int8_t *q, float *x)
{
    for (int64_t i = 0; i < n; i++) {
        q[i] = (int8_t)qk_rr(s, -128, 127);
        x[i] = scale * (float)(q[i] - zp);
    }
}

/* ------------------------------------------------------------------------------------------------- */
/* Conv and ConvTranspose */

/* Runs one case through the eval and the slice kernels; returns the number of failures. */
static int run_conv_case(const qk_conv_case *cc, bool transpose, uint32_t *s, int case_no)
{
    qk_conv_io io;
    qk_conv_begin(cc, transpose, &io);
    const int64_t nx = io.nx, nw = io.nw;
    const float in_scale = 0.02f + (float)qk_rr(s, 0, 100) / 1000.0f;
    int8_t *xq = malloc((size_t)nx + 1);
    make_act(s, nx, in_scale, cc->zp, xq, io.x);
    if (!qk_conv_setup(cc, s, &io, case_no)) {
        qk_conv_end(&io);
        free(xq);
        return 1;
    }
    const conv_geom g = io.g;
    const int64_t ny = io.ny;
    const char *op = io.op;
    rd_tensor *tw = &io.tw;
    int fails = 0;
    rd_status st;
    int8_t *wq = NULL;
    float *ws = NULL;
    int32_t *wzp = NULL;
    int nws = 0;
    rd_error err;
    if (cc->asym)
        st = sim_quant_weights_i8_asym(tw, transpose ? 1 : 0, transpose ? cc->group : 1, cc->per_tensor, &wq, &ws, &wzp,
                                       &nws, &err);
    else
        st = transpose ? sim_quant_weights_i8_grouped(tw, 1, cc->group, cc->per_tensor, &wq, &ws, &nws, &err)
                       : sim_quant_weights_i8(tw, 0, cc->per_tensor, &wq, &ws, &nws, &err);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    const sim_q8_layer q = q8_layer(in_scale, cc->zp, wq, ws, nws, wzp);
    int32_t *bq = malloc((size_t)cc->m * 4);
    int64_t *bq_wide = malloc((size_t)cc->m * 8);
    for (int64_t c = 0; c < cc->m; c++)
        bq_wide[c] = bq[c] = sim_quant_bias_i32(io.b[c], (double)in_scale * ws[nws == 1 ? 0 : c]);
    int32_t *got = malloc((size_t)ny * 4 + 4), *want_sym = malloc((size_t)ny * 4 + 4);
    int64_t *want = malloc((size_t)ny * 8 + 8), *want_sym_wide = malloc((size_t)ny * 8 + 8);
    int32_t *x_codes = qk_widen_s8(xq, nx), *w_codes = qk_widen_s8(wq, nw);
    qk_conv_ref ref = {
        .x = x_codes, .x_zp = cc->zp, .w = w_codes, .w_zp = wzp, .n_w_zp = nws, .bias = cc->bias ? bq_wide : NULL};
    qk_conv_reference(&io, &ref, want);
    ref.w_zp = NULL;
    qk_conv_reference(&io, &ref, want_sym_wide);
    for (int64_t i = 0; i < ny; i++)
        want_sym[i] = qk_wrap32(want_sym_wide[i]);
    /* accumulators straight from the kernels, on one thread and on a pool of three */
    conv_plan plan;
    if (transpose)
        qconv_transpose_plan_s8(&g, &plan);
    else
        qconv_plan_s8(&g, &plan);
    const int64_t nwq = transpose ? g.in_c * (g.out_c / g.group) * conv_prod(g.k, g.nsp)
                                  : g.out_c * (g.in_c / g.group) * conv_prod(g.k, g.nsp);
    void *scratch = aligned_alloc(64, (3 * plan.scratch + 64) / 64 * 64);
    float *xc = malloc((size_t)(nx + nwq) * sizeof(float) + 4), *wc = xc + nx;
    for (int64_t i = 0; i < nx; i++)
        xc[i] = (float)(xq[i] - cc->zp);
    for (int64_t i = 0; i < nwq; i++)
        wc[i] = wq[i];
    const qconv_args qa = {
        .xq = xq, .xc = xc, .x_zp = cc->zp, .wq = wq, .wc = wc, .bias = cc->bias ? bq : NULL, .y = got};
    int32_t *got3 = malloc((size_t)ny * 4 + 4);
    rd_pool *pool3 = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_pool_create(3, &pool3, NULL), RD_OK);
    const qconv_args qa3 = {
        .xq = xq, .xc = xc, .x_zp = cc->zp, .wq = wq, .wc = wc, .bias = cc->bias ? bq : NULL, .y = got3};
    if (transpose) {
        qconv_transpose_s8(&g, &plan, &qa, scratch, NULL, NULL, NULL);
        qconv_transpose_s8(&g, &plan, &qa3, scratch, pool3, NULL, NULL);
    } else {
        qconv_s8(&g, &plan, &qa, scratch, NULL, NULL, NULL);
        qconv_s8(&g, &plan, &qa3, scratch, pool3, NULL, NULL);
    }
    if (memcmp(got, got3, (size_t)ny * 4) != 0) {
        fprintf(stderr, "%s case %d (kind %d): accumulators differ on three threads\n", op, case_no, (int)plan.kind);
        fails++;
    }
    free(got3);
    free(xc);
    rd_pool_destroy(pool3);
    /* the kernels compute the symmetric product: the zero point is the eval's correction */
    if (memcmp(got, want_sym, (size_t)ny * 4) != 0) {
        fprintf(stderr, "%s case %d (kind %d): accumulators differ\n", op, case_no, (int)plan.kind);
        fails++;
    }
    /* the eval's floats */
    st = transpose ? sim_q8_conv_transpose_eval(&io.r.ctx, &q, &io.r.err) : sim_q8_conv_eval(&io.r.ctx, &q, &io.r.err);
    const qk_scales sc = {in_scale, ws, nws, true};
    fails += qk_conv_check(&io, st, want, &sc, case_no);
    RD_FREE_ALL(scratch, want, want_sym, want_sym_wide, x_codes, w_codes, got, bq, bq_wide, wq, ws, wzp, xq);
    qk_conv_end(&io);
    return fails;
}

/* The input zero point of a random case; every third case (1, 4, ...) with asymmetric weights. */
static void draw_zero_points(uint32_t *s, int case_no, qk_conv_case *cc)
{
    cc->zp = pick_zp(s);
    cc->asym = case_no % 3 == 1;
}

static void test_qconv_random(void)
{
    uint32_t s = 2024;
    CU_ASSERT_EQUAL(qk_run_random_convs(run_conv_case, draw_zero_points, false, &s, 120), 0);
}

static void test_qconv_fixed(void)
{
    uint32_t s = 7;
    int fails = 0;
    /* pointwise (straight GEMM), 2-D */
    qk_conv_case pw = qk_pointwise_case(2, 20, 13, 1, 7, 9);
    pw.zp = -128;
    fails += run_conv_case(&pw, false, &s, 1000);
    /* depthwise 3x3 stride 2 with pads, zero point 127 */
    qk_conv_case dw = qk_conv3x3_case(8, 8, 8, 13, 10, 2);
    dw.zp = 127;
    fails += run_conv_case(&dw, false, &s, 1001);
    /* several im2col tiles: 64 x 3 x 3 rows over 130 x 130 positions exceed the 8 MB budget */
    qk_conv_case big = qk_conv3x3_case(64, 2, 1, 130, 130, 1);
    big.zp = 3;
    fails += run_conv_case(&big, false, &s, 1002);
    /* a 1-D conv with K > QGEMM_KC and odd */
    qk_conv_case deep = {.nsp = 1,
                         .batch = 1,
                         .c = 87,
                         .m = 7,
                         .group = 1,
                         .in = {20},
                         .k = {3},
                         .stride = {1},
                         .dil = {2},
                         .pads = {2, 1},
                         .bias = false,
                         .zp = -128};
    fails += run_conv_case(&deep, false, &s, 1003);
    /* a first layer (3 channels to 24, stride 2, two images): its input split once per image, before the tasks */
    qk_conv_case first = qk_conv3x3_case(3, 24, 1, 40, 36, 2);
    first.batch = 2;
    first.zp = -7;
    fails += run_conv_case(&first, false, &s, 1004);
    /* the same with asymmetric weights (the big one is skipped: its tiles are already covered) */
    pw.asym = dw.asym = deep.asym = true;
    fails += run_conv_case(&pw, false, &s, 1010);
    fails += run_conv_case(&dw, false, &s, 1011);
    fails += run_conv_case(&deep, false, &s, 1013);
    CU_ASSERT_EQUAL(fails, 0);
}

static void test_qconv_transpose_random(void)
{
    uint32_t s = 77;
    int fails = qk_run_random_convs(run_conv_case, draw_zero_points, true, &s, 60);
    qk_conv_case pw = qk_pointwise_case(1, 6, 4, 2, 5, 4);
    pw.zp = 127;
    fails += run_conv_case(&pw, true, &s, 1000);
    pw.asym = true;
    fails += run_conv_case(&pw, true, &s, 1010);
    CU_ASSERT_EQUAL(fails, 0);
}

/* ------------------------------------------------------------------------------------------------- */
/* Gemm */

static int64_t bias_i32(double b, double scale)
{
    return sim_quant_bias_i32(b, scale);
}

static int run_gemm_case(uint32_t *s, int case_no)
{
    qk_gemm_case gc;
    qk_gemm_begin(s, &gc);
    const int64_t m = gc.m, n = gc.n, k = gc.k;
    const int32_t zp = pick_zp(s);
    const float in_scale = 0.01f + (float)qk_rr(s, 0, 100) / 3000.0f;
    int8_t *aq = malloc((size_t)(m * k));
    make_act(s, m * k, in_scale, zp, aq, gc.a);
    qk_gemm_setup(s, &gc);
    int8_t *wq;
    float *ws;
    int32_t *wzp = NULL;
    int nws;
    rd_error err;
    const bool per_tensor = (qk_rng(s) % 3) == 0, asym = (qk_rng(s) % 2) == 0;
    rd_status qst = asym ? sim_quant_weights_i8_asym(&gc.t_b, gc.tb ? 0 : 1, 1, per_tensor, &wq, &ws, &wzp, &nws, &err)
                         : sim_quant_weights_i8(&gc.t_b, gc.tb ? 0 : 1, per_tensor, &wq, &ws, &nws, &err);
    CU_ASSERT_EQUAL_FATAL(qst, RD_OK);
    sim_q8_layer q = q8_layer(in_scale, zp, wq, ws, nws, wzp);
    q.c_const = gc.c_kind != 4;
    const rd_status st = sim_q8_gemm_eval(&gc.r.ctx, &q, &gc.r.err);
    int32_t *a_codes = qk_widen_s8(aq, m * k), *w_codes = qk_widen_s8(wq, k * n);
    int64_t *acc = malloc((size_t)(m * n) * 8);
    qk_ref_gemm(&gc, a_codes, zp, w_codes, wzp, nws, acc);
    const qk_scales sc = {in_scale, ws, nws, true};
    const int fails = qk_gemm_check(&gc, st, acc, &sc, bias_i32, case_no);
    RD_FREE_ALL(acc, a_codes, w_codes, wq, ws, wzp, aq);
    qk_gemm_end(&gc);
    return fails;
}

static void test_qgemm_eval_random(void)
{
    uint32_t s = 31337;
    CU_ASSERT_EQUAL(qk_run_cases(run_gemm_case, &s, 80), 0);
}

/* ------------------------------------------------------------------------------------------------- */
/* MatMul */

static int run_matmul_case(const qk_mm_case *mc, bool asym, uint32_t *s, int case_no)
{
    qk_mm_io io;
    qk_mm_begin(mc, &io);
    const int64_t na = io.na, nb = io.nb;
    const int32_t zp = pick_zp(s), bzp = pick_zp(s);
    const float in_scale = 0.05f, b_scale = 0.03f + (float)qk_rr(s, 0, 10) / 100.0f;
    int8_t *aq = malloc((size_t)na), *bq = malloc((size_t)nb);
    make_act(s, na, in_scale, zp, aq, io.a);
    int8_t *wq = NULL;
    float *ws = NULL;
    int32_t *wzp = NULL;
    int nws = 1;
    rd_error err;
    if (mc->act_b) {
        make_act(s, nb, b_scale, bzp, bq, io.b);
    } else if (asym) {
        qk_make_f32(s, nb, 1.0f, io.b);
        CU_ASSERT_EQUAL_FATAL(sim_quant_weights_i8_asym(&io.tb, mc->rb - 1, 1, mc->rb == 1, &wq, &ws, &wzp, &nws, &err),
                              RD_OK);
        memcpy(bq, wq, (size_t)nb);
    } else {
        qk_make_f32(s, nb, 1.0f, io.b);
        CU_ASSERT_EQUAL_FATAL(sim_quant_weights_i8(&io.tb, mc->rb - 1, mc->rb == 1, &wq, &ws, &nws, &err), RD_OK);
        memcpy(bq, wq, (size_t)nb);
    }
    qk_mm_setup(&io);
    sim_q8_layer q = q8_layer(in_scale, zp, wq, ws, nws, wzp);
    q.b_scale = b_scale; /* used when B is an activation (no weights) */
    q.b_zp = bzp;
    const rd_status st = sim_q8_matmul_eval(&io.r.ctx, &q, &io.r.err);
    int32_t *a_codes = qk_widen_s8(aq, na), *b_codes = qk_widen_s8(bq, nb);
    const qk_mm_ref ref = {
        .a = a_codes, .a_zp = zp, .b = b_codes, .b_zp = mc->act_b ? bzp : 0, .b_col_zp = wzp, .n_b_col_zp = nws};
    const qk_scales sc = {in_scale, mc->act_b ? &b_scale : ws, mc->act_b ? 1 : nws, true};
    const int fails = qk_mm_check(mc, &io, st, &ref, &sc, case_no);
    RD_FREE_ALL(a_codes, b_codes, wq, ws, wzp, aq, bq);
    qk_mm_end(&io);
    return fails;
}

static void test_qmatmul_eval(void)
{
    static const qk_mm_case cases[] = {
        {4, 2, {2, 3, 5, 7}, {7, 4}, false},     /* one B for all: batch folded into M */
        {2, 3, {5, 7}, {3, 7, 4}, false},        /* B batched, A broadcast */
        {4, 3, {2, 1, 5, 7}, {3, 7, 4}, true},   /* both broadcast, two activations */
        {1, 2, {7}, {7, 4}, false},              /* 1-D A */
        {2, 1, {5, 7}, {7}, false},              /* 1-D B: per tensor */
        {3, 3, {4, 9, 300}, {4, 300, 17}, true}, /* attention-like, K > KC */
        {3, 2, {2, 33, 65}, {65, 1030}, false},  /* N > NC */
        {2, 2, {1, 1}, {1, 1}, true},
    };
    uint32_t s = 5;
    int fails = 0;
    for (int rep = 0; rep < 4; rep++) /* the last round with asymmetric constant weights */
        for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++)
            fails += run_matmul_case(&cases[t], rep == 3, &s, (int)t);
    CU_ASSERT_EQUAL(fails, 0);
}

/* ------------------------------------------------------------------------------------------------- */
/* Errors */

static void test_q8_bad_layer(void)
{
    qk_zero_conv zc;
    qk_zero_conv_setup(&zc);
    qk_run *r = &zc.r;
    int8_t wq[72] = {0};
    const float ws[3] = {1, 1, 1};
    sim_q8_layer q = {.in_scale = 0.1f, .in_zp = 200, .w_q = wq, .w_scale = ws, .n_w_scale = 2};
    CU_ASSERT_EQUAL(sim_q8_conv_eval(&r->ctx, &q, &r->err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->err.msg, "node 'q' (Conv)"));
    q.in_zp = 0;
    q.n_w_scale = 3;
    CU_ASSERT_EQUAL(sim_q8_conv_eval(&r->ctx, &q, &r->err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->err.msg, "3 weight scales for 2"));
    q.n_w_scale = 2;
    q.w_q = NULL;
    CU_ASSERT_EQUAL(sim_q8_conv_eval(&r->ctx, &q, &r->err), RD_E_INVAL);
    q.w_q = wq;
    CU_ASSERT_EQUAL(sim_q8_conv_eval(&r->ctx, &q, &r->err), RD_OK);
    qk_fini(r);
    /* a shape the float Conv rejects is rejected the same way */
    rd_tensor tw_bad = H_T(RD_DT_F32, zc.w, 2, 3, 3, 3);
    const rd_tensor *in_bad[2] = {&zc.tx, &tw_bad};
    CU_ASSERT_NOT_EQUAL(qk_setup(r, "Conv", NULL, 0, in_bad, 2), RD_OK);
    r->ctx.out[0].data = zc.x;
    CU_ASSERT_EQUAL(sim_q8_conv_eval(&r->ctx, &q, &r->err), RD_E_INVAL);
    r->ctx.out[0].data = NULL;
    qk_fini(r);
}

RD_TEST_REGISTER(register_qkernels)
{
    RD_SUITE("qkernels", {"qgemm: shapes, strides, zero points, bias", test_qgemm_shapes},
             {"Conv int8: random geometries", test_qconv_random}, {"Conv int8: fixed cases", test_qconv_fixed},
             {"ConvTranspose int8: random geometries", test_qconv_transpose_random},
             {"Gemm int8: transposes, alpha/beta, C", test_qgemm_eval_random},
             {"MatMul int8: batched, broadcast, activations", test_qmatmul_eval},
             {"int8 evals: invalid layers", test_q8_bad_layer});
}

/*
 * test_kernels_parallel.c: the float kernels give the same bits on one thread and on a pool of three, and
 * their AVX2 paths the same bits as the portable ones, over seeded random shapes (Conv of every strategy:
 * pointwise GEMM, direct depthwise/small-channel, im2col tiles; ConvTranspose; GEMM with strided operands).
 */
#include "rd_test.h"

#include "internal.h"
#include "conv_geom_random.h"
#include "kernels/conv_f32.h"
#include "kernels/sgemm_f32.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static uint32_t rng = 7;

static int64_t pick(int64_t lo, int64_t hi) /* inclusive */
{
    rng = rng * 1664525u + 1013904223u;
    return lo + (int64_t)((rng >> 8) % (uint32_t)(hi - lo + 1));
}

static float *random_floats(int64_t n)
{
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        p[i] = (float)pick(-30000, 30000) / 7919.0f;
    return p;
}

/* kind: 0 any, 1 depthwise, 2 pointwise, 3 few input channels (the direct loop's other case) */
static void random_geom(conv_geom *g, int nsp, int kind)
{
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    g->batch = pick(1, 2);
    g->group = kind == 1 ? pick(3, 24) : kind == 3 ? 1 : pick(1, 2);
    const int64_t cg = kind == 1 ? 1 : kind == 3 ? pick(1, 3) : pick(1, 24), mg = kind == 1 ? 1 : pick(1, 40);
    g->in_c = g->group * cg;
    g->out_c = g->group * mg;
    for (int d = 0; d < nsp; d++) {
        g->in[d] = pick(5, nsp == 1 ? 90 : 40);
        conv_geom_random_dim(g, d, kind == 2, 5, pick);
    }
}

static int64_t prod(const int64_t *v, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= v[i];
    return p;
}

static void *scratch_for(const conv_plan *plan, int workers)
{
    size_t bytes = (plan->scratch + 63) / 64 * 64 * (size_t)workers;
    return aligned_alloc(64, bytes ? bytes : 64);
}

/* Conv or ConvTranspose of g on no pool and on pool; 1 when the outputs differ in any bit. */
static int conv_case(const conv_geom *g, bool transpose, rd_pool *pool, int case_no, int *kinds)
{
    const int64_t in_sp = prod(g->in, g->nsp), out_sp = prod(g->out, g->nsp), taps = prod(g->k, g->nsp);
    const int64_t nx = g->batch * g->in_c * in_sp, ny = g->batch * g->out_c * out_sp;
    const int64_t nw = transpose ? g->in_c * (g->out_c / g->group) * taps : g->out_c * (g->in_c / g->group) * taps;
    float *x = random_floats(nx), *w = random_floats(nw), *b = random_floats(g->out_c);
    float *y1 = malloc((size_t)ny * sizeof(float)), *y3 = malloc((size_t)ny * sizeof(float));
    conv_plan plan;
    if (transpose)
        conv_transpose_plan_f32(g, &plan);
    else
        conv_plan_f32(g, &plan);
    kinds[plan.kind]++;
    float *s1 = scratch_for(&plan, 1), *s3 = scratch_for(&plan, sim_pool_width(pool));
    if (transpose) {
        conv_transpose_f32(g, &plan, x, w, b, y1, s1, NULL, NULL, NULL);
        conv_transpose_f32(g, &plan, x, w, b, y3, s3, pool, NULL, NULL);
    } else {
        conv_f32(g, &plan, x, w, b, y1, s1, NULL, NULL, NULL);
        conv_f32(g, &plan, x, w, b, y3, s3, pool, NULL, NULL);
    }
    int bad = memcmp(y1, y3, (size_t)ny * sizeof(float)) != 0;
    if (bad)
        fprintf(stderr, "%s case %d (kind %d, %lld tasks): one thread and three differ\n",
                transpose ? "ConvTranspose" : "Conv", case_no, (int)plan.kind, (long long)plan.tasks);
    free(x), free(w), free(b), free(y1), free(y3), free(s1), free(s3);
    return bad;
}

static void test_conv_threads_identical(void)
{
    rd_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_pool_create(3, &pool, NULL), RD_OK);
    int fails = 0, kinds[3] = {0};
    for (int c = 0; c < 160; c++) {
        conv_geom g;
        random_geom(&g, 1 + c % 2, c % 4);
        fails += conv_case(&g, false, pool, c, kinds);
    }
    for (int c = 0; c < 40; c++) {
        conv_geom g;
        random_geom(&g, 1 + c % 2, c % 3 == 1 ? 0 : c % 3);
        int k3[3] = {0};
        fails += conv_case(&g, true, pool, c, k3);
    }
    fprintf(stderr, "conv strategies exercised: gemm %d, direct %d, tiled %d\n", kinds[0], kinds[1], kinds[2]);
    CU_ASSERT(kinds[CONV_KIND_GEMM] > 0 && kinds[CONV_KIND_DEPTHWISE] > 0 && kinds[CONV_KIND_TILED] > 0);
    CU_ASSERT_EQUAL(fails, 0);
    rd_pool_destroy(pool);
}

/* The direct conv's contract (conv_direct_f32.c), element by element: fmaf over the taps (c, kh, kw) in W's
   order whose input is inside, from the bias. */
static float direct_chain(const conv_geom *g, const float *x, const float *w, const float *b, int64_t n, int64_t m,
                          int64_t oh, int64_t ow)
{
    const bool two = g->nsp == 2;
    const int l = g->nsp - 1;
    const int64_t ih_n = two ? g->in[0] : 1, iw_n = g->in[l], kh_n = two ? g->k[0] : 1, kw_n = g->k[l];
    const int64_t cg = g->in_c / g->group, grp = m / (g->out_c / g->group);
    float acc = b[m];
    for (int64_t c = 0; c < cg; c++)
        for (int64_t kh = 0; kh < kh_n; kh++) {
            const int64_t ih = two ? oh * g->stride[0] + kh * g->dil[0] - g->pad[0] : 0;
            if (ih < 0 || ih >= ih_n)
                continue;
            for (int64_t kw = 0; kw < kw_n; kw++) {
                const int64_t iw = ow * g->stride[l] + kw * g->dil[l] - g->pad[l];
                if (iw < 0 || iw >= iw_n)
                    continue;
                acc = fmaf(w[((m * cg + c) * kh_n + kh) * kw_n + kw],
                           x[((n * g->in_c + grp * cg + c) * ih_n + ih) * iw_n + iw], acc);
            }
        }
    return acc;
}

/* A network's first layer: 1 to 3 channels in, 16 to 40 out, 3 x 3 (or 3) with stride 2 along the rows. */
static void first_layer_geom(conv_geom *g, int nsp)
{
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    g->batch = pick(1, 2);
    g->group = 1;
    g->in_c = pick(1, 3);
    g->out_c = pick(16, 40);
    for (int d = 0; d < nsp; d++) {
        g->in[d] = pick(30, 70);
        g->k[d] = 3;
        g->stride[d] = d == nsp - 1 ? 2 : pick(1, 2);
        g->dil[d] = 1;
        g->pad[d] = pick(0, 1);
        g->pad_end[d] = pick(0, 1);
        g->out[d] = (g->in[d] + g->pad[d] + g->pad_end[d] - 3) / g->stride[d] + 1;
    }
}

/* Depthwise and small-channel convs through the direct kernel (rows one by one, and four at a time where
   every tap is inside): every output is exactly its chain, on one thread and on three. */
static void test_direct_conv_chains(void)
{
    rd_pool *pool = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_pool_create(3, &pool, NULL), RD_OK);
    int fails = 0, direct = 0, presplit = 0;
    for (int c = 0; c < 92; c++) {
        conv_geom g;
        random_geom(&g, 1 + (c % 5 != 0), c % 2 ? 1 : 3);
        if (c >= 80) /* a first layer: few channels in, many out, stride 2 (its input split once, before the tasks) */
            first_layer_geom(&g, 1 + c % 2);
        conv_plan plan;
        conv_plan_f32(&g, &plan);
        if (plan.kind != CONV_KIND_DEPTHWISE)
            continue;
        direct++;
        presplit += plan.presplit;
        const int64_t oh_n = g.nsp == 2 ? g.out[0] : 1, ow_n = g.out[g.nsp - 1];
        const int64_t nx = g.batch * g.in_c * prod(g.in, g.nsp), ny = g.batch * g.out_c * oh_n * ow_n;
        float *x = random_floats(nx), *w = random_floats(g.out_c * (g.in_c / g.group) * prod(g.k, g.nsp));
        float *b = random_floats(g.out_c), *y = malloc((size_t)ny * sizeof(float));
        float *s = scratch_for(&plan, sim_pool_width(pool));
        for (int pass = 0; pass < 2; pass++) {
            conv_f32(&g, &plan, x, w, b, y, s, pass ? pool : NULL, NULL, NULL);
            int64_t i = 0, bad = 0;
            for (int64_t n = 0; n < g.batch; n++)
                for (int64_t m = 0; m < g.out_c; m++)
                    for (int64_t oh = 0; oh < oh_n; oh++)
                        for (int64_t ow = 0; ow < ow_n; ow++, i++) {
                            const float want = direct_chain(&g, x, w, b, n, m, oh, ow);
                            bad += memcmp(&want, &y[i], sizeof want) != 0;
                        }
            if (bad) {
                fprintf(stderr, "direct conv case %d (%s): %lld outputs differ from their chains\n", c,
                        pass ? "three threads" : "one thread", (long long)bad);
                fails++;
            }
        }
        free(x), free(w), free(b), free(y), free(s);
    }
    CU_ASSERT(direct >= 40);
    CU_ASSERT(presplit >= 5); /* strided convs of one group: the input split once, before the tasks */
    CU_ASSERT_EQUAL(fails, 0);
    rd_pool_destroy(pool);
}

static void test_sgemm_paths_identical(void)
{
    int fails = 0;
    for (int c = 0; c < 60; c++) {
        const int64_t m = pick(1, 40), n = pick(1, 70), k = pick(1, 600);
        const bool at = c % 2, bt = c % 3 == 0; /* transposed (strided) operands */
        float *a = random_floats(m * k), *b = random_floats(k * n), *c0 = random_floats(m * n);
        const sgemm_mat am = {a, at ? 1 : k, at ? m : 1}, bm = {b, bt ? 1 : n, bt ? k : 1};
        float *c1 = malloc((size_t)(m * n) * sizeof(float)), *c2 = malloc((size_t)(m * n) * sizeof(float));
        memcpy(c1, c0, (size_t)(m * n) * sizeof(float));
        memcpy(c2, c0, (size_t)(m * n) * sizeof(float));
        float *work = aligned_alloc(64, (sgemm_f32_work_bytes(k, n) + 63) / 64 * 64 + 64);
        sim_sgemm_f32(m, n, k, &am, &bm, c1, n, work, NULL);
        sim_sgemm_f32_portable(m, n, k, &am, &bm, c2, n, work, NULL);
        if (memcmp(c1, c2, (size_t)(m * n) * sizeof(float)) != 0) {
            fprintf(stderr, "sgemm case %d (%lld x %lld x %lld): dispatched and portable paths differ\n", c,
                    (long long)m, (long long)n, (long long)k);
            fails++;
        }
        free(a), free(b), free(c0), free(c1), free(c2), free(work);
    }
    CU_ASSERT_EQUAL(fails, 0);
}

/* B packed by the caller (panels of 16 columns over all k rows, as the im2col panels are written) */
static float *pack_panels(const float *b, int64_t k, int64_t n)
{
    const int64_t panels = (n + SGEMM_NR - 1) / SGEMM_NR;
    float *bp = calloc((size_t)(panels * k * SGEMM_NR), sizeof(float));
    for (int64_t kk = 0; kk < k; kk++)
        for (int64_t j = 0; j < n; j++)
            bp[j / SGEMM_NR * k * SGEMM_NR + kk * SGEMM_NR + j % SGEMM_NR] = b[kk * n + j];
    return bp;
}

static void test_sgemm_packed_identical(void)
{
    int fails = 0;
    for (int c = 0; c < 60; c++) {
        const int64_t m = pick(1, 40), n = pick(1, 70), k = pick(1, 600);
        float *a = random_floats(m * k), *b = random_floats(k * n), *c0 = random_floats(m * n);
        float *bp = pack_panels(b, k, n);
        const sgemm_mat am = {a, k, 1}, bm = {b, n, 1};
        float *want = malloc((size_t)(m * n) * sizeof(float)), *got = malloc((size_t)(m * n) * sizeof(float));
        float *got_p = malloc((size_t)(m * n) * sizeof(float));
        memcpy(want, c0, (size_t)(m * n) * sizeof(float));
        memcpy(got, c0, (size_t)(m * n) * sizeof(float));
        memcpy(got_p, c0, (size_t)(m * n) * sizeof(float));
        float *work = aligned_alloc(64, (sgemm_f32_work_bytes(k, n) + 63) / 64 * 64 + 64);
        sim_sgemm_f32(m, n, k, &am, &bm, want, n, work, NULL);
        sim_sgemm_f32_packed(m, n, k, &am, bp, got, n, NULL, false);
        sim_sgemm_f32_packed(m, n, k, &am, bp, got_p, n, NULL, true);
        if (memcmp(want, got, (size_t)(m * n) * sizeof(float)) != 0 ||
            memcmp(want, got_p, (size_t)(m * n) * sizeof(float)) != 0) {
            fprintf(stderr, "sgemm case %d (%lld x %lld x %lld): packed and unpacked B differ\n", c, (long long)m,
                    (long long)n, (long long)k);
            fails++;
        }
        free(a), free(b), free(c0), free(bp), free(want), free(got), free(got_p), free(work);
    }
    CU_ASSERT_EQUAL(fails, 0);
}

/* C (m x n, one row or one column) += A B with B stored by columns, on the dispatched and the portable paths,
   against the micro-kernel on B packed into panels; 1 when any bit differs. */
static int vector_product_case(int64_t m, int64_t n, int64_t k, const char *what, int case_no)
{
    float *a = random_floats(m * k), *bt = random_floats(n * k), *c0 = random_floats(m * n);
    float *b = malloc((size_t)(k * n) * sizeof(float)); /* row-major k x n, for the panels */
    for (int64_t j = 0; j < n; j++)
        for (int64_t kk = 0; kk < k; kk++)
            b[kk * n + j] = bt[j * k + kk];
    float *bp = pack_panels(b, k, n);
    const sgemm_mat am = {a, k, 1}, bm = {bt, 1, k};
    const size_t bytes = (size_t)(m * n) * sizeof(float);
    float *want = malloc(bytes), *got = malloc(bytes), *got_p = malloc(bytes);
    memcpy(want, c0, bytes);
    memcpy(got, c0, bytes);
    memcpy(got_p, c0, bytes);
    float *work = aligned_alloc(64, (sgemm_f32_work_bytes(k, n) + 63) / 64 * 64 + 64);
    sim_sgemm_f32_packed(m, n, k, &am, bp, want, n, NULL, false);
    sim_sgemm_f32(m, n, k, &am, &bm, got, n, work, NULL);
    sim_sgemm_f32_portable(m, n, k, &am, &bm, got_p, n, work, NULL);
    const int bad = memcmp(want, got, bytes) != 0 || memcmp(want, got_p, bytes) != 0;
    if (bad)
        fprintf(stderr, "sgemm %s case %d (%lld x %lld x %lld): differs from the panels\n", what, case_no, (long long)m,
                (long long)n, (long long)k);
    free(a), free(bt), free(c0), free(b), free(bp), free(want), free(got), free(got_p), free(work);
    return bad;
}

/* One column of C (a fully connected layer at batch 1, as matmul_f32.c computes it: W x^T) takes its own path:
   the bits of the micro-kernel on B packed into a panel. */
static void test_sgemm_one_column(void)
{
    int fails = 0;
    for (int c = 0; c < 40; c++)
        fails += vector_product_case(c == 0 ? 96 : pick(2, 70), 1, c == 0 ? 1280 : pick(1, 600), "column", c);
    CU_ASSERT_EQUAL(fails, 0);
}

/* One row of A times a B whose columns are contiguous (Gemm transB at batch 1 called directly): the same. */
static void test_sgemm_row_times_columns(void)
{
    int fails = 0;
    for (int c = 0; c < 40; c++)
        fails += vector_product_case(1, c == 0 ? 1000 : pick(1, 70), c == 0 ? 1280 : pick(1, 600), "row", c);
    CU_ASSERT_EQUAL(fails, 0);
}

/* C filled with the start values then multiplied, against the chains started from them (C holding NaN): every
   path, with one value per row or one for all, -0.0 among them, and the gemv shapes and k == 0. */
static int start_case(int64_t m, int64_t n, int64_t k, int64_t stride, int case_no)
{
    float *a = random_floats(m * (k > 0 ? k : 1)), *b = random_floats((k > 0 ? k : 1) * n), *from = random_floats(m);
    from[0] = -0.0f;
    if (m > 1)
        from[1] = 0.0f;
    const sgemm_start start = {.from = from, .stride = stride};
    float *bt = malloc((size_t)((k > 0 ? k : 1) * n) * sizeof(float)); /* B by columns: one row of A takes the gemv */
    for (int64_t j = 0; j < n; j++)
        for (int64_t kk = 0; kk < k; kk++)
            bt[j * k + kk] = b[kk * n + j];
    const sgemm_mat am = {a, k, 1}, bm = m == 1 ? (sgemm_mat){bt, 1, k} : (sgemm_mat){b, n, 1};
    float *bp = pack_panels(b, k, n);
    const size_t bytes = (size_t)(m * n) * sizeof(float);
    float *want = malloc(bytes), *got[4];
    for (int64_t i = 0; i < m * n; i++)
        want[i] = from[i / n * stride];
    float *work = aligned_alloc(64, (sgemm_f32_work_bytes(k, n) + 63) / 64 * 64 + 64);
    sim_sgemm_f32_portable(m, n, k, &am, &bm, want, n, work, NULL);
    for (int v = 0; v < 4; v++) {
        got[v] = malloc(bytes);
        for (int64_t i = 0; i < m * n; i++)
            got[v][i] = NAN;
    }
    sim_sgemm_f32(m, n, k, &am, &bm, got[0], n, work, &start);
    sim_sgemm_f32_portable(m, n, k, &am, &bm, got[1], n, work, &start);
    sim_sgemm_f32_packed(m, n, k, &am, bp, got[2], n, &start, false);
    sim_sgemm_f32_packed(m, n, k, &am, bp, got[3], n, &start, true);
    int bad = 0;
    for (int v = 0; v < 4; v++)
        if (memcmp(want, got[v], bytes) != 0) {
            fprintf(stderr, "sgemm start case %d, path %d (%lld x %lld x %lld, stride %lld): differs from C filled\n",
                    case_no, v, (long long)m, (long long)n, (long long)k, (long long)stride);
            bad = 1;
        }
    free(a), free(b), free(bt), free(from), free(bp), free(want), free(work);
    for (int v = 0; v < 4; v++)
        free(got[v]);
    return bad;
}

static void test_sgemm_start_values(void)
{
    int fails = 0;
    for (int c = 0; c < 60; c++) {
        const int64_t m = c % 10 == 1 ? 1 : pick(1, 40), n = c % 10 == 2 ? 1 : pick(1, 70);
        const int64_t k = c % 10 == 3 ? 0 : pick(1, 600);
        fails += start_case(m, n, k, c % 4 == 0 ? 0 : 1, c);
    }
    CU_ASSERT_EQUAL(fails, 0);
}

static void test_pool_edges(void)
{
    rd_pool *p = NULL;
    rd_error err;
    CU_ASSERT_EQUAL(rd_pool_create(-1, &p, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_EQUAL(rd_pool_create(1025, &p, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "1025"));
    CU_ASSERT_EQUAL_FATAL(rd_pool_create(0, &p, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_pool_threads(p), rd_cpu_count());
    rd_pool_destroy(p);
    CU_ASSERT_EQUAL(rd_pool_threads(NULL), 1);
    CU_ASSERT(rd_cpu_count() >= 1);
}

RD_TEST_REGISTER(register_kernels_parallel)
{
    RD_SUITE("kernels_parallel",
             {"Conv/ConvTranspose: one thread and three give the same bits", test_conv_threads_identical},
             {"direct Conv: every output is its chain of fused multiply-adds", test_direct_conv_chains},
             {"sgemm: AVX2 and portable paths give the same bits", test_sgemm_paths_identical},
             {"sgemm: B packed by the caller gives the same bits as B packed by sgemm", test_sgemm_packed_identical},
             {"sgemm: one column of C gives the bits of the panels", test_sgemm_one_column},
             {"sgemm: one row times contiguous columns gives the bits of the panels", test_sgemm_row_times_columns},
             {"sgemm: chains from start values give the bits of C filled with them", test_sgemm_start_values},
             {"pool: thread counts accepted and refused", test_pool_edges});
}

/*
 * test_nn_ops.c: the nn operator family. Fast conv kernels (BLAS, tiled im2col, depthwise) against the
 * naive reference kernels on seeded random shapes; the ops run through their sim_op_def on small
 * hand-computed cases; malformed attributes and shapes give clear errors.
 */
#include "rd_test.h"

#include "op_harness.h"
#include "conv_geom_random.h"
#include "kernels/conv_f32.h"
#include "kernels/pool_f32.h"
#include "kernels/ref_conv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------------------ */

static uint32_t rng_state;

static float rnd(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static int64_t rnd_int(int64_t lo, int64_t hi) /* inclusive */
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return lo + (int64_t)((rng_state >> 8) % (uint32_t)(hi - lo + 1));
}

static float *rnd_buf(int64_t n)
{
    float *p = malloc((size_t)(n ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        p[i] = rnd();
    return p;
}

/* Worst |a - b| relative to max(1, |b|). */
static double max_rel_err(const float *a, const float *b, int64_t n)
{
    double worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]) / fmax(1.0, fabs((double)b[i]));
        if (!(d <= worst))
            worst = d; /* NaN sticks */
    }
    return worst;
}

/* A random conv geometry within small bounds; kind: 0 any, 1 depthwise, 2 pointwise. */
static void random_geom(conv_geom *g, int nsp, int kind)
{
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    g->batch = rnd_int(1, 2);
    g->group = kind == 1 ? rnd_int(2, 5) : rnd_int(1, 3);
    const int64_t cg = kind == 1 ? 1 : rnd_int(1, 4), mg = rnd_int(1, 3);
    g->in_c = g->group * cg;
    g->out_c = g->group * mg;
    for (int d = 0; d < nsp; d++) {
        g->in[d] = rnd_int(nsp == 3 ? 3 : 4, nsp == 1 ? 19 : nsp == 2 ? 11 : 6);
        conv_geom_random_dim(g, d, kind == 2, 3, rnd_int);
    }
}

/* Runs the fast Conv, or ConvTranspose when transpose (with the tile forced to `tile` if > 0), and the
   reference on the same random data; returns the worst error and the plan's kind. */
static double conv_vs_ref(const conv_geom *g, bool transpose, int64_t tile, conv_kind *kind_used)
{
    const int64_t nx = g->batch * g->in_c * conv_prod(g->in, g->nsp);
    const int64_t w_rows = transpose ? g->in_c * (g->out_c / g->group) : g->out_c * (g->in_c / g->group);
    const int64_t nw = w_rows * conv_prod(g->k, g->nsp);
    const int64_t ny = g->batch * g->out_c * conv_prod(g->out, g->nsp);
    float *x = rnd_buf(nx), *w = rnd_buf(nw), *b = rnd_buf(g->out_c), *y = rnd_buf(ny), *yr = rnd_buf(ny);
    conv_plan plan;
    if (transpose)
        conv_transpose_plan_f32(g, &plan);
    else
        conv_plan_f32(g, &plan);
    if (tile > 0)
        conv_plan_set_tile(g, tile, &plan);
    float *scratch = plan.scratch ? aligned_alloc(64, (plan.scratch + 63) / 64 * 64) : NULL;
    if (transpose) {
        conv_transpose_f32(g, &plan, x, w, b, y, scratch, NULL, NULL, NULL);
        ref_conv_transpose_f32(g, x, w, b, yr);
    } else {
        conv_f32(g, &plan, x, w, b, y, scratch, NULL, NULL, NULL);
        ref_conv_f32(g, x, w, b, yr);
    }
    double e = max_rel_err(y, yr, ny);
    *kind_used = plan.kind;
    free(x), free(w), free(b), free(y), free(yr), free(scratch);
    return e;
}

/* ---- kernel tests ------------------------------------------------------------------------------- */

static void test_conv_fast_matches_ref(void)
{
    rng_state = 12345;
    int seen[3] = {0};
    for (int it = 0; it < 300; it++) {
        conv_geom g;
        const int nsp = 1 + it % 3;
        random_geom(&g, nsp, it % 7 == 0 ? 1 : it % 11 == 0 ? 2 : 0);
        const int64_t tile = it % 2 ? rnd_int(1, 40) : 0;
        conv_kind kind;
        const double e = conv_vs_ref(&g, false, tile, &kind);
        seen[kind]++;
        if (e > 1e-5) {
            char msg[200];
            snprintf(msg, sizeof msg, "conv case %d (nsp %d, group %lld, kind %d) err %g", it, nsp, (long long)g.group,
                     (int)kind, e);
            CU_FAIL(msg);
            return;
        }
    }
    CU_ASSERT(seen[CONV_KIND_GEMM] > 0);
    CU_ASSERT(seen[CONV_KIND_DEPTHWISE] > 0);
    CU_ASSERT(seen[CONV_KIND_TILED] > 0);
}

static void test_conv_transpose_fast_matches_ref(void)
{
    rng_state = 777;
    for (int it = 0; it < 200; it++) {
        conv_geom g;
        const int nsp = 1 + it % 3;
        random_geom(&g, nsp, it % 9 == 0 ? 2 : 0);
        /* transposed geometry: out = s*(in-1) + ek + out_pad - pads */
        for (int d = 0; d < nsp; d++) {
            g.in[d] = rnd_int(1, nsp == 3 ? 4 : 7);
            const int64_t ek = (g.k[d] - 1) * g.dil[d] + 1;
            const int64_t natural = g.stride[d] * (g.in[d] - 1) + ek + rnd_int(0, g.stride[d] - 1);
            if (g.pad[d] + g.pad_end[d] >= natural)
                g.pad[d] = g.pad_end[d] = 0;
            g.out[d] = natural - g.pad[d] - g.pad_end[d];
        }
        conv_kind kind;
        const double e = conv_vs_ref(&g, true, it % 2 ? rnd_int(1, 30) : 0, &kind);
        if (e > 1e-5) {
            char msg[200];
            snprintf(msg, sizeof msg, "conv transpose case %d (nsp %d, group %lld) err %g", it, nsp, (long long)g.group,
                     e);
            CU_FAIL(msg);
            return;
        }
    }
}

/* A 2-D geometry on one image in one group: square input, output, kernel and stride, the same pad at both ends
   of each axis (only pooling's count_include_pad reads the end pads), dilation 1. */
static conv_geom square_geom(int64_t in_c, int64_t out_c, int64_t in, int64_t out, int64_t k, int64_t stride,
                             int64_t pad)
{
    conv_geom g = {.nsp = 2, .batch = 1, .in_c = in_c, .out_c = out_c, .group = 1};
    for (int d = 0; d < 2; d++) {
        g.in[d] = in;
        g.out[d] = out;
        g.k[d] = k;
        g.stride[d] = stride;
        g.dil[d] = 1;
        g.pad[d] = g.pad_end[d] = pad;
    }
    return g;
}

static void test_conv_tile_bounded(void)
{
    /* 64 -> 64, 3x3 on 224x224: a full im2col would be 116 MB; each task's columns stay near the budget */
    conv_geom g = square_geom(64, 64, 224, 224, 3, 1, 1);
    conv_plan plan;
    conv_plan_f32(&g, &plan);
    CU_ASSERT_EQUAL(plan.kind, CONV_KIND_TILED);
    CU_ASSERT(plan.scratch <= 2 * CONV_TILE_BUDGET + 4096);
    CU_ASSERT(plan.tile >= 16 && plan.tile * 576 * 4 <= (int64_t)CONV_TILE_BUDGET);
    CU_ASSERT_EQUAL(plan.tasks, (224 * 224 + plan.tile - 1) / plan.tile);
    g.k[0] = g.k[1] = 1;
    g.pad[0] = g.pad[1] = g.pad_end[0] = g.pad_end[1] = 0;
    conv_plan_f32(&g, &plan);
    CU_ASSERT_EQUAL(plan.kind, CONV_KIND_GEMM);
    CU_ASSERT(plan.scratch <= 64 * 256 * sizeof(float) + 64); /* one packed block of B */
    CU_ASSERT_EQUAL(conv_tile_cols(10, 5, 5, 4, 1 << 20), 5);
    CU_ASSERT_EQUAL(conv_tile_cols(1 << 20, 1000, 10, 4, 1 << 20), 16); /* floor of 16 columns */
}

static void test_pool_kernels(void)
{
    /* 1x1x4x4 ramp, 3x3 window, stride 2, ceil mode gives 2x2 with clipped windows */
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i + 1);
    const conv_geom g = square_geom(1, 1, 4, 2, 3, 2, 0);
    float y[4];
    int64_t idx[4];
    pool_max_f32(&g, x, y, idx, false);
    CU_ASSERT_EQUAL(y[0], 11.0f);
    CU_ASSERT_EQUAL(y[1], 12.0f);
    CU_ASSERT_EQUAL(y[2], 15.0f);
    CU_ASSERT_EQUAL(y[3], 16.0f);
    CU_ASSERT_EQUAL(idx[0], 10);
    pool_max_f32(&g, x, y, idx, true);
    CU_ASSERT_EQUAL(idx[0], 2 + 2 * 4); /* h + w * H */
    pool_avg_f32(&g, x, y, false);
    CU_ASSERT_DOUBLE_EQUAL(y[0], 6.0, 1e-6); /* mean of 1,2,3,5,6,7,9,10,11 */
    CU_ASSERT_DOUBLE_EQUAL(y[3], (11 + 12 + 15 + 16) / 4.0, 1e-6);
    /* pads 1 on every side, count_include_pad: the corner window counts 9 taps */
    const conv_geom gp = square_geom(1, 1, 4, 2, 3, 2, 1);
    pool_avg_f32(&gp, x, y, true);
    CU_ASSERT_DOUBLE_EQUAL(y[0], (1 + 2 + 5 + 6) / 9.0, 1e-6);
    pool_avg_f32(&gp, x, y, false);
    CU_ASSERT_DOUBLE_EQUAL(y[0], (1 + 2 + 5 + 6) / 4.0, 1e-6);
    float gy[1];
    pool_global_f32(x, 1, 16, false, gy);
    CU_ASSERT_DOUBLE_EQUAL(gy[0], 8.5, 1e-6);
    pool_global_f32(x, 1, 16, true, gy);
    CU_ASSERT_EQUAL(gy[0], 16.0f);
}

/* ---- running ops through their definitions ------------------------------------------------------ */

static rd_tensor tensor_f32(int rank, const int64_t *dims, const float *v)
{
    rd_tensor t;
    rd_tensor_alloc(&t, RD_DT_F32, rank, dims, NULL);
    if (t.data)
        memcpy(t.data, v, rd_tensor_nbytes(&t));
    return t;
}

static void assert_floats(const rd_tensor *t, const float *want, int64_t n, double tol)
{
    CU_ASSERT_EQUAL_FATAL(rd_tensor_numel(t), n);
    const float *got = t->data;
    for (int64_t i = 0; i < n; i++)
        if (fabs((double)got[i] - (double)want[i]) > tol) {
            char msg[160];
            snprintf(msg, sizeof msg, "element %lld: got %g want %g", (long long)i, got[i], want[i]);
            CU_FAIL(msg);
            return;
        }
}

/* The inputs of ONNX's Conv and ConvTranspose reference cases: x counts 0, 1, 2, ... and the weights are ones. */
static void ramp_and_ones(float *x, int nx, float *w, int nw)
{
    for (int i = 0; i < nx; i++)
        x[i] = (float)i;
    for (int i = 0; i < nw; i++)
        w[i] = 1.0f;
}

static void test_conv_op_basic(void)
{
    /* ONNX test_basic_conv_with_padding: 5x5 ramp, 3x3 ones, pads 1 */
    float xv[25], wv[9];
    ramp_and_ones(xv, 25, wv, 9);
    rd_tensor x = tensor_f32(4, (int64_t[]){1, 1, 5, 5}, xv), w = tensor_f32(4, (int64_t[]){1, 1, 3, 3}, wv);
    int64_t pads[] = {1, 1, 1, 1}, ks[] = {3, 3};
    sim_attr at[] = {h_ints("pads", pads, 4), h_ints("kernel_shape", ks, 2)};
    const rd_tensor *in[] = {&x, &w};
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Conv", 11, at, 2, in, 2, 1), RD_OK);
    const float want[] = {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                          117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84};
    assert_floats(&r.out[0], want, 25, 1e-4);
    CU_ASSERT_EQUAL(r.macs, 25 * 9);
    h_fini(&r);
    /* strides 2, SAME_UPPER: out = ceil(5/2) = 3 */
    int64_t strides[] = {2, 2};
    sim_attr at2[] = {h_ints("strides", strides, 2), h_str("auto_pad", "SAME_UPPER")};
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Conv", 11, at2, 2, in, 2, 1), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].dims[2], 3);
    CU_ASSERT_EQUAL(r.out[0].dims[3], 3);
    CU_ASSERT_DOUBLE_EQUAL(((float *)r.out[0].data)[0], 12.0, 1e-4);
    h_fini(&r);
    rd_tensor_fini(&x);
    rd_tensor_fini(&w);
}

static void test_conv_op_errors(void)
{
    static const float v[160];
    rd_tensor x = tensor_f32(4, (int64_t[]){1, 3, 4, 4}, v), w = tensor_f32(4, (int64_t[]){2, 2, 3, 3}, v);
    const rd_tensor *in[] = {&x, &w};
    h_run r;
    CU_ASSERT_EQUAL(h_exec(&r, "Conv", 11, NULL, 0, in, 2, 1), RD_E_INVAL); /* 3 channels vs W's 2 */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "channels"));
    h_fini(&r);
    sim_attr bad_pad[] = {h_str("auto_pad", "SAME")};
    CU_ASSERT_EQUAL(h_exec(&r, "Conv", 11, bad_pad, 1, in, 2, 1), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "auto_pad"));
    h_fini(&r);
    sim_attr bad_group[] = {h_int("group", 0)};
    CU_ASSERT_EQUAL(h_exec(&r, "Conv", 11, bad_group, 1, in, 2, 1), RD_E_PARSE);
    h_fini(&r);
    int64_t neg[] = {1, -1};
    sim_attr bad_stride[] = {h_ints("strides", neg, 2)};
    CU_ASSERT_EQUAL(h_exec(&r, "Conv", 11, bad_stride, 1, in, 2, 1), RD_E_PARSE);
    h_fini(&r);
    rd_tensor w3 = tensor_f32(4, (int64_t[]){2, 3, 5, 5}, v); /* window 5 > input 4 */
    const rd_tensor *in3[] = {&x, &w3};
    CU_ASSERT_EQUAL(h_exec(&r, "Conv", 11, NULL, 0, in3, 2, 1), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "window"));
    h_fini(&r);
    rd_tensor_fini(&x);
    rd_tensor_fini(&w);
    rd_tensor_fini(&w3);
}

static void test_conv_transpose_op(void)
{
    /* ONNX test_convtranspose_pads: strides [3, 2], pads [1, 2, 1, 2] -> 1x2x7x3 */
    float xv[9], wv[18];
    ramp_and_ones(xv, 9, wv, 18);
    rd_tensor x = tensor_f32(4, (int64_t[]){1, 1, 3, 3}, xv), w = tensor_f32(4, (int64_t[]){1, 2, 3, 3}, wv);
    int64_t strides[] = {3, 2}, pads[] = {1, 2, 1, 2};
    sim_attr at[] = {h_ints("strides", strides, 2), h_ints("pads", pads, 4)};
    const rd_tensor *in[] = {&x, &w};
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ConvTranspose", 11, at, 2, in, 2, 1), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].dims[1], 2);
    CU_ASSERT_EQUAL(r.out[0].dims[2], 7);
    CU_ASSERT_EQUAL(r.out[0].dims[3], 3);
    const float want[] = {1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15,
                          1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15};
    assert_floats(&r.out[0], want, 42, 1e-4);
    h_fini(&r);
    /* output_shape 10x8 with strides 3x2 (ONNX test_convtranspose_output_shape): natural 9x7 + pads */
    int64_t oshape[] = {10, 8}, s2[] = {3, 2};
    sim_attr at2[] = {h_ints("strides", s2, 2), h_ints("output_shape", oshape, 2)};
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ConvTranspose", 11, at2, 2, in, 2, 1), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].dims[2], 10);
    CU_ASSERT_EQUAL(r.out[0].dims[3], 8);
    h_fini(&r);
    rd_tensor_fini(&x);
    rd_tensor_fini(&w);
}

static void test_gemm_matmul_ops(void)
{
    const float av[] = {1, 2, 3, 4, 5, 6}; /* 2x3 */
    const float bv[] = {1, 0, 0, 1, 1, 1}; /* 3x2 */
    rd_tensor a = tensor_f32(2, (int64_t[]){2, 3}, av), b = tensor_f32(2, (int64_t[]){3, 2}, bv);
    rd_tensor c = tensor_f32(1, (int64_t[]){2}, (const float[]){10, 20});
    const rd_tensor *in[] = {&a, &b, &c};
    sim_attr at[] = {h_float("alpha", 2.0f), h_float("beta", 0.5f)};
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Gemm", 13, at, 2, in, 3, 1), RD_OK);
    /* A B = [[4, 5], [10, 11]] */
    assert_floats(&r.out[0], (const float[]){13, 20, 25, 32}, 4, 1e-5);
    CU_ASSERT_EQUAL(r.macs, 12);
    h_fini(&r);
    /* transA with A^T given as 3x2, no C */
    rd_tensor at_ = tensor_f32(2, (int64_t[]){3, 2}, (const float[]){1, 4, 2, 5, 3, 6});
    const rd_tensor *in2[] = {&at_, &b};
    sim_attr ta[] = {h_int("transA", 1)};
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Gemm", 13, ta, 1, in2, 2, 1), RD_OK);
    assert_floats(&r.out[0], (const float[]){4, 5, 10, 11}, 4, 1e-5);
    h_fini(&r);
    CU_ASSERT_EQUAL(h_exec(&r, "Gemm", 9, ta, 1, in2, 2, 1), RD_E_INVAL); /* C required before 11 */
    h_fini(&r);
    /* MatMul: [2,1,2,3] x [3,3,2] broadcast batch -> [2,3,2,2]; 1-D x 1-D -> scalar */
    float big_a[12], big_b[18];
    for (int i = 0; i < 12; i++)
        big_a[i] = (float)i;
    for (int i = 0; i < 18; i++)
        big_b[i] = (float)(i % 5) - 2.0f;
    rd_tensor ma = tensor_f32(4, (int64_t[]){2, 1, 2, 3}, big_a), mb = tensor_f32(3, (int64_t[]){3, 3, 2}, big_b);
    const rd_tensor *in3[] = {&ma, &mb};
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "MatMul", 13, NULL, 0, in3, 2, 1), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].rank, 4);
    CU_ASSERT_EQUAL(r.out[0].dims[0], 2);
    CU_ASSERT_EQUAL(r.out[0].dims[1], 3);
    for (int n = 0; n < 2; n++)
        for (int bb = 0; bb < 3; bb++) {
            float want[4];
            ref_gemm_f32(false, false, 2, 2, 3, 1.0f, big_a + n * 6, big_b + bb * 6, 0.0f, want);
            const float *got = (const float *)r.out[0].data + (n * 3 + bb) * 4;
            CU_ASSERT(max_rel_err(got, want, 4) < 1e-6);
        }
    CU_ASSERT_EQUAL(r.macs, 2 * 3 * 2 * 2 * 3);
    h_fini(&r);
    rd_tensor v1 = tensor_f32(1, (int64_t[]){3}, (const float[]){1, 2, 3});
    const rd_tensor *in4[] = {&v1, &v1};
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "MatMul", 13, NULL, 0, in4, 2, 1), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].rank, 0);
    CU_ASSERT_DOUBLE_EQUAL(((float *)r.out[0].data)[0], 14.0, 1e-6);
    h_fini(&r);
    const rd_tensor *in5[] = {&a, &a};
    CU_ASSERT_EQUAL(h_exec(&r, "MatMul", 13, NULL, 0, in5, 2, 1), RD_E_INVAL);
    h_fini(&r);
    rd_tensor_fini(&a), rd_tensor_fini(&b), rd_tensor_fini(&c), rd_tensor_fini(&at_);
    rd_tensor_fini(&ma), rd_tensor_fini(&mb), rd_tensor_fini(&v1);
}

static void test_softmax_ops(void)
{
    float xv[6] = {1, 2, 3, 1, 1, 1};
    rd_tensor x = tensor_f32(2, (int64_t[]){2, 3}, xv);
    const rd_tensor *in[] = {&x};
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Softmax", 13, NULL, 0, in, 1, 1), RD_OK);
    const double s = exp(1) + exp(2) + exp(3);
    assert_floats(
        &r.out[0],
        (const float[]){(float)(exp(1) / s), (float)(exp(2) / s), (float)(exp(3) / s), 1 / 3.0f, 1 / 3.0f, 1 / 3.0f}, 6,
        1e-6);
    h_fini(&r);
    sim_attr ax0[] = {h_int("axis", 0)};
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "LogSoftmax", 13, ax0, 1, in, 1, 1), RD_OK);
    /* along axis 0: column 0 is (1, 1) -> log(1/2) each */
    CU_ASSERT_DOUBLE_EQUAL(((float *)r.out[0].data)[0], log(0.5), 1e-6);
    h_fini(&r);
    /* opset 11 with axis 0 coerces to one row of 6 */
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Softmax", 11, ax0, 1, in, 1, 1), RD_OK);
    const double s6 = exp(1) + exp(2) + exp(3) + 3 * exp(1);
    CU_ASSERT_DOUBLE_EQUAL(((float *)r.out[0].data)[5], exp(1) / s6, 1e-6);
    h_fini(&r);
    sim_attr ax5[] = {h_int("axis", 5)};
    CU_ASSERT_EQUAL(h_exec(&r, "Softmax", 13, ax5, 1, in, 1, 1), RD_E_INVAL);
    h_fini(&r);
    rd_tensor_fini(&x);
}

static void test_norm_ops(void)
{
    /* BatchNormalization inference on 1x2x1x2 */
    rd_tensor x = tensor_f32(4, (int64_t[]){1, 2, 1, 2}, (const float[]){1, 3, 2, 6});
    rd_tensor sc = tensor_f32(1, (int64_t[]){2}, (const float[]){1, 2});
    rd_tensor bi = tensor_f32(1, (int64_t[]){2}, (const float[]){0, 1});
    rd_tensor mu = tensor_f32(1, (int64_t[]){2}, (const float[]){2, 4});
    rd_tensor va = tensor_f32(1, (int64_t[]){2}, (const float[]){1, 4});
    const rd_tensor *in[] = {&x, &sc, &bi, &mu, &va};
    sim_attr eps[] = {h_float("epsilon", 0.0f)};
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "BatchNormalization", 15, eps, 1, in, 5, 1), RD_OK);
    assert_floats(&r.out[0], (const float[]){-1, 1, -1, 3}, 4, 1e-6);
    h_fini(&r);
    sim_attr train[] = {h_int("training_mode", 1)};
    CU_ASSERT_EQUAL(h_exec(&r, "BatchNormalization", 15, train, 1, in, 5, 1), RD_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "training"));
    h_fini(&r);
    /* InstanceNormalization: each plane normalised to (-1, 1) then scale/bias */
    const rd_tensor *in2[] = {&x, &sc, &bi};
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "InstanceNormalization", 6, eps, 1, in2, 3, 1), RD_OK);
    assert_floats(&r.out[0], (const float[]){-1, 1, -1, 3}, 4, 1e-5);
    h_fini(&r);
    /* LayerNormalization over the last axis with Mean and InvStdDev outputs */
    rd_tensor lx = tensor_f32(2, (int64_t[]){2, 2}, (const float[]){1, 3, 2, 6});
    const rd_tensor *in3[] = {&lx, &sc, &bi};
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "LayerNormalization", 17, eps, 1, in3, 3, 3), RD_OK);
    assert_floats(&r.out[0], (const float[]){-1, 3, -1, 3}, 4, 1e-5);
    assert_floats(&r.out[1], (const float[]){2, 4}, 2, 1e-6);
    assert_floats(&r.out[2], (const float[]){1, 0.5f}, 2, 1e-6);
    CU_ASSERT_EQUAL(r.out[1].dims[1], 1);
    h_fini(&r);
    rd_tensor_fini(&x), rd_tensor_fini(&sc), rd_tensor_fini(&bi), rd_tensor_fini(&mu), rd_tensor_fini(&va);
    rd_tensor_fini(&lx);
}

static void test_pool_ops(void)
{
    float xv[16];
    for (int i = 0; i < 16; i++)
        xv[i] = (float)(i + 1);
    rd_tensor x = tensor_f32(4, (int64_t[]){1, 1, 4, 4}, xv);
    const rd_tensor *in[] = {&x};
    int64_t ks[] = {3, 3}, st[] = {2, 2};
    sim_attr at[] = {h_ints("kernel_shape", ks, 2), h_ints("strides", st, 2), h_int("ceil_mode", 1)};
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "MaxPool", 12, at, 3, in, 1, 2), RD_OK);
    assert_floats(&r.out[0], (const float[]){11, 12, 15, 16}, 4, 0);
    CU_ASSERT_EQUAL(((int64_t *)r.out[1].data)[3], 15);
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "AveragePool", 12, at, 2, in, 1, 1), RD_OK); /* floor mode: 1x1 */
    CU_ASSERT_EQUAL(r.out[0].dims[2], 1);
    assert_floats(&r.out[0], (const float[]){6}, 1, 1e-6);
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "GlobalAveragePool", 1, NULL, 0, in, 1, 1), RD_OK);
    assert_floats(&r.out[0], (const float[]){8.5f}, 1, 1e-6);
    h_fini(&r);
    CU_ASSERT_EQUAL(h_exec(&r, "MaxPool", 12, NULL, 0, in, 1, 1), RD_E_PARSE); /* no kernel_shape */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "kernel_shape"));
    h_fini(&r);
    rd_tensor_fini(&x);
}

RD_TEST_REGISTER(register_nn_ops)
{
    RD_SUITE("nn_kernels", {"conv fast vs reference", test_conv_fast_matches_ref},
             {"conv transpose fast vs reference", test_conv_transpose_fast_matches_ref},
             {"conv tile bounded", test_conv_tile_bounded}, {"pool kernels", test_pool_kernels});
    RD_SUITE("nn_ops", {"conv", test_conv_op_basic}, {"conv errors", test_conv_op_errors},
             {"conv transpose", test_conv_transpose_op}, {"gemm and matmul", test_gemm_matmul_ops},
             {"softmax", test_softmax_ops}, {"normalisation", test_norm_ops}, {"pools", test_pool_ops});
}

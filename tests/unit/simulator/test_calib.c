/* test_calib.c: rd_calibrate: min/max, KL and MMSE ranges, thread-count independence, progress, errors. */
#include "calib_internal.h"
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------
 * Models and samples
 */

static rd_model *load_builder(rd_onnx_builder *b)
{
    void *buf = NULL;
    size_t len = 0;
    rd_error err;
    rd_model *m = NULL;
    if (rd_onnx_builder_write(b, &buf, &len, &err) == RD_OK)
        if (rd_model_load_mem(buf, len, "calib.onnx", NULL, NULL, &m, &err) != RD_OK)
            fprintf(stderr, "\n  load: %s\n", err.msg);
    free(buf);
    rd_onnx_builder_destroy(b);
    return m;
}

static void add_scalar(rd_onnx_builder *b, const char *name, float v)
{
    rd_tensor t;
    rd_tensor_alloc(&t, RD_DT_F32, 0, NULL, NULL);
    *(float *)t.data = v;
    rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
    rd_tensor_fini(&t);
}

/* x[1,6] -> Mul 2 -> m -> Add -1 -> a -> Relu -> r */
static rd_model *chain_model(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 17);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){1, 6}, NULL);
    add_scalar(b, "two", 2.0f);
    add_scalar(b, "mone", -1.0f);
    rd_onnx_add_node(b, "Mul", "mul", (const char *const[]){"x", "two"}, 2, (const char *const[]){"m"}, 1);
    rd_onnx_add_node(b, "Add", "add", (const char *const[]){"m", "mone"}, 2, (const char *const[]){"a"}, 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"a"}, 1, (const char *const[]){"r"}, 1);
    rd_onnx_add_output(b, "r", RD_DT_F32, 2, (const int64_t[]){1, 6}, NULL);
    return load_builder(b);
}

/* x[1,n] -> Relu -> r: the distribution tests look at x (a graph input) and r (one-sided) */
static rd_model *relu_model(int n)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 17);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){1, n}, NULL);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"x"}, 1, (const char *const[]){"r"}, 1);
    rd_onnx_add_output(b, "r", RD_DT_F32, 2, (const int64_t[]){1, n}, NULL);
    return load_builder(b);
}

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform in (0, 1), a pure function of (seed, k, i): samples are the same whatever thread asks */
static double unif(uint64_t seed, size_t k, size_t i)
{
    return ((double)(mix(seed * 0x100000001b3ull ^ mix(k * 1000003u + i)) >> 11) + 0.5) / 9007199254740992.0;
}

/* x[1,n] -> MatMul W[n,16] -> h -> Relu -> r -> MatMul W2[16,8] -> o -> Add c -> y */
static rd_model *mlp_model(int n)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 17);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){1, n}, NULL);
    rd_tensor w, w2;
    rd_tensor_alloc(&w, RD_DT_F32, 2, (const int64_t[]){n, 16}, NULL);
    rd_tensor_alloc(&w2, RD_DT_F32, 2, (const int64_t[]){16, 8}, NULL);
    for (int i = 0; i < n * 16; i++)
        ((float *)w.data)[i] = (float)(unif(7, 0, (size_t)i) - 0.5);
    for (int i = 0; i < 16 * 8; i++)
        ((float *)w2.data)[i] = (float)(unif(8, 0, (size_t)i) - 0.5);
    rd_onnx_add_initializer(b, "w", &w, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "w2", &w2, RD_ONNX_RAW);
    rd_tensor_fini(&w);
    rd_tensor_fini(&w2);
    add_scalar(b, "c", 0.25f);
    rd_onnx_add_node(b, "MatMul", "mm1", (const char *const[]){"x", "w"}, 2, (const char *const[]){"h"}, 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"h"}, 1, (const char *const[]){"r"}, 1);
    rd_onnx_add_node(b, "MatMul", "mm2", (const char *const[]){"r", "w2"}, 2, (const char *const[]){"o"}, 1);
    rd_onnx_add_node(b, "Add", "add", (const char *const[]){"o", "c"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 2, (const int64_t[]){1, 8}, NULL);
    return load_builder(b);
}

typedef enum dist { D_CHAIN, D_GAUSS_OUTLIERS, D_UNIFORM, D_MIXED } dist;

typedef struct sampler {
    dist d;
    int n;             /* elements per sample */
    long fail_at;      /* sample whose function fails, -1 none */
    long bad_shape_at; /* sample given a wrong shape, -1 none */
    long inf_at;       /* sample holding +inf, -1 none */
    atomic_int calls;
} sampler;

static const float chain_data[3][6] = {
    {-1, 0, 2, 0.5f, -3, 1},
    {4, -2, 0, 1, 1, 1},
    {0.25f, 0.75f, -0.5f, 5, 2, -1},
};

static rd_status get_sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    sampler *sp = user;
    atomic_fetch_add(&sp->calls, 1);
    if ((long)k == sp->fail_at)
        return rd_errorf(err, RD_E_IO, "images/broken%zu.png: not a PNG file", k);
    int n = (long)k == sp->bad_shape_at ? sp->n + 1 : sp->n;
    rd_status st = rd_tensor_alloc(&inputs[0], RD_DT_F32, 2, (const int64_t[]){1, n}, err);
    if (st != RD_OK)
        return st;
    float *x = inputs[0].data;
    for (int i = 0; i < n; i++) {
        double u = unif(1, k, (size_t)i), v = unif(2, k, (size_t)i);
        switch (sp->d) {
        case D_CHAIN:
            x[i] = i < 6 ? chain_data[k % 3][i] : 0;
            break;
        case D_GAUSS_OUTLIERS: /* N(0, 1), and sample 1 carries two outliers at +-40 */
            x[i] = (float)(sqrt(-2 * log(u)) * cos(2 * M_PI * v));
            if (k == 1 && i < 2)
                x[i] = i == 0 ? 40.0f : -40.0f;
            break;
        case D_UNIFORM:
            x[i] = (float)(2 * u - 1);
            if (k == 0 && i < 2) /* the exact ends, so the observed range is [-1, 1] */
                x[i] = i == 0 ? -1.0f : 1.0f;
            break;
        case D_MIXED:
            x[i] = (float)((u - 0.3) * (1 + 9 * v * v));
            break;
        }
    }
    if ((long)k == sp->inf_at)
        x[0] = INFINITY;
    return RD_OK;
}

static sampler make_sampler(dist d, int n)
{
    sampler sp = {.d = d, .n = n, .fail_at = -1, .bad_shape_at = -1, .inf_at = -1};
    atomic_init(&sp.calls, 0);
    return sp;
}

static rd_sim *make_sim(const rd_model *m)
{
    rd_sim_options so = {.precision = RD_PREC_INT8, .optimization_level = 3};
    rd_sim *s = NULL;
    rd_error err;
    if (rd_sim_create(m, &so, &s, &err) != RD_OK)
        fprintf(stderr, "\n  rd_sim_create: %s\n", err.msg);
    return s;
}

static rd_status calibrate(rd_sim *s, sampler *sp, size_t n, rd_calib_method method, int threads, rd_error *err)
{
    rd_calib_options co = {.method = method, .threads = threads};
    return rd_calibrate(s, get_sample, sp, n, &co, err);
}

static rd_sim_tensor tensor(const rd_sim *s, const char *name)
{
    rd_sim_tensor t = {0};
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sim_tensor_get(s, name, &t, &err), RD_OK);
    return t;
}

/* ---------------------------------------------------------------------------------------------------
 * normal
 */

static void test_normal_minmax(void)
{
    rd_model *m = chain_model();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    rd_sim *s = make_sim(m);
    sampler sp = make_sampler(D_CHAIN, 6);
    rd_error err;
    CU_ASSERT_EQUAL(calibrate(s, &sp, 3, RD_CALIB_NORMAL, 2, &err), RD_OK);
    CU_ASSERT_EQUAL(atomic_load(&sp.calls), 3); /* one pass */
    /* by hand: x in [-3, 5]; m = 2x in [-6, 10]; a = m - 1 in [-7, 9]; r = relu(a) in [0, 9] */
    const struct {
        const char *name;
        float min, max;
    } want[] = {{"x", -3, 5}, {"m", -6, 10}, {"a", -7, 9}, {"r", 0, 9}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        rd_sim_tensor t = tensor(s, want[i].name);
        if (!t.materialized) { /* fused by the passes: no parameters of its own */
            CU_ASSERT_FALSE(t.quantized);
            continue;
        }
        CU_ASSERT_TRUE(t.quantized);
        CU_ASSERT_EQUAL(t.min, want[i].min);
        CU_ASSERT_EQUAL(t.max, want[i].max);
    }
    CU_ASSERT_FALSE(tensor(s, "two").quantized); /* constants are not calibrated */
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

static void test_bins(void)
{
    CU_ASSERT_EQUAL(sim_calib_bin(-1.0f, 1.0f), 0);
    CU_ASSERT_EQUAL(sim_calib_bin(1.0f, 1.0f), CALIB_HIST_BINS - 1);
    CU_ASSERT_EQUAL(sim_calib_bin(0.0f, 1.0f), -1); /* exact zeros are not counted */
    CU_ASSERT_EQUAL(sim_calib_bin(-0.0f, 1.0f), -1);
    CU_ASSERT_EQUAL(sim_calib_bin(1e-6f, 1.0f), CALIB_HIST_BINS / 2);
    CU_ASSERT_EQUAL(sim_calib_bin(-1e-4f, 1.0f), CALIB_HIST_BINS / 2 - 1);
    CU_ASSERT_EQUAL(sim_calib_bin(INFINITY, 1.0f), CALIB_HIST_BINS - 1);
    CU_ASSERT_EQUAL(sim_calib_bin(-INFINITY, 1.0f), 0);
    CU_ASSERT_EQUAL(sim_calib_bin(-5.0f, 1.0f), 0);
    CU_ASSERT_EQUAL(sim_calib_bin(NAN, 1.0f), -1);
    static uint64_t h[CALIB_HIST_BINS];
    memset(h, 0, sizeof h);
    float x[600];
    for (int i = 0; i < 600; i++) /* more than one block of the fold, NaNs skipped */
        x[i] = i % 3 == 0 ? (i % 2 ? NAN : 0.0f) : i % 3 == 1 ? 0.5f : -1.0f;
    sim_calib_fold_hist(h, 1.0f, x, 600);
    CU_ASSERT_EQUAL(h[sim_calib_bin(0.5f, 1.0f)], 200);
    CU_ASSERT_EQUAL(h[0], 200);
    uint64_t total = 0;
    for (int k = 0; k < CALIB_HIST_BINS; k++)
        total += h[k];
    CU_ASSERT_EQUAL(total, 400); /* NaN and zeros left out */
    calib_stat st;
    sim_calib_stat_init(&st);
    sim_calib_fold_range(&st, x, 600);
    CU_ASSERT_EQUAL(st.min, -1.0f);
    CU_ASSERT_EQUAL(st.max, 0.5f);
    x[1] = 3.0f;
    x[596] = -4.0f; /* in the scalar tail: 597 = 74 x 8 + 5 */
    sim_calib_fold_range(&st, x, 597);
    CU_ASSERT_EQUAL(st.min, -4.0f);
    CU_ASSERT_EQUAL(st.max, 3.0f);
}

/* ---------------------------------------------------------------------------------------------------
 * Thread count independence
 */

static void ranges_for(rd_calib_method method, int threads, float out[][2], const char *const *names, int n_names)
{
    rd_model *m = mlp_model(64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    rd_sim *s = make_sim(m);
    sampler sp = make_sampler(D_MIXED, 64);
    rd_error err;
    CU_ASSERT_EQUAL(calibrate(s, &sp, 9, method, threads, &err), RD_OK);
    for (int i = 0; i < n_names; i++) {
        rd_sim_tensor t = tensor(s, names[i]);
        out[i][0] = t.quantized ? t.min : NAN;
        out[i][1] = t.quantized ? t.max : NAN;
    }
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

static void test_threads_identical(void)
{
    const char *const names[] = {"x", "h", "r", "o", "y"};
    const rd_calib_method methods[] = {RD_CALIB_NORMAL, RD_CALIB_KL, RD_CALIB_MMSE};
    for (int mi = 0; mi < 3; mi++) {
        float one[5][2], two[5][2], three[5][2];
        ranges_for(methods[mi], 1, one, names, 5);
        ranges_for(methods[mi], 2, two, names, 5);
        ranges_for(methods[mi], 3, three, names, 5);
        CU_ASSERT_EQUAL(memcmp(one, two, sizeof one), 0);
        CU_ASSERT_EQUAL(memcmp(one, three, sizeof one), 0);
        CU_ASSERT_TRUE(one[0][0] < one[0][1]); /* something was calibrated */
    }
}

/* ---------------------------------------------------------------------------------------------------
 * KL
 */

static void test_kl_clips_outliers(void)
{
    rd_model *m = relu_model(4096); /* x: N(0,1) with two outliers at +-40 */
    rd_sim *s = make_sim(m);
    sampler sp = make_sampler(D_GAUSS_OUTLIERS, 4096);
    rd_error err;
    CU_ASSERT_EQUAL(calibrate(s, &sp, 8, RD_CALIB_KL, 2, &err), RD_OK);
    CU_ASSERT_EQUAL(atomic_load(&sp.calls), 16); /* two passes */
    rd_sim_tensor x = tensor(s, "x");
    CU_ASSERT_TRUE(x.quantized);
    CU_ASSERT_TRUE(x.max > 2.5f && x.max < 15.0f);
    CU_ASSERT_TRUE(x.min < -2.5f && x.min > -15.0f);
    CU_ASSERT_EQUAL(x.max, -x.min);   /* both sides clipped at the same |x| threshold */
    rd_sim_tensor r = tensor(s, "r"); /* relu(x): one-sided with the outlier 40 */
    CU_ASSERT_TRUE(r.quantized);
    CU_ASSERT_EQUAL(r.min, 0.0f);
    CU_ASSERT_TRUE(r.max > 2.5f && r.max < 15.0f);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

/* KL(P || Q) bin by bin with exact smoothing, as MXNet's _get_optimal_threshold computes it */
static double kl_reference(const uint64_t *a, int i, int nq)
{
    static double p[CALIB_ABS_BINS], q[CALIB_ABS_BINS];
    uint64_t outliers = 0;
    for (int j = i; j < CALIB_ABS_BINS; j++)
        outliers += a[j];
    for (int j = 0; j < i; j++)
        p[j] = (double)a[j] + (j == i - 1 ? (double)outliers : 0);
    for (int l = 0; l < nq; l++) {
        int start = l * i / nq, end = (l + 1) * i / nq, nnz = 0;
        double sum = 0;
        for (int j = start; j < end; j++) {
            sum += (double)a[j];
            nnz += p[j] != 0;
        }
        for (int j = start; j < end; j++)
            q[j] = p[j] != 0 && nnz ? sum / nnz : 0;
    }
    for (int pass = 0; pass < 2; pass++) { /* smooth p, then q */
        double *d = pass ? q : p;
        int zeros = 0;
        for (int j = 0; j < i; j++)
            zeros += d[j] == 0;
        if (zeros == i)
            return INFINITY;
        double e1 = 1e-4 * zeros / (i - zeros);
        for (int j = 0; j < i; j++)
            d[j] = d[j] == 0 ? 1e-4 : d[j] - e1;
    }
    double sp = 0, sq = 0, kl = 0;
    for (int j = 0; j < i; j++) {
        sp += p[j];
        sq += q[j];
    }
    for (int j = 0; j < i; j++)
        kl += p[j] / sp * log((p[j] / sp) / (q[j] / sq));
    return kl;
}

static void test_kl_matches_reference(void)
{
    static uint64_t a[CALIB_ABS_BINS];
    for (int shape = 0; shape < 3; shape++) {
        for (int j = 0; j < CALIB_ABS_BINS; j++) { /* decaying, sparse, and with zero stretches */
            double u = unif(40 + (uint64_t)shape, 0, (size_t)j);
            double v = 5000.0 * exp(-j / (shape == 0 ? 200.0 : 60.0)) * u;
            a[j] = shape == 2 && (j / 37) % 3 == 1 ? 0 : (uint64_t)v;
        }
        a[CALIB_ABS_BINS - 1] = 3; /* an outlier */
        const int cands[][2] = {{128, 128}, {300, 128}, {300, 255}, {1000, 200}, {2048, 255}, {777, 131}};
        for (size_t c = 0; c < sizeof cands / sizeof cands[0]; c++) {
            double want = kl_reference(a, cands[c][0], cands[c][1]);
            double got = sim_calib_kl_divergence(a, cands[c][0], cands[c][1]);
            bool close = fabs(got - want) <= 1e-9 + 1e-6 * fabs(want);
            CU_ASSERT_TRUE(close);
            if (!close)
                fprintf(stderr, "\n  shape %d, i %d, nq %d: KL %.12g, reference %.12g\n", shape, cands[c][0],
                        cands[c][1], got, want);
        }
    }
}

static void test_kl_threshold_direct(void)
{
    /* all mass in the first bin but a single far outlier: the smallest threshold wins */
    static uint64_t a[CALIB_ABS_BINS];
    memset(a, 0, sizeof a);
    for (int j = 0; j < 100; j++)
        a[j] = 1000 - 9 * (uint64_t)j;
    a[CALIB_ABS_BINS - 1] = 1;
    double t = sim_calib_kl_threshold(a, 2048.0, 0.0, 2048.0);
    CU_ASSERT_TRUE(t >= 128.0 && t < 1024.0);
    /* a flat histogram: no clipping beats the full range */
    for (int j = 0; j < CALIB_ABS_BINS; j++)
        a[j] = 50;
    t = sim_calib_kl_threshold(a, 2048.0, -2048.0, 2048.0);
    CU_ASSERT_TRUE(t > 1900.0);
    /* empty: the full range */
    memset(a, 0, sizeof a);
    CU_ASSERT_EQUAL(sim_calib_kl_threshold(a, 2048.0, 0.0, 2048.0), 2048.0);
}

/* ---------------------------------------------------------------------------------------------------
 * MMSE
 */

static void test_mmse_error_uniform(void)
{
    /* a uniform histogram over [-A, A] and the full range: the error is the rounding noise s^2/12 */
    static uint64_t h[CALIB_HIST_BINS];
    for (int k = 0; k < CALIB_HIST_BINS; k++)
        h[k] = 10;
    double s = 2.0 / 255.0;
    double e = sim_calib_mmse_error(h, -1.0, 1.0, -1.0, 1.0);
    CU_ASSERT_DOUBLE_EQUAL(e, s * s / 12.0, 1e-9 * s * s);
    /* clipped to [-0.5, 0.5]: s = 1/255, zero point round(-128 + 127.5) = 0 (half to even), so the grid
       runs from -128 s to 127 s; tails clip to its ends, the 255 cells between carry s^3/12 each */
    double s2 = 1.0 / 255.0, gmin = -128 * s2, gmax = 127 * s2;
    double want = (pow(1 + gmin, 3) / 3 + pow(1 - gmax, 3) / 3 + 255 * pow(s2, 3) / 12) / 2;
    double e2 = sim_calib_mmse_error(h, -1.0, 1.0, -0.5, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(e2, want, 1e-9 * want);
}

/* x of the relu model after MMSE calibration on `batches` batches of n values drawn from d. */
static rd_sim_tensor mmse_x(int n, dist d, int batches)
{
    rd_model *m = relu_model(n);
    rd_sim *s = make_sim(m);
    sampler sp = make_sampler(d, n);
    rd_error err;
    CU_ASSERT_EQUAL(calibrate(s, &sp, batches, RD_CALIB_MMSE, 2, &err), RD_OK);
    rd_sim_tensor x = tensor(s, "x");
    rd_sim_destroy(s);
    rd_model_destroy(m);
    return x;
}

static void test_mmse_uniform_keeps_range(void)
{
    rd_sim_tensor x = mmse_x(4096, D_UNIFORM, 8);
    CU_ASSERT_TRUE(x.quantized);
    CU_ASSERT_TRUE(x.max >= 0.97f && x.max <= 1.0f);
    CU_ASSERT_TRUE(x.min <= -0.97f && x.min >= -1.0f);
}

static void test_mmse_rare_outliers_clipped(void)
{
    /* N(0,1) over 16 x 65536 values with one pair of outliers at +-40: keeping them costs every other
       value a step of 80/255, clipping them costs 2 * 36^2 / 2^20 in mean squared error: MMSE clips.
       (A tail with real mass, Laplace or Cauchy, is kept at 8 bits: clipping error grows as the square.) */
    rd_sim_tensor x = mmse_x(65536, D_GAUSS_OUTLIERS, 16);
    CU_ASSERT_TRUE(x.quantized);
    CU_ASSERT_TRUE(x.max > 3.0f && x.max < 15.0f);
    CU_ASSERT_TRUE(x.min < -3.0f && x.min > -15.0f);
}

/* ---------------------------------------------------------------------------------------------------
 * Progress and errors
 */

typedef struct progress_log {
    size_t calls, last_done, total;
    bool monotonic, same_total;
} progress_log;

static void on_progress(void *user, size_t done, size_t total)
{
    progress_log *p = user;
    if (p->calls && done < p->last_done)
        p->monotonic = false;
    if (p->calls && total != p->total)
        p->same_total = false;
    p->calls++;
    p->last_done = done;
    p->total = total;
}

static void test_progress(void)
{
    rd_model *m = mlp_model(64);
    rd_sim *s = make_sim(m);
    sampler sp = make_sampler(D_MIXED, 64);
    progress_log log = {.monotonic = true, .same_total = true};
    rd_calib_options co = {.method = RD_CALIB_KL, .threads = 2, .progress = on_progress, .progress_user = &log};
    rd_error err;
    CU_ASSERT_EQUAL(rd_calibrate(s, get_sample, &sp, 20, &co, &err), RD_OK);
    CU_ASSERT_TRUE(log.calls >= 2);
    CU_ASSERT_TRUE(log.monotonic);
    CU_ASSERT_TRUE(log.same_total);
    CU_ASSERT_EQUAL(log.total, 40);
    CU_ASSERT_EQUAL(log.last_done, 40);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

static void expect_error(sampler *sp, size_t n, rd_calib_method method, int threads, rd_status want, const char *part1,
                         const char *part2)
{
    rd_model *m = mlp_model(64);
    rd_sim *s = make_sim(m);
    rd_error err;
    rd_status st = calibrate(s, sp, n, method, threads, &err);
    CU_ASSERT_EQUAL(st, want);
    if (!strstr(err.msg, part1) || (part2 && !strstr(err.msg, part2))) {
        fprintf(stderr, "\n  message '%s' lacks '%s' or '%s'\n", err.msg, part1, part2 ? part2 : "");
        CU_FAIL("error message");
    }
    CU_ASSERT_FALSE(tensor(s, "x").quantized); /* nothing set on failure */
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

static void test_errors(void)
{
    sampler sp = make_sampler(D_MIXED, 64);
    expect_error(&sp, 0, RD_CALIB_NORMAL, 2, RD_E_INVAL, "empty", NULL);
    for (int threads = 1; threads <= 2; threads++) {
        sp = make_sampler(D_MIXED, 64);
        sp.fail_at = 3;
        expect_error(&sp, 8, RD_CALIB_KL, threads, RD_E_IO, "sample 3", "broken3.png");
        sp = make_sampler(D_MIXED, 64);
        sp.bad_shape_at = 5;
        expect_error(&sp, 8, RD_CALIB_NORMAL, threads, RD_E_PARSE, "sample 5", "shape");
        sp = make_sampler(D_MIXED, 64);
        sp.inf_at = 2;
        expect_error(&sp, 8, RD_CALIB_MMSE, threads, RD_E_INVAL, "'x'", "finite");
    }
    /* the second pass fails too (a sample function that fails only the second time it is asked) */
    rd_model *m = mlp_model(64);
    rd_sim *s = make_sim(m);
    rd_error err;
    CU_ASSERT_EQUAL(rd_calibrate(s, NULL, NULL, 4, NULL, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(rd_calibrate(NULL, get_sample, NULL, 4, NULL, &err), RD_E_INVAL);
    rd_calib_options bad = {.method = (rd_calib_method)7};
    CU_ASSERT_EQUAL(rd_calibrate(s, get_sample, &sp, 4, &bad, &err), RD_E_INVAL);
    bad = (rd_calib_options){.threads = -1};
    CU_ASSERT_EQUAL(rd_calibrate(s, get_sample, &sp, 4, &bad, &err), RD_E_INVAL);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

/* A sample function that fails on the second pass only. */
typedef struct flaky {
    atomic_int seen[8];
} flaky;

static rd_status flaky_sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    flaky *f = user;
    if (atomic_fetch_add(&f->seen[k], 1) == 1 && k == 6)
        return rd_errorf(err, RD_E_IO, "file vanished");
    sampler sp = make_sampler(D_MIXED, 64);
    return get_sample(&sp, k, inputs, err);
}

static void test_error_second_pass(void)
{
    rd_model *m = mlp_model(64);
    rd_sim *s = make_sim(m);
    flaky f;
    for (int i = 0; i < 8; i++)
        atomic_init(&f.seen[i], 0);
    rd_calib_options co = {.method = RD_CALIB_KL, .threads = 2};
    rd_error err;
    CU_ASSERT_EQUAL(rd_calibrate(s, flaky_sample, &f, 8, &co, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "sample 6"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "file vanished"));
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

RD_TEST_REGISTER(register_calib)
{
    RD_SUITE("calib", {"normal min/max by hand", test_normal_minmax}, {"histogram bins", test_bins},
             {"1, 2 and 3 threads give identical ranges", test_threads_identical},
             {"kl clips outliers", test_kl_clips_outliers}, {"kl threshold", test_kl_threshold_direct},
             {"kl divergence matches a bin-by-bin reference", test_kl_matches_reference},
             {"mmse error of a uniform histogram", test_mmse_error_uniform},
             {"mmse keeps a uniform range", test_mmse_uniform_keeps_range},
             {"mmse clips rare outliers", test_mmse_rare_outliers_clipped}, {"progress", test_progress},
             {"errors", test_errors}, {"error in the second pass", test_error_second_pass});
}

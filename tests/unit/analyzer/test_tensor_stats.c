/*
 * test_tensor_stats.c: the per-tensor min, max and mean that `run` prints for every layer
 * (an_tensor_stats_compute, analyzer/cli/cli_model_args.c). A large tensor is cut into spans by its size
 * alone and summed over the run's pool: the figures are the same bits for 1, 2, 3 and 8 threads, and agree
 * with a plain long double reference; the vector pass gives the bits of the portable one.
 */
#include "cli_model_args.h"
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Fills t (float32, [n]) with values in [-4, 4) from a fixed linear congruential sequence. */
static void fill_f32(rd_tensor *t, int64_t n)
{
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(t, RD_DT_F32, 1, (const int64_t[]){n}, NULL), RD_OK);
    uint32_t x = 12345u;
    float *v = t->data;
    for (int64_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = (float)(x >> 8) / (float)(1u << 24) * 8.0f - 4.0f;
    }
}

/* The statistics with a pool of `threads` (1: no pool). */
static an_tensor_stats stats_with(const rd_tensor *t, int threads)
{
    rd_pool *pool = NULL;
    rd_error err = {0};
    if (threads > 1)
        CU_ASSERT_EQUAL_FATAL(rd_pool_create(threads, &pool, &err), RD_OK);
    an_tensor_stats s;
    an_tensor_stats_compute(t, pool, &s);
    rd_pool_destroy(pool);
    return s;
}

static void expect_same_for_every_thread_count(const rd_tensor *t)
{
    const an_tensor_stats one = stats_with(t, 1);
    const int counts[] = {2, 3, 8};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        const an_tensor_stats s = stats_with(t, counts[i]);
        CU_ASSERT_EQUAL(memcmp(&s, &one, sizeof s), 0);
    }
}

static void test_large_agrees_with_reference(void)
{
    const int64_t n = 1000003; /* neither a multiple of the spans nor of the eight lanes */
    rd_tensor t;
    fill_f32(&t, n);
    const float *v = t.data;
    float lo = INFINITY, hi = -INFINITY;
    long double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        lo = fminf(lo, v[i]);
        hi = fmaxf(hi, v[i]);
        sum += v[i];
    }
    const an_tensor_stats s = stats_with(&t, 2);
    CU_ASSERT_EQUAL(s.n, n);
    CU_ASSERT_EQUAL(s.min, lo);
    CU_ASSERT_EQUAL(s.max, hi);
    CU_ASSERT_DOUBLE_EQUAL(s.mean, (double)(sum / n), 1e-12);
    CU_ASSERT_EQUAL(s.n_nan + s.n_inf, 0);
    expect_same_for_every_thread_count(&t);
    rd_tensor_fini(&t);
}

static void test_large_with_nan_and_inf(void)
{
    const int64_t n = 300001;
    rd_tensor t;
    fill_f32(&t, n);
    float *v = t.data;
    long double finite_sum = 0;
    for (int64_t i = 0; i < n; i++)
        finite_sum += v[i];
    finite_sum -= (long double)v[17] + v[250000] + v[n - 1];
    v[17] = NAN;
    v[250000] = INFINITY;
    v[n - 1] = NAN;
    const an_tensor_stats s = stats_with(&t, 3);
    CU_ASSERT_EQUAL(s.n_nan, 2);
    CU_ASSERT_EQUAL(s.n_inf, 1);
    CU_ASSERT(s.max == INFINITY);
    CU_ASSERT(s.min >= -4.0 && s.min < -3.99);
    CU_ASSERT_DOUBLE_EQUAL(s.mean, (double)(finite_sum / (n - 3)), 1e-12);
    expect_same_for_every_thread_count(&t);
    rd_tensor_fini(&t);
}

static void test_small_and_empty(void)
{
    rd_tensor t;
    fill_f32(&t, 5);
    const float *v = t.data;
    const an_tensor_stats s = stats_with(&t, 2);
    CU_ASSERT_EQUAL(s.min, fminf(fminf(fminf(v[0], v[1]), fminf(v[2], v[3])), v[4]));
    CU_ASSERT_EQUAL(s.max, fmaxf(fmaxf(fmaxf(v[0], v[1]), fmaxf(v[2], v[3])), v[4]));
    CU_ASSERT_DOUBLE_EQUAL(s.mean, ((double)v[0] + v[1] + v[2] + v[3] + v[4]) / 5, 1e-15);
    rd_tensor_fini(&t);

    rd_tensor empty;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&empty, RD_DT_F32, 1, (const int64_t[]){0}, NULL), RD_OK);
    const an_tensor_stats e = stats_with(&empty, 2);
    CU_ASSERT_EQUAL(e.n, 0);
    CU_ASSERT(isnan(e.min) && isnan(e.max) && isnan(e.mean));
    rd_tensor_fini(&empty);
}

/* The vector and portable passes over a span give the same bits: every length from 0 to 70 (whole lanes and
   tails), NaN in some lanes (ignored alike), infinities, signed zeros and values of every size. */
static void test_vector_and_portable_paths_agree(void)
{
    float v[70];
    uint32_t x = 99u;
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < 70; i++) {
            x = x * 1664525u + 1013904223u;
            const int kind = (int)(x >> 28);
            const float mag = ldexpf((float)(x & 0xffff) / 65536.0f, (int)((x >> 16) & 63) - 31);
            v[i] = kind == 0   ? NAN
                   : kind == 1 ? -INFINITY
                   : kind == 2 ? -0.0f
                   : kind == 3 ? 0.0f
                               : (x & 1 ? -mag : mag);
        }
        for (int64_t n = 0; n <= 70; n++) {
            float lo_v, hi_v, lo_p, hi_p;
            double sum_v, sum_p;
            an_stats_span(v, n, true, &lo_v, &hi_v, &sum_v);
            an_stats_span(v, n, false, &lo_p, &hi_p, &sum_p);
            CU_ASSERT_EQUAL(memcmp(&lo_v, &lo_p, sizeof lo_v), 0);
            CU_ASSERT_EQUAL(memcmp(&hi_v, &hi_p, sizeof hi_v), 0);
            CU_ASSERT_EQUAL(memcmp(&sum_v, &sum_p, sizeof sum_v), 0);
        }
    }
}

RD_TEST_REGISTER(register_tensor_stats)
{
    RD_SUITE(
        "tensor_stats",
        {"a large tensor: the reference's figures, the same bits for 1-8 threads", test_large_agrees_with_reference},
        {"NaN and Inf counted apart in a large tensor", test_large_with_nan_and_inf},
        {"a small and an empty tensor", test_small_and_empty},
        {"the vector and portable passes give the same bits", test_vector_and_portable_paths_agree});
}

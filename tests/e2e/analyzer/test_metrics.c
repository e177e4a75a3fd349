/* test_metrics.c: every metric of docs/metrics.md on hand-computed cases, every degenerate class, aggregation. */
#include "metrics.h"
#include "rd_test.h"

#include <math.h>
#include <stdlib.h>

#define EPS 1e-12

static void test_ordinary(void)
{
    const float r[] = {1, 2, 3, 4}, t[] = {1, 2, 3, 5};
    rd_metrics m;
    an_metrics_compute(r, t, 4, NULL, &m);
    CU_ASSERT_EQUAL(m.degenerate, RD_DEG_NONE);
    CU_ASSERT_EQUAL(m.count, 4);
    /* uv = 34, uu = 30, vv = 39 */
    CU_ASSERT_DOUBLE_EQUAL(m.cos, 34.0 / sqrt(30.0 * 39.0), EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.euc, 1.0, EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.euc_rel, 1.0 / sqrt(30.0), EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.sqnr_db, 10 * log10(30.0), EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, 1.0, EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.mean_abs, 0.25, EPS);
    /* sxx = 5, sxy = 6.5: gain 1.3, offset 2.75 - 1.3 * 2.5 = -0.5; residuals .2 -.1 -.4 .3 (0.30),
     * fitted .8 2.1 3.4 4.7 (38.7) */
    CU_ASSERT_DOUBLE_EQUAL(m.gain, 1.3, EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.offset, -0.5, EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.sqnr_affine_db, 10 * log10(38.7 / 0.30), 1e-9);
    CU_ASSERT(isnan(m.err_steps));
    CU_ASSERT_DOUBLE_EQUAL(m.saturated_share, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.zero_share, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(an_cos_effective(&m), m.cos, 0);
}

/* "cos 1.00000 but euc 31.9": a pure gain error, which the affine fit explains completely. */
static void test_gain_error(void)
{
    const float r[] = {1, -2, 3, 0.5f}, t[] = {2, -4, 6, 1};
    rd_metrics m;
    an_metrics_compute(r, t, 4, NULL, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.cos, 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.euc, sqrt(1 + 4 + 9 + 0.25), EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.euc_rel, 1.0, EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.sqnr_db, 0.0, EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.gain, 2.0, EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.offset, 0.0, EPS);
    CU_ASSERT(isinf(m.sqnr_affine_db) && m.sqnr_affine_db > 0);
}

/* scipy clips 1 - cos to [0, 2]: identical tensors give exactly 1, opposite ones -1, orthogonal 0. */
static void test_cos_clip_and_sign(void)
{
    const float r[] = {0.1f, 0.2f, 0.3f, 0.7f};
    rd_metrics m;
    an_metrics_compute(r, r, 4, NULL, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.cos, 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.euc, 0.0, 0);
    CU_ASSERT(isinf(m.sqnr_db) && m.sqnr_db > 0);
    CU_ASSERT_DOUBLE_EQUAL(m.euc_rel, 0.0, 0);
    const float a[] = {1, 2}, b[] = {-2, 1}, c[] = {-1, -2};
    an_metrics_compute(a, b, 2, NULL, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.cos, 0.0, EPS);
    an_metrics_compute(a, c, 2, NULL, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.cos, -1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.gain, -1.0, EPS);
}

static void test_quantized(void)
{
    /* scale 0.5, zero point 0: codes -128..127 are -64 .. 63.5 */
    const float r[] = {64.0f, -70.0f, 1.25f, 0.0f}, t[] = {63.5f, -64.0f, 1.0f, 0.0f};
    an_metrics_ctx q = {.quantized = true, .scale = 0.5, .zero_point = 0, .fp16_overflow = 3, .fp16_max_abs = 7e4};
    rd_metrics m;
    an_metrics_compute(r, t, 4, &q, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.saturated_share, 0.5, 0);
    /* errors .5 -6 .25 0: sum of squares 36.3125 */
    CU_ASSERT_DOUBLE_EQUAL(m.err_steps, sqrt(36.3125 / 4) / 0.5, EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, 6.0, 0);
    CU_ASSERT_EQUAL(m.fp16_overflow, 3);
    CU_ASSERT_DOUBLE_EQUAL(m.fp16_max_abs, 7e4, 0);
    /* zero point 10 moves the limits to 0.5 * (-138) and 0.5 * 117 */
    const float t2[] = {58.5f, -69.0f, 1.0f, 0.0f};
    q.zero_point = 10;
    an_metrics_compute(r, t2, 4, &q, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.saturated_share, 0.5, 0);
    /* custom limits (uint8-like 0..255, zero point 128) */
    q.qmin = 0;
    q.qmax = 255;
    q.zero_point = 128;
    const float t3[] = {63.5f, -64.0f, 1.0f, 0.0f};
    an_metrics_compute(r, t3, 4, &q, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.saturated_share, 0.5, 0);
    /* values rounded to zero: 1 of the 3 non-zero references */
    const float zr[] = {1, 2, 0.1f, 0}, zt[] = {1, 2, 0, 0};
    an_metrics_compute(zr, zt, 4, NULL, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.zero_share, 1.0 / 3.0, EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.saturated_share, 0, 0);
}

static void test_degenerate(void)
{
    rd_metrics m;
    const float z[] = {0, 0, 0}, one[] = {1, 2, 2}, c2[] = {2, 2, 2}, c3[] = {3, 3, 3}, cn[] = {-1, -1, -1};
    an_metrics_compute(z, z, 3, NULL, &m);
    CU_ASSERT_EQUAL(m.degenerate, RD_DEG_BOTH_ZERO);
    CU_ASSERT(isnan(m.cos)); /* as RKNN prints it */
    CU_ASSERT_DOUBLE_EQUAL(an_cos_effective(&m), 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.euc, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.euc_rel, 0, 0);
    CU_ASSERT(isinf(m.sqnr_db) && m.sqnr_db > 0);
    CU_ASSERT(isnan(m.gain));

    an_metrics_compute(z, one, 3, NULL, &m);
    CU_ASSERT_EQUAL(m.degenerate, RD_DEG_REF_ZERO);
    CU_ASSERT(isnan(m.cos));
    CU_ASSERT_DOUBLE_EQUAL(an_cos_effective(&m), 0.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.euc, 3.0, EPS);
    CU_ASSERT(isinf(m.euc_rel));
    CU_ASSERT(isinf(m.sqnr_db) && m.sqnr_db < 0);

    an_metrics_compute(one, z, 3, NULL, &m);
    CU_ASSERT_EQUAL(m.degenerate, RD_DEG_TEST_ZERO);
    CU_ASSERT(isnan(m.cos));
    CU_ASSERT_DOUBLE_EQUAL(an_cos_effective(&m), 0.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.euc_rel, 1.0, EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.sqnr_db, 0.0, EPS);
    CU_ASSERT_DOUBLE_EQUAL(m.zero_share, 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.gain, 0.0, EPS);

    an_metrics_compute(c2, c3, 3, NULL, &m);
    CU_ASSERT_EQUAL(m.degenerate, RD_DEG_CONSTANT);
    CU_ASSERT_DOUBLE_EQUAL(m.cos, 1.0, 0);
    CU_ASSERT(isnan(m.gain) && isnan(m.offset) && isnan(m.sqnr_affine_db));
    CU_ASSERT_DOUBLE_EQUAL(m.euc, sqrt(3.0), EPS);
    an_metrics_compute(c2, cn, 3, NULL, &m);
    CU_ASSERT_EQUAL(m.degenerate, RD_DEG_CONSTANT);
    CU_ASSERT_DOUBLE_EQUAL(m.cos, -1.0, 0);

    const float with_nan[] = {1, NAN, 2}, with_inf[] = {1, INFINITY, 2};
    an_metrics_compute(one, with_nan, 3, NULL, &m);
    CU_ASSERT_EQUAL(m.degenerate, RD_DEG_NONFINITE);
    CU_ASSERT(isnan(m.cos) && isnan(m.euc) && isnan(an_cos_effective(&m)));
    CU_ASSERT(m.nan == 1 && m.inf == 0 && m.ref_nan == 0 && m.ref_inf == 0);
    /* shares counted past a NaN would read as the layer's: they are NaN too */
    CU_ASSERT(isnan(m.saturated_share) && isnan(m.zero_share));
    an_metrics_compute(with_inf, one, 3, NULL, &m);
    CU_ASSERT_EQUAL(m.degenerate, RD_DEG_NONFINITE);
    CU_ASSERT(isnan(m.cos));
    CU_ASSERT(isinf(m.euc));
    CU_ASSERT(m.nan == 0 && m.inf == 0 && m.ref_nan == 0 && m.ref_inf == 1);

    an_metrics_shape_mismatch(3, 4, &m);
    CU_ASSERT_EQUAL(m.degenerate, RD_DEG_SHAPE);
    CU_ASSERT(isnan(m.cos) && isnan(m.euc) && isnan(an_cos_effective(&m)));

    an_metrics_compute(NULL, NULL, 0, NULL, &m); /* empty tensors: nothing differs */
    CU_ASSERT_EQUAL(m.degenerate, RD_DEG_BOTH_ZERO);
    CU_ASSERT_DOUBLE_EQUAL(m.mean_abs, 0, 0);
}

static rd_metrics with_cos(double cos, double sqnr, rd_degenerate d)
{
    rd_metrics m = {0};
    m.cos = cos;
    m.euc = 1;
    m.sqnr_db = sqnr;
    m.sqnr_affine_db = sqnr;
    m.degenerate = d;
    m.count = 10;
    return m;
}

static void test_aggregation(void)
{
    an_group_acc acc;
    an_group_acc_init(&acc);
    rd_error err = {0};
    rd_metric_group g;
    an_metric_group_finish(&acc, &g);
    CU_ASSERT_FALSE(g.present);

    rd_metrics s[4] = {with_cos(0.9, 20, RD_DEG_NONE), with_cos(0.99, INFINITY, RD_DEG_NONE),
                       with_cos(0.5, 30, RD_DEG_NONE), with_cos(0.95, 40, RD_DEG_NONE)};
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(an_metric_group_add(&acc, &s[i], 10 + i, &err), RD_OK);
    an_metric_group_finish(&acc, &g);
    CU_ASSERT(g.present);
    CU_ASSERT_EQUAL(g.n_samples, 4);
    CU_ASSERT_DOUBLE_EQUAL(g.mean.cos, (0.9 + 0.99 + 0.5 + 0.95) / 4, EPS);
    CU_ASSERT_DOUBLE_EQUAL(g.mean.sqnr_db, 30.0, EPS); /* the identical sample (+inf dB) left out */
    CU_ASSERT_DOUBLE_EQUAL(g.cos_min, 0.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(g.cos_p5, 0.5, 0); /* rank ceil(0.05 * 4) = 1 */
    CU_ASSERT_EQUAL(g.worst_sample, 12);

    /* a NaN (nonfinite) sample is the worst; a both_zero one counts as 1 */
    rd_metrics bad = with_cos(NAN, NAN, RD_DEG_NONFINITE), zero = with_cos(NAN, INFINITY, RD_DEG_BOTH_ZERO);
    an_metric_group_add(&acc, &zero, 14, &err);
    an_metric_group_add(&acc, &bad, 15, &err);
    an_metric_group_finish(&acc, &g);
    CU_ASSERT(isnan(g.cos_min));
    CU_ASSERT_EQUAL(g.worst_sample, 15);
    CU_ASSERT_EQUAL(g.mean.degenerate, RD_DEG_NONFINITE);
    CU_ASSERT(isnan(g.mean.cos));     /* RKNN's cos of those samples is nan: so is the mean */
    CU_ASSERT(isnan(g.mean.sqnr_db)); /* not the mean of the other samples' dB */
    an_group_acc_fini(&acc);

    /* nearest rank on 40 samples: the 2nd smallest */
    an_group_acc_init(&acc);
    for (int i = 0; i < 40; i++) {
        rd_metrics m = with_cos(0.6 + 0.01 * i, 10, RD_DEG_NONE);
        an_metric_group_add(&acc, &m, i, &err);
    }
    an_metric_group_finish(&acc, &g);
    CU_ASSERT_DOUBLE_EQUAL(g.cos_min, 0.6, EPS);
    CU_ASSERT_DOUBLE_EQUAL(g.cos_p5, 0.61, EPS);
    CU_ASSERT_EQUAL(g.worst_sample, 0);
    an_group_acc_fini(&acc);
}

static void test_channels_and_histogram(void)
{
    /* [2 batches, 2 channels, 2]: channel 0 identical, channel 1 zeroed by the tested side */
    const float r[] = {1, 2, 3, 4, 5, 6, 7, 8}, t[] = {1, 2, 0, 0, 5, 6, 0, 0};
    const int64_t dims[] = {2, 2, 2};
    rd_channel_cos cc;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(an_channel_cos(r, t, 3, dims, &cc, &err), RD_OK);
    CU_ASSERT_EQUAL(cc.n, 2);
    CU_ASSERT_DOUBLE_EQUAL(cc.cos[0], 1.0, EPS);
    CU_ASSERT_DOUBLE_EQUAL(cc.cos[1], 0.0, 0);
    free(cc.cos);
    const int64_t d1[] = {8};
    CU_ASSERT_EQUAL_FATAL(an_channel_cos(r, r, 1, d1, &cc, &err), RD_OK);
    CU_ASSERT_EQUAL(cc.n, 1);
    CU_ASSERT_DOUBLE_EQUAL(cc.cos[0], 1.0, EPS);
    free(cc.cos);

    const float hr[] = {0, 1, 2, 3}, ht[] = {0, 0, 4, 4};
    rd_histogram h;
    CU_ASSERT_EQUAL_FATAL(an_histogram(hr, ht, 4, 4, &h, &err), RD_OK);
    CU_ASSERT_DOUBLE_EQUAL(h.lo, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(h.hi, 4, 0);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(h.golden[i], 1);
    CU_ASSERT_EQUAL(h.tested[0], 2);
    CU_ASSERT_EQUAL(h.tested[3], 2);
    free(h.golden);
    free(h.tested);
    const float cst[] = {5, 5, NAN};
    CU_ASSERT_EQUAL_FATAL(an_histogram(cst, cst, 3, 2, &h, &err), RD_OK);
    CU_ASSERT_DOUBLE_EQUAL(h.lo, 2.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(h.hi, 7.5, 0);
    CU_ASSERT_EQUAL(h.golden[1], 2); /* 5 is the middle: the upper bin; NaN not counted */
    CU_ASSERT_EQUAL(h.golden[0], 0);
    free(h.golden);
    free(h.tested);
    CU_ASSERT_EQUAL(an_histogram(cst, cst, 3, 0, &h, &err), RD_E_INVAL);
}

RD_TEST_REGISTER(register_metrics)
{
    RD_SUITE("metrics", {"ordinary tensors", test_ordinary}, {"gain error", test_gain_error},
             {"cosine clip and sign", test_cos_clip_and_sign}, {"int8 steps, saturation, zeros", test_quantized},
             {"degenerate classes", test_degenerate}, {"aggregation over samples", test_aggregation},
             {"channels and histogram", test_channels_and_histogram});
}

/* test_quant_math.c: INT8 quantization parameters, fake-quantization, FP16 rounding and weight quantization. */
#include "rd_test.h"
#include "quant.h"

#include <float.h>
#include <math.h>
#include <string.h>

static uint32_t rng_next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void test_qparams_rknn_example(void)
{
    float s;
    int32_t zp;
    sim_qparams_from_range(-1.0f, 1.0f, &s, &zp);
    CU_ASSERT_EQUAL(zp, 0); /* -128 + 127.5 = -0.5 exactly in double: ties to even */
    CU_ASSERT_EQUAL(s, (float)(2.0 / 255.0));
}

static void test_qparams_widen_and_zero_width(void)
{
    float s;
    int32_t zp;
    sim_qparams_from_range(0.5f, 2.0f, &s, &zp); /* widened to [0, 2] */
    CU_ASSERT_EQUAL(s, (float)(2.0 / 255.0));
    CU_ASSERT_EQUAL(zp, -128);
    sim_qparams_from_range(-3.0f, -1.0f, &s, &zp); /* widened to [-3, 0] */
    CU_ASSERT_EQUAL(s, (float)(3.0 / 255.0));
    CU_ASSERT_EQUAL(zp, 127);
    sim_qparams_from_range(0.0f, 0.0f, &s, &zp);
    CU_ASSERT_EQUAL(s, 1.0f);
    CU_ASSERT_EQUAL(zp, 0);
    sim_qparams_from_range(2.0f, 2.0f, &s, &zp); /* a point range away from 0 is not zero-width after widening */
    CU_ASSERT_EQUAL(s, (float)(2.0 / 255.0));
    CU_ASSERT_EQUAL(zp, -128);
    sim_qparams_from_range(NAN, NAN, &s, &zp);
    CU_ASSERT_EQUAL(s, 1.0f);
    CU_ASSERT_EQUAL(zp, 0);
    sim_qparams_from_range(-INFINITY, INFINITY, &s, &zp);
    CU_ASSERT_TRUE(s > 0 && isfinite(s));
}

static void test_qparams_ties_to_even(void)
{
    float s;
    int32_t zp;
    sim_qparams_from_range(-3.5f, 251.5f, &s, &zp); /* scale 1: -128 + 3.5 = -124.5 -> -124 (away: -125) */
    CU_ASSERT_EQUAL(s, 1.0f);
    CU_ASSERT_EQUAL(zp, -124);
    sim_qparams_from_range(-2.5f, 252.5f, &s, &zp); /* -125.5 -> -126 */
    CU_ASSERT_EQUAL(zp, -126);
}

/* The rule written out per element, for comparison with the vector code. */
static float fq_scalar(float x, float scale, int32_t zp, int *sat, int *zero)
{
    float t = x / scale;
    if (isnan(t))
        t = 0;
    double r = nearbyint((double)t) + zp;
    *sat = r < -128 || r > 127;
    if (r < -128)
        r = -128;
    if (r > 127)
        r = 127;
    const float out = scale * (float)(r - zp);
    *zero = out == 0 && x != 0 && !isnan(x);
    return out;
}

static void test_fake_quant_known_values(void)
{
    float x[] = {0.25f, 0.75f, -0.25f, 100.0f, -100.0f, 63.5f, -64.0f, INFINITY, NAN, 0.0f, 1.25f};
    const float want[] = {0.0f, 1.0f, 0.0f, 63.5f, -64.0f, 63.5f, -64.0f, 63.5f, 0.0f, 0.0f, 1.0f};
    int64_t sat = -1, zero = -1;
    sim_fake_quant_i8(x, 11, 0.5f, 0, &sat, &zero);
    for (int i = 0; i < 11; i++)
        CU_ASSERT_EQUAL(x[i], want[i]);
    CU_ASSERT_EQUAL(sat, 3);  /* 100, -100, inf; 63.5 and -64 land exactly on the ends */
    CU_ASSERT_EQUAL(zero, 2); /* 0.25 and -0.25 (ties to even 0); NaN and 0 are not counted */
    /* an asymmetric zero point: codes [-128, 127] map to [-128 - zp, 127 - zp] steps */
    float y[] = {-10.0f, 10.0f, 0.1f};
    sim_fake_quant_i8(y, 3, 1.0f, 120, &sat, &zero);
    CU_ASSERT_EQUAL(y[0], -10.0f);
    CU_ASSERT_EQUAL(y[1], 7.0f);
    CU_ASSERT_EQUAL(y[2], 0.0f);
    CU_ASSERT_EQUAL(sat, 1);
    CU_ASSERT_EQUAL(zero, 1);
    sim_fake_quant_i8(y, 0, 1.0f, 0, NULL, NULL);
}

static void test_fake_quant_matches_scalar_rule(void)
{
    uint32_t s = 1234567;
    const int32_t zps[] = {-128, -5, 0, 77, 127};
    for (int z = 0; z < 5; z++) {
        for (int64_t n = 0; n < 40; n += 7) {
            float x[40], orig[40];
            int8_t q[40];
            const float scale = 0.01f + (float)(rng_next(&s) % 1000) / 997.0f;
            int64_t want_sat = 0, want_zero = 0;
            for (int64_t i = 0; i < n; i++) {
                /* halves of the step give ties; some values far outside the range */
                const int32_t k = (int32_t)(rng_next(&s) % 1200) - 600;
                x[i] = orig[i] = (rng_next(&s) & 1) ? (float)k * 0.5f * scale : (float)k * 0.37f * scale;
            }
            float ref[40];
            for (int64_t i = 0; i < n; i++) {
                int st, zr;
                ref[i] = fq_scalar(orig[i], scale, zps[z], &st, &zr);
                want_sat += st;
                want_zero += zr;
            }
            int64_t sat, zero;
            float centred[40];
            double centred64[40];
            sim_quantize_i8(orig, n, scale, zps[z], q);
            sim_quantize_centered_f32(orig, n, scale, zps[z], -128, 127, centred);
            sim_quantize_centered(orig, n, scale, zps[z], -128, 127, centred64);
            sim_fake_quant_i8(x, n, scale, zps[z], &sat, &zero);
            for (int64_t i = 0; i < n; i++) {
                CU_ASSERT_EQUAL(x[i], ref[i]);
                CU_ASSERT_EQUAL(x[i], scale * (float)(q[i] - zps[z]));
                CU_ASSERT_EQUAL(x[i], scale * centred[i]);
                CU_ASSERT_EQUAL(x[i], scale * (float)centred64[i]);
            }
            CU_ASSERT_EQUAL(sat, want_sat);
            CU_ASSERT_EQUAL(zero, want_zero);
        }
    }
}

/* Values around the half steps of scale (ties, and the floats within a few units of them, where a product by
   1 / scale could round otherwise than the quotient), around the codes, random ones and the special values. */
static int64_t near_half_steps(float scale, uint32_t *s, float *x, int64_t cap)
{
    static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, FLT_MAX, -FLT_MAX, FLT_MIN, 1e-40f, -1e-40f};
    int64_t n = 0;
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        x[n++] = special[i];
    while (n + 12 <= cap) {
        const int32_t k = (int32_t)(rng_next(s) % 600) - 300;
        const float half = ((float)k + 0.5f) * scale, code = (float)k * scale;
        float up = half, down = half;
        x[n++] = half;
        x[n++] = code;
        for (int j = 0; j < 4; j++) {
            up = nextafterf(up, INFINITY);
            down = nextafterf(down, -INFINITY);
            x[n++] = up;
            x[n++] = down;
        }
        x[n++] = ((float)(rng_next(s) % 2000001) - 1000000.0f) * 1e-4f * scale;
        x[n++] = ((float)k + 0.5f) * (scale * 0.5f) * 2.0f; /* a half step reached through another grid */
    }
    return n;
}

/* The eight-lane code gives the bits of the scalar rule (a division) everywhere, the half steps and their
   neighbours included, for scales of every size (where a product by 1 / scale would not: docs/benchmarks.md). */
static void test_fake_quant_near_half_steps(void)
{
    enum { N = 2400 };
    static float orig[N], x[N], ref[N], centred[N];
    static double centred64[N];
    static int8_t q[N];
    uint32_t s = 97531;
    const int32_t zps[] = {-128, -3, 0, 64, 127};
    int64_t mismatches = 0, values = 0;
    for (int trial = 0; trial < 120; trial++) {
        /* mantissas in [1, 2) times 2^-40 .. 2^20; some exact powers of two and thirds */
        const int e = (int)(rng_next(&s) % 61) - 40;
        const float m = trial % 7 == 0   ? 1.0f
                        : trial % 7 == 1 ? 1.5f
                                         : 1.0f + (float)(rng_next(&s) % 8388608) / 8388608.0f;
        const float scale = ldexpf(m, e);
        const int32_t zp = zps[trial % 5];
        const int64_t n = near_half_steps(scale, &s, orig, N);
        int64_t want_sat = 0, want_zero = 0;
        for (int64_t i = 0; i < n; i++) {
            int st, zr;
            ref[i] = fq_scalar(orig[i], scale, zp, &st, &zr);
            want_sat += st;
            want_zero += zr;
        }
        memcpy(x, orig, (size_t)n * sizeof *x);
        int64_t sat = -1, zero = -1;
        sim_fake_quant_i8(x, n, scale, zp, &sat, &zero);
        sim_quantize_i8(orig, n, scale, zp, q);
        sim_quantize_centered_f32(orig, n, scale, zp, -128, 127, centred);
        sim_quantize_centered(orig, n, scale, zp, -128, 127, centred64);
        for (int64_t i = 0; i < n; i++) {
            const float from_codes = scale * (float)(q[i] - zp), from_centred = scale * centred[i];
            const float from_centred64 = scale * (float)centred64[i];
            if (memcmp(&x[i], &ref[i], sizeof x[i]) != 0 || memcmp(&from_codes, &ref[i], sizeof ref[i]) != 0 ||
                memcmp(&from_centred, &ref[i], sizeof ref[i]) != 0 ||
                memcmp(&from_centred64, &ref[i], sizeof ref[i]) != 0) {
                if (mismatches++ < 5)
                    fprintf(stderr, "scale %a zp %d x %a: %a, codes %a, centred %a, want %a\n", (double)scale, zp,
                            (double)orig[i], (double)x[i], (double)from_codes, (double)from_centred, (double)ref[i]);
            }
        }
        values += n;
        CU_ASSERT_EQUAL(sat, want_sat);
        CU_ASSERT_EQUAL(zero, want_zero);
    }
    CU_ASSERT_EQUAL(mismatches, 0);
    CU_ASSERT_TRUE(values > 200000);
}

/* A layer's input codes from values already on the grid (the eight-lane code's path without the division,
   verified per vector) and from the grid's neighbours and beyond its range (the path with it): the codes of the
   scalar rule, for scales of every size and every zero point. */
static void test_codes_of_grid_values(void)
{
    enum { N = 512 };
    static float x[N];
    static int8_t q[N];
    static float centred[N];
    static double centred64[N];
    uint32_t s = 4242;
    const int32_t zps[] = {-128, -7, 0, 33, 127};
    int64_t mismatches = 0;
    for (int trial = 0; trial < 200; trial++) {
        const int e = (int)(rng_next(&s) % 61) - 40;
        const float scale = ldexpf(1.0f + (float)(rng_next(&s) % 8388608) / 8388608.0f, e);
        const int32_t zp = zps[trial % 5];
        for (int i = 0; i < N; i++) {
            const int32_t k = (int32_t)(rng_next(&s) % 600) - 300; /* beyond [-128, 127] - zp too */
            x[i] = (float)k * scale;
            if (trial % 4 == 3 && i % 37 == 0) /* a vector off the grid now and then */
                x[i] = nextafterf(x[i], INFINITY);
            if (trial % 8 == 7 && i == 100)
                x[i] = trial % 16 == 7 ? -0.0f : NAN;
        }
        sim_quantize_i8(x, N, scale, zp, q);
        sim_quantize_centered_f32(x, N, scale, zp, -128, 127, centred);
        sim_quantize_centered(x, N, scale, zp, -128, 127, centred64);
        for (int i = 0; i < N; i++) {
            int st, zr;
            const float want = fq_scalar(x[i], scale, zp, &st, &zr);
            const float from_q = scale * (float)(q[i] - zp), from_c = scale * centred[i];
            const float from_c64 = scale * (float)centred64[i];
            if (memcmp(&from_q, &want, sizeof want) != 0 || memcmp(&from_c, &want, sizeof want) != 0 ||
                memcmp(&from_c64, &want, sizeof want) != 0) {
                if (mismatches++ < 5)
                    fprintf(stderr, "scale %a zp %d x %a: codes %a, centred %a, centred64 %a, want %a\n", (double)scale,
                            zp, (double)x[i], (double)from_q, (double)from_c, (double)from_c64, (double)want);
            }
        }
    }
    CU_ASSERT_EQUAL(mismatches, 0);
}

static void test_round_f16_counts(void)
{
    float x[] = {1.0f, 65504.0f, 65519.0f, 65520.0f, -70000.0f, INFINITY, NAN, 1e-8f, 1.0f + 1.0f / 2048};
    int64_t ov = -1, first = -2;
    double m = -1;
    sim_round_f16(x, 9, &ov, &first, &m);
    CU_ASSERT_EQUAL(ov, 2);
    CU_ASSERT_EQUAL(first, 3);
    CU_ASSERT_EQUAL(m, 70000.0);
    CU_ASSERT_EQUAL(x[1], 65504.0f);
    CU_ASSERT_EQUAL(x[2], 65504.0f);
    CU_ASSERT_TRUE(isinf(x[3]) && x[3] > 0);
    CU_ASSERT_TRUE(isinf(x[4]) && x[4] < 0);
    CU_ASSERT_TRUE(isinf(x[5]));
    CU_ASSERT_TRUE(isnan(x[6]));
    CU_ASSERT_EQUAL(x[7], rd_f16_to_f32(rd_f32_to_f16(1e-8f)));
    CU_ASSERT_EQUAL(x[8], 1.0f);
    float y[] = {-3.0f, 2.0f};
    sim_round_f16(y, 2, &ov, &first, &m);
    CU_ASSERT_EQUAL(ov, 0);
    CU_ASSERT_EQUAL(first, -1);
    CU_ASSERT_EQUAL(m, 3.0);
}

static void test_round_f16_bitwise(void)
{
    enum { N = 4099 };
    static float x[N];
    uint32_t s = 99;
    for (int i = 0; i < N; i++) {
        uint32_t bits = rng_next(&s);
        if (i % 3 == 0)
            bits = (bits & 0x80ffffffu) | (0x30u << 24); /* around the half range */
        memcpy(&x[i], &bits, sizeof bits);
    }
    static float want[N];
    for (int i = 0; i < N; i++)
        want[i] = rd_f16_to_f32(rd_f32_to_f16(x[i]));
    sim_round_f16(x, N, NULL, NULL, NULL);
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (!(isnan(want[i]) && isnan(x[i])) && memcmp(&want[i], &x[i], sizeof x[i]) != 0)
            bad++;
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_weights_per_channel(void)
{
    const float w[] = {0.5f, -1.27f, 1.27f, 0.0f, 0.0f, 0.0f, 2.0f, -1.0f, 0.25f};
    rd_tensor t = {.dtype = RD_DT_F32, .rank = 4, .dims = {3, 1, 1, 3}, .data = (void *)w};
    int8_t *q = NULL;
    float *sc = NULL;
    int ns = 0;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(sim_quant_weights_i8(&t, 0, false, &q, &sc, &ns, &err), RD_OK);
    CU_ASSERT_EQUAL(ns, 3);
    CU_ASSERT_EQUAL(sc[0], 1.27f / 127.0f);
    CU_ASSERT_EQUAL(sc[1], 1.0f); /* channel of zeros */
    CU_ASSERT_EQUAL(sc[2], 2.0f / 127.0f);
    CU_ASSERT_EQUAL(q[1], -127);
    CU_ASSERT_EQUAL(q[2], 127);
    CU_ASSERT_EQUAL(q[0], (int8_t)nearbyintf(0.5f / sc[0]));
    CU_ASSERT_EQUAL(q[3], 0);
    CU_ASSERT_EQUAL(q[6], 127);
    CU_ASSERT_EQUAL(q[7], (int8_t)nearbyintf(-1.0f / sc[2]));
    free(q);
    free(sc);
    CU_ASSERT_EQUAL_FATAL(sim_quant_weights_i8(&t, 0, true, &q, &sc, &ns, &err), RD_OK);
    CU_ASSERT_EQUAL(ns, 1);
    CU_ASSERT_EQUAL(sc[0], 2.0f / 127.0f);
    CU_ASSERT_EQUAL(q[6], 127);
    CU_ASSERT_EQUAL(q[1], (int8_t)nearbyintf(-1.27f / sc[0]));
    free(q);
    free(sc);
    /* Gemm B [K=3, N=3] with transB = 0: channels along axis 1 */
    rd_tensor g = {.dtype = RD_DT_F32, .rank = 2, .dims = {3, 3}, .data = (void *)w};
    CU_ASSERT_EQUAL_FATAL(sim_quant_weights_i8(&g, 1, false, &q, &sc, &ns, &err), RD_OK);
    CU_ASSERT_EQUAL(ns, 3);
    CU_ASSERT_EQUAL(sc[0], 2.0f / 127.0f);
    CU_ASSERT_EQUAL(sc[1], 1.27f / 127.0f);
    CU_ASSERT_EQUAL(sc[2], 1.27f / 127.0f);
    free(q);
    free(sc);
}

static void test_weights_grouped_and_scaled(void)
{
    /* ConvTranspose W [C=4, M/group=2, 1] with group 2: output channel (c / 2) * 2 + m */
    const float w[] = {1, 2, 3, 4, 5, 6, 7, 8};
    rd_tensor t = {.dtype = RD_DT_F32, .rank = 3, .dims = {4, 2, 1}, .data = (void *)w};
    int8_t *q = NULL;
    float *sc = NULL;
    int ns = 0;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(sim_quant_weights_i8_grouped(&t, 1, 2, false, &q, &sc, &ns, &err), RD_OK);
    CU_ASSERT_EQUAL(ns, 4);
    CU_ASSERT_EQUAL(sc[0], 3.0f / 127.0f); /* c 0..1, m 0: 1, 3 */
    CU_ASSERT_EQUAL(sc[1], 4.0f / 127.0f);
    CU_ASSERT_EQUAL(sc[2], 7.0f / 127.0f);
    CU_ASSERT_EQUAL(sc[3], 8.0f / 127.0f);
    free(q);
    free(sc);
    CU_ASSERT_EQUAL(sim_quant_weights_i8_grouped(&t, 1, 3, false, &q, &sc, &ns, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NULL(q);
    const float given[] = {0.01f, 0.05f};
    int64_t sat = -1;
    CU_ASSERT_EQUAL_FATAL(sim_quant_weights_i8_scaled(&t, 1, 1, given, 2, &q, &sat, &err), RD_OK);
    CU_ASSERT_EQUAL(q[0], 100);
    CU_ASSERT_EQUAL(q[1], 40);
    CU_ASSERT_EQUAL(q[2], 127); /* 300 clamps */
    CU_ASSERT_EQUAL(sat, 4);    /* 3, 5, 7 at 0.01 and 8 at 0.05 */
    free(q);
    CU_ASSERT_EQUAL(sim_quant_weights_i8_scaled(&t, 1, 1, given, 3, &q, NULL, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "3 scales"));
    const float bad[] = {0.0f, 1.0f};
    CU_ASSERT_EQUAL(sim_quant_weights_i8_scaled(&t, 1, 1, bad, 2, &q, NULL, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(sim_quant_weights_i8(&t, 3, false, &q, &sc, &ns, &err), RD_E_INVAL);
    const float nf[] = {1, NAN};
    rd_tensor tn = {.dtype = RD_DT_F32, .rank = 1, .dims = {2}, .data = (void *)nf};
    CU_ASSERT_EQUAL(sim_quant_weights_i8(&tn, 0, false, &q, &sc, &ns, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "offset 1"));
    rd_tensor ti = {.dtype = RD_DT_I32, .rank = 1, .dims = {2}, .data = (void *)nf};
    CU_ASSERT_EQUAL(sim_quant_weights_i8(&ti, 0, false, &q, &sc, &ns, &err), RD_E_INVAL);
}

/* RKNN's asymmetric per-channel weights: each channel's [min(w,0), max(w,0)] by the activation rule. */
static void test_weights_asymmetric(void)
{
    /* Conv W [3, 1, 1, 3]: a mixed channel, an all-positive one, one of zeros */
    const float w[] = {-0.3f, 0.1f, 0.9f, 0.2f, 0.4f, 0.8f, 0, 0, 0};
    rd_tensor t = {.dtype = RD_DT_F32, .rank = 4, .dims = {3, 1, 1, 3}, .data = (void *)w};
    int8_t *q = NULL;
    float *sc = NULL;
    int32_t *zp = NULL;
    int ns = 0;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(sim_quant_weights_i8_asym(&t, 0, 1, false, &q, &sc, &zp, &ns, &err), RD_OK);
    CU_ASSERT_EQUAL(ns, 3);
    for (int c = 0; c < 3; c++) {
        float want_s;
        int32_t want_zp;
        float lo = 0, hi = 0;
        for (int i = 0; i < 3; i++) {
            lo = fminf(lo, w[c * 3 + i]);
            hi = fmaxf(hi, w[c * 3 + i]);
        }
        sim_qparams_from_range(lo, hi, &want_s, &want_zp);
        CU_ASSERT_EQUAL(sc[c], want_s);
        CU_ASSERT_EQUAL(zp[c], want_zp);
        for (int i = 0; i < 3; i++) {
            float r = nearbyintf(w[c * 3 + i] / sc[c]) + (float)zp[c];
            CU_ASSERT_EQUAL(q[c * 3 + i], (int8_t)fmaxf(-128.0f, fminf(127.0f, r)));
        }
    }
    CU_ASSERT_EQUAL(zp[1], -128); /* an all-positive channel: the range starts at 0 */
    CU_ASSERT_EQUAL(q[3 + 2], 127);
    CU_ASSERT_EQUAL(q[0], -128); /* the channel minimum takes the lowest code */
    CU_ASSERT_EQUAL(q[2], 127);
    CU_ASSERT_EQUAL(sc[2], 1.0f); /* zeros: scale 1, zero point 0 */
    free(q);
    free(sc);
    free(zp);
    /* given zero points: full int8 range; one out of range is refused */
    const float given[] = {0.01f, 0.01f, 0.01f};
    const int32_t zps[] = {0, -128, 127};
    int64_t sat = -1;
    CU_ASSERT_EQUAL_FATAL(sim_quant_weights_i8_scaled_zp(&t, 0, 1, given, zps, 3, &q, &sat, &err), RD_OK);
    CU_ASSERT_EQUAL(q[0], -30);
    CU_ASSERT_EQUAL(q[2], 90);
    CU_ASSERT_EQUAL(q[3], -108);
    CU_ASSERT_EQUAL(q[5], -48);
    CU_ASSERT_EQUAL(q[6], 127);
    CU_ASSERT_EQUAL(sat, 0);
    free(q);
    const int32_t bad[] = {0, -129, 0};
    CU_ASSERT_EQUAL(sim_quant_weights_i8_scaled_zp(&t, 0, 1, given, bad, 3, &q, NULL, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "zero point 1 is -129"));
}

static void test_bias_quant(void)
{
    CU_ASSERT_EQUAL(sim_quant_bias_i32(2.5, 1.0), 2);
    CU_ASSERT_EQUAL(sim_quant_bias_i32(3.5, 1.0), 4);
    CU_ASSERT_EQUAL(sim_quant_bias_i32(-2.5, 1.0), -2);
    CU_ASSERT_EQUAL(sim_quant_bias_i32(1.0, 0.25), 4);
    CU_ASSERT_EQUAL(sim_quant_bias_i32(1e30, 1e-3), INT32_MAX);
    CU_ASSERT_EQUAL(sim_quant_bias_i32(-1e30, 1e-3), INT32_MIN);
    CU_ASSERT_EQUAL(sim_quant_bias_i32(NAN, 1.0), 0);
}

RD_TEST_REGISTER(register_quant_math)
{
    RD_SUITE("quant_math", {"qparams: RKNN example -1..1", test_qparams_rknn_example},
             {"qparams: widening, zero width, NaN", test_qparams_widen_and_zero_width},
             {"qparams: ties to even", test_qparams_ties_to_even},
             {"fake quant: known values and counts", test_fake_quant_known_values},
             {"fake quant: vector code = scalar rule", test_fake_quant_matches_scalar_rule},
             {"fake quant: half steps, scales of every size", test_fake_quant_near_half_steps},
             {"input codes: values on the grid and off it, scales of every size", test_codes_of_grid_values},
             {"fp16: overflow counts around 65504/65520", test_round_f16_counts},
             {"fp16: bitwise equal to rd_f32_to_f16", test_round_f16_bitwise},
             {"weights: per channel / per tensor", test_weights_per_channel},
             {"weights: grouped, given scales, errors", test_weights_grouped_and_scaled},
             {"weights: asymmetric per channel, given zero points", test_weights_asymmetric},
             {"bias: int32, ties to even, saturation", test_bias_quant});
}

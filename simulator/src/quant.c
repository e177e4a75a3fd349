/*
 * quant.c: quantization parameters, activation fake-quantization, FP16 rounding and weight quantization
 * (docs/numerics.md; contracts in quant.h). Activations go through here on every layer, so the int8
 * paths work on four lanes at a time with GCC vector extensions (SSE2/AVX/NEON, whatever the target
 * has) and on eight with AVX2 when the CPU has it (fake quantization and input codes: the same IEEE
 * operations per lane, so the same bits), the float16 path with F16C when the CPU has it.
 */
#include "quant.h"

#include <float.h>
#include <math.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define QUANT_HAVE_F16C 1
#endif

/* ---------------------------------------------------------------------------------------------------
 * Parameters
 */

static float finite_or_zero(float v)
{
    if (isnan(v))
        return 0.0f;
    if (isinf(v))
        return v > 0 ? FLT_MAX : -FLT_MAX;
    return v;
}

/* [min, max] made finite and stretched to hold 0 (the code of the zero point); false when it is empty. */
static bool range_with_zero(float min, float max, double *lo, double *hi)
{
    *lo = finite_or_zero(min);
    *hi = finite_or_zero(max);
    if (*lo > 0)
        *lo = 0;
    if (*hi < 0)
        *hi = 0;
    return *hi - *lo > 0;
}

/* Asymmetric parameters mapping [lo, hi] (non-empty, holding 0) onto the codes [qmin, qmax]. */
static void affine_params(double lo, double hi, double qmin, double qmax, float *scale, int32_t *zero_point)
{
    const double s = (hi - lo) / (qmax - qmin);
    double zp = nearbyint(qmin - lo / s); /* default rounding mode: half to even */
    if (zp < qmin)
        zp = qmin;
    if (zp > qmax)
        zp = qmax;
    float sf = (float)s;
    if (!(sf > 0) || isinf(sf))
        sf = sf > 0 ? FLT_MAX : FLT_MIN; /* a range below FLT_MIN * (qmax - qmin) or beyond FLT_MAX */
    *scale = sf;
    *zero_point = (int32_t)zp;
}

void sim_qparams_from_range(float min, float max, float *scale, int32_t *zero_point)
{
    double lo, hi;
    if (!range_with_zero(min, max, &lo, &hi)) {
        *scale = 1.0f;
        *zero_point = 0;
        return;
    }
    affine_params(lo, hi, -128.0, 127.0, scale, zero_point);
}

/* The smallest power of two p with amax <= qmax * p (amax > 0, finite), computed exactly. */
static double pow2_scale_for(double amax, double qmax)
{
    int e;
    (void)frexp(amax / qmax, &e); /* amax / qmax in [2^(e-1), 2^e) */
    double p = ldexp(1.0, e);
    while (p > DBL_MIN && amax <= qmax * (p / 2))
        p /= 2;
    while (amax > qmax * p)
        p *= 2;
    return p;
}

void sim_qparams16_from_range(float min, float max, bool dfp, float *scale, int32_t *zero_point)
{
    double lo, hi;
    *zero_point = 0;
    *scale = 1.0f;
    if (!range_with_zero(min, max, &lo, &hi))
        return;
    if (dfp) {
        const double amax = hi > -lo ? hi : -lo;
        double p = pow2_scale_for(amax, 32767.0);
        /* float keeps every power of two between 2^-149 and 2^127 exactly */
        *scale = p < 0x1p-149 ? 0x1p-149f : p > 0x1p127 ? 0x1p127f : (float)p;
        return;
    }
    affine_params(lo, hi, -32768.0, 32767.0, scale, zero_point);
}

/* ---------------------------------------------------------------------------------------------------
 * Activations: four lanes at a time
 */

/* 16-byte vectors: the SSE2 baseline passes them in registers (32-byte ones would change the ABI) */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef int8_t v4c __attribute__((vector_size(4)));

#define ZP_LIMIT (1 << 20)

static inline v4f splat(float v)
{
    return (v4f){v, v, v, v};
}

/* Lanes of a where m is all ones, else lanes of b. */
static inline v4f select_f(v4i m, v4f a, v4f b)
{
    return (v4f)(((v4i)a & m) | ((v4i)b & ~m));
}

typedef struct q8_lanes {
    v4f scale, lo, hi, lo1, hi1; /* code range minus zp: [lo, hi]; t is first clamped to [lo-1, hi+1] */
} q8_lanes;

static q8_lanes q_lanes_make(float scale, int32_t zp, int32_t qmin, int32_t qmax)
{
    if (zp > ZP_LIMIT)
        zp = ZP_LIMIT;
    if (zp < -ZP_LIMIT)
        zp = -ZP_LIMIT;
    const float lo = (float)(qmin - zp), hi = (float)(qmax - zp);
    return (q8_lanes){splat(scale), splat(lo), splat(hi), splat(lo - 1.0f), splat(hi + 1.0f)};
}

/*
 * r = clamp(round_half_even(x / scale), lo, hi), i.e. q - zp. The rounding adds and subtracts 1.5 * 2^23:
 * for |t| <= 2^22 the sum's unit is 1, so the FPU's round-to-nearest-even rounds t itself (1.5 * 2^23 is
 * even) and the subtraction is exact; t is clamped into [lo - 1, hi + 1] first, well inside that bound.
 * sat: all ones where clamping changed the rounded value. NaN lanes give 0.
 */
static inline v4f q8_core(const q8_lanes *l, v4f x, v4i *sat)
{
    const v4f magic = splat(12582912.0f);
    v4f t = x / l->scale;
    t = select_f(t == t, t, splat(0.0f));
    t = select_f(t < l->lo1, l->lo1, t);
    t = select_f(t > l->hi1, l->hi1, t);
    v4f r = (t + magic) - magic;
    const v4i below = r<l->lo, above = r> l->hi;
    *sat = below | above;
    r = select_f(below, l->lo, r);
    return select_f(above, l->hi, r);
}

/* Fake-quantizes 4 lanes of x (valid: lanes counted) and accumulates counts (as -1 per lane). */
static inline v4f fq_lanes(const q8_lanes *l, v4f x, v4i valid, v4i *sat_acc, v4i *zero_acc)
{
    v4i sat;
    const v4f r = q8_core(l, x, &sat);
    *sat_acc += sat & valid;
    *zero_acc += (r == splat(0.0f)) & (x != splat(0.0f)) & (x == x) & valid;
    return l->scale * r;
}

static int64_t lanes_count(v4i acc)
{
    int64_t s = 0;
    for (int i = 0; i < 4; i++)
        s -= acc[i];
    return s;
}

#if defined(__x86_64__) || defined(__i386__)
#define QUANT_HAVE_AVX2 1

static bool cpu_has_avx2(void)
{
    return __builtin_cpu_supports("avx2");
}

/* q8_core's lanes eight at a time: the same IEEE operations per lane (division, the 1.5 * 2^23 rounding), so
   the same bits; its selects t < lo1 ? lo1 : t (and the like) are vmaxps(lo1, t) and vminps(hi1, t), one
   instruction each, exact for these operands (no NaN is left after the first mask, and the bounds are integers,
   so equal operands are the same value). *sat gets all ones where clamping changed the rounded value. */
typedef struct q8_lanes8 {
    __m256 scale, lo, hi, lo1, hi1;
} q8_lanes8;

__attribute__((target("avx2"))) static inline __m256 q8_core8(const q8_lanes8 *l, __m256 x, __m256 *sat)
{
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    __m256 t = _mm256_div_ps(x, l->scale);
    t = _mm256_and_ps(t, _mm256_cmp_ps(t, t, _CMP_EQ_OQ));
    t = _mm256_min_ps(l->hi1, _mm256_max_ps(l->lo1, t));
    const __m256 r = _mm256_sub_ps(_mm256_add_ps(t, magic), magic);
    const __m256 below = _mm256_cmp_ps(r, l->lo, _CMP_LT_OQ), above = _mm256_cmp_ps(r, l->hi, _CMP_GT_OQ);
    *sat = _mm256_or_ps(below, above);
    return _mm256_min_ps(l->hi, _mm256_max_ps(l->lo, r));
}

__attribute__((target("avx2"))) static q8_lanes8 q8_lanes8_of(const q8_lanes *l)
{
    return (q8_lanes8){_mm256_set1_ps(l->scale[0]), _mm256_set1_ps(l->lo[0]), _mm256_set1_ps(l->hi[0]),
                       _mm256_set1_ps(l->lo1[0]), _mm256_set1_ps(l->hi1[0])};
}

__attribute__((target("avx2"))) static int64_t lanes8_count(__m256i acc)
{
    int32_t v[8];
    _mm256_storeu_si256((__m256i *)(void *)v, acc);
    int64_t s = 0;
    for (int i = 0; i < 8; i++)
        s += v[i];
    return s;
}

/* fake_quant's whole groups of eight; returns how many values it did (the rest go four at a time). */
__attribute__((target("avx2"))) static int64_t fake_quant8(float *x, int64_t n, const q8_lanes *l4, int64_t *saturated,
                                                           int64_t *rounded_to_zero)
{
    const q8_lanes8 l = q8_lanes8_of(l4);
    const __m256 zero = _mm256_setzero_ps();
    __m256i sat_n = _mm256_setzero_si256(), zero_n = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        __m256 sat;
        const __m256 r = q8_core8(&l, v, &sat);
        /* rounded to zero: r == 0 from a non-zero x; the ordered compare is false for NaN, as fq_lanes' x == x */
        const __m256 z = _mm256_and_ps(_mm256_cmp_ps(r, zero, _CMP_EQ_OQ), _mm256_cmp_ps(v, zero, _CMP_NEQ_OQ));
        sat_n = _mm256_sub_epi32(sat_n, _mm256_castps_si256(sat));
        zero_n = _mm256_sub_epi32(zero_n, _mm256_castps_si256(z));
        _mm256_storeu_ps(x + i, _mm256_mul_ps(l.scale, r));
    }
    *saturated = lanes8_count(sat_n);
    *rounded_to_zero = lanes8_count(zero_n);
    return i;
}

/*
 * q8_core8 without its division where x lies on the grid already (a layer's input, held on this grid by the
 * layer before): r = x * (1 / scale) rounded within [lo, hi] is kept when fl(r * scale) == x in every lane,
 * for then x / scale is within |r| 2^-23 of r, far from a half step, and q8_core8 gives r too (no clamping,
 * nothing saturated). Any other vector (NaN, off the grid, beyond the range) goes through q8_core8.
 */
__attribute__((target("avx2"))) static inline __m256 grid_code8(const q8_lanes8 *l, __m256 inv, __m256 x)
{
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    const __m256 t = _mm256_min_ps(l->hi, _mm256_max_ps(l->lo, _mm256_mul_ps(x, inv)));
    const __m256 r = _mm256_sub_ps(_mm256_add_ps(t, magic), magic);
    if (_mm256_movemask_ps(_mm256_cmp_ps(_mm256_mul_ps(r, l->scale), x, _CMP_EQ_OQ)) == 0xff)
        return r;
    __m256 sat;
    return q8_core8(l, x, &sat);
}

/* sim_quantize_centered_f32's whole groups of eight; returns how many values it did. */
__attribute__((target("avx2"))) static int64_t centered8(const float *x, int64_t n, const q8_lanes *l4, float *out)
{
    const q8_lanes8 l = q8_lanes8_of(l4);
    const __m256 inv = _mm256_set1_ps(1.0f / l4->scale[0]);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, grid_code8(&l, inv, _mm256_loadu_ps(x + i)));
    return i;
}

/* sim_quantize_centered's whole groups of eight (the centred codes are integers: exact as doubles); returns
   how many values it did. */
__attribute__((target("avx2"))) static int64_t centered8_f64(const float *x, int64_t n, const q8_lanes *l4, double *out)
{
    const q8_lanes8 l = q8_lanes8_of(l4);
    const __m256 inv = _mm256_set1_ps(1.0f / l4->scale[0]);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 r = grid_code8(&l, inv, _mm256_loadu_ps(x + i));
        _mm256_storeu_pd(out + i, _mm256_cvtps_pd(_mm256_castps256_ps128(r)));
        _mm256_storeu_pd(out + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(r, 1)));
    }
    return i;
}

/* sim_quantize_i8's whole groups of eight (codes in [-128, 127], so the saturating packs keep them); returns
   how many values it did. */
__attribute__((target("avx2"))) static int64_t codes8(const float *x, int64_t n, const q8_lanes *l4, float zp,
                                                      int8_t *q)
{
    const q8_lanes8 l = q8_lanes8_of(l4);
    const __m256 zpv = _mm256_set1_ps(zp), inv = _mm256_set1_ps(1.0f / l4->scale[0]);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i c = _mm256_cvttps_epi32(_mm256_add_ps(grid_code8(&l, inv, _mm256_loadu_ps(x + i)), zpv));
        const __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1));
        _mm_storel_epi64((__m128i *)(void *)(q + i), _mm_packs_epi16(h, h));
    }
    return i;
}
#endif

static void fake_quant(float *x, int64_t n, const q8_lanes l, int64_t *saturated, int64_t *rounded_to_zero)
{
    const v4i all = {-1, -1, -1, -1};
    v4i sat = {0}, zero = {0};
    int64_t i = 0, sat8 = 0, zero8 = 0;
#ifdef QUANT_HAVE_AVX2
    if (cpu_has_avx2())
        i = fake_quant8(x, n, &l, &sat8, &zero8);
#endif
    for (; i + 4 <= n; i += 4) {
        v4f v;
        memcpy(&v, x + i, sizeof v);
        v = fq_lanes(&l, v, all, &sat, &zero);
        memcpy(x + i, &v, sizeof v);
    }
    if (i < n) {
        /* the tail through the same lanes, so every element sees the same arithmetic */
        float buf[4] = {0};
        v4i valid = {0};
        for (int64_t j = 0; j < n - i; j++) {
            buf[j] = x[i + j];
            valid[j] = -1;
        }
        v4f v;
        memcpy(&v, buf, sizeof v);
        v = fq_lanes(&l, v, valid, &sat, &zero);
        memcpy(buf, &v, sizeof v);
        memcpy(x + i, buf, (size_t)(n - i) * sizeof(float));
    }
    if (saturated)
        *saturated = lanes_count(sat) + sat8;
    if (rounded_to_zero)
        *rounded_to_zero = lanes_count(zero) + zero8;
}

void sim_fake_quant_i8(float *x, int64_t n, float scale, int32_t zp, int64_t *saturated, int64_t *rounded_to_zero)
{
    fake_quant(x, n, q_lanes_make(scale, zp, -128, 127), saturated, rounded_to_zero);
}

void sim_fake_quant_i16(float *x, int64_t n, float scale, int32_t zp, int64_t *saturated, int64_t *rounded_to_zero)
{
    fake_quant(x, n, q_lanes_make(scale, zp, -32768, 32767), saturated, rounded_to_zero);
}

void sim_quantize_centered(const float *x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, double *out)
{
    const q8_lanes l = q_lanes_make(scale, zp, qmin, qmax);
    v4i sat;
    int64_t start = 0;
#ifdef QUANT_HAVE_AVX2
    if (n >= 8 && cpu_has_avx2())
        start = centered8_f64(x, n, &l, out);
#endif
    for (int64_t i = start; i < n; i += 4) {
        float buf[4] = {0};
        const int64_t c = n - i < 4 ? n - i : 4;
        memcpy(buf, x + i, (size_t)c * sizeof(float));
        v4f v;
        memcpy(&v, buf, sizeof v);
        v = q8_core(&l, v, &sat);
        for (int64_t j = 0; j < c; j++)
            out[i + j] = v[j];
    }
}

/* The last len < 4 values of a row as lanes (the others 0). */
static v4f load_tail(const float *x, int64_t len)
{
    float buf[4] = {0};
    memcpy(buf, x, (size_t)len * sizeof(float));
    v4f v;
    memcpy(&v, buf, sizeof v);
    return v;
}

void sim_quantize_centered_f32(const float *x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax,
                               float *out)
{
    const q8_lanes l = q_lanes_make(scale, zp, qmin, qmax);
    v4i sat;
    int64_t i = 0;
#ifdef QUANT_HAVE_AVX2
    if (cpu_has_avx2())
        i = centered8(x, n, &l, out);
#endif
    for (; i + 4 <= n; i += 4) {
        v4f v;
        memcpy(&v, x + i, sizeof v);
        v = q8_core(&l, v, &sat);
        memcpy(out + i, &v, sizeof v);
    }
    if (i < n) {
        float buf[4];
        const v4f v = q8_core(&l, load_tail(x + i, n - i), &sat);
        memcpy(buf, &v, sizeof v);
        memcpy(out + i, buf, (size_t)(n - i) * sizeof(float));
    }
}

void sim_quantize_i8(const float *x, int64_t n, float scale, int32_t zp, int8_t *q)
{
    if (zp > ZP_LIMIT)
        zp = ZP_LIMIT;
    if (zp < -ZP_LIMIT)
        zp = -ZP_LIMIT;
    const q8_lanes l = q_lanes_make(scale, zp, -128, 127);
    const v4f zpv = splat((float)zp);
    v4i sat;
    int64_t i = 0;
#ifdef QUANT_HAVE_AVX2
    if (cpu_has_avx2())
        i = codes8(x, n, &l, (float)zp, q);
#endif
    for (; i + 4 <= n; i += 4) {
        v4f v;
        memcpy(&v, x + i, sizeof v);
        const v4c c = __builtin_convertvector(__builtin_convertvector(q8_core(&l, v, &sat) + zpv, v4i), v4c);
        memcpy(q + i, &c, sizeof c);
    }
    if (i < n) {
        const v4f v = load_tail(x + i, n - i);
        const v4c c = __builtin_convertvector(__builtin_convertvector(q8_core(&l, v, &sat) + zpv, v4i), v4c);
        int8_t cb[4];
        memcpy(cb, &c, sizeof cb);
        memcpy(q + i, cb, (size_t)(n - i));
    }
}

/* ---------------------------------------------------------------------------------------------------
 * FP16
 */

/* sim_round_f16's scalar rules over x[i0, n): adds to the overflow count (and its first index) and raises *m
   to the largest finite magnitude; the tail of the F16C pass and the whole of the fallback. */
static void round_f16_scalar(float *x, int64_t i0, int64_t n, int64_t *ov, int64_t *first, float *m)
{
    for (int64_t i = i0; i < n; i++) {
        const float a = fabsf(x[i]);
        if (a <= FLT_MAX) { /* not inf or NaN */
            *m = a > *m ? a : *m;
            if (a >= 65520.0f) {
                if (*first < 0)
                    *first = i;
                (*ov)++;
            }
        }
        x[i] = rd_f16_to_f32(rd_f32_to_f16(x[i]));
    }
}

#ifdef QUANT_HAVE_F16C
/* F16C needs CPUID's bit and the OS saving AVX state: libgcc's CPU model (read once at start-up) has
   both, since it sets "f16c" only when xgetbv shows AVX state saved. Not a CPUID per call: under a
   hypervisor each one traps, which cost 20 us per float16 tensor (docs/benchmarks.md). */
static bool cpu_has_f16c(void)
{
#if defined(__clang__) && __clang_major__ < 16
    /* clang before 16 does not know the "f16c" feature name: AVX2, which every CPU with it also has F16C, stands
       for it (an AVX-only CPU takes the scalar rounding, which gives the same bits) */
    return __builtin_cpu_supports("avx2");
#else
    return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
#endif
}

/*
 * One pass of 8 lanes: the statistics of sim_round_f16 (largest finite magnitude, finite values with
 * |x| >= 65520, the first of them) and the rounding through F16C; the tail by the scalar rules.
 */
__attribute__((target("avx,f16c"))) static void round_f16_f16c(float *x, int64_t n, int64_t *ov_out, int64_t *first_out,
                                                               float *max_out)
{
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 big = _mm256_set1_ps(FLT_MAX), limit = _mm256_set1_ps(65520.0f);
    __m256 m8 = _mm256_setzero_ps();
    int64_t ov = 0, first = -1, i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i), a = _mm256_and_ps(v, abs_mask);
        const __m256 finite = _mm256_cmp_ps(a, big, _CMP_LE_OQ); /* false for inf and NaN */
        m8 = _mm256_max_ps(m8, _mm256_and_ps(a, finite));
        const int over = _mm256_movemask_ps(_mm256_and_ps(finite, _mm256_cmp_ps(a, limit, _CMP_GE_OQ)));
        if (over) {
            if (first < 0)
                first = i + __builtin_ctz((unsigned)over);
            ov += __builtin_popcount((unsigned)over);
        }
        _mm256_storeu_ps(x + i, _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)));
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, m8);
    float m = 0.0f;
    for (int k = 0; k < 8; k++)
        m = lanes[k] > m ? lanes[k] : m;
    round_f16_scalar(x, i, n, &ov, &first, &m);
    *ov_out = ov;
    *first_out = first;
    *max_out = m;
}
#endif

void sim_round_f16(float *x, int64_t n, int64_t *overflow, int64_t *first_overflow, double *max_abs)
{
    /* statistics from the values before rounding: |x| >= 65520 (the tie above 65504, which rounds to
       even = inf) is exactly the set of finite values that overflow */
    int64_t ov = 0, first = -1;
    float m = 0.0f;
#ifdef QUANT_HAVE_F16C
    if (cpu_has_f16c()) {
        round_f16_f16c(x, n, &ov, &first, &m);
    } else
#endif
    {
        round_f16_scalar(x, 0, n, &ov, &first, &m);
    }
    if (overflow)
        *overflow = ov;
    if (first_overflow)
        *first_overflow = first;
    if (max_abs)
        *max_abs = m;
}

/* ---------------------------------------------------------------------------------------------------
 * Weights
 */

typedef struct chan_map {
    int64_t inner, len, outer_per_group; /* channel of flat i: see chan_of */
    int64_t n_chan;
} chan_map;

static rd_status chan_map_make(const rd_tensor *w, int axis, int64_t group, bool per_tensor, chan_map *cm,
                               rd_error *err)
{
    if (w->dtype != RD_DT_F32)
        return rd_errorf(err, RD_E_INVAL, "weight quantization: tensor is %s, expected float32",
                         rd_dtype_name(w->dtype));
    if (axis < 0 || axis >= (w->rank > 0 ? w->rank : 1) || group < 1)
        return rd_errorf(err, RD_E_INVAL, "weight quantization: axis %d with group %lld is invalid for rank %d", axis,
                         (long long)group, w->rank);
    memset(cm, 0, sizeof *cm);
    int64_t outer = 1;
    cm->inner = 1;
    cm->len = w->rank > 0 ? w->dims[axis] : 1;
    for (int d = 0; d < axis; d++)
        outer *= w->dims[d];
    for (int d = axis + 1; d < w->rank; d++)
        cm->inner *= w->dims[d];
    if (outer % group)
        return rd_errorf(err, RD_E_INVAL, "weight quantization: %lld leading rows do not split into %lld groups",
                         (long long)outer, (long long)group);
    cm->outer_per_group = outer / group > 0 ? outer / group : 1;
    cm->n_chan = per_tensor ? 1 : group * cm->len;
    if (cm->n_chan > INT32_MAX / 2)
        return rd_errorf(err, RD_E_LIMIT, "weight quantization: %lld channels", (long long)cm->n_chan);
    if (per_tensor)
        cm->len = 0; /* chan_of gives 0 */
    return RD_OK;
}

static int64_t chan_of(const chan_map *cm, int64_t i)
{
    if (cm->len == 0)
        return 0;
    const int64_t a = (i / cm->inner) % cm->len, o = i / (cm->inner * cm->len);
    return (o / cm->outer_per_group) * cm->len + a;
}

static int8_t quant_weight(float w, float scale, int64_t *sat)
{
    float r = nearbyintf(w / scale);
    if (r > 127.0f || r < -127.0f) {
        (*sat)++;
        r = r > 0 ? 127.0f : -127.0f;
    }
    return (int8_t)r;
}

static rd_status check_finite(const float *w, int64_t n, rd_error *err)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(w[i]))
            return rd_errorf(err, RD_E_INVAL, "weight quantization: value %g at flat offset %lld is not finite",
                             (double)w[i], (long long)i);
    return RD_OK;
}

/* The channel map of w for n_scale given scales (and zero points, zp may be NULL), each checked, and w's
 * values finite: what quantizing with given parameters needs first. */
static rd_status chan_map_scaled(const rd_tensor *w, int axis, int64_t group, const float *scale, const int32_t *zp,
                                 int n_scale, chan_map *cm, rd_error *err)
{
    rd_status st = chan_map_make(w, axis, group, n_scale == 1, cm, err);
    if (st != RD_OK)
        return st;
    if (n_scale != cm->n_chan)
        return rd_errorf(err, RD_E_INVAL, "weight quantization: %d scales given for %lld channels", n_scale,
                         (long long)cm->n_chan);
    for (int c = 0; c < n_scale; c++) {
        if (!(scale[c] > 0) || !isfinite(scale[c]))
            return rd_errorf(err, RD_E_INVAL, "weight quantization: scale %d is %g, expected positive and finite", c,
                             (double)scale[c]);
        if (zp && (zp[c] < -128 || zp[c] > 127))
            return rd_errorf(err, RD_E_INVAL, "weight quantization: zero point %d is %d, expected -128..127", c,
                             (int)zp[c]);
    }
    return check_finite(w->data, rd_tensor_numel(w), err);
}

rd_status sim_quant_weights_i8_scaled(const rd_tensor *w, int axis, int64_t group, const float *scale, int n_scale,
                                      int8_t **out_q, int64_t *saturated, rd_error *err)
{
    return sim_quant_weights_i8_scaled_zp(w, axis, group, scale, NULL, n_scale, out_q, saturated, err);
}

/* An asymmetric weight code: round(w / scale) + zp on the full int8 range. */
static int8_t quant_weight_zp(float w, float scale, int32_t zp, int64_t *sat)
{
    float r = nearbyintf(w / scale) + (float)zp;
    if (r > 127.0f || r < -128.0f) {
        (*sat)++;
        r = r > 0 ? 127.0f : -128.0f;
    }
    return (int8_t)r;
}

rd_status sim_quant_weights_i8_scaled_zp(const rd_tensor *w, int axis, int64_t group, const float *scale,
                                         const int32_t *zp, int n_scale, int8_t **out_q, int64_t *saturated,
                                         rd_error *err)
{
    *out_q = NULL;
    chan_map cm;
    rd_status st = chan_map_scaled(w, axis, group, scale, zp, n_scale, &cm, err);
    if (st != RD_OK)
        return st;
    const int64_t n = rd_tensor_numel(w);
    const float *wd = w->data;
    int8_t *q = sim_malloc_array((size_t)n, 1);
    if (!q)
        return rd_errorf(err, RD_E_NOMEM, "weight quantization: cannot allocate %lld codes", (long long)n);
    int64_t sat = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t c = chan_of(&cm, i);
        q[i] = zp ? quant_weight_zp(wd[i], scale[c], zp[c], &sat) : quant_weight(wd[i], scale[c], &sat);
    }
    if (saturated)
        *saturated = sat;
    *out_q = q;
    return RD_OK;
}

/* The channel map of weights w, all of whose values must be finite (quantizers computing their own scales). */
static rd_status chan_map_finite(const rd_tensor *w, int axis, int64_t group, bool per_tensor, chan_map *cm,
                                 rd_error *err)
{
    rd_status st = chan_map_make(w, axis, group, per_tensor, cm, err);
    return st == RD_OK ? check_finite(w->data, rd_tensor_numel(w), err) : st;
}

/* The largest magnitude of each channel of w (finite), in a new array of cm->n_chan (where the symmetric
 * scales start). */
static rd_status chan_absmax(const rd_tensor *w, int axis, int64_t group, bool per_tensor, chan_map *cm,
                             float **out_max, rd_error *err)
{
    rd_status st = chan_map_finite(w, axis, group, per_tensor, cm, err);
    if (st != RD_OK)
        return st;
    const int64_t n = rd_tensor_numel(w);
    const float *wd = w->data;
    float *m = sim_calloc_array((size_t)cm->n_chan, sizeof(float));
    if (!m)
        return rd_errorf(err, RD_E_NOMEM, "weight quantization: cannot allocate %lld scales", (long long)cm->n_chan);
    for (int64_t i = 0; i < n; i++) {
        const int64_t c = chan_of(cm, i);
        const float a = fabsf(wd[i]);
        m[c] = a > m[c] ? a : m[c];
    }
    *out_max = m;
    return RD_OK;
}

rd_status sim_quant_weights_i8_grouped(const rd_tensor *w, int axis, int64_t group, bool per_tensor, int8_t **out_q,
                                       float **out_scale, int *out_n_scale, rd_error *err)
{
    *out_q = NULL;
    *out_scale = NULL;
    *out_n_scale = 0;
    chan_map cm;
    float *scale;
    rd_status st = chan_absmax(w, axis, group, per_tensor, &cm, &scale, err);
    if (st != RD_OK)
        return st;
    for (int64_t c = 0; c < cm.n_chan; c++) {
        scale[c] = scale[c] / 127.0f;
        if (!(scale[c] > 0))
            scale[c] = 1.0f; /* a channel of zeros (or of values below 127 * FLT_TRUE_MIN) */
    }
    st = sim_quant_weights_i8_scaled(w, axis, group, scale, (int)cm.n_chan, out_q, NULL, err);
    if (st != RD_OK) {
        free(scale);
        return st;
    }
    *out_scale = scale;
    *out_n_scale = (int)cm.n_chan;
    return RD_OK;
}

rd_status sim_quant_weights_i8_asym(const rd_tensor *w, int axis, int64_t group, bool per_tensor, int8_t **out_q,
                                    float **out_scale, int32_t **out_zp, int *out_n, rd_error *err)
{
    *out_q = NULL;
    *out_scale = NULL;
    *out_zp = NULL;
    *out_n = 0;
    chan_map cm;
    rd_status st = chan_map_finite(w, axis, group, per_tensor, &cm, err);
    if (st != RD_OK)
        return st;
    const int64_t n = rd_tensor_numel(w);
    const float *wd = w->data;
    float *lo = sim_calloc_array((size_t)cm.n_chan * 2, sizeof(float));
    int32_t *zp = sim_calloc_array((size_t)cm.n_chan, sizeof(int32_t));
    float *scale = sim_calloc_array((size_t)cm.n_chan, sizeof(float));
    if (!lo || !zp || !scale) {
        free(lo);
        free(zp);
        free(scale);
        return rd_errorf(err, RD_E_NOMEM, "weight quantization: cannot allocate %lld channels", (long long)cm.n_chan);
    }
    float *hi = lo + cm.n_chan; /* both start at 0: the range always holds 0 */
    for (int64_t i = 0; i < n; i++) {
        const int64_t c = chan_of(&cm, i);
        lo[c] = wd[i] < lo[c] ? wd[i] : lo[c];
        hi[c] = wd[i] > hi[c] ? wd[i] : hi[c];
    }
    for (int64_t c = 0; c < cm.n_chan; c++)
        sim_qparams_from_range(lo[c], hi[c], &scale[c], &zp[c]);
    free(lo);
    st = sim_quant_weights_i8_scaled_zp(w, axis, group, scale, zp, (int)cm.n_chan, out_q, NULL, err);
    if (st != RD_OK) {
        free(scale);
        free(zp);
        return st;
    }
    *out_scale = scale;
    *out_zp = zp;
    *out_n = (int)cm.n_chan;
    return RD_OK;
}

rd_status sim_quant_weights_i8(const rd_tensor *w, int axis, bool per_tensor, int8_t **out_q, float **out_scale,
                               int *out_n_scale, rd_error *err)
{
    return sim_quant_weights_i8_grouped(w, axis, 1, per_tensor, out_q, out_scale, out_n_scale, err);
}

int32_t sim_quant_bias_i32(double b, double scale)
{
    const double v = nearbyint(b / scale);
    if (isnan(v))
        return 0;
    if (v >= 2147483647.0)
        return INT32_MAX;
    if (v <= -2147483648.0)
        return INT32_MIN;
    return (int32_t)v;
}

/* ---------------------------------------------------------------------------------------------------
 * Weights of any width up to 16 bits (int16 layers, w8a16, dfp)
 */

rd_status sim_quant_weights_wide_scaled(const rd_tensor *w, int axis, int64_t group, int bits, const float *scale,
                                        int n_scale, int16_t **out_q, int64_t *saturated, rd_error *err)
{
    *out_q = NULL;
    if (bits < 2 || bits > 16)
        return rd_errorf(err, RD_E_INVAL, "weight quantization: %d bits is outside 2..16", bits);
    chan_map cm;
    rd_status st = chan_map_scaled(w, axis, group, scale, NULL, n_scale, &cm, err);
    if (st != RD_OK)
        return st;
    const int64_t n = rd_tensor_numel(w);
    const float *wd = w->data;
    int16_t *q = sim_malloc_array((size_t)n, sizeof *q);
    if (!q)
        return rd_errorf(err, RD_E_NOMEM, "weight quantization: cannot allocate %lld codes", (long long)n);
    const float qmax = (float)((1 << (bits - 1)) - 1);
    int64_t sat = 0;
    for (int64_t i = 0; i < n; i++) {
        float r = nearbyintf(wd[i] / scale[chan_of(&cm, i)]);
        if (r > qmax || r < -qmax) {
            sat++;
            r = r > 0 ? qmax : -qmax;
        }
        q[i] = (int16_t)r;
    }
    if (saturated)
        *saturated = sat;
    *out_q = q;
    return RD_OK;
}

rd_status sim_quant_weights_wide(const rd_tensor *w, int axis, int64_t group, bool per_tensor, int bits, bool pow2,
                                 int16_t **out_q, float **out_scale, int *out_n_scale, rd_error *err)
{
    *out_q = NULL;
    *out_scale = NULL;
    *out_n_scale = 0;
    if (bits < 2 || bits > 16)
        return rd_errorf(err, RD_E_INVAL, "weight quantization: %d bits is outside 2..16", bits);
    chan_map cm;
    float *scale;
    rd_status st = chan_absmax(w, axis, group, per_tensor, &cm, &scale, err);
    if (st != RD_OK)
        return st;
    const int qmax = (1 << (bits - 1)) - 1;
    for (int64_t c = 0; c < cm.n_chan; c++) {
        if (pow2 && scale[c] > 0) {
            const double p = pow2_scale_for(scale[c], qmax);
            scale[c] = p < 0x1p-149 ? 0x1p-149f : (float)p;
        } else {
            scale[c] = scale[c] / (float)qmax;
        }
        if (!(scale[c] > 0))
            scale[c] = 1.0f; /* a channel of zeros (or of values below qmax * FLT_TRUE_MIN) */
    }
    st = sim_quant_weights_wide_scaled(w, axis, group, bits, scale, (int)cm.n_chan, out_q, NULL, err);
    if (st != RD_OK) {
        free(scale);
        return st;
    }
    *out_scale = scale;
    *out_n_scale = (int)cm.n_chan;
    return RD_OK;
}

void sim_quant_weight_one(float w, int bits, bool pow2, float *scale, int32_t *code)
{
    const int qmax = (1 << (bits - 1)) - 1;
    float sc = fabsf(w);
    if (pow2 && sc > 0) {
        const double p = pow2_scale_for(sc, qmax);
        sc = p < 0x1p-149 ? 0x1p-149f : (float)p;
    } else {
        sc = sc / (float)qmax;
    }
    if (!(sc > 0))
        sc = 1.0f;
    float r = nearbyintf(w / sc);
    r = r > (float)qmax ? (float)qmax : r < (float)-qmax ? (float)-qmax : r;
    *scale = sc;
    *code = (int32_t)r;
}

double sim_quant_bias_wide(double b, double scale)
{
    const double v = nearbyint(b / scale);
    if (isnan(v))
        return 0;
    return v > SIM_ACC16_LIMIT ? SIM_ACC16_LIMIT : v < -SIM_ACC16_LIMIT ? -SIM_ACC16_LIMIT : v;
}

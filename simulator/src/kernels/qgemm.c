/*
 * qgemm.c: blocked int8 GEMM with int32 accumulation (contract in qgemm.h).
 *
 * Packed layouts, both in int16 pairs (k, k+1) so that one pmaddwd multiplies and sums a pair exactly:
 *   A panel (MR rows):    ap[(q * MR + r) * 2 + t] = A[i0 + r][k0 + 2q + t] - a_zp
 *   B panel (NR columns): bp[(q * NR + j) * 2 + t] = B[k0 + 2q + t][j0 + j] - b_zp
 * Rows, columns and the odd last k beyond the matrix are packed as 0, which adds nothing.
 */
#include "qgemm.h"
#include "parallel.h"

#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define QGEMM_HAVE_AVX2 1
#endif

typedef void (*ukr_fn)(int64_t kp, const int16_t *ap, const int16_t *bp, int32_t *c, int64_t ldc, bool add);

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t round_up(int64_t v, int64_t m)
{
    return (v + m - 1) / m * m;
}

static size_t align64(size_t v)
{
    return (v + 63) & ~(size_t)63;
}

/* int16 elements of the packed B and A blocks for these sizes. */
static size_t packed_b_elems(int64_t n, int64_t k)
{
    return (size_t)round_up(min64(n, QGEMM_NC), QGEMM_NR) * (size_t)round_up(min64(k, QGEMM_KC), 2);
}

static size_t packed_a_elems(int64_t m, int64_t k)
{
    return (size_t)round_up(min64(m, QGEMM_MC), QGEMM_MR) * (size_t)round_up(min64(k, QGEMM_KC), 2);
}

static size_t layout_bytes(int64_t m, int64_t n, int64_t k)
{
    return align64(packed_b_elems(n, k) * sizeof(int16_t)) + align64(packed_a_elems(m, k) * sizeof(int16_t));
}

size_t qgemm_workspace_bytes(int64_t m, int64_t n, int64_t k)
{
    if (m <= 0 || n <= 0 || k <= 0)
        return 0;
    const size_t direct = layout_bytes(m, n, k), swapped = m == 1 ? layout_bytes(n, 1, k) : 0; /* qgemm_run */
    const size_t column = m == 1 || n == 1 ? align64((size_t)k * sizeof(int16_t)) : 0;         /* gemv_run's B */
    const size_t most = direct > swapped ? direct : swapped;
    return most > column ? most : column;
}

/* ------------------------------------------------------------------------------------------------- */
/* Packing */

static void pack_a(const qgemm_mat *a, int64_t i0, int64_t mc, int64_t k0, int64_t kc, int16_t *ap)
{
    const int64_t kp = (kc + 1) / 2;
    for (int64_t p = 0; p < mc; p += QGEMM_MR) {
        int16_t *dst = ap + p * kp * 2;
        for (int64_t q = 0; q < kp; q++) {
            for (int64_t r = 0; r < QGEMM_MR; r++) {
                for (int64_t t = 0; t < 2; t++) {
                    const int64_t i = p + r, kk = 2 * q + t;
                    int16_t v = 0;
                    if (i < mc && kk < kc)
                        v = (int16_t)(a->data[(i0 + i) * a->rs + (k0 + kk) * a->cs] - a->zp);
                    dst[(q * QGEMM_MR + r) * 2 + t] = v;
                }
            }
        }
    }
}

/* One row of A with contiguous k into its panel slots: pairs (k, k+1) every QGEMM_MR pairs, an odd last k
   paired with 0. */
static void pack_a_row(const int8_t *src, int64_t kc, int16_t zp, int16_t *dst)
{
    const int64_t even = kc & ~(int64_t)1;
    for (int64_t kk = 0; kk < even; kk += 2, dst += QGEMM_MR * 2) {
        dst[0] = (int16_t)(src[kk] - zp);
        dst[1] = (int16_t)(src[kk + 1] - zp);
    }
    if (even < kc) {
        dst[0] = (int16_t)(src[even] - zp);
        dst[1] = 0;
    }
}

#ifdef QGEMM_HAVE_AVX2
/* pack_a_row eight k at a time: widened and shifted in one register, its four pairs stored apart. */
__attribute__((target("sse4.1"))) static void pack_a_row_sse41(const int8_t *src, int64_t kc, int16_t zp, int16_t *dst)
{
    const __m128i z = _mm_set1_epi16(zp);
    int64_t kk = 0;
    for (; kk + 8 <= kc; kk += 8, dst += 4 * QGEMM_MR * 2) {
        const __m128i v =
            _mm_sub_epi16(_mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(const void *)(src + kk))), z);
        const int32_t pairs[4] = {_mm_cvtsi128_si32(v), _mm_extract_epi32(v, 1), _mm_extract_epi32(v, 2),
                                  _mm_extract_epi32(v, 3)};
        for (int q = 0; q < 4; q++)
            memcpy(dst + q * QGEMM_MR * 2, &pairs[q], sizeof pairs[q]);
    }
    pack_a_row(src + kk, kc - kk, zp, dst);
}
#endif

/* pack_a for contiguous rows (cs == 1, the weights of every Conv): a row at a time, with no test per element
   (pack_a's bounds tests made it a tenth of an int8 run where few columns share each packed block). */
static void pack_a_rows(const qgemm_mat *a, int64_t i0, int64_t mc, int64_t k0, int64_t kc, int16_t *ap, bool fast)
{
    const int64_t kp = (kc + 1) / 2;
    for (int64_t p = 0; p < mc; p += QGEMM_MR) {
        int16_t *panel = ap + p * kp * 2;
        for (int64_t r = 0; r < QGEMM_MR; r++) {
            int16_t *dst = panel + 2 * r;
            if (p + r >= mc) {
                for (int64_t q = 0; q < kp; q++)
                    dst[q * QGEMM_MR * 2] = dst[q * QGEMM_MR * 2 + 1] = 0;
                continue;
            }
            const int8_t *src = a->data + (i0 + p + r) * a->rs + k0;
#ifdef QGEMM_HAVE_AVX2
            if (fast) {
                pack_a_row_sse41(src, kc, (int16_t)a->zp, dst);
                continue;
            }
#endif
            (void)fast;
            pack_a_row(src, kc, (int16_t)a->zp, dst);
        }
    }
}

/* Any strides: one column at a time (its k pairs are contiguous when rs == 1). */
static void pack_b_generic(const qgemm_mat *b, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int16_t *bp)
{
    const int64_t kp = (kc + 1) / 2;
    for (int64_t p = 0; p < nc; p += QGEMM_NR) {
        int16_t *dst = bp + p * kp * 2;
        for (int64_t j = 0; j < QGEMM_NR; j++) {
            const bool col_ok = p + j < nc;
            const int8_t *col = col_ok ? b->data + (j0 + p + j) * b->cs : b->data;
            for (int64_t kk = 0; kk < 2 * kp; kk++) {
                int16_t v = 0;
                if (col_ok && kk < kc)
                    v = (int16_t)(col[(k0 + kk) * b->rs] - b->zp);
                dst[((kk / 2) * QGEMM_NR + j) * 2 + (kk & 1)] = v;
            }
        }
    }
}

/* The ragged last panel (nt < QGEMM_NR columns) of contiguous rows, row by row like the full ones (a column
   at a time would read every row of B once per column); the missing columns are 0. */
static void pack_b_rows_tail(const qgemm_mat *b, int64_t k0, int64_t kc, int64_t j0, int64_t nt, int16_t *dst)
{
    const int64_t kp = (kc + 1) / 2;
    const int16_t zp = (int16_t)b->zp;
    for (int64_t q = 0; q < kp; q++) {
        const int8_t *r0 = b->data + (k0 + 2 * q) * b->rs + j0;
        const int8_t *r1 = 2 * q + 1 < kc ? r0 + b->rs : NULL;
        int16_t *d = dst + q * QGEMM_NR * 2;
        for (int64_t j = 0; j < QGEMM_NR; j++) {
            d[2 * j] = j < nt ? (int16_t)(r0[j] - zp) : 0;
            d[2 * j + 1] = j < nt && r1 ? (int16_t)(r1[j] - zp) : 0;
        }
    }
}

/* Contiguous rows (cs == 1): full panels interleave two rows, and so does the ragged last one. */
static void pack_b_rows(const qgemm_mat *b, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int16_t *bp)
{
    const int64_t kp = (kc + 1) / 2, full = nc / QGEMM_NR * QGEMM_NR;
    const int16_t zp = (int16_t)b->zp;
    for (int64_t q = 0; q < kp; q++) {
        const int8_t *r0 = b->data + (k0 + 2 * q) * b->rs + j0;
        const int8_t *r1 = 2 * q + 1 < kc ? r0 + b->rs : NULL;
        for (int64_t p = 0; p < full; p += QGEMM_NR) {
            int16_t *dst = bp + p * kp * 2 + q * QGEMM_NR * 2;
            for (int64_t j = 0; j < QGEMM_NR; j++) {
                dst[2 * j] = (int16_t)(r0[p + j] - zp);
                dst[2 * j + 1] = r1 ? (int16_t)(r1[p + j] - zp) : 0;
            }
        }
    }
    if (full < nc)
        pack_b_rows_tail(b, k0, kc, j0 + full, nc - full, bp + full * kp * 2);
}

#ifdef QGEMM_HAVE_AVX2
/* pack_b_rows with SSE4.1/AVX2 widening and interleaving: 16 columns of two rows per step. */
__attribute__((target("avx2"))) static void pack_b_rows_avx2(const qgemm_mat *b, int64_t k0, int64_t kc, int64_t j0,
                                                             int64_t nc, int16_t *bp)
{
    const int64_t kp = (kc + 1) / 2, full = nc / QGEMM_NR * QGEMM_NR;
    const __m128i zp = _mm_set1_epi16((int16_t)b->zp);
    for (int64_t q = 0; q < kp; q++) {
        const int8_t *r0 = b->data + (k0 + 2 * q) * b->rs + j0;
        const int8_t *r1 = 2 * q + 1 < kc ? r0 + b->rs : NULL;
        for (int64_t p = 0; p < full; p += QGEMM_NR) {
            int16_t *dst = bp + p * kp * 2 + q * QGEMM_NR * 2;
            const __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)(r0 + p));
            const __m128i x1 = r1 ? _mm_loadu_si128((const __m128i *)(const void *)(r1 + p)) : _mm_setzero_si128();
            const __m128i a_lo = _mm_sub_epi16(_mm_cvtepi8_epi16(x0), zp);
            const __m128i a_hi = _mm_sub_epi16(_mm_cvtepi8_epi16(_mm_srli_si128(x0, 8)), zp);
            __m128i b_lo = _mm_sub_epi16(_mm_cvtepi8_epi16(x1), zp);
            __m128i b_hi = _mm_sub_epi16(_mm_cvtepi8_epi16(_mm_srli_si128(x1, 8)), zp);
            if (!r1) {
                b_lo = _mm_setzero_si128();
                b_hi = _mm_setzero_si128();
            }
            __m128i *d = (__m128i *)(void *)dst;
            _mm_storeu_si128(d + 0, _mm_unpacklo_epi16(a_lo, b_lo));
            _mm_storeu_si128(d + 1, _mm_unpackhi_epi16(a_lo, b_lo));
            _mm_storeu_si128(d + 2, _mm_unpacklo_epi16(a_hi, b_hi));
            _mm_storeu_si128(d + 3, _mm_unpackhi_epi16(a_hi, b_hi));
        }
    }
    if (full < nc)
        pack_b_rows_tail(b, k0, kc, j0 + full, nc - full, bp + full * kp * 2);
}
#endif

/* ------------------------------------------------------------------------------------------------- */
/* Micro-kernels: c[MR][NR] (row stride ldc) = or += the panel product. */

static void ukr_portable(int64_t kp, const int16_t *ap, const int16_t *bp, int32_t *c, int64_t ldc, bool add)
{
    uint32_t acc[QGEMM_MR][QGEMM_NR];
    memset(acc, 0, sizeof acc);
    for (int64_t q = 0; q < kp; q++) {
        const int16_t *a = ap + q * QGEMM_MR * 2, *b = bp + q * QGEMM_NR * 2;
        for (int r = 0; r < QGEMM_MR; r++) {
            const int32_t a0 = a[2 * r], a1 = a[2 * r + 1];
            for (int j = 0; j < QGEMM_NR; j++)
                acc[r][j] += (uint32_t)(a0 * b[2 * j] + a1 * b[2 * j + 1]); /* |pair| <= 2 * 383^2 */
        }
    }
    for (int r = 0; r < QGEMM_MR; r++) {
        uint32_t *cr = (uint32_t *)c + r * ldc;
        for (int j = 0; j < QGEMM_NR; j++)
            cr[j] = add ? cr[j] + acc[r][j] : acc[r][j];
    }
}

#ifdef QGEMM_HAVE_AVX2
__attribute__((target("avx2"))) static void ukr_avx2(int64_t kp, const int16_t *ap, const int16_t *bp, int32_t *c,
                                                     int64_t ldc, bool add)
{
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256i c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int64_t q = 0; q < kp; q++) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)bp);
        const __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(bp + 16));
        int32_t pair;
#define QGEMM_ROW(r, x0, x1)                                  \
    memcpy(&pair, ap + 2 * (r), sizeof pair);                 \
    {                                                         \
        const __m256i av = _mm256_set1_epi32(pair);           \
        x0 = _mm256_add_epi32(x0, _mm256_madd_epi16(av, b0)); \
        x1 = _mm256_add_epi32(x1, _mm256_madd_epi16(av, b1)); \
    }
        QGEMM_ROW(0, c00, c01)
        QGEMM_ROW(1, c10, c11)
        QGEMM_ROW(2, c20, c21)
        QGEMM_ROW(3, c30, c31)
        QGEMM_ROW(4, c40, c41)
        QGEMM_ROW(5, c50, c51)
#undef QGEMM_ROW
        ap += QGEMM_MR * 2;
        bp += QGEMM_NR * 2;
    }
    const __m256i rows[QGEMM_MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    for (int r = 0; r < QGEMM_MR; r++) {
        __m256i *cr = (__m256i *)(void *)(c + r * ldc);
        __m256i v0 = rows[r][0], v1 = rows[r][1];
        if (add) {
            v0 = _mm256_add_epi32(v0, _mm256_loadu_si256(cr));
            v1 = _mm256_add_epi32(v1, _mm256_loadu_si256(cr + 1));
        }
        _mm256_storeu_si256(cr, v0);
        _mm256_storeu_si256(cr + 1, v1);
    }
}

static bool cpu_has_avx2(void)
{
    return __builtin_cpu_supports("avx2");
}
#endif

/* ------------------------------------------------------------------------------------------------- */
/* Driver */

static void add_bias(int64_t m, int64_t n, const int32_t *bias, qgemm_bias mode, int32_t *c, int64_t ldc, bool add)
{
    for (int64_t i = 0; i < m; i++) {
        uint32_t *ci = (uint32_t *)(c + i * ldc);
        for (int64_t j = 0; j < n; j++) {
            uint32_t v = 0;
            if (bias && mode == QGEMM_BIAS_PER_N)
                v = (uint32_t)bias[j];
            else if (bias && mode == QGEMM_BIAS_PER_M)
                v = (uint32_t)bias[i];
            ci[j] = add ? ci[j] + v : v;
        }
    }
}

/*
 * One column of C with A's rows contiguous (Gemm transB at batch 1, after the swap below): each C[i] is the
 * dot product of A's row i with B's centred column, converted to int16 once (bc, k values). No packing, and
 * none of the micro-tile's fifteen idle columns. Integer sums modulo 2^32: the bits of the blocked path.
 */
static void gemv_portable(int64_t m, int64_t k, const qgemm_mat *a, const int16_t *bc, int32_t *c, int64_t ldc)
{
    for (int64_t i = 0; i < m; i++) {
        const int8_t *ar = a->data + i * a->rs;
        uint32_t acc = 0;
        for (int64_t p = 0; p < k; p++)
            acc += (uint32_t)((ar[p] - a->zp) * bc[p]);
        *(uint32_t *)(c + i * ldc) = acc;
    }
}

#ifdef QGEMM_HAVE_AVX2
/* gemv_portable sixteen products at a time: pmaddwd sums pairs exactly, the lanes add modulo 2^32. */
__attribute__((target("avx2"))) static void gemv_avx2(int64_t m, int64_t k, const qgemm_mat *a, const int16_t *bc,
                                                      int32_t *c, int64_t ldc)
{
    const __m256i zp = _mm256_set1_epi16((int16_t)a->zp);
    for (int64_t i = 0; i < m; i++) {
        const int8_t *ar = a->data + i * a->rs;
        __m256i acc = _mm256_setzero_si256();
        int64_t p = 0;
        for (; p + 16 <= k; p += 16) {
            const __m256i av =
                _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(ar + p))), zp);
            const __m256i bv = _mm256_loadu_si256((const __m256i *)(const void *)(bc + p));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(av, bv));
        }
        uint32_t lanes[8], sum = 0;
        _mm256_storeu_si256((__m256i *)(void *)lanes, acc);
        for (int l = 0; l < 8; l++)
            sum += lanes[l];
        for (; p < k; p++)
            sum += (uint32_t)((ar[p] - a->zp) * bc[p]);
        *(uint32_t *)(c + i * ldc) = sum;
    }
}
#endif

static void gemv_run(int64_t m, int64_t k, const qgemm_mat *a, const qgemm_mat *b, int32_t *c, int64_t ldc, void *work,
                     bool fast)
{
    int16_t *bc = work; /* k values: the workspace holds B packed, at least as many */
    for (int64_t p = 0; p < k; p++)
        bc[p] = (int16_t)(b->data[p * b->rs] - b->zp);
#ifdef QGEMM_HAVE_AVX2
    if (fast) {
        gemv_avx2(m, k, a, bc, c, ldc);
        return;
    }
#endif
    (void)fast;
    gemv_portable(m, k, a, bc, c, ldc);
}

static void qgemm_run(int64_t m, int64_t n, int64_t k, const qgemm_mat *a, const qgemm_mat *b, const int32_t *bias,
                      qgemm_bias mode, int32_t *c, int64_t ldc, void *work, ukr_fn ukr, bool fast_pack)
{
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        add_bias(m, n, bias, mode, c, ldc, false);
        return;
    }
    if (m == 1 && n > 1 && b->cs != 1 && b->rs == 1) {
        /* a row times a transposed matrix (Gemm transB at batch 1): C^T = B^T a^T, so that the big operand is
           packed by contiguous rows rather than element by element; integer sums, the same C */
        const qgemm_mat bt = {.data = b->data, .rs = b->cs, .cs = 1, .zp = b->zp};
        const qgemm_mat at = {.data = a->data, .rs = a->cs, .cs = a->rs, .zp = a->zp};
        const qgemm_bias swapped = mode == QGEMM_BIAS_PER_N   ? QGEMM_BIAS_PER_M
                                   : mode == QGEMM_BIAS_PER_M ? QGEMM_BIAS_PER_N
                                                              : mode;
        qgemm_run(n, 1, k, &bt, &at, bias, swapped, c, 1, work, ukr, fast_pack);
        return;
    }
    if (n == 1 && a->cs == 1) {
        gemv_run(m, k, a, b, c, ldc, work, fast_pack);
        if (bias && mode != QGEMM_BIAS_NONE)
            add_bias(m, n, bias, mode, c, ldc, true);
        return;
    }
    int16_t *bp = work;
    int16_t *ap = (int16_t *)(void *)((char *)work + align64(packed_b_elems(n, k) * sizeof(int16_t)));
    int32_t edge[QGEMM_MR * QGEMM_NR];
    for (int64_t jc = 0; jc < n; jc += QGEMM_NC) {
        const int64_t nc = min64(QGEMM_NC, n - jc);
        for (int64_t pc = 0; pc < k; pc += QGEMM_KC) {
            const int64_t kc = min64(QGEMM_KC, k - pc), kp = (kc + 1) / 2;
            const bool add = pc > 0;
#ifdef QGEMM_HAVE_AVX2
            if (fast_pack && b->cs == 1)
                pack_b_rows_avx2(b, pc, kc, jc, nc, bp);
            else
#endif
                if (b->cs == 1)
                pack_b_rows(b, pc, kc, jc, nc, bp);
            else
                pack_b_generic(b, pc, kc, jc, nc, bp);
            for (int64_t ic = 0; ic < m; ic += QGEMM_MC) {
                const int64_t mc = min64(QGEMM_MC, m - ic);
                if (a->cs == 1)
                    pack_a_rows(a, ic, mc, pc, kc, ap, fast_pack);
                else
                    pack_a(a, ic, mc, pc, kc, ap);
                for (int64_t jr = 0; jr < nc; jr += QGEMM_NR) {
                    const int64_t nr = min64(QGEMM_NR, nc - jr);
                    const int16_t *bpan = bp + jr * kp * 2;
                    for (int64_t ir = 0; ir < mc; ir += QGEMM_MR) {
                        const int64_t mr = min64(QGEMM_MR, mc - ir);
                        const int16_t *apan = ap + ir * kp * 2;
                        int32_t *ct = c + (ic + ir) * ldc + jc + jr;
                        if (mr == QGEMM_MR && nr == QGEMM_NR) {
                            ukr(kp, apan, bpan, ct, ldc, add);
                            continue;
                        }
                        ukr(kp, apan, bpan, edge, QGEMM_NR, false);
                        for (int64_t r = 0; r < mr; r++) {
                            uint32_t *cr = (uint32_t *)(ct + r * ldc);
                            for (int64_t j = 0; j < nr; j++)
                                cr[j] =
                                    add ? cr[j] + (uint32_t)edge[r * QGEMM_NR + j] : (uint32_t)edge[r * QGEMM_NR + j];
                        }
                    }
                }
            }
        }
    }
    if (bias && mode != QGEMM_BIAS_NONE)
        add_bias(m, n, bias, mode, c, ldc, true);
}

void sim_qgemm_s8s8s32(int64_t m, int64_t n, int64_t k, const qgemm_mat *a, const qgemm_mat *b, const int32_t *bias,
                       qgemm_bias mode, int32_t *c, int64_t ldc, void *work)
{
#ifdef QGEMM_HAVE_AVX2
    if (cpu_has_avx2()) {
        qgemm_run(m, n, k, a, b, bias, mode, c, ldc, work, ukr_avx2, true);
        return;
    }
#endif
    qgemm_run(m, n, k, a, b, bias, mode, c, ldc, work, ukr_portable, false);
}

void sim_qgemm_s8s8s32_portable(int64_t m, int64_t n, int64_t k, const qgemm_mat *a, const qgemm_mat *b,
                                const int32_t *bias, qgemm_bias mode, int32_t *c, int64_t ldc, void *work)
{
    qgemm_run(m, n, k, a, b, bias, mode, c, ldc, work, ukr_portable, false);
}

/* ------------------------------------------------------------------------------------------------- */
/* Tasks over a pool */

#define QGEMM_TASK_ROWS 96  /* rows of C per task (a multiple of QGEMM_MR) */
#define QGEMM_TASK_COLS 512 /* columns of C per task */

size_t qgemm_parallel_scratch(int64_t m, int64_t n, int64_t k)
{
    return align64(qgemm_workspace_bytes(min64(m, QGEMM_TASK_ROWS), min64(n, QGEMM_TASK_COLS), k));
}

typedef struct qgemm_job {
    int64_t m, n, k;
    const qgemm_mat *a, *b;
    const int32_t *bias;
    qgemm_bias mode;
    int32_t *c;
    int64_t ldc;
    char *work;
    size_t per_worker;
    int64_t col_blocks;
} qgemm_job;

static void qgemm_task(void *arg, int64_t task, int worker)
{
    const qgemm_job *j = arg;
    const int64_t i0 = task / j->col_blocks * QGEMM_TASK_ROWS, j0 = task % j->col_blocks * QGEMM_TASK_COLS;
    const int64_t mb = min64(QGEMM_TASK_ROWS, j->m - i0), nb = min64(QGEMM_TASK_COLS, j->n - j0);
    qgemm_mat a = *j->a, b = *j->b;
    a.data += i0 * a.rs;
    b.data += j0 * b.cs;
    const int32_t *bias = j->bias ? j->bias + (j->mode == QGEMM_BIAS_PER_N ? j0 : i0) : NULL;
    sim_qgemm_s8s8s32(mb, nb, j->k, &a, &b, bias, j->mode, j->c + i0 * j->ldc + j0, j->ldc,
                      j->work + (size_t)worker * j->per_worker);
}

void sim_qgemm_s8s8s32_parallel(int64_t m, int64_t n, int64_t k, const qgemm_mat *a, const qgemm_mat *b,
                                const int32_t *bias, qgemm_bias mode, int32_t *c, int64_t ldc, void *work,
                                struct rd_pool *pool)
{
    if (m <= 0 || n <= 0)
        return;
    qgemm_job j = {.m = m,
                   .n = n,
                   .k = k,
                   .a = a,
                   .b = b,
                   .bias = bias,
                   .mode = mode,
                   .c = c,
                   .ldc = ldc,
                   .work = work,
                   .per_worker = qgemm_parallel_scratch(m, n, k),
                   .col_blocks = (n + QGEMM_TASK_COLS - 1) / QGEMM_TASK_COLS};
    sim_parallel(pool, (m + QGEMM_TASK_ROWS - 1) / QGEMM_TASK_ROWS * j.col_blocks, qgemm_task, &j);
}

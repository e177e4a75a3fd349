/*
 * sgemm_f32.c: blocked float32 GEMM whose elements are fused multiply-add chains (contract in sgemm_f32.h).
 *
 * Packed B panel p (columns 16p .. 16p + 15 of a KC block): bp[p * kc * 16 + kk * 16 + j]; columns beyond
 * n are packed as 0 and their results dropped. Rows of A beyond m repeat the last row (never stored).
 */
#include "sgemm_f32.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SGEMM_HAVE_AVX2 1
#endif

typedef void (*ukr_fn)(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, int rows, const float *bp, float *c,
                       int64_t ldc);

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

size_t sgemm_f32_work_bytes(int64_t k, int64_t n)
{
    if (n <= 0 || k <= 0)
        return 0;
    const int64_t cols = (n + SGEMM_NR - 1) / SGEMM_NR * SGEMM_NR;
    return (size_t)cols * (size_t)min64(k, SGEMM_KC) * sizeof(float);
}

/* Rows k0 .. k0 + kc - 1 of B (n columns) into 16-column panels. */
static void pack_b(const sgemm_mat *b, int64_t k0, int64_t kc, int64_t n, float *bp)
{
    for (int64_t j0 = 0; j0 < n; j0 += SGEMM_NR) {
        float *dst = bp + j0 * kc;
        const int64_t nr = min64(SGEMM_NR, n - j0);
        for (int64_t kk = 0; kk < kc; kk++) {
            const float *src = b->data + (k0 + kk) * b->rs + j0 * b->cs;
            float *d = dst + kk * SGEMM_NR;
            if (b->cs == 1 && nr == SGEMM_NR) {
                memcpy(d, src, SGEMM_NR * sizeof(float));
                continue;
            }
            int64_t j = 0;
            for (; j < nr; j++)
                d[j] = src[j * b->cs];
            for (; j < SGEMM_NR; j++)
                d[j] = 0.0f;
        }
    }
}

/* c[MR][NR] (row stride ldc, all MR rows addressable) = fma chains over kc from its present values. */
static void ukr_portable(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, int rows, const float *bp, float *c,
                         int64_t ldc)
{
    float acc[SGEMM_MR][SGEMM_NR];
    const float *ar[SGEMM_MR];
    for (int r = 0; r < SGEMM_MR; r++) {
        ar[r] = a + (r < rows ? r : rows - 1) * a_rs;
        memcpy(acc[r], c + r * ldc, sizeof acc[r]);
    }
    for (int64_t kk = 0; kk < kc; kk++) {
        const float *b = bp + kk * SGEMM_NR;
        for (int r = 0; r < SGEMM_MR; r++) {
            const float av = ar[r][kk * a_cs];
            for (int j = 0; j < SGEMM_NR; j++)
                acc[r][j] = fmaf(av, b[j], acc[r][j]);
        }
    }
    for (int r = 0; r < SGEMM_MR; r++)
        memcpy(c + r * ldc, acc[r], sizeof acc[r]);
}

#ifdef SGEMM_HAVE_AVX2
__attribute__((target("avx2,fma"))) static void ukr_avx2(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs,
                                                         int rows, const float *bp, float *c, int64_t ldc)
{
    const float *a0 = a, *a1 = a + (rows > 1 ? 1 : 0) * a_rs, *a2 = a + (rows > 2 ? 2 : rows - 1) * a_rs;
    const float *a3 = a + (rows > 3 ? 3 : rows - 1) * a_rs, *a4 = a + (rows > 4 ? 4 : rows - 1) * a_rs;
    const float *a5 = a + (rows > 5 ? 5 : rows - 1) * a_rs;
    __m256 c00 = _mm256_loadu_ps(c), c01 = _mm256_loadu_ps(c + 8);
    __m256 c10 = _mm256_loadu_ps(c + ldc), c11 = _mm256_loadu_ps(c + ldc + 8);
    __m256 c20 = _mm256_loadu_ps(c + 2 * ldc), c21 = _mm256_loadu_ps(c + 2 * ldc + 8);
    __m256 c30 = _mm256_loadu_ps(c + 3 * ldc), c31 = _mm256_loadu_ps(c + 3 * ldc + 8);
    __m256 c40 = _mm256_loadu_ps(c + 4 * ldc), c41 = _mm256_loadu_ps(c + 4 * ldc + 8);
    __m256 c50 = _mm256_loadu_ps(c + 5 * ldc), c51 = _mm256_loadu_ps(c + 5 * ldc + 8);
    for (int64_t kk = 0; kk < kc; kk++) {
        const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
        __m256 av = _mm256_broadcast_ss(a0);
        c00 = _mm256_fmadd_ps(av, b0, c00);
        c01 = _mm256_fmadd_ps(av, b1, c01);
        av = _mm256_broadcast_ss(a1);
        c10 = _mm256_fmadd_ps(av, b0, c10);
        c11 = _mm256_fmadd_ps(av, b1, c11);
        av = _mm256_broadcast_ss(a2);
        c20 = _mm256_fmadd_ps(av, b0, c20);
        c21 = _mm256_fmadd_ps(av, b1, c21);
        av = _mm256_broadcast_ss(a3);
        c30 = _mm256_fmadd_ps(av, b0, c30);
        c31 = _mm256_fmadd_ps(av, b1, c31);
        av = _mm256_broadcast_ss(a4);
        c40 = _mm256_fmadd_ps(av, b0, c40);
        c41 = _mm256_fmadd_ps(av, b1, c41);
        av = _mm256_broadcast_ss(a5);
        c50 = _mm256_fmadd_ps(av, b0, c50);
        c51 = _mm256_fmadd_ps(av, b1, c51);
        a0 += a_cs;
        a1 += a_cs;
        a2 += a_cs;
        a3 += a_cs;
        a4 += a_cs;
        a5 += a_cs;
        bp += SGEMM_NR;
    }
    _mm256_storeu_ps(c, c00);
    _mm256_storeu_ps(c + 8, c01);
    _mm256_storeu_ps(c + ldc, c10);
    _mm256_storeu_ps(c + ldc + 8, c11);
    _mm256_storeu_ps(c + 2 * ldc, c20);
    _mm256_storeu_ps(c + 2 * ldc + 8, c21);
    _mm256_storeu_ps(c + 3 * ldc, c30);
    _mm256_storeu_ps(c + 3 * ldc + 8, c31);
    _mm256_storeu_ps(c + 4 * ldc, c40);
    _mm256_storeu_ps(c + 4 * ldc + 8, c41);
    _mm256_storeu_ps(c + 5 * ldc, c50);
    _mm256_storeu_ps(c + 5 * ldc + 8, c51);
}

static bool cpu_has_avx2_fma(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

/* One KC block of the product: B's panel of columns jr .. jr + 15 at bp + (jr / NR) * panel_stride. */
static void gemm_block(int64_t m, int64_t n, int64_t kc, const float *a_pc, int64_t a_rs, int64_t a_cs, const float *bp,
                       int64_t panel_stride, float *c, int64_t ldc, ukr_fn ukr)
{
    for (int64_t jr = 0; jr < n; jr += SGEMM_NR) {
        const int64_t nr = min64(SGEMM_NR, n - jr);
        const float *bpan = bp + jr / SGEMM_NR * panel_stride;
        for (int64_t ir = 0; ir < m; ir += SGEMM_MR) {
            const int mr = (int)min64(SGEMM_MR, m - ir);
            const float *ap = a_pc + ir * a_rs;
            float *ct = c + ir * ldc + jr;
            if (mr == SGEMM_MR && nr == SGEMM_NR) {
                ukr(kc, ap, a_rs, a_cs, mr, bpan, ct, ldc);
                continue;
            }
            float edge[SGEMM_MR * SGEMM_NR] = {0};
            for (int r = 0; r < mr; r++)
                memcpy(edge + r * SGEMM_NR, ct + r * ldc, (size_t)nr * sizeof(float));
            ukr(kc, ap, a_rs, a_cs, mr, bpan, edge, SGEMM_NR);
            for (int r = 0; r < mr; r++)
                memcpy(ct + r * ldc, edge + r * SGEMM_NR, (size_t)nr * sizeof(float));
        }
    }
}

static void sgemm_run(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const sgemm_mat *b, float *c, int64_t ldc,
                      float *work, ukr_fn ukr)
{
    if (m <= 0 || n <= 0 || k <= 0)
        return;
    for (int64_t pc = 0; pc < k; pc += SGEMM_KC) {
        const int64_t kc = min64(SGEMM_KC, k - pc);
        pack_b(b, pc, kc, n, work);
        gemm_block(m, n, kc, a->data + pc * a->cs, a->rs, a->cs, work, kc * SGEMM_NR, c, ldc, ukr);
    }
}

static void sgemm_packed_run(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const float *bp, float *c,
                             int64_t ldc, ukr_fn ukr)
{
    if (m <= 0 || n <= 0 || k <= 0)
        return;
    for (int64_t pc = 0; pc < k; pc += SGEMM_KC)
        gemm_block(m, n, min64(SGEMM_KC, k - pc), a->data + pc * a->cs, a->rs, a->cs, bp + pc * SGEMM_NR, k * SGEMM_NR,
                   c, ldc, ukr);
}

void sim_sgemm_f32(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const sgemm_mat *b, float *c, int64_t ldc,
                   float *work)
{
#ifdef SGEMM_HAVE_AVX2
    if (cpu_has_avx2_fma()) {
        sgemm_run(m, n, k, a, b, c, ldc, work, ukr_avx2);
        return;
    }
#endif
    sgemm_run(m, n, k, a, b, c, ldc, work, ukr_portable);
}

void sim_sgemm_f32_packed(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const float *bp, float *c, int64_t ldc,
                          bool portable)
{
#ifdef SGEMM_HAVE_AVX2
    if (!portable && cpu_has_avx2_fma()) {
        sgemm_packed_run(m, n, k, a, bp, c, ldc, ukr_avx2);
        return;
    }
#endif
    sgemm_packed_run(m, n, k, a, bp, c, ldc, ukr_portable);
}

void sim_sgemm_f32_portable(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const sgemm_mat *b, float *c,
                            int64_t ldc, float *work)
{
    sgemm_run(m, n, k, a, b, c, ldc, work, ukr_portable);
}

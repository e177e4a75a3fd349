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

/* init: NULL, the chains start from c; else row r's from init[r] (all SGEMM_MR given) */
typedef void (*ukr_fn)(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, int rows, const float *bp, float *c,
                       int64_t ldc, const float *init);

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

/* c[MR][NR] (row stride ldc, all MR rows addressable) = fma chains over kc from its present values or init. */
static void ukr_portable(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, int rows, const float *bp, float *c,
                         int64_t ldc, const float *init)
{
    float acc[SGEMM_MR][SGEMM_NR];
    const float *ar[SGEMM_MR];
    for (int r = 0; r < SGEMM_MR; r++) {
        ar[r] = a + (r < rows ? r : rows - 1) * a_rs;
        if (!init) {
            memcpy(acc[r], c + r * ldc, sizeof acc[r]);
            continue;
        }
        for (int j = 0; j < SGEMM_NR; j++)
            acc[r][j] = init[r];
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
                                                         int rows, const float *bp, float *c, int64_t ldc,
                                                         const float *init)
{
    const float *a0 = a, *a1 = a + (rows > 1 ? 1 : 0) * a_rs, *a2 = a + (rows > 2 ? 2 : rows - 1) * a_rs;
    const float *a3 = a + (rows > 3 ? 3 : rows - 1) * a_rs, *a4 = a + (rows > 4 ? 4 : rows - 1) * a_rs;
    const float *a5 = a + (rows > 5 ? 5 : rows - 1) * a_rs;
    __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
    if (init) {
        c00 = c01 = _mm256_set1_ps(init[0]);
        c10 = c11 = _mm256_set1_ps(init[1]);
        c20 = c21 = _mm256_set1_ps(init[2]);
        c30 = c31 = _mm256_set1_ps(init[3]);
        c40 = c41 = _mm256_set1_ps(init[4]);
        c50 = c51 = _mm256_set1_ps(init[5]);
    } else {
        c00 = _mm256_loadu_ps(c), c01 = _mm256_loadu_ps(c + 8);
        c10 = _mm256_loadu_ps(c + ldc), c11 = _mm256_loadu_ps(c + ldc + 8);
        c20 = _mm256_loadu_ps(c + 2 * ldc), c21 = _mm256_loadu_ps(c + 2 * ldc + 8);
        c30 = _mm256_loadu_ps(c + 3 * ldc), c31 = _mm256_loadu_ps(c + 3 * ldc + 8);
        c40 = _mm256_loadu_ps(c + 4 * ldc), c41 = _mm256_loadu_ps(c + 4 * ldc + 8);
        c50 = _mm256_loadu_ps(c + 5 * ldc), c51 = _mm256_loadu_ps(c + 5 * ldc + 8);
    }
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

/* The start values of rows ir .. ir + SGEMM_MR - 1 (rows past m repeat the last, as A's do); NULL without a start. */
static const float *block_init(const sgemm_start *start, int64_t ir, int mr, float init[SGEMM_MR])
{
    if (!start)
        return NULL;
    for (int r = 0; r < SGEMM_MR; r++)
        init[r] = start->from[(ir + (r < mr ? r : mr - 1)) * start->stride];
    return init;
}

/* One KC block of the product: B's panel of columns jr .. jr + 15 at bp + (jr / NR) * panel_stride; the chains
   start from start (the first block) or from C. */
static void gemm_block(int64_t m, int64_t n, int64_t kc, const float *a_pc, int64_t a_rs, int64_t a_cs, const float *bp,
                       int64_t panel_stride, float *c, int64_t ldc, const sgemm_start *start, ukr_fn ukr)
{
    for (int64_t jr = 0; jr < n; jr += SGEMM_NR) {
        const int64_t nr = min64(SGEMM_NR, n - jr);
        const float *bpan = bp + jr / SGEMM_NR * panel_stride;
        for (int64_t ir = 0; ir < m; ir += SGEMM_MR) {
            const int mr = (int)min64(SGEMM_MR, m - ir);
            const float *ap = a_pc + ir * a_rs;
            float *ct = c + ir * ldc + jr;
            float init_values[SGEMM_MR];
            const float *init = block_init(start, ir, mr, init_values);
            if (mr == SGEMM_MR && nr == SGEMM_NR) {
                ukr(kc, ap, a_rs, a_cs, mr, bpan, ct, ldc, init);
                continue;
            }
            float edge[SGEMM_MR * SGEMM_NR] = {0};
            for (int r = 0; !init && r < mr; r++)
                memcpy(edge + r * SGEMM_NR, ct + r * ldc, (size_t)nr * sizeof(float));
            ukr(kc, ap, a_rs, a_cs, mr, bpan, edge, SGEMM_NR, init);
            for (int r = 0; r < mr; r++)
                memcpy(ct + r * ldc, edge + r * SGEMM_NR, (size_t)nr * sizeof(float));
        }
    }
}

/*
 * A product with one row or one column of C (a fully connected layer at batch 1: matmul_f32.c computes
 * Y^T = W x^T, one column): each element of C is the chain of fmaf over k of one contiguous line of the big
 * operand (a row of A, or a column of B stored by columns) and the small vector v. The 6 x 16 micro-kernel
 * left fifteen of its sixteen columns idle (or, for one row, packed the big operand and left five rows idle).
 * Line i starts at lines + i * line_stride; C's element i is at c[i * c_stride].
 */
typedef struct gemv_args {
    int64_t count, k;
    const float *lines, *v;
    int64_t line_stride, v_stride, c_stride;
    const float *init; /* NULL: element i's chain starts from C; else from init[i * init_stride] */
    int64_t init_stride;
} gemv_args;

static float gemv_start(const gemv_args *g, int64_t i, const float *c)
{
    return g->init ? g->init[i * g->init_stride] : c[i * g->c_stride];
}

static void gemv_portable(const gemv_args *g, int64_t from, float *c)
{
    for (int64_t i = from; i < g->count; i++) {
        const float *line = g->lines + i * g->line_stride;
        float acc = gemv_start(g, i, c);
        for (int64_t kk = 0; kk < g->k; kk++)
            acc = fmaf(line[kk], g->v[kk * g->v_stride], acc);
        c[i * g->c_stride] = acc;
    }
}

#ifdef SGEMM_HAVE_AVX2
/* gemv_portable eight lines at a time: 8 x 8 blocks of them transposed in registers, so that each lane is its
   element's chain over k in order. */
__attribute__((target("avx2,fma"))) static void gemv_avx2(const gemv_args *g, float *c)
{
    int64_t i = 0;
    for (; i + 8 <= g->count; i += 8) {
        const float *w[8];
        float acc_init[8];
        for (int r = 0; r < 8; r++) {
            w[r] = g->lines + (i + r) * g->line_stride;
            acc_init[r] = gemv_start(g, i + r, c);
        }
        __m256 acc = _mm256_loadu_ps(acc_init);
        int64_t kk = 0;
        for (; kk + 8 <= g->k; kk += 8) {
            __m256 r0 = _mm256_loadu_ps(w[0] + kk), r1 = _mm256_loadu_ps(w[1] + kk), r2 = _mm256_loadu_ps(w[2] + kk),
                   r3 = _mm256_loadu_ps(w[3] + kk), r4 = _mm256_loadu_ps(w[4] + kk), r5 = _mm256_loadu_ps(w[5] + kk),
                   r6 = _mm256_loadu_ps(w[6] + kk), r7 = _mm256_loadu_ps(w[7] + kk);
            const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
                         t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
                         t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
                         t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
            r0 = _mm256_shuffle_ps(t0, t2, 0x44);
            r1 = _mm256_shuffle_ps(t0, t2, 0xee);
            r2 = _mm256_shuffle_ps(t1, t3, 0x44);
            r3 = _mm256_shuffle_ps(t1, t3, 0xee);
            r4 = _mm256_shuffle_ps(t4, t6, 0x44);
            r5 = _mm256_shuffle_ps(t4, t6, 0xee);
            r6 = _mm256_shuffle_ps(t5, t7, 0x44);
            r7 = _mm256_shuffle_ps(t5, t7, 0xee);
            const __m256 col[8] = {_mm256_permute2f128_ps(r0, r4, 0x20), _mm256_permute2f128_ps(r1, r5, 0x20),
                                   _mm256_permute2f128_ps(r2, r6, 0x20), _mm256_permute2f128_ps(r3, r7, 0x20),
                                   _mm256_permute2f128_ps(r0, r4, 0x31), _mm256_permute2f128_ps(r1, r5, 0x31),
                                   _mm256_permute2f128_ps(r2, r6, 0x31), _mm256_permute2f128_ps(r3, r7, 0x31)};
            for (int q = 0; q < 8; q++) /* col[q] lane r: line i + r at kk + q */
                acc = _mm256_fmadd_ps(col[q], _mm256_set1_ps(g->v[(kk + q) * g->v_stride]), acc);
        }
        for (; kk < g->k; kk++)
            acc = _mm256_fmadd_ps(
                _mm256_setr_ps(w[0][kk], w[1][kk], w[2][kk], w[3][kk], w[4][kk], w[5][kk], w[6][kk], w[7][kk]),
                _mm256_set1_ps(g->v[kk * g->v_stride]), acc);
        float out[8];
        _mm256_storeu_ps(out, acc);
        for (int r = 0; r < 8; r++)
            c[(i + r) * g->c_stride] = out[r];
    }
    gemv_portable(g, i, c);
}
#endif

/* The gemv for a product of one column (A's rows contiguous) or one row (B's columns contiguous); false for
   any other shape. */
static bool gemv_of(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const sgemm_mat *b, int64_t ldc,
                    const sgemm_start *start, gemv_args *g)
{
    if (n == 1 && a->cs == 1 && m > 1) /* a column: lines are A's rows */
        *g = (gemv_args){.count = m,
                         .lines = a->data,
                         .line_stride = a->rs,
                         .v = b->data,
                         .v_stride = b->rs,
                         .c_stride = ldc,
                         .init_stride = start ? start->stride : 0};
    else if (m == 1 && b->rs == 1 && n > 1) /* a row: lines are B's columns, all starting from row 0's value */
        *g = (gemv_args){
            .count = n, .lines = b->data, .line_stride = b->cs, .v = a->data, .v_stride = a->cs, .c_stride = 1};
    else
        return false;
    g->k = k;
    g->init = start ? start->from : NULL;
    return true;
}

/* C = start with no product (k == 0). */
static void fill_start(int64_t m, int64_t n, float *c, int64_t ldc, const sgemm_start *start)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            c[i * ldc + j] = start->from[i * start->stride];
}

static void sgemm_run(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const sgemm_mat *b, float *c, int64_t ldc,
                      float *work, const sgemm_start *start, ukr_fn ukr)
{
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        if (start)
            fill_start(m, n, c, ldc, start);
        return;
    }
    gemv_args g;
    if (gemv_of(m, n, k, a, b, ldc, start, &g)) {
#ifdef SGEMM_HAVE_AVX2
        if (ukr == ukr_avx2) {
            gemv_avx2(&g, c);
            return;
        }
#endif
        gemv_portable(&g, 0, c);
        return;
    }
    for (int64_t pc = 0; pc < k; pc += SGEMM_KC) {
        const int64_t kc = min64(SGEMM_KC, k - pc);
        pack_b(b, pc, kc, n, work);
        gemm_block(m, n, kc, a->data + pc * a->cs, a->rs, a->cs, work, kc * SGEMM_NR, c, ldc, pc == 0 ? start : NULL,
                   ukr);
    }
}

static void sgemm_packed_run(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const float *bp, float *c,
                             int64_t ldc, const sgemm_start *start, ukr_fn ukr)
{
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0 && start)
        fill_start(m, n, c, ldc, start);
    for (int64_t pc = 0; pc < k; pc += SGEMM_KC)
        gemm_block(m, n, min64(SGEMM_KC, k - pc), a->data + pc * a->cs, a->rs, a->cs, bp + pc * SGEMM_NR, k * SGEMM_NR,
                   c, ldc, pc == 0 ? start : NULL, ukr);
}

void sim_sgemm_f32(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const sgemm_mat *b, float *c, int64_t ldc,
                   float *work, const sgemm_start *start)
{
#ifdef SGEMM_HAVE_AVX2
    if (cpu_has_avx2_fma()) {
        sgemm_run(m, n, k, a, b, c, ldc, work, start, ukr_avx2);
        return;
    }
#endif
    sgemm_run(m, n, k, a, b, c, ldc, work, start, ukr_portable);
}

void sim_sgemm_f32_packed(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const float *bp, float *c, int64_t ldc,
                          const sgemm_start *start, bool portable)
{
#ifdef SGEMM_HAVE_AVX2
    if (!portable && cpu_has_avx2_fma()) {
        sgemm_packed_run(m, n, k, a, bp, c, ldc, start, ukr_avx2);
        return;
    }
#endif
    sgemm_packed_run(m, n, k, a, bp, c, ldc, start, ukr_portable);
}

void sim_sgemm_f32_portable(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const sgemm_mat *b, float *c,
                            int64_t ldc, float *work, const sgemm_start *start)
{
    sgemm_run(m, n, k, a, b, c, ldc, work, start, ukr_portable);
}

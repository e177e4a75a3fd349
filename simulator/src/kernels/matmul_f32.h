/*
 * matmul_f32.h: batches of float matrix products Y = alpha * A B + beta * C for Gemm and MatMul, split over
 * the run's threads in blocks of rows and columns of Y.
 *
 * Numerical contract (sim_sgemm_f32's): with alpha == 1 each element of Y is one fma chain over k in order
 * starting from beta * C (or 0 without C); otherwise the chain starts from 0 and Y = alpha * chain + beta * C
 * (a product, then a sum). Blocks, the orientation (a product with few rows runs as Y^T = B^T A^T, which
 * gives the same chains) and the thread count change no bit.
 */
#ifndef RD_KERNELS_MATMUL_F32_H
#define RD_KERNELS_MATMUL_F32_H

#include "parallel.h"
#include "sgemm_f32.h"

#include <stdbool.h>

typedef struct mm_f32 {
    int64_t m, n, k;
    sgemm_mat a, b;       /* the operands of batch element 0 */
    int64_t n_batch;      /* products (>= 1) */
    const int64_t *a_off; /* per batch element: element offset of its A and B (NULL: 0 for all) */
    const int64_t *b_off;
    float *y; /* batch element i at y + i * m * n, rows of n */
    float alpha, beta;
    const float *c; /* C(i, j) = c[i * c_rs + j * c_cs] (NULL: none) */
    int64_t c_rs, c_cs;
} mm_f32;

/** Scratch bytes per worker (sim_pool_width workers, 64-byte aligned each). */
size_t mm_f32_scratch(const mm_f32 *p);

/** Computes p->y on pool's threads; scratch holds mm_f32_scratch(p) bytes per worker. */
void mm_f32_run(const mm_f32 *p, float *scratch, struct rd_pool *pool);

#endif

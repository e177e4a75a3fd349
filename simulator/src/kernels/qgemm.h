/*
 * qgemm.h: int8 x int8 -> int32 matrix product for the INT8 simulator (Conv, ConvTranspose, Gemm, MatMul).
 *
 *   C[m][n] = sum_k (A[m][k] - a_zp) * (B[k][n] - b_zp)  (+ bias[n] or bias[m])
 *
 * Numerical contract: every product is exact (operands shifted by their zero points fit int16), pairs
 * of products are summed exactly in int32 (as x86 pmaddwd does) and the sum is accumulated modulo 2^32,
 * i.e. exactly the two's-complement int32 accumulator of the NPU: when the true sum fits int32 the result
 * is exact (always true for K <= 2^16 with symmetric weights: 255 * 127 * 2^16 < 2^31), otherwise it
 * wraps, never undefined behaviour. Integer sums are associative, so the AVX2 path and the portable path
 * give identical results, whatever the blocking.
 *
 * Operands are views with element strides for rows and columns, so transposed operands (Gemm transA,
 * transB, ConvTranspose's W) need no copy. Zero points must lie in [-128, 127].
 *
 * Blocking (GotoBLAS style): B is packed per (KC x NC) block and A per (MC x KC) block into int16 pairs
 * (the zero points are subtracted while packing), then a 6 x 16 micro-kernel runs over the packed
 * panels. A single row times a transposed B (Gemm transB at batch 1) runs as C^T = B^T A^T, so that B is packed
 * by its contiguous rows. The workspace is at most qgemm_workspace_bytes() (about 0.6 MB), given by the caller.
 */
#ifndef RD_KERNELS_QGEMM_H
#define RD_KERNELS_QGEMM_H

#include <stddef.h>
#include <stdint.h>

#define QGEMM_MR 6    /* micro-tile rows */
#define QGEMM_NR 16   /* micro-tile columns */
#define QGEMM_KC 256  /* depth of a packed block (even) */
#define QGEMM_MC 96   /* rows of a packed A block (multiple of MR) */
#define QGEMM_NC 1024 /* columns of a packed B block (multiple of NR) */

/** An int8 matrix view: element (i, j) at data[i * rs + j * cs]; zp in [-128, 127]. */
typedef struct qgemm_mat {
    const int8_t *data;
    int64_t rs, cs;
    int32_t zp;
} qgemm_mat;

typedef enum qgemm_bias {
    QGEMM_BIAS_NONE = 0,
    QGEMM_BIAS_PER_N, /* bias[n] added to column n */
    QGEMM_BIAS_PER_M, /* bias[m] added to row m */
} qgemm_bias;

/** Bytes of workspace sim_qgemm_s8s8s32 needs for these sizes (64-byte aligned workspace expected). */
size_t qgemm_workspace_bytes(int64_t m, int64_t n, int64_t k);

/**
 * C (m x n, row stride ldc) = (A - a_zp)(B - b_zp) + bias, A m x k, B k x n. bias may be NULL
 * (mode ignored). work holds qgemm_workspace_bytes(m, n, k) bytes. m, n or k may be 0 (k == 0: C = bias).
 */
void sim_qgemm_s8s8s32(int64_t m, int64_t n, int64_t k, const qgemm_mat *a, const qgemm_mat *b, const int32_t *bias,
                       qgemm_bias mode, int32_t *c, int64_t ldc, void *work);

struct rd_pool;

/** Workspace bytes per worker of sim_qgemm_s8s8s32_parallel. */
size_t qgemm_parallel_scratch(int64_t m, int64_t n, int64_t k);

/**
 * sim_qgemm_s8s8s32 in blocks of rows and columns of C over pool's threads (integer sums: the same C whatever
 * the split); work holds qgemm_parallel_scratch(m, n, k) bytes per worker (sim_pool_width).
 */
void sim_qgemm_s8s8s32_parallel(int64_t m, int64_t n, int64_t k, const qgemm_mat *a, const qgemm_mat *b,
                                const int32_t *bias, qgemm_bias mode, int32_t *c, int64_t ldc, void *work,
                                struct rd_pool *pool);

/** Same product by the portable micro-kernel only (tests compare it with the dispatched one). */
void sim_qgemm_s8s8s32_portable(int64_t m, int64_t n, int64_t k, const qgemm_mat *a, const qgemm_mat *b,
                                const int32_t *bias, qgemm_bias mode, int32_t *c, int64_t ldc, void *work);

#endif

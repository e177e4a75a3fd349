/*
 * sgemm_f32.h: float32 matrix product for the reference kernels (Conv, ConvTranspose, Gemm, MatMul).
 *
 *   C[i][j] = fma(A[i][k-1], B[k-1][j], ... fma(A[i][1], B[1][j], fma(A[i][0], B[0][j], C[i][j])))
 *
 * Numerical contract: every element of C is one chain of fused multiply-adds over k in increasing order,
 * starting from the value C holds (the caller initialises it: bias, beta * C, or 0) or, given a start, from
 * that row's start value, so that C need not be filled first (a pass over cold memory). Blocking, the part of
 * C a call covers and the code path (AVX2+FMA or portable, which uses fmaf) do not change a single bit, so
 * callers may tile C any way they like and still get results that do not depend on the thread count.
 *
 * Blocking: A is read in place (six row pointers broadcast one value each per k, so weights need no
 * packing and are never copied); B is packed per KC rows into panels of 16 columns in a workspace of
 * sgemm_f32_work_bytes(n) bytes given by the caller (or packed by the caller for all k rows at once:
 * sim_sgemm_f32_packed); a 6 x 16 micro-kernel keeps C in registers for a whole KC block.
 */
#ifndef RD_KERNELS_SGEMM_F32_H
#define RD_KERNELS_SGEMM_F32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SGEMM_MR 6   /* micro-tile rows */
#define SGEMM_NR 16  /* micro-tile columns */
#define SGEMM_KC 256 /* rows of B packed at once */

/** A float matrix view: element (i, j) at data[i * rs + j * cs]. */
typedef struct sgemm_mat {
    const float *data;
    int64_t rs, cs;
} sgemm_mat;

/**
 * Where the chains of C start: NULL, from the values C holds; else row i's from from[i * stride] (stride 0:
 * one value for every row, such as a zero). The value is the chain's first addend exactly as if C had been
 * filled with it (-0.0 included).
 */
typedef struct sgemm_start {
    const float *from;
    int64_t stride;
} sgemm_start;

/** Bytes of workspace a product of depth k with n columns needs (64-byte alignment expected). */
size_t sgemm_f32_work_bytes(int64_t k, int64_t n);

/**
 * C (m x n, row stride ldc) = start + A (m x k) B (k x n) by the contract above (start NULL: C's own values).
 * k == 0 leaves C as it is, or sets it to the start values.
 */
void sim_sgemm_f32(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const sgemm_mat *b, float *c, int64_t ldc,
                   float *work, const sgemm_start *start);

/** The same product by the portable micro-kernel only (tests check it gives the same bits). */
void sim_sgemm_f32_portable(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const sgemm_mat *b, float *c,
                            int64_t ldc, float *work, const sgemm_start *start);

/**
 * C (m x n) = start + A (m x k) B (k x n) by the contract above, B given packed by the caller (an im2col written
 * straight into panels, so B is not copied twice): panel p holds columns 16p .. 16p + 15 of all k rows,
 * element (kk, 16p + j) at bp[p * k * 16 + kk * 16 + j]; columns of the last panel beyond n are ignored
 * (their results dropped). portable forces the portable micro-kernel (tests compare the two).
 */
void sim_sgemm_f32_packed(int64_t m, int64_t n, int64_t k, const sgemm_mat *a, const float *bp, float *c, int64_t ldc,
                          const sgemm_start *start, bool portable);

#endif

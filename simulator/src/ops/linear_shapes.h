/*
 * linear_shapes.h: the shape rules of Conv, ConvTranspose, Gemm and MatMul (op_conv.c, op_gemm.c), shared
 * with the INT8 simulator's integer evaluations (quant_eval.c) so both paths accept exactly the same
 * nodes and agree on every output size.
 */
#ifndef RD_OPS_LINEAR_SHAPES_H
#define RD_OPS_LINEAR_SHAPES_H

#include "../internal.h"
#include "../kernels/conv_geom.h"

/** Conv's geometry from the node's params and its X, W (and B) shapes; errors name the node. */
rd_status sim_conv_geometry(const sim_op_ctx *ctx, conv_geom *g, rd_error *err);
/** ConvTranspose's geometry (output_shape, output_padding, auto_pad resolved into pads and out dims). */
rd_status sim_conv_transpose_geometry(const sim_op_ctx *ctx, conv_geom *g, rd_error *err);

/** Gemm's params (ctx->params of a Gemm node). */
typedef struct sim_gemm_params {
    float alpha, beta;
    bool trans_a, trans_b;
} sim_gemm_params;

/** M, N, K of a Gemm node after checking A, B and C (C broadcastable to [M, N]). */
rd_status sim_gemm_dims(const sim_op_ctx *ctx, int64_t *m, int64_t *n, int64_t *k, rd_error *err);

/** Gemm's optional C as the float Gemm broadcasts it over [M, N] (data NULL when absent; strides 0 where
 *  broadcast), and the integer Gemms' last step: y = v + beta * C unless C was folded into the accumulator. */
typedef struct sim_gemm_c {
    const float *data;
    int64_t cs_row, cs_col;
    bool row_vector; /* the same C for every row: what the accumulator can hold */
} sim_gemm_c;

sim_gemm_c sim_gemm_c_of(const sim_op_ctx *ctx, int64_t m, int64_t n);

static inline float sim_gemm_c_add(const sim_gemm_c *c, bool folded, float beta, int64_t i, int64_t j, double v)
{
    if (c->data && !folded)
        v += (double)beta * c->data[i * c->cs_row + j * c->cs_col];
    return (float)v;
}

/** MatMul's numpy batching: matrix dims and batch strides. */
typedef struct sim_matmul_shape {
    int64_t m, n, k;
    int nb;                     /* output batch rank */
    int64_t batch[RD_MAX_RANK]; /* output batch dims */
    int64_t a_bs[RD_MAX_RANK];  /* A's batch strides in matrices, 0 where broadcast */
    int64_t b_bs[RD_MAX_RANK];
    int64_t n_batch; /* product of batch */
    bool b_shared;   /* B has a single matrix for every batch */
} sim_matmul_shape;

rd_status sim_matmul_shape_of(const sim_op_ctx *ctx, sim_matmul_shape *s, rd_error *err);

/** The matrices of A and B (indices in whole matrices) that batch element bi (row-major over batch) multiplies. */
void sim_matmul_batch_at(const sim_matmul_shape *s, int64_t bi, int64_t *a_mat, int64_t *b_mat);

#endif

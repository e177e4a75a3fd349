/*
 * broadcast.h: numpy-style broadcasting as a strided walk, shared by the elementwise, variadic, Where
 * and reduction operators. Pure: knows shapes and element strides only, no graph types.
 *
 * A plan holds the output shape with dims of size 1 dropped and adjacent dims merged wherever every
 * operand is contiguous across them, so that the innermost loop is as long as possible. Walking the
 * plan calls a row function once per innermost row with each operand's element offset; offsets are
 * advanced incrementally (no index division per element).
 */
#ifndef RD_KERNELS_BROADCAST_H
#define RD_KERNELS_BROADCAST_H

#include "rknn_diag/simulator.h"

#define BC_MAX_OPS 4 /* operand 0 is the walked shape (output), then up to 3 more */

typedef struct bc_plan {
    int rank;  /* >= 1 after collapsing */
    int n_ops; /* operands, including operand 0 */
    int64_t dims[RD_MAX_RANK];
    int64_t st[BC_MAX_OPS][RD_MAX_RANK]; /* element strides; 0 along broadcast (or reduced) dims */
} bc_plan;

/**
 * Plan for an output of shape (out_rank, out_dims), contiguous, and n_in inputs each broadcast to it
 * (operands 1..n_in). Inputs must be broadcast-compatible with the output (checked by the caller).
 */
void bc_plan_broadcast(bc_plan *p, int out_rank, const int64_t *out_dims, int n_in, const int *in_rank,
                       const int64_t *const *in_dims);

/** Plan from explicit element strides (strides[k][d] for operand k and dim d of dims). */
void bc_plan_strided(bc_plan *p, int rank, const int64_t *dims, int n_ops, const int64_t (*strides)[RD_MAX_RANK]);

/** off[k]: element offset of operand k at the row start; inner[k]: its stride along the row. */
typedef void (*bc_row_fn)(void *user, int64_t n, const int64_t *off, const int64_t *inner);

/** Calls row for every innermost row, in row-major order. Nothing is called if any dim is 0. */
void bc_run(const bc_plan *p, bc_row_fn row, void *user);

#endif

/*
 * tensor_common.h: helpers shared by the tensor family's operators (op_tensor_*.c): error wording,
 * reading small integer vectors from inputs, dtype checks and an N-d strided copy.
 */
#ifndef RD_SIM_TENSOR_COMMON_H
#define RD_SIM_TENSOR_COMMON_H

#include "../internal.h"

/* Room for shapes of rank up to RD_MAX_RANK doubled (Tile, DepthToSpace views use more axes). */
#define TC_MAX_VIEW_RANK (2 * RD_MAX_RANK)

/** Sets err to "node 'n' (Op): <message>" and returns code. */
rd_status tc_node_err(const sim_node *n, rd_error *err, rd_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/** The same for the node an eval or infer context runs. */
#define tc_err(ctx, err, code, ...) tc_node_err((ctx)->node, err, code, __VA_ARGS__)

/** The params of an op whose one attribute is an integer axis (Concat, Gather, GatherElements, Flatten). */
struct tc_axis_params {
    int64_t axis;
};

/** Parses "axis" into struct tc_axis_params, 0 when absent. */
rd_status tc_axis0_parse(const sim_node *n, void *params, rd_error *err);
/** Parses "axis" into struct tc_axis_params, 1 when absent. */
rd_status tc_axis1_parse(const sim_node *n, void *params, rd_error *err);

/** Bytes per element of a dtype the data-moving ops handle (any fixed-size supported type); 0 if none. */
size_t tc_elem_size(rd_dtype dt);

/** RD_E_UNSUPPORTED unless input k has a dtype that tc_elem_size handles. */
rd_status tc_check_movable(const sim_op_ctx *ctx, int k, rd_error *err);

/** True when input k is present and holds at least one element or is a known empty tensor. */
static inline bool tc_has(const sim_op_ctx *ctx, int k)
{
    return k < ctx->n_in && ctx->in[k] != NULL;
}

/**
 * Reads input k (a 1-D or scalar integer tensor) into out[0..max-1]; *n receives its element count.
 * RD_E_INVAL when it has more than max elements or a non-integer dtype. Data must be present.
 */
rd_status tc_read_ints(const sim_op_ctx *ctx, int k, int64_t *out, size_t max, size_t *n, rd_error *err);

/** Checks the output shape against the tensor limits (rd_shape_bytes), with the node in the message. */
rd_status tc_check_shape(const sim_op_ctx *ctx, rd_dtype dt, int rank, const int64_t *dims, rd_error *err);

/** Row-major element strides of dims. */
void tc_strides(int rank, const int64_t *dims, int64_t *strides);

/**
 * Copies an N-d view: for every output index vector i (row-major over dims[0..rank-1]), the element
 * at src + (base + sum_k i[k]*step[k]) * esize goes to the next dst element. Steps may be zero or
 * negative (broadcast, reversed slices); the caller guarantees every address is inside src.
 */
void tc_view_copy(size_t esize, int rank, const int64_t *dims, const void *src, int64_t base, const int64_t *step,
                  void *dst);

#endif

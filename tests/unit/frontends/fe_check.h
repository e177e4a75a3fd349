/*
 * fe_check.h: the frontend tests' check against an equivalent ONNX model and ONNX Runtime's outputs for it.
 */
#ifndef RD_TESTS_FE_CHECK_H
#define RD_TESTS_FE_CHECK_H

#include "rknn_diag/simulator.h"

/**
 * Runs the frontend's model m and the equivalent ONNX model b (which the test wrote with the same weights;
 * destroyed here) on input x. Their n_out outputs must agree within tol, and m's must agree within tol with
 * golden: ONNX Runtime's values of the outputs in order, made by ../shared/tools/ort from the files this writes
 * to a fresh build-tree folder named tag: onnx_name and npy_name (the input). CUnit assertions; messages name
 * the folder on a mismatch.
 */
void fe_check_equivalent(rd_model *m, rd_onnx_builder *b, const rd_tensor *x, int n_out, const float *golden,
                         double tol, const char *tag, const char *onnx_name, const char *npy_name);

/** A value a frontend's model must have, of this shape. */
typedef struct fe_shape {
    const char *name;
    int rank;
    int64_t dims[5];
} fe_shape;

/** Asserts that m has each value of expect[0..n) with its rank and dims (messages name what differs). */
void fe_check_shapes(const rd_model *m, const fe_shape *expect, size_t n);

/** A model file, name holding text, alone in a fresh folder (rd_test_tmpdir(tag)): rd_frontend_load refuses it
    with RD_E_NOTFOUND, the message holding says and the name of the weights file it looked for. */
void fe_check_alone(const char *tag, const char *name, const char *text, const char *says, const char *weights);

/** A fatal CUnit assertion that st is RD_OK, printing err's message first when it is not. */
void fe_assert_ok(rd_status st, const rd_error *err);

/** In an equivalent model's writer, with the builder in scope as b: FE_NODE(op, name, FE_L(inputs...),
    FE_L(output)) adds a node of one output and gives it back. */
#define FE_NODE(op, name, ins, outs)                                                                           \
    rd_onnx_add_node(b, op, name, (const char *const[])ins, sizeof((const char *const[])ins) / sizeof(char *), \
                     (const char *const[])outs, 1)
#define FE_L(...)   \
    {               \
        __VA_ARGS__ \
    }

/** Initializers of the equivalent ONNX models the tests write (v is copied). */
void fe_add_f32(rd_onnx_builder *b, const char *name, int rank, const int64_t *dims, const float *v);
void fe_add_i64(rd_onnx_builder *b, const char *name, int n, const int64_t *v);

#endif

/*
 * chain_model.h: a long chain model made with our ONNX writer, for the scale test
 * (tests/unit/analyzer/test_graph_scale.c) and the load benchmark (bench/chain_bench.c): node i is Add (of the shared
 * 1x8 constant "c"), Relu or Identity for i % 3 = 0, 1, 2, on a 1x8 float tensor; tensors are named "block_<i>/out" as
 * exporters name them, the input "x" and the last output "y".
 */
#ifndef RD_TEST_CHAIN_MODEL_H
#define RD_TEST_CHAIN_MODEL_H

#include "rknn_diag/simulator.h"

#define RD_CHAIN_WIDTH 8

/** The constant "c" of the chain: element i is 0.001 * (i - 4). */
float rd_chain_constant(int i);

/** A builder holding the n-node chain (NULL on allocation failure; errors also show in its status). */
rd_onnx_builder *rd_chain_model(long n);

/** What the chain computes from x (RD_CHAIN_WIDTH values) into y, in float32 as the reference does. */
void rd_chain_expected(long n, const float *x, float *y);

#endif

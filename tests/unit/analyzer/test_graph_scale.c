/*
 * test_graph_scale.c: graphs far larger than real models load and run in linear time (issue 16 item 5).
 *
 * A 100k-node chain made by our ONNX writer (tests/support/chain_model.h) goes through every per-node
 * path: loading (value-name hash, topological order, inference), the float32 run with an observer, the
 * compiler passes and the float16 simulation, and the accuracy analysis's per-layer bookkeeping. With a
 * name scan or a per-node scan of the graph any of these took minutes; no timing is asserted (machines
 * differ), the figures are in docs/benchmarks.md. Also: the node and tensor-name limits say what was
 * exceeded.
 */
#include "accuracy.h"
#include "chain_model.h"
#include "rd_test.h"
#include "rknn_diag/reports.h"
#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAIN_NODES 100000L

static rd_status count_observed(void *user, const rd_observed *ev, rd_error *err)
{
    (void)ev;
    (void)err;
    ++*(long *)user;
    return RD_OK;
}

static void input_x(rd_tensor *x)
{
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(x, RD_DT_F32, 2, (const int64_t[]){1, RD_CHAIN_WIDTH}, NULL), RD_OK);
    for (int k = 0; k < RD_CHAIN_WIDTH; k++)
        ((float *)x->data)[k] = 0.25f * (float)k - 0.5f; /* some start negative: Relu matters */
}

static void *chain_bytes(long n, size_t *len)
{
    rd_onnx_builder *b = rd_chain_model(n);
    void *buf = NULL;
    rd_error err;
    rd_status st = rd_onnx_builder_write(b, &buf, len, &err);
    rd_onnx_builder_destroy(b);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    return buf;
}

static void test_chain_100k(void)
{
    size_t len;
    void *buf = chain_bytes(CHAIN_NODES, &len);
    rd_model *m = NULL;
    rd_error err;
    rd_status st = rd_model_load_mem(buf, len, "chain.onnx", NULL, NULL, &m, &err);
    free(buf);
    if (st != RD_OK)
        fprintf(stderr, "\n  %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    CU_ASSERT_EQUAL(rd_model_node_count(m), (size_t)CHAIN_NODES);
    /* x, c and one tensor per node; every name finds its own value */
    size_t n_values = rd_model_value_count(m);
    CU_ASSERT_EQUAL(n_values, (size_t)CHAIN_NODES + 2);
    size_t misses = 0;
    for (size_t v = 0; v < n_values; v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        misses += rd_model_find_value(m, vi.name) != (int)v;
    }
    CU_ASSERT_EQUAL(misses, 0);
    CU_ASSERT_EQUAL(rd_model_find_value(m, "block_99999/out"), -1); /* the last one is "y" */
    CU_ASSERT_EQUAL(rd_model_find_value(m, "block_0/outx"), -1);

    rd_tensor x = {0}, y = {0}, ys = {0};
    input_x(&x);
    float want[RD_CHAIN_WIDTH];
    rd_chain_expected(CHAIN_NODES, x.data, want);
    long observed = 0;
    rd_run_options ro = {.observer = count_observed, .user = &observed};
    st = rd_model_run(m, &x, 1, &ro, &y, 1, &err);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    CU_ASSERT_EQUAL(observed, CHAIN_NODES);
    CU_ASSERT_EQUAL(memcmp(y.data, want, sizeof want), 0); /* the same float32 steps: bit-identical */

    /* the passes drop the 33,333 Identity nodes and fuse each Relu into its Add */
    rd_sim *s = NULL;
    rd_sim_options so = {.precision = RD_PREC_FP16, .optimization_level = 3};
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_model_node_count(rd_sim_model(s)), (size_t)(CHAIN_NODES - CHAIN_NODES / 3));
    st = rd_sim_run(s, &x, 1, NULL, &ys, 1, &err);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    for (int k = 0; k < RD_CHAIN_WIDTH; k++) /* float16 loses the 0.001 steps; the values stay finite */
        CU_ASSERT(isfinite(((float *)ys.data)[k]));

    /* the analysis: one row per tensor, a blank row for each removed Identity output */
    rd_result r;
    rd_result_init(&r);
    an_accuracy_opts ao = {.warn_cos = 0.99, .error_cos = 0.98, .worst_layers = 6};
    st = an_accuracy_run(s, &x, 1, 1, &ao, &r, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n  %s\n", err.msg);
    CU_ASSERT_EQUAL(st, RD_OK);
    /* the input row and its exDataConvert row (x_float16), then every tensor */
    if (r.n_layers != (size_t)CHAIN_NODES + 2)
        fprintf(stderr, "\n  %zu rows\n", r.n_layers);
    CU_ASSERT_EQUAL(r.n_layers, (size_t)CHAIN_NODES + 2);
    size_t removed = 0, with_channels = 0;
    for (size_t i = 0; i < r.n_layers; i++) {
        removed += r.layers[i].op_type && strcmp(r.layers[i].op_type, "Removed") == 0;
        with_channels += r.layers[i].channels.cos != NULL;
    }
    CU_ASSERT_EQUAL(removed, (size_t)(CHAIN_NODES / 3));
    CU_ASSERT(with_channels <= 6);
    rd_result_fini(&r);
    rd_tensor_fini(&x);
    rd_tensor_fini(&y);
    rd_tensor_fini(&ys);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

static void expect_limit(size_t max_nodes, size_t max_values, rd_status want, const char *msg)
{
    size_t len;
    void *buf = chain_bytes(10, &len);
    rd_load_options lo = {.max_nodes = max_nodes, .max_values = max_values};
    rd_model *m = NULL;
    rd_error err = {0};
    rd_status st = rd_model_load_mem(buf, len, "chain10.onnx", NULL, &lo, &m, &err);
    free(buf);
    CU_ASSERT_EQUAL(st, want);
    if (msg && !strstr(err.msg, msg))
        fprintf(stderr, "\n  message '%s' lacks '%s'\n", err.msg, msg);
    CU_ASSERT(!msg || strstr(err.msg, msg) != NULL);
    rd_model_destroy(m);
}

static void test_limits(void)
{
    expect_limit(10, 12, RD_OK, NULL); /* 10 nodes, 12 names (x, c and 10 outputs): exactly at both limits */
    expect_limit(9, 0, RD_E_LIMIT, "chain10.onnx: the graph has 10 nodes; at most 9 are loaded (RD_MAX_NODES");
    expect_limit(0, 11, RD_E_LIMIT, "tensor 'y' is one name too many: a model may name at most 11 tensors");
    expect_limit(0, 5, RD_E_LIMIT, "tensor 'block_3/out' is one name too many");
    /* options only lower the limits */
    expect_limit((size_t)RD_MAX_NODES + 1, (size_t)RD_MAX_VALUES + 1, RD_OK, NULL);
}

RD_TEST_REGISTER(register_graph_scale)
{
    RD_SUITE("graph_scale", {"100k-node chain: load, run, simulate, analyse", test_chain_100k},
             {"node and tensor-name limits", test_limits});
}

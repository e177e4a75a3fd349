/*
 * test_graph_symbolic.c: a model whose batch size is symbolic (super_resolution's `batch_size`)
 * keeps the types and ranks of its activations known at load time, so the int8 simulation
 * calibrates every one of them; a rank that depends on the dims (Squeeze without axes) stays
 * unknown.
 */
#include "calibrated_sim.h"
#include "onnx_test_util.h"

/* x[N,3,2,2] -> Conv 1x1 (2 channels) -> Relu -> Squeeze (no axes) -> y */
static rd_model *load_symbolic_model(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(7, 11);
    const int64_t xd[4] = {-1, 3, 2, 2};
    const char *const xp[4] = {"N", NULL, NULL, NULL};
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, xd, xp);
    rd_tensor w;
    const int64_t wd[4] = {2, 3, 1, 1};
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&w, RD_DT_F32, 4, wd, NULL), RD_OK);
    for (int i = 0; i < 6; i++)
        ((float *)w.data)[i] = (float)(i - 2) * 0.5f;
    rd_onnx_add_initializer(b, "w", &w, RD_ONNX_RAW);
    rd_tensor_fini(&w);
    rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w"}, 2, (const char *const[]){"c"}, 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"c"}, 1, (const char *const[]){"r"}, 1);
    rd_onnx_add_node(b, "Squeeze", "sq", (const char *const[]){"r"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    rd_model *m = ot_model_load(b, "symbolic.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    return m;
}

static void test_types_known_dims_unknown(void)
{
    rd_model *m = load_symbolic_model();
    int c = sim_model_find(m, "c"), r = sim_model_find(m, "r"), y = sim_model_find(m, "y");
    CU_ASSERT_EQUAL(m->values[c].dtype, RD_DT_F32);
    CU_ASSERT_EQUAL(m->values[c].rank, 4);
    CU_ASSERT_EQUAL(m->values[c].dims[0], -1); /* the batch stays unknown */
    CU_ASSERT_EQUAL(m->values[c].dims[1], 2);
    CU_ASSERT_EQUAL(m->values[r].dtype, RD_DT_F32);
    CU_ASSERT_EQUAL(m->values[r].rank, 4);
    /* Squeeze without axes: rank 3 for a batch of 1, 4 for 2: not known before run time */
    CU_ASSERT_EQUAL(m->values[y].rank, -1);
    rd_model_destroy(m);
}

static rd_status one_sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    (void)user;
    const int64_t d[4] = {1, 3, 2, 2};
    rd_status st = rd_tensor_alloc(&inputs[0], RD_DT_F32, 4, d, err);
    for (int i = 0; st == RD_OK && i < 12; i++)
        ((float *)inputs[0].data)[i] = (float)((i * 7 + (int)k) % 5) - 1.5f;
    return st;
}

static void test_int8_calibrates_every_activation(void)
{
    rd_model *m = load_symbolic_model();
    rd_sim *s = rd_test_sim(m, RD_PREC_INT8);
    rd_error err;
    rd_calib_options co = {.method = RD_CALIB_NORMAL, .threads = 1};
    CU_ASSERT_EQUAL_FATAL(rd_calibrate(s, one_sample, NULL, 2, &co, &err), RD_OK);
    rd_sim_tensor t;
    CU_ASSERT_EQUAL_FATAL(rd_sim_tensor_get(s, "r", &t, &err), RD_OK);
    CU_ASSERT_TRUE(t.materialized);
    CU_ASSERT_TRUE(t.quantized);
    rd_tensor in;
    CU_ASSERT_EQUAL_FATAL(one_sample(NULL, 0, &in, &err), RD_OK);
    rd_tensor out = {0};
    rd_status st = rd_sim_run(s, &in, 1, NULL, &out, 1, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n  %s\n", err.msg);
    CU_ASSERT_EQUAL(st, RD_OK);
    CU_ASSERT_EQUAL(out.rank, 3);
    rd_tensor_fini(&out);
    rd_tensor_fini(&in);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

/* A node wider than any fixed array: Concat of 40 inputs (x read 40 times, then a Relu so nothing folds),
   at a fixed and at a symbolic batch: loads, infers [B,40,2] and runs. */
static void check_wide_concat(int64_t batch)
{
    enum { N_IN = 40 };
    rd_onnx_builder *b = rd_onnx_builder_create(7, 13);
    const int64_t xd[3] = {batch, 1, 2};
    const char *const xp[3] = {"N", NULL, NULL};
    rd_onnx_add_input(b, "x", RD_DT_F32, 3, xd, batch < 0 ? xp : NULL);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"x"}, 1, (const char *const[]){"r"}, 1);
    const char *ins[N_IN];
    for (int i = 0; i < N_IN; i++)
        ins[i] = "r";
    rd_onnx_attr_int(rd_onnx_add_node(b, "Concat", "cat", ins, N_IN, (const char *const[]){"y"}, 1), "axis", 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    rd_model *m = ot_model_load(b, "wide.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    int y = sim_model_find(m, "y");
    CU_ASSERT_EQUAL(m->values[y].dtype, RD_DT_F32);
    CU_ASSERT_EQUAL(m->values[y].rank, 3);
    CU_ASSERT_EQUAL(m->values[y].dims[0], batch);
    CU_ASSERT_EQUAL(m->values[y].dims[1], N_IN);
    rd_tensor x, out;
    const int64_t d[3] = {1, 1, 2};
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&x, RD_DT_F32, 3, d, NULL), RD_OK);
    ((float *)x.data)[0] = -1.0f;
    ((float *)x.data)[1] = 3.0f;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_model_run(m, &x, 1, NULL, &out, 1, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_tensor_numel(&out), 2 * N_IN);
    for (int i = 0; i < N_IN; i++) {
        CU_ASSERT_EQUAL(((float *)out.data)[2 * i], 0.0f);
        CU_ASSERT_EQUAL(((float *)out.data)[2 * i + 1], 3.0f);
    }
    rd_tensor_fini(&out);
    rd_tensor_fini(&x);
    rd_model_destroy(m);
}

static void test_wide_node(void)
{
    check_wide_concat(1);
    check_wide_concat(-1);
    /* beyond the limit: refused at load, saying how many and what the limit is */
    enum { TOO_MANY = 300 };
    rd_onnx_builder *b = rd_onnx_builder_create(7, 13);
    const int64_t xd[3] = {1, 1, 2};
    rd_onnx_add_input(b, "x", RD_DT_F32, 3, xd, NULL);
    const char *ins[TOO_MANY];
    for (int i = 0; i < TOO_MANY; i++)
        ins[i] = "x";
    rd_onnx_attr_int(rd_onnx_add_node(b, "Concat", "cat", ins, TOO_MANY, (const char *const[]){"y"}, 1), "axis", 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    void *buf = NULL;
    size_t len = 0;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_write(b, &buf, &len, &err), RD_OK);
    rd_onnx_builder_destroy(b);
    rd_model *m = NULL;
    OT_ASSERT_ERR(rd_model_load_mem(buf, len, "too_wide.onnx", NULL, NULL, &m, &err), &err, RD_E_UNSUPPORTED,
                  "node 'cat' (Concat) has 300 inputs", "at most 256");
    CU_ASSERT_PTR_NULL(m);
    free(buf);
}

RD_TEST_REGISTER(register_graph_symbolic)
{
    RD_SUITE("graph_symbolic", {"types known, dims unknown", test_types_known_dims_unknown},
             {"a node of 40 inputs", test_wide_node},
             {"int8 calibrates every activation", test_int8_calibrates_every_activation});
}

/*
 * test_graph_symbolic.c: a model whose batch size is symbolic (super_resolution's `batch_size`)
 * keeps the types and ranks of its activations known at load time, so the int8 simulation
 * calibrates every one of them; a rank that depends on the dims (Squeeze without axes) stays
 * unknown.
 */
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
    rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w"}, 2,
                     (const char *const[]){"c"}, 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"c"}, 1, (const char *const[]){"r"},
                     1);
    rd_onnx_add_node(b, "Squeeze", "sq", (const char *const[]){"r"}, 1, (const char *const[]){"y"},
                     1);
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
    rd_sim_options so = {.precision = RD_PREC_INT8, .optimization_level = 3};
    rd_sim *s = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
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
    if (st != RD_OK) fprintf(stderr, "\n  %s\n", err.msg);
    CU_ASSERT_EQUAL(st, RD_OK);
    CU_ASSERT_EQUAL(out.rank, 3);
    rd_tensor_fini(&out);
    rd_tensor_fini(&in);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

RD_TEST_REGISTER(register_graph_symbolic)
{
    RD_SUITE("graph_symbolic", {"types known, dims unknown", test_types_known_dims_unknown},
             {"int8 calibrates every activation", test_int8_calibrates_every_activation});
}

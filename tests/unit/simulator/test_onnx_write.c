/* test_onnx_write.c: the ONNX builder (sticky errors, save) and TensorProto write/parse round trips. */
#include "onnx_test_util.h"

static void test_sticky_errors(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_tensor s = {.dtype = RD_DT_STRING, .rank = 0};
    CU_ASSERT_EQUAL(rd_onnx_add_initializer(b, "s", &s, RD_ONNX_RAW), RD_E_UNSUPPORTED);
    /* later calls keep the first error and NULL nodes are accepted */
    rd_onnx_node *n = rd_onnx_add_node(b, NULL, "bad", NULL, 0, NULL, 0);
    CU_ASSERT_PTR_NULL(n);
    CU_ASSERT_EQUAL(rd_onnx_attr_int(n, "a", 1), RD_E_INVAL);
    rd_error err;
    void *buf = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL(rd_onnx_builder_write(b, &buf, &len, &err), RD_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "onnx builder"));
    CU_ASSERT_PTR_NULL(buf);
    rd_onnx_builder_destroy(b);
    CU_ASSERT_EQUAL(rd_onnx_builder_write(NULL, &buf, &len, &err), RD_E_INVAL);
    rd_onnx_builder_destroy(NULL);
}

static void test_save_and_load_file(void)
{
    char *dir = rd_test_tmpdir("onnx_write");
    char path[4200];
    snprintf(path, sizeof path, "%s/relu.onnx", dir);
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){1, 4}, NULL);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"x"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 2, (const int64_t[]){1, 4}, NULL);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_save(b, path, &err), RD_OK);
    rd_onnx_builder_destroy(b);

    rd_model *m = NULL;
    rd_load_options opt = {.allow_unsupported_ops = true}; /* the test must not depend on Relu */
    rd_status st = rd_model_load(path, &opt, &m, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n  %s\n", err.msg);
    CU_ASSERT_EQUAL(st, RD_OK);
    if (m) {
        CU_ASSERT_EQUAL(rd_model_node_count(m), 1);
        char producer[64];
        snprintf(producer, sizeof producer, "rknn-diag %s", rd_version());
        CU_ASSERT_STRING_EQUAL(rd_model_producer(m), producer);
        rd_model_destroy(m);
    }

    snprintf(path, sizeof path, "%s/no/such/dir/x.onnx", dir);
    b = rd_onnx_builder_create(8, 13);
    OT_ASSERT_ERR(rd_onnx_builder_save(b, path, &err), &err, RD_E_IO, "no/such/dir");
    rd_onnx_builder_destroy(b);
    free(dir);
}

static void test_tensorproto_round_trip(void)
{
    rd_tensor t;
    const int64_t d[3] = {2, 1, 3};
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_I16, 3, d, NULL), RD_OK);
    for (int i = 0; i < 6; i++)
        ((int16_t *)t.data)[i] = (int16_t)(i * -1000);
    void *buf;
    size_t len;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_tensorproto_write(&t, "input_0", &buf, &len, &err), RD_OK);
    rd_tensor back;
    char *name = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_tensorproto_parse(buf, len, "mem.pb", &back, &name, &err), RD_OK);
    CU_ASSERT_STRING_EQUAL(name, "input_0");
    CU_ASSERT_EQUAL(back.dtype, RD_DT_I16);
    CU_ASSERT_EQUAL(back.rank, 3);
    CU_ASSERT_EQUAL(back.dims[2], 3);
    CU_ASSERT_EQUAL(memcmp(back.data, t.data, 12), 0);
    rd_tensor_fini(&back);
    free(name);

    /* truncated: a clear parse error naming the input */
    rd_status st = rd_tensorproto_parse(buf, len - 2, "mem.pb", &back, &name, &err);
    OT_ASSERT_ERR(st, &err, RD_E_PARSE, "mem.pb", "not a valid ONNX protobuf");
    CU_ASSERT_PTR_NULL(name);
    free(buf);

    /* a scalar and an empty tensor */
    rd_tensor sc, empty;
    rd_tensor_alloc(&sc, RD_DT_F64, 0, NULL, NULL);
    *(double *)sc.data = 3.25;
    CU_ASSERT_EQUAL_FATAL(rd_tensorproto_write(&sc, NULL, &buf, &len, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_tensorproto_parse(buf, len, "sc.pb", &back, NULL, &err), RD_OK);
    CU_ASSERT_EQUAL(back.rank, 0);
    CU_ASSERT_EQUAL(*(double *)back.data, 3.25);
    rd_tensor_fini(&back);
    free(buf);
    rd_tensor_alloc(&empty, RD_DT_F32, 2, (const int64_t[]){0, 5}, NULL);
    CU_ASSERT_EQUAL_FATAL(rd_tensorproto_write(&empty, "e", &buf, &len, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_tensorproto_parse(buf, len, "e.pb", &back, NULL, &err), RD_OK);
    CU_ASSERT_EQUAL(back.dims[1], 5);
    CU_ASSERT_PTR_NULL(back.data);
    free(buf);
    rd_tensor_fini(&sc);

    /* save and load through a file */
    char *dir = rd_test_tmpdir("onnx_pb");
    char path[4200];
    snprintf(path, sizeof path, "%s/t.pb", dir);
    CU_ASSERT_EQUAL(rd_tensorproto_save(path, &t, "x", &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_tensorproto_load(path, &back, NULL, &err), RD_OK);
    CU_ASSERT_EQUAL(memcmp(back.data, t.data, 12), 0);
    rd_tensor_fini(&back);
    snprintf(path, sizeof path, "%s/missing.pb", dir);
    st = rd_tensorproto_load(path, &back, NULL, &err);
    OT_ASSERT_ERR(st, &err, RD_E_NOTFOUND, "missing.pb");
    free(dir);
    rd_tensor_fini(&t);
}

/* A parsed model written back and parsed again keeps nodes, attributes, constants and io. */
static void test_model_write_round_trip(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(3, 11);
    rd_onnx_add_opset(b, "com.microsoft", 1);
    rd_tensor w;
    rd_tensor_alloc(&w, RD_DT_I8, 1, (const int64_t[]){3}, NULL);
    ((int8_t *)w.data)[2] = -5;
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){-1, 3}, (const char *const[]){"N", NULL});
    rd_onnx_add_input(b, "w", RD_DT_I8, 1, (const int64_t[]){3}, NULL);
    rd_onnx_add_initializer(b, "w", &w, RD_ONNX_TYPED);
    rd_onnx_attr_float(rd_onnx_add_node(b, "Constant", "k", NULL, 0, (const char *const[]){"k"}, 1), "value_float",
                       4.0f);
    rd_onnx_node *n =
        rd_onnx_add_node(b, "QFoo", "q", (const char *const[]){"x", NULL, "w", "k"}, 4, (const char *const[]){"y"}, 1);
    rd_onnx_node_set_domain(n, "com.microsoft");
    rd_onnx_attr_strings(n, "names", (const char *const[]){"p", "q"}, 2);
    rd_onnx_attr_tensor(n, "t", &w, RD_ONNX_RAW);
    rd_onnx_attr_ints(n, "axes", (const int64_t[]){0, 1}, 2);
    rd_onnx_add_output(b, "y", RD_DT_F32, 2, (const int64_t[]){-1, 3}, (const char *const[]){"N", NULL});
    rd_model m1, m2;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(ot_load(b, NULL, &m1, &err), RD_OK);
    void *buf = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(rd_onnx_model_write(&m1, &buf, &len, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(ot_parse(buf, len, NULL, &m2, &err), RD_OK);
    free(buf);
    CU_ASSERT_EQUAL(m2.ir_version, 3);
    CU_ASSERT_EQUAL(m2.n_opsets, 2);
    CU_ASSERT_EQUAL(m2.n_inputs, 1);
    CU_ASSERT_EQUAL(m2.n_outputs, 1);
    CU_ASSERT_EQUAL_FATAL(m2.n_nodes, 1);
    const sim_node *sn = &m2.nodes[0];
    CU_ASSERT_STRING_EQUAL(sn->op_type, "QFoo");
    CU_ASSERT_STRING_EQUAL(sn->domain, "com.microsoft");
    CU_ASSERT_EQUAL(sn->opset, 1);
    CU_ASSERT_EQUAL(sn->n_in, 4);
    CU_ASSERT_EQUAL(sn->in[1], -1);
    CU_ASSERT_EQUAL_FATAL(sn->n_attr, 3);
    CU_ASSERT_STRING_EQUAL(sn->attrs[0].strings[1], "q");
    CU_ASSERT_EQUAL(((int8_t *)sn->attrs[1].t.data)[2], -5);
    CU_ASSERT_EQUAL(sn->attrs[2].ints[1], 1);
    const sim_value *k = &m2.values[sim_model_find(&m2, "k")];
    CU_ASSERT_FALSE(k->is_initializer);
    CU_ASSERT_EQUAL(*(float *)k->konst->data, 4.0f);
    const sim_value *wv = &m2.values[sim_model_find(&m2, "w")];
    CU_ASSERT_TRUE(wv->is_initializer);
    CU_ASSERT_EQUAL(((int8_t *)wv->konst->data)[2], -5);
    const sim_value *x = &m2.values[m2.inputs[0]];
    CU_ASSERT_STRING_EQUAL(x->dim_params[0], "N");
    CU_ASSERT_EQUAL(x->dims[1], 3);
    rd_tensor_fini(&w);
    sim_model_free_contents(&m1);
    sim_model_free_contents(&m2);
}

RD_TEST_REGISTER(register_onnx_write)
{
    RD_SUITE("onnx_write", {"sticky errors", test_sticky_errors}, {"save and load file", test_save_and_load_file},
             {"TensorProto round trip", test_tensorproto_round_trip},
             {"model write round trip", test_model_write_round_trip});
}

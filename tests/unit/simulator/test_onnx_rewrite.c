/* test_onnx_rewrite.c: rd_onnx_model_rewrite: replaced constants, cuts, and the errors of bad requests. */
#include "onnx_test_util.h"

/* x [1,4] -> Mul(w) = a -> Relu = b -> Add(c) = y ; c is a constant [4]. */
static rd_model *chain_model(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){1, 4}, NULL);
    rd_tensor w, c;
    rd_tensor_alloc(&w, RD_DT_F32, 1, (const int64_t[]){4}, NULL);
    rd_tensor_alloc(&c, RD_DT_F32, 1, (const int64_t[]){4}, NULL);
    for (int i = 0; i < 4; i++) {
        ((float *)w.data)[i] = (float)(i + 1);
        ((float *)c.data)[i] = 0.5f;
    }
    rd_onnx_add_initializer(b, "w", &w, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "c", &c, RD_ONNX_RAW);
    rd_onnx_add_node(b, "Mul", "mul", (const char *const[]){"x", "w"}, 2, (const char *const[]){"a"}, 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"a"}, 1, (const char *const[]){"b"}, 1);
    rd_onnx_add_node(b, "Add", "add", (const char *const[]){"b", "c"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 2, (const int64_t[]){1, 4}, NULL);
    void *buf = NULL;
    size_t len = 0;
    rd_model *m = NULL;
    CU_ASSERT_EQUAL(rd_onnx_builder_write(b, &buf, &len, NULL), RD_OK);
    CU_ASSERT_EQUAL(rd_model_load_mem(buf, len, "chain.onnx", NULL, NULL, &m, NULL), RD_OK);
    free(buf);
    rd_onnx_builder_destroy(b);
    rd_tensor_fini(&w);
    rd_tensor_fini(&c);
    return m;
}

static rd_model *rewrite(const rd_model *m, const rd_onnx_rewrite *rw, rd_status expect, const char *msg_part)
{
    void *buf = NULL;
    size_t len = 0;
    rd_error err = {0};
    rd_status st = rd_onnx_model_rewrite(m, rw, &buf, &len, &err);
    CU_ASSERT_EQUAL(st, expect);
    if (msg_part)
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg_part));
    rd_model *out = NULL;
    if (st == RD_OK)
        CU_ASSERT_EQUAL(rd_model_load_mem(buf, len, "rewritten.onnx", NULL, NULL, &out, NULL), RD_OK);
    free(buf);
    return out;
}

static void test_null_is_model_write(void)
{
    rd_model *m = chain_model();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    void *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    CU_ASSERT_EQUAL(rd_onnx_model_write(m, &a, &na, NULL), RD_OK);
    CU_ASSERT_EQUAL(rd_onnx_model_rewrite(m, &(rd_onnx_rewrite){0}, &b, &nb, NULL), RD_OK);
    CU_ASSERT(na == nb && memcmp(a, b, na) == 0);
    free(a);
    free(b);
    rd_model_destroy(m);
}

static void test_replace_and_cut(void)
{
    rd_model *m = chain_model();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    rd_tensor c2;
    rd_tensor_alloc(&c2, RD_DT_F32, 1, (const int64_t[]){4}, NULL);
    const char *names[1] = {"c"};
    rd_onnx_rewrite rw = {.replace_names = names, .replace_tensors = &c2, .n_replace = 1, .drop_shapes = true};
    rd_model *r = rewrite(m, &rw, RD_OK, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    const rd_tensor *c = rd_model_constant(r, (size_t)rd_model_find_value(r, "c"));
    CU_ASSERT_EQUAL(((const float *)c->data)[0], 0.0f);
    rd_model_destroy(r);

    /* cut a..b: one Relu, input a [1,4] inferred, output b; no constants left */
    const char *in[1] = {"a"}, *out[1] = {"b"};
    r = rewrite(m, &(rd_onnx_rewrite){.inputs = in, .n_inputs = 1, .outputs = out, .n_outputs = 1}, RD_OK, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(rd_model_node_count(r), 1);
    rd_value_info vi;
    rd_model_value(r, (size_t)rd_model_input(r, 0), &vi);
    CU_ASSERT_STRING_EQUAL(vi.name, "a");
    CU_ASSERT_EQUAL(vi.rank, 2);
    CU_ASSERT_EQUAL(vi.dims[1], 4);
    CU_ASSERT_EQUAL(rd_model_find_value(r, "w"), -1);
    rd_model_destroy(r);

    /* outputs only: the original input stays */
    r = rewrite(m, &(rd_onnx_rewrite){.outputs = out, .n_outputs = 1}, RD_OK, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(rd_model_node_count(r), 2);
    CU_ASSERT_EQUAL(rd_model_input_count(r), 1);
    rd_model_destroy(r);

    /* errors */
    const char *bad[1] = {"nope"}, *konst[1] = {"w"}, *mid[1] = {"b"};
    rewrite(m, &(rd_onnx_rewrite){.outputs = bad, .n_outputs = 1}, RD_E_NOTFOUND, "'nope'");
    rewrite(m, &(rd_onnx_rewrite){.inputs = konst, .n_inputs = 1}, RD_E_INVAL, "constant");
    /* input b, output y needs b only: fine; input b with output b's producer's input a is not computable */
    rewrite(m, &(rd_onnx_rewrite){.inputs = mid, .n_inputs = 1, .outputs = in, .n_outputs = 1}, RD_E_INVAL,
            "neither a cut input");
    const char *not_const[1] = {"a"};
    rewrite(m, &(rd_onnx_rewrite){.replace_names = not_const, .replace_tensors = &c2, .n_replace = 1}, RD_E_NOTFOUND,
            "not an initializer");
    rd_tensor_fini(&c2);
    rd_model_destroy(m);
}

RD_TEST_REGISTER(register_onnx_rewrite)
{
    RD_SUITE("onnx_rewrite", {"no changes: model_write's bytes", test_null_is_model_write},
             {"replace and cut", test_replace_and_cut});
}

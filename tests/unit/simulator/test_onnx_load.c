/* test_onnx_load.c: sim_onnx_parse on models made by the builder: values, nodes, constants, inputs. */
#include "onnx_test_util.h"

#include <sys/stat.h>

static const int64_t dims23[2] = {2, 3};

/* A 2x3 tensor of dtype dt holding 0..5 (negated for signed types, bits for halves). */
static void make_tensor(rd_tensor *t, rd_dtype dt)
{
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(t, dt, 2, dims23, NULL), RD_OK);
    for (int i = 0; i < 6; i++) {
        double v = rd_dtype_get(dt)->is_signed ? -1.5 * i : i;
        if (dt == RD_DT_BOOL)
            v = i & 1;
        sim_set_f64(t, i, v);
    }
}

static void test_basic_model(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_set_producer(b, "pytorch", "2.1");
    rd_onnx_add_opset(b, "com.microsoft", 1);
    const int64_t xd[2] = {-1, 3};
    const char *const xp[2] = {"N", NULL};
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, xd, xp);
    rd_tensor w;
    make_tensor(&w, RD_DT_F32);
    rd_onnx_add_initializer(b, "w", &w, RD_ONNX_RAW);
    rd_onnx_add_node(b, "MatMul", "mm", (const char *const[]){"x", "w"}, 2, (const char *const[]){"h"}, 1);
    rd_onnx_node *n =
        rd_onnx_add_node(b, "FusedGelu", NULL, (const char *const[]){"h", NULL}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_node_set_domain(n, "com.microsoft");
    const int64_t yd[2] = {-1, -1};
    rd_onnx_add_output(b, "y", RD_DT_F32, 2, yd, NULL);
    rd_onnx_add_value_info(b, "h", RD_DT_F32, 2, (const int64_t[]){5, 3}, NULL);

    rd_model m;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(ot_load(b, NULL, &m, &err), RD_OK);
    CU_ASSERT_EQUAL(m.ir_version, 8);
    CU_ASSERT_STRING_EQUAL(m.producer, "pytorch 2.1");
    CU_ASSERT_EQUAL(m.n_opsets, 2);
    CU_ASSERT_EQUAL(m.n_nodes, 2);
    CU_ASSERT_STRING_EQUAL(m.nodes[0].name, "mm");
    CU_ASSERT_STRING_EQUAL(m.nodes[0].op_type, "MatMul");
    CU_ASSERT_STRING_EQUAL(m.nodes[0].domain, "");
    CU_ASSERT_EQUAL(m.nodes[0].opset, 13);
    CU_ASSERT_PTR_NULL(m.nodes[0].def);
    CU_ASSERT_STRING_EQUAL(m.nodes[1].name, "");
    CU_ASSERT_STRING_EQUAL(m.nodes[1].domain, "com.microsoft");
    CU_ASSERT_EQUAL(m.nodes[1].opset, 1);
    CU_ASSERT_EQUAL(m.nodes[1].n_in, 2);
    CU_ASSERT_EQUAL(m.nodes[1].in[1], -1);
    int x = sim_model_find(&m, "x"), wv = sim_model_find(&m, "w"), h = sim_model_find(&m, "h");
    int y = sim_model_find(&m, "y");
    CU_ASSERT_EQUAL(m.nodes[0].in[0], x);
    CU_ASSERT_EQUAL(m.nodes[0].in[1], wv);
    CU_ASSERT_EQUAL(m.nodes[0].out[0], h);
    CU_ASSERT_EQUAL(m.nodes[1].out[0], y);
    CU_ASSERT_EQUAL_FATAL(m.n_inputs, 1);
    CU_ASSERT_EQUAL(m.inputs[0], x);
    CU_ASSERT_TRUE(m.values[x].is_graph_input);
    CU_ASSERT_EQUAL(m.values[x].dtype, RD_DT_F32);
    CU_ASSERT_EQUAL(m.values[x].rank, 2);
    CU_ASSERT_EQUAL(m.values[x].dims[0], -1);
    CU_ASSERT_STRING_EQUAL(m.values[x].dim_params[0], "N");
    CU_ASSERT_EQUAL(m.values[x].dims[1], 3);
    CU_ASSERT_PTR_NULL(m.values[x].dim_params[1]);
    CU_ASSERT_EQUAL_FATAL(m.n_outputs, 1);
    CU_ASSERT_EQUAL(m.outputs[0], y);
    CU_ASSERT_TRUE(m.values[y].is_graph_output);
    CU_ASSERT_EQUAL(m.values[y].dims[1], -1);
    CU_ASSERT_EQUAL(m.values[h].rank, 2);
    CU_ASSERT_EQUAL(m.values[h].dims[0], 5);
    CU_ASSERT_TRUE(m.values[wv].is_initializer);
    CU_ASSERT_FALSE(m.values[wv].is_graph_input);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m.values[wv].konst);
    CU_ASSERT_EQUAL(memcmp(m.values[wv].konst->data, w.data, 24), 0);
    CU_ASSERT_EQUAL(m.values[wv].rank, 2);
    rd_tensor_fini(&w);
    sim_model_free_contents(&m);
}

/* Every supported dtype in raw_data and in its typed field loads back bit for bit. */
static void test_initializer_dtypes_and_storage(void)
{
    static const rd_dtype dts[] = {RD_DT_F32,  RD_DT_U8,  RD_DT_I8,  RD_DT_U16, RD_DT_I16, RD_DT_I32, RD_DT_I64,
                                   RD_DT_BOOL, RD_DT_F16, RD_DT_F64, RD_DT_U32, RD_DT_U64, RD_DT_BF16};
    const size_t n = sizeof dts / sizeof dts[0];
    rd_onnx_builder *b = rd_onnx_builder_create(8, 17);
    rd_tensor ts[sizeof dts / sizeof dts[0]];
    char name[64];
    for (size_t i = 0; i < n; i++) {
        make_tensor(&ts[i], dts[i]);
        for (int s = 0; s < 2; s++) {
            snprintf(name, sizeof name, "%s_%s", rd_dtype_name(dts[i]), s ? "typed" : "raw");
            CU_ASSERT_EQUAL(rd_onnx_add_initializer(b, name, &ts[i], s ? RD_ONNX_TYPED : RD_ONNX_RAW), RD_OK);
        }
    }
    rd_model m;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(ot_load(b, NULL, &m, &err), RD_OK);
    for (size_t i = 0; i < n; i++) {
        for (int s = 0; s < 2; s++) {
            snprintf(name, sizeof name, "%s_%s", rd_dtype_name(dts[i]), s ? "typed" : "raw");
            int v = sim_model_find(&m, name);
            CU_ASSERT_FATAL(v >= 0);
            const rd_tensor *k = m.values[v].konst;
            CU_ASSERT_PTR_NOT_NULL_FATAL(k);
            CU_ASSERT_EQUAL(k->dtype, dts[i]);
            CU_ASSERT_EQUAL(k->rank, 2);
            CU_ASSERT_EQUAL(k->dims[1], 3);
            if (memcmp(k->data, ts[i].data, rd_tensor_nbytes(&ts[i])) != 0) {
                fprintf(stderr, "\n  %s differs\n", name);
                CU_FAIL("initializer data differs");
            }
        }
        rd_tensor_fini(&ts[i]);
    }
    sim_model_free_contents(&m);
}

/* float16 in int32_data: the bits sit in the low half of each int32. */
static void test_float16_typed_bits(void)
{
    rd_tensor t;
    const int64_t d[1] = {3};
    rd_tensor_alloc(&t, RD_DT_F16, 1, d, NULL);
    uint16_t *h = t.data;
    h[0] = rd_f32_to_f16(1.5f);
    h[1] = rd_f32_to_f16(-65504.0f); /* 0xfbff: the sign bit set must not turn into a negative int */
    h[2] = 0x7e00;                   /* NaN */
    rd_onnx_builder *b = rd_onnx_builder_create(8, 17);
    rd_onnx_add_initializer(b, "h", &t, RD_ONNX_TYPED);
    rd_model m;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(ot_load(b, NULL, &m, &err), RD_OK);
    const rd_tensor *k = m.values[sim_model_find(&m, "h")].konst;
    CU_ASSERT_EQUAL(rd_f16_to_f32(((uint16_t *)k->data)[0]), 1.5f);
    CU_ASSERT_EQUAL(((uint16_t *)k->data)[1], 0xfbff);
    CU_ASSERT_EQUAL(((uint16_t *)k->data)[2], 0x7e00);
    rd_tensor_fini(&t);
    sim_model_free_contents(&m);
}

/* IR 3: every initializer is also listed as an input; only the others are real inputs. */
static void test_ir3_inputs_that_are_initializers(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(3, 8);
    rd_tensor w;
    make_tensor(&w, RD_DT_F32);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, dims23, NULL);
    rd_onnx_add_input(b, "w", RD_DT_F32, 2, dims23, NULL);
    rd_onnx_add_initializer(b, "w", &w, RD_ONNX_TYPED);
    rd_onnx_add_node(b, "Add", "add", (const char *const[]){"x", "w"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 2, dims23, NULL);
    rd_model m;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(ot_load(b, NULL, &m, &err), RD_OK);
    CU_ASSERT_EQUAL(m.ir_version, 3);
    CU_ASSERT_EQUAL_FATAL(m.n_inputs, 1);
    CU_ASSERT_STRING_EQUAL(m.values[m.inputs[0]].name, "x");
    int wv = sim_model_find(&m, "w");
    CU_ASSERT_FALSE(m.values[wv].is_graph_input);
    CU_ASSERT_TRUE(m.values[wv].is_initializer);
    rd_tensor_fini(&w);
    sim_model_free_contents(&m);
}

/* No opset_import (IR 1/2 files) means opset 1 of the default domain. */
static void test_no_opset_import(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(2, 0);
    rd_onnx_add_node(b, "Relu", "r", (const char *const[]){"x"}, 1, (const char *const[]){"y"}, 1);
    rd_model m;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(ot_load(b, NULL, &m, &err), RD_OK);
    CU_ASSERT_EQUAL(m.n_opsets, 1);
    CU_ASSERT_EQUAL(m.nodes[0].opset, 1);
    sim_model_free_contents(&m);
}

static void test_constant_nodes(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_tensor t;
    make_tensor(&t, RD_DT_I32);
    rd_onnx_add_opset(b, "ai.onnx", 13); /* the same domain under its long name: normalised, no clash */
    rd_onnx_attr_tensor(rd_onnx_add_node(b, "Constant", "c0", NULL, 0, (const char *const[]){"c_tensor"}, 1), "value",
                        &t, RD_ONNX_RAW);
    rd_onnx_attr_float(rd_onnx_add_node(b, "Constant", "c1", NULL, 0, (const char *const[]){"c_float"}, 1),
                       "value_float", 2.5f);
    rd_onnx_attr_floats(rd_onnx_add_node(b, "Constant", "c2", NULL, 0, (const char *const[]){"c_floats"}, 1),
                        "value_floats", (const float[]){1, 2, 3}, 3);
    rd_onnx_attr_int(rd_onnx_add_node(b, "Constant", "c3", NULL, 0, (const char *const[]){"c_int"}, 1), "value_int",
                     -7);
    rd_onnx_attr_ints(rd_onnx_add_node(b, "Constant", "c4", NULL, 0, (const char *const[]){"c_ints"}, 1), "value_ints",
                      (const int64_t[]){4, 5}, 2);
    rd_onnx_add_node(b, "Sum", "sum", (const char *const[]){"c_tensor", "c_float"}, 2, (const char *const[]){"y"}, 1);
    rd_model m;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(ot_load(b, NULL, &m, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(m.n_nodes, 1); /* the Constant nodes are gone */
    CU_ASSERT_STRING_EQUAL(m.nodes[0].op_type, "Sum");
    const sim_value *v = &m.values[sim_model_find(&m, "c_tensor")];
    CU_ASSERT_FALSE(v->is_initializer);
    CU_ASSERT_EQUAL(v->konst->dtype, RD_DT_I32);
    CU_ASSERT_EQUAL(memcmp(v->konst->data, t.data, 24), 0);
    v = &m.values[sim_model_find(&m, "c_float")];
    CU_ASSERT_EQUAL(v->konst->rank, 0);
    CU_ASSERT_EQUAL(*(float *)v->konst->data, 2.5f);
    v = &m.values[sim_model_find(&m, "c_floats")];
    CU_ASSERT_EQUAL(v->konst->rank, 1);
    CU_ASSERT_EQUAL(v->konst->dims[0], 3);
    CU_ASSERT_EQUAL(((float *)v->konst->data)[2], 3.0f);
    v = &m.values[sim_model_find(&m, "c_int")];
    CU_ASSERT_EQUAL(v->konst->dtype, RD_DT_I64);
    CU_ASSERT_EQUAL(*(int64_t *)v->konst->data, -7);
    v = &m.values[sim_model_find(&m, "c_ints")];
    CU_ASSERT_EQUAL(v->konst->dims[0], 2);
    CU_ASSERT_EQUAL(((int64_t *)v->konst->data)[1], 5);
    rd_tensor_fini(&t);
    sim_model_free_contents(&m);
}

static void test_constant_unsupported_forms(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_attr_string(rd_onnx_add_node(b, "Constant", "cs", NULL, 0, (const char *const[]){"s"}, 1), "value_string",
                        "hello");
    rd_model m;
    rd_error err;
    rd_status st = ot_load(b, NULL, &m, &err);
    OT_ASSERT_ERR(st, &err, RD_E_UNSUPPORTED, "test.onnx", "node 'cs'", "value_string", "unsupported dtype");
    sim_model_free_contents(&m);

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_node *n = rd_onnx_add_node(b, "Constant", "c2", NULL, 0, (const char *const[]){"s"}, 1);
    rd_onnx_attr_int(n, "value_int", 1);
    rd_onnx_attr_float(n, "value_float", 1);
    st = ot_load(b, NULL, &m, &err);
    OT_ASSERT_ERR(st, &err, RD_E_PARSE, "node 'c2'", "exactly one");
    sim_model_free_contents(&m);
}

/* The graph pass orders nodes; the loader keeps the file's order. */
static void test_nodes_out_of_order_kept(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 1, (const int64_t[]){4}, NULL);
    rd_onnx_add_node(b, "Neg", "second", (const char *const[]){"t"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_add_node(b, "Relu", "first", (const char *const[]){"x"}, 1, (const char *const[]){"t"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 1, (const int64_t[]){4}, NULL);
    rd_model m;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(ot_load(b, NULL, &m, &err), RD_OK);
    CU_ASSERT_STRING_EQUAL(m.nodes[0].name, "second");
    CU_ASSERT_STRING_EQUAL(m.nodes[1].name, "first");
    CU_ASSERT_EQUAL(m.nodes[0].in[0], m.nodes[1].out[0]);
    sim_model_free_contents(&m);
}

static void test_attributes(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_tensor t;
    make_tensor(&t, RD_DT_F32);
    rd_onnx_node *n = rd_onnx_add_node(b, "Custom", "n", (const char *const[]){"x"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_attr_int(n, "i", -3);
    rd_onnx_attr_float(n, "f", 0.25f);
    rd_onnx_attr_string(n, "s", "NOTSET");
    rd_onnx_attr_ints(n, "ints", (const int64_t[]){1, -2, 3}, 3);
    rd_onnx_attr_floats(n, "floats", (const float[]){0.5f}, 1);
    rd_onnx_attr_strings(n, "strings", (const char *const[]){"a", "bc"}, 2);
    rd_onnx_attr_tensor(n, "t", &t, RD_ONNX_TYPED);
    rd_onnx_attr_ints(n, "empty", NULL, 0);
    rd_model m;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(ot_load(b, NULL, &m, &err), RD_OK);
    const sim_node *sn = &m.nodes[0];
    CU_ASSERT_EQUAL_FATAL(sn->n_attr, 8);
    CU_ASSERT_EQUAL(sn->attrs[0].type, SIM_ATTR_INT);
    CU_ASSERT_EQUAL(sn->attrs[0].i, -3);
    CU_ASSERT_EQUAL(sn->attrs[1].type, SIM_ATTR_FLOAT);
    CU_ASSERT_EQUAL(sn->attrs[1].f, 0.25f);
    CU_ASSERT_EQUAL(sn->attrs[2].type, SIM_ATTR_STRING);
    CU_ASSERT_STRING_EQUAL(sn->attrs[2].s, "NOTSET");
    CU_ASSERT_EQUAL(sn->attrs[2].s_len, 6);
    CU_ASSERT_EQUAL(sn->attrs[3].type, SIM_ATTR_INTS);
    CU_ASSERT_EQUAL(sn->attrs[3].n_ints, 3);
    CU_ASSERT_EQUAL(sn->attrs[3].ints[1], -2);
    CU_ASSERT_EQUAL(sn->attrs[4].type, SIM_ATTR_FLOATS);
    CU_ASSERT_EQUAL(sn->attrs[4].floats[0], 0.5f);
    CU_ASSERT_EQUAL(sn->attrs[5].type, SIM_ATTR_STRINGS);
    CU_ASSERT_EQUAL(sn->attrs[5].n_strings, 2);
    CU_ASSERT_STRING_EQUAL(sn->attrs[5].strings[1], "bc");
    CU_ASSERT_EQUAL(sn->attrs[6].type, SIM_ATTR_TENSOR);
    CU_ASSERT_EQUAL(sn->attrs[6].t.rank, 2);
    CU_ASSERT_EQUAL(memcmp(sn->attrs[6].t.data, t.data, 24), 0);
    CU_ASSERT_EQUAL(sn->attrs[7].type, SIM_ATTR_INTS);
    CU_ASSERT_EQUAL(sn->attrs[7].n_ints, 0);
    rd_tensor_fini(&t);
    sim_model_free_contents(&m);
}

/* Writes len bytes of pattern data to dir/name. */
static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(data, 1, len, f);
    fclose(f);
}

static void test_external_data(void)
{
    char *dir = rd_test_tmpdir("onnx_ext");
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/weights", dir);
    mkdir(sub, 0755);
    float data[10];
    for (int i = 0; i < 10; i++)
        data[i] = (float)i * 0.5f;
    write_file(sub, "w.bin", data, sizeof data);

    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_external(b, "w_all", RD_DT_F32, 2, (const int64_t[]){2, 5}, "weights/w.bin", -1, -1);
    rd_onnx_add_initializer_external(b, "w_part", RD_DT_F32, 1, (const int64_t[]){3}, "./weights/w.bin", 16, 12);
    rd_model m;
    rd_error err;
    rd_status st = ot_load(b, dir, &m, &err);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    const rd_tensor *k = m.values[sim_model_find(&m, "w_all")].konst;
    CU_ASSERT_EQUAL(memcmp(k->data, data, sizeof data), 0);
    k = m.values[sim_model_find(&m, "w_part")].konst;
    CU_ASSERT_EQUAL(((float *)k->data)[0], 2.0f);
    CU_ASSERT_EQUAL(((float *)k->data)[2], 3.0f);
    sim_model_free_contents(&m);

    struct {
        const char *location;
        int64_t offset, length;
        rd_status want;
        const char *sub1, *sub2;
    } bad[] = {
        {"weights/missing.bin", -1, -1, RD_E_NOTFOUND, "missing.bin", "No such file"},
        {"../escape.bin", -1, -1, RD_E_PARSE, "../escape.bin", "not a relative path"},
        {"weights/../../escape.bin", -1, -1, RD_E_PARSE, "escape.bin", "not a relative path"},
        {"/etc/passwd", -1, -1, RD_E_PARSE, "/etc/passwd", "not a relative path"},
        {"weights/w.bin", 32, -1, RD_E_PARSE, "too short", "offset 32"},
        {"weights/w.bin", 0, 8, RD_E_PARSE, "length is 8", "expected 12"},
        {"weights", -1, -1, RD_E_IO, "not a regular file", "weights"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        b = rd_onnx_builder_create(8, 13);
        rd_onnx_add_initializer_external(b, "wx", RD_DT_F32, 1, (const int64_t[]){3}, bad[i].location, bad[i].offset,
                                         bad[i].length);
        st = ot_load(b, dir, &m, &err);
        OT_ASSERT_ERR(st, &err, bad[i].want, "test.onnx", "initializer 'wx'", bad[i].sub1, bad[i].sub2);
        sim_model_free_contents(&m);
    }
    /* a 4 GB claim on a 40-byte file: refused by the file's size, before the tensor is allocated (a fuzzed
       model of a few bytes used to allocate the 4 GB first: regression_campaign_oom_34bd9d3eddfb) */
    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_external(b, "wx", RD_DT_F32, 1, (const int64_t[]){1000000000}, "weights/w.bin", -1, -1);
    st = ot_load(b, dir, &m, &err);
    OT_ASSERT_ERR(st, &err, RD_E_PARSE, "initializer 'wx'", "has 40 bytes, too short for 4000000000");
    sim_model_free_contents(&m);
    /* loaded from memory without a folder */
    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_external(b, "wx", RD_DT_F32, 1, (const int64_t[]){3}, "w.bin", -1, -1);
    st = ot_load(b, NULL, &m, &err);
    OT_ASSERT_ERR(st, &err, RD_E_IO, "initializer 'wx'", "without a folder");
    sim_model_free_contents(&m);
    free(dir);
}

RD_TEST_REGISTER(register_onnx_load)
{
    RD_SUITE("onnx_load", {"basic model", test_basic_model},
             {"initializer dtypes and storage", test_initializer_dtypes_and_storage},
             {"float16 typed bits", test_float16_typed_bits},
             {"IR3 inputs that are initializers", test_ir3_inputs_that_are_initializers},
             {"no opset_import", test_no_opset_import}, {"Constant nodes", test_constant_nodes},
             {"Constant unsupported forms", test_constant_unsupported_forms},
             {"nodes out of order kept", test_nodes_out_of_order_kept}, {"attributes", test_attributes},
             {"external data", test_external_data});
}

/* test_onnx_malformed.c: sim_onnx_parse on broken and hostile inputs: every case a clear error. */
#include "onnx_test_util.h"

/* Loads and expects failure; the model's partial contents are freed. */
#define EXPECT_LOAD_ERR(b, want, ...)                            \
    do {                                                         \
        rd_model m_;                                             \
        rd_error e_;                                             \
        rd_status st_ = ot_load(b, NULL, &m_, &e_);              \
        OT_ASSERT_ERR(st_, &e_, want, "test.onnx", __VA_ARGS__); \
        sim_model_free_contents(&m_);                            \
    } while (0)

#define EXPECT_PARSE_ERR(buf, len, want, ...)                    \
    do {                                                         \
        rd_model m_;                                             \
        rd_error e_;                                             \
        rd_status st_ = ot_parse(buf, len, NULL, &m_, &e_);      \
        OT_ASSERT_ERR(st_, &e_, want, "test.onnx", __VA_ARGS__); \
        sim_model_free_contents(&m_);                            \
    } while (0)

static void *small_model(size_t *len)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){1, 4}, NULL);
    rd_tensor w;
    rd_tensor_alloc(&w, RD_DT_F32, 1, (const int64_t[]){4}, NULL);
    rd_onnx_add_initializer(b, "w", &w, RD_ONNX_RAW);
    rd_onnx_add_node(b, "Add", "add", (const char *const[]){"x", "w"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 2, (const int64_t[]){1, 4}, NULL);
    void *buf = NULL;
    CU_ASSERT_EQUAL(rd_onnx_builder_write(b, &buf, len, NULL), RD_OK);
    rd_onnx_builder_destroy(b);
    rd_tensor_fini(&w);
    return buf;
}

static void test_truncated(void)
{
    size_t len;
    uint8_t *buf = small_model(&len);
    /* every prefix either loads (a field boundary) or fails cleanly */
    int failures = 0;
    for (size_t cut = 0; cut < len; cut++) {
        rd_model m;
        rd_error err;
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, buf, cut);
        rd_status st = ot_parse(copy, cut, NULL, &m, &err);
        CU_ASSERT(st == RD_OK || st == RD_E_PARSE);
        failures += st != RD_OK;
        sim_model_free_contents(&m);
        free(copy);
    }
    CU_ASSERT(failures > (int)len / 2);
    EXPECT_PARSE_ERR(buf, len - 3, RD_E_PARSE, "not a valid ONNX protobuf (truncated or corrupt)");
    free(buf);
}

static void test_random_bytes(void)
{
    uint32_t seed = 12345;
    uint8_t buf[512];
    for (int round = 0; round < 2000; round++) {
        size_t len = (size_t)(round % 512);
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1664525u + 1013904223u;
            buf[i] = (uint8_t)(seed >> 24);
        }
        rd_model m;
        rd_error err;
        rd_status st = ot_parse(buf, len, NULL, &m, &err);
        CU_ASSERT(st != RD_OK || m.n_nodes >= 0);
        sim_model_free_contents(&m);
    }
    static const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0xff};
    EXPECT_PARSE_ERR(junk, sizeof junk, RD_E_PARSE, "not a valid ONNX protobuf");
    EXPECT_PARSE_ERR("", 0, RD_E_PARSE, "no graph");
}

static void test_wrong_wire_types(void)
{
    ot_pb p = {0};
    ot_field_int(&p, 7, 1); /* graph (a message) sent as a varint */
    EXPECT_PARSE_ERR(p.d, p.n, RD_E_PARSE, "not a valid ONNX protobuf");
    free(p.d);
    memset(&p, 0, sizeof p);
    ot_field_str(&p, 1, "eight"); /* ir_version (a varint) sent as bytes */
    EXPECT_PARSE_ERR(p.d, p.n, RD_E_PARSE, "not a valid ONNX protobuf");
    free(p.d);
    memset(&p, 0, sizeof p);
    ot_varint(&p, (7 << 3) | 3); /* a group start: wire type 3 */
    EXPECT_PARSE_ERR(p.d, p.n, RD_E_PARSE, "not a valid ONNX protobuf");
    free(p.d);
}

static void test_tensor_errors(void)
{
    const float four[4] = {0};
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_raw(b, "w", RD_DT_F32, 2, (const int64_t[]){2, 3}, four, 16);
    EXPECT_LOAD_ERR(b, RD_E_PARSE, "initializer 'w'", "16 bytes", "expected 24");

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_raw(b, "neg", RD_DT_F32, 2, (const int64_t[]){-1, 4}, four, 16);
    EXPECT_LOAD_ERR(b, RD_E_PARSE, "initializer 'neg'", "negative");

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_raw(b, "huge", RD_DT_F32, 3, (const int64_t[]){1 << 20, 1 << 20, 1 << 10}, four, 16);
    EXPECT_LOAD_ERR(b, RD_E_LIMIT, "initializer 'huge'", "limit");

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_raw(b, "ovf", RD_DT_F32, 4, (const int64_t[]){INT64_MAX, INT64_MAX, 2, 2}, four, 16);
    EXPECT_LOAD_ERR(b, RD_E_LIMIT, "initializer 'ovf'");

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_raw(b, "f8", 17, 1, (const int64_t[]){4}, four, 4);
    EXPECT_LOAD_ERR(b, RD_E_UNSUPPORTED, "initializer 'f8'", "unsupported dtype float8e4m3fn (17)");

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_raw(b, "i4", 22, 1, (const int64_t[]){4}, four, 2);
    EXPECT_LOAD_ERR(b, RD_E_UNSUPPORTED, "initializer 'i4'", "unsupported dtype int4");

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_raw(b, "str", RD_DT_STRING, 1, (const int64_t[]){1}, NULL, 0);
    EXPECT_LOAD_ERR(b, RD_E_UNSUPPORTED, "initializer 'str'", "unsupported dtype string");

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_raw(b, "notype", 0, 1, (const int64_t[]){1}, four, 4);
    EXPECT_LOAD_ERR(b, RD_E_PARSE, "initializer 'notype'", "no data_type");

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_raw(b, "rank9", RD_DT_F32, 9, (const int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, four, 4);
    EXPECT_LOAD_ERR(b, RD_E_LIMIT, "initializer 'rank9'", "rank 9");

    /* a typed field with the wrong count (no raw_data) */
    rd_tensor t;
    rd_tensor_alloc(&t, RD_DT_I64, 1, (const int64_t[]){3}, NULL);
    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer(b, "dup", &t, RD_ONNX_TYPED);
    rd_onnx_add_initializer(b, "dup", &t, RD_ONNX_RAW);
    EXPECT_LOAD_ERR(b, RD_E_PARSE, "'dup'", "defined twice");
    rd_tensor_fini(&t);

    /* typed storage counted against the dims, with hand-made bytes: dims [5], three float_data */
    ot_pb tp = {0}, g = {0}, m = {0};
    ot_field_int(&tp, 1, 5);
    ot_field_int(&tp, 2, RD_DT_F32);
    ot_field_str(&tp, 8, "short");
    const float three[3] = {1, 2, 3};
    ot_field_bytes(&tp, 4, three, sizeof three); /* packed float_data */
    ot_field_msg(&g, 5, &tp);
    ot_field_msg(&m, 7, &g);
    EXPECT_PARSE_ERR(m.d, m.n, RD_E_PARSE, "initializer 'short'", "float_data has 3 values, expected 5");
    free(m.d);
}

/* A model whose one node carries one hand-encoded attribute. */
static void model_with_attr(ot_pb *out, const char *op, ot_pb *attr)
{
    ot_pb node = {0}, g = {0};
    ot_field_str(&node, 4, op);
    ot_field_str(&node, 3, "n0");
    ot_field_msg(&node, 5, attr);
    ot_field_msg(&g, 1, &node);
    memset(out, 0, sizeof *out);
    ot_field_int(out, 1, 8);
    ot_field_msg(out, 7, &g);
}

static void test_graph_attribute(void)
{
    ot_pb attr = {0}, sub = {0}, model;
    ot_field_str(&attr, 1, "then_branch");
    ot_field_int(&attr, 20, 5); /* type GRAPH */
    ot_field_str(&sub, 2, "then");
    ot_field_msg(&attr, 6, &sub);
    model_with_attr(&model, "If", &attr);
    EXPECT_PARSE_ERR(model.d, model.n, RD_E_UNSUPPORTED, "node 'n0'", "If", "then_branch", "control flow");
    free(model.d);

    /* sparse tensor attribute */
    memset(&attr, 0, sizeof attr);
    ot_field_str(&attr, 1, "sp");
    ot_field_int(&attr, 20, 11);
    model_with_attr(&model, "Foo", &attr);
    EXPECT_PARSE_ERR(model.d, model.n, RD_E_UNSUPPORTED, "node 'n0'", "'sp'", "SPARSE_TENSOR");
    free(model.d);

    /* an attribute without a name */
    memset(&attr, 0, sizeof attr);
    ot_field_int(&attr, 3, 1);
    model_with_attr(&model, "Foo", &attr);
    EXPECT_PARSE_ERR(model.d, model.n, RD_E_PARSE, "node 'n0'", "no name");
    free(model.d);

    /* old files without `type`: guessed from the field that is set */
    memset(&attr, 0, sizeof attr);
    ot_field_str(&attr, 1, "axis");
    ot_field_int(&attr, 3, 2);
    model_with_attr(&model, "Foo", &attr);
    rd_model m;
    rd_error err;
    CU_ASSERT_EQUAL(ot_parse(model.d, model.n, NULL, &m, &err), RD_OK);
    CU_ASSERT_EQUAL(m.nodes[0].attrs[0].type, SIM_ATTR_INT);
    CU_ASSERT_EQUAL(m.nodes[0].attrs[0].i, 2);
    sim_model_free_contents(&m);
    free(model.d);
}

/* Thousands of nested If bodies: refused before protobuf-c's recursion can exhaust the stack. */
static void test_deep_nesting(void)
{
    ot_pb inner = {0};
    for (int level = 0; level < 3000; level++) {
        ot_pb attr = {0}, node = {0}, g = {0};
        ot_field_msg(&g, 1, &inner); /* graph.node = previous level */
        ot_field_str(&attr, 1, "b");
        ot_field_msg(&attr, 6, &g);
        ot_field_msg(&node, 5, &attr);
        inner = node;
    }
    ot_pb g = {0}, model = {0};
    ot_field_msg(&g, 1, &inner);
    ot_field_msg(&model, 7, &g);
    EXPECT_PARSE_ERR(model.d, model.n, RD_E_LIMIT, "nest deeper");
    free(model.d);
}

/* Half a million empty attributes: 1 MB of input that would unpack into >100 MB. */
static void test_memory_budget(void)
{
    ot_pb node = {0}, g = {0}, model = {0};
    ot_field_str(&node, 4, "Foo");
    for (int i = 0; i < 500000; i++)
        ot_field_bytes(&node, 5, NULL, 0);
    ot_field_msg(&g, 1, &node);
    ot_field_msg(&model, 7, &g);
    EXPECT_PARSE_ERR(model.d, model.n, RD_E_LIMIT, "more than", "bytes of memory");
    free(model.d);
}

static void test_graph_errors(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_node(b, "", "noop", NULL, 0, NULL, 0);
    EXPECT_LOAD_ERR(b, RD_E_PARSE, "node 'noop'", "no op_type");

    b = rd_onnx_builder_create(8, 13);
    rd_tensor t;
    rd_tensor_alloc(&t, RD_DT_F32, 0, NULL, NULL);
    rd_onnx_add_initializer(b, "w", &t, RD_ONNX_RAW);
    rd_onnx_add_node(b, "Relu", "r", (const char *const[]){"x"}, 1, (const char *const[]){"w"}, 1);
    EXPECT_LOAD_ERR(b, RD_E_PARSE, "node 'r'", "output 'w'", "also an initializer");
    rd_tensor_fini(&t);

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_opset(b, "ai.onnx", 11);
    EXPECT_LOAD_ERR(b, RD_E_PARSE, "opset_import", "twice");

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, -1, NULL, NULL);
    rd_onnx_add_input(b, "x", RD_DT_F32, -1, NULL, NULL);
    EXPECT_LOAD_ERR(b, RD_E_PARSE, "graph input 'x'", "twice");

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 9, (const int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, NULL);
    EXPECT_LOAD_ERR(b, RD_E_LIMIT, "graph input 'x'", "rank 9");

    b = rd_onnx_builder_create(8, 13);
    rd_onnx_node *n = rd_onnx_add_node(b, "Foo", "f", NULL, 0, NULL, 0);
    rd_onnx_attr_int(n, "a", 1);
    rd_onnx_attr_int(n, "a", 2);
    EXPECT_LOAD_ERR(b, RD_E_PARSE, "node 'f'", "'a' is given twice");
}

RD_TEST_REGISTER(register_onnx_malformed)
{
    RD_SUITE("onnx_malformed", {"truncated", test_truncated}, {"random bytes", test_random_bytes},
             {"wrong wire types", test_wrong_wire_types}, {"tensor errors", test_tensor_errors},
             {"graph attribute", test_graph_attribute}, {"deep nesting", test_deep_nesting},
             {"memory budget", test_memory_budget}, {"graph errors", test_graph_errors});
}

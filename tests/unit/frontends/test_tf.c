/*
 * test_tf.c: the TensorFlow frontend on frozen graphs written here (tf_synth.c, its own protobuf encoder).
 *
 *  - the test graph (tf_synth.h: Conv2D with the weights/read Identity of frozen graphs, BiasAdd,
 *    FusedBatchNormV3, Relu6, DepthwiseConv2dNative stride 2 SAME, the pools (AvgPool SAME without the padding),
 *    ResizeBilinear half-pixel, AddV2, ConcatV2, Mean, Reshape, MatMul, Softmax, Pad, Max, Squeeze) against ONNX
 *    Runtime's outputs for an equivalent NCHW ONNX model this test writes with the same weights (tf_equiv.onnx
 *    and tf_input.npy in the build tree; goldens made from them by ../shared/tools/ort), and against our own run
 *    of that model; the node names and NHWC shapes of the loaded graph;
 *  - malformed graphs: every truncation, unknown ops (all listed at once), a cycle, an unknown input, two nodes
 *    of one name, a constant of the wrong size, a training-mode BatchNorm, a computed filter, output 1 of a node.
 */
#include "fe_check.h"
#include "rd_test.h"
#include "rknn_diag/frontends.h"
#include "tf_synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rd_status convert(const void *pb, size_t len, rd_model **m, rd_error *err)
{
    void *onnx = NULL;
    size_t olen = 0;
    rd_frontend_info info;
    *m = NULL;
    rd_status st = rd_tf_to_onnx(pb, len, "graph.pb", NULL, &onnx, &olen, &info, err);
    if (st == RD_OK) {
        CU_ASSERT_EQUAL(info.format, RD_FORMAT_TENSORFLOW);
        st = rd_model_load_mem(onnx, olen, "graph.pb", NULL, NULL, m, err);
    }
    free(onnx);
    return st;
}

/* The test graph written directly as NCHW ONNX (the input stays NHWC) with the weights of seed. */
static rd_onnx_builder *equivalent_onnx(uint32_t seed)
{
    float w[TGS_TEST_WEIGHTS], w1[108], dw[36];
    tgs_test_weights(seed, w);
    for (int h = 0; h < 3; h++) /* HWIO -> OIHW; depthwise HWC1 -> C1HW */
        for (int x = 0; x < 3; x++)
            for (int c = 0; c < 4; c++) {
                for (int i = 0; i < 3; i++)
                    w1[((c * 3 + i) * 3 + h) * 3 + x] = w[((h * 3 + x) * 3 + i) * 4 + c];
                dw[(c * 3 + h) * 3 + x] = w[128 + (h * 3 + x) * 4 + c];
            }
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "input", RD_DT_F32, 4, (const int64_t[]){1, 8, 8, 3}, NULL);
    fe_add_f32(b, "w1", 4, (const int64_t[]){4, 3, 3, 3}, w1);
    fe_add_f32(b, "b1", 1, (const int64_t[]){4}, w + 108);
    static const char *const bn[4] = {"gamma", "beta", "mean", "var"};
    for (int i = 0; i < 4; i++)
        fe_add_f32(b, bn[i], 1, (const int64_t[]){4}, w + 112 + 4 * i);
    fe_add_f32(b, "dw", 4, (const int64_t[]){4, 1, 3, 3}, dw);
    fe_add_f32(b, "fc", 2, (const int64_t[]){16, 5}, w + 164);
    fe_add_f32(b, "fcb", 1, (const int64_t[]){5}, w + 244);
    fe_add_f32(b, "zero", 0, NULL, (const float[]){0});
    fe_add_f32(b, "six", 0, NULL, (const float[]){6});
    fe_add_f32(b, "scales", 1, (const int64_t[]){4}, (const float[]){1, 1, 2, 2});
    fe_add_i64(b, "flat_shape", 2, (const int64_t[]){1, 16});
    fe_add_i64(b, "sq_shape", 2, (const int64_t[]){10, 12});
    fe_add_i64(b, "pads", 8, (const int64_t[]){0, 1, 2, 0, 0, 1, 2, 0});
    rd_onnx_node *n = FE_NODE("Transpose", "t", FE_L("input"), FE_L("x"));
    rd_onnx_attr_ints(n, "perm", (const int64_t[]){0, 3, 1, 2}, 4);
    n = FE_NODE("Conv", "c1", FE_L("x", "w1", "b1"), FE_L("c1"));
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    n = FE_NODE("BatchNormalization", "bn", FE_L("c1", "gamma", "beta", "mean", "var"), FE_L("bn"));
    rd_onnx_attr_float(n, "epsilon", 0.001f);
    FE_NODE("Clip", "r6", FE_L("bn", "zero", "six"), FE_L("r6"));
    n = FE_NODE("Conv", "dwc", FE_L("r6", "dw"), FE_L("dwc"));
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){0, 0, 1, 1}, 4); /* SAME at stride 2: the extra pad last */
    rd_onnx_attr_ints(n, "strides", (const int64_t[]){2, 2}, 2);
    rd_onnx_attr_int(n, "group", 4);
    FE_NODE("Relu", "dwr", FE_L("dwc"), FE_L("dwr"));
    n = FE_NODE("MaxPool", "pool", FE_L("dwr"), FE_L("pool"));
    rd_onnx_attr_ints(n, "kernel_shape", (const int64_t[]){2, 2}, 2);
    rd_onnx_attr_ints(n, "strides", (const int64_t[]){2, 2}, 2);
    n = FE_NODE("AveragePool", "avg", FE_L("dwr"), FE_L("avg"));
    rd_onnx_attr_ints(n, "kernel_shape", (const int64_t[]){3, 3}, 2);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    n = FE_NODE("Resize", "up", FE_L("pool", "", "scales"), FE_L("up"));
    rd_onnx_attr_string(n, "mode", "linear");
    rd_onnx_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    FE_NODE("Add", "sum", FE_L("up", "avg"), FE_L("sum"));
    n = FE_NODE("Concat", "cat", FE_L("sum", "dwr"), FE_L("cat"));
    rd_onnx_attr_int(n, "axis", 1);
    n = FE_NODE("ReduceMean", "gap", FE_L("cat"), FE_L("gap"));
    rd_onnx_attr_ints(n, "axes", (const int64_t[]){2, 3}, 2);
    rd_onnx_attr_int(n, "keepdims", 0);
    n = FE_NODE("Transpose", "pool_nhwc", FE_L("pool"), FE_L("pool_nhwc"));
    rd_onnx_attr_ints(n, "perm", (const int64_t[]){0, 2, 3, 1}, 4);
    FE_NODE("Reshape", "flat", FE_L("pool_nhwc", "flat_shape"), FE_L("flat"));
    FE_NODE("Gemm", "fc", FE_L("flat", "fc", "fcb"), FE_L("logits"));
    n = FE_NODE("Softmax", "probs", FE_L("logits"), FE_L("probs"));
    rd_onnx_attr_int(n, "axis", 1);
    FE_NODE("Pad", "padded", FE_L("input", "pads"), FE_L("padded"));
    n = FE_NODE("ReduceMax", "chmax", FE_L("padded"), FE_L("chmax"));
    rd_onnx_attr_ints(n, "axes", (const int64_t[]){3}, 1);
    FE_NODE("Reshape", "squeezed", FE_L("chmax", "sq_shape"), FE_L("squeezed"));
    rd_onnx_add_output(b, "gap", RD_DT_F32, 2, (const int64_t[]){1, 8}, NULL);
    rd_onnx_add_output(b, "probs", RD_DT_F32, 2, (const int64_t[]){1, 5}, NULL);
    rd_onnx_add_output(b, "squeezed", RD_DT_F32, 2, (const int64_t[]){10, 12}, NULL);
    return b;
}

/* ONNX Runtime 1.30 (CPU, one thread) on tf_equiv.onnx with tf_input.npy: gap, probs, squeezed. */
static const float ort_golden[8 + 5 + 120] = {
#include "tf_equiv_ort.inc"
};

static void test_graph_vs_onnx_runtime(void)
{
    size_t len = 0;
    uint8_t *pb = tgs_test_graph(7, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pb);
    CU_ASSERT_EQUAL(rd_model_format_detect(pb, len), RD_FORMAT_TENSORFLOW);
    rd_model *m;
    rd_error err;
    rd_status st = convert(pb, len, &m, &err);
    fe_assert_ok(st, &err);
    static const fe_shape names[] = {
        {"conv1/Conv2D", 4, {1, 8, 8, 4}},
        {"conv1/BiasAdd", 4, {1, 8, 8, 4}},
        {"bn/FusedBatchNormV3", 4, {1, 8, 8, 4}},
        {"bn/Relu6", 4, {1, 8, 8, 4}},
        {"dw/depthwise", 4, {1, 4, 4, 4}},
        {"pool", 4, {1, 2, 2, 4}},
        {"avg", 4, {1, 4, 4, 4}},
        {"up", 4, {1, 4, 4, 4}},
        {"cat", 4, {1, 4, 4, 8}},
        {"gap", 2, {1, 8}},
        {"flat", 2, {1, 16}},
        {"fc/MatMul", 2, {1, 5}},
        {"probs", 2, {1, 5}},
        {"padded", 4, {1, 10, 12, 3}},
        {"squeezed", 2, {10, 12}},
    };
    fe_check_shapes(m, names, sizeof names / sizeof names[0]);
    CU_ASSERT_EQUAL_FATAL(rd_model_output_count(m), 3);
    static float x[192];
    uint32_t s = 99;
    for (int i = 0; i < 192; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
    }
    rd_tensor xt = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, 8, 8, 3}, .data = x};
    fe_check_equivalent(m, equivalent_onnx(7), &xt, 3, ort_golden, 1e-5, "tf", "tf_equiv.onnx", "tf_input.npy");
    rd_model_destroy(m);
    free(pb);
}

/* ---- graphs that compute shapes ---------------------------------------------------------------------- */

static const char *const shape_outputs[8] = {"mul", "split:2", "un:1", "tile", "ss", "ss2", "half_dims", "gr"};

/* tgs_shape_graph written directly as ONNX for x [2,4,6,3], every shape constant. */
static rd_onnx_builder *shape_equivalent_onnx(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_node *n;
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){2, 4, 6, 3}, NULL);
    fe_add_i64(b, "r_shape", 3, (const int64_t[]){2, 24, 3});
    fe_add_i64(b, "a1", 1, (const int64_t[]){1});
    fe_add_i64(b, "i0", 1, (const int64_t[]){0});
    fe_add_i64(b, "i10", 1, (const int64_t[]){10});
    fe_add_f32(b, "half", 0, NULL, (const float[]){0.5f});
    fe_add_f32(b, "ramp", 1, (const int64_t[]){3}, (const float[]){0, 1, 2});
    fe_add_i64(b, "s2_starts", 2, (const int64_t[]){10, 2});
    fe_add_i64(b, "s2_ends", 2, (const int64_t[]){24, 3});
    fe_add_i64(b, "s2_axes", 2, (const int64_t[]){1, 2});
    fe_add_i64(b, "un_idx", 1, (const int64_t[]){1});
    fe_add_i64(b, "un_shape", 2, (const int64_t[]){24, 3});
    fe_add_i64(b, "t_starts", 2, (const int64_t[]){1, 0});
    fe_add_i64(b, "t_ends", 2, (const int64_t[]){3, 2});
    fe_add_i64(b, "t_axes", 2, (const int64_t[]){1, 3});
    fe_add_i64(b, "t_reps", 4, (const int64_t[]){1, 1, 1, 2});
    fe_add_i64(b, "ss_starts", 2, (const int64_t[]){1, -1});
    fe_add_i64(b, "ss_ends", 2, (const int64_t[]){-1, INT64_MIN});
    fe_add_i64(b, "ss_steps", 2, (const int64_t[]){1, -1});
    fe_add_i64(b, "ss2_starts", 2, (const int64_t[]){0, 2});
    fe_add_i64(b, "ss2_ends", 2, (const int64_t[]){1, 3});
    fe_add_i64(b, "ss2_axes", 2, (const int64_t[]){0, 2});
    fe_add_i64(b, "ss2_shape", 3, (const int64_t[]){1, 4, 3});
    fe_add_f32(b, "hd", 1, (const int64_t[]){2}, (const float[]){2, 3});
    fe_add_i64(b, "g_idx", 2, (const int64_t[]){2, 0});
    FE_NODE("Reshape", "r", FE_L("x", "r_shape"), FE_L("r"));
    FE_NODE("Slice", "sp0", FE_L("r", "i0", "i10", "a1"), FE_L("sp0"));
    FE_NODE("Add", "add", FE_L("sp0", "half"), FE_L("add"));
    FE_NODE("Mul", "mul", FE_L("add", "ramp"), FE_L("mul"));
    FE_NODE("Slice", "split2", FE_L("r", "s2_starts", "s2_ends", "s2_axes"), FE_L("split2"));
    n = FE_NODE("Gather", "un1g", FE_L("r", "un_idx"), FE_L("un1g"));
    rd_onnx_attr_int(n, "axis", 0);
    FE_NODE("Reshape", "un1", FE_L("un1g", "un_shape"), FE_L("un1"));
    FE_NODE("Slice", "sl", FE_L("x", "t_starts", "t_ends", "t_axes"), FE_L("sl"));
    FE_NODE("Tile", "tile", FE_L("sl", "t_reps"), FE_L("tile"));
    FE_NODE("Slice", "ss", FE_L("x", "ss_starts", "ss_ends", "t_axes", "ss_steps"), FE_L("ss"));
    FE_NODE("Slice", "ss2s", FE_L("x", "ss2_starts", "ss2_ends", "ss2_axes"), FE_L("ss2s"));
    FE_NODE("Reshape", "ss2", FE_L("ss2s", "ss2_shape"), FE_L("ss2"));
    FE_NODE("Identity", "half_dims", FE_L("hd"), FE_L("half_dims"));
    n = FE_NODE("Gather", "g", FE_L("x", "g_idx"), FE_L("g"));
    rd_onnx_attr_int(n, "axis", 3);
    FE_NODE("Relu", "gr", FE_L("g"), FE_L("gr"));
    static const char *const outs[8] = {"mul", "split2", "un1", "tile", "ss", "ss2", "half_dims", "gr"};
    for (int i = 0; i < 8; i++)
        rd_onnx_add_output(b, outs[i], RD_DT_F32, -1, NULL, NULL);
    return b;
}

/* ONNX Runtime 1.30 (CPU, one thread) on tf_shape_equiv.onnx with tf_shape_input.npy: the 8 outputs in order. */
static const float shape_ort_golden[60 + 28 + 72 + 96 + 72 + 12 + 2 + 96] = {
#include "tf_shape_equiv_ort.inc"
};

static rd_status convert_cut(const void *pb, size_t len, const rd_frontend_options *fo, const rd_load_options *lo,
                             rd_model **m, rd_error *err)
{
    void *onnx = NULL;
    size_t olen = 0;
    *m = NULL;
    rd_status st = rd_tf_to_onnx(pb, len, "graph.pb", fo, &onnx, &olen, NULL, err);
    if (st == RD_OK)
        st = rd_model_load_mem(onnx, olen, "graph.pb", NULL, lo, m, err);
    free(onnx);
    return st;
}

static void test_shape_ops_vs_onnx_runtime(void)
{
    size_t len = 0;
    uint8_t *pb = tgs_shape_graph(&len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pb);
    rd_frontend_options fo = {.outputs = shape_outputs, .n_outputs = 8};
    rd_input_shape xs = {.name = "x", .rank = 4, .dims = {2, 4, 6, 3}};
    rd_load_options lo = {.input_shapes = &xs, .n_input_shapes = 1};
    rd_model *m;
    rd_error err;
    rd_status st = convert_cut(pb, len, &fo, &lo, &m, &err);
    fe_assert_ok(st, &err);
    /* the computed shape was folded at load: every value's shape is known before any run */
    static const fe_shape names[] = {
        {"r", 3, {2, 24, 3}},  {"mul", 3, {2, 10, 3}},    {"split:2", 3, {2, 14, 1}},
        {"un:1", 2, {24, 3}},  {"tile", 4, {2, 2, 6, 4}}, {"ss", 4, {2, 2, 6, 3}},
        {"ss2", 3, {1, 4, 3}}, {"half_dims", 1, {2}},     {"gr", 4, {2, 4, 6, 2}},
    };
    fe_check_shapes(m, names, sizeof names / sizeof names[0]);
    CU_ASSERT_EQUAL_FATAL(rd_model_output_count(m), 8);
    static float x[144];
    for (int i = 0; i < 144; i++)
        x[i] = (float)((i * 37) % 29) / 7.0f - 2.0f;
    rd_tensor xt = {.dtype = RD_DT_F32, .rank = 4, .dims = {2, 4, 6, 3}, .data = x};
    fe_check_equivalent(m, shape_equivalent_onnx(), &xt, 8, shape_ort_golden, 1e-6, "tf_shape", "tf_shape_equiv.onnx",
                        "tf_shape_input.npy");
    rd_model_destroy(m);
    free(pb);
}

#define IN(...) (const char *const[]){__VA_ARGS__}, (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

static void placeholder(tgs_buf *g)
{
    tgs_placeholder_f32(g, "x", (const int64_t[]){1, 4, 4, 2}, 4);
}

/* A node without attributes: its name, op and inputs (the list ends at the first NULL). */
typedef struct plain_node {
    const char *name, *op, *in[5];
} plain_node;

/* The nodes of a table, up to the first without a name or n of them. */
static void add_plain(tgs_buf *g, const plain_node *nodes, size_t n)
{
    for (size_t i = 0; i < n && nodes[i].name; i++) {
        int n_in = 0;
        while (n_in < 5 && nodes[i].in[n_in])
            n_in++;
        tgs_buf b;
        tgs_node(&b, nodes[i].name, nodes[i].op, nodes[i].in, n_in);
        tgs_add(g, &b);
    }
}

/* A graph of x and the nodes written by add (NULL: none) then the plain nodes; the conversion's status and
   message. */
static rd_status try_graph(void (*add)(tgs_buf *), const plain_node *nodes, size_t n_nodes, rd_error *err)
{
    tgs_buf g = {0};
    placeholder(&g);
    if (add)
        add(&g);
    add_plain(&g, nodes, n_nodes);
    size_t len;
    uint8_t *pb = tgs_finish(&g, &len);
    rd_model *m;
    rd_status st = convert(pb, len, &m, err);
    if (st == RD_OK)
        rd_model_destroy(m);
    free(pb);
    return st;
}

static void g_short_const(tgs_buf *g)
{
    tgs_buf n;
    tgs_node(&n, "k", "Const", NULL, 0);
    tgs_attr_tensor(&n, "value", TGS_FLOAT, (const int64_t[]){3}, 1, (const float[]){1, 2, 3}, true);
    tgs_add(g, &n);
    tgs_node(&n, "bad", "Const", NULL, 0); /* 2x2 claimed, 3 floats of bytes */
    tgs_attr_tensor_n(&n, "value", TGS_FLOAT, (const int64_t[]){2, 2}, 2, (const float[]){1, 2, 3}, 3, true);
    tgs_add(g, &n);
}

static void g_training_bn(tgs_buf *g)
{
    tgs_buf n;
    tgs_const_f32(g, "s", (const int64_t[]){2}, 1, (const float[]){1, 1});
    tgs_node(&n, "bn", "FusedBatchNorm", IN("x", "s", "s", "s", "s"));
    tgs_add(g, &n);
}

static void g_computed_filter(tgs_buf *g)
{
    tgs_buf n;
    tgs_node(&n, "conv", "Conv2D", IN("x", "x"));
    tgs_attr_s(&n, "padding", "SAME");
    tgs_add(g, &n);
}

static void g_int_input(tgs_buf *g)
{
    tgs_buf n;
    tgs_node(&n, "ids", "Placeholder", NULL, 0);
    tgs_attr_type(&n, "dtype", TGS_INT32);
    tgs_add(g, &n);
}

/* x -> pre (Erf, not supported) -> mid (Relu) -> out (Sigmoid) -> train (TopKV2, not supported). */
static void g_cut(tgs_buf *g)
{
    static const plain_node chain[] = {
        {"pre", "Erf", {"x"}}, {"mid", "Relu", {"pre"}}, {"out", "Sigmoid", {"mid"}}, {"train", "TopKV2", {"out"}}};
    add_plain(g, chain, sizeof chain / sizeof chain[0]);
}

static rd_status try_cut(const char *in, const char *out, rd_model **m, rd_error *err)
{
    tgs_buf g = {0};
    placeholder(&g);
    g_cut(&g);
    size_t len;
    uint8_t *pb = tgs_finish(&g, &len);
    rd_frontend_options fo = {.inputs = &in, .n_inputs = in ? 1 : 0, .outputs = &out, .n_outputs = out ? 1 : 0};
    rd_input_shape s = {.name = "pre", .rank = 2, .dims = {3, 5}};
    rd_load_options lo = {.input_shapes = &s, .n_input_shapes = in ? 1 : 0};
    rd_status st = convert_cut(pb, len, &fo, &lo, m, err);
    free(pb);
    return st;
}

/* inputs / outputs as load_tensorflow takes them: the graph cut, what lies outside no longer read. */
static void test_cut(void)
{
    rd_model *m;
    rd_error err;
    rd_status st = try_cut("pre:0", "out", &m, &err);
    fe_assert_ok(st, &err);
    CU_ASSERT_EQUAL(rd_model_node_count(m), 2); /* Relu, Sigmoid: Erf before the cut and TopKV2 after unread */
    CU_ASSERT_EQUAL_FATAL(rd_model_input_count(m), 1);
    CU_ASSERT_EQUAL_FATAL(rd_model_output_count(m), 1);
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, 0), &vi);
    CU_ASSERT_STRING_EQUAL(vi.name, "pre");
    CU_ASSERT_EQUAL(vi.rank, 2);
    rd_model_value(m, (size_t)rd_model_output(m, 0), &vi);
    CU_ASSERT_STRING_EQUAL(vi.name, "out");
    float x[15];
    for (int i = 0; i < 15; i++)
        x[i] = (float)i - 7.0f;
    rd_tensor in = {.dtype = RD_DT_F32, .rank = 2, .dims = {3, 5}, .data = x}, y = {0};
    CU_ASSERT_EQUAL_FATAL(rd_model_run(m, &in, 1, NULL, &y, 1, &err), RD_OK);
    for (int i = 0; i < 15; i++)
        CU_ASSERT_DOUBLE_EQUAL(((float *)y.data)[i], 1.0 / (1.0 + exp(-(x[i] > 0 ? x[i] : 0))), 1e-6);
    rd_tensor_fini(&y);
    rd_model_destroy(m);
    /* only the outputs asked: the TopKV2 after them is not read, the Erf before is */
    CU_ASSERT_EQUAL(try_cut(NULL, "out", &m, &err), RD_E_UNSUPPORTED);
    if (!strstr(err.msg, "Erf (node #1 'pre')"))
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "Erf (node #1 'pre')"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "TopKV2"));
    static const struct {
        const char *in, *out, *msg;
    } bad[] = {
        {"pre", "ot", "graph.pb: the outputs name 'ot', which is no node of the graph; close names: 'out'"},
        {"nothing_like_it", "out",
         "the inputs name 'nothing_like_it', which is no node of the graph; the graph's "
         "Placeholders: 'x'"},
        {"pre:x", "out", "the inputs name 'pre:x', whose output number is not one"},
        {"pre", "pre", "graph.pb: the outputs name 'pre', which is also an input"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        st = try_cut(bad[i].in, bad[i].out, &m, &err);
        CU_ASSERT_EQUAL(st, RD_E_INVAL);
        if (st == RD_OK || !strstr(err.msg, bad[i].msg))
            fprintf(stderr, "\ncut case %zu: %s\n", i, st == RD_OK ? "accepted" : err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].msg));
        if (st == RD_OK)
            rd_model_destroy(m);
    }
}

static void test_graph_refused(void)
{
    /* the graph: x, then what add writes (nodes with attributes), then the plain nodes */
    static const struct {
        void (*add)(tgs_buf *);
        plain_node nodes[4];
        rd_status st;
        const char *msg;
    } bad[] = {
        {NULL,
         {{"a", "Erf", {"x"}}, {"b", "TopKV2", {"x"}}, {"c", "Erf", {"x"}}, {"d", "NonMaxSuppressionV3", {"x"}}},
         RD_E_UNSUPPORTED,
         "graph.pb: 4 nodes are of 3 kinds not supported (first of each): Erf (node "
         "#1 'a'), TopKV2 (node #2 'b'), NonMaxSuppressionV3 (node #4 'd')"},
        {NULL, {{"a", "Relu", {"b"}}, {"b", "AddV2", {"x", "a"}}}, RD_E_PARSE, "graph.pb: a cycle: node '"},
        {NULL,
         {{"a", "Relu", {"nothing:0"}}},
         RD_E_PARSE,
         "graph.pb: node 'a' reads 'nothing:0', which is no node of the graph"},
        {NULL, {{"x", "Relu", {"x"}}}, RD_E_PARSE, "graph.pb: two nodes are named 'x' (#0 and #1)"},
        {g_short_const, {{0}}, RD_E_PARSE, "graph.pb: node #2 'bad' (Const): a constant of 4 elements holds 12 bytes"},
        {g_training_bn, {{0}}, RD_E_UNSUPPORTED, "graph.pb: node #2 'bn' (FusedBatchNorm): is_training is true"},
        {g_computed_filter,
         {{0}},
         RD_E_UNSUPPORTED,
         "node #1 'conv' (Conv2D): the filter must be a constant 4-D float"},
        {NULL,
         {{"r", "Relu", {"x:1"}}},
         RD_E_UNSUPPORTED,
         "graph.pb: node #1 'r' (Relu): reads output 1 of 'x' (Placeholder), which is not"},
        {g_int_input, {{0}}, RD_E_UNSUPPORTED, "graph.pb: node #1 'ids' (Placeholder): an input of DataType 3"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rd_error err;
        rd_status st = try_graph(bad[i].add, bad[i].nodes, 4, &err);
        CU_ASSERT_EQUAL(st, bad[i].st);
        if (st == RD_OK || !strstr(err.msg, bad[i].msg))
            fprintf(stderr, "\ncase %zu: %s\n", i, st == RD_OK ? "accepted" : err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].msg));
    }
    /* every truncation of the test graph: refused naming the file, or a smaller graph; never a crash */
    size_t len = 0;
    uint8_t *pb = tgs_test_graph(7, &len);
    for (size_t cut = 0; cut < len; cut += 41) {
        rd_model *m;
        rd_error err;
        if (convert(pb, cut, &m, &err) == RD_OK)
            rd_model_destroy(m);
        else
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "graph.pb"));
    }
    rd_model *m;
    rd_error err;
    CU_ASSERT_EQUAL(convert(pb, len - 1, &m, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "graph.pb: not a valid TensorFlow GraphDef protobuf"));
    free(pb);
}

/* NCHW data format, dilations, MirrorPad, nearest resize, ExpandDims, Sum: the shapes TensorFlow gives. */
static void test_small_graph(void)
{
    size_t len = 0;
    uint8_t *pb = tgs_small_graph(&len);
    rd_model *m;
    rd_error err;
    rd_status st = convert(pb, len, &m, &err);
    fe_assert_ok(st, &err);
    static const fe_shape names[] = {
        {"conv", 4, {1, 3, 4, 4}}, {"mp", 4, {1, 3, 6, 6}},    {"nhwc", 4, {1, 6, 6, 3}},
        {"near", 4, {1, 3, 3, 3}}, {"ex", 5, {1, 1, 3, 3, 3}}, {"out", 4, {1, 1, 3, 3}},
    };
    fe_check_shapes(m, names, sizeof names / sizeof names[0]);
    float x[72];
    for (int i = 0; i < 72; i++)
        x[i] = (float)(i % 7) - 3.0f;
    rd_tensor in = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, 2, 6, 6}, .data = x}, y = {0};
    CU_ASSERT_EQUAL_FATAL(rd_model_run(m, &in, 1, NULL, &y, 1, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_tensor_numel(&y), 9);
    rd_tensor_fini(&y);
    rd_model_destroy(m);
    free(pb);
}

RD_TEST_REGISTER(register_tf)
{
    RD_SUITE("tensorflow", {"test graph vs ONNX Runtime", test_graph_vs_onnx_runtime},
             {"NCHW, dilations, MirrorPad, nearest resize", test_small_graph}, {"graphs refused", test_graph_refused},
             {"computed shapes vs ONNX Runtime", test_shape_ops_vs_onnx_runtime},
             {"inputs and outputs cut the graph", test_cut});
}

/*
 * test_passes_rknn.c: RKNN's rewrites and fusion groups at level 3 (simulator/src/passes_rknn.c) on small
 * models built with the ONNX writer: every group (ConvExSwish, exSwish, ConvAdd, ConvAddRelu, ConvReluAdd,
 * AddRelu, Conv + activation, ConvTranspose + activation) and every refusal, the tensors each leaves
 * materialised, the NPU op of every member and the row op type RKNN prints; FP32 outputs stay bit for bit.
 */
#include "passes_test_util.h"

/* The producer of tensor name. */
static const sim_node *producer_of(const rd_model *m, const char *name)
{
    const sim_value *v = value(m, name);
    CU_ASSERT_FATAL(v->producer >= 0);
    return &m->nodes[v->producer];
}

/* What one tensor should be after the passes: fused into `into` ("" none, virtual when set), its group's NPU
   op and its producer's row op. */
typedef struct expect {
    const char *tensor, *into, *npu, *row;
} expect;

static void check_labels(const rd_model *m, const char *name, const char *npu, const char *row);

static void check_expect(const rd_model *m, const expect *e, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        check_value(m, e[k].tensor, e[k].into, e[k].into[0] != '\0');
        check_labels(m, e[k].tensor, e[k].npu, e[k].row);
    }
}

/* The NPU op of the group computing tensor name and the row op type of its producer. */
static void check_labels(const rd_model *m, const char *name, const char *npu, const char *row)
{
    const sim_node *n = producer_of(m, name);
    const char *got_npu = n->npu_op ? n->npu_op : "(none)", *got_row = n->row_op ? n->row_op : "(none)";
    if (strcmp(got_npu, npu) != 0 || strcmp(got_row, row) != 0)
        fprintf(stderr, "\n%s: NPU op %s, row %s; expected %s, %s\n", name, got_npu, got_row, npu, row);
    CU_ASSERT_STRING_EQUAL(got_npu, npu);
    CU_ASSERT_STRING_EQUAL(got_row, row);
}

static rd_onnx_builder *model(int opset, int64_t c)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, opset);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, c, 5, 5}, NULL);
    rd_onnx_add_input(b, "r", RD_DT_F32, 4, (const int64_t[]){1, c, 5, 5}, NULL);
    init_f32(b, "w", 4, (const int64_t[]){c, c, 3, 3}, 11, -0.5f, 0.5f);
    init_f32(b, "w2", 4, (const int64_t[]){c, c, 3, 3}, 12, -0.5f, 0.5f);
    init_f32(b, "bias", 1, (const int64_t[]){c}, 13, -0.5f, 0.5f);
    return b;
}

/* A 3x3 "same" Conv of x with weight w (and the shared bias). */
static void conv(rd_onnx_builder *b, const char *name, const char *x, const char *w, const char *y)
{
    rd_onnx_node *n =
        rd_onnx_add_node(b, "Conv", name, (const char *const[]){x, w, "bias"}, 3, (const char *const[]){y}, 1);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
}

/* The int64 initializer sq_axes = [2, 3]: a Squeeze of the spatial dims. */
static void spatial_axes(rd_onnx_builder *b)
{
    rd_tensor axes;
    rd_tensor_alloc(&axes, RD_DT_I64, 1, (const int64_t[]){2}, NULL);
    ((int64_t *)axes.data)[0] = 2;
    ((int64_t *)axes.data)[1] = 3;
    rd_onnx_add_initializer(b, "sq_axes", &axes, RD_ONNX_RAW);
    rd_tensor_fini(&axes);
}

static void output(rd_onnx_builder *b, const char *name)
{
    rd_onnx_add_output(b, name, RD_DT_F32, -1, NULL, NULL);
}

/* ---- SiLU ---------------------------------------------------------------------------------------- */

/* Conv -> Sigmoid -> Mul(conv, sigmoid): one ConvExSwish, neither the conv output nor the sigmoid materialised
   (both Mul operand orders). */
static void test_conv_exswish(void)
{
    for (int order = 0; order < 2; order++) {
        rd_onnx_builder *b = model(13, 3);
        conv(b, "conv", "x", "w", "c");
        node1(b, "Sigmoid", "sig", "c", "g");
        node2(b, "Mul", "mul", order ? "g" : "c", order ? "c" : "g", "y");
        output(b, "y");
        pair p = load_pair(b, 3);
        static const expect e[] = {{"c", "y", "ConvExSwish", "Conv"},
                                   {"g", "y", "ConvExSwish", "exSwish"},
                                   {"y", "", "ConvExSwish", "exSwish"}};
        check_expect(p.opt, e, 3);
        check_and_free(&p);
    }
}

/* replace_exswish without a conv (x * sigmoid(x) after an Add): an exSwish; the Add stays an Add. */
static void test_lone_exswish(void)
{
    rd_onnx_builder *b = model(13, 3);
    node2(b, "Add", "add", "x", "r", "a");
    node1(b, "Sigmoid", "sig", "a", "g");
    node2(b, "Mul", "mul", "a", "g", "y");
    output(b, "y");
    pair p = load_pair(b, 3);
    static const expect e[] = {
        {"a", "", "Add", "Add"}, {"g", "y", "exSwish", "exSwish"}, {"y", "", "exSwish", "exSwish"}};
    check_expect(p.opt, e, 3);
    check_and_free(&p);
}

/* Refusals: a sigmoid that is a graph output, a Mul by another tensor, a conv output read elsewhere too. */
static void test_exswish_refused(void)
{
    rd_onnx_builder *b = model(13, 3);
    node1(b, "Sigmoid", "sig1", "x", "g1"); /* g1 is a graph output */
    node2(b, "Mul", "mul1", "x", "g1", "y1");
    node1(b, "Sigmoid", "sig2", "x", "g2"); /* r * sigmoid(x) */
    node2(b, "Mul", "mul2", "r", "g2", "y2");
    conv(b, "conv", "r", "w", "c"); /* c also read by a Relu */
    node1(b, "Sigmoid", "sig3", "c", "g3");
    node2(b, "Mul", "mul3", "c", "g3", "y3");
    node1(b, "Relu", "relu", "c", "y4");
    output(b, "g1");
    output(b, "y1");
    output(b, "y2");
    output(b, "y3");
    output(b, "y4");
    pair p = load_pair(b, 3);
    check_value(p.opt, "g1", "", false);
    check_labels(p.opt, "y1", "Mul", "Mul");
    check_value(p.opt, "g2", "", false);
    check_labels(p.opt, "g2", "Sigmoid", "Sigmoid");
    check_value(p.opt, "c", "", false); /* the exSwish unit forms, the ConvExSwish does not */
    check_value(p.opt, "g3", "y3", true);
    check_labels(p.opt, "c", "Conv", "Conv");
    check_labels(p.opt, "y3", "exSwish", "exSwish");
    check_labels(p.opt, "y4", "Relu", "Relu");
    check_and_free(&p);
}

/* ---- residual Adds --------------------------------------------------------------------------------- */

/* ConvAdd, ConvAddRelu, ConvReluAdd and AddRelu, each as its own model. */
static void test_residual_groups(void)
{
    static const struct {
        const char *npu;
        const char *inner[2];
    } want[] = {
        {"ConvAdd", {"c", NULL}}, {"ConvAddRelu", {"c", "a"}}, {"ConvReluAdd", {"c", "a"}}, {"AddRelu", {"a", NULL}}};
    for (int k = 0; k < 4; k++) {
        rd_onnx_builder *b = model(13, 4);
        if (k == 0) {
            conv(b, "conv", "x", "w", "c");
            node2(b, "Add", "add", "c", "r", "y");
        } else if (k == 1) {
            conv(b, "conv", "x", "w", "c");
            node2(b, "Add", "add", "r", "c", "a");
            node1(b, "Relu", "relu", "a", "y");
        } else if (k == 2) {
            conv(b, "conv", "x", "w", "c");
            node1(b, "Relu", "relu", "c", "a");
            node2(b, "Add", "add", "a", "r", "y");
        } else {
            node2(b, "Add", "add", "x", "r", "a");
            node1(b, "Relu", "relu", "a", "y");
        }
        output(b, "y");
        pair p = load_pair(b, 3);
        for (int j = 0; j < 2 && want[k].inner[j]; j++) {
            check_value(p.opt, want[k].inner[j], "y", true);
            check_labels(p.opt, want[k].inner[j], want[k].npu, producer_of(p.opt, want[k].inner[j])->op_type);
        }
        check_value(p.opt, "y", "", false);
        check_value(p.opt, "r", "", false); /* the shortcut keeps its own tensor */
        check_labels(p.opt, "y", want[k].npu, producer_of(p.opt, "y")->op_type);
        check_and_free(&p);
    }
}

/* Add(conv_a, conv_b): the conv on input 0 is fused, whichever comes first in the graph. */
static void test_two_convs_into_add(void)
{
    for (int swap = 0; swap < 2; swap++) {
        rd_onnx_builder *b = model(13, 4);
        conv(b, "conv_b", "r", "w2", "cb");
        conv(b, "conv_a", "x", "w", "ca");
        node2(b, "Add", "add", swap ? "cb" : "ca", swap ? "ca" : "cb", "y");
        output(b, "y");
        pair p = load_pair(b, 3);
        const char *fused = swap ? "cb" : "ca", *kept = swap ? "ca" : "cb";
        check_value(p.opt, fused, "y", true);
        check_value(p.opt, kept, "", false);
        check_labels(p.opt, fused, "ConvAdd", "Conv");
        check_labels(p.opt, kept, "Conv", "Conv");
        check_labels(p.opt, "y", "ConvAdd", "Add");
        check_and_free(&p);
    }
}

/* Refusals: a conv output read twice, a shortcut that broadcasts, a constant other operand, a conv output
   that is a graph output, an Add after ConvExSwish (YOLOv8's C2f: the layer table keeps that Add). */
static void test_residual_refused(void)
{
    rd_onnx_builder *b = model(13, 4);
    rd_onnx_add_input(b, "small", RD_DT_F32, 4, (const int64_t[]){1, 4, 1, 1}, NULL);
    init_f32(b, "row", 1, (const int64_t[]){5}, 14, -1.0f, 1.0f);
    conv(b, "conv1", "x", "w", "c1"); /* read by the Add and a Relu */
    node2(b, "Add", "add1", "c1", "r", "y1");
    node1(b, "Relu", "relu1", "c1", "y1r");
    conv(b, "conv2", "x", "w2", "c2"); /* + [1,4,1,1]: broadcasts */
    node2(b, "Add", "add2", "c2", "small", "y2");
    conv(b, "conv3", "r", "w", "c3"); /* + a constant along W (level 2 leaves it: not per channel) */
    node2(b, "Add", "add3", "c3", "row", "y3");
    conv(b, "conv4", "r", "w2", "c4"); /* a graph output */
    node2(b, "Add", "add4", "c4", "x", "y4");
    conv(b, "conv5", "x", "w", "c5"); /* SiLU then a residual Add */
    node1(b, "Sigmoid", "sig5", "c5", "g5");
    node2(b, "Mul", "mul5", "c5", "g5", "s5");
    node2(b, "Add", "add5", "s5", "r", "y5");
    const char *outs[] = {"y1", "y1r", "y2", "y3", "c4", "y4", "y5"};
    for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++)
        output(b, outs[k]);
    pair p = load_pair(b, 3);
    check_value(p.opt, "c1", "", false);
    check_labels(p.opt, "y1", "Add", "Add");
    check_value(p.opt, "c2", "", false);
    check_value(p.opt, "c3", "", false);
    check_value(p.opt, "c4", "", false);
    check_labels(p.opt, "y4", "Add", "Add");
    check_value(p.opt, "c5", "s5", true);
    check_value(p.opt, "s5", "", false);
    check_labels(p.opt, "s5", "ConvExSwish", "exSwish");
    check_labels(p.opt, "y5", "Add", "Add");
    check_and_free(&p);
}

/* ---- activations and labels ----------------------------------------------------------------------- */

/* Gemm -> Relu is a ConvRelu with [Conv] rows; MatMul of a constant weight likewise, of two activations not;
   ConvTranspose fuses Relu but not Clip; Conv -> Gelu is ConvExGelu (opset 20). */
static void test_activations(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 20);
    rd_onnx_add_input(b, "v", RD_DT_F32, 2, (const int64_t[]){2, 4}, NULL);
    rd_onnx_add_input(b, "u", RD_DT_F32, 2, (const int64_t[]){4, 4}, NULL);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 2, 4, 4}, NULL);
    init_f32(b, "gw", 2, (const int64_t[]){4, 4}, 20, -1.0f, 1.0f);
    init_f32(b, "wt", 4, (const int64_t[]){2, 2, 2, 2}, 21, -1.0f, 1.0f);
    init_f32(b, "w", 4, (const int64_t[]){2, 2, 1, 1}, 22, -1.0f, 1.0f);
    init_f32(b, "lo", 0, NULL, 23, 0.0f, 0.0f);
    init_f32(b, "hi", 0, NULL, 24, 6.0f, 6.0f);
    node2(b, "Gemm", "gemm", "v", "gw", "g1");
    node1(b, "Relu", "relu1", "g1", "a1");
    node2(b, "MatMul", "mm", "a1", "gw", "g2");
    node1(b, "Relu", "relu2", "g2", "a2");
    node2(b, "MatMul", "mm_act", "a2", "u", "g3");
    node1(b, "Relu", "relu3", "g3", "a3");
    node2(b, "ConvTranspose", "convt", "x", "wt", "t1");
    node1(b, "Relu", "relu4", "t1", "a4");
    node2(b, "ConvTranspose", "convt2", "x", "wt", "t2");
    rd_onnx_add_node(b, "Clip", "clip", (const char *const[]){"t2", "lo", "hi"}, 3, (const char *const[]){"a5"}, 1);
    node2(b, "Conv", "conv", "x", "w", "c6");
    node1(b, "Gelu", "gelu", "c6", "a6");
    const char *outs[] = {"a3", "a4", "a5", "a6"};
    for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++)
        output(b, outs[k]);
    pair p = load_pair(b, 3);
    check_value(p.opt, "g1", "a1", true);
    check_labels(p.opt, "g1", "ConvRelu", "Conv");
    check_value(p.opt, "g2", "a2", true);
    check_labels(p.opt, "a2", "ConvRelu", "Relu");
    check_value(p.opt, "g3", "", false);
    check_labels(p.opt, "g3", "MatMul", "MatMul");
    check_value(p.opt, "t1", "a4", true);
    check_labels(p.opt, "a4", "ConvTransposeRelu", "Relu");
    check_value(p.opt, "t2", "", false);
    check_value(p.opt, "c6", "a6", true);
    check_labels(p.opt, "a6", "ConvExGelu", "exGelu");
    check_and_free(&p);
}

/* Squeeze prints as Reshape, Softmax over the last axis as exSoftmax13 (over another axis: Softmax),
   GlobalAveragePool as a Conv (lowered); level 2 leaves every label and group alone. */
static void test_rewrite_labels(void)
{
    for (int level = 2; level <= 3; level++) {
        rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
        rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 4, 4}, NULL);
        init_f32(b, "w", 4, (const int64_t[]){3, 3, 1, 1}, 30, -1.0f, 1.0f);
        node1(b, "GlobalAveragePool", "gap", "x", "p");
        rd_onnx_node *sm = node1(b, "Softmax", "sm_c", "x", "s1");
        rd_onnx_attr_int(sm, "axis", 1);
        node1(b, "Softmax", "sm_last", "s1", "s2");
        spatial_axes(b);
        node2(b, "Squeeze", "squeeze", "p", "sq_axes", "q");
        node2(b, "Conv", "conv", "x", "w", "c");
        node1(b, "Sigmoid", "sig", "c", "y");
        output(b, "q");
        output(b, "s2");
        output(b, "y");
        pair p = load_pair(b, level);
        const int gap = value(p.opt, "p")->producer;
        if (level == 2) {
            CU_ASSERT_PTR_NULL(p.opt->nodes[gap].row_op);
            CU_ASSERT_FALSE(p.opt->nodes[gap].lowered);
            check_value(p.opt, "c", "", false);
        } else {
            CU_ASSERT_TRUE(p.opt->nodes[gap].lowered);
            check_labels(p.opt, "p", "Conv", "Conv");
            check_labels(p.opt, "q", "Reshape", "Reshape");
            check_labels(p.opt, "s1", "Softmax", "Softmax");
            check_labels(p.opt, "s2", "exSoftmax13", "exSoftmax13");
            check_value(p.opt, "c", "y", true);
            check_labels(p.opt, "y", "ConvSigmoid", "Sigmoid");
        }
        check_and_free(&p);
    }
}

/* ---- a YOLOv8n-like graph against its public layer table ------------------------------------------ */

/* Conv + SiLU (Sigmoid, Mul) writing y. */
static void conv_silu(rd_onnx_builder *b, const char *p, const char *x, const char *w, const char *y)
{
    char c[48], g[48], cn[48], sn[48], mn[48];
    snprintf(c, sizeof c, "%s_c", p);
    snprintf(g, sizeof g, "%s_g", p);
    snprintf(cn, sizeof cn, "%s/conv/Conv", p);
    snprintf(sn, sizeof sn, "%s/act/Sigmoid", p);
    snprintf(mn, sizeof mn, "%s/act/Mul", p);
    conv(b, cn, x, w, c);
    node1(b, "Sigmoid", sn, c, g);
    node2(b, "Mul", mn, c, g, y);
}

/* A C2f block (Split, a bottleneck of two Conv-SiLU with its shortcut Add, Concat, Conv-SiLU), an SPPF (three
   MaxPool, Concat), an upsampling Resize and a detect head's class branch (Conv -> Sigmoid): the op types of
   ../shared/rknn/logs/log-yolov8n-rk3588-runtime-layer-table.txt (ConvExSwish, Split, Add not fused after a
   ConvExSwish, Concat, MaxPool, Resize, ConvSigmoid). */
static void test_yolov8_like(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "images", RD_DT_F32, 4, (const int64_t[]){1, 4, 8, 8}, NULL);
    init_f32(b, "w4", 4, (const int64_t[]){4, 4, 3, 3}, 40, -0.5f, 0.5f);
    init_f32(b, "w2", 4, (const int64_t[]){2, 2, 3, 3}, 41, -0.5f, 0.5f);
    init_f32(b, "w6", 4, (const int64_t[]){4, 6, 3, 3}, 42, -0.5f, 0.5f);
    init_f32(b, "w16", 4, (const int64_t[]){4, 16, 3, 3}, 43, -0.5f, 0.5f);
    init_f32(b, "bias", 1, (const int64_t[]){4}, 44, -0.5f, 0.5f);
    init_f32(b, "bias2", 1, (const int64_t[]){2}, 45, -0.5f, 0.5f);
    rd_tensor split;
    rd_tensor_alloc(&split, RD_DT_I64, 1, (const int64_t[]){2}, NULL);
    ((int64_t *)split.data)[0] = ((int64_t *)split.data)[1] = 2;
    rd_onnx_add_initializer(b, "split", &split, RD_ONNX_RAW);
    rd_tensor_fini(&split);
    rd_tensor scales;
    rd_tensor_alloc(&scales, RD_DT_F32, 1, (const int64_t[]){4}, NULL);
    const float sc[4] = {1, 1, 2, 2};
    memcpy(scales.data, sc, sizeof sc);
    rd_onnx_add_initializer(b, "scales", &scales, RD_ONNX_RAW);
    rd_tensor_fini(&scales);
    conv_silu(b, "/model.0", "images", "w4", "x0");
    rd_onnx_node *sp = rd_onnx_add_node(b, "Split", "/model.2/Split", (const char *const[]){"x0", "split"}, 2,
                                        (const char *const[]){"s0", "s1"}, 2);
    rd_onnx_attr_int(sp, "axis", 1);
    /* the bottleneck's convs have 2 channels: their own weights and bias */
    for (int k = 0; k < 2; k++) {
        char name[32], cn[48], sn[48], mn[48], g[48], c[48];
        snprintf(name, sizeof name, "/model.2/m.0/cv%d", k + 1);
        snprintf(cn, sizeof cn, "%s/conv/Conv", name);
        snprintf(sn, sizeof sn, "%s/act/Sigmoid", name);
        snprintf(mn, sizeof mn, "%s/act/Mul", name);
        snprintf(c, sizeof c, "%s_c", name);
        snprintf(g, sizeof g, "%s_g", name);
        rd_onnx_node *n = rd_onnx_add_node(b, "Conv", cn, (const char *const[]){k ? "b1" : "s1", "w2", "bias2"}, 3,
                                           (const char *const[]){c}, 1);
        rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
        node1(b, "Sigmoid", sn, c, g);
        node2(b, "Mul", mn, c, g, k ? "b2" : "b1");
    }
    node2(b, "Add", "/model.2/m.0/Add", "s1", "b2", "res");
    rd_onnx_node *cat = rd_onnx_add_node(b, "Concat", "/model.2/Concat", (const char *const[]){"s0", "s1", "res"}, 3,
                                         (const char *const[]){"cat"}, 1);
    rd_onnx_attr_int(cat, "axis", 1);
    conv_silu(b, "/model.2/cv2", "cat", "w6", "x2");
    const char *prev = "x2";
    char pools[3][16];
    for (int k = 0; k < 3; k++) {
        snprintf(pools[k], sizeof pools[k], "pool%d", k);
        rd_onnx_node *mp = node1(b, "MaxPool", pools[k], prev, pools[k]);
        rd_onnx_attr_ints(mp, "kernel_shape", (const int64_t[]){5, 5}, 2);
        rd_onnx_attr_ints(mp, "pads", (const int64_t[]){2, 2, 2, 2}, 4);
        prev = pools[k];
    }
    rd_onnx_node *cat2 =
        rd_onnx_add_node(b, "Concat", "/model.9/Concat", (const char *const[]){"x2", "pool0", "pool1", "pool2"}, 4,
                         (const char *const[]){"sppf"}, 1);
    rd_onnx_attr_int(cat2, "axis", 1);
    conv_silu(b, "/model.9/cv2", "sppf", "w16", "x9");
    rd_onnx_node *rs = rd_onnx_add_node(b, "Resize", "/model.10/Resize", (const char *const[]){"x9", "", "scales"}, 3,
                                        (const char *const[]){"up"}, 1);
    rd_onnx_attr_string(rs, "mode", "nearest");
    conv(b, "/model.22/cv3.0/cv3.0.2/Conv", "up", "w4", "cls_c");
    node1(b, "Sigmoid", "/model.22/Sigmoid", "cls_c", "cls");
    output(b, "cls");
    pair p = load_pair(b, 3);
    CU_ASSERT_EQUAL(groups_of(p.opt, "ConvExSwish"), 5);
    CU_ASSERT_EQUAL(groups_of(p.opt, "Split"), 1);
    CU_ASSERT_EQUAL(groups_of(p.opt, "Add"), 1);
    CU_ASSERT_EQUAL(groups_of(p.opt, "Concat"), 2);
    CU_ASSERT_EQUAL(groups_of(p.opt, "MaxPool"), 3);
    CU_ASSERT_EQUAL(groups_of(p.opt, "Resize"), 1);
    CU_ASSERT_EQUAL(groups_of(p.opt, "ConvSigmoid"), 1);
    CU_ASSERT_EQUAL(groups_of(p.opt, "exSwish"), 0);
    check_value(p.opt, "b2", "", false); /* the bottleneck's output feeds the shortcut Add unfused */
    check_and_free(&p);
}

/* MobileNetV1's tail as the RV1106 build log shows it (../shared/rknn/logs/log-mobilenetv1-tflite-rv1106-
   build-1.5.2.txt): Conv + Relu6 -> ConvClip, the average pool -> Conv, the 1x1 classifier -> Conv, the squeeze
   -> Reshape, the softmax over the classes -> exSoftmax13. */
static void test_mobilenetv1_tail(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 4, 7, 7}, NULL);
    init_f32(b, "w", 4, (const int64_t[]){4, 4, 3, 3}, 50, -0.5f, 0.5f);
    init_f32(b, "wc", 4, (const int64_t[]){5, 4, 1, 1}, 51, -0.5f, 0.5f);
    init_f32(b, "lo", 0, NULL, 52, 0.0f, 0.0f);
    init_f32(b, "hi", 0, NULL, 53, 6.0f, 6.0f);
    spatial_axes(b);
    rd_onnx_node *c = node2(b, "Conv", "Conv2d_13_pointwise", "x", "w", "c");
    rd_onnx_attr_ints(c, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_node(b, "Clip", "Relu6", (const char *const[]){"c", "lo", "hi"}, 3, (const char *const[]){"r"}, 1);
    node1(b, "GlobalAveragePool", "AvgPool", "r", "p");
    node2(b, "Conv", "Conv2d_1c_1x1", "p", "wc", "l");
    node2(b, "Squeeze", "SpatialSqueeze", "l", "sq_axes", "q");
    node1(b, "Softmax", "Predictions", "q", "prob");
    output(b, "prob");
    pair pr = load_pair(b, 3);
    static const char *const want[] = {"ConvClip", "Conv", "Conv", "Reshape", "exSoftmax13"};
    static const char *const tensors[] = {"r", "p", "l", "q", "prob"};
    for (int k = 0; k < 5; k++)
        check_labels(pr.opt, tensors[k], want[k], k == 0 ? "Clip" : want[k]);
    CU_ASSERT_EQUAL(groups_of(pr.opt, "Conv"), 2);
    check_value(pr.opt, "c", "r", true);
    check_and_free(&pr);
}

RD_TEST_REGISTER(register_passes_rknn)
{
    RD_SUITE("passes_rknn", {"Conv + SiLU: ConvExSwish", test_conv_exswish}, {"lone SiLU: exSwish", test_lone_exswish},
             {"exSwish refusals", test_exswish_refused},
             {"ConvAdd, ConvAddRelu, ConvReluAdd, AddRelu", test_residual_groups},
             {"two convs into one Add", test_two_convs_into_add}, {"residual refusals", test_residual_refused},
             {"activations after Gemm, MatMul, ConvTranspose, Conv", test_activations},
             {"Reshape, exSoftmax13, GlobalAveragePool as Conv; level 2", test_rewrite_labels},
             {"a YOLOv8n-like graph: the op types of its layer table", test_yolov8_like},
             {"MobileNetV1's tail: the op types of the RV1106 build table", test_mobilenetv1_tail});
}

/*
 * test_passes.c: the compiler passes (simulator/src/passes*.c) on small models built with the ONNX
 * writer. Each model is loaded twice; one copy goes through sim_passes_apply and both run on the same
 * seeded inputs: outputs must match exactly (levels 0, 1, 3: nothing is recomputed) or to float
 * rounding of the folded weights (level 2). The rewrites themselves are checked through node counts,
 * fused_into and virtual_out, and every refusal case keeps the graph as it was.
 */
#include "passes_test_util.h"

/* ---- level checks ------------------------------------------------------------------------------ */

static rd_onnx_builder *conv_bn_relu_model(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 6, 6}, NULL);
    init_f32(b, "w", 4, (const int64_t[]){4, 3, 3, 3}, 1, -1.0f, 1.0f);
    init_f32(b, "bias", 1, (const int64_t[]){4}, 2, -1.0f, 1.0f);
    bn_params(b, "bn", 4, 3);
    rd_onnx_node *c =
        rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w", "bias"}, 3, (const char *const[]){"c"}, 1);
    rd_onnx_attr_ints(c, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    node1(b, "Identity", "id", "c", "c_id");
    bn_node(b, "bn", "c_id", "bn", "n");
    node1(b, "Relu", "relu", "n", "y");
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    return b;
}

static void test_levels(void)
{
    static const int nodes_at[4] = {4, 3, 2, 2};
    for (int level = 0; level <= 3; level++) {
        pair p = load_pair(conv_bn_relu_model(), level);
        CU_ASSERT_EQUAL(p.opt->n_nodes, nodes_at[level]);
        CU_ASSERT_EQUAL(count_op(p.opt, "BatchNormalization"), level >= 2 ? 0 : 1);
        check_value(p.opt, "c_id", level >= 1 ? "c" : "", false);
        check_value(p.opt, "c", level >= 2 ? "n" : "", false);
        check_value(p.opt, "n", level >= 3 ? "y" : "", level >= 3);
        if (level >= 2) {
            CU_ASSERT(sim_model_find(p.opt, "c_folded_w") >= 0);
            CU_ASSERT(sim_model_find(p.opt, "c_folded_b") >= 0);
            CU_ASSERT_EQUAL(value(p.opt, "n")->producer, 0);
            CU_ASSERT_EQUAL(value(p.opt, "c")->producer, -1);
        }
        check_consistent(p.opt);
        check_same_outputs(&p, level != 2 && level != 3);
        pair_free(&p);
    }
}

static void test_bad_level(void)
{
    pair p = load_pair(conv_bn_relu_model(), 0);
    rd_error err;
    CU_ASSERT_EQUAL(sim_passes_apply(p.opt, 4, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "optimization level 4"));
    CU_ASSERT_EQUAL(sim_passes_apply(p.opt, -1, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(p.opt->n_nodes, 4);
    /* applying a level twice changes nothing more */
    CU_ASSERT_EQUAL(sim_passes_apply(p.opt, 3, &err), RD_OK);
    CU_ASSERT_EQUAL(sim_passes_apply(p.opt, 3, &err), RD_OK);
    CU_ASSERT_EQUAL(p.opt->n_nodes, 2);
    check_value(p.opt, "n", "y", true);
    check_consistent(p.opt);
    check_same_outputs(&p, false);
    pair_free(&p);
}

/* ---- level 1 ---------------------------------------------------------------------------------- */

static void test_identity(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){2, 3}, NULL);
    init_f32(b, "k", 2, (const int64_t[]){2, 3}, 5, -1.0f, 1.0f);
    node1(b, "Identity", "id1", "x", "a");
    node1(b, "Identity", "id2", "a", "b");
    node2(b, "Add", "add", "b", "a", "s");
    node1(b, "Identity", "id_out", "s", "y1"); /* a graph output: kept */
    node2(b, "Mul", "mul", "s", "b", "y2");
    node1(b, "Identity", "id_const", "k", "kc"); /* folded at load: left alone */
    node2(b, "Add", "add_k", "y2", "kc", "y3");
    rd_onnx_add_output(b, "y1", RD_DT_F32, -1, NULL, NULL);
    rd_onnx_add_output(b, "y3", RD_DT_F32, -1, NULL, NULL);
    pair p = load_pair(b, 1);
    CU_ASSERT_EQUAL(p.opt->n_nodes, 5);
    CU_ASSERT_EQUAL(count_op(p.opt, "Identity"), 2);
    check_value(p.opt, "a", "x", false);
    check_value(p.opt, "b", "x", false);
    check_value(p.opt, "y1", "", false);
    check_value(p.opt, "kc", "", false);
    CU_ASSERT_EQUAL(value(p.opt, "a")->producer, -1);
    CU_ASSERT(value(p.opt, "y1")->producer >= 0);
    const sim_node *add = &p.opt->nodes[0];
    CU_ASSERT_STRING_EQUAL(add->name, "add");
    CU_ASSERT_EQUAL(add->in[0], sim_model_find(p.opt, "x"));
    CU_ASSERT_EQUAL(add->in[1], sim_model_find(p.opt, "x"));
    check_consistent(p.opt);
    check_same_outputs(&p, true);
    pair_free(&p);
}

/* Dropout at opset 13: removed without training_mode or with a constant false one; kept when training
   with ratio 0, when its mask is read by a node, or when the mask is a graph output. */
static void test_dropout_13(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){2, 3}, NULL);
    init_f32(b, "ratio", 0, NULL, 7, 0.2f, 0.3f);
    init_f32(b, "zero", 0, NULL, 7, 0.0f, 0.0f);
    init_bool(b, "no", false);
    init_bool(b, "yes", true);
    node1(b, "Dropout", "d_plain", "x", "a");
    rd_onnx_add_node(b, "Dropout", "d_false", (const char *const[]){"a", "ratio", "no"}, 3,
                     (const char *const[]){"b", "b_mask"}, 2);
    rd_onnx_add_node(b, "Dropout", "d_train0", (const char *const[]){"b", "zero", "yes"}, 3, (const char *const[]){"c"},
                     1);
    rd_onnx_add_node(b, "Dropout", "d_mask_read", (const char *const[]){"c"}, 1, (const char *const[]){"d", "d_mask"},
                     2);
    rd_onnx_node *cast = node1(b, "Cast", "cast", "d_mask", "d_maskf");
    rd_onnx_attr_int(cast, "to", 1);
    node2(b, "Add", "add", "d", "d_maskf", "e");
    rd_onnx_add_node(b, "Dropout", "d_mask_out", (const char *const[]){"e"}, 1, (const char *const[]){"f", "f_mask"},
                     2);
    node1(b, "Relu", "relu", "f", "y");
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    rd_onnx_add_output(b, "f_mask", RD_DT_BOOL, -1, NULL, NULL);
    pair p = load_pair(b, 1);
    CU_ASSERT_EQUAL(count_op(p.opt, "Dropout"), 3);
    check_value(p.opt, "a", "x", false);
    check_value(p.opt, "b", "x", false);
    CU_ASSERT_EQUAL(value(p.opt, "b_mask")->producer, -1);
    check_value(p.opt, "c", "", false);
    check_value(p.opt, "d", "", false);
    check_value(p.opt, "f", "", false);
    CU_ASSERT_STRING_EQUAL(p.opt->nodes[0].name, "d_train0");
    CU_ASSERT_EQUAL(p.opt->nodes[0].in[0], sim_model_find(p.opt, "x"));
    check_consistent(p.opt);
    check_same_outputs(&p, true);
    pair_free(&p);
}

/* Dropout at opset 10: ratio is an attribute, the mask an unread output. */
static void test_dropout_10(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(6, 10);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){2, 3}, NULL);
    rd_onnx_node *d =
        rd_onnx_add_node(b, "Dropout", "drop", (const char *const[]){"x"}, 1, (const char *const[]){"a", "mask"}, 2);
    rd_onnx_attr_float(d, "ratio", 0.4f);
    node1(b, "Sigmoid", "sig", "a", "y");
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    pair p = load_pair(b, 1);
    CU_ASSERT_EQUAL(p.opt->n_nodes, 1);
    check_value(p.opt, "a", "x", false);
    check_consistent(p.opt);
    check_same_outputs(&p, true);
    pair_free(&p);
}

/* ---- level 2 ---------------------------------------------------------------------------------- */

/* Conv without bias, grouped conv, depthwise conv with bias, and a BN chain folded twice. */
static void test_bn_conv_variants(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 15);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){2, 4, 5, 5}, NULL);
    init_f32(b, "w1", 4, (const int64_t[]){6, 4, 1, 1}, 10, -1.0f, 1.0f);
    init_f32(b, "w2", 4, (const int64_t[]){6, 3, 3, 3}, 11, -1.0f, 1.0f);
    init_f32(b, "w3", 4, (const int64_t[]){6, 1, 3, 3}, 12, -1.0f, 1.0f);
    init_f32(b, "b3", 1, (const int64_t[]){6}, 13, -1.0f, 1.0f);
    bn_params(b, "p1", 6, 20);
    bn_params(b, "p2", 6, 30);
    bn_params(b, "p3", 6, 40);
    bn_params(b, "p4", 6, 50);
    node2(b, "Conv", "conv1", "x", "w1", "c1");
    bn_node(b, "bn1", "c1", "p1", "n1");
    rd_onnx_node *g = node2(b, "Conv", "conv2", "n1", "w2", "c2");
    rd_onnx_attr_int(g, "group", 2);
    rd_onnx_attr_ints(g, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    bn_node(b, "bn2", "c2", "p2", "n2");
    rd_onnx_node *dw = rd_onnx_add_node(b, "Conv", "conv3", (const char *const[]){"n2", "w3", "b3"}, 3,
                                        (const char *const[]){"c3"}, 1);
    rd_onnx_attr_int(dw, "group", 6);
    rd_onnx_node *bn = bn_node(b, "bn3", "c3", "p3", "n3");
    rd_onnx_attr_float(bn, "epsilon", 1e-3f);
    bn_node(b, "bn4", "n3", "p4", "y");
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    pair p = load_pair(b, 2);
    CU_ASSERT_EQUAL(p.opt->n_nodes, 3);
    CU_ASSERT_EQUAL(count_op(p.opt, "BatchNormalization"), 0);
    check_value(p.opt, "c1", "n1", false);
    check_value(p.opt, "c2", "n2", false);
    check_value(p.opt, "c3", "n3", false);
    check_value(p.opt, "n3", "y", false);
    /* the second fold works on the first one's constants */
    CU_ASSERT(sim_model_find(p.opt, "n3_folded_w") >= 0);
    CU_ASSERT_EQUAL(p.opt->nodes[2].in[1], sim_model_find(p.opt, "n3_folded_w"));
    CU_ASSERT_EQUAL(p.opt->nodes[0].n_in, 3);
    CU_ASSERT_EQUAL(p.opt->nodes[0].in[2], sim_model_find(p.opt, "c1_folded_b"));
    check_consistent(p.opt);
    check_same_outputs(&p, false);
    pair_free(&p);
}

/* Two convs share one weight; only one is followed by a BN: the shared initializer stays untouched. */
static void test_bn_shared_weight(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 4, 4}, NULL);
    init_f32(b, "w", 4, (const int64_t[]){3, 3, 1, 1}, 60, -1.0f, 1.0f);
    bn_params(b, "p", 3, 61);
    node2(b, "Conv", "conv_a", "x", "w", "ca");
    bn_node(b, "bn", "ca", "p", "na");
    node2(b, "Conv", "conv_b", "na", "w", "y");
    /* a value already named like the folded weight: the new one gets another name */
    init_f32(b, "ca_folded_w", 1, (const int64_t[]){1}, 62, 0.0f, 1.0f);
    node2(b, "Add", "add", "y", "ca_folded_w", "z");
    rd_onnx_add_output(b, "z", RD_DT_F32, -1, NULL, NULL);
    pair p = load_pair(b, 2);
    CU_ASSERT_EQUAL(count_op(p.opt, "BatchNormalization"), 0);
    int w = sim_model_find(p.opt, "w");
    CU_ASSERT_EQUAL(p.opt->nodes[1].in[1], w);
    CU_ASSERT_EQUAL(p.opt->nodes[0].in[1], sim_model_find(p.opt, "ca_folded_w_2"));
    const rd_tensor *orig = rd_model_constant(p.ref, (size_t)sim_model_find(p.ref, "w"));
    CU_ASSERT_EQUAL(memcmp(orig->data, p.opt->values[w].konst->data, rd_tensor_nbytes(orig)), 0);
    check_consistent(p.opt);
    check_same_outputs(&p, false);
    pair_free(&p);
}

/* Refusals: a conv read by two nodes, a conv output that is a graph output, a BN with a non-constant
   mean, a BN after a Relu, a conv with a non-constant weight. */
static void test_bn_refused(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 2, 3, 3}, NULL);
    rd_onnx_add_input(b, "mean", RD_DT_F32, 1, (const int64_t[]){2}, NULL);
    rd_onnx_add_input(b, "wx", RD_DT_F32, 4, (const int64_t[]){2, 2, 1, 1}, NULL);
    init_f32(b, "w", 4, (const int64_t[]){2, 2, 1, 1}, 70, -1.0f, 1.0f);
    bn_params(b, "p", 2, 71);
    node2(b, "Conv", "conv_shared", "x", "w", "c1");
    bn_node(b, "bn_shared", "c1", "p", "n1");
    node2(b, "Add", "add", "n1", "c1", "s1");      /* c1 read twice */
    node2(b, "Conv", "conv_out", "s1", "w", "c2"); /* c2 is a graph output */
    bn_node(b, "bn_out", "c2", "p", "n2");
    node2(b, "Conv", "conv_mean", "n2", "w", "c3");
    rd_onnx_add_node(b, "BatchNormalization", "bn_mean", (const char *const[]){"c3", "p_s", "p_b", "mean", "p_v"}, 5,
                     (const char *const[]){"n3"}, 1);
    node1(b, "Relu", "relu", "n3", "r");
    bn_node(b, "bn_relu", "r", "p", "n4");
    node2(b, "Conv", "conv_wx", "n4", "wx", "c5");
    bn_node(b, "bn_wx", "c5", "p", "y");
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    rd_onnx_add_output(b, "c2", RD_DT_F32, -1, NULL, NULL);
    pair p = load_pair(b, 2);
    CU_ASSERT_EQUAL(count_op(p.opt, "BatchNormalization"), 5);
    CU_ASSERT_EQUAL(p.opt->n_nodes, p.ref->n_nodes);
    for (int v = 0; v < p.opt->n_values; v++)
        CU_ASSERT_EQUAL(p.opt->values[v].fused_into, -1);
    check_consistent(p.opt);
    check_same_outputs(&p, true);
    pair_free(&p);
}

/* Gemm with transB 0 and 1, C [N] or absent, alpha != 1; refused with a C of shape [1, N]. */
static void test_bn_gemm(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){3, 4}, NULL);
    init_f32(b, "b0", 2, (const int64_t[]){4, 5}, 80, -1.0f, 1.0f); /* [K, N] */
    init_f32(b, "c0", 1, (const int64_t[]){5}, 81, -1.0f, 1.0f);
    init_f32(b, "b1", 2, (const int64_t[]){4, 5}, 82, -1.0f, 1.0f); /* [N, K] with transB */
    init_f32(b, "b2", 2, (const int64_t[]){4, 4}, 83, -1.0f, 1.0f);
    init_f32(b, "c2", 2, (const int64_t[]){1, 4}, 84, -1.0f, 1.0f);
    bn_params(b, "p5", 5, 85);
    bn_params(b, "p4", 4, 86);
    rd_onnx_add_node(b, "Gemm", "g0", (const char *const[]){"x", "b0", "c0"}, 3, (const char *const[]){"m0"}, 1);
    bn_node(b, "bn0", "m0", "p5", "n0");
    rd_onnx_node *g1 =
        rd_onnx_add_node(b, "Gemm", "g1", (const char *const[]){"n0", "b1"}, 2, (const char *const[]){"m1"}, 1);
    rd_onnx_attr_int(g1, "transB", 1);
    rd_onnx_attr_float(g1, "alpha", 0.5f);
    bn_node(b, "bn1", "m1", "p4", "n1");
    rd_onnx_add_node(b, "Gemm", "g2", (const char *const[]){"n1", "b2"}, 2, (const char *const[]){"m2"}, 1);
    bn_node(b, "bn2", "m2", "p4", "n2");
    rd_onnx_add_node(b, "Gemm", "g3", (const char *const[]){"n2", "b2", "c2"}, 3, (const char *const[]){"m3"}, 1);
    bn_node(b, "bn3", "m3", "p4", "y");
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    pair p = load_pair(b, 2);
    CU_ASSERT_EQUAL(count_op(p.opt, "BatchNormalization"), 1);
    check_value(p.opt, "m0", "n0", false);
    check_value(p.opt, "m1", "n1", false);
    check_value(p.opt, "m2", "n2", false);
    check_value(p.opt, "m3", "", false);
    CU_ASSERT_EQUAL(p.opt->nodes[1].n_in, 3);
    CU_ASSERT_EQUAL(p.opt->nodes[1].in[2], sim_model_find(p.opt, "m1_folded_b"));
    check_consistent(p.opt);
    check_same_outputs(&p, false);
    pair_free(&p);
}

/* Gemm with beta 0.5 followed by a BN: refused. */
static void test_bn_gemm_beta(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){3, 4}, NULL);
    init_f32(b, "w", 2, (const int64_t[]){4, 4}, 90, -1.0f, 1.0f);
    init_f32(b, "c", 1, (const int64_t[]){4}, 91, -1.0f, 1.0f);
    bn_params(b, "p", 4, 92);
    rd_onnx_node *g =
        rd_onnx_add_node(b, "Gemm", "g", (const char *const[]){"x", "w", "c"}, 3, (const char *const[]){"m"}, 1);
    rd_onnx_attr_float(g, "beta", 0.5f);
    bn_node(b, "bn", "m", "p", "y");
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    pair p = load_pair(b, 3);
    CU_ASSERT_EQUAL(count_op(p.opt, "BatchNormalization"), 1);
    check_value(p.opt, "m", "", false);
    check_consistent(p.opt);
    check_same_outputs(&p, true);
    pair_free(&p);
}

/* ---- level 2: bias Adds --------------------------------------------------------------------- */

/* Conv (no bias) + Add [C,1,1]; Conv (bias) - [1,C,1,1]; scalar + ConvTranspose; Add -> BN -> Add chain. */
static void test_bias_conv_variants(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 5, 5}, NULL);
    init_f32(b, "w0", 4, (const int64_t[]){4, 3, 3, 3}, 110, -1.0f, 1.0f);
    init_f32(b, "a0", 3, (const int64_t[]){4, 1, 1}, 111, -1.0f, 1.0f);
    init_f32(b, "w1", 4, (const int64_t[]){4, 4, 1, 1}, 112, -1.0f, 1.0f);
    init_f32(b, "b1", 1, (const int64_t[]){4}, 113, -1.0f, 1.0f);
    init_f32(b, "a1", 4, (const int64_t[]){1, 4, 1, 1}, 114, -1.0f, 1.0f);
    init_f32(b, "wt", 4, (const int64_t[]){4, 2, 2, 2}, 115, -1.0f, 1.0f); /* ConvTranspose: 2 outputs */
    init_f32(b, "s", 0, NULL, 116, -1.0f, 1.0f);
    init_f32(b, "w3", 4, (const int64_t[]){3, 2, 1, 1}, 117, -1.0f, 1.0f);
    init_f32(b, "a3", 1, (const int64_t[]){6}, 118, -1.0f, 1.0f);
    init_f32(b, "a4", 3, (const int64_t[]){3, 1, 1}, 119, -1.0f, 1.0f);
    bn_params(b, "p3", 3, 120);
    rd_onnx_node *c0 =
        rd_onnx_add_node(b, "Conv", "c0", (const char *const[]){"x", "w0"}, 2, (const char *const[]){"m0"}, 1);
    rd_onnx_attr_ints(c0, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    node2(b, "Add", "add0", "m0", "a0", "y0");
    rd_onnx_add_node(b, "Conv", "c1", (const char *const[]){"y0", "w1", "b1"}, 3, (const char *const[]){"m1"}, 1);
    node2(b, "Sub", "sub1", "m1", "a1", "y1");
    rd_onnx_add_node(b, "ConvTranspose", "ct", (const char *const[]){"y1", "wt"}, 2, (const char *const[]){"m2"}, 1);
    node2(b, "Add", "add2", "s", "m2", "y2"); /* constant first */
    rd_onnx_add_node(b, "Conv", "c3", (const char *const[]){"y2", "w3"}, 2, (const char *const[]){"m3"}, 1);
    node2(b, "Add", "add3", "m3", "a3", "y3"); /* [6] on a 4-D output: along the width, not the channels */
    rd_onnx_add_node(b, "Conv", "c4", (const char *const[]){"y2", "w3"}, 2, (const char *const[]){"m4"}, 1);
    node2(b, "Add", "add4", "m4", "a4", "y4");
    bn_node(b, "bn4", "y4", "p3", "n4");
    node2(b, "Add", "add5", "n4", "a4", "y5");
    node2(b, "Add", "join", "y3", "y5", "y");
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    pair p = load_pair(b, 2);
    check_value(p.opt, "m0", "y0", false);
    check_value(p.opt, "m1", "y1", false);
    check_value(p.opt, "m2", "y2", false);
    check_value(p.opt, "m3", "", false); /* refused: a3 would broadcast along the width */
    check_value(p.opt, "m4", "y4", false);
    check_value(p.opt, "y4", "n4", false); /* the BN folded after the bias */
    check_value(p.opt, "n4", "y5", false); /* and the Add after the BN */
    CU_ASSERT_EQUAL(count_op(p.opt, "Sub"), 0);
    CU_ASSERT_EQUAL(count_op(p.opt, "Add"), 2); /* add3 and join */
    CU_ASSERT_EQUAL(count_op(p.opt, "BatchNormalization"), 0);
    CU_ASSERT(sim_model_find(p.opt, "m0_folded_b") >= 0);
    check_consistent(p.opt);
    check_same_outputs(&p, false);
    pair_free(&p);
}

/* MatMul [M,K] x constant [K,N] + [N] becomes a Gemm; Gemm + [1,N]; refusals: a MatMul whose weight is not
   constant, an Add of two activations, a Conv output that is also a graph output, Gemm with beta 0.5. */
static void test_bias_matmul_gemm(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){3, 4}, NULL);
    rd_onnx_add_input(b, "z", RD_DT_F32, 2, (const int64_t[]){4, 4}, NULL);
    init_f32(b, "k", 2, (const int64_t[]){4, 4}, 130, -1.0f, 1.0f);
    init_f32(b, "a", 1, (const int64_t[]){4}, 131, -1.0f, 1.0f);
    init_f32(b, "a2", 2, (const int64_t[]){1, 4}, 132, -1.0f, 1.0f);
    node2(b, "MatMul", "mm", "x", "k", "m0");
    node2(b, "Add", "add0", "m0", "a", "y0");
    rd_onnx_add_node(b, "Gemm", "g", (const char *const[]){"y0", "k", "a"}, 3, (const char *const[]){"m1"}, 1);
    node2(b, "Add", "add1", "m1", "a2", "y1");
    rd_onnx_node *gb =
        rd_onnx_add_node(b, "Gemm", "gb", (const char *const[]){"y1", "k"}, 2, (const char *const[]){"m2"}, 1);
    rd_onnx_attr_float(gb, "beta", 0.5f);
    node2(b, "Add", "add2", "m2", "a", "y2");
    node2(b, "MatMul", "mz", "y2", "z", "m3"); /* weight is an input */
    node2(b, "Add", "add3", "m3", "a", "y3");
    node2(b, "Add", "add4", "y3", "y2", "y");
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    rd_onnx_add_output(b, "m3", RD_DT_F32, -1, NULL, NULL);
    pair p = load_pair(b, 2);
    check_value(p.opt, "m0", "y0", false);
    CU_ASSERT_STRING_EQUAL(p.opt->nodes[value(p.opt, "y0")->producer].op_type, "Gemm");
    check_value(p.opt, "m1", "y1", false);
    check_value(p.opt, "m2", "", false);
    check_value(p.opt, "m3", "", false);
    CU_ASSERT_EQUAL(count_op(p.opt, "MatMul"), 1);
    CU_ASSERT_EQUAL(count_op(p.opt, "Add"), 3);
    check_consistent(p.opt);
    check_same_outputs(&p, false);
    pair_free(&p);
}

/* ---- level 3 ---------------------------------------------------------------------------------- */

/* Every producer with every activation kind; Clip with constant inputs (opset 14). */
static void test_fuse_activations(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 14);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 2, 4, 4}, NULL);
    rd_onnx_add_input(b, "v", RD_DT_F32, 2, (const int64_t[]){2, 4}, NULL);
    init_f32(b, "w", 4, (const int64_t[]){2, 2, 1, 1}, 100, -1.0f, 1.0f);
    init_f32(b, "wt", 4, (const int64_t[]){2, 2, 2, 2}, 101, -1.0f, 1.0f);
    init_f32(b, "gw", 2, (const int64_t[]){4, 4}, 102, -1.0f, 1.0f);
    init_f32(b, "lo", 0, NULL, 103, 0.0f, 0.0f);
    init_f32(b, "hi", 0, NULL, 104, 0.5f, 0.5f);
    node2(b, "Conv", "conv", "x", "w", "c1");
    rd_onnx_add_node(b, "Clip", "clip", (const char *const[]){"c1", "lo", "hi"}, 3, (const char *const[]){"a1"}, 1);
    node2(b, "ConvTranspose", "convt", "a1", "wt", "c2");
    rd_onnx_node *lk = node1(b, "LeakyRelu", "leaky", "c2", "a2");
    rd_onnx_attr_float(lk, "alpha", 0.2f);
    node2(b, "Gemm", "gemm", "v", "gw", "c3");
    node1(b, "Sigmoid", "sig", "c3", "a3");
    node2(b, "MatMul", "matmul", "a3", "gw", "c4");
    node1(b, "HardSigmoid", "hsig", "c4", "a4");
    node2(b, "Add", "add", "a4", "v", "c5");
    node1(b, "HardSwish", "hswish", "c5", "a5");
    node2(b, "Add", "add2", "a5", "a5", "c6");
    node1(b, "Relu", "relu", "c6", "a6");
    rd_onnx_add_node(b, "Clip", "clip_min", (const char *const[]){"a6", "lo"}, 2, (const char *const[]){"a7"}, 1);
    rd_onnx_add_output(b, "a2", RD_DT_F32, -1, NULL, NULL);
    rd_onnx_add_output(b, "a7", RD_DT_F32, -1, NULL, NULL);
    pair p = load_pair(b, 3);
    CU_ASSERT_EQUAL(p.opt->n_nodes, p.ref->n_nodes);
    check_value(p.opt, "c1", "a1", true);
    check_value(p.opt, "c2", "a2", true);
    check_value(p.opt, "c3", "a3", true);
    check_value(p.opt, "c4", "a4", true);
    check_value(p.opt, "c5", "", false); /* an Add fuses a Relu only (AddRelu): RKNN shows no AddHardSwish */
    check_value(p.opt, "c6", "a6", true);
    check_value(p.opt, "a5", "", false); /* Add reads it twice */
    check_value(p.opt, "a6", "", false); /* Relu is no producer */
    check_consistent(p.opt);
    check_same_outputs(&p, true);
    pair_free(&p);
}

/* Clip with min/max attributes (opset 6) fuses; refusals: two readers, a graph output, a Max (no producer). */
static void test_fuse_clip_attrs(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(3, 6);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 2, 3, 3}, NULL);
    init_f32(b, "w", 4, (const int64_t[]){2, 2, 1, 1}, 110, -1.0f, 1.0f);
    node2(b, "Conv", "conv", "x", "w", "c1");
    rd_onnx_node *c = node1(b, "Clip", "relu6", "c1", "a1");
    rd_onnx_attr_float(c, "min", 0.0f);
    rd_onnx_attr_float(c, "max", 6.0f);
    node2(b, "Conv", "conv2", "a1", "w", "c2");
    node1(b, "Relu", "relu2", "c2", "a2");
    node2(b, "Sum", "sum", "a2", "c2", "s");   /* c2 read twice */
    node2(b, "Conv", "conv3", "s", "w", "c3"); /* c3 is a graph output */
    node1(b, "Sigmoid", "sig", "c3", "a3");
    node2(b, "Max", "max", "a3", "a3", "c4");
    node1(b, "Relu", "relu4", "c4", "y");
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    rd_onnx_add_output(b, "c3", RD_DT_F32, -1, NULL, NULL);
    pair p = load_pair(b, 3);
    check_value(p.opt, "c1", "a1", true);
    check_value(p.opt, "c2", "", false);
    check_value(p.opt, "c3", "", false);
    check_value(p.opt, "c4", "", false);
    check_consistent(p.opt);
    check_same_outputs(&p, true);
    pair_free(&p);
}

/* Clip whose bound is computed (a graph input): not fused. */
static void test_fuse_clip_dynamic(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){2, 4}, NULL);
    rd_onnx_add_input(b, "hi", RD_DT_F32, 0, NULL, NULL);
    init_f32(b, "w", 2, (const int64_t[]){4, 4}, 120, -1.0f, 1.0f);
    node2(b, "MatMul", "mm", "x", "w", "c");
    rd_onnx_add_node(b, "Clip", "clip", (const char *const[]){"c", "", "hi"}, 3, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    pair p = load_pair(b, 3);
    check_value(p.opt, "c", "", false);
    check_consistent(p.opt);
    check_same_outputs(&p, true);
    pair_free(&p);
}

RD_TEST_REGISTER(register_passes)
{
    RD_SUITE("passes", {"levels 0 to 3 on Conv, Identity, BN, Relu", test_levels},
             {"bad level, applying twice", test_bad_level}, {"Identity removal", test_identity},
             {"Dropout opset 13", test_dropout_13}, {"Dropout opset 10", test_dropout_10},
             {"BN into plain, grouped, depthwise convs, BN chain", test_bn_conv_variants},
             {"BN with a shared weight", test_bn_shared_weight}, {"BN refusals", test_bn_refused},
             {"BN into Gemm", test_bn_gemm}, {"BN after Gemm with beta 0.5", test_bn_gemm_beta},
             {"bias Adds into Conv, ConvTranspose, around a BN", test_bias_conv_variants},
             {"bias Adds: MatMul to Gemm, refusals", test_bias_matmul_gemm},
             {"activation fusion", test_fuse_activations}, {"Clip attrs, fusion refusals", test_fuse_clip_attrs},
             {"Clip with a computed bound", test_fuse_clip_dynamic});
}

/* test_prune.c: lossless pruning on models built with the ONNX writer: same outputs, expected savings. */
#include "rd_test.h"
#include "text_check.h"
#include "cli_capture.h"
#include "cli_expect.h"
#include "prune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng_state = 777;
static float rnd(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

static void fill(rd_tensor *t, int rank, const int64_t *dims)
{
    rd_tensor_alloc(t, RD_DT_F32, rank, dims, NULL);
    for (int64_t i = 0; i < rd_tensor_numel(t); i++)
        ((float *)t->data)[i] = rnd();
}

/* Zeroes slice c of axis `axis` of t. */
static void zero_slice(rd_tensor *t, int axis, int64_t c)
{
    int64_t outer = 1, inner = 1, dim = t->dims[axis];
    for (int d = 0; d < axis; d++)
        outer *= t->dims[d];
    for (int d = axis + 1; d < t->rank; d++)
        inner *= t->dims[d];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++)
            ((float *)t->data)[(o * dim + c) * inner + i] = 0.0f;
}

static void add_init(rd_onnx_builder *b, const char *name, rd_tensor *t)
{
    rd_onnx_add_initializer(b, name, t, RD_ONNX_RAW);
    rd_tensor_fini(t);
}

/* A random initializer whose slices dead_a and dead_b of axis 0 (output channels) are zero. */
static void add_dead_channels(rd_onnx_builder *b, const char *name, int rank, const int64_t *dims, int64_t dead_a,
                              int64_t dead_b)
{
    rd_tensor t;
    fill(&t, rank, dims);
    zero_slice(&t, 0, dead_a);
    zero_slice(&t, 0, dead_b);
    add_init(b, name, &t);
}

static rd_onnx_node *conv(rd_onnx_builder *b, const char *name, const char *x, const char *w, const char *bias,
                          const char *y, int64_t pad)
{
    const char *const in[3] = {x, w, bias};
    rd_onnx_node *n = rd_onnx_add_node(b, "Conv", name, in, bias ? 3 : 2, (const char *const[]){y}, 1);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){pad, pad, pad, pad}, 4);
    return n;
}

/*
 * x [1,3,8,8] -> conv1 (8, zero channels 2 and 5) -> BN (beta and mean 0 there) -> Relu = r
 * r -> conv2 (6, zero 1 and 4) ; r -> conv3 (6, zero 1; channel 3 has zero weights but a bias)
 * add = conv2 + conv3 (zero: 1) ; cat = Concat(r, add) [14] -> conv4 (4) -> y.
 * mid_op replaces Relu (Sigmoid: 0 -> 0.5, nothing may be pruned).
 */
static void write_conv_model(const char *path, const char *mid_op)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 8, 8}, NULL);
    rd_tensor t;
    add_dead_channels(b, "w1", 4, (const int64_t[]){8, 3, 3, 3}, 2, 5);
    add_dead_channels(b, "b1", 1, (const int64_t[]){8}, 2, 5);
    const char *bn_names[4] = {"bn.scale", "bn.beta", "bn.mean", "bn.var"};
    for (int k = 0; k < 4; k++) {
        fill(&t, 1, (const int64_t[]){8});
        for (int c = 0; c < 8; c++) {
            float *v = &((float *)t.data)[c];
            if (k == 3)
                *v = 0.5f + fabsf(*v);
            if ((k == 1 || k == 2) && (c == 2 || c == 5))
                *v = 0.0f;
        }
        add_init(b, bn_names[k], &t);
    }
    add_dead_channels(b, "w2", 4, (const int64_t[]){6, 8, 3, 3}, 1, 4);
    add_dead_channels(b, "b2", 1, (const int64_t[]){6}, 1, 4);
    add_dead_channels(b, "w3", 4, (const int64_t[]){6, 8, 1, 1}, 1, 3);
    fill(&t, 1, (const int64_t[]){6});
    ((float *)t.data)[1] = 0.0f;
    add_init(b, "b3", &t);
    fill(&t, 4, (const int64_t[]){4, 14, 1, 1});
    add_init(b, "w4", &t);
    fill(&t, 1, (const int64_t[]){4});
    add_init(b, "b4", &t);

    conv(b, "conv1", "x", "w1", "b1", "c1", 1);
    rd_onnx_add_node(b, "BatchNormalization", "bn",
                     (const char *const[]){"c1", "bn.scale", "bn.beta", "bn.mean", "bn.var"}, 5,
                     (const char *const[]){"n1"}, 1);
    rd_onnx_add_node(b, mid_op, "act", (const char *const[]){"n1"}, 1, (const char *const[]){"r"}, 1);
    conv(b, "conv2", "r", "w2", "b2", "c2", 1);
    conv(b, "conv3", "r", "w3", "b3", "c3", 0);
    rd_onnx_add_node(b, "Add", "add", (const char *const[]){"c2", "c3"}, 2, (const char *const[]){"s"}, 1);
    rd_onnx_node *n =
        rd_onnx_add_node(b, "Concat", "cat", (const char *const[]){"r", "s"}, 2, (const char *const[]){"cat"}, 1);
    rd_onnx_attr_int(n, "axis", 1);
    conv(b, "conv4", "cat", "w4", "b4", "y", 0);
    rd_onnx_add_output(b, "y", RD_DT_F32, 4, (const int64_t[]){1, 4, 8, 8}, NULL);
    CU_ASSERT_EQUAL(rd_onnx_builder_save(b, path, NULL), RD_OK);
    rd_onnx_builder_destroy(b);
}

/* x [2,6] -> Gemm (W [6,5], column 2 and its bias zero) -> Relu -> Gemm (transB, W [3,5]) -> y [2,3] */
static void write_gemm_model(const char *path)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){2, 6}, NULL);
    rd_tensor t;
    fill(&t, 2, (const int64_t[]){6, 5});
    zero_slice(&t, 1, 2);
    add_init(b, "fc1.w", &t);
    fill(&t, 1, (const int64_t[]){5});
    zero_slice(&t, 0, 2);
    add_init(b, "fc1.b", &t);
    fill(&t, 2, (const int64_t[]){3, 5});
    add_init(b, "fc2.w", &t);
    rd_onnx_add_node(b, "Gemm", "fc1", (const char *const[]){"x", "fc1.w", "fc1.b"}, 3, (const char *const[]){"h"}, 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"h"}, 1, (const char *const[]){"hr"}, 1);
    rd_onnx_node *n =
        rd_onnx_add_node(b, "Gemm", "fc2", (const char *const[]){"hr", "fc2.w"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_attr_int(n, "transB", 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 2, (const int64_t[]){2, 3}, NULL);
    CU_ASSERT_EQUAL(rd_onnx_builder_save(b, path, NULL), RD_OK);
    rd_onnx_builder_destroy(b);
}

/* Runs both models on the same random input: outputs equal within 1e-6 relative. */
static void assert_same_outputs(const char *a_path, const char *b_path)
{
    rd_model *a = NULL, *b = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(a_path, NULL, &a, NULL), RD_OK);
    rd_error err = {0};
    CU_ASSERT_EQUAL(rd_model_load(b_path, NULL, &b, &err), RD_OK);
    if (!b) {
        fprintf(stderr, "%s\n", err.msg);
        rd_model_destroy(a);
        return;
    }
    rd_value_info vi;
    rd_model_value(a, (size_t)rd_model_input(a, 0), &vi);
    rd_tensor x, ya, yb;
    fill(&x, vi.rank, vi.dims);
    CU_ASSERT_EQUAL(rd_model_run(a, &x, 1, NULL, &ya, 1, NULL), RD_OK);
    CU_ASSERT_EQUAL(rd_model_run(b, &x, 1, NULL, &yb, 1, NULL), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_tensor_numel(&ya), rd_tensor_numel(&yb));
    /* removing zero terms changes how the BLAS kernels group the sums: rounding, relative to the output scale */
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < rd_tensor_numel(&ya); i++) {
        double p = ((float *)ya.data)[i], q = ((float *)yb.data)[i];
        worst = fabs(p - q) > worst ? fabs(p - q) : worst;
        scale = fabs(p) > scale ? fabs(p) : scale;
    }
    CU_ASSERT(worst <= 1e-6 * scale);
    rd_tensor_fini(&x);
    rd_tensor_fini(&ya);
    rd_tensor_fini(&yb);
    rd_model_destroy(a);
    rd_model_destroy(b);
}

/* A fresh folder tag: model.onnx and pruned.onnx in it (model and out hold 512 bytes); the caller frees it. */
static char *prune_dir(const char *tag, char *model, char *out)
{
    char *dir = rd_test_tmpdir(tag);
    snprintf(model, 512, "%s/model.onnx", dir);
    snprintf(out, 512, "%s/pruned.onnx", dir);
    return dir;
}

/* What an_prune_analyze plans for the model at path: the channels, and the weight bytes and MACs removed
   (-1: not checked). */
static void expect_plan(const char *path, size_t channels, int64_t weight_bytes, int64_t macs)
{
    rd_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(path, NULL, &m, NULL), RD_OK);
    an_prune_plan plan;
    CU_ASSERT_EQUAL_FATAL(an_prune_analyze(m, &plan, NULL), RD_OK);
    CU_ASSERT_EQUAL(plan.n_channels, channels);
    if (weight_bytes >= 0)
        CU_ASSERT_EQUAL(plan.weight_bytes_removed, weight_bytes);
    if (macs >= 0)
        CU_ASSERT_EQUAL(plan.macs_removed, macs);
    an_prune_plan_fini(&plan);
    rd_model_destroy(m);
}

static void test_conv_chain(void)
{
    char model[512], out[512];
    char *dir = prune_dir("prune", model, out);
    write_conv_model(model, "Relu");
    /* conv1 2 + conv2 1 + conv3 1 output channels;
       weights: w1 54 + b1 2 + BN 8 + w2 (432 - 270) + b2 1 + w3 (48 - 30) + b3 1 + w4 (56 - 44) floats;
       per output pixel (64): conv1 2*27, conv2 (432 - 270), conv3 18, conv4 12 */
    expect_plan(model, 4, (54 + 2 + 8 + 162 + 1 + 18 + 1 + 12) * 4, (54 + 162 + 18 + 12) * 64);

    RD_CLI_EXPECT(0, RD_TEXTS("Weight: -0.00098 MB (-", "GFLOPs: -0.00003 ("), NULL, "prune", model, "-o", out);
    assert_same_outputs(model, out);

    rd_cli_result r = rd_test_cli("inspect", model, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "prunable:  4 channels, 0.00098 MB, 0.00003 GFLOPs"));
    rd_test_cli_free(&r);
    /* pruning the pruned model finds nothing more */
    r = rd_test_cli("inspect", out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "prunable:  0 channels"));
    rd_test_cli_free(&r);
    free(dir);
}

static void test_gemm_chain(void)
{
    char model[512], out[512];
    char *dir = prune_dir("prune_gemm", model, out);
    write_gemm_model(model);
    expect_plan(model, 1, (6 + 1 + 3) * 4, (6 + 3) * 2);
    RD_CLI_EXPECT(0, NULL, NULL, "prune", model, "-o", out);
    assert_same_outputs(model, out);
    free(dir);
}

/* Sigmoid maps conv1's zero channels to 0.5: they stay; conv2/conv3's channel 1 (Add, Concat) still goes. */
static void test_sigmoid_stops(void)
{
    char model[512], out[512];
    char *dir = prune_dir("prune_none", model, out);
    write_conv_model(model, "Sigmoid");
    RD_CLI_EXPECT(0, NULL, NULL, "prune", model, "-o", out);

    expect_plan(model, 2, -1, -1); /* conv2 and conv3 channel 1 only; conv1's go through Sigmoid */
    assert_same_outputs(model, out);
    free(dir);
}

static void write_plain_model(const char *path)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 4, 4}, NULL);
    rd_tensor t;
    fill(&t, 4, (const int64_t[]){4, 3, 3, 3});
    zero_slice(&t, 0, 1); /* zero weights, but the bias makes the channel a constant: not prunable */
    add_init(b, "w", &t);
    fill(&t, 1, (const int64_t[]){4});
    add_init(b, "b", &t);
    conv(b, "conv", "x", "w", "b", "c", 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"c"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 4, (const int64_t[]){1, 4, 4, 4}, NULL);
    CU_ASSERT_EQUAL(rd_onnx_builder_save(b, path, NULL), RD_OK);
    rd_onnx_builder_destroy(b);
}

static void test_unchanged_output(void)
{
    char model[512], out[512];
    char *dir = prune_dir("prune_same", model, out);
    write_plain_model(model);
    rd_cli_result r = rd_test_cli("prune", model, "-o", out, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    rd_test_cli_free(&r);
    rd_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(model, NULL, &m, NULL), RD_OK);
    void *expect = NULL, *got = NULL;
    size_t n_expect = 0, n_got = 0;
    CU_ASSERT_EQUAL(rd_onnx_model_write(m, &expect, &n_expect, NULL), RD_OK);
    got = rd_test_read_file(out, &n_got);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_EQUAL(n_got, n_expect);
    CU_ASSERT(n_got == n_expect && memcmp(got, expect, n_got) == 0);
    free(expect);
    free(got);
    rd_model_destroy(m);

    RD_CLI_EXPECT(2, NULL, RD_TEXTS("missing -o"), "prune", model);
    snprintf(model, sizeof model, "%s/absent.onnx", dir);
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("absent.onnx"), "prune", model, "-o", out);
    free(dir);
}

RD_TEST_REGISTER(prune_tests)
{
    RD_SUITE("prune", {"conv, BN, Relu, Add, Concat chain", test_conv_chain}, {"gemm chain", test_gemm_chain},
             {"sigmoid stops pruning", test_sigmoid_stops}, {"nothing to prune: unchanged", test_unchanged_output});
}

/*
 * test_model_cut.c: --graph-inputs / --graph-outputs on the commands that take the model alone (inspect, prune,
 * onnx-edit), on a Conv chain written with our ONNX writer: inspect lists the cut's inputs and outputs, prune and
 * onnx-edit write a model whose inputs and outputs are the cut's (prune still finding the zero channel inside it),
 * and a name the model does not have is exit 3 naming it. A TensorFlow graph cut while read: test_frontends_cli.c.
 */
#include "rd_test.h"
#include "cli_expect.h"
#include "text_check.h"
#include "cli_capture.h"
#include "rknn_diag/simulator.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Conv weights [out, in, 1, 1] of ramp values, output channel `zero` (if >= 0) all zero with its bias. */
static void add_conv(rd_onnx_builder *b, const char *name, const char *x, const char *y, int64_t out, int64_t in,
                     int64_t zero)
{
    rd_tensor w, bias;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&w, RD_DT_F32, 4, (const int64_t[]){out, in, 1, 1}, NULL), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&bias, RD_DT_F32, 1, (const int64_t[]){out}, NULL), RD_OK);
    for (int64_t o = 0; o < out; o++) {
        ((float *)bias.data)[o] = o == zero ? 0.0f : 0.1f * (float)(o + 1);
        for (int64_t i = 0; i < in; i++)
            ((float *)w.data)[o * in + i] = o == zero ? 0.0f : 0.25f * (float)((o + 2 * i) % 5) - 0.5f;
    }
    char wn[64], bn[64];
    snprintf(wn, sizeof wn, "%s.w", name);
    snprintf(bn, sizeof bn, "%s.b", name);
    rd_onnx_add_initializer(b, wn, &w, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, bn, &bias, RD_ONNX_RAW);
    rd_tensor_fini(&w);
    rd_tensor_fini(&bias);
    rd_onnx_add_node(b, "Conv", name, (const char *const[]){x, wn, bn}, 3, (const char *const[]){y}, 1);
}

/* x [1,3,8,8] -> conv1 (4) -> Relu = r1 -> conv2 (6, channel 2 zero) = c2 -> Relu = r2 -> conv3 (2) = c3 ->
   Sigmoid -> y. The cut r1..c3 keeps conv2, the Relu and conv3, with a channel to prune. */
static char *write_chain(const char *dir)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 8, 8}, NULL);
    add_conv(b, "conv1", "x", "c1", 4, 3, -1);
    rd_onnx_add_node(b, "Relu", "relu1", (const char *const[]){"c1"}, 1, (const char *const[]){"r1"}, 1);
    add_conv(b, "conv2", "r1", "c2", 6, 4, 2);
    rd_onnx_add_node(b, "Relu", "relu2", (const char *const[]){"c2"}, 1, (const char *const[]){"r2"}, 1);
    add_conv(b, "conv3", "r2", "c3", 2, 6, -1);
    rd_onnx_add_node(b, "Sigmoid", "sig", (const char *const[]){"c3"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 4, (const int64_t[]){1, 2, 8, 8}, NULL);
    char *path = rd_test_join(dir, "chain.onnx");
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_save(b, path, NULL), RD_OK);
    rd_onnx_builder_destroy(b);
    return path;
}

/* The model at path has exactly the input `in` of shape in_shape and the output `out`, and n_nodes nodes. */
static void check_io(const char *path, const char *in, const char *in_shape, const char *out, size_t n_nodes)
{
    rd_model *m = NULL;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rd_model_load(path, NULL, &m, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_model_input_count(m), 1);
    CU_ASSERT_EQUAL(rd_model_output_count(m), 1);
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, 0), &vi);
    CU_ASSERT_STRING_EQUAL(vi.name, in);
    rd_tensor shape = {.rank = vi.rank};
    memcpy(shape.dims, vi.dims, sizeof shape.dims);
    char text[64];
    CU_ASSERT_STRING_EQUAL(rd_shape_str(&shape, text, sizeof text), in_shape);
    rd_model_value(m, (size_t)rd_model_output(m, 0), &vi);
    CU_ASSERT_STRING_EQUAL(vi.name, out);
    CU_ASSERT_EQUAL(rd_model_node_count(m), n_nodes);
    rd_model_destroy(m);
}

/* A name the model does not have, among inputs then outputs: exit 3, the name in the message. cmd is the command
   line up to the cut (n words). */
static void check_bad_names(int n, const char *const *cmd)
{
    static const char *const cuts[2][3] = {{"--graph-inputs", "r1,r9", "cut input 'r9' is not a tensor of the model"},
                                           {"--graph-outputs", "c33", "cut output 'c33' is not a tensor of the model"}};
    for (int k = 0; k < 2; k++) {
        const char *argv[16];
        memcpy(argv, cmd, (size_t)n * sizeof *argv);
        argv[n] = cuts[k][0];
        argv[n + 1] = cuts[k][1];
        rd_cli_result r = rd_test_cli_argv(n + 2, argv);
        CU_ASSERT_EQUAL(r.code, 3);
        RD_ASSERT_HAS_TEXTS(r.errs, "error: --graph-inputs/--graph-outputs: ", cuts[k][2]);
        rd_test_cli_free(&r);
    }
}

static void test_inspect_cut(void)
{
    char *dir = rd_test_tmpdir("cut_inspect");
    char *model = write_chain(dir);
    rd_cli_result r = rd_test_cli("inspect", model, "--graph-inputs", "r1", "--graph-outputs", "c3", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    static const char *const in_order[] = {"inputs:\n  r1 ", "1x4x8x8\noutputs:\n  c3 ", "1x2x8x8\n\n3 nodes, ops:\n"};
    const char *at = r.out;
    for (size_t k = 0; k < sizeof in_order / sizeof in_order[0] && at; k++)
        at = strstr(at, in_order[k]);
    CU_ASSERT_PTR_NOT_NULL(at);
    CU_ASSERT_PTR_NULL(strstr(r.out, "Sigmoid"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "cut at --graph-inputs/--graph-outputs (1 input, 1 output): 3 nodes kept"));
    rd_test_cli_free(&r);
    r = rd_test_cli("inspect", model, "--json", "--graph-outputs", "r2", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    cJSON *j = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_STRING_EQUAL(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "inputs"), 0), "name")->valuestring, "x");
    CU_ASSERT_STRING_EQUAL(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "outputs"), 0), "name")->valuestring, "r2");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(j, "outputs")), 1);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(j, "nodes")->valueint, 4);
    cJSON_Delete(j);
    rd_test_cli_free(&r);
    check_bad_names(2, (const char *const[]){"inspect", model});
    free(model);
    free(dir);
}

static void test_prune_cut(void)
{
    char *dir = rd_test_tmpdir("cut_prune");
    char *model = write_chain(dir), *out = rd_test_join(dir, "pruned.onnx");
    rd_cli_result r = rd_test_cli("prune", model, "--graph-inputs", "r1", "--graph-outputs", "c3", "-o", out, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Weight: -")); /* conv2's zero channel, inside the cut */
    rd_test_cli_free(&r);
    check_io(out, "r1", "1x4x8x8", "c3", 3);
    r = rd_test_cli("inspect", out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "prunable:  0 channels"));
    rd_test_cli_free(&r);
    check_bad_names(4, (const char *const[]){"prune", model, "-o", out});
    free(out);
    free(model);
    free(dir);
}

static void test_onnx_edit_cut(void)
{
    char *dir = rd_test_tmpdir("cut_edit");
    char *model = write_chain(dir), *out = rd_test_join(dir, "edited.onnx");
    RD_CLI_EXPECT(0, RD_TEXTS("input  r1"), NULL, "onnx-edit", model, "--graph-inputs", "r1", "--graph-outputs", "c3",
                  "-o", out, "--input", "r1=a,b,c,d->a,c,d,b");
    check_io(out, "r1", "1x8x8x4", "c3", 4); /* the cut's three nodes and the inserted Transpose */
    check_bad_names(6, (const char *const[]){"onnx-edit", model, "-o", out, "--output", "c3=a,b,c,d->a,c,d,b"});
    free(out);
    free(model);
    free(dir);
}

RD_TEST_REGISTER(register_model_cut)
{
    RD_SUITE("model_cut", {"inspect shows the cut", test_inspect_cut}, {"prune writes the cut, pruned", test_prune_cut},
             {"onnx-edit writes the cut, edited", test_onnx_edit_cut});
}

/*
 * test_frontends_cli.c: the frontends through the command line, in-process: inspect names the format, run
 * takes a .tflite (its float32 form, and --precision model with the model's int8 codes), and -c
 * model_config.yml's platform: key is checked against the file's content; a Caffe .prototxt and a Darknet
 * .cfg with their weights beside them: inspect names the format, and a missing weights file or unknown layers
 * are exit 3 naming the files and every unknown layer; a TensorFlow graph cut by --graph-inputs/--graph-outputs
 * and by subgraphs (an internal tensor as input, "name:0"), unknown names with the close ones.
 */
#include "cli_capture.h"
#include "rd_test.h"
#include "caffe_synth.h"
#include "darknet_synth.h"
#include "tf_synth.h"
#include "tflite_synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An int8 model: x (int8 [1, 2, 2, 1], scale 0.5, zp 0) -> a 1x1 CONV_2D doubling it -> y (scale 0.5, zp 0). */
static char *write_int8_model(const char *dir)
{
    tfs_model *m = tfs_create();
    int x = tfs_tensor(m, "x", TFS_INT8, 4, (const int32_t[]){1, 2, 2, 1}, NULL, 0);
    tfs_quant(m, x, (const float[]){0.5f}, (const int64_t[]){0}, 1, 0);
    int8_t w[1] = {64};
    int wt = tfs_tensor(m, "w", TFS_INT8, 4, (const int32_t[]){1, 1, 1, 1}, w, 1);
    tfs_quant(m, wt, (const float[]){2.0f / 64}, (const int64_t[]){0}, 1, 0);
    int y = tfs_tensor(m, "y", TFS_INT8, 4, (const int32_t[]){1, 2, 2, 1}, NULL, 0);
    tfs_quant(m, y, (const float[]){0.5f}, (const int64_t[]){0}, 1, 0);
    tfs_op(m, 3, (const int[]){x, wt, -1}, 3, &y, 1, 1, (const tfs_field[]){{0, 1, 1}, {1, 4, 1}, {2, 4, 1}}, 3);
    tfs_io(m, &x, 1, &y, 1);
    uint8_t *buf;
    size_t len;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(tfs_finish(m, &buf, &len, &err), RD_OK);
    tfs_destroy(m);
    char *path = rd_test_join(dir, "int8.tflite");
    CU_ASSERT_EQUAL_FATAL(rd_file_write_atomic(path, buf, len, NULL, &err), RD_OK);
    free(buf);
    return path;
}

static char *write_input(const char *dir, const char *name, rd_dtype dt, const void *data)
{
    rd_tensor t = {.dtype = dt, .rank = 4, .dims = {1, 2, 2, 1}, .data = (void *)data};
    char *path = rd_test_join(dir, name);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_npy_save(path, &t, &err), RD_OK);
    return path;
}

static void test_inspect_and_run(void)
{
    char *dir = rd_test_tmpdir("fe_cli");
    char *model = write_int8_model(dir);
    rd_cli_result r = rd_test_cli("inspect", model, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "format     tflite: TFLite schema 3, 1 operators"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "quantized"));
    rd_test_cli_free(&r);

    static const int8_t codes[4] = {-3, 1, 40, 100};
    char *in8 = write_input(dir, "x8.npy", RD_DT_I8, codes);
    char in_arg[4200];
    snprintf(in_arg, sizeof in_arg, "x=%s", in8);
    r = rd_test_cli("run", model, "--precision", "model", "--input", in_arg, "--json", "--outputs-only", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"dtype\":\t\"int8\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"max\":\t127")); /* 2 x 100 saturates */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"min\":\t-6"));
    rd_test_cli_free(&r);

    static const float xf[4] = {-1.5f, 0.5f, 20.0f, 50.0f};
    char *inf = write_input(dir, "xf.npy", RD_DT_F32, xf);
    snprintf(in_arg, sizeof in_arg, "x=%s", inf);
    r = rd_test_cli("run", model, "--input", in_arg, "--json", "--outputs-only", NULL); /* the float32 golden */
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"max\":\t100"));
    rd_test_cli_free(&r);
    /* int8 codes given to the float32 form: refused naming the dtype */
    snprintf(in_arg, sizeof in_arg, "x=%s", in8);
    rd_test_cli_says(3, NULL, "run", model, "--input", in_arg, NULL);
    free(inf);
    free(in8);
    free(model);
    free(dir);
}

static void test_model_config_platform(void)
{
    char *dir = rd_test_tmpdir("fe_cfg");
    char *model = write_int8_model(dir);
    char *cfg = rd_test_join(dir, "model_config.yml");
    rd_test_write_text(cfg, "models:\n  name: tiny\n  platform: tflite\n  model_file_path: ./int8.tflite\n"
                            "  quantize: false\n");
    static const float xf[4] = {1, 2, 3, 4};
    char *inf = write_input(dir, "xf.npy", RD_DT_F32, xf);
    char in_arg[4200];
    snprintf(in_arg, sizeof in_arg, "x=%s", inf);
    rd_cli_result r = rd_test_cli("run", model, "-c", cfg, "--input", in_arg, "--quiet", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    rd_test_write_text(cfg, "models:\n  platform: onnx\n  model_file_path: ./int8.tflite\n  quantize: false\n");
    rd_test_cli_says(3, "the model config says platform onnx, but the file is tflite", "run", model, "-c", cfg,
                     "--input", in_arg, "--quiet", NULL);
    rd_test_write_text(cfg, "models:\n  platform: keras\n  model_file_path: ./int8.tflite\n  quantize: false\n");
    rd_test_cli_says(3, "models.platform: unknown model platform 'keras'", "run", model, "-c", cfg, "--input", in_arg,
                     "--quiet", NULL);
    free(inf);
    free(cfg);
    free(model);
    free(dir);
}

static void write_bytes(const char *path, const void *buf, size_t len)
{
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_file_write_atomic(path, buf, len, NULL, &err), RD_OK);
}

static void test_two_file_formats(void)
{
    char *dir = rd_test_tmpdir("fe_two");
    char *proto = rd_test_join(dir, "net.prototxt"), *cmodel = rd_test_join(dir, "net.caffemodel");
    size_t len = 0;
    uint8_t *w = csy_net_weights(&len);
    rd_test_write_text(proto, csy_net);
    write_bytes(cmodel, w, len);
    free(w);
    rd_cli_result r = rd_test_cli("inspect", proto, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "format     caffe: Caffe, 19 layers, weights "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "net.caffemodel"));
    rd_test_cli_free(&r);
    rd_test_cli_says(0, "\"format\":\t\"caffe\"", "inspect", proto, "--json", NULL);
    /* unknown layers: every kind in one message */
    rd_test_write_text(proto, "input: \"x\"\ninput_shape { dim: 1 dim: 3 dim: 8 dim: 8 }\n"
                              "layer { name: \"p\" type: \"PriorBox\" bottom: \"x\" top: \"p\" }\n"
                              "layer { name: \"q\" type: \"Python\" bottom: \"x\" top: \"q\" }\n");
    r = rd_test_cli("run", proto, NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "2 layers are of 2 kinds not supported"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "PriorBox"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "Python (layer 'q', "));
    rd_test_cli_free(&r);
    remove(cmodel);
    rd_test_cli_says(3, "net.prototxt: its weights (the .caffemodel beside the .prototxt)", "inspect", proto, NULL);

    /* a frozen TensorFlow graph */
    char *pb = rd_test_join(dir, "graph.pb");
    w = tgs_test_graph(7, &len);
    write_bytes(pb, w, len);
    free(w);
    rd_test_cli_says(0, "format     tensorflow: TensorFlow GraphDef (producer 27), 36 nodes", "inspect", pb, NULL);
    free(pb);

    /* bytes of no known format: the ONNX parser's verdict and the formats rknn-diag reads */
    char *junk = rd_test_join(dir, "junk.bin");
    write_bytes(junk, "\x12\x34garbage", 9);
    r = rd_test_cli("inspect", junk, NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "junk.bin: not a valid ONNX protobuf"));
    CU_ASSERT_PTR_NOT_NULL(strstr(
        r.errs, "nor is it TFLite, a TensorFlow GraphDef, a Darknet .cfg, a Caffe .prototxt or a TorchScript .pt"));
    rd_test_cli_free(&r);
    free(junk);

    char *cfg = rd_test_join(dir, "tiny.cfg"), *dw = rd_test_join(dir, "tiny.weights");
    w = dns_weights(dns_tiny_layers, 0, 2, 5, &len);
    rd_test_write_text(cfg, dns_tiny_cfg);
    write_bytes(dw, w, len);
    free(w);
    rd_test_cli_says(0, "format     darknet: ", "inspect", cfg, NULL);
    write_bytes(dw, "short", 5);
    rd_test_cli_says(3, "tiny.weights", "inspect", cfg, NULL);
    free(cfg);
    free(dw);
    free(proto);
    free(cmodel);
    free(dir);
}

/* A .npy of float32 ramp values of the given shape. */
static char *write_ramp(const char *dir, const char *name, int rank, const int64_t *dims)
{
    rd_tensor t = {0};
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, rank, dims, &err), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(&t); i++)
        ((float *)t.data)[i] = (float)(i % 11) - 5.0f;
    char *path = rd_test_join(dir, name);
    CU_ASSERT_EQUAL(rd_npy_save(path, &t, &err), RD_OK);
    rd_tensor_fini(&t);
    return path;
}

/* A TensorFlow graph cut by --graph-inputs / --graph-outputs and by model_config.yml's subgraphs. */
static void test_tf_cut(void)
{
    char *dir = rd_test_tmpdir("fe_tf_cut");
    size_t len = 0;
    uint8_t *pb = tgs_shape_graph(&len);
    char *model = rd_test_join(dir, "shape.pb"), *cfg = rd_test_join(dir, "model_config.yml");
    write_bytes(model, pb, len);
    free(pb);
    char *x = write_ramp(dir, "x.npy", 4, (const int64_t[]){2, 4, 6, 3});
    char *r24 = write_ramp(dir, "r.npy", 3, (const int64_t[]){2, 24, 3});
    char in_arg[4200];
    snprintf(in_arg, sizeof in_arg, "x=%s", x);
    rd_cli_result r = rd_test_cli("run", model, "--graph-outputs", "mul,gr:0", "--input-shape", "x=2,4,6,3", "--input",
                                  in_arg, "--json", "--outputs-only", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"mul\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"gr\""));
    CU_ASSERT_PTR_NULL(strstr(r.out, "\"tile\""));
    rd_test_cli_free(&r);
    /* inspect and prune cut the same way: the graph read up to mul and gr only */
    r = rd_test_cli("inspect", model, "--graph-outputs", "mul,gr:0", "--input-shape", "x=2,4,6,3", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "outputs:\n  mul "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\n  gr "));
    CU_ASSERT_PTR_NULL(strstr(r.out, "tile"));
    rd_test_cli_free(&r);
    char *pruned = rd_test_join(dir, "pruned.onnx");
    rd_test_cli_says(0, NULL, "prune", model, "--graph-outputs", "gr:0", "--input-shape", "x=2,4,6,3", "-o", pruned,
                     NULL);
    r = rd_test_cli("inspect", pruned, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "outputs:\n  gr "));
    CU_ASSERT_PTR_NULL(strstr(r.out, "mul "));
    rd_test_cli_free(&r);
    free(pruned);
    /* a name the graph does not have: exit 3 (the flags name a tensor of the model, as a config's subgraphs do) */
    r = rd_test_cli("run", model, "--graph-outputs", "mull", "--input-shape", "x=2,4,6,3", "--input", in_arg, NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "error: --graph-inputs/--graph-outputs: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "shape.pb: the outputs name 'mull', which is no node of the graph; close "
                                          "names: 'mul'"));
    rd_test_cli_free(&r);
    /* load_tensorflow's inputs as a config gives them: an internal tensor, its shape from input_size_list (outputs
       that need nothing else: mul would need x too, for the batch size its Fill reads) */
    rd_test_write_text(cfg,
                       "models:\n  platform: tensorflow\n  model_file_path: ./shape.pb\n  quantize: false\n"
                       "  subgraphs:\n    inputs: ['r:0']\n    outputs: ['split:2', 'un:1']\n    input_size_list:\n"
                       "      - 2,24,3\n");
    snprintf(in_arg, sizeof in_arg, "r=%s", r24);
    r = rd_test_cli("run", model, "-c", cfg, "--input", in_arg, "--json", "--outputs-only", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"split:2\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"un:1\""));
    if (r.code)
        fprintf(stderr, "\n%s\n", r.errs);
    rd_test_cli_free(&r);
    /* convert with -a: the converted OUT/NAME.onnx goes back to accuracy with the same config ("r:0" is "r") */
    char *out = rd_test_join(dir, "converted");
    r = rd_test_cli("convert", "-t", "rk3588", "-i", cfg, "-o", out, "-a", r24, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    if (r.code)
        fprintf(stderr, "\n%s\n", r.errs);
    rd_test_cli_free(&r);
    free(out);
    rd_test_write_text(cfg, "models:\n  platform: tensorflow\n  model_file_path: ./shape.pb\n  quantize: false\n"
                            "  subgraphs:\n    inputs: ['rr']\n    outputs: [mul]\n");
    r = rd_test_cli("run", model, "-c", cfg, "--input", in_arg, NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "model_config.yml:5: subgraphs: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "the inputs name 'rr', which is no node of the graph; close names: 'r'"));
    rd_test_cli_free(&r);
    free(r24);
    free(x);
    free(cfg);
    free(model);
    free(dir);
}

RD_TEST_REGISTER(register_frontends_cli)
{
    RD_SUITE("frontends_cli", {"inspect and run a .tflite", test_inspect_and_run},
             {"model_config.yml platform", test_model_config_platform},
             {"Caffe and Darknet: inspect, missing weights, unknown layers", test_two_file_formats},
             {"TensorFlow cut by flags and by model_config.yml", test_tf_cut});
}

/* test_qtools.c: quantize, export-qdq (both forms) and run --precision int8 --cfg on small built models. */
#include "rd_test.h"
#include "small_convnet.h"
#include "text_check.h"
#include "paths_in.h"
#include "tensor_check.h"
#include "cli_capture.h"
#include "cli_expect.h"
#include "rknn_diag/analyzer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng_state = 12345;
static float rnd(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

static void fill(rd_tensor *t, rd_dtype dt, int rank, const int64_t *dims, float amp)
{
    rd_tensor_alloc(t, dt, rank, dims, NULL);
    for (int64_t i = 0; i < rd_tensor_numel(t); i++)
        ((float *)t->data)[i] = amp * rnd();
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* dir/s0.npy .. s<n-1>.npy: float32 samples of shape dims (rank 4), values in [-2, 2). */
static void write_samples(const char *dir, int n, const int64_t *dims)
{
    char path[4300];
    for (int k = 0; k < n; k++) {
        rd_tensor x;
        fill(&x, RD_DT_F32, 4, dims, 2.0f);
        snprintf(path, sizeof path, "%s/s%d.npy", dir, k);
        CU_ASSERT_EQUAL(rd_npy_save(path, &x, NULL), RD_OK);
        rd_tensor_fini(&x);
    }
}

/* The test folder: model.onnx, 4 samples in NCHW .npy and dataset.txt. */
static char *setup(void)
{
    char *dir = rd_test_tmpdir("qtools");
    char path[4200];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    rd_test_write_small_convnet(path, rnd, true, true); /* conv2 padded, names with '/' as exported */
    write_samples(dir, 4, (const int64_t[]){1, 2, 6, 6});
    snprintf(path, sizeof path, "%s/dataset.txt", dir);
    rd_test_write_text(path, "s0.npy\ns1.npy\ns2.npy\ns3.npy\n");
    return dir;
}

static bool same_param(const rd_qcfg_param *a, const rd_qcfg_param *b)
{
    if (strcmp(a->name, b->name) || a->n != b->n || a->has != b->has || a->method != b->method || a->dtype != b->dtype)
        return false;
    size_t fb = a->n * sizeof(float);
    return (!a->min || !memcmp(a->min, b->min, fb)) && (!a->max || !memcmp(a->max, b->max, fb)) &&
           (!a->scale || !memcmp(a->scale, b->scale, fb)) && (!a->ori_min || !memcmp(a->ori_min, b->ori_min, fb)) &&
           (!a->ori_max || !memcmp(a->ori_max, b->ori_max, fb)) &&
           (!a->zero_point || !memcmp(a->zero_point, b->zero_point, a->n * sizeof(int32_t)));
}

static void test_quantize_roundtrip(void)
{
    char *dir = setup();
    char model[4200], ds[4200], cfg[4200], in0[4200], d1[4200], d2[4200];
    rd_test_paths_in(dir, sizeof cfg, model, "model.onnx", ds, "dataset.txt", cfg, "out.quantization.cfg", in0,
                     "s0.npy", d1, "dump_calibrated", d2, "dump_cfg", NULL);
    RD_CLI_EXPECT(0, NULL, RD_TEXTS("may name them differently"), "quantize", model, "--dataset", ds, "--input-layout",
                  "nchw", "-o", cfg);
    rd_qcfg q, back;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_load(cfg, &q, &err), RD_OK);
    /* activations x, relu output, conv2 output, y; weights of both Convs and the Gemm (per channel) */
    CU_ASSERT_PTR_NOT_NULL(rd_qcfg_find(&q, "x"));
    CU_ASSERT_PTR_NOT_NULL(rd_qcfg_find(&q, "/relu/Relu_output_0"));
    CU_ASSERT_PTR_NULL(rd_qcfg_find(&q, "/conv1/Conv_output_0")); /* fused into the Relu: not materialised */
    const rd_qcfg_param *w = rd_qcfg_find(&q, "fc.weight");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(w->n, 5);
    CU_ASSERT_EQUAL(w->method, RD_QMETHOD_CHANNEL);
    CU_ASSERT_EQUAL(w->zero_point[0], 0);
    CU_ASSERT_EQUAL(w->min[0], -w->max[0]);
    /* written then read back: identical parameters */
    char *text = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_write(&q, &text, &len, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_parse(text, len, "again", &back, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(back.n_params, q.n_params);
    for (size_t i = 0; i < q.n_params; i++)
        CU_ASSERT(same_param(&q.params[i], &back.params[i]));
    free(text);
    rd_qcfg_fini(&back);
    rd_qcfg_fini(&q);
    /* the simulation configured from the file reproduces the calibrated one bit for bit */
    RD_CLI_EXPECT(0, NULL, NULL, "run", model, "-i", in0, "-p", "int8", "--dataset", ds, "--input-layout", "nchw",
                  "--outputs-only", "-q", "-o", d1);
    RD_CLI_EXPECT(0, NULL, RD_TEXTS("3 weights"), "run", model, "-i", in0, "-p", "int8", "--cfg", cfg, "--outputs-only",
                  "-q", "-o", d2);
    char p1[4300], p2[4300];
    snprintf(p1, sizeof p1, "%s/0.npy", d1);
    snprintf(p2, sizeof p2, "%s/0.npy", d2);
    rd_tensor y1, y2;
    CU_ASSERT_EQUAL_FATAL(rd_npy_load(p1, &y1, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_npy_load(p2, &y2, &err), RD_OK);
    CU_ASSERT_EQUAL(memcmp(y1.data, y2.data, rd_tensor_nbytes(&y1)), 0);

    /* export-qdq: loads in our loader, and our FP32 reference on it agrees with the INT8 simulator */
    char qdq[4200];
    snprintf(qdq, sizeof qdq, "%s/qdq.onnx", dir);
    RD_CLI_EXPECT(0, NULL, NULL, "export-qdq", model, "--cfg", cfg, "-o", qdq);
    rd_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(qdq, NULL, &m, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_model_opset(m, ""), 13);
    rd_tensor x, y3;
    CU_ASSERT_EQUAL_FATAL(rd_npy_load(in0, &x, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_model_run(m, &x, 1, NULL, &y3, 1, &err), RD_OK);
    double c = rd_test_cosine(&y1, &y3);
    fprintf(stderr, "export-qdq: cos(int8 sim, fp32 run of the QDQ model) = %.7f\n", c);
    CU_ASSERT(c >= 0.9999);
    rd_model_destroy(m);
    rd_tensor_fini(&x);
    rd_tensor_fini(&y1);
    rd_tensor_fini(&y2);
    rd_tensor_fini(&y3);
    free(dir);
}

/* A node of up to three inputs (NULL: fewer) and one output. */
static rd_onnx_node *node(rd_onnx_builder *b, const char *op, const char *name, const char *in0, const char *in1,
                          const char *in2, const char *out)
{
    const char *in[3] = {in0, in1, in2};
    int n_in = in2 ? 3 : in1 ? 2 : 1;
    return rd_onnx_add_node(b, op, name, in, n_in, (const char *const[]){out}, 1);
}

/* Every way the simulator accumulates in int32, plus a ConvTranspose (no integer ONNX op):
 *   x [1,4,6,6] -> Conv 3x3 + bias -> Clip(0, 6) (fused) -> depthwise Conv stride 2 + bias -> d [1,4,3,3]
 *   d -> Reshape [1,4,9] -> MatMul W [9,8] (batched A) -> a [1,4,8]; a -> Transpose -> t [1,8,4]
 *   a x t (MatMul of two activations) -> p [1,4,4] -> Flatten -> Gemm transB alpha 0.5 beta 2 C [5] -> y1 [1,5]
 *   p -> Reshape [4,4] -> Gemm W [4,3] C [4,3] beta 0.5 (C not folded) -> y2 [4,3]
 *   d -> ConvTranspose 2x2 stride 2 -> y3 [1,2,6,6] */
static void write_int_model(const char *path)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 4, 6, 6}, NULL);
    struct {
        const char *name;
        int rank;
        int64_t dims[4];
        float amp;
    } inits[] = {{"c1.w", 4, {4, 4, 3, 3}, 0.4f}, {"c1.b", 1, {4}, 0.2f},    {"dw.w", 4, {4, 1, 3, 3}, 0.6f},
                 {"dw.b", 1, {4}, 0.2f},          {"mm.w", 2, {9, 8}, 0.5f}, {"g1.w", 2, {5, 16}, 0.3f},
                 {"g1.c", 1, {5}, 0.2f},          {"g2.w", 2, {4, 3}, 0.5f}, {"g2.c", 2, {4, 3}, 0.3f},
                 {"ct.w", 4, {4, 2, 2, 2}, 0.5f}};
    for (size_t i = 0; i < sizeof inits / sizeof inits[0]; i++) {
        rd_tensor t;
        fill(&t, RD_DT_F32, inits[i].rank, inits[i].dims, inits[i].amp);
        rd_onnx_add_initializer(b, inits[i].name, &t, RD_ONNX_RAW);
        rd_tensor_fini(&t);
    }
    const float lo = 0.0f, hi = 6.0f;
    rd_tensor tlo = {.dtype = RD_DT_F32, .rank = 0, .data = (void *)&lo};
    rd_tensor thi = {.dtype = RD_DT_F32, .rank = 0, .data = (void *)&hi};
    rd_onnx_add_initializer(b, "lo", &tlo, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "hi", &thi, RD_ONNX_RAW);
    const int64_t s1[3] = {1, 4, 9}, s2[2] = {4, 4};
    rd_tensor ts1 = {.dtype = RD_DT_I64, .rank = 1, .dims = {3}, .data = (void *)s1};
    rd_tensor ts2 = {.dtype = RD_DT_I64, .rank = 1, .dims = {2}, .data = (void *)s2};
    rd_onnx_add_initializer(b, "shape1", &ts1, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "shape2", &ts2, RD_ONNX_RAW);
    rd_onnx_node *n = node(b, "Conv", "c1", "x", "c1.w", "c1.b", "c1.out");
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    node(b, "Clip", "clip", "c1.out", "lo", "hi", "clip.out");
    n = node(b, "Conv", "dw", "clip.out", "dw.w", "dw.b", "d");
    rd_onnx_attr_int(n, "group", 4);
    rd_onnx_attr_ints(n, "strides", (const int64_t[]){2, 2}, 2);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    node(b, "Reshape", "r1", "d", "shape1", NULL, "r1.out");
    node(b, "MatMul", "mm", "r1.out", "mm.w", NULL, "a");
    rd_onnx_attr_ints(node(b, "Transpose", "tr", "a", NULL, NULL, "t"), "perm", (const int64_t[]){0, 2, 1}, 3);
    node(b, "MatMul", "mm2", "a", "t", NULL, "p");
    node(b, "Flatten", "fl", "p", NULL, NULL, "f");
    n = node(b, "Gemm", "g1", "f", "g1.w", "g1.c", "y1");
    rd_onnx_attr_int(n, "transB", 1);
    rd_onnx_attr_float(n, "alpha", 0.5f);
    rd_onnx_attr_float(n, "beta", 2.0f);
    node(b, "Reshape", "r2", "p", "shape2", NULL, "r2.out");
    rd_onnx_attr_float(node(b, "Gemm", "g2", "r2.out", "g2.w", "g2.c", "y2"), "beta", 0.5f);
    rd_onnx_attr_ints(node(b, "ConvTranspose", "ct", "d", "ct.w", NULL, "y3"), "strides", (const int64_t[]){2, 2}, 2);
    rd_onnx_add_output(b, "y1", RD_DT_F32, 2, (const int64_t[]){1, 5}, NULL);
    rd_onnx_add_output(b, "y2", RD_DT_F32, 2, (const int64_t[]){4, 3}, NULL);
    rd_onnx_add_output(b, "y3", RD_DT_F32, 4, (const int64_t[]){1, 2, 6, 6}, NULL);
    CU_ASSERT_EQUAL(rd_onnx_builder_save(b, path, NULL), RD_OK);
    rd_onnx_builder_destroy(b);
}

/* Exports model with cfg in the integer form and runs it with our FP32 reference against the INT8 simulator
   on three samples: the first `exact` outputs must be bit-identical, all cosine >= 0.9999. */
static void check_int_export(const char *dir, const char *model, const char *cfg, const char *qdq, int exact)
{
    char dump[4200], path[4300];
    snprintf(dump, sizeof dump, "%s/sim", dir);
    rd_cli_result r = rd_test_cli("export-qdq", model, "--cfg", cfg, "-o", qdq, "--integer", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    rd_error err;
    rd_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(qdq, NULL, &m, &err), RD_OK);
    for (int k = 0; k < 3; k++) { /* two calibration samples and one the calibration never saw */
        snprintf(path, sizeof path, "%s/s%d.npy", dir, k);
        r = rd_test_cli("run", model, "-i", path, "-p", "int8", "--cfg", cfg, "--outputs-only", "-q", "-o", dump, NULL);
        CU_ASSERT_EQUAL_FATAL(r.code, 0);
        rd_test_cli_free(&r);
        rd_tensor x, y[3], want;
        CU_ASSERT_EQUAL_FATAL(rd_npy_load(path, &x, &err), RD_OK);
        CU_ASSERT_EQUAL_FATAL(rd_model_run(m, &x, 1, NULL, y, 3, &err), RD_OK);
        for (int o = 0; o < 3; o++) {
            snprintf(path, sizeof path, "%s/%d.npy", dump, o);
            CU_ASSERT_EQUAL_FATAL(rd_npy_load(path, &want, &err), RD_OK);
            CU_ASSERT_EQUAL_FATAL(rd_tensor_nbytes(&want), rd_tensor_nbytes(&y[o]));
            double c = rd_test_cosine(&want, &y[o]);
            bool same = memcmp(want.data, y[o].data, rd_tensor_nbytes(&want)) == 0;
            if (o < exact)
                CU_ASSERT(same);    /* integer layers only: exact */
            CU_ASSERT(c >= 0.9999); /* y3 of the int8 model: a ConvTranspose the runtime computes in float */
            if (!same)
                fprintf(stderr, "export-qdq --integer, sample %d, output y%d: cos %.7f\n", k, o + 1, c);
            rd_tensor_fini(&want);
            rd_tensor_fini(&y[o]);
        }
        rd_tensor_fini(&x);
    }
    rd_model_destroy(m);
}

/* export-qdq --integer: ConvInteger/MatMulInteger in place of every integer layer but the ConvTranspose,
   and our FP32 reference running it equals the INT8 simulator bit for bit where the layers are integer;
   with d in float16 (hybrid), where the float16 layers read their constants rounded to half, everywhere. */
static void test_export_integer(void)
{
    char *dir = rd_test_tmpdir("qtools_int");
    char model[4200], ds[4200], cfg[4200], qdq[4200];
    rd_test_paths_in(dir, sizeof cfg, model, "model.onnx", ds, "dataset.txt", cfg, "m.cfg", qdq, "int.onnx", NULL);
    write_int_model(model);
    write_samples(dir, 3, (const int64_t[]){1, 4, 6, 6});
    rd_test_write_text(ds, "s0.npy\ns1.npy\n");
    rd_cli_result r = rd_test_cli("quantize", model, "--dataset", ds, "--input-layout", "nchw", "-o", cfg, NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    rd_test_cli_free(&r);
    r = rd_test_cli("export-qdq", model, "--cfg", cfg, "-o", qdq, "--integer", NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "node 'ct' (ConvTranspose) stays in QDQ form"));
    CU_ASSERT_PTR_NULL(strstr(r.errs, "node 'c1'"));
    rd_test_cli_free(&r);
    r = rd_test_cli("inspect", qdq, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    RD_ASSERT_HAS_TEXTS(r.out, "ConvInteger                  2", "MatMulInteger                4");
    CU_ASSERT_PTR_NULL(strstr(r.out, "Gemm"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "UNSUPPORTED"));
    rd_test_cli_free(&r);
    check_int_export(dir, model, cfg, qdq, 2);
    /* hybrid: d in float16 (the depthwise Conv then runs on half weights), read by int8 and float layers */
    char *text = read_text(cfg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    const char *head = "custom_quantize_layers: {}\n";
    CU_ASSERT_FATAL(strncmp(text, head, strlen(head)) == 0);
    char *hybrid = malloc(strlen(text) + 64);
    snprintf(hybrid, strlen(text) + 64, "custom_quantize_layers:\n    d: float16\n%s", text + strlen(head));
    rd_test_write_text(cfg, hybrid);
    free(hybrid);
    free(text);
    check_int_export(dir, model, cfg, qdq, 3);
    free(dir);
}

static void test_rknn_cfg_and_errors(void)
{
    char *dir = setup();
    char model[4200], ds[4200], cfg[4200], tk[4200], out[4200], bad[4200];
    rd_test_paths_in(dir, sizeof bad, model, "model.onnx", ds, "dataset.txt", cfg, "tk_out.cfg", tk, "step1.cfg", out,
                     "never.cfg", bad, "bad.cfg", NULL);
    /* a step-1 file as the toolkit names things: ':0' suffixes, '/' sanitised, one tensor of its own */
    rd_test_write_text(tk,
                       "custom_quantize_layers: {}\n"
                       "quantize_parameters:\n"
                       "    x:0: {qtype: asymmetric_quantized, qmethod: layer, dtype: int8, min: [-1.0], max: [1.0],"
                       " scale: [0.5], zero_point: [0]}\n"
                       "    _relu_Relu_output_0:0: {qmethod: layer, dtype: int8, min: [0.0], max: [1.0], scale: [0.5],"
                       " zero_point: [-128]}\n"
                       "    concat:0_before_conv: {qmethod: layer, dtype: int8, min: [0.0], max: [1.0], scale: [0.25],"
                       " zero_point: [-128]}\n");
    rd_cli_result r =
        rd_test_cli("quantize", model, "--dataset", ds, "--input-layout", "nchw", "-o", cfg, "--rknn-cfg", tk, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    RD_ASSERT_HAS_TEXTS(r.errs, "2 of 3 entries matched", "concat:0_before_conv");
    rd_test_cli_free(&r);
    rd_qcfg q;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_load(cfg, &q, &err), RD_OK);
    CU_ASSERT_EQUAL(q.n_params, 3);
    const rd_qcfg_param *p = rd_qcfg_find(&q, "_relu_Relu_output_0:0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_NOT_EQUAL(p->scale[0], 0.5f); /* ours */
    p = rd_qcfg_find(&q, "concat:0_before_conv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(p->scale[0], 0.25f); /* kept as the toolkit wrote it */
    rd_qcfg_fini(&q);
    /* a cfg naming a tensor we do not have: refused with the closest names, exit 3, no file */
    rd_test_write_text(bad,
                       "quantize_parameters:\n    /relu/Relu_outptu_0: {dtype: int8, scale: [0.1], zero_point: [0]}\n");
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("bad.cfg:2", "closest", "/relu/Relu_output_0"), "quantize", model, "--cfg", bad,
                  "-o", out);
    /* a fused-away tensor is not quantizable */
    rd_test_write_text(
        bad, "quantize_parameters:\n    /conv1/Conv_output_0: {dtype: int8, scale: [0.1], zero_point: [0]}\n");
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("fused it into"), "export-qdq", model, "--cfg", bad, "-o", out);
    FILE *f = fopen(out, "rb");
    CU_ASSERT_PTR_NULL(f);
    if (f)
        fclose(f);
    /* usage */
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("missing -o"), "quantize", model, "--dataset", ds);
    RD_CLI_EXPECT(2, NULL, NULL, "eval", model);
    static const char *const cmds[] = {"quantize", "export-qdq", "eval"};
    for (size_t i = 0; i < 3; i++) {
        RD_CLI_EXPECT(0, RD_TEXTS("usage: rknn-diag"), NULL, cmds[i], "--help");
    }
    char *unused = read_text(out);
    CU_ASSERT_PTR_NULL(unused);
    free(unused);
    free(dir);
}

static void test_eval_dataset(void)
{
    char *dir = setup();
    char model[4200], ds[4200], labels[4200];
    rd_test_paths_in(dir, sizeof ds, model, "model.onnx", ds, "dataset.txt", labels, "labels.txt", NULL);
    rd_test_write_text(labels, "0\n1\n2\n3\n");
    rd_cli_result r =
        rd_test_cli("eval", model, "--dataset", ds, "--labels", labels, "--input-layout", "nchw", "--json", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    RD_ASSERT_HAS_TEXTS(r.out, "\"int8\"", "\"samples\":\t4");
    rd_test_cli_free(&r);
    rd_test_write_text(labels, "0\n1\nseven\n");
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("labels.txt:3"), "eval", model, "--dataset", ds, "--labels", labels,
                  "--input-layout", "nchw");
    free(dir);
}

RD_TEST_REGISTER(register_qtools)
{
    RD_SUITE("qtools", {"quantize: round trip, run --cfg, export-qdq", test_quantize_roundtrip},
             {"export-qdq --integer: integer layers exact", test_export_integer},
             {"quantize --rknn-cfg, bad cfgs, usage", test_rknn_cfg_and_errors},
             {"eval on a dataset", test_eval_dataset});
}

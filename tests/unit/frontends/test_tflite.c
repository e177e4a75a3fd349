/*
 * test_tflite.c: the TFLite frontend on models written by tflite_synth.c.
 *
 *  - a float32 network (CONV_2D + RELU6, DEPTHWISE_CONV_2D stride 2 + RELU, MAX_POOL_2D, RESHAPE,
 *    FULLY_CONNECTED, SOFTMAX, MEAN) against ONNX Runtime's outputs for the equivalent NCHW ONNX model that
 *    this test writes with the same weights (build/tests/frontends/tflite_equiv.onnx; the goldens below were
 *    made by ../shared/tools/ort from it), and against our own run of that ONNX model;
 *  - the model's own names and NHWC shapes in the loaded graph; float16 weights behind DEQUANTIZE;
 *  - an int8 model: float32 form (dequantized) and model precision (int8 codes, within one code of the
 *    quantized float golden), --precision model refused for a float model;
 *  - malformed files: every truncation, bad identifier, tensor index, buffer size, options type, and all
 *    unsupported operators named in one message.
 */
#include "fe_check.h"
#include "rd_test.h"
#include "rknn_diag/frontends.h"
#include "tflite_synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic weights in [-1, 1). */
static void fill(float *v, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (float)((int32_t)(seed >> 8) % 2000) / 1000.0f;
        v[i] = v[i] > 1.0f ? v[i] - 2.0f : v[i];
    }
}

/* The float network's weights (TFLite layouts). */
typedef struct net_w {
    float w0[4 * 3 * 3 * 3], b0[4]; /* CONV_2D OHWI */
    float w1[1 * 3 * 3 * 4], b1[4]; /* DEPTHWISE [1, kh, kw, c] */
    float w2[5 * 16], b2[5];        /* FULLY_CONNECTED [n, k] */
    float x[1 * 8 * 8 * 3];         /* the input, NHWC */
} net_w;

static void net_weights(net_w *w)
{
    fill(w->w0, 108, 1);
    fill(w->b0, 4, 2);
    fill(w->w1, 36, 3);
    fill(w->b1, 4, 4);
    fill(w->w2, 80, 5);
    fill(w->b2, 5, 6);
    fill(w->x, 192, 7);
    for (int i = 0; i < 192; i++)
        w->x[i] *= 2.0f;
}

/* x -> conv+relu6 (t1) -> dwconv s2+relu (t2) -> maxpool (t3) -> reshape (t4) -> fc (t5) -> softmax (y);
   mean(t2, [1,2]) (m). float16 weights of the first conv (through DEQUANTIZE) when f16. */
static tfs_model *float_net(const net_w *w, bool f16)
{
    tfs_model *m = tfs_create();
    int x = tfs_tensor(m, "input", TFS_FLOAT32, 4, (const int32_t[]){1, 8, 8, 3}, NULL, 0);
    int w0;
    if (f16) {
        uint16_t h[108];
        for (int i = 0; i < 108; i++)
            h[i] = rd_f32_to_f16(w->w0[i]);
        int w0h = tfs_tensor(m, "conv1/kernel_fp16", TFS_FLOAT16, 4, (const int32_t[]){4, 3, 3, 3}, h, sizeof h);
        w0 = tfs_tensor(m, "conv1/kernel", TFS_FLOAT32, 4, (const int32_t[]){4, 3, 3, 3}, NULL, 0);
        tfs_op(m, 6, &w0h, 1, &w0, 1, 0, NULL, 0);
    } else {
        w0 = tfs_tensor(m, "conv1/kernel", TFS_FLOAT32, 4, (const int32_t[]){4, 3, 3, 3}, w->w0, sizeof w->w0);
    }
    int b0 = tfs_tensor(m, "conv1/bias", TFS_FLOAT32, 1, (const int32_t[]){4}, w->b0, sizeof w->b0);
    int t1 = tfs_tensor(m, "conv1/Relu6", TFS_FLOAT32, 4, (const int32_t[]){1, 8, 8, 4}, NULL, 0);
    int w1 = tfs_tensor(m, "dw/kernel", TFS_FLOAT32, 4, (const int32_t[]){1, 3, 3, 4}, w->w1, sizeof w->w1);
    int b1 = tfs_tensor(m, "dw/bias", TFS_FLOAT32, 1, (const int32_t[]){4}, w->b1, sizeof w->b1);
    int t2 = tfs_tensor(m, "dw/Relu", TFS_FLOAT32, 4, (const int32_t[]){1, 4, 4, 4}, NULL, 0);
    int t3 = tfs_tensor(m, "pool", TFS_FLOAT32, 4, (const int32_t[]){1, 2, 2, 4}, NULL, 0);
    int32_t shape[2] = {1, 16};
    int s = tfs_tensor(m, "flatten/shape", TFS_INT32, 1, (const int32_t[]){2}, shape, sizeof shape);
    int t4 = tfs_tensor(m, "flatten", TFS_FLOAT32, 2, (const int32_t[]){1, 16}, NULL, 0);
    int w2 = tfs_tensor(m, "fc/kernel", TFS_FLOAT32, 2, (const int32_t[]){5, 16}, w->w2, sizeof w->w2);
    int b2 = tfs_tensor(m, "fc/bias", TFS_FLOAT32, 1, (const int32_t[]){5}, w->b2, sizeof w->b2);
    int t5 = tfs_tensor(m, "fc/BiasAdd", TFS_FLOAT32, 2, (const int32_t[]){1, 5}, NULL, 0);
    int y = tfs_tensor(m, "probs", TFS_FLOAT32, 2, (const int32_t[]){1, 5}, NULL, 0);
    int32_t axes[2] = {1, 2};
    int ax = tfs_tensor(m, "mean/axes", TFS_INT32, 1, (const int32_t[]){2}, axes, sizeof axes);
    int mean = tfs_tensor(m, "mean", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    /* Conv2DOptions: padding SAME(0), stride_w, stride_h, act RELU6 (3) */
    tfs_op(m, 3, (const int[]){x, w0, b0}, 3, &t1, 1, 1,
           (const tfs_field[]){{0, 1, 0}, {1, 4, 1}, {2, 4, 1}, {3, 1, 3}}, 4);
    /* DepthwiseConv2DOptions: SAME, stride 2, depth_multiplier 1, act RELU (1) */
    tfs_op(m, 4, (const int[]){t1, w1, b1}, 3, &t2, 1, 2,
           (const tfs_field[]){{0, 1, 0}, {1, 4, 2}, {2, 4, 2}, {3, 4, 1}, {4, 1, 1}}, 5);
    /* Pool2DOptions: VALID(1), stride 2, filter 2x2 */
    tfs_op(m, 17, &t2, 1, &t3, 1, 5, (const tfs_field[]){{0, 1, 1}, {1, 4, 2}, {2, 4, 2}, {3, 4, 2}, {4, 4, 2}}, 5);
    tfs_op(m, 22, (const int[]){t3, s}, 2, &t4, 1, 0, NULL, 0);
    tfs_op(m, 9, (const int[]){t4, w2, b2}, 3, &t5, 1, 8, NULL, 0);
    tfs_op(m, 25, &t5, 1, &y, 1, 9, (const tfs_field[]){{0, 4, tfs_f32(1.0f)}}, 1);
    tfs_op(m, 40, (const int[]){t2, ax}, 2, &mean, 1, 27, (const tfs_field[]){{0, 1, 0}}, 1);
    tfs_io(m, &x, 1, (const int[]){y, mean}, 2);
    return m;
}

static rd_model *load_tflite(tfs_model *tm, bool model_precision, rd_frontend_info *info, rd_error *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(tfs_finish(tm, &buf, &len, err), RD_OK);
    void *onnx = NULL;
    size_t onnx_len = 0;
    rd_frontend_options fo = {.model_precision = model_precision};
    rd_model *m = NULL;
    rd_status st = rd_tflite_to_onnx(buf, len, "synth.tflite", &fo, &onnx, &onnx_len, info, err);
    if (st == RD_OK)
        st = rd_model_load_mem(onnx, onnx_len, "synth.tflite", NULL, NULL, &m, err);
    if (st != RD_OK)
        fprintf(stderr, "\n%s\n", err->msg);
    free(onnx);
    free(buf);
    return m;
}

static void transpose4(const float *src, const int64_t dims[4], const int perm[4], float *dst)
{
    int64_t od[4], st[4] = {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
    for (int d = 0; d < 4; d++)
        od[d] = dims[perm[d]];
    int64_t i = 0;
    for (int64_t a = 0; a < od[0]; a++)
        for (int64_t b = 0; b < od[1]; b++)
            for (int64_t c = 0; c < od[2]; c++)
                for (int64_t e = 0; e < od[3]; e++)
                    dst[i++] = src[a * st[perm[0]] + b * st[perm[1]] + c * st[perm[2]] + e * st[perm[3]]];
}

static void add_f32(rd_onnx_builder *b, const char *name, int rank, const int64_t *dims, const float *v)
{
    rd_tensor t = {.dtype = RD_DT_F32, .rank = rank};
    if (rank > 0)
        memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
    t.data = (void *)v;
    rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
}

static void add_i64(rd_onnx_builder *b, const char *name, int n, const int64_t *v)
{
    rd_tensor t = {.dtype = RD_DT_I64, .rank = 1, .dims = {n}, .data = (void *)v};
    rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
}

/* The same network written directly as NCHW ONNX (the input stays NHWC, as the TFLite model's). */
static rd_onnx_builder *equivalent_onnx(const net_w *w)
{
    static float w0[108], w1[36];
    transpose4(w->w0, (const int64_t[]){4, 3, 3, 3}, (const int[]){0, 3, 1, 2}, w0);
    transpose4(w->w1, (const int64_t[]){1, 3, 3, 4}, (const int[]){3, 0, 1, 2}, w1);
    rd_onnx_builder *b = rd_onnx_builder_create(8, 14);
    rd_onnx_add_input(b, "input", RD_DT_F32, 4, (const int64_t[]){1, 8, 8, 3}, NULL);
    add_f32(b, "w0", 4, (const int64_t[]){4, 3, 3, 3}, w0);
    add_f32(b, "b0", 1, (const int64_t[]){4}, w->b0);
    add_f32(b, "w1", 4, (const int64_t[]){4, 1, 3, 3}, w1);
    add_f32(b, "b1", 1, (const int64_t[]){4}, w->b1);
    add_f32(b, "w2", 2, (const int64_t[]){5, 16}, w->w2);
    add_f32(b, "b2", 1, (const int64_t[]){5}, w->b2);
    add_f32(b, "zero", 0, NULL, (const float[]){0.0f});
    add_f32(b, "six", 0, NULL, (const float[]){6.0f});
    add_i64(b, "shape", 2, (const int64_t[]){1, 16});
    rd_onnx_node *n =
        rd_onnx_add_node(b, "Transpose", "in_t", (const char *const[]){"input"}, 1, (const char *const[]){"x"}, 1);
    rd_onnx_attr_ints(n, "perm", (const int64_t[]){0, 3, 1, 2}, 4);
    n = rd_onnx_add_node(b, "Conv", "c0", (const char *const[]){"x", "w0", "b0"}, 3, (const char *const[]){"c0"}, 1);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_node(b, "Clip", "r0", (const char *const[]){"c0", "zero", "six"}, 3, (const char *const[]){"r0"}, 1);
    n = rd_onnx_add_node(b, "Conv", "c1", (const char *const[]){"r0", "w1", "b1"}, 3, (const char *const[]){"c1"}, 1);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){0, 0, 1, 1}, 4); /* TF SAME at stride 2: the extra pad last */
    rd_onnx_attr_ints(n, "strides", (const int64_t[]){2, 2}, 2);
    rd_onnx_attr_int(n, "group", 4);
    rd_onnx_add_node(b, "Relu", "r1", (const char *const[]){"c1"}, 1, (const char *const[]){"r1"}, 1);
    n = rd_onnx_add_node(b, "MaxPool", "p", (const char *const[]){"r1"}, 1, (const char *const[]){"p"}, 1);
    rd_onnx_attr_ints(n, "kernel_shape", (const int64_t[]){2, 2}, 2);
    rd_onnx_attr_ints(n, "strides", (const int64_t[]){2, 2}, 2);
    n = rd_onnx_add_node(b, "Transpose", "p_t", (const char *const[]){"p"}, 1, (const char *const[]){"p_nhwc"}, 1);
    rd_onnx_attr_ints(n, "perm", (const int64_t[]){0, 2, 3, 1}, 4);
    rd_onnx_add_node(b, "Reshape", "f", (const char *const[]){"p_nhwc", "shape"}, 2, (const char *const[]){"f"}, 1);
    n = rd_onnx_add_node(b, "Gemm", "fc", (const char *const[]){"f", "w2", "b2"}, 3, (const char *const[]){"fc"}, 1);
    rd_onnx_attr_int(n, "transB", 1);
    n = rd_onnx_add_node(b, "Softmax", "probs", (const char *const[]){"fc"}, 1, (const char *const[]){"probs"}, 1);
    rd_onnx_attr_int(n, "axis", -1);
    n = rd_onnx_add_node(b, "ReduceMean", "mean", (const char *const[]){"r1"}, 1, (const char *const[]){"mean"}, 1);
    rd_onnx_attr_ints(n, "axes", (const int64_t[]){2, 3}, 2);
    rd_onnx_attr_int(n, "keepdims", 0);
    rd_onnx_add_output(b, "probs", RD_DT_F32, 2, (const int64_t[]){1, 5}, NULL);
    rd_onnx_add_output(b, "mean", RD_DT_F32, 2, (const int64_t[]){1, 4}, NULL);
    return b;
}

/* ONNX Runtime 1.30 (CPU, one thread) on tflite_equiv.onnx with the input of net_weights: probs, then mean. */
static const float ort_golden[9] = {
#include "tflite_equiv_ort.inc"
};

static void run_net(rd_model *m, const net_w *w, rd_tensor out[2])
{
    rd_tensor x = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, 8, 8, 3}, .data = (void *)w->x};
    rd_error err;
    memset(out, 0, 2 * sizeof *out);
    rd_status st = rd_model_run(m, &x, 1, NULL, out, 2, &err);
    fe_assert_ok(st, &err);
}

static void test_float_net(void)
{
    static net_w w;
    net_weights(&w);
    rd_error err;
    rd_frontend_info info;
    tfs_model *tm = float_net(&w, false);
    rd_model *m = load_tflite(tm, false, &info, &err);
    tfs_destroy(tm);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(info.format, RD_FORMAT_TFLITE);
    CU_ASSERT_FALSE(info.quantized);
    /* the model's own names, in the model's NHWC layout */
    static const struct {
        const char *name;
        int64_t dims[4];
        int rank;
    } names[] = {
        {"conv1/Relu6", {1, 8, 8, 4}, 4},
        {"dw/Relu", {1, 4, 4, 4}, 4},
        {"pool", {1, 2, 2, 4}, 4},
        {"flatten", {1, 16}, 2},
        {"fc/BiasAdd", {1, 5}, 2},
        {"probs", {1, 5}, 2},
        {"mean", {1, 4}, 2},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int v = rd_model_find_value(m, names[i].name);
        CU_ASSERT_FATAL(v >= 0);
        rd_value_info vi;
        rd_model_value(m, (size_t)v, &vi);
        CU_ASSERT_EQUAL(vi.rank, names[i].rank);
        CU_ASSERT_EQUAL(memcmp(vi.dims, names[i].dims, (size_t)vi.rank * sizeof(int64_t)), 0);
    }
    /* against our own run of the equivalent ONNX model and ONNX Runtime's outputs for it */
    rd_tensor x = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, 8, 8, 3}, .data = w.x};
    fe_check_equivalent(m, equivalent_onnx(&w), &x, 2, ort_golden, 1e-5, "tflite", "tflite_equiv.onnx", "input.npy");
    rd_model_destroy(m);
}

static void test_float16_weights(void)
{
    static net_w w;
    net_weights(&w);
    for (int i = 0; i < 108; i++) /* the float32 model with the float16 model's weights */
        w.w0[i] = rd_f16_to_f32(rd_f32_to_f16(w.w0[i]));
    rd_error err;
    tfs_model *a = float_net(&w, false), *h = float_net(&w, true);
    rd_model *ma = load_tflite(a, false, NULL, &err), *mh = load_tflite(h, false, NULL, &err);
    tfs_destroy(a);
    tfs_destroy(h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ma);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mh);
    int v = rd_model_find_value(mh, "conv1/kernel_fp16");
    CU_ASSERT_FATAL(v >= 0);
    CU_ASSERT_EQUAL(rd_model_constant(mh, (size_t)v)->dtype, RD_DT_F16); /* the model's own bytes */
    rd_tensor ra[2], rh[2];
    run_net(ma, &w, ra);
    run_net(mh, &w, rh);
    for (int o = 0; o < 2; o++) {
        CU_ASSERT_EQUAL(memcmp(ra[o].data, rh[o].data, rd_tensor_nbytes(&ra[o])), 0);
        rd_tensor_fini(&ra[o]);
        rd_tensor_fini(&rh[o]);
    }
    rd_model_destroy(ma);
    rd_model_destroy(mh);
}

/* int8: x (scale 1/16, zp -3) -> CONV_2D per channel (2 filters, 1x1... 3x3 SAME) + RELU -> y (scale 1/8, zp -128). */
static tfs_model *int8_net(void)
{
    tfs_model *m = tfs_create();
    int x = tfs_tensor(m, "x", TFS_INT8, 4, (const int32_t[]){1, 4, 4, 2}, NULL, 0);
    tfs_quant(m, x, (const float[]){0.0625f}, (const int64_t[]){-3}, 1, 0);
    int8_t w[2 * 3 * 3 * 2];
    for (int i = 0; i < 36; i++)
        w[i] = (int8_t)((i * 37) % 255 - 127);
    int wt = tfs_tensor(m, "w", TFS_INT8, 4, (const int32_t[]){2, 3, 3, 2}, w, sizeof w);
    tfs_quant(m, wt, (const float[]){0.01f, 0.02f}, (const int64_t[]){0, 0}, 2, 0);
    int32_t bias[2] = {100, -2000};
    int bt = tfs_tensor(m, "b", TFS_INT32, 1, (const int32_t[]){2}, bias, sizeof bias);
    tfs_quant(m, bt, (const float[]){0.0625f * 0.01f, 0.0625f * 0.02f}, (const int64_t[]){0, 0}, 2, 0);
    int y = tfs_tensor(m, "y", TFS_INT8, 4, (const int32_t[]){1, 4, 4, 2}, NULL, 0);
    tfs_quant(m, y, (const float[]){0.125f}, (const int64_t[]){-128}, 1, 0);
    int z = tfs_tensor(m, "z", TFS_FLOAT32, 4, (const int32_t[]){1, 4, 4, 2}, NULL, 0);
    tfs_op(m, 3, (const int[]){x, wt, bt}, 3, &y, 1, 1, (const tfs_field[]){{0, 1, 0}, {1, 4, 1}, {2, 4, 1}, {3, 1, 1}},
           4);
    tfs_op(m, 6, &y, 1, &z, 1, 0, NULL, 0);
    tfs_io(m, &x, 1, (const int[]){y, z}, 2);
    return m;
}

static void test_int8_model(void)
{
    rd_error err;
    rd_frontend_info info;
    tfs_model *tm = int8_net();
    rd_model *mf = load_tflite(tm, false, &info, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mf);
    CU_ASSERT(info.quantized && !info.model_precision);
    rd_model *mq = load_tflite(tm, true, &info, &err);
    tfs_destroy(tm);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mq);
    CU_ASSERT(info.quantized && info.model_precision);
    rd_value_info vi;
    rd_model_value(mq, (size_t)rd_model_input(mq, 0), &vi);
    CU_ASSERT_EQUAL(vi.dtype, RD_DT_I8);
    rd_model_value(mf, (size_t)rd_model_input(mf, 0), &vi);
    CU_ASSERT_EQUAL(vi.dtype, RD_DT_F32);
    int8_t xq[32];
    float xf[32];
    for (int i = 0; i < 32; i++) {
        xq[i] = (int8_t)((i * 29) % 200 - 100);
        xf[i] = 0.0625f * (float)(xq[i] + 3);
    }
    rd_tensor inq = {.dtype = RD_DT_I8, .rank = 4, .dims = {1, 4, 4, 2}, .data = xq};
    rd_tensor inf = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, 4, 4, 2}, .data = xf};
    rd_tensor oq[2] = {0}, of[2] = {0};
    CU_ASSERT_EQUAL_FATAL(rd_model_run(mq, &inq, 1, NULL, oq, 2, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_model_run(mf, &inf, 1, NULL, of, 2, &err), RD_OK);
    CU_ASSERT_EQUAL(oq[0].dtype, RD_DT_I8);
    CU_ASSERT_EQUAL(oq[1].dtype, RD_DT_F32);
    int worst = 0;
    for (int i = 0; i < 32; i++) {
        float g = ((float *)of[0].data)[i];
        int want = (int)lrintf(g / 0.125f) - 128;
        want = want < -128 ? -128 : want > 127 ? 127 : want;
        int d = abs(((int8_t *)oq[0].data)[i] - want);
        worst = d > worst ? d : worst;
        /* DEQUANTIZE of the codes in the model-precision graph */
        CU_ASSERT_EQUAL(((float *)oq[1].data)[i], 0.125f * (float)(((int8_t *)oq[0].data)[i] + 128));
        CU_ASSERT(((int8_t *)oq[0].data)[i] >= -128); /* RELU's floor: the zero point */
    }
    CU_ASSERT(worst <= 1);
    for (int o = 0; o < 2; o++) {
        rd_tensor_fini(&oq[o]);
        rd_tensor_fini(&of[o]);
    }
    rd_model_destroy(mf);
    rd_model_destroy(mq);
}

/* The file of tm, which it destroys; malloc'ed. */
static uint8_t *model_file(tfs_model *tm, size_t *len)
{
    uint8_t *buf;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(tfs_finish(tm, &buf, len, &err), RD_OK);
    tfs_destroy(tm);
    return buf;
}

/* The file of the float network with float32 weights, malloc'ed. */
static uint8_t *float_net_file(size_t *len)
{
    static net_w w;
    net_weights(&w);
    return model_file(float_net(&w, false), len);
}

static void test_model_precision_of_float_model(void)
{
    size_t len;
    uint8_t *buf = float_net_file(&len);
    rd_error err;
    void *onnx = NULL;
    size_t n = 0;
    rd_frontend_options fo = {.model_precision = true};
    CU_ASSERT_EQUAL(rd_tflite_to_onnx(buf, len, "f.tflite", &fo, &onnx, &n, NULL, &err), RD_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not quantized"));
    free(buf);
}

/* ---- malformed files --------------------------------------------------------------------------------- */

static rd_status convert(const uint8_t *buf, size_t len, rd_error *err)
{
    void *onnx = NULL;
    size_t n = 0;
    rd_status st = rd_tflite_to_onnx(buf, len, "bad.tflite", NULL, &onnx, &n, NULL, err);
    free(onnx);
    return st;
}

static void test_truncated(void)
{
    size_t len;
    uint8_t *buf = float_net_file(&len);
    rd_error err;
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, buf, cut);
        rd_status st = convert(copy, cut, &err);
        bool padding_only = true; /* the builder's last bytes may be alignment nobody refers to */
        for (size_t i = cut; i < len; i++)
            padding_only &= buf[i] == 0;
        CU_ASSERT(st != RD_OK || padding_only);
        if (st != RD_OK)
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bad.tflite"));
        free(copy);
    }
    memcpy(buf + 4, "TFL2", 4);
    CU_ASSERT_EQUAL(convert(buf, len, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "TFL3"));
    free(buf);
}

/* Writes the file of tm, which it destroys, and converts it: the conversion's status. */
static rd_status convert_model(tfs_model *tm, rd_error *err)
{
    size_t len;
    uint8_t *buf = model_file(tm, &len);
    rd_status st = convert(buf, len, err);
    free(buf);
    return st;
}

static void test_bad_indices_and_sizes(void)
{
    rd_error err;
    /* an operator reading tensor 7 of 2 */
    tfs_model *tm = tfs_create();
    int x = tfs_tensor(tm, "x", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    int y = tfs_tensor(tm, "y", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    tfs_op(tm, 19, (const int[]){7}, 1, &y, 1, 0, NULL, 0);
    tfs_io(tm, &x, 1, &y, 1);
    CU_ASSERT_EQUAL(convert_model(tm, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "operator #0 inputs: tensor index 7"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "offset"));
    /* a constant whose buffer is shorter than its shape */
    tm = tfs_create();
    float v[3] = {1, 2, 3};
    x = tfs_tensor(tm, "x", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    int c = tfs_tensor(tm, "c", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, v, sizeof v);
    y = tfs_tensor(tm, "y", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    tfs_op(tm, 0, (const int[]){x, c}, 2, &y, 1, 11, NULL, 0);
    tfs_io(tm, &x, 1, &y, 1);
    CU_ASSERT_EQUAL(convert_model(tm, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tensor #1 'c'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "12 bytes"));
    /* options of the wrong union type (Pool2DOptions on an ADD) */
    tm = tfs_create();
    x = tfs_tensor(tm, "x", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    y = tfs_tensor(tm, "y", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    tfs_op(tm, 0, (const int[]){x, x}, 2, &y, 1, 5, (const tfs_field[]){{0, 1, 1}}, 1);
    tfs_io(tm, &x, 1, &y, 1);
    CU_ASSERT_EQUAL(convert_model(tm, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "options of type 5, expected 11"));
}

static void test_unsupported_all_listed(void)
{
    tfs_model *tm = tfs_create();
    int x = tfs_tensor(tm, "x", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    int a = tfs_tensor(tm, "a", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    int b = tfs_tensor(tm, "b", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    int c = tfs_tensor(tm, "c", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    int d = tfs_tensor(tm, "d", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    tfs_custom_op(tm, "TFLite_Detection_PostProcess", &x, 1, &a, 1);
    tfs_op(tm, 19, &a, 1, &b, 1, 0, NULL, 0); /* RELU: supported */
    tfs_op(tm, 16, &b, 1, &c, 1, 0, NULL, 0); /* LSTM */
    tfs_op(tm, 16, &c, 1, &d, 1, 0, NULL, 0); /* LSTM again: counted, named once */
    tfs_io(tm, &x, 1, &d, 1);
    rd_error err;
    CU_ASSERT_EQUAL(convert_model(tm, &err), RD_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "3 operators are of 2 kinds not supported"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "CUSTOM 'TFLite_Detection_PostProcess' (operator #0 'a')"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "LSTM (operator #2 'c')"));
}

static void test_format_detection(void)
{
    static const uint8_t tfl[8] = {0x10, 0, 0, 0, 'T', 'F', 'L', '3'}, onnx[4] = {0x08, 0x07, 0x12, 0x00};
    CU_ASSERT_EQUAL(rd_model_format_detect(tfl, sizeof tfl), RD_FORMAT_TFLITE);
    CU_ASSERT_EQUAL(rd_model_format_detect(onnx, sizeof onnx), RD_FORMAT_ONNX);
    CU_ASSERT_EQUAL(rd_model_format_detect("hello", 5), RD_FORMAT_UNKNOWN);
    rd_model_format f;
    rd_error err;
    CU_ASSERT(rd_model_format_parse("TFLite", &f, &err) == RD_OK && f == RD_FORMAT_TFLITE);
    CU_ASSERT_EQUAL(rd_model_format_parse("keras", &f, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "onnx, tflite"));
    /* a file of another format than the config says */
    size_t len;
    uint8_t *buf = float_net_file(&len);
    char *dir = rd_test_tmpdir("tflite_detect");
    char *path = rd_test_join(dir, "model.onnx"); /* the name says nothing: the content does */
    CU_ASSERT_EQUAL_FATAL(rd_file_write_atomic(path, buf, len, NULL, &err), RD_OK);
    rd_frontend_options fo = {.expect = RD_FORMAT_ONNX};
    rd_model *m = NULL;
    rd_frontend_info info;
    CU_ASSERT_EQUAL(rd_frontend_load(path, &fo, NULL, &m, &info, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "platform onnx, but the file is tflite"));
    CU_ASSERT_EQUAL(rd_frontend_load(path, NULL, NULL, &m, &info, &err), RD_OK);
    CU_ASSERT_EQUAL(info.format, RD_FORMAT_TFLITE);
    rd_model_destroy(m);
    free(buf);
    free(path);
    free(dir);
}

/* Every tensor of the model keeps its name and its declared (NHWC) shape in the loaded graph. */
static void check_declared_shapes(tfs_model *tm, bool model_precision)
{
    uint8_t *buf;
    size_t len;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(tfs_finish(tm, &buf, &len, &err), RD_OK);
    rd_model *m = load_tflite(tm, model_precision, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    static const char *const names[] = {"pad",    "avgpool", "add",      "sub",   "mul",       "concat", "leaky",
                                        "hswish", "d2s",     "bilinear", "out_a", "transpose", "slice",  "out_b",
                                        "mean",   "flat",    "softmax",  "out_c", "half1",     "out_d"};
    static const int64_t dims[][4] = {{1, 6, 6, 4}, {1, 4, 4, 4}, {1, 4, 4, 4}, {1, 4, 4, 4}, {1, 4, 4, 4},
                                      {1, 4, 4, 8}, {1, 4, 4, 8}, {1, 4, 4, 8}, {1, 8, 8, 2}, {1, 16, 12, 2},
                                      {1, 5, 7, 2}, {1, 8, 4, 4}, {1, 3, 4},    {1, 3, 4},    {1, 1, 1, 8},
                                      {1, 8},       {1, 8},       {1, 4},       {1, 4},       {1, 2}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int v = rd_model_find_value(m, names[i]);
        CU_ASSERT_FATAL(v >= 0);
        rd_value_info vi;
        rd_model_value(m, (size_t)v, &vi);
        int rank = dims[i][3] ? 4 : dims[i][2] ? 3 : 2;
        if (vi.rank != rank || memcmp(vi.dims, dims[i], (size_t)rank * sizeof(int64_t)) != 0)
            fprintf(stderr, "\n%s: rank %d, dims %lld %lld %lld %lld\n", names[i], vi.rank, (long long)vi.dims[0],
                    (long long)vi.dims[1], (long long)vi.dims[2], (long long)vi.dims[3]);
        CU_ASSERT_EQUAL(vi.rank, rank);
        CU_ASSERT_EQUAL(memcmp(vi.dims, dims[i], (size_t)rank * sizeof(int64_t)), 0);
    }
    float x[64];
    fill(x, 64, 11);
    rd_tensor in = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, 4, 4, 4}, .data = x};
    rd_tensor out[4] = {0};
    CU_ASSERT_EQUAL_FATAL(rd_model_run(m, &in, 1, NULL, out, 4, &err), RD_OK);
    /* the first SPLIT half of a softmax holds part of its mass */
    float sum = 0.0f;
    for (int i = 0; i < 4; i++)
        sum += ((float *)out[2].data)[i];
    CU_ASSERT(sum > 0.0f && sum < 1.0f);
    for (int i = 0; i < 4; i++)
        rd_tensor_fini(&out[i]);
    rd_model_destroy(m);
    free(buf);
}

static void test_zoo(void)
{
    tfs_model *tm = tfs_example_zoo();
    check_declared_shapes(tm, false);
    tfs_destroy(tm);
}

/* SPLIT's outputs are any tensors of the table: here the second half's tensor comes before the first's, with
   the axis between them, and each output keeps its own name and values. */
static void test_split_outputs_anywhere(void)
{
    tfs_model *tm = tfs_create();
    int x = tfs_tensor(tm, "x", TFS_FLOAT32, 2, (const int32_t[]){1, 4}, NULL, 0);
    int second = tfs_tensor(tm, "second", TFS_FLOAT32, 2, (const int32_t[]){1, 2}, NULL, 0);
    int ax = tfs_tensor(tm, "axis", TFS_INT32, 0, NULL, (const int32_t[]){1}, 4);
    int first = tfs_tensor(tm, "first", TFS_FLOAT32, 2, (const int32_t[]){1, 2}, NULL, 0);
    tfs_op(tm, 49, (const int[]){ax, x}, 2, (const int[]){first, second}, 2, 35, (const tfs_field[]){{0, 4, 2}}, 1);
    tfs_io(tm, &x, 1, (const int[]){first, second}, 2);
    rd_error err;
    rd_model *m = load_tflite(tm, false, NULL, &err);
    tfs_destroy(tm);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    float xv[4] = {1, 2, 3, 4};
    rd_tensor in = {.dtype = RD_DT_F32, .rank = 2, .dims = {1, 4}, .data = xv};
    rd_tensor out[2] = {0};
    CU_ASSERT_EQUAL_FATAL(rd_model_run(m, &in, 1, NULL, out, 2, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_model_output(m, 0), rd_model_find_value(m, "first"));
    CU_ASSERT_EQUAL(rd_model_output(m, 1), rd_model_find_value(m, "second"));
    const float *a = out[0].data, *b = out[1].data;
    CU_ASSERT(a[0] == 1 && a[1] == 2 && b[0] == 3 && b[1] == 4);
    for (int i = 0; i < 2; i++)
        rd_tensor_fini(&out[i]);
    rd_model_destroy(m);
}

static void test_int16_model(void)
{
    rd_error err;
    rd_frontend_info info;
    tfs_model *tm = tfs_example_int16();
    rd_model *mq = load_tflite(tm, true, &info, &err), *mf = load_tflite(tm, false, NULL, &err);
    tfs_destroy(tm);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mq);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mf);
    int16_t xq[90];
    float xf[90];
    for (int i = 0; i < 90; i++) {
        xq[i] = (int16_t)((i * 997) % 8000 - 4000);
        xf[i] = (float)xq[i] / 4096.0f;
    }
    rd_tensor inq = {.dtype = RD_DT_I16, .rank = 4, .dims = {1, 5, 6, 3}, .data = xq};
    rd_tensor inf = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, 5, 6, 3}, .data = xf};
    /* observe "y" in both runs through the graph outputs: out is DEQUANTIZE(fc) */
    rd_tensor oq = {0}, of = {0};
    CU_ASSERT_EQUAL_FATAL(rd_model_run(mq, &inq, 1, NULL, &oq, 1, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_model_run(mf, &inf, 1, NULL, &of, 1, &err), RD_OK);
    CU_ASSERT_EQUAL(oq.dtype, RD_DT_F32);
    for (int i = 0; i < 2; i++) /* four requantizations of 1/512..1/4096 steps apart: a few fc codes at most */
        CU_ASSERT(fabsf(((float *)oq.data)[i] - ((float *)of.data)[i]) < 8.0f / 512);
    int v = rd_model_find_value(mq, "y");
    CU_ASSERT_FATAL(v >= 0);
    rd_value_info vi;
    rd_model_value(mq, (size_t)v, &vi);
    CU_ASSERT_EQUAL(vi.dtype, RD_DT_I16);
    rd_tensor_fini(&oq);
    rd_tensor_fini(&of);
    rd_model_destroy(mq);
    rd_model_destroy(mf);
}

RD_TEST_REGISTER(register_tflite)
{
    RD_SUITE("tflite", {"float network vs ONNX Runtime", test_float_net}, {"float16 weights", test_float16_weights},
             {"int8 model, both forms", test_int8_model},
             {"model precision of a float model", test_model_precision_of_float_model},
             {"every truncation", test_truncated}, {"bad indices and sizes", test_bad_indices_and_sizes},
             {"unsupported operators listed at once", test_unsupported_all_listed},
             {"format detection", test_format_detection}, {"operator zoo: names and NHWC shapes", test_zoo},
             {"int16x8 model", test_int16_model}, {"SPLIT outputs anywhere in the table", test_split_outputs_anywhere});
}

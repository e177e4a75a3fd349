/*
 * test_caffe.c: the Caffe frontend on models written here (caffe_synth.c, .caffemodel by protobuf-c).
 *
 *  - the test net (caffe_synth.h: every supported layer kind but the simplest unaries) against ONNX Runtime's
 *    outputs for an equivalent ONNX model this test writes with the same weights, built differently where it
 *    can be (BatchNorm and Scale folded into one BatchNormalization, the padded average as Pad + AveragePool
 *    without the padding, the Slice as Split, the Eltwise coeff as Mul + Add); the model and input are written
 *    to the build tree (caffe_equiv.onnx, caffe_input.npy) and the goldens below were made from them by
 *    ../shared/tools/ort; and against our own run of that model;
 *  - Caffe's rounding: Pooling's ceil output size (with the rule that drops a window starting in the end pad),
 *    the average's divisor clipped to the padded input, round_mode FLOOR, and Deconvolution's output size and
 *    values, each on cases worked out by hand from Caffe's pooling_layer.cpp and deconv_layer.cpp;
 *  - the model's own names (in-place layers named after the layer), input order;
 *  - malformed .prototxt and .caffemodel files: the file and line or layer named, all unknown layers at once,
 *    every truncation of both files without a crash.
 */
#include "caffe_synth.h"
#include "fe_check.h"
#include "rd_test.h"
#include "rknn_diag/frontends.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rd_status convert(const char *net, const void *w, size_t wlen, rd_model **m, rd_error *err)
{
    void *onnx = NULL;
    size_t len = 0;
    rd_frontend_info info;
    *m = NULL;
    rd_status st =
        rd_caffe_to_onnx(net, strlen(net), "net.prototxt", w, wlen, "net.caffemodel", &onnx, &len, &info, err);
    if (st == RD_OK) {
        CU_ASSERT_EQUAL(info.format, RD_FORMAT_CAFFE);
        st = rd_model_load_mem(onnx, len, "net.prototxt", NULL, NULL, m, err);
    }
    free(onnx);
    return st;
}

/* Blob b of csy_net_layers[l] (n values). */
static float *blob_values(size_t l, int b, size_t n)
{
    float *v = malloc(n * sizeof *v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    csy_values(l, b, v, n);
    return v;
}

/* csy_net written directly as ONNX, with the weights of csy_net_weights. */
static rd_onnx_builder *equivalent_onnx(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "data", RD_DT_F32, 4, (const int64_t[]){1, 3, 8, 8}, NULL);
    float *w1 = blob_values(0, 0, 108), *b1 = blob_values(0, 1, 4), *mean = blob_values(1, 0, 4),
          *var = blob_values(1, 1, 4), *fac = blob_values(1, 2, 1), *gamma = blob_values(2, 0, 4),
          *beta = blob_values(2, 1, 4), *wd = blob_values(3, 0, 128), *bd = blob_values(3, 1, 2),
          *slope = blob_values(4, 0, 2), *wip = blob_values(5, 0, 960), *bip = blob_values(5, 1, 5);
    for (int i = 0; i < 4; i++) {
        mean[i] /= fac[0];
        var[i] /= fac[0];
    }
    fe_add_f32(b, "w1", 4, (const int64_t[]){4, 3, 3, 3}, w1);
    fe_add_f32(b, "b1", 1, (const int64_t[]){4}, b1);
    fe_add_f32(b, "gamma", 1, (const int64_t[]){4}, gamma);
    fe_add_f32(b, "beta", 1, (const int64_t[]){4}, beta);
    fe_add_f32(b, "mean", 1, (const int64_t[]){4}, mean);
    fe_add_f32(b, "var", 1, (const int64_t[]){4}, var);
    fe_add_f32(b, "wd", 4, (const int64_t[]){4, 2, 4, 4}, wd);
    fe_add_f32(b, "bd", 1, (const int64_t[]){2}, bd);
    fe_add_f32(b, "slope", 3, (const int64_t[]){2, 1, 1}, slope);
    fe_add_f32(b, "wip", 2, (const int64_t[]){5, 192}, wip);
    fe_add_f32(b, "bip", 1, (const int64_t[]){5}, bip);
    fe_add_f32(b, "up_scales", 1, (const int64_t[]){4}, (const float[]){1, 1, 2, 2});
    fe_add_f32(b, "minus_half", 0, NULL, (const float[]){-0.5f});
    fe_add_i64(b, "pad1", 8, (const int64_t[]){0, 0, 1, 1, 0, 0, 1, 1});
    fe_add_i64(b, "interp_sizes", 4, (const int64_t[]){1, 4, 9, 9});
    fe_add_i64(b, "split", 2, (const int64_t[]){3, 3});
    fe_add_i64(b, "shape", 3, (const int64_t[]){1, 8, 8});
    rd_onnx_node *n = FE_NODE("Conv", "conv1", FE_L("data", "w1", "b1"), FE_L("conv1"));
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    n = FE_NODE("BatchNormalization", "bn_scale", FE_L("conv1", "gamma", "beta", "mean", "var"), FE_L("scale1"));
    rd_onnx_attr_float(n, "epsilon", 0.001f);
    FE_NODE("Relu", "relu1", FE_L("scale1"), FE_L("relu1"));
    n = FE_NODE("MaxPool", "pool1", FE_L("relu1"), FE_L("pool1"));
    rd_onnx_attr_ints(n, "kernel_shape", (const int64_t[]){3, 3}, 2);
    rd_onnx_attr_ints(n, "strides", (const int64_t[]){2, 2}, 2);
    rd_onnx_attr_int(n, "ceil_mode", 1);
    FE_NODE("Pad", "pad", FE_L("relu1", "pad1"), FE_L("relu1_padded"));
    n = FE_NODE("AveragePool", "pool2", FE_L("relu1_padded"), FE_L("pool2"));
    rd_onnx_attr_ints(n, "kernel_shape", (const int64_t[]){3, 3}, 2);
    rd_onnx_attr_ints(n, "strides", (const int64_t[]){2, 2}, 2);
    rd_onnx_attr_int(n, "ceil_mode", 1);
    n = FE_NODE("ConvTranspose", "deconv1", FE_L("pool1", "wd", "bd"), FE_L("deconv1"));
    rd_onnx_attr_ints(n, "strides", (const int64_t[]){2, 2}, 2);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    FE_NODE("PRelu", "prelu1", FE_L("deconv1", "slope"), FE_L("prelu1"));
    n = FE_NODE("Resize", "up1", FE_L("pool1", "", "up_scales"), FE_L("up1"));
    rd_onnx_attr_string(n, "mode", "nearest");
    rd_onnx_attr_string(n, "coordinate_transformation_mode", "asymmetric");
    rd_onnx_attr_string(n, "nearest_mode", "floor");
    n = FE_NODE("Resize", "interp1", FE_L("pool2", "", "", "interp_sizes"), FE_L("interp1"));
    rd_onnx_attr_string(n, "mode", "linear");
    rd_onnx_attr_string(n, "coordinate_transformation_mode", "align_corners");
    n = FE_NODE("Concat", "concat1", FE_L("prelu1", "up1"), FE_L("concat1"));
    rd_onnx_attr_int(n, "axis", 1);
    n = rd_onnx_add_node(b, "Split", "slice1", (const char *const[]){"concat1", "split"}, 2,
                         (const char *const[]){"s_a", "s_b"}, 2);
    rd_onnx_attr_int(n, "axis", 1);
    FE_NODE("Mul", "elt1_coeff", FE_L("s_b", "minus_half"), FE_L("s_b_half"));
    FE_NODE("Add", "elt1", FE_L("s_a", "s_b_half"), FE_L("elt1"));
    FE_NODE("Flatten", "ip1_flatten", FE_L("elt1"), FE_L("elt1_flat"));
    n = FE_NODE("Gemm", "ip1", FE_L("elt1_flat", "wip", "bip"), FE_L("ip1"));
    rd_onnx_attr_int(n, "transB", 1);
    n = FE_NODE("Softmax", "prob", FE_L("ip1"), FE_L("prob"));
    rd_onnx_attr_int(n, "axis", 1);
    n = FE_NODE("Transpose", "perm1", FE_L("pool1"), FE_L("perm1"));
    rd_onnx_attr_ints(n, "perm", (const int64_t[]){0, 2, 3, 1}, 4);
    FE_NODE("Reshape", "reshape1", FE_L("perm1", "shape"), FE_L("reshape1"));
    rd_onnx_add_output(b, "interp1", RD_DT_F32, 4, (const int64_t[]){1, 4, 9, 9}, NULL);
    rd_onnx_add_output(b, "prob", RD_DT_F32, 2, (const int64_t[]){1, 5}, NULL);
    rd_onnx_add_output(b, "reshape1", RD_DT_F32, 3, (const int64_t[]){1, 8, 8}, NULL);
    free(w1), free(b1), free(mean), free(var), free(fac), free(gamma), free(beta), free(wd), free(bd), free(slope);
    free(wip), free(bip);
    return b;
}

/* ONNX Runtime 1.30 (CPU, one thread) on caffe_equiv.onnx with caffe_input.npy: interp1, prob, reshape1. */
static const float ort_golden[324 + 5 + 64] = {
#include "caffe_equiv_ort.inc"
};

static void input_values(float *x, size_t n)
{
    uint32_t s = 12345;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / 8388608.0f - 1.0f; /* [-1, 1) */
    }
}

static void test_net_vs_onnx_runtime(void)
{
    size_t wlen = 0;
    uint8_t *w = csy_net_weights(&wlen);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    rd_model *m;
    rd_error err;
    rd_status st = convert(csy_net, w, wlen, &m, &err);
    fe_assert_ok(st, &err);
    /* the model's names and Caffe's shapes: in-place layers write values named after the layer */
    static const fe_shape names[] = {
        {"conv1", 4, {1, 4, 8, 8}},   {"bn1", 4, {1, 4, 8, 8}},     {"scale1", 4, {1, 4, 8, 8}},
        {"relu1", 4, {1, 4, 8, 8}},   {"pool1", 4, {1, 4, 4, 4}},   {"pool2", 4, {1, 4, 5, 5}},
        {"deconv1", 4, {1, 2, 8, 8}}, {"prelu1", 4, {1, 2, 8, 8}},  {"up1", 4, {1, 4, 8, 8}},
        {"interp1", 4, {1, 4, 9, 9}}, {"concat1", 4, {1, 6, 8, 8}}, {"s_a", 4, {1, 3, 8, 8}},
        {"elt1", 4, {1, 3, 8, 8}},    {"ip1", 2, {1, 5}},           {"prob", 2, {1, 5}},
        {"reshape1", 3, {1, 8, 8}},
    };
    fe_check_shapes(m, names, sizeof names / sizeof names[0]);
    CU_ASSERT_EQUAL_FATAL(rd_model_output_count(m), 3);
    static const char *const outs[3] = {"interp1", "prob", "reshape1"};
    for (size_t i = 0; i < 3; i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_output(m, i), &vi);
        CU_ASSERT_STRING_EQUAL(vi.name, outs[i]);
    }
    static float x[192];
    input_values(x, 192);
    rd_tensor xt = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, 3, 8, 8}, .data = x};
    fe_check_equivalent(m, equivalent_onnx(), &xt, 3, ort_golden, 1e-5, "caffe", "caffe_equiv.onnx", "caffe_input.npy");
    rd_model_destroy(m);
    free(w);
}

/* A net of one input [1, c, h, w] named "x" and one layer (its text) writing "y"; y's values. */
static rd_status one_layer(const char *layer, int c, int h, int wd, const float *x, const void *weights, size_t wlen,
                           rd_tensor *y, rd_error *err)
{
    char net[2048];
    snprintf(net, sizeof net, "input: \"x\"\ninput_shape { dim: 1 dim: %d dim: %d dim: %d }\n%s\n", c, h, wd, layer);
    rd_model *m;
    rd_status st = convert(net, weights, wlen, &m, err);
    if (st != RD_OK)
        return st;
    rd_tensor in = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, c, h, wd}, .data = (void *)x};
    memset(y, 0, sizeof *y);
    st = rd_model_run(m, &in, 1, NULL, y, 1, err);
    rd_model_destroy(m);
    return st;
}

static void expect(const char *what, const rd_tensor *y, int h, int w, const float *want)
{
    CU_ASSERT_EQUAL_FATAL(y->rank, 4);
    if (y->dims[2] != h || y->dims[3] != w)
        fprintf(stderr, "\n%s: %lldx%lld, expected %dx%d\n", what, (long long)y->dims[2], (long long)y->dims[3], h, w);
    CU_ASSERT_EQUAL_FATAL(y->dims[2], h);
    CU_ASSERT_EQUAL_FATAL(y->dims[3], w);
    for (int i = 0; i < h * w; i++) {
        float g = ((const float *)y->data)[i];
        if (fabsf(g - want[i]) > 1e-5f)
            fprintf(stderr, "\n%s: [%d] %g, expected %g\n", what, i, g, want[i]);
        CU_ASSERT(fabsf(g - want[i]) <= 1e-5f);
    }
}

/* Caffe's pooling_layer.cpp: pooled = ceil((in + 2 pad - k) / s) + 1, one less when pad > 0 and the last
   window would start at or after in + pad; an average divides by the window clipped to [-pad, in + pad). */
static void test_pooling_rounding(void)
{
    static const struct {
        const char *what, *param; /* pooling_param's fields */
        int in;                   /* input in x in, values 0, 1, 2, ... */
        int out;                  /* output out x out */
        float want[9];
    } cases[] = {
        /* 5x5, k2 s2: ceil 3x3 (floor would be 2x2); the last row and column windows hold one input each */
        {"max ceil", "pool: MAX kernel_size: 2 stride: 2", 5, 3, {6, 8, 9, 16, 18, 19, 21, 23, 24}},
        {"ave ceil", "pool: AVE kernel_size: 2 stride: 2", 5, 3, {3, 5, 6.5f, 13, 15, 16.5f, 20.5f, 22.5f, 24}},
        {"max floor", "pool: MAX kernel_size: 2 stride: 2 round_mode: FLOOR", 5, 2, {6, 8, 16, 18}},
        /* 4x4, k3 s2 pad 1: ceil 3x3; divisors 9, 9, 6 / 9, 9, 6 / 6, 6, 4 (windows clipped to [-1, 5)) */
        {"ave pad",
         "pool: AVE kernel_size: 3 stride: 2 pad: 1",
         4,
         3,
         {10.0f / 9, 24.0f / 9, 10.0f / 6, 51.0f / 9, 90.0f / 9, 33.0f / 6, 25.0f / 6, 42.0f / 6, 15.0f / 4}},
        /* 5x5, k2 s2 pad 1: ceil((5 + 2 - 2) / 2) + 1 = 4, but the 4th window would start at 6 = in + pad: 3 */
        {"max pad dropped window",
         "pool: MAX kernel_size: 2 stride: 2 pad: 1",
         5,
         3,
         {0, 2, 4, 10, 12, 14, 20, 22, 24}},
        {"global", "pool: AVE global_pooling: true", 4, 1, {7.5f}},
    };
    float x[25];
    for (int i = 0; i < 25; i++)
        x[i] = (float)i;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char layer[256];
        snprintf(layer, sizeof layer,
                 "layer { name: \"p\" type: \"Pooling\" bottom: \"x\" top: \"y\" "
                 "pooling_param { %s } }",
                 cases[i].param);
        rd_tensor y;
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(one_layer(layer, 1, cases[i].in, cases[i].in, x, NULL, 0, &y, &err), RD_OK);
        expect(cases[i].what, &y, cases[i].out, cases[i].out, cases[i].want);
        rd_tensor_fini(&y);
    }
}

/* Caffe's deconv_layer.cpp: out = s (in - 1) + d (k - 1) + 1 - 2 pad; each input adds its kernel at s * i - pad. */
static void test_deconvolution(void)
{
    static const float ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, bias[1] = {0.5f}, x[4] = {1, 2, 3, 4};
    const csy_layer l = {"d", "Deconvolution", 2, {{4, {1, 1, 3, 3}, ones}, {1, {1}, bias}}};
    size_t wlen;
    uint8_t *w = csy_pack(&l, 1, &wlen);
    rd_tensor y;
    rd_error err;
    /* 2x2, k3 s2 pad 1: 3x3; row 1 and column 1 of the output get two inputs each */
    CU_ASSERT_EQUAL_FATAL(one_layer("layer { name: \"d\" type: \"Deconvolution\" bottom: \"x\" top: \"y\" "
                                    "convolution_param { num_output: 1 kernel_size: 3 stride: 2 pad: 1 } }",
                                    1, 2, 2, x, w, wlen, &y, &err),
                          RD_OK);
    expect("deconv s2 p1", &y, 3, 3, (const float[]){1.5f, 3.5f, 2.5f, 4.5f, 10.5f, 6.5f, 3.5f, 7.5f, 4.5f});
    rd_tensor_fini(&y);
    /* no pad: 5x5; the corners hold one input, the centre all four */
    CU_ASSERT_EQUAL_FATAL(one_layer("layer { name: \"d\" type: \"Deconvolution\" bottom: \"x\" top: \"y\" "
                                    "convolution_param { num_output: 1 kernel_size: 3 stride: 2 } }",
                                    1, 2, 2, x, w, wlen, &y, &err),
                          RD_OK);
    CU_ASSERT_EQUAL(y.dims[2], 5);
    CU_ASSERT_EQUAL(y.dims[3], 5);
    CU_ASSERT_DOUBLE_EQUAL(((float *)y.data)[0], 1.5, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(((float *)y.data)[12], 10.5, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(((float *)y.data)[24], 4.5, 1e-6);
    rd_tensor_fini(&y);
    free(w);
}

/* Upsample (nearest) and Interp (bilinear, corners aligned) on known answers. */
static void test_resize_layers(void)
{
    static const float x[4] = {0, 1, 2, 3};
    rd_tensor y;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(one_layer("layer { name: \"u\" type: \"Upsample\" bottom: \"x\" top: \"y\" "
                                    "upsample_param { scale: 2 } }",
                                    1, 2, 2, x, NULL, 0, &y, &err),
                          RD_OK);
    expect("upsample", &y, 4, 4, (const float[]){0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3});
    rd_tensor_fini(&y);
    /* zoom 2 of 2x2: (2 - 1) * 2 + 1 = 3, the corners kept */
    CU_ASSERT_EQUAL_FATAL(one_layer("layer { name: \"i\" type: \"Interp\" bottom: \"x\" top: \"y\" "
                                    "interp_param { zoom_factor: 2 } }",
                                    1, 2, 2, x, NULL, 0, &y, &err),
                          RD_OK);
    expect("interp zoom", &y, 3, 3, (const float[]){0, 0.5f, 1, 1, 1.5f, 2, 2, 2.5f, 3});
    rd_tensor_fini(&y);
    CU_ASSERT_EQUAL_FATAL(one_layer("layer { name: \"i\" type: \"Interp\" bottom: \"x\" top: \"y\" "
                                    "interp_param { height: 2 width: 5 } }",
                                    1, 2, 2, x, NULL, 0, &y, &err),
                          RD_OK);
    expect("interp size", &y, 2, 5, (const float[]){0, 0.25f, 0.5f, 0.75f, 1, 2, 2.25f, 2.5f, 2.75f, 3});
    rd_tensor_fini(&y);
}

static void test_inputs_and_detection(void)
{
    /* inputs in the order the .prototxt declares them (RKNN's load_caffe order), legacy input_dim too */
    const char *net = "input: \"b\"\ninput_dim: 1\ninput_dim: 2\ninput_dim: 3\ninput_dim: 3\n"
                      "input: \"a\"\ninput_dim: 1\ninput_dim: 2\ninput_dim: 3\ninput_dim: 3\n"
                      "layer { name: \"sum\" type: \"Eltwise\" bottom: \"a\" bottom: \"b\" top: \"sum\" "
                      "eltwise_param { operation: PROD } }\n";
    rd_model *m;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(convert(net, NULL, 0, &m, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_model_input_count(m), 2);
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, 0), &vi);
    CU_ASSERT_STRING_EQUAL(vi.name, "b");
    rd_model_value(m, (size_t)rd_model_input(m, 1), &vi);
    CU_ASSERT_STRING_EQUAL(vi.name, "a");
    rd_model_destroy(m);
    CU_ASSERT_EQUAL(rd_model_format_detect(csy_net, strlen(csy_net)), RD_FORMAT_CAFFE);
    CU_ASSERT_EQUAL(rd_model_format_detect("layer {", 7), RD_FORMAT_CAFFE);
    CU_ASSERT_EQUAL(rd_model_format_detect("hello world", 11), RD_FORMAT_UNKNOWN);
}

static void test_prototxt_refused(void)
{
    size_t wlen = 0;
    uint8_t *w = csy_net_weights(&wlen);
    static const struct {
        const char *net;
        const char *msg;
    } bad[] = {
        {"layer { name: \"a\" type: \"ReLU\"", "net.prototxt:1: expected '}', got end of file"},
        {"layer {\n name: \"a\n\" }", "net.prototxt:2: expected the end of a string before the end of the line"},
        {"layer {\n  name = \"a\" }", "net.prototxt:2: expected ':' or '{' after a field name, got '= \"a\" }'"},
        {"input: \"x\"\n", "net.prototxt:1: input 'x' has no shape (input_shape or input_dim)"},
        {"name: \"empty\"\n", "net.prototxt: no layer { } (not a Caffe .prototxt?)"},
        {"layers { name: \"old\" type: CONVOLUTION }", "'layers' in Caffe's V1 format (before 2015)"},
        {"input: \"x\"\ninput_shape { dim: 1 dim: 3 dim: 8 dim: 8 }\nlayer { name: \"conv1\" type: \"Convolution\" "
         "bottom: \"x\" top: \"c\"\n convolution_param { num_output: four kernel_size: 3 } }",
         "net.prototxt:4: num_output: 'four' is not an integer"},
        {"input: \"x\"\ninput_shape { dim: 1 dim: 3 dim: 8 dim: 8 }\nlayer { name: \"r\" type: \"ReLU\"\n"
         " bottom: \"nothing\" top: \"y\" }",
         "net.prototxt:4: layer 'r' reads 'nothing', which no earlier layer"},
        {"input: \"x\"\ninput_shape { dim: 1 dim: 3 dim: 8 dim: 8 }\nlayer { name: \"conv1\" type: \"Convolution\" "
         "bottom: \"x\" top: \"c\"\n convolution_param { num_output: 5 kernel_size: 3 } }",
         "net.caffemodel: layer 'conv1': weights of shape 4x3x3x3, the .prototxt says 5 outputs of 3x3"},
        {"input: \"x\"\ninput_shape { dim: 1 dim: 3 dim: 8 dim: 8 }\nlayer { name: \"convX\" type: \"Convolution\" "
         "bottom: \"x\" top: \"c\"\n convolution_param { num_output: 4 kernel_size: 3 } }",
         "net.caffemodel: layer 'convX' (net.prototxt line 3) has 0 weight blobs, it needs blob 0: is it the "
         ".caffemodel of this .prototxt?"},
        {"input: \"x\"\ninput_shape { dim: 1 dim: 3 dim: 8 dim: 8 }\n"
         "layer { name: \"p\" type: \"PriorBox\" bottom: \"x\" top: \"p\" }\n"
         "layer { name: \"l\" type: \"LSTM\" bottom: \"x\" top: \"l\" }\n"
         "layer { name: \"p2\" type: \"PriorBox\" bottom: \"x\" top: \"p2\" }\n"
         "layer { name: \"d\" type: \"DetectionOutput\" bottom: \"x\" top: \"d\" }\n",
         "net.prototxt: 4 layers are of 3 kinds not supported (first of each): PriorBox (SSD post-processing: cut "
         "the net before it with subgraphs.outputs) (layer 'p', net.prototxt line 3), LSTM (layer 'l', "
         "net.prototxt line 4), DetectionOutput"},
        {"a { b { c { d { e { f { g { h { i { j { k { l { m { n { o { p { q { r { s { t { u { v { w { x { y { z { "
         "a { b { c { d { e { f { g { h { i { j { k { l { m { n { o { p { q { r { s { t { u { v { w { x { y { z { "
         "a { b { c { d { e { f { g { h { i { j { k { l { m { n { o { p { q { r { s { t { u { v { w { x { y { z {",
         "net.prototxt:1: messages nest deeper than 64 levels"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rd_model *m;
        rd_error err;
        rd_status st = convert(bad[i].net, w, wlen, &m, &err);
        CU_ASSERT_NOT_EQUAL(st, RD_OK);
        if (st == RD_OK)
            rd_model_destroy(m);
        else if (!strstr(err.msg, bad[i].msg))
            fprintf(stderr, "\ncase %zu: %s\n", i, err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].msg));
    }
    /* every truncation of the .prototxt: an error or a smaller net, never a crash */
    size_t n = strlen(csy_net);
    for (size_t cut = 0; cut < n; cut += 3) {
        char *c = strndup(csy_net, cut);
        rd_model *m;
        rd_error err;
        if (convert(c, w, wlen, &m, &err) == RD_OK)
            rd_model_destroy(m);
        else
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "net."));
        free(c);
    }
    free(w);
}

static void test_caffemodel_refused(void)
{
    size_t wlen = 0;
    uint8_t *w = csy_net_weights(&wlen);
    rd_model *m;
    rd_error err;
    /* every truncation: refused naming the file (a cut inside a blob) or a blob of the wrong size */
    for (size_t cut = 0; cut < wlen; cut += 37) {
        rd_status st = convert(csy_net, w, cut, &m, &err);
        CU_ASSERT_NOT_EQUAL(st, RD_OK);
        if (st == RD_OK)
            rd_model_destroy(m);
        else
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "net.caffemodel"));
    }
    CU_ASSERT_EQUAL(convert(csy_net, w, wlen - 1, &m, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "net.caffemodel: not a valid Caffe NetParameter protobuf"));
    /* a blob with the wrong number of values, and a non-finite one */
    static const float three[3] = {1, 2, 3}, nan1[4] = {0, 0, NAN, 0};
    csy_layer l = {"scale1", "Scale", 2, {{1, {4}, three}, {1, {4}, nan1}}};
    l.blobs[0].dims[0] = 3;
    const char *net = "input: \"x\"\ninput_shape { dim: 1 dim: 4 dim: 2 dim: 2 }\nlayer { name: \"scale1\" "
                      "type: \"Scale\" bottom: \"x\" top: \"y\" scale_param { bias_term: true } }\n";
    uint8_t *b = csy_pack(&l, 1, &wlen);
    CU_ASSERT_EQUAL(convert(net, b, wlen, &m, &err), RD_E_PARSE); /* 3 gammas: the Mul fails to broadcast */
    free(b);
    l.blobs[0] = (csy_blob){1, {4}, nan1};
    b = csy_pack(&l, 1, &wlen);
    CU_ASSERT_EQUAL(convert(net, b, wlen, &m, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "net.caffemodel: layer 'scale1' blob 0 value 2 is not finite"));
    free(b);
    /* a legacy 4-D blob claiming 5 values and holding none */
    l.blobs[0] = (csy_blob){0, {1, 1, 1, 5}, NULL};
    l.n_blobs = 1;
    b = csy_pack(&l, 1, &wlen);
    CU_ASSERT_EQUAL(convert(net, b, wlen, &m, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "net.caffemodel: layer 'scale1' blob 0 holds 0 values for a shape of 5"));
    free(b);
    /* a .prototxt without its .caffemodel beside it */
    fe_check_alone("caffe_alone", "alone.prototxt", csy_net,
                   "alone.prototxt: its weights (the .caffemodel beside the .prototxt)", "alone.caffemodel");
    free(w);
}

RD_TEST_REGISTER(register_caffe)
{
    RD_SUITE("caffe", {"test net vs ONNX Runtime", test_net_vs_onnx_runtime},
             {"pooling rounding (ceil, floor, clipped divisor)", test_pooling_rounding},
             {"deconvolution size and values", test_deconvolution}, {"Upsample and Interp", test_resize_layers},
             {"inputs and detection", test_inputs_and_detection}, {"prototxt refused", test_prototxt_refused},
             {"caffemodel refused", test_caffemodel_refused});
}

/*
 * test_sim_rknn.c: what RKNN's fusions and quantization rules do to the simulator's numbers, bit for bit
 * against oracles written here: nothing rounded inside a fused group (ConvAddRelu), Softmax in float16
 * inside an int8 model with its conversions, GlobalAveragePool as the NPU's depthwise conv (int8 and
 * float16, one and two stages), the calibration rules (MaxPool passes its input's parameters, Concat covers
 * the union of its inputs), and fusion groups set from outside (rd_sim_set_group and friends).
 */
#include "onnx_test_util.h"
#include "passes_test_util.h"
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------------------- */

static void input_like(const rd_model *m, int k, unsigned seed, rd_tensor *t)
{
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, (size_t)k), &vi);
    rd_tensor_alloc(t, RD_DT_F32, vi.rank, vi.dims, NULL);
    fill(t->data, rd_tensor_numel(t), seed, -2.0f, 2.0f);
}

/* Calibration samples: seeded inputs of the model (normal: min/max). */
static rd_status sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    (void)err;
    const rd_model *m = user;
    for (size_t i = 0; i < rd_model_input_count(m); i++)
        input_like(m, (int)i, 200 + (unsigned)(k * 7 + i), &inputs[i]);
    return RD_OK;
}

static rd_sim *int8_sim(const rd_model *m, rd_prec p, rd_calib_method method)
{
    rd_sim_options so = {.precision = p, .optimization_level = 3};
    rd_sim *s = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    if (p != RD_PREC_FP16) {
        rd_calib_options co = {.method = method, .threads = 1};
        rd_status st = rd_calibrate(s, sample, (void *)m, 3, &co, &err);
        if (st != RD_OK)
            fprintf(stderr, "\ncalibration: %s\n", err.msg);
        CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    }
    return s;
}

/* Every tensor's simulated ("entire") value of one run, by name. */
typedef struct captured {
    int n;
    char *names[32];
    rd_tensor vals[32];
} captured;

static rd_status capture(void *user, const rd_sim_event *ev, rd_error *err)
{
    captured *c = user;
    if (c->n == 32 || ev->entire->dtype != RD_DT_F32)
        return RD_OK;
    c->names[c->n] = strdup(ev->name);
    rd_status st = rd_tensor_clone(&c->vals[c->n], ev->entire, err);
    c->n++;
    return st;
}

static const float *got(const captured *c, const char *name)
{
    for (int k = 0; k < c->n; k++)
        if (strcmp(c->names[k], name) == 0)
            return c->vals[k].data;
    CU_FAIL_FATAL("tensor not seen");
    return NULL;
}

static void run_capture(rd_sim *s, unsigned seed, captured *c)
{
    memset(c, 0, sizeof *c);
    const rd_model *m = rd_sim_model(s);
    rd_tensor in[2];
    size_t n = rd_model_input_count(m);
    for (size_t k = 0; k < n; k++)
        input_like(m, (int)k, seed + (unsigned)k, &in[k]);
    rd_error err;
    rd_status st = rd_sim_analyze(s, in, n, capture, c, &err);
    if (st != RD_OK)
        fprintf(stderr, "\nanalyze: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    for (size_t k = 0; k < n; k++)
        rd_tensor_fini(&in[k]);
}

static void captured_fini(captured *c)
{
    for (int k = 0; k < c->n; k++) {
        free(c->names[k]);
        rd_tensor_fini(&c->vals[k]);
    }
}

static rd_sim_tensor info(const rd_sim *s, const char *name)
{
    rd_sim_tensor t;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sim_tensor_get(s, name, &t, &err), RD_OK);
    return t;
}

/* The int8 simulator's requantization (sim_fake_quant_i8): x / scale in float, ties to even, clamped. */
static float requant(float x, float scale, int32_t zp)
{
    float q = nearbyintf(x / scale) + (float)zp;
    q = q < -128.0f ? -128.0f : q > 127.0f ? 127.0f : q;
    return scale * (q - (float)zp);
}

static float half(float x)
{
    return rd_f16_to_f32(rd_f32_to_f16(x));
}

/* Asserts a == b bit for bit over n values, reporting the first difference. */
static void same_bits(const float *a, const float *b, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof a[i]) != 0) {
            fprintf(stderr, "\n%s: value %lld is %.9g, expected %.9g\n", what, (long long)i, (double)a[i],
                    (double)b[i]);
            CU_FAIL("values differ");
            return;
        }
}

/* ---- no rounding inside a group ---------------------------------------------------------------- */

/* x -> Conv -> Add(., r) -> Relu: one ConvAddRelu. Its conv output and its sum are never requantized: the
   sum is exactly conv + the shortcut's int8 values, and the output is the one requantization of its Relu. */
static void test_conv_add_relu_bits(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 5, 5}, NULL);
    rd_onnx_add_input(b, "r", RD_DT_F32, 4, (const int64_t[]){1, 3, 5, 5}, NULL);
    init_f32(b, "w", 4, (const int64_t[]){3, 3, 3, 3}, 1, -0.5f, 0.5f);
    rd_onnx_node *c =
        rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w"}, 2, (const char *const[]){"c"}, 1);
    rd_onnx_attr_ints(c, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_node(b, "Add", "add", (const char *const[]){"c", "r"}, 2, (const char *const[]){"a"}, 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"a"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    rd_model *m = ot_model_load(b, "conv_add_relu.onnx");
    rd_sim *s = int8_sim(m, RD_PREC_INT8, RD_CALIB_NORMAL);
    CU_ASSERT_FALSE(info(s, "c").materialized);
    CU_ASSERT_FALSE(info(s, "a").materialized);
    CU_ASSERT_STRING_EQUAL(info(s, "c").npu_op, "ConvAddRelu");
    CU_ASSERT_EQUAL(info(s, "c").group_out, info(s, "y").value);
    CU_ASSERT_STRING_EQUAL(info(s, "a").row_op, "Add");
    captured cap;
    run_capture(s, 7, &cap);
    const rd_sim_tensor y = info(s, "y"), r = info(s, "r");
    const float *cv = got(&cap, "c"), *av = got(&cap, "a"), *yv = got(&cap, "y"), *rv = got(&cap, "r");
    float sum[75], out[75];
    int off_grid = 0;
    for (int i = 0; i < 75; i++) {
        CU_ASSERT_EQUAL(requant(rv[i], r.scale, r.zero_point), rv[i]); /* the shortcut is an int8 tensor */
        sum[i] = cv[i] + rv[i];
        out[i] = requant(sum[i] > 0 ? sum[i] : 0.0f, y.scale, y.zero_point);
        off_grid += requant(cv[i], y.scale, y.zero_point) != cv[i];
    }
    CU_ASSERT(off_grid > 0); /* the conv's sum is on no int8 grid */
    same_bits(av, sum, 75, "ConvAddRelu's sum");
    same_bits(yv, out, 75, "ConvAddRelu's output");
    captured_fini(&cap);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

/* ---- Softmax in float16 --------------------------------------------------------------------------- */

/* A plain FP32 Softmax over the last axis of n values, as our operator computes it (the oracle runs it). */
static void softmax_ref(const float *x, int64_t rows, int64_t len, float *y)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){rows, len}, NULL);
    rd_onnx_add_node(b, "Softmax", "sm", (const char *const[]){"x"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    rd_model *m = ot_model_load(b, "softmax.onnx");
    rd_tensor in, out;
    rd_tensor_alloc(&in, RD_DT_F32, 2, (const int64_t[]){rows, len}, NULL);
    memcpy(in.data, x, (size_t)(rows * len) * sizeof(float));
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_model_run(m, &in, 1, NULL, &out, 1, &err), RD_OK);
    memcpy(y, out.data, (size_t)(rows * len) * sizeof(float));
    rd_tensor_fini(&in);
    rd_tensor_fini(&out);
    rd_model_destroy(m);
}

/* x -> Gemm -> Softmax -> Relu -> y, and Gemm -> Softmax -> probs (a graph output): in an int8 model both
   softmaxes compute in float16 on their input converted to half; the inner one's output goes back to int8
   (exDataConvert), the graph output stays float16. */
static void test_softmax_float16(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){2, 6}, NULL);
    init_f32(b, "w", 2, (const int64_t[]){6, 6}, 3, -1.0f, 1.0f);
    rd_onnx_add_node(b, "Gemm", "fc", (const char *const[]){"x", "w"}, 2, (const char *const[]){"l"}, 1);
    rd_onnx_add_node(b, "Softmax", "sm1", (const char *const[]){"l"}, 1, (const char *const[]){"s"}, 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"s"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_add_node(b, "Softmax", "sm2", (const char *const[]){"l"}, 1, (const char *const[]){"probs"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    rd_onnx_add_output(b, "probs", RD_DT_F32, -1, NULL, NULL);
    rd_model *m = ot_model_load(b, "softmax16.onnx");
    rd_sim *s = int8_sim(m, RD_PREC_INT8, RD_CALIB_NORMAL);
    const rd_sim_tensor st = info(s, "s"), pt = info(s, "probs"), lt = info(s, "l");
    CU_ASSERT_TRUE(st.via_float16);
    CU_ASSERT_EQUAL(st.precision, RD_PREC_INT8);
    CU_ASSERT_TRUE(pt.via_float16);
    CU_ASSERT_EQUAL(pt.precision, RD_PREC_FP16);
    CU_ASSERT_STRING_EQUAL(pt.row_op, "exSoftmax13");
    CU_ASSERT_STRING_EQUAL(lt.row_op, "Conv");
    captured cap;
    run_capture(s, 11, &cap);
    float lh[12], sm[12], s_want[12], p_want[12];
    const float *lv = got(&cap, "l");
    for (int i = 0; i < 12; i++)
        lh[i] = half(lv[i]); /* exDataConvert int8 -> float16 */
    softmax_ref(lh, 2, 6, sm);
    for (int i = 0; i < 12; i++) {
        p_want[i] = half(sm[i]);
        s_want[i] = requant(half(sm[i]), st.scale, st.zero_point); /* float16 -> int8 */
    }
    same_bits(got(&cap, "s"), s_want, 12, "softmax then int8");
    same_bits(got(&cap, "probs"), p_want, 12, "softmax kept in float16");
    captured_fini(&cap);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

/* ---- GlobalAveragePool as a conv -------------------------------------------------------------------- */

static rd_model *gap_model(int64_t h, int64_t w)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 2, h, w}, NULL);
    rd_onnx_add_node(b, "GlobalAveragePool", "gap", (const char *const[]){"x"}, 1, (const char *const[]){"p"}, 1);
    rd_onnx_add_output(b, "p", RD_DT_F32, -1, NULL, NULL);
    return ot_model_load(b, "gap.onnx");
}

/* The int8 weight rule on one value: scale = w / 127 in float, code = round(w / scale). */
static void weight8(float w, float *scale, double *code)
{
    *scale = w / 127.0f;
    *code = nearbyintf(w / *scale);
}

/* One stage: window sums of centred codes times the weight, scaled back as the integer layers do. */
static float stage(double sum, float w, float in_scale)
{
    float ws;
    double code;
    weight8(w, &ws, &code);
    return (float)(sum * code * in_scale * ws);
}

/* 7x7: one depthwise conv of int8 weights; 35x35: a 7x7 conv, the map requantized to the input's grid, then a
   5x5 one (the split RKNN's layer table shows: our guess of its rule). FP32 stays the plain average. */
static void test_gap_int8(void)
{
    static const int64_t sizes[2] = {7, 35};
    for (int k = 0; k < 2; k++) {
        const int64_t n = sizes[k];
        rd_model *m = gap_model(n, n);
        rd_sim *s = int8_sim(m, RD_PREC_INT8, RD_CALIB_NORMAL);
        CU_ASSERT_STRING_EQUAL(info(s, "p").row_op, "Conv");
        const rd_sim_tensor xt = info(s, "x"), pt = info(s, "p");
        captured cap;
        run_capture(s, 5, &cap);
        const float *xv = got(&cap, "x");
        float want[2];
        for (int c = 0; c < 2; c++) {
            const float *plane = xv + c * n * n;
            double codes[35 * 35];
            for (int64_t i = 0; i < n * n; i++)
                codes[i] = nearbyintf(plane[i] / xt.scale); /* on the grid: q - zp exactly */
            if (n == 7) {
                double sum = 0;
                for (int64_t i = 0; i < 49; i++)
                    sum += codes[i];
                want[c] = requant(stage(sum, 1.0f / 49.0f, xt.scale), pt.scale, pt.zero_point);
                continue;
            }
            double mid = 0;
            for (int64_t a = 0; a < 5; a++)
                for (int64_t bb = 0; bb < 5; bb++) {
                    double sum = 0;
                    for (int64_t i = 0; i < 7; i++)
                        for (int64_t j = 0; j < 7; j++)
                            sum += codes[(a * 7 + i) * n + bb * 7 + j];
                    const float v = requant(stage(sum, 1.0f / 49.0f, xt.scale), xt.scale, xt.zero_point);
                    mid += nearbyintf(v / xt.scale);
                }
            want[c] = requant(stage(mid, 1.0f / 25.0f, xt.scale), pt.scale, pt.zero_point);
        }
        same_bits(got(&cap, "p"), want, 2, n == 7 ? "GlobalAveragePool as one conv" : "as two convs");
        captured_fini(&cap);
        rd_sim_destroy(s);
        rd_model_destroy(m);
    }
}

/* Float16: the weight 1/49 rounded to half (0.020401 against 0.020408), products summed in float32. */
static void test_gap_fp16(void)
{
    rd_model *m = gap_model(7, 7);
    rd_sim *s = int8_sim(m, RD_PREC_FP16, RD_CALIB_NORMAL);
    captured cap;
    run_capture(s, 9, &cap);
    const float *xv = got(&cap, "x");
    const float wh = half(1.0f / 49.0f);
    float want[2];
    for (int c = 0; c < 2; c++) {
        float sum = 0.0f;
        for (int i = 0; i < 49; i++)
            sum += xv[c * 49 + i] * wh;
        want[c] = half(sum);
    }
    same_bits(got(&cap, "p"), want, 2, "GlobalAveragePool as a float16 conv");
    captured_fini(&cap);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

/* ---- calibration rules -------------------------------------------------------------------------- */

/* x -> Conv -> Relu -> MaxPool, Concat(relu, conv2): the MaxPool output takes its input's parameters and the
   Concat output covers the union of its inputs' ranges, for normal and kl_divergence calibration. */
static void test_calibration_rules(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 2, 6, 6}, NULL);
    init_f32(b, "w", 4, (const int64_t[]){2, 2, 1, 1}, 4, -1.0f, 1.0f);
    init_f32(b, "w2", 4, (const int64_t[]){2, 2, 1, 1}, 5, -3.0f, 3.0f);
    rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w"}, 2, (const char *const[]){"c"}, 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"c"}, 1, (const char *const[]){"r"}, 1);
    rd_onnx_node *mp =
        rd_onnx_add_node(b, "MaxPool", "pool", (const char *const[]){"r"}, 1, (const char *const[]){"mp"}, 1);
    rd_onnx_attr_ints(mp, "kernel_shape", (const int64_t[]){2, 2}, 2);
    rd_onnx_attr_ints(mp, "strides", (const int64_t[]){2, 2}, 2);
    rd_onnx_add_node(b, "Conv", "conv2", (const char *const[]){"x", "w2"}, 2, (const char *const[]){"d"}, 1);
    rd_onnx_node *cat =
        rd_onnx_add_node(b, "Concat", "cat", (const char *const[]){"r", "d"}, 2, (const char *const[]){"cat"}, 1);
    rd_onnx_attr_int(cat, "axis", 1);
    rd_onnx_add_output(b, "mp", RD_DT_F32, -1, NULL, NULL);
    rd_onnx_add_output(b, "cat", RD_DT_F32, -1, NULL, NULL);
    rd_model *m = ot_model_load(b, "qrules.onnx");
    for (int method = 0; method < 2; method++) {
        rd_sim *s = int8_sim(m, RD_PREC_INT8, method ? RD_CALIB_KL : RD_CALIB_NORMAL);
        const rd_sim_tensor r = info(s, "r"), p = info(s, "mp"), d = info(s, "d"), c = info(s, "cat");
        CU_ASSERT_TRUE(p.quantized);
        CU_ASSERT_EQUAL(memcmp(&p.scale, &r.scale, sizeof p.scale), 0);
        CU_ASSERT_EQUAL(p.zero_point, r.zero_point);
        CU_ASSERT_EQUAL(r.min, 0.0f); /* a ReLU-family output: min 0, zero point -128 */
        CU_ASSERT_EQUAL(r.zero_point, -128);
        CU_ASSERT_EQUAL(c.min, fminf(r.min, d.min));
        CU_ASSERT_EQUAL(c.max, fmaxf(r.max, d.max));
        rd_sim_destroy(s);
    }
    rd_model_destroy(m);
}

/* ---- groups set from outside ---------------------------------------------------------------------- */

static void test_set_group(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 2, 4, 4}, NULL);
    rd_onnx_add_input(b, "r", RD_DT_F32, 4, (const int64_t[]){1, 2, 4, 4}, NULL);
    init_f32(b, "w", 4, (const int64_t[]){2, 2, 1, 1}, 6, -1.0f, 1.0f);
    rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w"}, 2, (const char *const[]){"c"}, 1);
    rd_onnx_add_node(b, "Add", "add", (const char *const[]){"c", "r"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_node(b, "Conv", "conv2", (const char *const[]){"y", "w"}, 2, (const char *const[]){"c2"}, 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"c2"}, 1, (const char *const[]){"z"}, 1);
    rd_onnx_add_node(b, "Sigmoid", "sig", (const char *const[]){"c2"}, 1, (const char *const[]){"z2"}, 1);
    rd_onnx_add_output(b, "z", RD_DT_F32, -1, NULL, NULL);
    rd_onnx_add_output(b, "z2", RD_DT_F32, -1, NULL, NULL);
    rd_model *m = ot_model_load(b, "groups.onnx");
    rd_sim *s = int8_sim(m, RD_PREC_INT8, RD_CALIB_NORMAL);
    rd_error err;
    CU_ASSERT_FALSE(info(s, "c").materialized); /* the passes' ConvAdd */
    CU_ASSERT_EQUAL(rd_sim_clear_groups(s, &err), RD_OK);
    rd_sim_tensor t = info(s, "c");
    CU_ASSERT_TRUE(t.materialized);
    CU_ASSERT_STRING_EQUAL(t.npu_op, "Conv");
    CU_ASSERT_EQUAL(t.group_out, t.value);
    const char *inner[] = {"c"};
    CU_ASSERT_EQUAL(rd_sim_set_group(s, "ConvAdd", "y", inner, 1, &err), RD_OK);
    t = info(s, "c");
    CU_ASSERT_FALSE(t.materialized);
    CU_ASSERT_EQUAL(t.group_out, info(s, "y").value);
    CU_ASSERT_STRING_EQUAL(t.npu_op, "ConvAdd");
    CU_ASSERT_STRING_EQUAL(info(s, "y").npu_op, "ConvAdd");
    CU_ASSERT_STRING_EQUAL(info(s, "y").row_op, "Add");
    /* refusals */
    const char *in_r[] = {"r"}, *in_y[] = {"y"}, *in_c2[] = {"c2"}, *in_bad[] = {"c_typo"}, *in_z[] = {"z"};
    OT_ASSERT_ERR(rd_sim_set_group(s, "ConvAdd", "y", in_r, 1, &err), &err, RD_E_INVAL, "'r'", "graph input");
    OT_ASSERT_ERR(rd_sim_set_group(s, "ConvAdd", "y", in_y, 1, &err), &err, RD_E_INVAL, "'y'", "output");
    OT_ASSERT_ERR(rd_sim_set_group(s, "ConvRelu", "z", in_c2, 1, &err), &err, RD_E_INVAL, "'c2'", "'sig'");
    OT_ASSERT_ERR(rd_sim_set_group(s, "ConvAdd", "y", in_bad, 1, &err), &err, RD_E_NOTFOUND, "c_typo");
    OT_ASSERT_ERR(rd_sim_set_group(s, "ReluX", "z2", in_z, 1, &err), &err, RD_E_INVAL, "'z'", "graph output");
    OT_ASSERT_ERR(rd_sim_set_group(s, "", "y", inner, 1, &err), &err, RD_E_INVAL, "NPU op");
    OT_ASSERT_ERR(rd_sim_set_group(s, "Conv", "c", NULL, 0, &err), &err, RD_E_INVAL, "'c'", "clear the groups");
    CU_ASSERT_TRUE(info(s, "c2").materialized); /* refused groups change nothing */
    /* row labels */
    CU_ASSERT_EQUAL(rd_sim_set_row_op(s, "z", "exRelu", &err), RD_OK);
    CU_ASSERT_STRING_EQUAL(info(s, "z").row_op, "exRelu");
    OT_ASSERT_ERR(rd_sim_set_row_op(s, "x", "Input", &err), &err, RD_E_INVAL, "graph input");
    /* the run follows the groups: c is not rounded, y is */
    captured cap;
    run_capture(s, 3, &cap);
    const rd_sim_tensor yt = info(s, "y");
    const float *yv = got(&cap, "y");
    for (int i = 0; i < 32; i++)
        CU_ASSERT_EQUAL(requant(yv[i], yt.scale, yt.zero_point), yv[i]);
    captured_fini(&cap);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

RD_TEST_REGISTER(register_sim_rknn)
{
    RD_SUITE("sim_rknn", {"ConvAddRelu: no rounding inside", test_conv_add_relu_bits},
             {"Softmax in float16 inside int8", test_softmax_float16},
             {"GlobalAveragePool as int8 convs", test_gap_int8}, {"GlobalAveragePool as a float16 conv", test_gap_fp16},
             {"MaxPool passes, Concat unites", test_calibration_rules}, {"groups set from outside", test_set_group});
}

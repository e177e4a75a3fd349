/*
 * test_sim_built.c: the simulator following a built model's decisions: asymmetric int8 weights (derived
 * per channel, or imported with their codes through rd_sim_set_weight_quant), and an int8 layer reading a
 * float16 tensor through RKNN's exDataConvert (float16 -> int8 on the tensor's own grid). Oracles are
 * written here: integer loops over the codes, and a second simulation fed the converted tensor.
 */
#include "onnx_test_util.h"
#include "passes_test_util.h"
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rd_status sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    (void)err;
    const rd_model *m = user;
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, 0), &vi);
    rd_tensor_alloc(&inputs[0], RD_DT_F32, vi.rank, vi.dims, NULL);
    fill(inputs[0].data, rd_tensor_numel(&inputs[0]), 300 + (unsigned)k, -2.0f, 2.0f);
    return RD_OK;
}

static rd_sim *calibrated(const rd_model *m, bool asym)
{
    rd_sim_options so = {.precision = RD_PREC_INT8, .optimization_level = 3, .asymmetric_weights = asym};
    rd_sim *s = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    rd_calib_options co = {.method = RD_CALIB_NORMAL, .threads = 1};
    CU_ASSERT_EQUAL_FATAL(rd_calibrate(s, sample, (void *)m, 3, &co, &err), RD_OK);
    return s;
}

static void run_one(rd_sim *s, unsigned seed, rd_tensor *out)
{
    rd_tensor in;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(sample((void *)rd_sim_model(s), seed, &in, &err), RD_OK);
    rd_status st = rd_sim_run(s, &in, 1, NULL, out, 1, &err);
    if (st != RD_OK)
        fprintf(stderr, "\nrun: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    rd_tensor_fini(&in);
}

static int node_of(const rd_sim *s, const char *out)
{
    const rd_model *m = rd_sim_model(s);
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        rd_value_info vi;
        rd_model_value(m, (size_t)ni.outputs[0], &vi);
        if (strcmp(vi.name, out) == 0)
            return (int)i;
    }
    CU_FAIL_FATAL("no such node");
    return -1;
}

/* x [1,3,5,5] -> Conv 3x3 (4 channels, bias) -> y */
static rd_model *conv_model(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 5, 5}, NULL);
    init_f32(b, "w", 4, (const int64_t[]){4, 3, 3, 3}, 21, -0.4f, 0.9f);
    init_f32(b, "bias", 1, (const int64_t[]){4}, 22, -0.5f, 0.5f);
    rd_onnx_node *c =
        rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w", "bias"}, 3, (const char *const[]){"y"}, 1);
    rd_onnx_attr_ints(c, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    return ot_model_load(b, "conv_asym.onnx");
}

/* The integer oracle of one output element: sum (x_q - x_zp)(w_q - w_zp[c]) + bias_q, dequantized. */
static float conv_oracle(const rd_sim *s, const rd_sim_weights *sw, const float *x, const float *bias, int c, int oy,
                         int ox)
{
    rd_sim_tensor xt;
    rd_sim_tensor_get(s, "x", &xt, NULL);
    const double ws = sw->scale[c];
    int64_t acc = (int64_t)llrint((double)bias[c] / ((double)xt.scale * ws)); /* no ties in this data */
    for (int ic = 0; ic < 3; ic++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
                int iy = oy + ky - 1, ix = ox + kx - 1;
                if (iy < 0 || iy >= 5 || ix < 0 || ix >= 5)
                    continue;
                float q = nearbyintf(x[(ic * 5 + iy) * 5 + ix] / xt.scale) + (float)xt.zero_point;
                q = fmaxf(-128.0f, fminf(127.0f, q));
                acc += (int64_t)((int)q - xt.zero_point) *
                       (sw->q[((c * 3 + ic) * 3 + ky) * 3 + kx] - (sw->zero_point ? sw->zero_point[c] : 0));
            }
    return (float)((double)(int32_t)acc * xt.scale * ws);
}

static float requant(float v, float scale, int32_t zp)
{
    float q = nearbyintf(v / scale) + (float)zp;
    q = fmaxf(-128.0f, fminf(127.0f, q));
    return scale * (q - (float)zp);
}

static void test_asymmetric_weights(void)
{
    rd_model *m = conv_model();
    rd_sim *s = calibrated(m, true);
    rd_error err;
    rd_sim_weights sw;
    const int conv = node_of(s, "y");
    CU_ASSERT_EQUAL_FATAL(rd_sim_weights_get(s, conv, &sw, &err), RD_OK);
    CU_ASSERT_EQUAL(sw.n_scale, 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw.zero_point);
    int nonzero = 0;
    for (int c = 0; c < 4; c++)
        nonzero += sw.zero_point[c] != 0;
    CU_ASSERT(nonzero > 0); /* weights in [-0.4, 0.9]: the zero points sit below the middle */
    /* the run against the integer oracle */
    rd_tensor in, y;
    CU_ASSERT_EQUAL_FATAL(sample(m, 9, &in, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s, &in, 1, NULL, &y, 1, &err), RD_OK);
    rd_sim_tensor yt;
    CU_ASSERT_EQUAL_FATAL(rd_sim_tensor_get(s, "y", &yt, &err), RD_OK);
    const rd_tensor *bias = rd_model_constant(m, (size_t)rd_model_find_value(m, "bias"));
    int differ = 0;
    for (int c = 0; c < 4; c++)
        for (int p = 0; p < 25; p++) {
            float want = requant(conv_oracle(s, &sw, in.data, bias->data, c, p / 5, p % 5), yt.scale, yt.zero_point);
            differ += memcmp(&want, &((float *)y.data)[c * 25 + p], sizeof want) != 0;
        }
    CU_ASSERT_EQUAL(differ, 0);
    /* the same parameters imported give the same run; the codes imported replace ours */
    rd_sim *t = calibrated(m, false);
    CU_ASSERT_EQUAL_FATAL(rd_sim_set_weight_quant(t, "w", sw.scale, sw.zero_point, 4, NULL, 0, &err), RD_OK);
    rd_tensor y2;
    run_one(t, 9, &y2);
    CU_ASSERT_EQUAL(memcmp(y.data, y2.data, 100 * sizeof(float)), 0);
    rd_tensor_fini(&y2);
    int8_t codes[108];
    memcpy(codes, sw.q, sizeof codes);
    for (int i = 0; i < 27; i++) /* channel 0 mirrored: another channel altogether */
        codes[i] = (int8_t)(-1 - codes[i]);
    CU_ASSERT_EQUAL_FATAL(rd_sim_set_weight_quant(t, "conv", sw.scale, sw.zero_point, 4, codes, 108, &err), RD_OK);
    rd_sim_weights tw;
    CU_ASSERT_EQUAL_FATAL(rd_sim_weights_get(t, conv, &tw, &err), RD_OK);
    CU_ASSERT_EQUAL(memcmp(tw.q, codes, sizeof codes), 0);
    run_one(t, 9, &y2);
    int changed_other = 0, changed_c0 = 0;
    for (int i = 0; i < 100; i++) {
        bool same = memcmp(&((float *)y.data)[i], &((float *)y2.data)[i], sizeof(float)) == 0;
        changed_c0 += i < 25 && !same;
        changed_other += i >= 25 && !same;
    }
    CU_ASSERT(changed_c0 > 0);
    CU_ASSERT_EQUAL(changed_other, 0);
    rd_tensor_fini(&y2);
    /* refusals name the layer and the value */
    const int32_t bad_zp[] = {0, 200, 0, 0};
    OT_ASSERT_ERR(rd_sim_set_weight_quant(t, "w", sw.scale, bad_zp, 4, NULL, 0, &err), &err, RD_E_INVAL, "'conv'",
                  "200");
    OT_ASSERT_ERR(rd_sim_set_weight_quant(t, "w", sw.scale, sw.zero_point, 4, codes, 7, &err), &err, RD_E_INVAL,
                  "7 codes");
    OT_ASSERT_ERR(rd_sim_set_weight_quant(t, "w", sw.scale, sw.zero_point, 3, NULL, 0, &err), &err, RD_E_INVAL,
                  "3 scales");
    OT_ASSERT_ERR(rd_sim_set_weight_quant(t, "nothing", sw.scale, sw.zero_point, 4, NULL, 0, &err), &err, RD_E_NOTFOUND,
                  "nothing");
    rd_sim_destroy(t);
    rd_tensor_fini(&in);
    rd_tensor_fini(&y);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

/* Layer k (1 or 2) of test_float16_into_int8's model alone, with the same weights: x [1,3,5,5] -> conv1 -> a,
   or a [1,4,5,5] -> conv2 -> y; loaded as name. */
static rd_model *layer_alone(int k, const char *name)
{
    const char *in = k == 1 ? "x" : "a", *w = k == 1 ? "w1" : "w2", *out = k == 1 ? "a" : "y";
    const int64_t c_in = k == 1 ? 3 : 4, c_out = k == 1 ? 4 : 2;
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, in, RD_DT_F32, 4, (const int64_t[]){1, c_in, 5, 5}, NULL);
    init_f32(b, w, 4, (const int64_t[]){c_out, c_in, 1, 1}, 30 + (unsigned)k, -1.0f, 1.0f);
    rd_onnx_add_node(b, "Conv", k == 1 ? "conv1" : "conv2", (const char *const[]){in, w}, 2, (const char *const[]){out},
                     1);
    rd_onnx_add_output(b, out, RD_DT_F32, -1, NULL, NULL);
    return ot_model_load(b, name);
}

/* x -> conv1 -> a (kept float16) -> conv2 (int8) -> y: conv2 reads a converted to int8 on a's own grid. The
   oracle: a model of conv2 alone, fed that conversion, with the same parameters. */
static void test_float16_into_int8(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 5, 5}, NULL);
    init_f32(b, "w1", 4, (const int64_t[]){4, 3, 1, 1}, 31, -1.0f, 1.0f);
    init_f32(b, "w2", 4, (const int64_t[]){2, 4, 1, 1}, 32, -1.0f, 1.0f);
    rd_onnx_add_node(b, "Conv", "conv1", (const char *const[]){"x", "w1"}, 2, (const char *const[]){"a"}, 1);
    rd_onnx_add_node(b, "Conv", "conv2", (const char *const[]){"a", "w2"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    rd_model *m = ot_model_load(b, "f16_int8.onnx");
    rd_model *m2 = layer_alone(2, "conv2.onnx");
    rd_sim *s = calibrated(m, false);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sim_set_precision(s, "a", RD_PREC_FP16, &err), RD_OK);
    rd_sim_tensor at, yt;
    CU_ASSERT_EQUAL_FATAL(rd_sim_tensor_get(s, "a", &at, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_sim_tensor_get(s, "y", &yt, &err), RD_OK);
    CU_ASSERT_TRUE_FATAL(at.quantized); /* calibrated while int8: the grid of the conversion */
    /* a's float16 values, as the first layer computes them */
    rd_sim *s1 = NULL;
    rd_sim_options so = {.precision = RD_PREC_FP16, .optimization_level = 3};
    rd_model *m1 = layer_alone(1, "conv1.onnx");
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m1, &so, &s1, &err), RD_OK);
    /* x is int8 in the hybrid model: feed its int8 values to the float16 layer */
    rd_sim_tensor xt;
    CU_ASSERT_EQUAL_FATAL(rd_sim_tensor_get(s, "x", &xt, &err), RD_OK);
    rd_tensor in, a16, y, want;
    CU_ASSERT_EQUAL_FATAL(sample(m, 5, &in, &err), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(&in); i++)
        ((float *)in.data)[i] = requant(((float *)in.data)[i], xt.scale, xt.zero_point);
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s1, &in, 1, NULL, &a16, 1, &err), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(&a16); i++) /* exDataConvert float16 -> int8 */
        ((float *)a16.data)[i] = requant(((float *)a16.data)[i], at.scale, at.zero_point);
    rd_sim *s2 = NULL;
    rd_sim_options so8 = {.precision = RD_PREC_INT8, .optimization_level = 3};
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m2, &so8, &s2, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_sim_set_qparams(s2, "a", at.scale, at.zero_point, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_sim_set_qparams(s2, "y", yt.scale, yt.zero_point, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s2, &a16, 1, NULL, &want, 1, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s, &in, 1, NULL, &y, 1, &err), RD_OK);
    CU_ASSERT_EQUAL(memcmp(y.data, want.data, 50 * sizeof(float)), 0);
    rd_tensor_fini(&in);
    rd_tensor_fini(&a16);
    rd_tensor_fini(&y);
    rd_tensor_fini(&want);
    rd_sim_destroy(s);
    rd_sim_destroy(s1);
    rd_sim_destroy(s2);
    rd_model_destroy(m);
    rd_model_destroy(m1);
    rd_model_destroy(m2);
}

RD_TEST_REGISTER(register_sim_built)
{
    RD_SUITE("sim_built", {"asymmetric weights: derived, imported, codes", test_asymmetric_weights},
             {"float16 into an int8 layer: exDataConvert", test_float16_into_int8});
}

/*
 * test_sim_int16.c: int16 tensors in a simulation: a hybrid w8a8 model with int16 layers
 * (rd_sim_set_precision), w16a16i, w8a16 and w16a16i_dfp simulations, their parameters, statistics and
 * accuracy against int8 and float16.
 */
#include "sim_test_util.h"
#include "rd_test.h"
#include "rknn_diag/simulator.h"
#include "quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* x [1,4,8,8] -> Conv 3x3 (4->8, pads 1) -> Relu -> r -> Conv 1x1 (8->4) -> y -> Gemm-free tail: out = y */
static rd_model *build_model(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 4, 8, 8}, NULL);
    rd_tensor w1, b1, w2;
    rd_tensor_alloc(&w1, RD_DT_F32, 4, (const int64_t[]){8, 4, 3, 3}, NULL);
    rd_tensor_alloc(&b1, RD_DT_F32, 1, (const int64_t[]){8}, NULL);
    rd_tensor_alloc(&w2, RD_DT_F32, 4, (const int64_t[]){4, 8, 1, 1}, NULL);
    for (int i = 0; i < 288; i++)
        ((float *)w1.data)[i] = sinf(0.7f * (float)i) * 0.3f;
    for (int i = 0; i < 8; i++)
        ((float *)b1.data)[i] = 0.05f * (float)(i - 3);
    for (int i = 0; i < 32; i++)
        ((float *)w2.data)[i] = cosf(1.3f * (float)i) * 0.5f;
    rd_onnx_add_initializer(b, "w1", &w1, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "b1", &b1, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "w2", &w2, RD_ONNX_RAW);
    rd_onnx_node *c =
        rd_onnx_add_node(b, "Conv", "conv1", (const char *const[]){"x", "w1", "b1"}, 3, (const char *const[]){"c1"}, 1);
    rd_onnx_attr_ints(c, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"c1"}, 1, (const char *const[]){"r"}, 1);
    rd_onnx_add_node(b, "Conv", "conv2", (const char *const[]){"r", "w2"}, 2, (const char *const[]){"out"}, 1);
    rd_onnx_add_output(b, "out", RD_DT_F32, -1, NULL, NULL);
    rd_tensor_fini(&w1);
    rd_tensor_fini(&b1);
    rd_tensor_fini(&w2);
    rd_model *m = ot_model_load(b, "int16_test.onnx");
    return m;
}

static void make_input(rd_tensor *x)
{
    rd_tensor_alloc(x, RD_DT_F32, 4, (const int64_t[]){1, 4, 8, 8}, NULL);
    for (int i = 0; i < 256; i++)
        ((float *)x->data)[i] = sinf(0.37f * (float)i) * 2.0f + 0.3f * cosf(2.1f * (float)i);
}

/* Relative L2 error of a against the reference. */
static double rel_err(const rd_tensor *a, const rd_tensor *ref)
{
    double d = 0, n = 0;
    for (int64_t i = 0; i < rd_tensor_numel(a); i++) {
        double x = ((float *)a->data)[i], y = ((float *)ref->data)[i];
        d += (x - y) * (x - y);
        n += y * y;
    }
    return sqrt(d / n);
}

/* A calibrated simulation of m with these options; the float32 reference output in ref (if not NULL). */
static rd_sim *calibrated(rd_model *m, rd_sim_options so, const rd_tensor *x, rd_tensor *ref)
{
    rd_sim *s = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    if (so.precision == RD_PREC_FP16)
        return s;
    rd_run_options ro = {.observer = st_set_range_from, .user = s, .observe_inputs = true};
    rd_tensor out;
    CU_ASSERT_EQUAL_FATAL(rd_model_run((rd_model *)rd_sim_model(s), x, 1, &ro, &out, 1, &err), RD_OK);
    if (ref)
        *ref = out;
    else
        rd_tensor_fini(&out);
    return s;
}

static double run_err(rd_sim *s, const rd_tensor *x, const rd_tensor *ref)
{
    rd_tensor y;
    rd_error err;
    rd_status st = rd_sim_run(s, x, 1, NULL, &y, 1, &err);
    CU_ASSERT_EQUAL(st, RD_OK);
    if (st != RD_OK) {
        fprintf(stderr, "run: %s\n", err.msg);
        return 1e9;
    }
    double e = rel_err(&y, ref);
    rd_tensor_fini(&y);
    return e;
}

/* Every value of name's last output lies on its int16 grid. */
static void check_on_grid16(rd_sim *s, const rd_tensor *y, const char *name)
{
    rd_sim_tensor t;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sim_tensor_get(s, name, &t, &err), RD_OK);
    CU_ASSERT_EQUAL(t.precision, RD_PREC_INT16);
    CU_ASSERT_TRUE(t.quantized);
    for (int64_t i = 0; i < rd_tensor_numel(y); i++) {
        double q = ((float *)y->data)[i] / t.scale + t.zero_point;
        CU_ASSERT(fabs(q - nearbyint(q)) < 1e-2); /* y is a float: 2^-24 of up to 65535 steps */
        CU_ASSERT(nearbyint(q) >= -32768 && nearbyint(q) <= 32767);
    }
}

static void test_hybrid_int16(void)
{
    rd_model *m = build_model();
    rd_tensor x, ref;
    make_input(&x);
    rd_sim *s8 = calibrated(m, (rd_sim_options){.precision = RD_PREC_INT8, .optimization_level = 3}, &x, &ref);
    const double e8 = run_err(s8, &x, &ref);
    rd_sim *s16 = calibrated(m, (rd_sim_options){.precision = RD_PREC_INT8, .optimization_level = 3}, &x, NULL);
    rd_error err;
    /* moved to int16 after calibration: the int16 parameters come from the calibrated range */
    rd_sim_tensor t8, t;
    CU_ASSERT_EQUAL(rd_sim_tensor_get(s16, "r", &t8, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_sim_set_precision(s16, "r", RD_PREC_INT16, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_sim_set_precision(s16, "out", RD_PREC_INT16, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_sim_tensor_get(s16, "r", &t, &err), RD_OK);
    float sc;
    int32_t zp;
    sim_qparams16_from_range(t8.min, t8.max, false, &sc, &zp);
    CU_ASSERT_EQUAL(t.scale, sc);
    CU_ASSERT_EQUAL(t.zero_point, zp);
    CU_ASSERT_EQUAL(t.min, t8.min);
    CU_ASSERT_EQUAL(t.max, t8.max);
    CU_ASSERT_EQUAL(t.zero_point, -32768); /* a Relu output: [0, max] */
    /* the int16 layers read int8 x (conv1) and int16 r (conv2); weights int16 */
    rd_tensor y;
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s16, &x, 1, NULL, &y, 1, &err), RD_OK);
    check_on_grid16(s16, &y, "out");
    const double e16 = rel_err(&y, &ref);
    rd_tensor_fini(&y);
    const rd_model *om = rd_sim_model(s16);
    rd_sim_weights w;
    bool found = false;
    for (size_t i = 0; i < rd_model_node_count(om); i++)
        if (rd_sim_weights_get(s16, (int)i, &w, NULL) == RD_OK) {
            CU_ASSERT_EQUAL(w.bits, 16);
            CU_ASSERT_PTR_NOT_NULL(w.q16);
            CU_ASSERT_PTR_NULL(w.q);
            found = true;
        }
    CU_ASSERT_TRUE(found);
    /* float16 for comparison */
    rd_sim *s_half = calibrated(m, (rd_sim_options){.precision = RD_PREC_FP16, .optimization_level = 3}, &x, NULL);
    const double e_half = run_err(s_half, &x, &ref);
    /* the input stays int8 (x): int16 layers cannot recover what it lost, so compare the whole-int16 model */
    rd_sim *sw = calibrated(m, (rd_sim_options){.precision = RD_PREC_INT16, .optimization_level = 3}, &x, NULL);
    const double e_w16 = run_err(sw, &x, &ref);
    fprintf(stderr, "relative error: w8a8 %.3g, w8a8 + int16 layers %.3g, w16a16i %.3g, float16 %.3g\n", e8, e16, e_w16,
            e_half);
    CU_ASSERT(e16 < e8);
    CU_ASSERT(e_w16 < e8 / 50);
    CU_ASSERT(e_w16 < e_half * 4);
    rd_sim_destroy(s8);
    rd_sim_destroy(s16);
    rd_sim_destroy(s_half);
    rd_sim_destroy(sw);
    rd_tensor_fini(&ref);
    rd_tensor_fini(&x);
    rd_model_destroy(m);
}

static void test_w16_variants(void)
{
    rd_model *m = build_model();
    rd_tensor x, ref;
    make_input(&x);
    rd_error err;
    /* w8a16: int8 weights, int16 activations */
    rd_sim_options so;
    so = (rd_sim_options){.optimization_level = 3};
    CU_ASSERT_EQUAL(rd_sim_options_for_dtype(RD_QDT_W8A16, &so, &err), RD_OK);
    CU_ASSERT_EQUAL(so.precision, RD_PREC_INT16);
    CU_ASSERT_EQUAL(so.weight_bits, 8);
    rd_sim *s = calibrated(m, so, &x, &ref);
    const double e_w8a16 = run_err(s, &x, &ref);
    const rd_model *om = rd_sim_model(s);
    for (size_t i = 0; i < rd_model_node_count(om); i++) {
        rd_sim_weights w;
        if (rd_sim_weights_get(s, (int)i, &w, NULL) != RD_OK)
            continue;
        CU_ASSERT_EQUAL(w.bits, 8);
        const rd_tensor *wt = rd_model_constant(om, (size_t)w.value);
        for (int64_t k = 0; k < rd_tensor_numel(wt); k++)
            CU_ASSERT(w.q16[k] >= -127 && w.q16[k] <= 127);
    }
    rd_sim_destroy(s);
    /* w16a16i_dfp: power-of-two scales, zero point 0 */
    CU_ASSERT_EQUAL(rd_sim_options_for_dtype(RD_QDT_W16A16I_DFP, &so, &err), RD_OK);
    CU_ASSERT_TRUE(so.dfp);
    s = calibrated(m, so, &x, NULL);
    const double e_dfp = run_err(s, &x, &ref);
    const char *names[] = {"x", "r", "out"};
    for (int k = 0; k < 3; k++) {
        rd_sim_tensor t;
        CU_ASSERT_EQUAL_FATAL(rd_sim_tensor_get(s, names[k], &t, &err), RD_OK);
        int e;
        CU_ASSERT_EQUAL(frexpf(t.scale, &e), 0.5f);
        CU_ASSERT_EQUAL(t.zero_point, 0);
        const float amax = fabsf(t.min) > fabsf(t.max) ? fabsf(t.min) : fabsf(t.max);
        CU_ASSERT(amax <= 32767.0f * t.scale && amax > 32767.0f * t.scale / 2);
    }
    for (size_t i = 0; i < rd_model_node_count(rd_sim_model(s)); i++) {
        rd_sim_weights w;
        if (rd_sim_weights_get(s, (int)i, &w, NULL) != RD_OK)
            continue;
        int e;
        for (int c = 0; c < w.n_scale; c++)
            CU_ASSERT_EQUAL(frexpf(w.scale[c], &e), 0.5f);
    }
    rd_sim_destroy(s);
    fprintf(stderr, "relative error: w8a16 %.3g, w16a16i_dfp %.3g\n", e_w8a16, e_dfp);
    CU_ASSERT(e_w8a16 < 0.08); /* int8 weights dominate this model's int8 error (w8a8: 0.062) */
    CU_ASSERT(e_dfp < 0.001);
    /* w4a16: int4 weights per channel, codes in [-7, 7] */
    CU_ASSERT_EQUAL(rd_sim_options_for_dtype(RD_QDT_W4A16, &so, &err), RD_OK);
    CU_ASSERT_EQUAL(so.weight_bits, 4);
    CU_ASSERT_FALSE(so.dfp);
    s = calibrated(m, so, &x, NULL);
    const double e_w4 = run_err(s, &x, &ref);
    bool seen = false;
    for (size_t i = 0; i < rd_model_node_count(rd_sim_model(s)); i++) {
        rd_sim_weights w;
        if (rd_sim_weights_get(s, (int)i, &w, NULL) != RD_OK)
            continue;
        CU_ASSERT_EQUAL(w.bits, 4);
        const rd_tensor *wt = rd_model_constant(rd_sim_model(s), (size_t)w.value);
        bool at_limit = false;
        for (int64_t k = 0; k < rd_tensor_numel(wt); k++) {
            CU_ASSERT(w.q16[k] >= -7 && w.q16[k] <= 7);
            at_limit = at_limit || w.q16[k] == 7 || w.q16[k] == -7;
        }
        CU_ASSERT_TRUE(at_limit);
        seen = true;
    }
    CU_ASSERT_TRUE(seen);
    rd_sim_destroy(s);
    fprintf(stderr, "relative error: w4a16 %.3g\n", e_w4);
    CU_ASSERT(e_w4 > e_w8a16);
    CU_ASSERT(e_w4 < 1.0); /* this model amplifies weight error (8-bit: 0.053); 4-bit steps are 18x coarser */
    CU_ASSERT_EQUAL(rd_sim_options_for_dtype(RD_QDT_COUNT, &so, &err), RD_E_UNSUPPORTED);
    rd_tensor_fini(&ref);
    rd_tensor_fini(&x);
    rd_model_destroy(m);
}

static void test_int16_stats_and_errors(void)
{
    rd_model *m = build_model();
    rd_tensor x, y;
    make_input(&x);
    rd_error err;
    rd_sim *s = NULL;
    CU_ASSERT_EQUAL_FATAL(
        rd_sim_create(m, &(rd_sim_options){.precision = RD_PREC_INT16, .optimization_level = 3}, &s, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_sim_run(s, &x, 1, NULL, &y, 1, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no int16 parameters"));
    rd_sim_destroy(s);
    s = calibrated(m, (rd_sim_options){.precision = RD_PREC_INT16, .optimization_level = 3}, &x, NULL);
    /* a range far too narrow: values saturate at -32768 / 32767 and are counted */
    CU_ASSERT_EQUAL(rd_sim_set_qparams16(s, "out", 1e-6f, 0, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s, &x, 1, NULL, &y, 1, &err), RD_OK);
    rd_sim_layer_stats st = st_stats_of(s, "out");
    CU_ASSERT(st.saturated > 0);
    CU_ASSERT_EQUAL(st.count, 4 * 64);
    int64_t at_ends = 0;
    for (int64_t i = 0; i < rd_tensor_numel(&y); i++) {
        const float v = ((float *)y.data)[i];
        at_ends += v == 1e-6f * 32767.0f || v == 1e-6f * -32768.0f;
    }
    CU_ASSERT_EQUAL(at_ends, st.saturated);
    rd_tensor_fini(&y);
    /* set_qparams16 derives int8 parameters from the int16 grid's range */
    CU_ASSERT_EQUAL(rd_sim_set_precision(s, "out", RD_PREC_INT8, &err), RD_OK);
    rd_sim_tensor t;
    CU_ASSERT_EQUAL(rd_sim_tensor_get(s, "out", &t, &err), RD_OK);
    CU_ASSERT_TRUE(t.quantized);
    CU_ASSERT_EQUAL(t.min, 1e-6f * -32768.0f);
    CU_ASSERT_EQUAL(t.zero_point, 0); /* the range -32768..32767 steps: zero point round(-0.5) = 0 */
    /* refusals */
    CU_ASSERT_EQUAL(rd_sim_set_qparams16(s, "out", 1.0f, 40000, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "int16"));
    CU_ASSERT_EQUAL(rd_sim_set_qparams16(s, "out", 0.0f, 0, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(rd_sim_set_qparams16(s, "nope", 1.0f, 0, &err), RD_E_NOTFOUND);
    rd_sim_destroy(s);
    rd_tensor_fini(&x);
    rd_model_destroy(m);
}

static rd_status sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    (void)user;
    (void)err;
    make_input(&inputs[0]);
    for (int i = 0; i < 256; i++)
        ((float *)inputs[0].data)[i] *= 1.0f + 0.25f * (float)k;
    if (k == 3)
        ((float *)inputs[0].data)[17] = 400.0f; /* an outlier KL and MMSE clip for int8 */
    return RD_OK;
}

/* kl_divergence and mmse search for int8's 255 steps: int16 tensors keep their min/max. */
static void test_int16_calibration_methods(void)
{
    rd_model *m = build_model();
    rd_error err;
    const rd_calib_method methods[] = {RD_CALIB_NORMAL, RD_CALIB_KL, RD_CALIB_MMSE};
    rd_sim_tensor t16[3], t8[3];
    for (int k = 0; k < 3; k++) {
        rd_calib_options co = {.method = methods[k], .threads = 1};
        rd_sim *s = NULL;
        CU_ASSERT_EQUAL_FATAL(
            rd_sim_create(m, &(rd_sim_options){.precision = RD_PREC_INT16, .optimization_level = 3}, &s, &err), RD_OK);
        CU_ASSERT_EQUAL_FATAL(rd_calibrate(s, sample, NULL, 4, &co, &err), RD_OK);
        CU_ASSERT_EQUAL(rd_sim_tensor_get(s, "x", &t16[k], &err), RD_OK);
        rd_sim_destroy(s);
        CU_ASSERT_EQUAL_FATAL(
            rd_sim_create(m, &(rd_sim_options){.precision = RD_PREC_INT8, .optimization_level = 3}, &s, &err), RD_OK);
        CU_ASSERT_EQUAL_FATAL(rd_calibrate(s, sample, NULL, 4, &co, &err), RD_OK);
        CU_ASSERT_EQUAL(rd_sim_tensor_get(s, "x", &t8[k], &err), RD_OK);
        rd_sim_destroy(s);
    }
    for (int k = 1; k < 3; k++) {
        CU_ASSERT_EQUAL(t16[k].max, t16[0].max);
        CU_ASSERT_EQUAL(t16[k].min, t16[0].min);
    }
    CU_ASSERT(t8[1].max < t8[0].max); /* where KL clips the int8 tensor */
    CU_ASSERT_EQUAL(t16[0].max, 400.0f);
    rd_model_destroy(m);
}

RD_TEST_REGISTER(register_sim_int16)
{
    RD_SUITE("sim int16", {"hybrid int16 layers: parameters, accuracy against int8/float16", test_hybrid_int16},
             {"w8a16, w4a16 and w16a16i_dfp", test_w16_variants},
             {"int16 statistics and errors", test_int16_stats_and_errors},
             {"int16 tensors keep min/max under kl_divergence and mmse", test_int16_calibration_methods});
}

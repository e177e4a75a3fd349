/* test_sim.c: the FP16 / INT8 / hybrid simulator on small models built with our ONNX writer. */
#include "sim_test_util.h"
#include "calibrated_sim.h"
#include "rd_test.h"
#include "tensor_check.h"
#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_fp16_overflow(void)
{
    /* a gain large enough to overflow float16 */
    rd_model *m = st_conv_relu_gain_model(2, 40000.0f, "sim_test.onnx");
    rd_sim_options so = {.precision = RD_PREC_FP16, .optimization_level = 3};
    rd_sim *s = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    rd_tensor x, y;
    st_conv_input(&x, 2);
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s, &x, 1, NULL, &y, 1, &err), RD_OK);
    rd_sim_layer_stats st = st_stats_of(s, "out");
    CU_ASSERT(st.fp16_overflow > 0);
    CU_ASSERT(st.fp16_first_index >= 0);
    CU_ASSERT(st.fp16_max_abs > 65504.0);
    CU_ASSERT(isinf(((float *)y.data)[st.fp16_first_index]));
    /* the fused conv output is not materialised, the relu output is */
    rd_sim_tensor t;
    CU_ASSERT_EQUAL(rd_sim_tensor_get(s, "conv_out", &t, &err), RD_OK);
    CU_ASSERT_FALSE(t.materialized);
    CU_ASSERT(t.fused_into >= 0);
    CU_ASSERT_EQUAL(rd_sim_tensor_get(s, "relu_out", &t, &err), RD_OK);
    CU_ASSERT_TRUE(t.materialized);
    rd_tensor_fini(&y);
    /* every output value is a float16 value */
    rd_sim_destroy(s);
    so.optimization_level = 0;
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    rd_model_destroy(m);
    m = st_conv_relu_gain_model(2, 2.0f, "sim_test.onnx");
    rd_sim_destroy(s);
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s, &x, 1, NULL, &y, 1, &err), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(&y); i++) {
        float v = ((float *)y.data)[i];
        CU_ASSERT_EQUAL(rd_f16_to_f32(rd_f32_to_f16(v)), v);
    }
    rd_tensor_fini(&y);
    rd_tensor_fini(&x);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

static void test_int8(void)
{
    rd_model *m = st_conv_relu_gain_model(2, 2.0f, "sim_test.onnx");
    rd_sim *s = rd_test_sim(m, RD_PREC_INT8);
    rd_error err;
    rd_tensor x, y, ref;
    st_conv_input(&x, 2);
    /* without parameters: a clear error */
    CU_ASSERT_EQUAL(rd_sim_run(s, &x, 1, NULL, &y, 1, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no int8 parameters"));
    rd_run_options ro = {.observer = st_set_range_from, .user = s, .observe_inputs = true};
    CU_ASSERT_EQUAL_FATAL(rd_model_run((rd_model *)rd_sim_model(s), &x, 1, &ro, &ref, 1, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s, &x, 1, NULL, &y, 1, &err), RD_OK);
    double c = rd_test_cosine(&y, &ref);
    CU_ASSERT(c > 0.999);
    CU_ASSERT(c < 1.0); /* it is quantized */
    /* outputs are exact int8 levels of the output's parameters */
    rd_sim_tensor t;
    CU_ASSERT_EQUAL(rd_sim_tensor_get(s, "out", &t, &err), RD_OK);
    CU_ASSERT_TRUE(t.quantized);
    for (int64_t i = 0; i < rd_tensor_numel(&y); i++) {
        double q = ((float *)y.data)[i] / t.scale + t.zero_point;
        CU_ASSERT(fabs(q - nearbyint(q)) < 1e-3);
        CU_ASSERT(nearbyint(q) >= -128 && nearbyint(q) <= 127);
    }
    rd_tensor_fini(&y);
    /* hybrid: the relu output in float16 */
    CU_ASSERT_EQUAL(rd_sim_set_precision(s, "relu_out", RD_PREC_FP16, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_sim_tensor_get(s, "relu_out", &t, &err), RD_OK);
    CU_ASSERT_EQUAL(t.precision, RD_PREC_FP16);
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s, &x, 1, NULL, &y, 1, &err), RD_OK);
    CU_ASSERT(rd_test_cosine(&y, &ref) > 0.999);
    rd_tensor_fini(&y);
    /* refusals */
    CU_ASSERT_EQUAL(rd_sim_set_precision(s, "conv_out", RD_PREC_FP16, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "relu_out"));
    CU_ASSERT_EQUAL(rd_sim_set_precision(s, "relu_ou", RD_PREC_FP16, &err), RD_E_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "relu_out"));
    CU_ASSERT_EQUAL(rd_sim_set_precision(s, "relu_out", (rd_prec)7, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(rd_sim_set_qparams(s, "out", -1.0f, 0, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(rd_sim_set_range(s, "out", 2.0f, 1.0f, &err), RD_E_INVAL);
    rd_tensor_fini(&ref);
    rd_tensor_fini(&x);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

typedef struct analyze_check {
    int events;
    int materialized;
    double first_single_vs_entire; /* max |single - entire| on the first layer: same inputs, so 0 */
    double last_single_cos;
    rd_tensor ref_out; /* golden of "out" */
    rd_tensor entire_out;
} analyze_check;

static rd_status check_event(void *user, const rd_sim_event *ev, rd_error *err)
{
    analyze_check *c = user;
    c->events++;
    CU_ASSERT_EQUAL(rd_tensor_numel(ev->golden), rd_tensor_numel(ev->entire));
    CU_ASSERT_EQUAL(rd_tensor_numel(ev->golden), rd_tensor_numel(ev->single));
    if (!ev->materialized)
        return RD_OK;
    c->materialized++;
    if (strcmp(ev->name, "relu_out") == 0) {
        double worst = 0;
        for (int64_t i = 0; i < rd_tensor_numel(ev->entire); i++) {
            double d = fabs((double)((float *)ev->single->data)[i] - ((float *)ev->entire->data)[i]);
            worst = d > worst ? d : worst;
        }
        c->first_single_vs_entire = worst;
    }
    if (strcmp(ev->name, "out") == 0) {
        c->last_single_cos = rd_test_cosine(ev->single, ev->golden);
        rd_tensor_clone(&c->ref_out, ev->golden, err);
        rd_tensor_clone(&c->entire_out, ev->entire, err);
    }
    return RD_OK;
}

static void test_analyze(void)
{
    rd_model *m = st_conv_relu_gain_model(2, 2.0f, "sim_test.onnx");
    rd_sim *s = rd_test_sim(m, RD_PREC_INT8);
    rd_error err;
    rd_tensor x, ref, y;
    st_conv_input(&x, 2);
    rd_run_options ro = {.observer = st_set_range_from, .user = s, .observe_inputs = true};
    CU_ASSERT_EQUAL_FATAL(rd_model_run((rd_model *)rd_sim_model(s), &x, 1, &ro, &ref, 1, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s, &x, 1, NULL, &y, 1, &err), RD_OK);
    analyze_check c = {0};
    CU_ASSERT_EQUAL_FATAL(rd_sim_analyze(s, &x, 1, check_event, &c, &err), RD_OK);
    CU_ASSERT_EQUAL(c.events, 4); /* x, conv_out (fused), relu_out, out */
    CU_ASSERT_EQUAL(c.materialized, 3);
    CU_ASSERT_EQUAL(c.first_single_vs_entire, 0.0);
    CU_ASSERT(c.last_single_cos > 0.999);
    /* golden and entire are exactly what the plain runs give */
    CU_ASSERT_EQUAL(memcmp(c.ref_out.data, ref.data, rd_tensor_nbytes(&ref)), 0);
    CU_ASSERT_EQUAL(memcmp(c.entire_out.data, y.data, rd_tensor_nbytes(&y)), 0);
    rd_tensor_fini(&c.ref_out);
    rd_tensor_fini(&c.entire_out);
    rd_tensor_fini(&ref);
    rd_tensor_fini(&y);
    rd_tensor_fini(&x);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

/* The board dumped only the graph input: the first layer's single_sim exists and equals its single. */
typedef struct board_check {
    const rd_tensor *x;
    int x_value;
    int with_single_sim;
    double relu_diff;
} board_check;

static const rd_tensor *board_tensor(void *user, int value)
{
    board_check *b = user;
    return value == b->x_value ? b->x : NULL;
}

static rd_status check_board_event(void *user, const rd_sim_event *ev, rd_error *err)
{
    board_check *b = user;
    if (ev->single_sim) {
        b->with_single_sim++;
        if (strcmp(ev->name, "relu_out") == 0) {
            double worst = 0;
            for (int64_t i = 0; i < rd_tensor_numel(ev->single); i++) {
                double d = fabs((double)((float *)ev->single->data)[i] - ((float *)ev->single_sim->data)[i]);
                worst = d > worst ? d : worst;
            }
            b->relu_diff = worst;
        }
    }
    if (ev->node < 0)
        CU_ASSERT_PTR_EQUAL(ev->runtime, b->x);
    return RD_OK;
}

static void test_analyze_with_board(void)
{
    rd_model *m = st_conv_relu_gain_model(2, 2.0f, "sim_test.onnx");
    rd_sim *s = rd_test_sim(m, RD_PREC_INT8);
    rd_error err;
    rd_tensor x, ref;
    st_conv_input(&x, 2);
    rd_run_options ro = {.observer = st_set_range_from, .user = s, .observe_inputs = true};
    CU_ASSERT_EQUAL_FATAL(rd_model_run((rd_model *)rd_sim_model(s), &x, 1, &ro, &ref, 1, &err), RD_OK);
    rd_sim_tensor t;
    CU_ASSERT_EQUAL_FATAL(rd_sim_tensor_get(s, "x", &t, &err), RD_OK);
    board_check b = {.x = &x, .x_value = t.value, .relu_diff = -1};
    CU_ASSERT_EQUAL_FATAL(rd_sim_analyze_ex(s, &x, 1, check_board_event, &b, board_tensor, &b, &err), RD_OK);
    CU_ASSERT_EQUAL(b.with_single_sim, 2); /* conv_out (inner) and relu_out; out's input was not dumped */
    CU_ASSERT_EQUAL(b.relu_diff, 0.0);
    rd_tensor_fini(&ref);
    rd_tensor_fini(&x);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

static void test_create_errors(void)
{
    rd_model *m = st_conv_relu_gain_model(2, 1.0f, "sim_test.onnx");
    rd_sim *s = NULL;
    rd_error err;
    rd_sim_options so = {.precision = RD_PREC_INT8, .optimization_level = 4};
    CU_ASSERT_EQUAL(rd_sim_create(m, &so, &s, &err), RD_E_INVAL);
    so = (rd_sim_options){.precision = RD_PREC_INT16, .optimization_level = 3, .weight_bits = 5};
    CU_ASSERT_EQUAL(rd_sim_create(m, &so, &s, &err), RD_E_UNSUPPORTED);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "5-bit"));
    CU_ASSERT_STRING_EQUAL(rd_prec_name(RD_PREC_FP16), "float16");
    rd_model_destroy(m);
}

RD_TEST_REGISTER(register_sim)
{
    RD_SUITE("sim", {"fp16 overflow and rounding", test_fp16_overflow}, {"int8 and hybrid", test_int8},
             {"analyze: golden, entire, single", test_analyze},
             {"analyze with the board's tensors", test_analyze_with_board}, {"create errors", test_create_errors});
}

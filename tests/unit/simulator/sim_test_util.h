/*
 * sim_test_util.h: what the simulation tests (test_sim, test_sim_fault, test_sim_int16) share: a small
 * Conv -> Relu -> Mul model with its input, the one-sample calibration observer and a tensor's layer statistics.
 */
#ifndef RD_TEST_SIM_TEST_UTIL_H
#define RD_TEST_SIM_TEST_UTIL_H

#include "onnx_test_util.h"

#include <math.h>

/**
 * x [1, in_channels, 6, 6] -> Conv 3x3 (to 4 channels, pads 1, bias) -> Relu -> Mul by the scalar gain -> out,
 * loaded as name; NULL when it does not load. conv_out fuses into relu_out.
 */
static inline rd_model *st_conv_relu_gain_model(int64_t in_channels, float gain, const char *name)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, in_channels, 6, 6}, NULL);
    rd_tensor w, bias, g;
    rd_tensor_alloc(&w, RD_DT_F32, 4, (const int64_t[]){4, in_channels, 3, 3}, NULL);
    rd_tensor_alloc(&bias, RD_DT_F32, 1, (const int64_t[]){4}, NULL);
    rd_tensor_alloc(&g, RD_DT_F32, 0, NULL, NULL);
    for (int64_t i = 0; i < rd_tensor_numel(&w); i++)
        ((float *)w.data)[i] = (float)((i * 37 % 17) - 8) / 16.0f;
    for (int i = 0; i < 4; i++)
        ((float *)bias.data)[i] = 0.1f * (float)i;
    *(float *)g.data = gain;
    rd_onnx_add_initializer(b, "w", &w, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "b", &bias, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "gain", &g, RD_ONNX_RAW);
    rd_onnx_node *c = rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w", "b"}, 3,
                                       (const char *const[]){"conv_out"}, 1);
    rd_onnx_attr_ints(c, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"conv_out"}, 1, (const char *const[]){"relu_out"}, 1);
    rd_onnx_add_node(b, "Mul", "amp", (const char *const[]){"relu_out", "gain"}, 2, (const char *const[]){"out"}, 1);
    rd_onnx_add_output(b, "out", RD_DT_F32, -1, NULL, NULL);
    rd_tensor_fini(&w);
    rd_tensor_fini(&bias);
    rd_tensor_fini(&g);
    return ot_model_load(b, name);
}

/** The model's input: [1, channels, 6, 6] of 3 sin(0.37 i). */
static inline void st_conv_input(rd_tensor *x, int64_t channels)
{
    rd_tensor_alloc(x, RD_DT_F32, 4, (const int64_t[]){1, channels, 6, 6}, NULL);
    for (int64_t i = 0; i < rd_tensor_numel(x); i++)
        ((float *)x->data)[i] = sinf(0.37f * (float)i) * 3.0f;
}

/** An rd_observer_fn (user: the rd_sim) that sets every materialised tensor's range from a float32 run: what
    calibration on one sample does. */
static inline rd_status st_set_range_from(void *user, const rd_observed *ev, rd_error *err)
{
    rd_sim *s = user;
    if (ev->tensor->dtype != RD_DT_F32)
        return RD_OK;
    float lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < rd_tensor_numel(ev->tensor); i++) {
        float v = ((float *)ev->tensor->data)[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    rd_sim_tensor t;
    if (rd_sim_tensor_get(s, ev->name, &t, err) == RD_OK && t.materialized)
        return rd_sim_set_range(s, ev->name, lo, hi, err);
    return RD_OK;
}

/** The layer statistics of tensor name after a run; looking it up must succeed (a CUnit assertion). */
static inline rd_sim_layer_stats st_stats_of(rd_sim *s, const char *name)
{
    rd_sim_tensor t = {.value = -1};
    rd_error err;
    CU_ASSERT_EQUAL(rd_sim_tensor_get(s, name, &t, &err), RD_OK);
    rd_sim_layer_stats st = {0};
    if (t.value >= 0)
        rd_sim_layer_stats_get(s, t.value, &st);
    return st;
}

#endif

/* test_sim_fault.c: faults of the emulated board (rd_sim_add_fault) change exactly the named tensor and,
 * through it, what comes after. */
#include "sim_test_util.h"
#include "calibrated_sim.h"
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tensors of one run, by name. */
#define MAX_SEEN 8
typedef struct seen {
    rd_sim *s;
    int n;
    char names[MAX_SEEN][32];
    rd_tensor t[MAX_SEEN];
} seen;

static rd_status keep_tensor(void *user, const rd_observed *ev, rd_error *err)
{
    seen *r = user;
    if (r->n == MAX_SEEN || ev->tensor->dtype != RD_DT_F32)
        return RD_OK;
    snprintf(r->names[r->n], sizeof r->names[r->n], "%s", ev->name);
    return rd_tensor_clone(&r->t[r->n++], ev->tensor, err);
}

static const rd_tensor *seen_get(const seen *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->names[i], name) == 0)
            return &r->t[i];
    return NULL;
}

static void seen_fini(seen *r)
{
    for (int i = 0; i < r->n; i++)
        rd_tensor_fini(&r->t[i]);
    r->n = 0;
}

static rd_sim *make_sim(const rd_model *m, const rd_tensor *x)
{
    rd_sim *s = rd_test_sim(m, RD_PREC_INT8);
    rd_error err;
    rd_run_options calib = {.observer = st_set_range_from, .user = s, .observe_inputs = true};
    CU_ASSERT_EQUAL_FATAL(rd_model_run((rd_model *)rd_sim_model(s), x, 1, &calib, NULL, 0, &err), RD_OK);
    return s;
}

static void run_sim(rd_sim *s, const rd_tensor *x, seen *out)
{
    rd_error err;
    out->s = s;
    rd_run_options ro = {.observer = keep_tensor, .user = out, .observe_inputs = true};
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s, x, 1, &ro, NULL, 0, &err), RD_OK);
}

/* The tensors of a run on a fresh simulation, with no fault. */
static void run_clean(const rd_model *m, const rd_tensor *x, seen *out)
{
    rd_sim *s = make_sim(m, x);
    run_sim(s, x, out);
    rd_sim_destroy(s);
}

/* The conv-relu-gain model with `channels` channels; its input into x. */
static rd_model *fault_model(int64_t channels, rd_tensor *x)
{
    st_conv_input(x, channels);
    return st_conv_relu_gain_model(channels, 2.0f, "fault_test.onnx");
}

static bool same(const rd_tensor *a, const rd_tensor *b)
{
    return a && b && rd_tensor_numel(a) == rd_tensor_numel(b) &&
           memcmp(a->data, b->data, (size_t)rd_tensor_numel(a) * sizeof(float)) == 0;
}

static void test_fault_names(void)
{
    rd_error err;
    for (int k = 0; k < RD_FAULT_COUNT; k++) {
        rd_sim_fault_kind got;
        CU_ASSERT_EQUAL(rd_sim_fault_parse(rd_sim_fault_name((rd_sim_fault_kind)k), &got, &err), RD_OK);
        CU_ASSERT_EQUAL(got, k);
    }
    rd_sim_fault_kind got;
    CU_ASSERT_EQUAL(rd_sim_fault_parse("gain2", &got, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "swap-channels"));
    CU_ASSERT_STRING_EQUAL(rd_sim_fault_name(RD_FAULT_COUNT), "unknown");
}

static void test_fault_refused(void)
{
    rd_tensor x;
    rd_model *m = fault_model(2, &x);
    rd_sim *s = make_sim(m, &x);
    rd_error err;
    CU_ASSERT_EQUAL(rd_sim_add_fault(s, "relu_oot", RD_FAULT_GAIN, &err), RD_E_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "relu_out"));
    CU_ASSERT_EQUAL(rd_sim_add_fault(s, "conv_out", RD_FAULT_GAIN, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "put the fault on 'relu_out'"));
    CU_ASSERT_EQUAL(rd_sim_add_fault(s, "w", RD_FAULT_GAIN, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(rd_sim_add_fault(s, "relu_out", RD_FAULT_COUNT, &err), RD_E_INVAL);
    /* nothing was added: the run is the plain simulation */
    seen a = {0}, b = {0};
    run_sim(s, &x, &a);
    run_clean(m, &x, &b);
    CU_ASSERT_TRUE(same(seen_get(&a, "out"), seen_get(&b, "out")));
    seen_fini(&a);
    seen_fini(&b);
    rd_sim_destroy(s);
    rd_tensor_fini(&x);
    rd_model_destroy(m);
}

/* The model run clean and with one fault on relu_out: both runs' tensors, the faulty simulation and relu_out
   there (its parameters; a and b its values in the clean and the faulty run). */
typedef struct fault_pair {
    seen clean, faulty;
    rd_sim *s;
    rd_sim_tensor t;
    const rd_tensor *a, *b;
} fault_pair;

/* Runs the pair for kind; checks x unchanged, relu_out and out changed. */
static void run_pair(rd_sim_fault_kind kind, fault_pair *fp)
{
    memset(fp, 0, sizeof *fp);
    seen *clean = &fp->clean, *faulty = &fp->faulty;
    rd_tensor x;
    rd_model *m = fault_model(2, &x);
    run_clean(m, &x, clean);
    rd_sim *s = make_sim(m, &x);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sim_add_fault(s, "relu_out", kind, &err), RD_OK);
    rd_sim_tensor t;
    CU_ASSERT_EQUAL(rd_sim_tensor_get(s, "relu_out", &t, &err), RD_OK);
    CU_ASSERT_TRUE(rd_sim_has_fault(s, t.value, kind));
    CU_ASSERT_FALSE(rd_sim_has_fault(s, t.value, (rd_sim_fault_kind)((kind + 1) % RD_FAULT_COUNT)));
    run_sim(s, &x, faulty);
    CU_ASSERT_TRUE(same(seen_get(clean, "x"), seen_get(faulty, "x")));
    CU_ASSERT_FALSE(same(seen_get(clean, "relu_out"), seen_get(faulty, "relu_out")));
    CU_ASSERT_FALSE(same(seen_get(clean, "out"), seen_get(faulty, "out")));
    fp->s = s;
    fp->t = t;
    fp->a = seen_get(clean, "relu_out");
    fp->b = seen_get(faulty, "relu_out");
    rd_tensor_fini(&x);
    rd_model_destroy(m);
}

static void fault_pair_fini(fault_pair *fp)
{
    seen_fini(&fp->clean);
    seen_fini(&fp->faulty);
    rd_sim_destroy(fp->s);
}

static void test_fault_gain(void)
{
    fault_pair fp;
    run_pair(RD_FAULT_GAIN, &fp);
    const rd_sim_tensor t = fp.t;
    const rd_tensor *a = fp.a, *b = fp.b;
    for (int64_t i = 0; a && b && i < rd_tensor_numel(a); i++) {
        float va = ((float *)a->data)[i], vb = ((float *)b->data)[i];
        double code = (double)vb / t.scale + t.zero_point;
        CU_ASSERT(fabs(code - nearbyint(code)) < 1e-3); /* on the int8 grid */
        CU_ASSERT(vb <= t.max + t.scale / 2);           /* clamped to it */
        if (va * 1.25f < t.max)
            CU_ASSERT(fabsf(vb - va * 1.25f) <= t.scale * 0.5001f); /* 1.25x, requantized */
    }
    fault_pair_fini(&fp);
}

static void test_fault_saturate(void)
{
    fault_pair fp;
    run_pair(RD_FAULT_SATURATE, &fp);
    const rd_sim_tensor t = fp.t;
    const rd_tensor *a = fp.a, *b = fp.b;
    float hi = t.scale * (float)(127 - t.zero_point) / 2;
    int clamped = 0;
    for (int64_t i = 0; a && b && i < rd_tensor_numel(a); i++) {
        float va = ((float *)a->data)[i], vb = ((float *)b->data)[i];
        CU_ASSERT(vb <= hi + t.scale * 0.5001f); /* half the range, back on the grid */
        if (va < hi - t.scale)
            CU_ASSERT_EQUAL(vb, va); /* small values (zeros included) untouched */
        clamped += vb < va;
    }
    CU_ASSERT(clamped > 0);
    fault_pair_fini(&fp);
}

static void test_fault_swap(void)
{
    fault_pair fp;
    run_pair(RD_FAULT_SWAP_CHANNELS, &fp);
    const rd_tensor *a = fp.a, *b = fp.b;
    CU_ASSERT_FATAL(a && b);
    const float *pa = a->data, *pb = b->data;
    CU_ASSERT_EQUAL(memcmp(pb, pa + 36, 36 * sizeof(float)), 0);
    CU_ASSERT_EQUAL(memcmp(pb + 36, pa, 36 * sizeof(float)), 0);
    CU_ASSERT_EQUAL(memcmp(pb + 72, pa + 72, 72 * sizeof(float)), 0);
    fault_pair_fini(&fp);
}

static void test_fault_fp16(void)
{
    fault_pair fp;
    run_pair(RD_FAULT_FP16, &fp);
    const rd_sim_tensor t = fp.t;
    CU_ASSERT_EQUAL(t.precision, RD_PREC_INT8); /* the model still says int8: the board got it wrong */
    const rd_tensor *a = fp.a, *b = fp.b;
    int off_grid = 0;
    for (int64_t i = 0; a && b && i < rd_tensor_numel(a); i++) {
        float va = ((float *)a->data)[i], vb = ((float *)b->data)[i];
        CU_ASSERT_EQUAL(rd_f16_to_f32(rd_f32_to_f16(vb)), vb);
        CU_ASSERT(fabsf(va - vb) <= t.scale * 0.5001f + fabsf(vb) * 1e-3f); /* slightly different */
        double code = (double)vb / t.scale + t.zero_point;
        off_grid += fabs(code - nearbyint(code)) > 1e-2;
    }
    CU_ASSERT(off_grid > 0);
    fault_pair_fini(&fp);
}

static void test_fault_swap_one_channel(void)
{
    rd_tensor x;
    rd_model *m = fault_model(1, &x);
    rd_sim *s = make_sim(m, &x);
    rd_error err;
    CU_ASSERT_EQUAL(rd_sim_add_fault(s, "x", RD_FAULT_SWAP_CHANNELS, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_sim_run(s, &x, 1, NULL, NULL, 0, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "needs 2 channels"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'x'"));
    rd_sim_destroy(s);
    rd_tensor_fini(&x);
    rd_model_destroy(m);
}

RD_TEST_REGISTER(sim_fault)
{
    RD_SUITE("sim_fault", {"names", test_fault_names}, {"refused", test_fault_refused}, {"gain", test_fault_gain},
             {"saturate", test_fault_saturate}, {"swap_channels", test_fault_swap}, {"fp16", test_fault_fp16},
             {"swap_one_channel", test_fault_swap_one_channel});
}

/* test_diagnose_evidence.c: the BatchNormalization fit of `hybrid diagnose` on models with known
 * statistics. */
#include "diagnose_evidence.h"
#include "rd_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void add_f32(rd_onnx_builder *b, const char *name, int rank, const int64_t *dims, const float *v)
{
    rd_tensor t;
    rd_tensor_alloc(&t, RD_DT_F32, rank, dims, NULL);
    memcpy(t.data, v, rd_tensor_nbytes(&t));
    rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
    rd_tensor_fini(&t);
}

/*
 * x [1,3,4,4] -> Conv "c" (output 0 = channel R, output 1 = channel B) -> `next`
 * ("BatchNormalization", trained on R ~ 0.5 +- 0.1 and B ~ -0.5 +- 0.3, or "Relu") -> y.
 * mean_input: the BN mean is a graph input.
 */
static rd_model *build(const char *next, bool mean_input)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 4, 4}, NULL);
    add_f32(b, "w", 4, (const int64_t[]){2, 3, 1, 1}, (const float[]){1, 0, 0, 0, 0, 1});
    const int64_t two[1] = {2};
    add_f32(b, "scale", 1, two, (const float[]){1, 1});
    add_f32(b, "bias", 1, two, (const float[]){0, 0});
    add_f32(b, "var", 1, two, (const float[]){0.01f - 1e-5f, 0.09f - 1e-5f});
    if (mean_input)
        rd_onnx_add_input(b, "mean", RD_DT_F32, 1, two, NULL);
    else
        add_f32(b, "mean", 1, two, (const float[]){0.5f, -0.5f});
    rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w"}, 2, (const char *const[]){"c"}, 1);
    if (strcmp(next, "Relu") == 0)
        rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"c"}, 1, (const char *const[]){"y"}, 1);
    else
        rd_onnx_add_node(b, "BatchNormalization", "bn", (const char *const[]){"c", "scale", "bias", "mean", "var"}, 5,
                         (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 4, (const int64_t[]){1, 2, 4, 4}, NULL);
    void *buf = NULL;
    size_t len = 0;
    rd_model *m = NULL;
    rd_error err = {0};
    CU_ASSERT_EQUAL(rd_onnx_builder_write(b, &buf, &len, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_model_load_mem(buf, len, "bn_test", NULL, NULL, &m, &err), RD_OK);
    free(buf);
    rd_onnx_builder_destroy(b);
    return m;
}

/* R = 0.5 +- 0.1 and B = -0.5 +- 0.3 (alternating), G anything; swap: R and B exchanged; then *
 * gain */
static void make_input(rd_tensor *x, bool swap, float gain)
{
    rd_tensor_alloc(x, RD_DT_F32, 4, (const int64_t[]){1, 3, 4, 4}, NULL);
    float *p = x->data;
    for (int k = 0; k < 16; k++) {
        float s = k % 2 ? 1.0f : -1.0f;
        float r = 0.5f + 0.1f * s, bl = -0.5f + 0.3f * s;
        p[(swap ? 2 : 0) * 16 + k] = gain * r;
        p[16 + k] = gain * 0.25f;
        p[(swap ? 0 : 2) * 16 + k] = gain * bl;
    }
}

static double fit_of(rd_model *m, const an_diag_bn_site *site, bool swap, float gain)
{
    rd_tensor x;
    make_input(&x, swap, gain);
    double fit = NAN;
    rd_error err = {0};
    CU_ASSERT_EQUAL(an_diag_bn_fit(m, site, &x, 1, &fit, &err), RD_OK);
    rd_tensor_fini(&x);
    return fit;
}

static void test_bn_fit(void)
{
    rd_model *m = build("BatchNormalization", false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    an_diag_bn_site site;
    CU_ASSERT_FATAL(an_diag_bn_find(m, 0, &site));
    CU_ASSERT_STRING_EQUAL(site.conv_name, "c");
    CU_ASSERT_EQUAL(site.n_ch, 2);
    double right = fit_of(m, &site, false, 1.0f), swapped = fit_of(m, &site, true, 1.0f),
           scaled = fit_of(m, &site, false, 128.0f);
    /* matching statistics fit exactly; KL(N(-0.5, 0.09) || N(0.5, 0.01)) etc. are tens of nats */
    CU_ASSERT(right < 1e-3);
    CU_ASSERT(swapped > 10.0);
    CU_ASSERT(scaled > 1000.0);
    /* every BatchNormalization: the same single layer here */
    rd_tensor x;
    make_input(&x, false, 1.0f);
    double all = NAN;
    size_t layers = 0;
    rd_error err = {0};
    CU_ASSERT_EQUAL(an_diag_bn_fit_all(m, &x, 1, &all, &layers, &err), RD_OK);
    CU_ASSERT_EQUAL(layers, 1);
    CU_ASSERT(all < 1e-3);
    rd_tensor_fini(&x);
    rd_model_destroy(m);
}

static void test_bn_site_missing(void)
{
    an_diag_bn_site site;
    rd_model *m = build("Relu", false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_FALSE(an_diag_bn_find(m, 0, &site)); /* no BatchNormalization: mean/std cannot be checked */
    rd_model_destroy(m);
    m = build("BatchNormalization", true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_FALSE(an_diag_bn_find(m, 0, &site)); /* statistics that are not constants are no evidence */
    rd_model_destroy(m);
}

RD_TEST_REGISTER(diagnose_evidence)
{
    RD_SUITE("diagnose_evidence", {"BatchNormalization fit: right, R/B swapped, unnormalised", test_bn_fit},
             {"no Conv + BatchNormalization site", test_bn_site_missing});
}

/*
 * test_nonfinite.c: FP16 overflow everywhere and NaN/Inf as findings (issue 12 item 7). The regression of
 * issue 16 defect 6: a constant of 1e6 multiplied in made every float16 cosine NaN while the report said
 * "findings: none"; now the constant, the layer reading it and its magnitude are named, and the NaN/Inf
 * with its cause. Also NaN/Inf in the golden (a NaN input, a division by zero) and on the board.
 */
#include "accuracy.h"
#include "cli_capture.h"
#include "rd_test.h"
#include "paths_in.h"
#include "text_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* x [1,2,4,4] -> Conv (2x2x1x1) -> c -> op(c, k) -> y -> Relu -> z. */
static void write_model(const char *path, const char *op, const float *k, int k_n)
{
    rd_error err;
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 2, 4, 4}, NULL);
    float w[4] = {0.5f, -0.25f, 0.75f, 1.0f};
    rd_tensor kt = {.dtype = RD_DT_F32, .rank = k_n == 1 ? 0 : 4, .dims = {1, 2, 1, 1}, .data = (void *)k};
    rd_tensor wt = {.dtype = RD_DT_F32, .rank = 4, .dims = {2, 2, 1, 1}, .data = w};
    rd_onnx_add_initializer(b, "big", &kt, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "w", &wt, RD_ONNX_RAW);
    rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w"}, 2, (const char *const[]){"c"}, 1);
    rd_onnx_add_node(b, op, "scale", (const char *const[]){"c", "big"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"y"}, 1, (const char *const[]){"z"}, 1);
    rd_onnx_add_output(b, "z", RD_DT_F32, 4, (const int64_t[]){1, 2, 4, 4}, NULL);
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_save(b, path, &err), RD_OK);
    rd_onnx_builder_destroy(b);
}

static void write_input(const char *path, bool with_nan)
{
    float x[32];
    for (int i = 0; i < 32; i++)
        x[i] = (float)((i * 7) % 11) / 10.0f - 0.3f;
    if (with_nan)
        x[5] = NAN;
    rd_tensor t = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, 2, 4, 4}, .data = x};
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_npy_save(path, &t, &err), RD_OK);
}

typedef struct fixture {
    char *dir;
    char model[4200], input[4200], snap[4200];
} fixture;

static void fixture_init(fixture *f, const char *tag, const char *op, const float *k, int k_n, bool nan_input)
{
    f->dir = rd_test_tmpdir(tag);
    rd_test_paths_in(f->dir, sizeof f->input, f->model, "model.onnx", f->input, "x.npy", f->snap, "snap", NULL);
    write_model(f->model, op, k, k_n);
    write_input(f->input, nan_input);
}

/* Issue 16 defect 6: 1e6 multiplied in, analysed in float16. */
static void test_regression_16_6_fp16_constant(void)
{
    fixture f;
    const float big = 1e6f;
    fixture_init(&f, "nonfinite-const", "Mul", &big, 1, false);
    rd_cli_result o = rd_test_cli("accuracy", f.model, "-i", f.input, "--input-layout", "nchw", "--dtype", "float16",
                                  "-o", f.snap, NULL);
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NULL(strstr(o.out, "findings: none"));
    RD_ASSERT_HAS_TEXTS(o.out, "FP16 overflow in constant 'big', read by 'scale' (Mul)", "max |value| 1e+06 > 65504",
                        "NaN/Inf in the simulator from 'y'", "float16 overflow of a constant");
    /* the table prints RKNN's nan, never a number, for those rows */
    CU_ASSERT_PTR_NOT_NULL(strstr(o.out, "[Mul] y"));
    CU_ASSERT_PTR_NOT_NULL(strstr(strstr(o.out, "[Mul] y"), "nan | nan"));
    rd_test_cli_free(&o);
    /* report.json: the finding kind and the counts */
    char path[4400];
    snprintf(path, sizeof path, "%s/report.json", f.snap);
    size_t len = 0;
    char *json = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    RD_ASSERT_HAS_TEXTS(json, "\"kind\":\t\"nonfinite\"", "\"ref_inf\"");
    free(json);
    rd_result back;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_report_json_load(path, &back, &err), RD_OK);
    bool counted = false;
    for (size_t i = 0; i < back.n_layers; i++)
        if (strcmp(back.layers[i].name, "y") == 0)
            counted = back.layers[i].groups[RD_GROUP_SIM_ENTIRE].mean.inf > 0;
    CU_ASSERT(counted);
    rd_result_fini(&back);
    /* the output gate fails on a NaN cosine */
    o = rd_test_cli("accuracy", f.model, "-i", f.input, "--input-layout", "nchw", "--dtype", "float16", "-o", f.snap,
                    "--fail-under-cos", "0.5", "--quiet", NULL);
    CU_ASSERT_EQUAL(o.code, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "gate failed"));
    rd_test_cli_free(&o);
    /* run --precision fp16 says it too */
    o = rd_test_cli("run", f.model, "-i", f.input, "-p", "fp16", "--quiet", NULL);
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "warning: FP16 overflow in constant 'big'"));
    rd_test_cli_free(&o);
    /* the same model in int8: the constant is quantized with the layer, no float16 overflow named */
    o = rd_test_cli("accuracy", f.model, "-i", f.input, "--input-layout", "nchw", "--dtype", "w8a8", "-o", f.snap,
                    "--quiet", NULL);
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NULL(strstr(o.out, "FP16 overflow in constant"));
    rd_test_cli_free(&o);
    free(f.dir);
}

/* NaN in the sample itself: the golden holds it from the input row on; one finding, its cause the input. */
static void test_golden_nan_input(void)
{
    fixture f;
    const float gain = 2.0f;
    fixture_init(&f, "nonfinite-input", "Mul", &gain, 1, true);
    rd_cli_result o = rd_test_cli("accuracy", f.model, "-i", f.input, "--input-layout", "nchw", "--dtype", "float16",
                                  "-o", f.snap, "--quiet", NULL);
    CU_ASSERT_EQUAL(o.code, 0);
    RD_ASSERT_HAS_TEXTS(o.out, "NaN/Inf in the float32 reference (golden) from 'x'", "the input itself holds them");
    CU_ASSERT_PTR_NULL(strstr(o.out, "NaN/Inf in the simulator")); /* inherited, not named twice */
    rd_test_cli_free(&o);
    free(f.dir);
}

/* A division by a constant holding 0: inf in the float32 model itself. */
static void test_golden_division_by_zero(void)
{
    fixture f;
    const float k[2] = {0.5f, 0.0f};
    fixture_init(&f, "nonfinite-div", "Div", k, 2, false);
    rd_cli_result o = rd_test_cli("accuracy", f.model, "-i", f.input, "--input-layout", "nchw", "--dtype", "float16",
                                  "-o", f.snap, "--quiet", NULL);
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.out, "NaN/Inf in the float32 reference (golden) from 'y'"));
    if (!strstr(o.out, "division by zero"))
        fprintf(stderr, "%s\n", o.out);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.out, "division by zero"));
    rd_test_cli_free(&o);
    free(f.dir);
}

/* A layer row with the given NaN counts in group g (ref: the golden's). */
static void layer_with(rd_result *r, const char *name, const char *op, rd_group_id g, int64_t nan, int64_t ref_nan)
{
    rd_layer_result *l;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_result_add_layer(r, name, op, &l, &err), RD_OK);
    for (int k = 0; k < RD_GROUP_COUNT; k++) {
        l->groups[k].present = k == RD_GROUP_SIM_ENTIRE || k == (int)g;
        l->groups[k].mean.count = 8;
    }
    l->groups[g].mean.nan = nan;
    l->groups[RD_GROUP_SIM_ENTIRE].mean.ref_nan = ref_nan;
}

static size_t count_kind(const rd_result *r, rd_finding_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_findings; i++)
        n += r->findings[i].kind == k;
    return n;
}

/* Only the board holds NaN: named from the board's dumps; the simulator's own NaN later is its own. */
static void test_board_and_inheritance(void)
{
    rd_result r;
    rd_result_init(&r);
    rd_error err;
    layer_with(&r, "x", "Input", RD_GROUP_RT_ENTIRE, 0, 0);
    layer_with(&r, "a", "Conv", RD_GROUP_RT_ENTIRE, 3, 0);
    layer_with(&r, "b", "Relu", RD_GROUP_RT_ENTIRE, 3, 0);
    CU_ASSERT_EQUAL(an_findings_numeric(&r, NULL, &err), RD_OK);
    CU_ASSERT_EQUAL(count_kind(&r, RD_FIND_NONFINITE), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.findings[0].title, "NaN/Inf in the board's dumps from 'a' (layer 1)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.findings[0].evidence, "3 NaN and 0 Inf of 8 values"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.findings[0].evidence, "2 layers hold NaN/Inf"));
    rd_result_fini(&r);
    /* the simulator from 'a', the board from 'b': the board's is inherited from the simulator's */
    rd_result_init(&r);
    layer_with(&r, "a", "Conv", RD_GROUP_SIM_SINGLE, 1, 0);
    r.layers[0].groups[RD_GROUP_SIM_ENTIRE].mean.nan = 1;
    layer_with(&r, "b", "Relu", RD_GROUP_RT_ENTIRE, 2, 0);
    CU_ASSERT_EQUAL(an_findings_numeric(&r, NULL, &err), RD_OK);
    CU_ASSERT_EQUAL(count_kind(&r, RD_FIND_NONFINITE), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.findings[0].title, "in the simulator from 'a'"));
    rd_result_fini(&r);
    /* nothing non-finite: no finding */
    rd_result_init(&r);
    layer_with(&r, "a", "Conv", RD_GROUP_SIM_SINGLE, 0, 0);
    CU_ASSERT_EQUAL(an_findings_numeric(&r, NULL, &err), RD_OK);
    CU_ASSERT_EQUAL(r.n_findings, 0);
    rd_result_fini(&r);
}

RD_TEST_REGISTER(register_nonfinite)
{
    RD_SUITE("nonfinite", {"regression 16.6: a 1e6 constant in float16 is named", test_regression_16_6_fp16_constant},
             {"NaN in the input: golden, once", test_golden_nan_input},
             {"division by zero in the float32 model", test_golden_division_by_zero},
             {"board NaN and inheritance between sources", test_board_and_inheritance});
}

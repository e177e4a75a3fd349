/* test_cmd_accuracy.c: `rknn-diag accuracy` on the demo model, driven in-process. */
#include "rd_test.h"
#include "files_in.h"
#include "text_check.h"
#include "paths_in.h"
#include "cli_capture.h"
#include "cli_expect.h"
#include "rknn_diag/analyzer.h"
#include "rknn_diag/reports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_fp16_overflow_is_first_finding(void)
{
    char *dir = rd_test_demo_dir("acc-fp16");
    char model[4200], input[4200], snap[4200];
    rd_test_paths_in(dir, sizeof input, model, "demo.onnx", input, "image.npy", snap, "snap", NULL);
    rd_cli_result r = rd_test_cli("accuracy", model, "--inputs", input, "--input-layout", "nchw", "--dtype", "float16",
                                  "-o", snap, NULL);
    if (r.code != 0)
        fprintf(stderr, "%s", r.errs);
    CU_ASSERT_EQUAL(r.code, 0);
    const char *first = strstr(r.out, "findings:");
    CU_ASSERT_PTR_NOT_NULL_FATAL(first);
    CU_ASSERT_PTR_NOT_NULL(strstr(first, "FP16 overflow in 'amplified'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "[exDataConvert] image_float16"));
    rd_test_cli_free(&r);
    /* the snapshot: RKNN's layout plus our reports */
    RD_ASSERT_ALL_IN(snap, "error_analysis.txt", "report.json", "report.html", "map_name_to_file.txt",
                     "golden/relu1_out.txt", "golden/relu1_out.npy", "simulator/probs.npy");
    /* what we wrote reads back as an RKNN table */
    char path[4400];
    snprintf(path, sizeof path, "%s/error_analysis.txt", snap);
    rd_result back;
    rd_result_init(&back);
    rd_error err;
    CU_ASSERT_EQUAL(rd_rknn_txt_load(path, &back, NULL, &err), RD_OK);
    CU_ASSERT(back.n_layers >= 10);
    rd_result_fini(&back);
    snprintf(path, sizeof path, "%s/report.json", snap);
    rd_result_init(&back);
    CU_ASSERT_EQUAL(rd_report_json_load(path, &back, &err), RD_OK);
    CU_ASSERT(back.n_findings >= 1);
    CU_ASSERT_EQUAL(back.findings[0].kind, RD_FIND_FP16_OVERFLOW);
    rd_result_fini(&back);
    free(dir);
}

static void test_int8_gate_and_no_txt(void)
{
    char *dir = rd_test_demo_dir("acc-int8");
    char model[4200], input[4200], snap[4200];
    rd_test_paths_in(dir, sizeof input, model, "demo.onnx", input, "image.npy", snap, "snap", NULL);
    /* an impossible bound fails the gate with exit 1 and names the output */
    RD_CLI_EXPECT(1, NULL, RD_TEXTS("gate failed", "probs", "calibrating on the analysed input"), "accuracy", model,
                  "-i", input, "--input-layout=nchw", "--method", "layer", "-o", snap, "--no-txt", "--fail-under-cos",
                  "0.999999", "--quiet");
    CU_ASSERT_FALSE(rd_test_exists_in(snap, "golden/relu1_out.txt"));
    CU_ASSERT(rd_test_exists_in(snap, "golden/relu1_out.npy"));
    /* a reachable bound passes */
    RD_CLI_EXPECT(0, NULL, NULL, "accuracy", model, "-i", input, "--input-layout=nchw", "-o", snap, "--fail-under-cos",
                  "0.9", "--gate", "single", "--quiet");
    free(dir);
}

static void test_usage_errors(void)
{
    RD_CLI_EXPECT(2, NULL, NULL, "accuracy");
    RD_CLI_EXPECT(0, RD_TEXTS("--fail-under-cos"), NULL, "accuracy", "--help");
    char *dir = rd_test_demo_dir("acc-usage");
    char model[4200];
    snprintf(model, sizeof model, "%s/demo.onnx", dir);
    rd_cli_result r = rd_test_cli("accuracy", model, NULL); /* nothing to analyse */
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "--inputs"));
    rd_test_cli_free(&r);
    RD_CLI_EXPECT(2, NULL, NULL, "accuracy", model, "--gate", "sideways");
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("/nonexistent.npy"), "accuracy", model, "-i", "/nonexistent.npy");
    r = rd_test_cli("accuracy", model, "-i", "x.npy", "--dtype", "w4a16", NULL);
    CU_ASSERT(r.code == 2 || r.code == 3);
    rd_test_cli_free(&r);
    free(dir);
}

RD_TEST_REGISTER(register_cmd_accuracy)
{
    RD_SUITE("cmd_accuracy", {"fp16 overflow is the first finding", test_fp16_overflow_is_first_finding},
             {"int8: gate, --no-txt", test_int8_gate_and_no_txt}, {"usage errors", test_usage_errors});
}

/*
 * test_int16_shared.c: the int16 dtypes on ../shared models: ultraface_rfb320's outputs at w8a8, w8a16,
 * w4a16, w16a16i, w16a16i_dfp and float16 against the FP32 reference (calibrated on its two photos), and mnist8's
 * top-1 with `eval --dtype w16a16i` (docs/numerics.md, "INT16").
 */
#include "cli_capture.h"
#include "mnist8_eval.h"
#include "mnist8_eval_run.h"
#include "rd_test.h"
#include "text_check.h"
#include "tensor_check.h"
#include "rknn_diag/analyzer.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D_FP32, D_INT8, D_W8A16, D_W16, D_DFP, D_FP16, D_W4, N_D };
static const char *const dtypes[N_D] = {"fp32", "int8", "w8a16", "w16a16i", "w16a16i_dfp", "fp16", "w4a16"};
static const char *const platforms[N_D] = {"rv1106", "rv1106", "rk3562", "rv1106", "rv1106", "rv1106", "rk3576"};

static void test_ultraface(void)
{
    const char *shared = rd_test_shared_dir();
    char *tmp = rd_test_tmpdir("int16_ultraface");
    char model[4096], ds[4300], in[2][4096];
    snprintf(model, sizeof model, "%s/models/ultraface_rfb320/model.onnx", shared);
    snprintf(in[0], sizeof in[0], "%s/models/ultraface_rfb320/inputs/astronaut.npy", shared);
    snprintf(in[1], sizeof in[1], "%s/models/ultraface_rfb320/inputs/chelsea.npy", shared);
    snprintf(ds, sizeof ds, "%s/dataset.txt", tmp);
    FILE *f = fopen(ds, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "%s\n%s\n", in[0], in[1]);
    fclose(f);
    for (int k = 0; k < 2; k++) {
        double err[N_D][2] = {{0}};
        rd_tensor ref[2];
        for (int d = 0; d < N_D; d++) {
            char dir[4400], inarg[4200];
            snprintf(dir, sizeof dir, "%s/%s_%d", tmp, dtypes[d], k);
            snprintf(inarg, sizeof inarg, "input=%s", in[k]);
            char *argv[] = {"rknn-diag",
                            "run",
                            model,
                            "-i",
                            inarg,
                            "-p",
                            (char *)dtypes[d],
                            "--dataset",
                            ds,
                            "--input-layout",
                            "nchw",
                            "--platform",
                            (char *)platforms[d],
                            "--outputs-only",
                            "-q",
                            "-o",
                            dir,
                            NULL};
            CU_ASSERT_EQUAL_FATAL(rd_test_cli_run(17, argv, NULL), 0);
            for (int o = 0; o < 2; o++) {
                char path[4500];
                snprintf(path, sizeof path, "%s/%d.npy", dir, o);
                rd_tensor t;
                rd_error e;
                CU_ASSERT_EQUAL_FATAL(rd_npy_load(path, &t, &e), RD_OK);
                if (d == D_FP32) {
                    ref[o] = t;
                    continue;
                }
                err[d][o] = 1 - rd_test_cosine(&ref[o], &t);
                rd_tensor_fini(&t);
            }
        }
        for (int o = 0; o < 2; o++) {
            fprintf(stderr,
                    "ultraface %s output %d, 1 - cos: w8a8 %.3g, w8a16 %.3g, w16a16i %.3g, w16a16i_dfp %.3g, "
                    "float16 %.3g, w4a16 %.3g\n",
                    k ? "chelsea" : "astronaut", o, err[D_INT8][o], err[D_W8A16][o], err[D_W16][o], err[D_DFP][o],
                    err[D_FP16][o], err[D_W4][o]);
            /* int16 is far closer than int8, and closer than float16 on this model */
            CU_ASSERT(err[D_W16][o] < err[D_INT8][o] / 100);
            CU_ASSERT(err[D_W16][o] < err[D_FP16][o]);
            CU_ASSERT(err[D_DFP][o] < err[D_FP16][o]);
            CU_ASSERT(err[D_W8A16][o] < err[D_INT8][o]);
            CU_ASSERT(err[D_W4][o] > err[D_INT8][o]); /* int4 weights: coarser than int8 ones */
            CU_ASSERT(err[D_W4][o] < 5e-3);           /* measured 1.9e-4 .. 1.2e-3 */
            rd_tensor_fini(&ref[o]);
        }
    }
    free(tmp);
}

static void test_mnist8_w16a16i(void)
{
    cJSON *root = rd_test_mnist8_eval(RD_TEXTS("--dtype", "w16a16i", "--platform", "rv1106", "--limit", "3000"));
    const double fp32 = rd_test_eval_top1(root, "fp32"), w16 = rd_test_eval_top1(root, "w16a16i");
    fprintf(stderr, "mnist8 top-1 over 3000: fp32 %.0f, w16a16i %.0f\n", fp32, w16);
    CU_ASSERT(fp32 > 2900);
    CU_ASSERT_EQUAL(w16, fp32); /* over all 10000 as well: 9933 each (docs/numerics.md) */
    cJSON_Delete(root);
}

RD_TEST_REGISTER(register_int16_shared)
{
    RD_SUITE("int16_shared", {"ultraface: w8a8, w8a16, w16a16i, dfp, float16 against fp32", test_ultraface},
             {"mnist8 eval --dtype w16a16i", test_mnist8_w16a16i});
}

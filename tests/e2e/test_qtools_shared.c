/*
 * test_qtools_shared.c: the checks on ../shared models: mnist8 evaluated with `rknn-diag eval`
 * (100 calibration digits, w8a8, normal, channel) and the QDQ exports of ultraface_rfb320 (both forms) and
 * mobilenet_v2 (integer form) run by our FP32 reference against the INT8 simulator.
 */
#include "cli_capture.h"
#include "mnist8_eval.h"
#include "mnist8_eval_run.h"
#include "rd_test.h"
#include "text_check.h"
#include "paths_in.h"
#include "tensor_check.h"
#include "rknn_diag/analyzer.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_mnist8_eval(void)
{
    cJSON *root = rd_test_mnist8_eval(RD_TEXTS("--dtype", "w8a8", "--algorithm", "normal", "--method", "channel"));
    double fp32 = rd_test_eval_top1(root, "fp32"), fp16 = rd_test_eval_top1(root, "fp16"),
           int8 = rd_test_eval_top1(root, "int8");
    fprintf(stderr, "mnist8 top-1 over 10000: fp32 %.0f, fp16 %.0f, int8 %.0f\n", fp32, fp16, int8);
    CU_ASSERT_EQUAL(fp32, 9933);
    /* the issue says 99.33 %; float16 gives 9932: near-tie digits flip with the rounding points (without
       the bias-Add fold it was 9934, ONNX Runtime agreeing: docs/numerics.md). Allow one digit either way. */
    CU_ASSERT(fabs(fp16 - 9933) <= 1);
    CU_ASSERT(int8 >= 9920);
    cJSON_Delete(root);
}

/* Calibrates MODEL on its two inputs, exports it (--integer when integer), and runs the export with our FP32
   reference against the INT8 simulator configured from the same cfg, on every input listed. Returns the
   smallest cosine over all outputs; *identical says whether every output was equal bit for bit. */
static double qdq_vs_sim(const char *name, const char *const *inputs, int n_inputs, int n_out, bool integer,
                         bool *identical)
{
    const char *shared = rd_test_shared_dir();
    char *dir = rd_test_tmpdir("qdq_shared");
    char model[4096], in[2][4096], ds[4200], cfg[4200], qdq[4200];
    snprintf(model, sizeof model, "%s/models/%s/model.onnx", shared, name);
    for (int k = 0; k < 2; k++)
        snprintf(in[k], sizeof in[k], "%s/models/%s/inputs/%s.npy", shared, name, inputs[k]);
    rd_test_paths_in(dir, sizeof cfg, ds, "dataset.txt", cfg, "m.quantization.cfg", qdq, "m_qdq.onnx", NULL);
    *identical = false;
    double worst = -2;
    FILE *f = fopen(ds, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "%s\n%s\n", in[0], in[1]);
    fclose(f);
    char *q_argv[] = {"rknn-diag", "quantize", model, "--dataset", ds, "--input-layout", "nchw", "-o", cfg, NULL};
    char *out = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_test_cli_run(9, q_argv, &out), 0);
    free(out);
    char *e_argv[] = {"rknn-diag", "export-qdq", model, "--cfg", cfg, "-o", qdq, integer ? "--integer" : NULL, NULL};
    CU_ASSERT_EQUAL_FATAL(rd_test_cli_run(integer ? 8 : 7, e_argv, &out), 0);
    free(out);
    /* our FP32 reference on the QDQ model against the INT8 simulator configured from the same cfg */
    rd_error err;
    rd_model *orig = NULL, *qm = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(model, NULL, &orig, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_model_load(qdq, NULL, &qm, &err), RD_OK);
    rd_sim *s = NULL;
    rd_sim_options so = {.precision = RD_PREC_INT8, .optimization_level = 3};
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(orig, &so, &s, &err), RD_OK);
    rd_qcfg q;
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_load(cfg, &q, &err), RD_OK);
    for (size_t i = 0; i < q.n_params; i++) {
        const rd_qcfg_param *p = &q.params[i];
        rd_sim_tensor t;
        CU_ASSERT_EQUAL(rd_sim_tensor_get(s, p->name, &t, &err), RD_OK);
        rd_status st = t.materialized ? rd_sim_set_qparams(s, p->name, p->scale[0], p->zero_point[0], &err)
                                      : rd_sim_set_weight_scales(s, p->name, p->scale, (int)p->n, &err);
        CU_ASSERT_EQUAL(st, RD_OK);
    }
    rd_qcfg_fini(&q);
    *identical = true;
    for (int i = 0; i < n_inputs; i++) {
        rd_tensor x, a[2], b[2];
        CU_ASSERT_EQUAL_FATAL(rd_npy_load(in[i], &x, &err), RD_OK);
        CU_ASSERT_EQUAL_FATAL(rd_sim_run(s, &x, 1, NULL, a, (size_t)n_out, &err), RD_OK);
        CU_ASSERT_EQUAL_FATAL(rd_model_run(qm, &x, 1, NULL, b, (size_t)n_out, &err), RD_OK);
        for (int k = 0; k < n_out; k++) {
            double c = rd_test_cosine(&a[k], &b[k]);
            bool same = rd_tensor_nbytes(&a[k]) == rd_tensor_nbytes(&b[k]) &&
                        memcmp(a[k].data, b[k].data, rd_tensor_nbytes(&a[k])) == 0;
            fprintf(stderr, "%s export-qdq%s, %s, output %d: cos %.7f%s\n", name, integer ? " --integer" : "",
                    inputs[i], k, c, same ? " (bit-identical)" : "");
            worst = worst < -1 || c < worst ? c : worst;
            *identical = *identical && same;
            rd_tensor_fini(&a[k]);
            rd_tensor_fini(&b[k]);
        }
        rd_tensor_fini(&x);
    }
    rd_sim_destroy(s);
    rd_model_destroy(qm);
    rd_model_destroy(orig);
    free(dir);
    return worst;
}

static const char *const ultraface_inputs[] = {"chelsea", "astronaut"};
static const char *const mobilenet_inputs[] = {"chelsea", "coffee"};

static void test_ultraface_qdq(void)
{
    bool same;
    CU_ASSERT(qdq_vs_sim("ultraface_rfb320", ultraface_inputs, 1, 2, false, &same) >= 0.9999);
}

/* The integer form reproduces the simulator's integer arithmetic exactly: equal bit for bit. */
static void test_ultraface_qdq_integer(void)
{
    bool same;
    CU_ASSERT(qdq_vs_sim("ultraface_rfb320", ultraface_inputs, 2, 2, true, &same) >= 0.9999);
    CU_ASSERT(same);
}

static void test_mobilenet_qdq_integer(void)
{
    bool same;
    CU_ASSERT(qdq_vs_sim("mobilenet_v2", mobilenet_inputs, 2, 1, true, &same) >= 0.9999);
    CU_ASSERT(same);
}

RD_TEST_REGISTER(register_qtools_shared)
{
    RD_SUITE("qtools_shared", {"mnist8 eval (w8a8, 100 calibration digits)", test_mnist8_eval},
             {"ultraface export-qdq vs int8 simulator", test_ultraface_qdq},
             {"ultraface export-qdq --integer vs int8 simulator", test_ultraface_qdq_integer},
             {"mobilenet_v2 export-qdq --integer vs int8 simulator", test_mobilenet_qdq_integer});
}

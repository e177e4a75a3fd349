/*
 * test_int16.c: int16 through the command line: run --precision w16a16i / w8a16 / w16a16i_dfp / int16,
 * quantize writing int16 parameters that reproduce the run bit for bit, a hybrid cfg with an int16 layer
 * that reloads and reproduces, accuracy --dtype w16a16i, w4a16, and the refusals (platform without the
 * dtype, group weights, gdq, export-qdq).
 */
#include "rd_test.h"
#include "small_convnet.h"
#include "paths_in.h"
#include "tensor_check.h"
#include "cli_capture.h"
#include "cli_expect.h"
#include "rknn_diag/analyzer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng_state = 777;
static float rnd(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

static void fill(rd_tensor *t, int rank, const int64_t *dims, float amp)
{
    rd_tensor_alloc(t, RD_DT_F32, rank, dims, NULL);
    for (int64_t i = 0; i < rd_tensor_numel(t); i++)
        ((float *)t->data)[i] = amp * rnd();
}

typedef struct paths {
    char *dir;
    char model[4200], ds[4200], in0[4200];
} paths;

static void setup(paths *p)
{
    p->dir = rd_test_tmpdir("int16");
    snprintf(p->model, sizeof p->model, "%s/model.onnx", p->dir);
    rd_test_write_small_convnet(p->model, rnd, false, false); /* conv2 without padding, short names */
    char list[1024] = "", path[4200];
    for (int k = 0; k < 4; k++) {
        rd_tensor x;
        fill(&x, 4, (const int64_t[]){1, 2, 6, 6}, 2.0f);
        snprintf(path, sizeof path, "%s/s%d.npy", p->dir, k);
        CU_ASSERT_EQUAL(rd_npy_save(path, &x, NULL), RD_OK);
        rd_tensor_fini(&x);
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "s%d.npy\n", k);
    }
    snprintf(p->ds, sizeof p->ds, "%s/dataset.txt", p->dir);
    FILE *f = fopen(p->ds, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(list, f);
    fclose(f);
    snprintf(p->in0, sizeof p->in0, "%s/s0.npy", p->dir);
}

/* The output of `run ... -o DIR` (0.npy) into t. */
static void load_out(const char *dir, rd_tensor *t)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/0.npy", dir);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_npy_load(path, t, &err), RD_OK);
}

static bool same_bits(const rd_tensor *a, const rd_tensor *b)
{
    return rd_tensor_nbytes(a) == rd_tensor_nbytes(b) && memcmp(a->data, b->data, rd_tensor_nbytes(a)) == 0;
}

/* run MODEL -i in0 -p P [--cfg CFG | --dataset DS] into dir; returns the exit code. */
static int run_to(const paths *p, const char *prec, const char *cfg, const char *platform, const char *dir,
                  char **errs_out)
{
    rd_cli_result r;
    if (cfg)
        r = rd_test_cli("run", p->model, "-i", p->in0, "-p", prec, "--cfg", cfg, "--input-layout", "nchw", "--platform",
                        platform, "--outputs-only", "-q", "-o", dir, NULL);
    else
        r = rd_test_cli("run", p->model, "-i", p->in0, "-p", prec, "--dataset", p->ds, "--input-layout", "nchw",
                        "--platform", platform, "--outputs-only", "-q", "-o", dir, NULL);
    int code = r.code;
    if (errs_out)
        *errs_out = strdup(r.errs ? r.errs : "");
    rd_test_cli_free(&r);
    return code;
}

static void test_w16a16i_quantize_reload(void)
{
    paths p;
    setup(&p);
    char cfg[4300], d_fp[4300], d_cal[4300], d_cfg[4300], d_i8[4300], d_fp16[4300];
    rd_test_paths_in(p.dir, sizeof cfg, cfg, "w16.quantization.cfg", d_fp, "d_fp32", d_cal, "d_cal", d_cfg, "d_cfg",
                     d_i8, "d_i8", d_fp16, "d_fp16", NULL);
    rd_cli_result r = rd_test_cli("quantize", p.model, "--dataset", p.ds, "--input-layout", "nchw", "--dtype",
                                  "w16a16i", "--platform", "rv1106", "-o", cfg, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "5 activations (5 int16)"));
    rd_test_cli_free(&r);
    rd_qcfg q;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_load(cfg, &q, &err), RD_OK);
    CU_ASSERT_EQUAL(q.n_layers, 0); /* every tensor is int16: that is the dtype, not a custom layer */
    const rd_qcfg_param *a = rd_qcfg_find(&q, "r"), *w = rd_qcfg_find(&q, "conv1.weight");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(a->dtype, RD_DT_I16);
    CU_ASSERT_EQUAL(a->zero_point[0], -32768); /* a Relu output */
    CU_ASSERT_EQUAL(w->dtype, RD_DT_I16);
    CU_ASSERT_EQUAL(w->n, 3);
    CU_ASSERT_EQUAL(w->scale[0], w->max[0] / 32767.0f);
    rd_qcfg_fini(&q);
    /* the calibrated run and the run from the file: the same bits */
    CU_ASSERT_EQUAL(run_to(&p, "w16a16i", NULL, "rv1106", d_cal, NULL), 0);
    CU_ASSERT_EQUAL(run_to(&p, "int16", cfg, "rv1106", d_cfg, NULL), 0);
    CU_ASSERT_EQUAL(run_to(&p, "fp32", NULL, "rv1106", d_fp, NULL), 0);
    CU_ASSERT_EQUAL(run_to(&p, "int8", NULL, "rv1106", d_i8, NULL), 0);
    CU_ASSERT_EQUAL(run_to(&p, "fp16", NULL, "rv1106", d_fp16, NULL), 0);
    rd_tensor y_cal, y_cfg, y_fp, y_i8, y_fp16;
    load_out(d_cal, &y_cal);
    load_out(d_cfg, &y_cfg);
    load_out(d_fp, &y_fp);
    load_out(d_i8, &y_i8);
    load_out(d_fp16, &y_fp16);
    CU_ASSERT_TRUE(same_bits(&y_cal, &y_cfg));
    const double c16 = rd_test_cosine(&y_fp, &y_cal), c8 = rd_test_cosine(&y_fp, &y_i8),
                 ch = rd_test_cosine(&y_fp, &y_fp16);
    fprintf(stderr, "cos against fp32: w8a8 %.9f, w16a16i %.9f, float16 %.9f\n", c8, c16, ch);
    CU_ASSERT(1 - c16 < (1 - c8) / 20);
    rd_tensor_fini(&y_cal);
    rd_tensor_fini(&y_cfg);
    rd_tensor_fini(&y_fp);
    rd_tensor_fini(&y_i8);
    rd_tensor_fini(&y_fp16);
    /* the other int16 dtypes run where the platform has them */
    char d[4300];
    snprintf(d, sizeof d, "%s/d_dfp", p.dir);
    CU_ASSERT_EQUAL(run_to(&p, "w16a16i_dfp", NULL, "rv1103", d, NULL), 0);
    snprintf(d, sizeof d, "%s/d_w8a16", p.dir);
    CU_ASSERT_EQUAL(run_to(&p, "w8a16", NULL, "rk3562", d, NULL), 0);
    /* dfp writes power-of-two scales with zero point 0, and they reload bit for bit */
    char cfg_dfp[4300], d2[4300];
    snprintf(cfg_dfp, sizeof cfg_dfp, "%s/dfp.quantization.cfg", p.dir);
    RD_CLI_EXPECT(0, NULL, NULL, "quantize", p.model, "--dataset", p.ds, "--input-layout", "nchw", "--dtype",
                  "w16a16i_dfp", "-o", cfg_dfp);
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_load(cfg_dfp, &q, &err), RD_OK);
    a = rd_qcfg_find(&q, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_STRING_EQUAL(a->qtype, "dynamic_fixed_point");
    CU_ASSERT_EQUAL(a->zero_point[0], 0);
    int e;
    CU_ASSERT_EQUAL(frexpf(a->scale[0], &e), 0.5f);
    rd_qcfg_fini(&q);
    snprintf(d2, sizeof d2, "%s/d_dfp_cfg", p.dir);
    CU_ASSERT_EQUAL(run_to(&p, "w16a16i_dfp", cfg_dfp, "rv1103", d2, NULL), 0);
    rd_tensor y1, y2;
    snprintf(d, sizeof d, "%s/d_dfp", p.dir);
    load_out(d, &y1);
    load_out(d2, &y2);
    CU_ASSERT_TRUE(same_bits(&y1, &y2));
    rd_tensor_fini(&y1);
    rd_tensor_fini(&y2);
    free(p.dir);
}

static void test_hybrid_int16_cfg(void)
{
    paths p;
    setup(&p);
    char cfg8[4300], hyb[4300], back[4300], d8[4300], dh[4300], dh2[4300];
    rd_test_paths_in(p.dir, sizeof back, cfg8, "w8.quantization.cfg", hyb, "hybrid.quantization.cfg", back,
                     "back.quantization.cfg", d8, "d8", dh, "dh", dh2, "dh2", NULL);
    rd_cli_result r = rd_test_cli("quantize", p.model, "--dataset", p.ds, "--input-layout", "nchw", "-o", cfg8, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    /* the user's edit: the Relu output (and so conv1) in int16 */
    rd_qcfg q;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_load(cfg8, &q, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_qcfg_add_layer(&q, "r", RD_DT_I16, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_qcfg_save(hyb, &q, &err), RD_OK);
    rd_qcfg_fini(&q);
    CU_ASSERT_EQUAL(run_to(&p, "int8", cfg8, "rk3588", d8, NULL), 0);
    CU_ASSERT_EQUAL(run_to(&p, "int8", hyb, "rk3588", dh, NULL), 0);
    /* quantize with the hybrid cfg writes the int16 tensor's int16 parameters and conv1's int16 weights */
    RD_CLI_EXPECT(0, NULL, NULL, "quantize", p.model, "--cfg", hyb, "-o", back);
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_load(back, &q, &err), RD_OK);
    const rd_qcfg_layer *l = rd_qcfg_find_layer(&q, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(l->dtype, RD_DT_I16);
    CU_ASSERT_EQUAL(rd_qcfg_find(&q, "r")->dtype, RD_DT_I16);
    CU_ASSERT_EQUAL(rd_qcfg_find(&q, "conv1.weight")->dtype, RD_DT_I16);
    CU_ASSERT_EQUAL(rd_qcfg_find(&q, "conv2.weight")->dtype, RD_DT_I8);
    CU_ASSERT_EQUAL(rd_qcfg_find(&q, "y")->dtype, RD_DT_I8);
    rd_qcfg_fini(&q);
    CU_ASSERT_EQUAL(run_to(&p, "int8", back, "rk3588", dh2, NULL), 0);
    rd_tensor y8, yh, yh2;
    load_out(d8, &y8);
    load_out(dh, &yh);
    load_out(dh2, &yh2);
    CU_ASSERT_FALSE(same_bits(&y8, &yh)); /* the int16 layer changed something */
    CU_ASSERT_TRUE(same_bits(&yh, &yh2)); /* and the written file reproduces it */
    rd_tensor_fini(&y8);
    rd_tensor_fini(&yh);
    rd_tensor_fini(&yh2);
    free(p.dir);
}

static void test_int16_refusals(void)
{
    paths p;
    setup(&p);
    char d[4300];
    snprintf(d, sizeof d, "%s/d", p.dir);
    char *errs = NULL;
    CU_ASSERT_EQUAL(run_to(&p, "w16a16i", NULL, "rk3588", d, &errs), 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(errs, "target platform rk3588 does not support quantized_dtype w16a16i (it supports "
                                        "w8a8, float16)"));
    free(errs);
    CU_ASSERT_EQUAL(run_to(&p, "w8a16", NULL, "rv1106", d, &errs), 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(errs, "(it supports w8a8, float16, w16a16i, w16a16i_dfp)"));
    free(errs);
    /* w4a16 runs with int4 weights per channel; group{SIZE} weights and gdq are refused */
    CU_ASSERT_EQUAL(run_to(&p, "w4a16", NULL, "rk3576", d, NULL), 0);
    rd_cli_result g = rd_test_cli("run", p.model, "-i", p.in0, "-p", "w4a16", "--method", "group32", "--dataset", p.ds,
                                  "--input-layout", "nchw", "--platform", "rk3576", "-q", NULL);
    CU_ASSERT_EQUAL(g.code, 3);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(g.errs, "quantized_method group32 (weights in groups along the input) is not simulated"));
    rd_test_cli_free(&g);
    g = rd_test_cli("run", p.model, "-i", p.in0, "-p", "w8a16", "--algorithm", "gdq", "--dataset", p.ds,
                    "--input-layout", "nchw", "--platform", "rk3562", "-q", NULL);
    CU_ASSERT_EQUAL(g.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(g.errs, "quantized_algorithm gdq is not simulated"));
    rd_test_cli_free(&g);
    /* quantize: a .quantization.cfg has no int4 dtype */
    char cfg4[4300];
    snprintf(cfg4, sizeof cfg4, "%s/w4.cfg", p.dir);
    g = rd_test_cli("quantize", p.model, "--dataset", p.ds, "--input-layout", "nchw", "--dtype", "w4a16", "-o", cfg4,
                    NULL);
    CU_ASSERT_EQUAL(g.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(g.errs, "(got w4a16)"));
    rd_test_cli_free(&g);
    /* export-qdq does not write int16 tensors yet: a clear refusal */
    char qdq[4300];
    snprintf(qdq, sizeof qdq, "%s/q.onnx", p.dir);
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("--dtype must be w8a8 (got w16a16i)"), "export-qdq", p.model, "--dataset", p.ds,
                  "--input-layout", "nchw", "--dtype", "w16a16i", "-o", qdq);
    free(p.dir);
}

static void test_accuracy_w16a16i(void)
{
    paths p;
    setup(&p);
    char out[4300], txt[4400];
    snprintf(out, sizeof out, "%s/snap", p.dir);
    rd_cli_result r =
        rd_test_cli("accuracy", p.model, "--dataset", p.ds, "--input-layout", "nchw", "--dtype", "w16a16i",
                    "--platform", "rv1106", "-i", p.in0, "-o", out, "-q", "--fail-under-cos", "0.9999", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    if (r.code)
        fprintf(stderr, "%s\n", r.errs);
    rd_test_cli_free(&r);
    snprintf(txt, sizeof txt, "%s/error_analysis.txt", out);
    FILE *f = fopen(txt, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    buf[n] = '\0';
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x_int16")); /* the input's exDataConvert row */
    free(buf);
    free(p.dir);
}

RD_TEST_REGISTER(register_int16)
{
    RD_SUITE("int16 cli",
             {"w16a16i: quantize writes int16, reload reproduces; dfp; w8a16", test_w16a16i_quantize_reload},
             {"hybrid cfg with an int16 layer reloads and reproduces", test_hybrid_int16_cfg},
             {"w4a16; refusals: platform, group, gdq, export-qdq", test_int16_refusals},
             {"accuracy --dtype w16a16i", test_accuracy_w16a16i});
}

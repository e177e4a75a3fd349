/*
 * cmd_demo.c: `rknn-diag demo`: writes the built-in demo model and input into a folder and runs the
 * FP32 reference on them, printing the per-layer summary.
 */
#include "cli_internal.h"
#include "demo_model.h"
#include "tensor_dump.h"

#include <stdio.h>

enum { OPT_HELP = 1, OPT_OUT, OPT_QUIET };

static const an_optspec demo_opts[] = {
    {OPT_OUT, "output-dir", 'o', "DIR", "where the demo model, data and snapshots go (default ./rknn-diag-demo)"},
    {OPT_QUIET, "quiet", 'q', NULL, "write the demo files only; run nothing"},
    {OPT_HELP, "help", 'h', NULL, "show this help"},
};
#define N_DEMO_OPTS ((int)(sizeof demo_opts / sizeof demo_opts[0]))

#define DEMO_CALIB_SAMPLES 16

/* A calibration set: the demo input with a different gain and offset per sample, as .npy files. */
static rd_status write_calibration(const char *dir, const char *input, rd_error *err)
{
    rd_tensor x;
    rd_status st = rd_npy_load(input, &x, err);
    if (st != RD_OK)
        return st;
    char list[4200], path[4200];
    snprintf(list, sizeof list, "%s/dataset.txt", dir);
    FILE *f = fopen(list, "w");
    if (!f) {
        rd_tensor_fini(&x);
        return rd_errorf(err, RD_E_IO, "cannot write %s", list);
    }
    rd_tensor y;
    st = rd_tensor_clone(&y, &x, err);
    for (int k = 0; k < DEMO_CALIB_SAMPLES && st == RD_OK; k++) {
        float gain = 0.7f + 0.04f * (float)k, offset = 0.05f * (float)(k % 5) - 0.1f;
        for (int64_t i = 0; i < rd_tensor_numel(&x); i++)
            ((float *)y.data)[i] = ((float *)x.data)[i] * gain + offset;
        snprintf(path, sizeof path, "%s/calib/%02d.npy", dir, k);
        st = rd_npy_save(path, &y, err);
        fprintf(f, "calib/%02d.npy\n", k);
    }
    fclose(f);
    rd_tensor_fini(&y);
    rd_tensor_fini(&x);
    return st;
}

/* Runs `rknn-diag accuracy` with the given arguments (NULL-terminated). */
static int run_accuracy(an_cmd_ctx *ctx, const char *title, char **args)
{
    char *argv[32] = {"accuracy"};
    int argc = 1;
    for (int i = 0; args[i] && argc < 31; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    fprintf(ctx->out, "\n== %s ==\n", title);
    fflush(ctx->out);
    an_cmd_ctx sub = *ctx;
    sub.argc = argc;
    sub.argv = argv;
    return an_cmd_accuracy(&sub);
}

int an_cmd_demo(an_cmd_ctx *ctx)
{
    const char *dir = "rknn-diag-demo";
    bool quiet = false;
    an_opts p;
    an_opts_init(&p, ctx, demo_opts, N_DEMO_OPTS);
    const char *v;
    int id;
    while ((id = an_opts_next(&p, &v)) != -1) {
        if (id == -2)
            return AN_EXIT_USAGE;
        if (id == OPT_HELP) {
            an_print_help(ctx->out, "rknn-diag demo [-o DIR]",
                          "Writes a small demo classifier (made by rknn-diag's own ONNX writer), an input and a\n"
                          "calibration set into DIR, then runs the accuracy analysis twice: as a float16 build (a layer\n"
                          "overflows float16) and as a w8a8 build with per-tensor weights (a conv with one outlier\n"
                          "channel quantizes badly). Each writes a snapshot with error_analysis.txt and report.html.",
                          demo_opts, N_DEMO_OPTS);
            return AN_EXIT_OK;
        }
        if (id == OPT_OUT)
            dir = v;
        else if (id == OPT_QUIET)
            quiet = true;
        else
            return an_usage(ctx, "unexpected argument '%s'", v);
    }
    rd_error err = {0};
    char model[4096], input[4096], calib[4096], dataset[4200], snap16[4200], snap8[4200];
    snprintf(model, sizeof model, "%s/demo.onnx", dir);
    snprintf(input, sizeof input, "%s/image.npy", dir);
    snprintf(calib, sizeof calib, "%s/calib", dir);
    snprintf(dataset, sizeof dataset, "%s/dataset.txt", dir);
    snprintf(snap16, sizeof snap16, "%s/snapshot_fp16", dir);
    snprintf(snap8, sizeof snap8, "%s/snapshot_int8", dir);
    if (an_mkdirs(dir, &err) != RD_OK || an_mkdirs(calib, &err) != RD_OK || an_demo_model_write(model, &err) != RD_OK ||
        an_demo_input_write(input, &err) != RD_OK || write_calibration(dir, input, &err) != RD_OK)
        return an_fail(ctx, &err);
    fprintf(ctx->errs, "demo: wrote %s, %s and a %d-sample calibration set (%s)\n", model, input, DEMO_CALIB_SAMPLES,
            dataset);
    if (quiet)
        return AN_EXIT_OK;
    int rc = run_accuracy(ctx, "1/2: float16 build (rknn-diag accuracy --dtype float16)",
                          (char *[]){model, "--inputs", input, "--input-layout", "nchw", "--dtype", "float16", "-o",
                                     snap16, NULL});
    if (rc != AN_EXIT_OK)
        return rc;
    rc = run_accuracy(ctx, "2/2: w8a8 build, per-tensor weights (rknn-diag accuracy --dtype w8a8 --method layer)",
                      (char *[]){model, "--inputs", input, "--input-layout", "nchw", "--dataset", dataset, "--method",
                                 "layer", "-o", snap8, NULL});
    if (rc == AN_EXIT_OK)
        fprintf(ctx->out, "\nopen %s/report.html and %s/report.html in a browser for the charts and the full table\n",
                snap16, snap8);
    return rc;
}

/*
 * cmd_demo.c: `rknn-diag demo`: writes the built-in demo model, an input and a calibration set into a
 * folder, runs the float16 analysis (a layer overflows float16), quantizes the model (per-tensor
 * weights: one conv quantizes badly), starts the emulated rk3566 board on loopback and runs
 * `accuracy --target rk3566 --run "rknn-diag board-run ... --fault gain:relu6_out"`, so one table shows
 * the simulator and the board and the findings name all three problems.
 */
#include "cmd_spec.h"
#include "demo_model.h"
#include "rknn_diag/adb.h"
#include "tensor_dump.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { OPT_QUIET = 1 };

static const an_optspec demo_opts[] = {
    {OPT_QUIET, "quiet", 'q', NULL, "write the demo files only; run nothing"},
};

typedef struct demo_args {
    bool quiet;
} demo_args;

static const an_optset demo_sets[] = {AN_SET(OPT_QUIET, AN_SET_FLAG, demo_args, quiet)};

#define DEMO_CALIB_SAMPLES 16
#define DEMO_FAULT "gain:relu6_out" /* the runtime fault the emulated board injects */

/* A calibration set: the demo input with a different gain and offset per sample, as .npy files. */
static rd_status write_calibration(const char *dir, const char *input, rd_error *err)
{
    rd_tensor x;
    rd_status st = rd_npy_load(input, &x, err);
    if (st != RD_OK)
        return st;
    char list[4200], path[4200];
    snprintf(list, sizeof list, "%s/dataset.txt", dir);
    rd_atomic_file *af;
    st = rd_atomic_file_open(list, NULL, &af, err);
    if (st != RD_OK) {
        rd_tensor_fini(&x);
        return st;
    }
    FILE *f = rd_atomic_file_stream(af);
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
    if (st == RD_OK)
        st = rd_atomic_file_commit(af, err);
    else
        rd_atomic_file_abort(af);
    rd_tensor_fini(&y);
    rd_tensor_fini(&x);
    return st;
}

/* Runs a command (an_cmd_accuracy, an_cmd_quantize) with the given arguments (NULL-terminated). */
static int run_cmd(an_cmd_ctx *ctx, const an_cmd_spec *spec, const char *name, const char *title, char **args)
{
    char *argv[40] = {(char *)name};
    int argc = 1;
    for (int i = 0; args[i] && argc < 39; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    if (title) {
        fprintf(ctx->out, "\n== %s ==\n", title);
        fflush(ctx->out);
    }
    an_cmd_ctx sub = *ctx;
    sub.argc = argc;
    sub.argv = argv;
    return an_cmd_exec(&sub, spec);
}

static int run_accuracy(an_cmd_ctx *ctx, const char *title, char **args)
{
    return run_cmd(ctx, &an_cmd_accuracy, "accuracy", title, args);
}

/*
 * Part 2: the w8a8 build on the emulated rk3566. The board's filesystem is DIR/board; the model and
 * the .quantization.cfg live in its /userdata so board-run (run by the board's shell) and this host
 * analysis read the same files and agree bit for bit except where the fault is injected.
 */
static int board_part(an_cmd_ctx *ctx, const char *dir, const char *input, const char *dataset)
{
    rd_error err = {0};
    char root[4200], userdata[4300], model[4400], cfg[4400], snap[4200], self[4096], run[9000];
    snprintf(root, sizeof root, "%s/board", dir);
    snprintf(userdata, sizeof userdata, "%s/userdata", root);
    snprintf(model, sizeof model, "%s/demo.onnx", userdata);
    snprintf(cfg, sizeof cfg, "%s/demo.quantization.cfg", userdata);
    snprintf(snap, sizeof snap, "%s/snapshot_rk3566", dir);
    /* the board's shell runs this very program; RKNN_DIAG_BINARY names it when the demo runs inside
       another program (the test suite) */
    const char *bin = getenv("RKNN_DIAG_BINARY");
    if (bin && *bin) {
        snprintf(self, sizeof self, "%s", bin);
    } else {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
            return an_fail(ctx,
                           &(rd_error){.code = RD_E_IO, .msg = "cannot find this program's path (/proc/self/exe)"});
        self[n] = '\0';
    }
    if (an_mkdirs(userdata, &err) != RD_OK || an_demo_model_write(model, &err) != RD_OK)
        return an_fail(ctx, &err);
    int rc = run_cmd(ctx, &an_cmd_quantize, "quantize", NULL,
                     (char *[]){model, "--dataset", (char *)dataset, "--method", "layer", "--input-layout", "nchw",
                                "--platform", "rk3566", "-o", cfg, NULL});
    if (rc != AN_EXIT_OK)
        return rc;
    rd_board_options bo = {.port = 0, .root = root};
    rd_board *board = NULL;
    if (rd_board_start(&bo, &board, &err) != RD_OK)
        return an_fail(ctx, &err);
    char connect[64];
    snprintf(connect, sizeof connect, "127.0.0.1:%d", rd_board_port(board));
    fprintf(ctx->errs, "demo: emulated rk3566 board listening on %s (its / is %s)\n", connect, root);
    snprintf(run, sizeof run,
             "'%s' board-run /userdata/demo.onnx --input {input0} --input-layout nchw --cfg "
             "/userdata/demo.quantization.cfg --method layer --target rk3566 --fault " DEMO_FAULT,
             self);
    rc = run_accuracy(ctx,
                      "2/2: w8a8 build, per-tensor weights, on the emulated rk3566 board "
                      "(rknn-diag accuracy --target rk3566 --run ...)",
                      (char *[]){model, "--inputs", (char *)input, "--input-layout", "nchw", "--cfg", cfg, "--method",
                                 "layer", "--target", "rk3566", "--connect", connect, "--run", run, "-o", snap, NULL});
    rd_board_stop(board);
    return rc;
}

static int demo_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    const char *dir = cmd->output ? cmd->output : "rknn-diag-demo";
    bool quiet = ((const demo_args *)args)->quiet;
    rd_error err = {0};
    char model[4096], input[4096], calib[4096], dataset[4200], snap16[4200], snap8[4200];
    snprintf(model, sizeof model, "%s/demo.onnx", dir);
    snprintf(input, sizeof input, "%s/image.npy", dir);
    snprintf(calib, sizeof calib, "%s/calib", dir);
    snprintf(dataset, sizeof dataset, "%s/dataset.txt", dir);
    snprintf(snap16, sizeof snap16, "%s/snapshot_fp16", dir);
    snprintf(snap8, sizeof snap8, "%s/snapshot_rk3566", dir);
    if (an_mkdirs(dir, &err) != RD_OK || an_mkdirs(calib, &err) != RD_OK || an_demo_model_write(model, &err) != RD_OK ||
        an_demo_input_write(input, &err) != RD_OK || write_calibration(dir, input, &err) != RD_OK)
        return an_fail(ctx, &err);
    fprintf(ctx->errs, "demo: wrote %s, %s and a %d-sample calibration set (%s)\n", model, input, DEMO_CALIB_SAMPLES,
            dataset);
    if (quiet)
        return AN_EXIT_OK;
    int rc = run_accuracy(
        ctx, "1/2: float16 build (rknn-diag accuracy --dtype float16)",
        (char *[]){model, "--inputs", input, "--input-layout", "nchw", "--dtype", "float16", "-o", snap16, NULL});
    if (rc != AN_EXIT_OK)
        return rc;
    rc = board_part(ctx, dir, input, dataset);
    if (rc == AN_EXIT_OK)
        fprintf(ctx->out, "\nopen %s/report.html and %s/report.html in a browser for the charts and the full table\n",
                snap16, snap8);
    return rc;
}

const an_cmd_spec an_cmd_demo = {
    .usage = "rknn-diag demo [-o DIR]",
    .about = "Writes a small demo classifier (made by rknn-diag's own ONNX writer), an input and a\n"
             "calibration set into DIR, then runs the accuracy analysis twice: as a float16 build (a layer\n"
             "overflows float16), and as a w8a8 build with per-tensor weights (a conv with one outlier\n"
             "channel quantizes badly) on an emulated rk3566 board started on loopback, whose NPU has a\n"
             "gain fault in one layer (accuracy --target rk3566 --run \"rknn-diag board-run ...\"). Each\n"
             "writes a snapshot with error_analysis.txt and report.html.",
    .output = {0, "output-dir", 'o', "DIR", "where the demo model, data and snapshots go (default ./rknn-diag-demo)"},
    AN_SPEC_OPTS(demo_opts),
    AN_SPEC_SETS(demo_sets),
    AN_SPEC_ARGS(demo_args, NULL),
    .main = demo_main,
};

/*
 * cmd_demo.c: `rknn-diag demo`: writes the built-in demo model and input into a folder and runs the
 * FP32 reference on them, printing the per-layer summary.
 */
#include "cli_internal.h"
#include "demo_model.h"
#include "tensor_dump.h"

#include <stdio.h>

enum { OPT_HELP = 1, OPT_OUT };

static const an_optspec demo_opts[] = {
    {OPT_OUT, "output-dir", 'o', "DIR", "where the demo model, input and dumps go (default ./rknn-diag-demo)"},
    {OPT_HELP, "help", 'h', NULL, "show this help"},
};
#define N_DEMO_OPTS ((int)(sizeof demo_opts / sizeof demo_opts[0]))

int an_cmd_demo(an_cmd_ctx *ctx)
{
    const char *dir = "rknn-diag-demo";
    an_opts p;
    an_opts_init(&p, ctx, demo_opts, N_DEMO_OPTS);
    const char *v;
    int id;
    while ((id = an_opts_next(&p, &v)) != -1) {
        if (id == -2)
            return AN_EXIT_USAGE;
        if (id == OPT_HELP) {
            an_print_help(ctx->out, "rknn-diag demo [-o DIR]",
                          "Writes a small demo classifier (made by rknn-diag's own ONNX writer) and an input into\n"
                          "DIR, then runs the FP32 reference on it layer by layer and prints the summary.",
                          demo_opts, N_DEMO_OPTS);
            return AN_EXIT_OK;
        }
        if (id == OPT_OUT)
            dir = v;
        else
            return an_usage(ctx, "unexpected argument '%s'", v);
    }
    rd_error err = {0};
    char model[4096], input[4096], dumps[4096];
    snprintf(model, sizeof model, "%s/demo.onnx", dir);
    snprintf(input, sizeof input, "%s/image.npy", dir);
    snprintf(dumps, sizeof dumps, "%s/fp32", dir);
    if (an_mkdirs(dir, &err) != RD_OK || an_demo_model_write(model, &err) != RD_OK ||
        an_demo_input_write(input, &err) != RD_OK)
        return an_fail(ctx, &err);
    fprintf(ctx->errs, "demo: wrote %s and %s\n", model, input);
    char input_arg[4200];
    snprintf(input_arg, sizeof input_arg, "image=%s", input);
    char *argv[] = {"run", model, "--input", input_arg, "--dump-dir", dumps, NULL};
    an_cmd_ctx run_ctx = *ctx;
    run_ctx.argc = 6;
    run_ctx.argv = argv;
    return an_cmd_run(&run_ctx);
}

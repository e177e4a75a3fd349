/*
 * cmd_prune.c: `rknn-diag prune MODEL -o OUT`: lossless channel pruning (RKNN's model_pruning). Prints
 * the savings in the guide's form, and nothing when there is nothing to prune (OUT is then the model
 * written back unchanged). Rules: docs/prune.md.
 */
#include "cli_internal.h"
#include "cli_model_args.h"
#include "config_model.h"
#include "prune.h"
#include "tensor_dump.h"

#include <stdlib.h>

enum { OPT_HELP = 1, OPT_OUTPUT, OPT_INPUT_SHAPE };

static const an_optspec prune_opts[] = {
    {OPT_OUTPUT, "output", 'o', "FILE", "the pruned .onnx model to write (required)"},
    {OPT_INPUT_SHAPE, "input-shape", 0, "NAME=D0,D1,..", "fix symbolic input dims (repeat per input)"},
    {OPT_HELP, "help", 'h', NULL, "show this help"},
};
#define N_PRUNE_OPTS ((int)(sizeof prune_opts / sizeof prune_opts[0]))

typedef struct prune_args {
    const char *model_path, *out_path;
    rd_input_shape shapes[AN_MAX_INPUTS];
    an_name_buf shape_names[AN_MAX_INPUTS];
    size_t n_shapes;
} prune_args;

static int parse_args(an_cmd_ctx *ctx, prune_args *a)
{
    rd_error err = {0};
    an_opts p;
    an_opts_init(&p, ctx, prune_opts, N_PRUNE_OPTS);
    const char *v;
    int id;
    while ((id = an_opts_next(&p, &v)) != -1) {
        switch (id) {
        case -2:
            return AN_EXIT_USAGE;
        case 0:
            if (a->model_path)
                return an_usage(ctx, "one model only (got '%s' and '%s')", a->model_path, v);
            a->model_path = v;
            break;
        case OPT_HELP:
            an_print_help(ctx->out, "rknn-diag prune MODEL.onnx -o OUT.onnx",
                          "Removes the output channels of Conv and Gemm whose weights and bias are all zero, and\n"
                          "the input channels that read them, through BatchNormalization, activations, pools, Add\n"
                          "and Concat, wherever that changes no result (docs/prune.md). Prints the savings as\n"
                          "RKNN's model_pruning does (Weight: -X MB, GFLOPs: -Y), nothing when there is nothing to\n"
                          "prune; OUT is then the model written back unchanged.",
                          prune_opts, N_PRUNE_OPTS);
            return AN_EXIT_OK;
        case OPT_OUTPUT:
            a->out_path = v;
            break;
        case OPT_INPUT_SHAPE:
            if (an_parse_input_shape(v, a->shape_names, a->shapes, &a->n_shapes, &err) != RD_OK)
                return an_usage(ctx, "%s", err.msg);
            break;
        }
    }
    if (!a->model_path)
        return an_usage(ctx, "missing MODEL.onnx");
    if (!a->out_path)
        return an_usage(ctx, "missing -o OUT.onnx");
    return -1;
}

int an_cmd_prune(an_cmd_ctx *ctx)
{
    prune_args *a = calloc(1, sizeof *a);
    if (!a)
        return an_fail_nomem(ctx, "the command's options");
    int rc = parse_args(ctx, a);
    rd_error err = {0};
    rd_model *m = NULL;
    an_prune_plan plan = {0};
    void *buf = NULL;
    size_t len = 0;
    if (rc >= 0)
        goto out;
    rd_load_options lopt = {.input_shapes = a->shapes, .n_input_shapes = a->n_shapes};
    rd_status st = an_model_open(a->model_path, NULL, false, &lopt, &m, NULL, &err);
    if (st == RD_OK)
        st = an_prune_analyze(m, &plan, &err);
    if (st == RD_OK)
        st = an_prune_write(m, &plan, &buf, &len, &err);
    if (st == RD_OK)
        st = rd_file_write_atomic(a->out_path, buf, len, NULL, &err);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    if (plan.n_channels)
        an_prune_print_summary(ctx->out, &plan);
    rc = AN_EXIT_OK;
out:
    free(buf);
    an_prune_plan_fini(&plan);
    rd_model_destroy(m);
    free(a);
    return rc;
}

/*
 * cmd_prune.c: `rknn-diag prune MODEL -o OUT`: lossless channel pruning (RKNN's model_pruning). Prints
 * the savings in the guide's form, and nothing when there is nothing to prune (OUT is then the model
 * written back unchanged). Rules: docs/prune.md.
 */
#include "cmd_spec.h"
#include "config_model.h"
#include "prune.h"
#include "tensor_dump.h"

#include <stdlib.h>

static int prune_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    (void)args;
    rd_error err = {0};
    rd_model *m = NULL;
    an_prune_plan plan = {0};
    void *buf = NULL;
    size_t len = 0;
    int rc;
    rd_status st = an_cmd_open_model(ctx, cmd, false, NULL, &m, &err);
    if (st == RD_OK)
        st = an_prune_analyze(m, &plan, &err);
    if (st == RD_OK)
        st = an_prune_write(m, &plan, &buf, &len, &err);
    if (st == RD_OK)
        st = rd_file_write_atomic(cmd->output, buf, len, NULL, &err);
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
    return rc;
}

const an_cmd_spec an_cmd_prune = {
    .output = {0, "output", 'o', "FILE", "the pruned .onnx model to write (required)"},
    .output_missing = "missing -o OUT.onnx",
    .usage = "rknn-diag prune MODEL.onnx -o OUT.onnx [--graph-inputs NAME,..] [--graph-outputs NAME,..]",
    .about = "Removes the output channels of Conv and Gemm whose weights and bias are all zero, and\n"
             "the input channels that read them, through BatchNormalization, activations, pools, Add\n"
             "and Concat, wherever that changes no result (docs/prune.md). Prints the savings as\n"
             "RKNN's model_pruning does (Weight: -X MB, GFLOPs: -Y), nothing when there is nothing to\n"
             "prune; OUT is then the model written back unchanged. With --graph-inputs/--graph-outputs\n"
             "the subgraph between those tensors is pruned and written: its inputs and outputs are OUT's.",
    .groups = AN_OG_SHAPE | AN_OG_CUT,
    .model = "MODEL.onnx",
    .main = prune_main,
};

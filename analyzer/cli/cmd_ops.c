/* cmd_ops.c: `rknn-diag ops`: the operators this build implements. */
#include "cli_internal.h"

#include <string.h>

enum { OPT_HELP = 1 };

static const an_optspec ops_opts[] = {
    {OPT_HELP, "help", 'h', NULL, "show this help"},
};

int an_cmd_ops(an_cmd_ctx *ctx)
{
    an_opts p;
    an_opts_init(&p, ctx, ops_opts, 1);
    const char *v;
    int id;
    while ((id = an_opts_next(&p, &v)) != -1) {
        if (id == -2)
            return AN_EXIT_USAGE;
        if (id == OPT_HELP) {
            an_print_help(ctx->out, "rknn-diag ops",
                          "Lists the ONNX operators this build implements: the "
                          "opset versions covered, the precisions with kernels of their "
                          "own (others run the float32 kernel on rounded values) and the "
                          "op RKNN's compiler makes of it where that differs.",
                          ops_opts, 1);
            return AN_EXIT_OK;
        }
        return an_usage(ctx, "unexpected argument '%s'", v);
    }
    for (size_t i = 0; i < rd_op_count(); i++) {
        rd_op_info info;
        rd_op_get(i, &info);
        fprintf(ctx->out, "%s%s%s since opset %d", info.domain, info.domain[0] ? "." : "", info.name, info.since);
        if (info.until)
            fprintf(ctx->out, " until %d", info.until);
        fprintf(ctx->out, "; kernels fp32%s%s%s", info.fp16_kernel ? " fp16" : "", info.int8_kernel ? " int8" : "",
                info.int16_kernel ? " int16" : "");
        if (strcmp(info.npu_op, info.name) != 0)
            fprintf(ctx->out, "; RKNN runs it as %s", info.npu_op);
        fputc('\n', ctx->out);
    }
    return AN_EXIT_OK;
}

/* cmd_ops.c: `rknn-diag ops`: the operators this build implements. */
#include "cmd_spec.h"

#include <string.h>

static int ops_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    (void)cmd;
    (void)args;
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

const an_cmd_spec an_cmd_ops = {
    .usage = "rknn-diag ops",
    .about = "Lists the ONNX operators this build implements: the opset versions covered, the precisions with "
             "kernels of their own (others run the float32 kernel on rounded values) and the op RKNN's compiler "
             "makes of it where that differs.",
    .main = ops_main,
};

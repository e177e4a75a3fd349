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
            an_print_help(ctx->out, "rknn-diag ops", "Lists the ONNX operators this build implements, with the "
                                                     "first opset version covered.", ops_opts, 1);
            return AN_EXIT_OK;
        }
        return an_usage(ctx, "unexpected argument '%s'", v);
    }
    for (size_t i = 0; i < rd_op_count(); i++) {
        rd_op_info info;
        rd_op_get(i, &info);
        fprintf(ctx->out, "%s%s%s since opset %d\n", info.domain, info.domain[0] ? "." : "", info.name, info.since);
    }
    return AN_EXIT_OK;
}

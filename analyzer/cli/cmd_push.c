/* cmd_push.c: `rknn-diag push LOCAL REMOTE`: copies a file or folder to the board. */
#include "cli_adb.h"

enum { OPT_HELP = 1 };

static const an_optspec push_opts[] = {
    {OPT_HELP, "help", 'h', NULL, "show this help"},
    AN_ADB_OPTSPECS,
};
#define N_OPTS ((int)(sizeof push_opts / sizeof push_opts[0]))

int an_cmd_push(an_cmd_ctx *ctx)
{
    an_opts p;
    an_opts_init(&p, ctx, push_opts, N_OPTS);
    rd_adb_options opt = {.log = an_adb_log, .log_user = ctx};
    const char *pos[2] = {NULL, NULL};
    int n_pos = 0;
    const char *v;
    int id, code = 0;
    while ((id = an_opts_next(&p, &v)) != -1) {
        if (id == -2)
            return AN_EXIT_USAGE;
        if (id == OPT_HELP) {
            an_print_help(ctx->out, "rknn-diag push LOCAL REMOTE",
                          "Copies LOCAL (a file or folder) to REMOTE on the board; into "
                          "REMOTE/<name> when REMOTE "
                          "is an existing folder.",
                          push_opts, N_OPTS);
            return AN_EXIT_OK;
        }
        if (id == 0) {
            if (n_pos == 2)
                return an_usage(ctx, "unexpected argument '%s'", v);
            pos[n_pos++] = v;
            continue;
        }
        if (!an_adb_option(ctx, &opt, id, v, &code))
            return code;
    }
    if (n_pos != 2)
        return an_usage(ctx, "push needs LOCAL and REMOTE");
    rd_error err;
    rd_adb *dev = NULL;
    if (rd_adb_open(&opt, &dev, &err) != RD_OK)
        return an_fail(ctx, &err);
    an_xfer prog;
    an_xfer_init(&prog, ctx, "pushed");
    rd_status st = rd_adb_push(dev, pos[0], pos[1], an_xfer_cb, &prog, &err);
    rd_adb_close(dev);
    if (st != RD_OK)
        return an_fail(ctx, &err);
    an_xfer_done(&prog);
    return AN_EXIT_OK;
}

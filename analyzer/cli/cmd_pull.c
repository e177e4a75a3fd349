/* cmd_pull.c: `rknn-diag pull [REMOTE] [LOCAL]`: copies the board's dumps (or any file or folder)
 * to the host. */
#include "cli_adb.h"

enum { OPT_HELP = 1 };

static const an_optspec pull_opts[] = {
    {OPT_HELP, "help", 'h', NULL, "show this help"},
    AN_ADB_OPTSPECS,
};
#define N_OPTS ((int)(sizeof pull_opts / sizeof pull_opts[0]))

int an_cmd_pull(an_cmd_ctx *ctx)
{
    an_opts p;
    an_opts_init(&p, ctx, pull_opts, N_OPTS);
    rd_adb_options opt = {.log = an_adb_log, .log_user = ctx};
    const char *pos[2] = {NULL, NULL};
    int n_pos = 0;
    const char *v;
    int id, code = 0;
    while ((id = an_opts_next(&p, &v)) != -1) {
        if (id == -2)
            return AN_EXIT_USAGE;
        if (id == OPT_HELP) {
            an_print_help(ctx->out, "rknn-diag pull [REMOTE] [LOCAL]",
                          "Copies REMOTE (default " RD_ADB_DEFAULT_DUMP_DIR ") from the board to LOCAL (default .), "
                          "recursively, placed as `adb pull` places it: a remote folder lands in "
                          "LOCAL/<name> "
                          "when LOCAL exists. A file gets its name only once exactly the size the board "
                          "announced has arrived; one that arrives short, or whose name this computer cannot "
                          "store, is logged and the others are still pulled (exit 3 at the end). Links to "
                          "folders are followed, each folder once; --timeout also bounds the listing as a "
                          "whole. Progress goes to stderr (docs/adb.md).",
                          pull_opts, N_OPTS);
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
    rd_error err;
    rd_adb *dev = NULL;
    if (rd_adb_open(&opt, &dev, &err) != RD_OK)
        return an_fail(ctx, &err);
    an_xfer prog;
    an_xfer_init(&prog, ctx, "pulled");
    rd_status st =
        rd_adb_pull(dev, pos[0] ? pos[0] : RD_ADB_DEFAULT_DUMP_DIR, pos[1] ? pos[1] : ".", an_xfer_cb, &prog, &err);
    rd_adb_close(dev);
    if (st != RD_OK)
        return an_fail(ctx, &err);
    an_xfer_done(&prog);
    return AN_EXIT_OK;
}

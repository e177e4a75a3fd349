/* cmd_push.c: `rknn-diag push LOCAL REMOTE`: copies a file or folder to the board. */
#include "cli_adb.h"
#include "cmd_spec.h"

static const an_cmd_spec push_spec = {
    .usage = "rknn-diag push LOCAL REMOTE",
    .about = "Copies LOCAL (a file or folder) to REMOTE on the board; into REMOTE/<name> when REMOTE "
             "is an existing folder.",
    .groups = AN_OG_BOARD,
    .max_positional = 2,
};

int an_cmd_push(an_cmd_ctx *ctx)
{
    rd_adb_options opt = {.log = an_adb_log, .log_user = ctx};
    an_cmd_args cmd = {.adb = &opt};
    int rc = an_cmd_parse(ctx, &push_spec, &cmd, NULL, NULL);
    if (rc != AN_GO)
        return rc;
    if (cmd.n_pos != 2)
        return an_usage(ctx, "push needs LOCAL and REMOTE");
    const char *const *pos = cmd.pos;
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

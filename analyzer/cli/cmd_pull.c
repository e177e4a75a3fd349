/* cmd_pull.c: `rknn-diag pull [REMOTE] [LOCAL]`: copies the board's dumps (or any file or folder)
 * to the host. */
#include "cli_adb.h"
#include "cmd_spec.h"

static const an_cmd_spec pull_spec = {
    .usage = "rknn-diag pull [REMOTE] [LOCAL]",
    .about = "Copies REMOTE (default " RD_ADB_DEFAULT_DUMP_DIR ") from the board to LOCAL (default .), "
             "recursively, placed as `adb pull` places it: a remote folder lands in LOCAL/<name> "
             "when LOCAL exists. A file gets its name only once exactly the size the board "
             "announced has arrived; one that arrives short, or whose name this computer cannot "
             "store, is logged and the others are still pulled (exit 3 at the end). Links to "
             "folders are followed, each folder once; --timeout also bounds the listing as a "
             "whole. Progress goes to stderr (docs/adb.md).",
    .groups = AN_OG_BOARD,
    .max_positional = 2,
};

int an_cmd_pull(an_cmd_ctx *ctx)
{
    rd_adb_options opt = {.log = an_adb_log, .log_user = ctx};
    an_cmd_args cmd = {.adb = &opt};
    int rc = an_cmd_parse(ctx, &pull_spec, &cmd, NULL, NULL);
    if (rc != AN_GO)
        return rc;
    const char *const *pos = cmd.pos;
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

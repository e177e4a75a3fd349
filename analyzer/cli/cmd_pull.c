/* cmd_pull.c: `rknn-diag pull [REMOTE] [LOCAL]`: copies the board's dumps (or any file or folder)
 * to the host. */
#include "cli_adb.h"
#include "cmd_spec.h"

static int pull_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    (void)args;
    return an_adb_copy_command(ctx, cmd, "pulled", rd_adb_pull, RD_ADB_DEFAULT_DUMP_DIR, ".", NULL);
}

const an_cmd_spec an_cmd_pull = {
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
    .main = pull_main,
};

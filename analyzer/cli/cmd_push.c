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
    an_cmd_args cmd;
    int rc = an_cmd_parse(ctx, &push_spec, &cmd, NULL, NULL);
    if (rc == AN_GO && cmd.n_pos != 2)
        rc = an_usage(ctx, "push needs LOCAL and REMOTE");
    return rc == AN_GO ? an_adb_transfer(ctx, &cmd.adb, "pushed", rd_adb_push, cmd.pos[0], cmd.pos[1]) : rc;
}

/* cmd_push.c: `rknn-diag push LOCAL REMOTE`: copies a file or folder to the board. */
#include "cli_adb.h"
#include "cmd_spec.h"

static int push_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    (void)args;
    return an_adb_copy_command(ctx, cmd, "pushed", rd_adb_push, NULL, NULL, "push needs LOCAL and REMOTE");
}

const an_cmd_spec an_cmd_push = {
    .usage = "rknn-diag push LOCAL REMOTE",
    .about = "Copies LOCAL (a file or folder) to REMOTE on the board; into REMOTE/<name> when REMOTE "
             "is an existing folder.",
    .groups = AN_OG_BOARD,
    .max_positional = 2,
    .main = push_main,
};

/* cmd_shell.c: `rknn-diag shell CMD...`: runs a command on the board; its exit status becomes ours.
 */
#include "cli_adb.h"
#include "cmd_spec.h"

#include <stdlib.h>
#include <string.h>

typedef struct shell_cmd {
    char text[4096];
    size_t len;
} shell_cmd;

/* One word of CMD, appended with a space. */
static int take_word(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    shell_cmd *c = user;
    size_t vl = strlen(v);
    if (c->len + vl + 2 > sizeof c->text)
        return an_usage(ctx, "command longer than %zu bytes", sizeof c->text - 1);
    if (c->len)
        c->text[c->len++] = ' ';
    memcpy(c->text + c->len, v, vl + 1);
    c->len += vl;
    return AN_GO;
}

static void forward(void *user, int stream, const char *data, size_t n)
{
    const an_cmd_ctx *ctx = user;
    FILE *f = stream == 2 ? ctx->errs : ctx->out;
    fwrite(data, 1, n, f);
    fflush(f);
}

static int shell_main(an_cmd_ctx *ctx, an_cmd_args *args, void *user)
{
    const shell_cmd *c = user;
    const char *cmd = c->text;
    size_t len = c->len;
    if (len == 0)
        return an_usage(ctx, "shell needs a command (interactive shells are not supported)");
    rd_error err;
    rd_adb *dev = NULL;
    if (rd_adb_open(&args->adb, &dev, &err) != RD_OK)
        return an_fail(ctx, &err);
    int exit_code = 0;
    rd_status st = rd_adb_shell(dev, cmd, forward, ctx, &exit_code, &err);
    rd_adb_close(dev);
    if (st != RD_OK)
        return an_fail(ctx, &err);
    return exit_code;
}

const an_cmd_spec an_cmd_shell = {
    .usage = "rknn-diag shell [options] [--] CMD...",
    .about = "Runs CMD with sh -c on the board; stdout and stderr are passed through and the exit "
             "status is rknn-diag's (boards without shell_v2 report none: 0). Use -- before a "
             "command that has options of its own.",
    .groups = AN_OG_BOARD,
    .rest_positional = true, /* the rest belongs to the command */
    AN_SPEC_ARGS(shell_cmd, NULL),
    .take = take_word,
    .main = shell_main,
};

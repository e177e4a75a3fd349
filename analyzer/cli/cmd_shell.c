/* cmd_shell.c: `rknn-diag shell CMD...`: runs a command on the board; its exit status becomes ours.
 */
#include "cli_adb.h"

#include <stdlib.h>
#include <string.h>

enum { OPT_HELP = 1 };

static const an_optspec shell_opts[] = {
    {OPT_HELP, "help", 'h', NULL, "show this help"},
    AN_ADB_OPTSPECS,
};
#define N_OPTS ((int)(sizeof shell_opts / sizeof shell_opts[0]))

static void forward(void *user, int stream, const char *data, size_t n)
{
    const an_cmd_ctx *ctx = user;
    FILE *f = stream == 2 ? ctx->errs : ctx->out;
    fwrite(data, 1, n, f);
    fflush(f);
}

int an_cmd_shell(an_cmd_ctx *ctx)
{
    an_opts p;
    an_opts_init(&p, ctx, shell_opts, N_OPTS);
    rd_adb_options opt = {.log = an_adb_log, .log_user = ctx};
    char cmd[4096];
    size_t len = 0;
    cmd[0] = '\0';
    const char *v;
    int id, code = 0;
    while ((id = an_opts_next(&p, &v)) != -1) {
        if (id == -2)
            return AN_EXIT_USAGE;
        if (id == OPT_HELP) {
            an_print_help(ctx->out, "rknn-diag shell [options] [--] CMD...",
                          "Runs CMD with sh -c on the board; stdout and stderr are passed through and the "
                          "exit "
                          "status is rknn-diag's (boards without shell_v2 report none: 0). Use -- before a "
                          "command that has options of its own.",
                          shell_opts, N_OPTS);
            return AN_EXIT_OK;
        }
        if (id == 0) {
            size_t vl = strlen(v);
            if (len + vl + 2 > sizeof cmd)
                return an_usage(ctx, "command longer than %zu bytes", sizeof cmd - 1);
            if (len)
                cmd[len++] = ' ';
            memcpy(cmd + len, v, vl + 1);
            len += vl;
            p.only_positional = true; /* the rest belongs to the command */
            continue;
        }
        if (!an_adb_option(ctx, &opt, id, v, &code))
            return code;
    }
    if (len == 0)
        return an_usage(ctx, "shell needs a command (interactive shells are not supported)");
    rd_error err;
    rd_adb *dev = NULL;
    if (rd_adb_open(&opt, &dev, &err) != RD_OK)
        return an_fail(ctx, &err);
    int exit_code = 0;
    rd_status st = rd_adb_shell(dev, cmd, forward, ctx, &exit_code, &err);
    rd_adb_close(dev);
    if (st != RD_OK)
        return an_fail(ctx, &err);
    return exit_code;
}

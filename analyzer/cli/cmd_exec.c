/* cmd_exec.c: runs one command by its spec: its own arguments, the subcommand, the parse, its work, the release. */
#include "cmd_spec.h"

#include <stdlib.h>
#include <string.h>

/* "suggest, search or verify" into buf. */
static const char *choice_list(const char *const *names, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; names[i] && len < size; i++) {
        const char *sep = i == 0 ? "" : names[i + 1] ? ", " : " or ";
        int n = snprintf(buf + len, size - len, "%s%s", sep, names[i]);
        len += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

/* The index of argv[1] among the subcommands into *sub, and *rest: the arguments after it, named by the command
   (argv[0]) as a command's own. Returns AN_GO, or the exit code after the help or a usage error. */
static int take_subcommand(an_cmd_ctx *ctx, const an_cmd_spec *spec, an_cmd_ctx *rest, int *sub)
{
    char names[256];
    if (ctx->argc < 2)
        return an_usage(ctx, "missing subcommand: %s", choice_list(spec->subcommands, names, sizeof names));
    const char *word = ctx->argv[1];
    if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0) {
        an_cmd_help(ctx->out, spec);
        return AN_EXIT_OK;
    }
    int k = 0;
    while (spec->subcommands[k] && strcmp(word, spec->subcommands[k]) != 0)
        k++;
    if (!spec->subcommands[k])
        return an_usage(ctx, "unknown subcommand '%s' (%s)", word, choice_list(spec->subcommands, names, sizeof names));
    *sub = k;
    *rest = *ctx;
    rest->argc = ctx->argc - 1;
    rest->argv = malloc((size_t)ctx->argc * sizeof *rest->argv);
    if (!rest->argv)
        return an_fail_nomem(ctx, "the command's options");
    rest->argv[0] = ctx->argv[0];
    for (int i = 2; i < ctx->argc; i++)
        rest->argv[i - 1] = ctx->argv[i];
    rest->argv[rest->argc] = NULL;
    return AN_GO;
}

int an_cmd_exec_args(an_cmd_ctx *ctx, const an_cmd_spec *spec, void *args)
{
    an_cmd_args own;
    an_cmd_args *cmd = spec->cmd_in_args ? (an_cmd_args *)((char *)args + spec->cmd_offset) : &own;
    an_cmd_ctx rest = *ctx; /* lives while main runs: the board options log through it */
    int sub = 0;
    if (spec->subcommands) {
        rest.argv = NULL;
        int rc = take_subcommand(ctx, spec, &rest, &sub);
        if (rc != AN_GO) {
            if (spec->args_fini)
                spec->args_fini(args);
            return rc;
        }
    }
    int rc = an_cmd_parse(&rest, spec, cmd, spec->take, args);
    cmd->sub = sub;
    if (rc == AN_GO)
        rc = spec->main(ctx, cmd, args);
    an_cmd_args_fini(cmd);
    if (spec->args_fini)
        spec->args_fini(args);
    if (spec->subcommands)
        free(rest.argv);
    return rc;
}

int an_cmd_exec(an_cmd_ctx *ctx, const an_cmd_spec *spec)
{
    const an_cmd_spec *other = spec->form ? spec->form(ctx) : NULL;
    if (other)
        spec = other;
    void *args = NULL;
    if (spec->args_size) {
        args = calloc(1, spec->args_size);
        if (!args)
            return an_fail_nomem(ctx, "the command's options");
        if (spec->args_defaults)
            memcpy(args, spec->args_defaults, spec->args_size);
    }
    int rc = an_cmd_exec_args(ctx, spec, args);
    free(args);
    return rc;
}

/* cli.c: rknn-diag's top level: the command table, --help and --version. */
#include "cmd_spec.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct an_command {
    const char *name;
    const an_cmd_spec *spec;
    const char *summary;
} an_command;

#define RD_CMD(name, spec, summary) {name, &spec, summary},
static const an_command commands[] = {
#include "commands.def"
};
#undef RD_CMD

static void print_main_help(FILE *f)
{
    fprintf(f, "usage: rknn-diag <command> [options]\n\n"
               "Finds which layer of a neural network loses accuracy on a Rockchip NPU, and why.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (commands[i].summary) /* NULL: a tool's command (board-run), documented in docs/ */
            fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n  rknn-diag <command> --help   options of one command\n"
               "  rknn-diag --version          the version\n\n"
               "exit codes: 0 success, 1 an accuracy gate failed, 2 usage error, 3 input or device error\n");
}

int rd_cli_run(int argc, char **argv, FILE *out, FILE *errs)
{
    if (argc < 2) {
        print_main_help(errs);
        return AN_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        print_main_help(out);
        return AN_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        fprintf(out, "rknn-diag %s\n", RD_VERSION);
        return AN_EXIT_OK;
    }
    const char *no_color = getenv("NO_COLOR");
    an_cmd_ctx ctx = {.argc = argc - 1,
                      .argv = argv + 1,
                      .out = out,
                      .errs = errs,
                      .color = isatty(fileno(errs)) && !(no_color && *no_color)};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, cmd) == 0)
            return an_cmd_exec(&ctx, commands[i].spec);
    fprintf(errs, "rknn-diag: unknown command '%s' (see rknn-diag --help)\n", cmd);
    return AN_EXIT_USAGE;
}

int rd_cli_main(int argc, char **argv)
{
    return rd_cli_run(argc, argv, stdout, stderr);
}

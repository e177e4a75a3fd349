/* cli_internal.h: what the command implementations of the analyzer share. */
#ifndef RD_AN_CLI_INTERNAL_H
#define RD_AN_CLI_INTERNAL_H

#include "rknn_diag/analyzer.h"

#include <stdbool.h>
#include <stdio.h>

/* Exit codes of the design. */
enum { AN_EXIT_OK = 0, AN_EXIT_GATE = 1, AN_EXIT_USAGE = 2, AN_EXIT_INPUT = 3 };

/* What a step of a command's parsing returns: AN_GO to go on, else the exit code to end the command with. */
enum { AN_GO = -1 };

/** What a command receives: its arguments (argv[0] is the command name) and the two streams. */
typedef struct an_cmd_ctx {
    int argc;
    char **argv;
    FILE *out;  /* results */
    FILE *errs; /* progress, warnings, errors */
    bool color; /* errs is a terminal and NO_COLOR is unset */
} an_cmd_ctx;

/* ---- option parsing: long options anywhere, --opt=value or --opt value, short -o value ---- */

typedef struct an_optspec {
    int id;           /* returned for this option; > 0 */
    const char *name; /* long name without "--" */
    char shrt;        /* short letter or 0 */
    const char *arg;  /* value placeholder shown in help, NULL for a flag */
    const char *help;
} an_optspec;

typedef struct an_opts {
    const an_optspec *spec;
    int n_spec;
    int argc;
    char **argv;
    int i;                /* next argv index */
    bool only_positional; /* after "--" */
    FILE *errs;
    const char *cmd; /* for messages */
} an_opts;

void an_opts_init(an_opts *p, const an_cmd_ctx *ctx, const an_optspec *spec, int n_spec);

/* What an_opts_next returns besides an option id (ids are > 0). */
enum { AN_OPT_POSITIONAL = 0, AN_OPT_END = -1, AN_OPT_BAD = -2 };

/**
 * Next option or positional. Returns the option id, AN_OPT_POSITIONAL (*value is it), AN_OPT_END at the end,
 * AN_OPT_BAD on a usage error (already printed).
 */
int an_opts_next(an_opts *p, const char **value);

/** Prints "usage" and the option table of a command. */
void an_print_help(FILE *f, const char *usage, const char *about, const an_optspec *spec, int n_spec);
/** Prints the lines of an option table, as an_print_help does. */
void an_print_opts(FILE *f, const an_optspec *spec, int n_spec);

/** Parses a non-negative integer option value; prints a usage error and returns false when bad. */
bool an_parse_int(const char *cmd, const char *opt, const char *text, long min, long max, long *out, FILE *errs);

/**
 * Parses a pixel count for --max-image-pixels: N, N with a K or M suffix (thousands, millions) or WxH,
 * in 1..RD_MAX_IMAGE_PIXELS. RD_E_USAGE naming opt otherwise.
 */
rd_status an_parse_pixel_count(const char *opt, const char *text, uint64_t *out, rd_error *err);

/** An --input-layout value: "nhwc" or "nchw" into *out. RD_E_USAGE naming opt and the value otherwise. */
rd_status an_parse_input_layout(const char *opt, const char *text, rd_input_layout *out, rd_error *err);

/** Prints "rknn-diag CMD: error: ..." (red on a terminal; RD_E_USAGE adds the hint to --help) and returns
    the exit code of err->code. */
int an_fail(const an_cmd_ctx *ctx, const rd_error *err);
/** Prints "rknn-diag CMD: error: out of memory (what)" and returns 3: for an allocation failing before
    there is an rd_error to fill. */
int an_fail_nomem(const an_cmd_ctx *ctx, const char *what);
struct cJSON;
/** Prints a --json tree built with an_json_add*: when ok is false (a member could not be made) or the text
    cannot be made, nothing is printed and the out-of-memory error is returned (3), never a tree missing
    members. Deletes root. */
int an_emit_json(const an_cmd_ctx *ctx, struct cJSON *root, bool ok);
/** Usage error: prints the message and a hint to --help; returns 2. */
int an_usage(const an_cmd_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** `rknn-diag merge` of `accuracy --shard` parts (cmd_accuracy.c): the shards' command line again into out_dir. */
int an_accuracy_merge(an_cmd_ctx *ctx, const char *const *paths, size_t n, const char *out_dir);

#endif

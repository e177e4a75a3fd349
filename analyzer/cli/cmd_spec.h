/*
 * cmd_spec.h: a command described once (after Redis's command table and curl's tool options): its usage,
 * summary, own options and the option groups it takes, read by one parser (an_cmd_parse) and one help
 * printer (an_cmd_help), and how it runs, read by one runner (an_cmd_exec). A group (the input shapes, the
 * subgraph cut, the quantization options, the built-model options, --threads, the board options, the board's
 * chip, sharding, the outside scorer) is parsed, checked and documented in one place for every command that
 * takes it.
 *
 *     static int x_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args);   // after a successful parse
 *     const an_cmd_spec an_cmd_x = {                                      // listed in commands.def
 *         .usage = "rknn-diag x MODEL.onnx -o FILE", .about = "...", AN_SPEC_OPTS(own_options),
 *         .output = {0, "output", 'o', "FILE", "the file to write (required)"}, .output_missing = "missing -o FILE",
 *         .groups = AN_OG_SHAPE | AN_OG_QUANT, .model = "MODEL.onnx",
 *         AN_SPEC_ARGS(x_args, NULL), .take = take_option, .main = x_main};
 *
 * an_cmd_exec allocates the command's own arguments (x_args, from its defaults), parses into them and cmd,
 * runs main, then releases cmd and them, whatever happened: a command's code is its work, not this frame.
 */
#ifndef RD_AN_CMD_SPEC_H
#define RD_AN_CMD_SPEC_H

#include "cli_internal.h"
#include "cli_model_args.h"
#include "config_model.h"
#include "quant_setup.h"
#include "rknn_diag/adb.h"

#include <stddef.h>

/* The option groups (an_cmd_spec.groups). */
enum {
    AN_OG_SHAPE = 1u << 0,   /* --input-shape NAME=D0,D1,.. (an_cmd_args.shapes) */
    AN_OG_QUANT = 1u << 1,   /* the quantization options and --threads (quant_setup.h; an_cmd_args.q) */
    AN_OG_BUILT = 1u << 2,   /* --rknn, --rknn-build-log (an_cmd_args.q) */
    AN_OG_THREADS = 1u << 3, /* --threads alone, for a command without AN_OG_QUANT (an_cmd_args.q) */
    AN_OG_BOARD = 1u << 4,   /* the board choice as adb has it (cli_adb.h; an_cmd_args.adb) */
    AN_OG_SAMPLES = 1u << 5, /* --inputs FILE..., --samples N: the samples analysed (an_cmd_args.inputs) */
    AN_OG_CUT = 1u << 6,     /* --graph-inputs, --graph-outputs (an_cmd_args.q.flag_cut): every command that takes
                                a model; AN_OG_QUANT brings it too (the config's subgraphs on the command line) */
    AN_OG_JSON = 1u << 7,    /* --json: print JSON instead of text (an_cmd_args.json) */
    AN_OG_TARGET = 1u << 9,  /* --target CHIP (-t): the board's chip, which sets --platform (an_cmd_args.target) */
    AN_OG_SHARD = 1u << 10,  /* --shard K/N: one part of the samples into -o DIR/partial.json (an_cmd_args.shard_*) */
    AN_OG_SCORE = 1u << 8, /* --score-cmd, --score-timeout: an outside scorer (an_cmd_args.score_cmd, .score_timeout) */
};

/* Option ids of the groups that are not declared elsewhere (a command's own ids stay below 100). */
enum {
    AN_OPT_INPUT_SHAPE = 300,
    AN_OPT_HELP,
    AN_OPT_OUTPUT,
    AN_OPT_INPUTS,
    AN_OPT_SAMPLES,
    AN_OPT_JSON,
    AN_OPT_SCORE_CMD,
    AN_OPT_SCORE_TIMEOUT,
    AN_OPT_TARGET,
    AN_OPT_SHARD,
};

/** A required option: its id and the usage error when it is absent. */
typedef struct an_need {
    int id;
    const char *missing; /* "missing -o OUT.onnx" */
} an_need;

/** How an own option's value is kept by the parser itself (an_optset), without code in the command. */
typedef enum an_set_kind {
    AN_SET_STR = 1, /* const char *: the value */
    AN_SET_FLAG,    /* bool: true */
    AN_SET_LONG,    /* long: an integer in min..max (an_parse_int's message otherwise) */
    AN_SET_INT,     /* int: the same, for min..max within int */
    AN_SET_DOUBLE,  /* double: a number in lo..hi ("--NAME expects EXPECTS, got 'V'" otherwise) */
    AN_SET_CHOICE,  /* an enum (int): the index of the value in choices (the same message otherwise) */
    AN_SET_SWEEP,   /* long: --sweep-points N, 0 (every k) or at least 2 (the two ends) */
} an_set_kind;

/** An own option kept in a member of the command's arguments (the user pointer given to an_cmd_parse). */
typedef struct an_optset {
    int id;
    an_set_kind kind;
    size_t offset;              /* offsetof(args type, member) */
    long min, max;              /* AN_SET_LONG, AN_SET_INT */
    double lo, hi;              /* AN_SET_DOUBLE */
    const char *expects;        /* AN_SET_DOUBLE, AN_SET_CHOICE: what the value must be, for the usage error */
    const char *const *choices; /* AN_SET_CHOICE: the names of the enum's values 0, 1, ..., then NULL */
} an_optset;

#define AN_SET(id, kind, type, member)                           \
    {                                                            \
        id, kind, offsetof(type, member), 0, 0, 0, 0, NULL, NULL \
    }
#define AN_SET_RANGE(id, type, member, min, max)                            \
    {                                                                       \
        id, AN_SET_LONG, offsetof(type, member), min, max, 0, 0, NULL, NULL \
    }
#define AN_SET_INT_RANGE(id, type, member, min, max)                       \
    {                                                                      \
        id, AN_SET_INT, offsetof(type, member), min, max, 0, 0, NULL, NULL \
    }
#define AN_SET_REAL(id, type, member, lo, hi, expects)                         \
    {                                                                          \
        id, AN_SET_DOUBLE, offsetof(type, member), 0, 0, lo, hi, expects, NULL \
    }
#define AN_SET_COS(id, type, member) AN_SET_REAL(id, type, member, -1.0, 1.0, "a cosine in -1..1")
#define AN_SET_CHOICE(id, type, member, choices, expects)                       \
    {                                                                           \
        id, AN_SET_CHOICE, offsetof(type, member), 0, 0, 0, 0, expects, choices \
    }

/* Designated initialisers of an_cmd_spec's tables: .opts/.n_opts, .needs/.n_needs and .sets/.n_sets from
   one array. */
#define AN_SPEC_OPTS(table) .opts = table, .n_opts = (int)(sizeof table / sizeof table[0])
#define AN_SPEC_NEEDS(table) .needs = table, .n_needs = (int)(sizeof table / sizeof table[0])
#define AN_SPEC_SETS(table) .sets = table, .n_sets = (int)(sizeof table / sizeof table[0])

struct an_cmd_args;

/**
 * Takes one of the command's own options (id from its table, unless an_cmd_spec.sets keeps it) or, when
 * an_cmd_spec.model and .max_positional are not set, a positional (id AN_OPT_POSITIONAL). Returns AN_GO, or the exit
 * code after printing why (an_usage). NULL for a command without options or positionals of its own.
 */
typedef int (*an_take_fn)(an_cmd_ctx *ctx, void *user, int id, const char *value);

/** A command's work (an_cmd_spec.main): cmd is what the parser filled, args its own arguments (NULL without
    AN_SPEC_ARGS). Returns the exit code. */
typedef int (*an_main_fn)(an_cmd_ctx *ctx, struct an_cmd_args *cmd, void *args);

/** One command: what `rknn-diag CMD --help` prints, what an_cmd_parse accepts and how an_cmd_exec runs it. */
typedef struct an_cmd_spec {
    const char *usage;      /* "rknn-diag quantize MODEL.onnx ..." */
    const char *about;      /* the summary paragraph */
    const an_optspec *opts; /* the command's own options (--help is added) */
    int n_opts;
    const an_need *needs; /* required own options, checked after the model and the output in this order */
    int n_needs;
    const an_optset *sets; /* own options the parser keeps itself; the others go to the take function */
    int n_sets;
    an_optspec output;              /* the output option (its id is ignored; name NULL: none), kept in
                                       an_cmd_args.output and listed first */
    const char *output_missing;     /* the usage error when the output is required and absent */
    unsigned groups;                /* AN_OG_* */
    const char *model;              /* "MODEL.onnx": the one positional is the model, kept in an_cmd_args.model;
                                       NULL: positionals go to the command's take function */
    bool model_optional;            /* the model may come from elsewhere (-c): the command checks */
    const char *model_twice;        /* appended to "one model only (got 'A' and 'B')", e.g. "; give samples with ..." */
    int max_positional;             /* without .model: positionals kept in an_cmd_args.pos, at most this many
                                       (0: they go to the take function, or are refused without one) */
    bool rest_positional;           /* after the first positional every argument is one (shell's CMD...) */
    void (*more_help)(FILE *f);     /* printed after the options (inspect: the .rknn part) */
    const char *const *subcommands; /* NULL-terminated: the first argument names one (hybrid), its index goes
                                       to an_cmd_args.sub and the options follow it */

    /* How an_cmd_exec runs it. */
    an_main_fn main;           /* the command's work, after a successful parse */
    an_take_fn take;           /* its own options and positionals (NULL: none) */
    size_t args_size;          /* its own arguments (AN_SPEC_ARGS): allocated by an_cmd_exec (0: none) */
    const void *args_defaults; /* their values before parsing (NULL: all zero) */
    bool cmd_in_args;          /* an_cmd_args is their member at cmd_offset (AN_SPEC_ARGS_CMD) */
    size_t cmd_offset;
    void (*args_fini)(void *args);                            /* releases what take put in them (NULL: nothing) */
    const struct an_cmd_spec *(*form)(const an_cmd_ctx *ctx); /* another spec for these arguments (inspect
                                                                  of a .rknn), or NULL for this one */
} an_cmd_spec;

/* The command's own arguments: type, and a pointer to their defaults (a const TYPE, or NULL for zeroes). */
#define AN_SPEC_ARGS(type, defaults) .args_size = sizeof(type), .args_defaults = (const type *)(defaults)
/* The same when they hold the parsed an_cmd_args as member (helpers reach both through one pointer). */
#define AN_SPEC_ARGS_CMD(type, member, defaults) \
    AN_SPEC_ARGS(type, defaults), .cmd_in_args = true, .cmd_offset = offsetof(type, member)

#define AN_MAX_POSITIONAL 8

/**
 * What the parser fills: the model, the output and the groups' values. an_cmd_parse initialises it (the
 * quantization options as an_quant_opts_init, the board options logging to the error stream); the command
 * releases it with an_cmd_args_fini.
 */
typedef struct an_cmd_args {
    const char *model;                  /* the positional, when an_cmd_spec.model is set */
    const char *pos[AN_MAX_POSITIONAL]; /* the positionals, when an_cmd_spec.max_positional is set */
    int n_pos;
    const char *output; /* an_cmd_spec.output */
    rd_input_shape shapes[AN_MAX_INPUTS];
    an_name_buf shape_names[AN_MAX_INPUTS];
    size_t n_shapes;
    const char *inputs[AN_MAX_INPUTS]; /* AN_OG_SAMPLES */
    size_t n_inputs;
    long samples;          /* AN_OG_SAMPLES: default 1 */
    bool json;             /* AN_OG_JSON */
    const char *score_cmd; /* AN_OG_SCORE: NULL when not given */
    double score_timeout;  /* AN_OG_SCORE: seconds, default AN_SCORE_DEFAULT_TIMEOUT */
    const char *target;    /* AN_OG_TARGET: a known chip, agreeing with --platform (which it sets), or NULL */
    int shard_k, shard_n;  /* AN_OG_SHARD: --shard K/N (shard_n 0: not given) */
    an_quant_opts q;       /* AN_OG_QUANT, AN_OG_CUT, AN_OG_BUILT, AN_OG_THREADS (q.model_path is the model) */
    rd_adb_options adb;    /* AN_OG_BOARD */
    bool board_given;      /* one of the board options was given */
    int sub;               /* the index of the subcommand in an_cmd_spec.subcommands */
} an_cmd_args;

/**
 * Parses ctx's arguments by spec: groups into args, own options and other positionals to take(user, ...),
 * then checks the model, the output and the required options (an_cmd_spec.needs) in order, and that --target
 * agrees with --platform (it sets it). Returns AN_GO to
 * run the command, AN_EXIT_OK after --help, AN_EXIT_USAGE after printing a usage error. args is initialised
 * first, whatever the result: release it with an_cmd_args_fini.
 */
int an_cmd_parse(an_cmd_ctx *ctx, const an_cmd_spec *spec, an_cmd_args *args, an_take_fn take, void *user);

/** Releases what the quantization options made (thread pool, built model). */
void an_cmd_args_fini(an_cmd_args *args);

/**
 * Runs a command: picks its form (an_cmd_spec.form), allocates its own arguments from their defaults, reads the
 * subcommand, parses (an_cmd_parse with spec->take), runs spec->main on AN_GO, then releases the parsed
 * arguments (an_cmd_args_fini, spec->args_fini) and frees its own. Returns the exit code: main's, 0 after
 * --help, 2 on a usage error, 3 without memory.
 */
int an_cmd_exec(an_cmd_ctx *ctx, const an_cmd_spec *spec);

/** an_cmd_exec with the command's own arguments prepared by the caller (args_size bytes, not freed here). */
int an_cmd_exec_args(an_cmd_ctx *ctx, const an_cmd_spec *spec, void *args);

/* The commands (one file each), an_cmd_exec'd by the dispatcher. */
#define RD_CMD(name, spec, summary) extern const an_cmd_spec spec;
#include "commands.def"
#undef RD_CMD

/** Prints the command's help: usage, summary, its own options, then each group's under its heading. */
void an_cmd_help(FILE *f, const an_cmd_spec *spec);

/**
 * The model the command line names (args->model, --input-shape) as an_model_load_configured's request from
 * command ctx; dynamic_refusal as an_model_request's (NULL: the command runs once per dynamic_input set).
 */
an_model_request an_cmd_model_request(const an_cmd_ctx *ctx, const an_cmd_args *args, const char *dynamic_refusal);

/**
 * The model of a command that takes it alone, without -c or the quantization options (inspect, prune, onnx-edit:
 * AN_OG_SHAPE | AN_OG_CUT): any format by content, --input-shape, cut at --graph-inputs/--graph-outputs, through
 * an_model_load_configured as every command. info (may be NULL) receives the format; allow_unsupported_ops keeps
 * ops the reference cannot run (inspect lists them).
 */
rd_status an_cmd_open_model(const an_cmd_ctx *ctx, an_cmd_args *args, bool allow_unsupported_ops,
                            rd_frontend_info *info, rd_model **out, rd_error *err);

/**
 * The calibrated simulation of a command that writes integer parameters (export-qdq, quantize): the model
 * as configured (an_cmd_model_request with dynamic_refusal), its dtype one of dtypes[0..n_dtypes-1], else
 * RD_E_USAGE "CMD writes WHAT parameters: --dtype must be A, B or C (got D)", then an_quant_build_sim (no
 * fallback inputs). The caller destroys *m and *s, set or NULL, whatever the result.
 */
rd_status an_cmd_quant_sim(const an_cmd_ctx *ctx, an_cmd_args *args, const char *dynamic_refusal, const char *what,
                           const rd_qdtype *dtypes, size_t n_dtypes, rd_model **m, rd_sim **s, rd_error *err);

/** A repeated option opt ("--fault"): value appended to list[*n], at most max of them. Returns AN_GO or the
    usage error "too many OPT options (at most MAX)". */
int an_take_repeated(an_cmd_ctx *ctx, const char *opt, const char *value, const char **list, size_t *n, size_t max);

#endif

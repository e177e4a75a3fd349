/* cmd_spec.c: the one parser and help printer of the commands (cmd_spec.h). */
#include "cmd_spec.h"
#include "accuracy_partial.h"
#include "cli_adb.h"
#include "score_cmd.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The groups, in the order --help shows them. */
static const an_optspec shape_opts[] = {
    {AN_OPT_INPUT_SHAPE, "input-shape", 0, "NAME=D0,D1,..", "fix symbolic input dims (repeat per input)"},
};
/* The subgraph cut (config_model.h): the config's subgraphs on the command line, taken into an_cmd_args.q. */
static const an_optspec cut_opts[] = {
    {AN_QOPT_GRAPH_INPUTS, "graph-inputs", 0, "NAME,..",
     "cut the model at these tensors, its inputs from then on (subgraphs.inputs; TensorFlow: internal "
     "tensors, \"name:0\" too, as load_tensorflow's inputs)"},
    {AN_QOPT_GRAPH_OUTPUTS, "graph-outputs", 0, "NAME,..",
     "keep these outputs and what they need only (subgraphs.outputs; load_tensorflow's outputs)"},
};
static const an_optspec quant_opts[] = {AN_QUANT_OPTSPECS};
static const an_optspec built_opts[] = {AN_BUILT_OPTSPECS};
static const an_optspec threads_opts[] = {AN_THREADS_OPTSPEC};
static const an_optspec board_opts[] = {AN_ADB_OPTSPECS};
static const an_optspec samples_opts[] = {
    {AN_OPT_INPUTS, "inputs", 'i', "FILE", "the sample analysed: one file per model input, in input order (repeat)"},
    {AN_OPT_SAMPLES, "samples", 0, "N", "without --inputs: analyse the first N lines of the dataset (default 1)"},
};
/* The outside scorer (docs/score-cmd.md): eval's score task, hybrid search's target. */
static const an_optspec score_opts[] = {
    {AN_OPT_SCORE_CMD, "score-cmd", 0, "CMD",
     "your scorer (mAP, top-1, ...): run with a folder of outputs (.npy + index.json) as $1 or {outputs}, "
     "prints one number, higher is better"},
    {AN_OPT_SCORE_TIMEOUT, "score-timeout", 0, "S",
     "seconds one --score-cmd run may take, 1..604800 (default 600); then it and what it started are stopped"},
};
static const an_optspec target_opts[] = {
    {AN_OPT_TARGET, "target", 't', "CHIP",
     "the board's chip: rk3566, rk3588, rv1106, ... (its dump folder and .txt dump layout; sets --platform)"},
};
static const an_optspec shard_opts[] = {
    {AN_OPT_SHARD, "shard", 0, "K/N",
     "run part K of N of the samples into -o DIR/partial.json; `rknn-diag merge` joins the parts"},
};
static const an_optspec json_opts[] = {{AN_OPT_JSON, "json", 0, NULL, "print JSON instead of text"}};
static const an_optspec help_opt = {AN_OPT_HELP, "help", 'h', NULL, "show this help"};

typedef struct an_optgroup {
    unsigned flag;
    const char *title;
    const an_optspec *opts;
    int n_opts;
} an_optgroup;

#define GROUP(flag, title, table)                                 \
    {                                                             \
        flag, title, table, (int)(sizeof table / sizeof table[0]) \
    }
static const an_optgroup groups[] = {
    GROUP(AN_OG_SAMPLES, "samples analysed", samples_opts),
    GROUP(AN_OG_SHAPE, "model options", shape_opts),
    GROUP(AN_OG_CUT, "subgraph cut (docs/frontends.md)", cut_opts),
    GROUP(AN_OG_QUANT, "quantization options (docs/quantization-cfg.md, docs/config.md)", quant_opts),
    GROUP(AN_OG_THREADS, "threads", threads_opts),
    GROUP(AN_OG_BUILT, "built-model options (docs/rknn-model.md)", built_opts),
    GROUP(AN_OG_TARGET, "board target (docs/board.md)", target_opts),
    GROUP(AN_OG_BOARD, "board options (docs/adb.md)", board_opts),
    GROUP(AN_OG_SHARD, "sharding (docs/sharding.md)", shard_opts),
    GROUP(AN_OG_SCORE, "outside scorer (docs/score-cmd.md)", score_opts),
    GROUP(AN_OG_JSON, "output", json_opts),
};
#undef GROUP
#define N_GROUPS ((int)(sizeof groups / sizeof groups[0]))

/* Whether spec takes group g (--threads alone only without the quantization options, which have it; the cut
   with them, as the config's subgraphs are). */
static bool takes_group(const an_cmd_spec *spec, int g)
{
    if (groups[g].flag == AN_OG_CUT)
        return spec->groups & (AN_OG_CUT | AN_OG_QUANT);
    return (spec->groups & groups[g].flag) && !(groups[g].flag == AN_OG_THREADS && (spec->groups & AN_OG_QUANT));
}

/* Upper bound of one command's option table: its own options, every group and --help. */
#define MAX_TABLE 128

void an_cmd_help(FILE *f, const an_cmd_spec *spec)
{
    fprintf(f, "usage: %s\n\n%s\n\noptions:\n", spec->usage, spec->about);
    if (spec->output.name)
        an_print_opts(f, &spec->output, 1);
    an_print_opts(f, spec->opts, spec->n_opts);
    an_print_opts(f, &help_opt, 1);
    for (int g = 0; g < N_GROUPS; g++) {
        if (!takes_group(spec, g))
            continue;
        fprintf(f, "\n%s:\n", groups[g].title);
        an_print_opts(f, groups[g].opts, groups[g].n_opts);
    }
    if (spec->more_help) {
        fputc('\n', f);
        spec->more_help(f);
    }
}

/* The command's whole table: own options, its groups, --help. */
static int build_table(const an_cmd_spec *spec, an_optspec *table)
{
    int n = 0;
    if (spec->output.name) {
        table[n] = spec->output;
        table[n++].id = AN_OPT_OUTPUT;
    }
    for (int k = 0; k < spec->n_opts && n < MAX_TABLE - 1; k++)
        table[n++] = spec->opts[k];
    for (int g = 0; g < N_GROUPS; g++) {
        if (!takes_group(spec, g))
            continue;
        for (int k = 0; k < groups[g].n_opts && n < MAX_TABLE - 1; k++)
            table[n++] = groups[g].opts[k];
    }
    table[n++] = help_opt;
    return n;
}

static bool is_board_option(int id)
{
    return id >= AN_OPT_USB && id <= AN_OPT_TIMEOUT;
}

/* One option of a group: AN_GO when taken, else the exit code. */
static int take_group_option(an_cmd_ctx *ctx, an_cmd_args *args, int id, const char *value)
{
    rd_error err = {0};
    switch (id) {
    case AN_OPT_OUTPUT:
        args->output = value;
        return AN_GO;
    case AN_OPT_INPUT_SHAPE:
        if (an_parse_input_shape(value, args->shape_names, args->shapes, &args->n_shapes, &err) != RD_OK)
            return an_usage(ctx, "%s", err.msg);
        return AN_GO;
    case AN_OPT_INPUTS:
        if (args->n_inputs == AN_MAX_INPUTS)
            return an_usage(ctx, "too many --inputs");
        args->inputs[args->n_inputs++] = value;
        return AN_GO;
    case AN_OPT_JSON:
        args->json = true;
        return AN_GO;
    case AN_OPT_SCORE_CMD:
        if (!*value)
            return an_usage(ctx, "--score-cmd expects a command, got an empty one");
        args->score_cmd = value;
        return AN_GO;
    case AN_OPT_SCORE_TIMEOUT: { /* whole seconds up to a week */
        long seconds;
        if (!an_parse_int(ctx->argv[0], "--score-timeout", value, 1, 7 * 86400, &seconds, ctx->errs))
            return AN_EXIT_USAGE;
        args->score_timeout = (double)seconds;
        return AN_GO;
    }
    case AN_OPT_TARGET:
        if (!rd_platform_find(value))
            return an_usage(
                ctx, "--target: unknown target '%s' (rk3566, rk3568, rk3588, rk3562, rk3576, rv1103, rv1106, ...)",
                value);
        args->target = value;
        return AN_GO;
    case AN_OPT_SHARD:
        if (!an_acc_parse_shard(value, &args->shard_k, &args->shard_n))
            return an_usage(ctx, "--shard %s: expected K/N with 0 <= K < N (e.g. $SLURM_ARRAY_TASK_ID/4)", value);
        return AN_GO;
    case AN_OPT_SAMPLES:
        return an_parse_int(ctx->argv[0], "--samples", value, 1, 100000, &args->samples, ctx->errs) ? AN_GO
                                                                                                    : AN_EXIT_USAGE;
    }
    if (is_board_option(id)) {
        int code = AN_EXIT_USAGE;
        if (!an_adb_option(ctx, &args->adb, id, value, &code))
            return code;
        args->board_given = true;
        return AN_GO;
    }
    an_quant_take(&args->q, id, value);
    return AN_GO;
}

/* --sweep-points N: 0 (every k) or at least 2 (the two ends). */
static int take_sweep_points(an_cmd_ctx *ctx, const char *value, long *out)
{
    if (!an_parse_int(ctx->argv[0], "--sweep-points", value, 0, 1000000, out, ctx->errs))
        return AN_EXIT_USAGE;
    if (*out == 1)
        return an_usage(ctx, "--sweep-points needs at least 2 points (the two ends), or 0 for every k");
    return AN_GO;
}

/* An own option the parser keeps itself: into its member of the command's arguments user. */
static int take_set(an_cmd_ctx *ctx, const an_cmd_spec *spec, const an_optset *set, void *user, const char *value)
{
    char *member = (char *)user + set->offset;
    const char *name = "";
    for (int k = 0; k < spec->n_opts; k++)
        if (spec->opts[k].id == set->id)
            name = spec->opts[k].name;
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", name);
    switch (set->kind) {
    case AN_SET_STR:
        *(const char **)(void *)member = value;
        return AN_GO;
    case AN_SET_FLAG:
        *(bool *)(void *)member = true;
        return AN_GO;
    case AN_SET_LONG:
        return an_parse_int(ctx->argv[0], opt, value, set->min, set->max, (long *)(void *)member, ctx->errs)
                   ? AN_GO
                   : AN_EXIT_USAGE;
    case AN_SET_INT: {
        long v;
        if (!an_parse_int(ctx->argv[0], opt, value, set->min, set->max, &v, ctx->errs))
            return AN_EXIT_USAGE;
        *(int *)(void *)member = (int)v;
        return AN_GO;
    }
    case AN_SET_DOUBLE: {
        char *end = NULL;
        double v = strtod(value, &end);
        if (!end || end == value || *end || !(v >= set->lo && v <= set->hi))
            return an_usage(ctx, "%s expects %s, got '%s'", opt, set->expects, value);
        *(double *)(void *)member = v;
        return AN_GO;
    }
    case AN_SET_SWEEP:
        return take_sweep_points(ctx, value, (long *)(void *)member);
    case AN_SET_CHOICE:
        for (int k = 0; set->choices[k]; k++)
            if (strcmp(value, set->choices[k]) == 0) {
                *(int *)(void *)member = k;
                return AN_GO;
            }
        return an_usage(ctx, "%s expects %s, got '%s'", opt, set->expects, value);
    }
    return AN_GO;
}

static const an_optset *find_set(const an_cmd_spec *spec, int id)
{
    for (int k = 0; k < spec->n_sets; k++)
        if (spec->sets[k].id == id)
            return &spec->sets[k];
    return NULL;
}

static bool own_option(const an_cmd_spec *spec, int id)
{
    for (int k = 0; k < spec->n_opts; k++)
        if (spec->opts[k].id == id)
            return true;
    return false;
}

/* The required options not given, in the order of spec->needs. */
static int check_needs(an_cmd_ctx *ctx, const an_cmd_spec *spec, const bool *given)
{
    for (int k = 0; k < spec->n_needs; k++) {
        bool seen = false;
        for (int j = 0; j < spec->n_opts; j++)
            if (spec->opts[j].id == spec->needs[k].id && given[j])
                seen = true;
        if (!seen)
            return an_usage(ctx, "%s", spec->needs[k].missing);
    }
    return AN_GO;
}

static void args_init(an_cmd_ctx *ctx, an_cmd_args *args)
{
    memset(args, 0, sizeof *args);
    an_quant_opts_init(&args->q);
    args->adb.log = an_adb_log;
    args->adb.log_user = ctx;
    args->samples = 1;
    args->score_timeout = AN_SCORE_DEFAULT_TIMEOUT;
}

/* A --target also sets --platform; the two must agree when both are given. */
static int target_platform(an_cmd_ctx *ctx, an_quant_opts *q, const char *target)
{
    if (!target)
        return AN_GO;
    if (q->platform && strcasecmp(q->platform, target) != 0)
        return an_usage(ctx, "--target %s and --platform %s disagree", target, q->platform);
    q->platform = target;
    return AN_GO;
}

int an_cmd_parse(an_cmd_ctx *ctx, const an_cmd_spec *spec, an_cmd_args *args, an_take_fn take, void *user)
{
    an_optspec table[MAX_TABLE];
    bool given[MAX_TABLE] = {false};
    int n = build_table(spec, table);
    args_init(ctx, args);
    an_opts p;
    an_opts_init(&p, ctx, table, n);
    const char *v;
    int id, rc = AN_GO;
    while (rc == AN_GO && (id = an_opts_next(&p, &v)) != AN_OPT_END) {
        if (id == AN_OPT_BAD)
            return AN_EXIT_USAGE;
        if (id == AN_OPT_HELP) {
            an_cmd_help(ctx->out, spec);
            return AN_EXIT_OK;
        }
        if (id == AN_OPT_POSITIONAL && spec->model) {
            if (args->model)
                return an_usage(ctx, "one model only (got '%s' and '%s')%s", args->model, v,
                                spec->model_twice ? spec->model_twice : "");
            args->model = args->q.model_path = v;
        } else if (id == AN_OPT_POSITIONAL && spec->max_positional) {
            if (args->n_pos == spec->max_positional || args->n_pos == AN_MAX_POSITIONAL)
                return an_usage(ctx, "unexpected argument '%s'", v);
            args->pos[args->n_pos++] = v;
        } else if (id == AN_OPT_POSITIONAL) {
            if (!take)
                return an_usage(ctx, "unexpected argument '%s'", v);
            rc = take(ctx, user, id, v);
            p.only_positional = p.only_positional || spec->rest_positional;
        } else if (own_option(spec, id)) {
            for (int k = 0; k < spec->n_opts; k++)
                given[k] = given[k] || spec->opts[k].id == id;
            const an_optset *set = find_set(spec, id);
            rc = set ? take_set(ctx, spec, set, user, v) : take ? take(ctx, user, id, v) : AN_GO;
        } else {
            rc = take_group_option(ctx, args, id, v);
        }
    }
    if (rc != AN_GO)
        return rc;
    if (spec->model && !spec->model_optional && !args->model)
        return an_usage(ctx, "missing %s", spec->model);
    if (spec->output_missing && !args->output)
        return an_usage(ctx, "%s", spec->output_missing);
    rc = check_needs(ctx, spec, given);
    return rc == AN_GO ? target_platform(ctx, &args->q, args->target) : rc;
}

void an_cmd_args_fini(an_cmd_args *args)
{
    an_quant_opts_fini(&args->q);
}

int an_take_repeated(an_cmd_ctx *ctx, const char *opt, const char *value, const char **list, size_t *n, size_t max)
{
    if (*n == max)
        return an_usage(ctx, "too many %s options (at most %zu)", opt, max);
    list[(*n)++] = value;
    return AN_GO;
}

an_model_request an_cmd_model_request(const an_cmd_ctx *ctx, const an_cmd_args *args, const char *dynamic_refusal)
{
    return (an_model_request){.command = ctx->argv[0],
                              .path = args->model,
                              .shapes = args->shapes,
                              .n_shapes = args->n_shapes,
                              .errs = ctx->errs,
                              .dynamic_refusal = dynamic_refusal};
}

rd_status an_cmd_quant_sim(const an_cmd_ctx *ctx, an_cmd_args *args, const char *dynamic_refusal, const char *what,
                           const rd_qdtype *dtypes, size_t n_dtypes, rd_model **m, rd_sim **s, rd_error *err)
{
    *m = NULL;
    *s = NULL;
    an_model_request req = an_cmd_model_request(ctx, args, dynamic_refusal);
    rd_status st = an_model_load_configured(&args->q, &req, m, err);
    if (st != RD_OK)
        return st;
    const rd_qdtype dt = args->q.cfg.dtype;
    bool allowed = false;
    char names[200] = "";
    size_t len = 0;
    for (size_t k = 0; k < n_dtypes; k++) {
        allowed = allowed || dtypes[k] == dt;
        const char *sep = k == 0 ? "" : k + 1 == n_dtypes ? " or " : ", ";
        len += (size_t)snprintf(names + len, len < sizeof names ? sizeof names - len : 0, "%s%s", sep,
                                rd_qdtype_name(dtypes[k]));
    }
    if (!allowed)
        return rd_errorf(err, RD_E_USAGE, "%s writes %s parameters: --dtype must be %s (got %s)", ctx->argv[0], what,
                         names, rd_qdtype_name(dt));
    return an_quant_build_sim(&args->q, *m, NULL, ctx->errs, ctx->color, s, err);
}

rd_status an_cmd_open_model(const an_cmd_ctx *ctx, an_cmd_args *args, bool allow_unsupported_ops,
                            rd_frontend_info *info, rd_model **out, rd_error *err)
{
    an_model_request req = an_cmd_model_request(ctx, args, NULL);
    req.model_only = true;
    req.allow_unsupported_ops = allow_unsupported_ops;
    req.info = info;
    return an_model_load_configured(&args->q, &req, out, err);
}

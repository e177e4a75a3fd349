/*
 * cmd_merge.c: `rknn-diag merge PART... [-o DIR] [--json] [--show N]`: the shards of one `eval --shard K/N`
 * run (their partial.json files, or the folders holding them) checked against each other and turned into
 * the report a single process gives, bit for bit (docs/sharding.md). Parts of `accuracy --shard K/N` go to
 * an_accuracy_merge (cmd_accuracy.c), which writes the snapshot the one-process run writes.
 */
#include "accuracy_partial.h"
#include "cmd_spec.h"
#include "eval_task.h"

#include <stdlib.h>

enum { OPT_SHOW = 1 };

static const an_optspec merge_opts[] = {
    {OPT_SHOW, "show", 0, "N", "list the first N samples that change most (default 10, as eval)"},
};

typedef struct merge_args {
    const char **parts; /* argc entries, made for the first */
    size_t n;
    long show;
} merge_args;

static const merge_args merge_defaults = {.show = 10};

static int take_option(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    merge_args *a = user;
    if (id == OPT_SHOW)
        return an_parse_int(ctx->argv[0], "--show", v, 0, 100000, &a->show, ctx->errs) ? AN_GO : AN_EXIT_USAGE;
    if (!a->parts && !(a->parts = calloc((size_t)ctx->argc, sizeof *a->parts)))
        return an_fail_nomem(ctx, "the list of parts");
    a->parts[a->n++] = v; /* a part */
    return AN_GO;
}

static void merge_args_fini(void *args)
{
    free(((merge_args *)args)->parts);
}

static int merge_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    const merge_args *a = args;
    const char **parts = a->parts;
    size_t n = a->n;
    const char *out_dir = cmd->output;
    bool json = cmd->json;
    long show = a->show;
    int rc = AN_GO;
    if (n == 0)
        rc = an_usage(ctx, "give the shards: rknn-diag merge OUT/shard-*/ -o OUT");
    if (rc == AN_GO && an_acc_partial_sniff(parts[0]))
        rc = out_dir ? an_accuracy_merge(ctx, parts, n, out_dir)
                     : an_usage(ctx, "merging accuracy shards writes a snapshot: give -o DIR");
    if (rc == AN_GO) {
        rd_error err = {0};
        cJSON *merged = NULL;
        rd_status st = an_eval_partials_merge(parts, n, &merged, &err);
        if (st == RD_OK && out_dir)
            st = rd_dir_make(out_dir, RD_DIR_PARENTS, &err);
        rc = st == RD_OK ? an_eval_report(ctx, merged, out_dir, json, NULL, (size_t)show) : an_fail(ctx, &err);
        cJSON_Delete(merged);
    }
    return rc;
}

const an_cmd_spec an_cmd_merge = {
    .usage = "rknn-diag merge PART... [-o DIR] [--json]",
    .about = "Merges the shards of one `rknn-diag eval ... --shard K/N -o DIR` run: each PART is a\n"
             "partial.json or the folder holding it. Every shard 0..N-1 must be there exactly once,\n"
             "from the same command line, model and data (their run_hash); the report is the one a\n"
             "single process prints, bit for bit (report.json in -o DIR). Shards of\n"
             "`rknn-diag accuracy ... --shard K/N` (-o DIR needed): the snapshot of the one-process\n"
             "run in DIR (error_analysis.txt, report.json, report.html), its table, findings and\n"
             "--fail-under-cos gate; the merge loads the model again, checks the files against the\n"
             "shards' run_hash and analyses the --dump-sample again. docs/sharding.md.",
    AN_SPEC_OPTS(merge_opts),
    .output = {0, "output", 'o', "DIR", "write report.json in DIR (accuracy shards: the snapshot)"},
    .groups = AN_OG_JSON,
    AN_SPEC_ARGS(merge_args, &merge_defaults),
    .take = take_option,
    .main = merge_main,
    .args_fini = merge_args_fini,
};

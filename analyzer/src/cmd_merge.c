/*
 * cmd_merge.c: `rknn-diag merge PART... [-o DIR] [--json] [--show N]`: the shards of one `eval --shard K/N`
 * run (their partial.json files, or the folders holding them) checked against each other and turned into
 * the report a single process gives, bit for bit (docs/sharding.md). Parts of `accuracy --shard K/N` go to
 * an_accuracy_merge (cmd_accuracy.c), which writes the snapshot the one-process run writes.
 */
#include "cli_internal.h"
#include "accuracy_partial.h"
#include "eval_task.h"

#include <stdlib.h>

enum { OPT_HELP = 1, OPT_OUT, OPT_JSON, OPT_SHOW };

static const an_optspec merge_opts[] = {
    {OPT_OUT, "output", 'o', "DIR", "write report.json in DIR"},
    {OPT_SHOW, "show", 0, "N", "list the first N samples that change most (default 10, as eval)"},
    {OPT_JSON, "json", 0, NULL, "print the report as JSON"},
    {OPT_HELP, "help", 'h', NULL, "show this help"},
};
#define N_MERGE_OPTS ((int)(sizeof merge_opts / sizeof merge_opts[0]))

int an_cmd_merge(an_cmd_ctx *ctx)
{
    const char **parts = calloc((size_t)ctx->argc + 1, sizeof *parts);
    if (!parts)
        return an_fail_nomem(ctx, "the list of parts");
    size_t n = 0;
    const char *out_dir = NULL;
    bool json = false;
    long show = 10;
    an_opts p;
    an_opts_init(&p, ctx, merge_opts, N_MERGE_OPTS);
    const char *v;
    int id, rc = -1;
    while (rc < 0 && (id = an_opts_next(&p, &v)) != -1) {
        switch (id) {
        case -2:
            rc = AN_EXIT_USAGE;
            break;
        case 0:
            parts[n++] = v;
            break;
        case OPT_OUT:
            out_dir = v;
            break;
        case OPT_JSON:
            json = true;
            break;
        case OPT_SHOW:
            if (!an_parse_int(ctx->argv[0], "--show", v, 0, 100000, &show, ctx->errs))
                rc = AN_EXIT_USAGE;
            break;
        case OPT_HELP:
            an_print_help(ctx->out, "rknn-diag merge PART... [-o DIR] [--json]",
                          "Merges the shards of one `rknn-diag eval ... --shard K/N -o DIR` run: each PART is a\n"
                          "partial.json or the folder holding it. Every shard 0..N-1 must be there exactly once,\n"
                          "from the same command line, model and data (their run_hash); the report is the one a\n"
                          "single process prints, bit for bit (report.json in -o DIR). Shards of\n"
                          "`rknn-diag accuracy ... --shard K/N` (-o DIR needed): the snapshot of the one-process\n"
                          "run in DIR (error_analysis.txt, report.json, report.html), its table, findings and\n"
                          "--fail-under-cos gate; the merge loads the model again, checks the files against the\n"
                          "shards' run_hash and analyses the --dump-sample again. docs/sharding.md.",
                          merge_opts, N_MERGE_OPTS);
            rc = AN_EXIT_OK;
            break;
        }
    }
    if (rc < 0 && n == 0)
        rc = an_usage(ctx, "give the shards: rknn-diag merge OUT/shard-*/ -o OUT");
    if (rc < 0 && an_acc_partial_sniff(parts[0]))
        rc = out_dir ? an_accuracy_merge(ctx, parts, n, out_dir)
                     : an_usage(ctx, "merging accuracy shards writes a snapshot: give -o DIR");
    if (rc < 0) {
        rd_error err = {0};
        cJSON *merged = NULL;
        rd_status st = an_eval_partials_merge(parts, n, &merged, &err);
        if (st == RD_OK && out_dir)
            st = rd_dir_make(out_dir, RD_DIR_PARENTS, &err);
        rc = st == RD_OK ? an_eval_report(ctx, merged, out_dir, json, NULL, (size_t)show) : an_fail(ctx, &err);
        cJSON_Delete(merged);
    }
    free(parts);
    return rc;
}

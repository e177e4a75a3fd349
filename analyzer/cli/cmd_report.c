/*
 * cmd_report.c: `rknn-diag report --from-rknn DIR [-o OUTDIR]`: a snapshot written by RKNN-Toolkit2 (its
 * error_analysis.txt, 2.x or legacy 1.5, and its golden/, simulator/, runtime/ text files where present)
 * becomes report.json and report.html. Where both text files of a layer exist, the metrics are recomputed
 * from them (euc_rel, SQNR, gain, ... which the table lacks); the table's own numbers stay otherwise.
 */
#include "term_text.h"
#include "cmd_spec.h"
#include "metrics.h"
#include "tensor_dump.h"

#include "rknn_diag/reports.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_FROM_RKNN = 1 };

static const an_optspec report_opts[] = {
    {OPT_FROM_RKNN, "from-rknn", 0, "DIR", "an RKNN-Toolkit2 snapshot folder (error_analysis.txt, golden/, ...)"},
};
static const an_need report_needs[] = {{OPT_FROM_RKNN, "--from-rknn DIR is required"}};

typedef struct report_args {
    const char *dir;
} report_args;

static const an_optset report_sets[] = {AN_SET(OPT_FROM_RKNN, AN_SET_STR, report_args, dir)};

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The text file of a tensor in DIR/sub, relative to DIR: our map first, else the RKNN-style stem. */
static bool tensor_file(const char *dir, const char *sub, const char *name, const rd_name_map *map, char *out,
                        size_t len)
{
    char full[4400];
    for (size_t i = 0; map && i < map->n; i++) {
        const rd_name_map_entry *e = &map->entries[i];
        const char *f = strcmp(sub, "golden") == 0      ? e->golden
                        : strcmp(sub, "simulator") == 0 ? e->simulator
                                                        : e->runtime;
        if (f && strcmp(e->name, name) == 0) {
            snprintf(out, len, "%s", f);
            snprintf(full, sizeof full, "%s/%s", dir, f);
            if (is_file(full))
                return true;
        }
    }
    char stem[1024];
    rd_snapshot_file_stem(name, stem, sizeof stem);
    snprintf(out, len, "%s/%s.txt", sub, stem);
    snprintf(full, sizeof full, "%s/%s", dir, out);
    return is_file(full);
}

/* Recomputes group g of layer l from golden and the tested side's text files. Counts what it did. The files
   are read inside DIR only: a map naming '../x' or a link out of the folder is refused (with a warning). */
static rd_status enrich_layer(an_cmd_ctx *ctx, const char *dir, const rd_name_map *map, rd_layer_result *l,
                              const char *sub, int g, int *n_done, rd_error *err)
{
    char gp[4200], tp[4200];
    if (!tensor_file(dir, "golden", l->name, map, gp, sizeof gp) || !tensor_file(dir, sub, l->name, map, tp, sizeof tp))
        return RD_OK;
    float *ref = NULL, *test = NULL;
    int64_t nr = 0, nt = 0;
    rd_status st = rd_snapshot_txt_load_in(dir, gp, &ref, &nr, err);
    if (st == RD_OK)
        st = rd_snapshot_txt_load_in(dir, tp, &test, &nt, err);
    if (st == RD_OK) {
        rd_metrics m;
        if (nr != nt)
            an_metrics_shape_mismatch(nr, nt, &m);
        else
            an_metrics_compute(ref, test, nr, NULL, &m);
        rd_metric_group_single(&l->groups[g], &m);
        (*n_done)++;
    } else {
        fputs("rknn-diag report: warning: ", ctx->errs);
        an_put_text(ctx->errs, err->msg);
        fputs(" (the table's numbers are kept)\n", ctx->errs);
        st = RD_OK;
    }
    free(ref);
    free(test);
    return st;
}

static int report_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    const char *dir = ((const report_args *)args)->dir, *out_dir = cmd->output ? cmd->output : dir;

    rd_error err = {0};
    char path[4200];
    snprintf(path, sizeof path, "%s/error_analysis.txt", dir);
    rd_result r;
    rd_rknn_txt_info info;
    rd_status st = rd_rknn_txt_load(path, &r, &info, &err);
    if (st != RD_OK)
        return an_fail(ctx, &err);

    rd_name_map map = {0};
    bool have_map = false;
    snprintf(path, sizeof path, "%s/map_name_to_file.txt", dir);
    if (is_file(path)) {
        rd_error merr = {0};
        have_map = rd_name_map_load(path, &map, &merr) == RD_OK;
        if (!have_map)
            fprintf(ctx->errs, "rknn-diag report: note: %s is not rknn-diag's syntax; using file names\n", path);
    }
    int n_sim = 0, n_rt = 0;
    for (size_t i = 0; i < r.n_layers && st == RD_OK; i++) {
        st = enrich_layer(ctx, dir, have_map ? &map : NULL, &r.layers[i], "simulator", RD_GROUP_SIM_ENTIRE, &n_sim,
                          &err);
        if (st == RD_OK && r.has_runtime)
            st = enrich_layer(ctx, dir, have_map ? &map : NULL, &r.layers[i], "runtime", RD_GROUP_RT_ENTIRE, &n_rt,
                              &err);
    }
    rd_name_map_fini(&map);
    snprintf(path, sizeof path, "%s/error_analysis.txt", dir);
    if (st == RD_OK)
        st = rd_result_set_string(&r.model, path, &err);
    if (st == RD_OK)
        st = rd_result_set_config(&r, "source",
                                  info.layout == RD_RKNN_LAYOUT_LEGACY_15 ? "RKNN-Toolkit2 1.5 error_analysis.txt"
                                                                          : "RKNN-Toolkit2 2.x error_analysis.txt",
                                  &err);
    char n_text[64];
    snprintf(n_text, sizeof n_text, "%d simulator, %d runtime", n_sim, n_rt);
    if (st == RD_OK)
        st = rd_result_set_config(&r, "layers recomputed from text files", n_text, &err);
    if (st == RD_OK)
        st = an_mkdirs(out_dir, &err);
    char json[4200], html[4200];
    snprintf(json, sizeof json, "%s/report.json", out_dir);
    snprintf(html, sizeof html, "%s/report.html", out_dir);
    if (st == RD_OK)
        st = rd_report_json_save(&r, json, &err);
    if (st == RD_OK)
        st = rd_report_html_save(&r, html, &err);
    if (st == RD_OK)
        fprintf(ctx->out, "%zu layers from %s (%s layout%s); recomputed from text files: %s\nwrote %s\nwrote %s\n",
                r.n_layers, path, info.layout == RD_RKNN_LAYOUT_LEGACY_15 ? "1.5" : "2.x",
                r.has_runtime ? ", with runtime" : "", n_text, json, html);
    rd_result_fini(&r);
    return st == RD_OK ? AN_EXIT_OK : an_fail(ctx, &err);
}

const an_cmd_spec an_cmd_report = {
    .usage = "rknn-diag report --from-rknn DIR [-o OUTDIR]",
    .about = "Reads a snapshot written by RKNN-Toolkit2's accuracy_analysis (error_analysis.txt in the\n"
             "2.x or 1.5 layout, and golden/, simulator/, runtime/ text files where present) and writes\n"
             "report.json and report.html. Exit codes: 0 done, 2 usage, 3 unreadable or malformed input.",
    .output = {0, "output-dir", 'o', "OUTDIR", "where report.json and report.html go (default: DIR)"},
    AN_SPEC_OPTS(report_opts),
    AN_SPEC_NEEDS(report_needs),
    AN_SPEC_SETS(report_sets),
    AN_SPEC_ARGS(report_args, NULL),
    .main = report_main,
};

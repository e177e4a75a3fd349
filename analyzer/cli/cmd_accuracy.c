/*
 * cmd_accuracy.c: `rknn-diag accuracy MODEL`: RKNN's accuracy_analysis in C. Builds the simulation
 * the options describe (quantization, calibration), analyses one or more samples layer by layer and
 * writes the snapshot (golden/, simulator/, map_name_to_file.txt, error_analysis.txt, report.json,
 * report.html), prints RKNN's table and the findings, and applies the CI gate.
 */
#include "term_text.h"
#include "accuracy.h"
#include "accuracy_shard.h"
#include "accuracy_runtime.h"
#include "cli_adb.h"
#include "cmd_spec.h"
#include "cli_model_args.h"
#include "config_model.h"
#include "hybrid.h"
#include "quant_setup.h"
#include "tensor_dump.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum {
    OPT_OUTPUT_DIR = 1,
    OPT_DUMP_SAMPLE,
    OPT_NO_TXT,
    OPT_FAIL_UNDER,
    OPT_GATE,
    OPT_WARN_COS,
    OPT_ERROR_COS,
    OPT_QUIET,
    OPT_RUN,
    OPT_RUNTIME_DUMPS,
    OPT_BOARD_DUMP_DIR,
    OPT_BOARD_WORK_DIR,
    OPT_RUN_TIMEOUT,
    OPT_APP_OUTPUTS,
    OPT_APP_API,
    OPT_SWEEP,
    OPT_SWEEP_POINTS,
};

static const an_optspec accuracy_opts[] = {
    {OPT_OUTPUT_DIR, "output-dir", 'o', "DIR", "snapshot folder (default ./snapshot)"},
    {OPT_DUMP_SAMPLE, "dump-sample", 0, "K", "which sample's tensors go into the snapshot (default 0)"},
    {OPT_NO_TXT, "no-txt", 0, NULL, "skip the per-tensor text files (the .npy files stay)"},
    {OPT_FAIL_UNDER, "fail-under-cos", 0, "X", "exit 1 when a cosine of the --gate is below X"},
    {OPT_GATE, "gate", 0, "G", "outputs (default: graph outputs, entire), entire (every layer) or single"},
    {OPT_WARN_COS, "warn-cos", 0, "X", "single cosine below which a layer is lossy (default 0.99)"},
    {OPT_ERROR_COS, "error-cos", 0, "X", "single cosine below which a lossy layer is an error (default 0.98)"},
    {OPT_QUIET, "quiet", 'q', NULL, "print no table"},
    {OPT_SWEEP, "sweep", 0, NULL,
     "also the float16 sweep: the outputs with float16 on the first k int8 tensors and on "
     "the rest, and the block the error builds up in (report.json, report.html)"},
    {OPT_SWEEP_POINTS, "sweep-points", 0, "N", "--sweep: values of k measured, spread evenly (default 65; 0: every k)"},
    {OPT_RUN, "run", 0, "CMD",
     "the application run on the board ({input0}, {input0_preprocessed}, {work_dir}, {dump_dir})"},
    {OPT_RUNTIME_DUMPS, "runtime-dumps", 0, "DIR", "compare board dumps already pulled into DIR (no board needed)"},
    {OPT_BOARD_DUMP_DIR, "board-dump-dir", 0, "DIR", "RKNN_DUMP_DIR on the board (default: the target's)"},
    {OPT_BOARD_WORK_DIR, "board-work-dir", 0, "DIR",
     "where inputs go on the board (/userdata/rknn-diag; /tmp/... on rv110x)"},
    {OPT_RUN_TIMEOUT, "run-timeout", 0, "S", "silence allowed while --run runs (default 600)"},
    {OPT_APP_OUTPUTS, "app-outputs", 0, "FILE", "what the application received, one .npy per graph output (repeat)"},
    {OPT_APP_API, "app-api", 0, "API",
     "how the application feeds its input: normal (rknn_inputs_set: the InputOperator "
     "dump is after mean/std; default) or zero-copy (rknn_set_io_mem: before them)"},
};

typedef enum gate_kind { GATE_OUTPUTS, GATE_ENTIRE, GATE_SINGLE } gate_kind;
static const char *const gate_names[] = {"outputs", "entire", "single", NULL};

typedef struct acc_args {
    const char *model_path;
    long dump_sample;
    const char *output_dir;
    bool no_txt, quiet, sweep;
    long sweep_points;
    double fail_under; /* NAN: no gate */
    gate_kind gate;
    double warn_cos, error_cos;
    an_cmd_args cmd;
    const char *run_cmd, *runtime_dumps, *board_dump_dir, *board_work_dir;
    const char *app_outputs[AN_MAX_APP_OUTPUTS];
    size_t n_app_outputs;
    long run_timeout;
    an_app_api app_api; /* --app-api: the input-dump rule */
    bool app_api_given;
    char *dump_paths[AN_MAX_INPUTS]; /* the dump sample's input files (what the board is given) */
    char board_dir[4200];            /* <snapshot>/runtime/board_dumps */
    an_acc_parts *merge;             /* `merge` of accuracy parts: the shards' samples */
    const an_acc_header *merge_h;    /* and the first part's header */
} acc_args;

static const an_optset accuracy_sets[] = {
    AN_SET(OPT_OUTPUT_DIR, AN_SET_STR, acc_args, output_dir),
    AN_SET_RANGE(OPT_DUMP_SAMPLE, acc_args, dump_sample, 0, 100000),
    AN_SET(OPT_NO_TXT, AN_SET_FLAG, acc_args, no_txt),
    AN_SET_COS(OPT_FAIL_UNDER, acc_args, fail_under),
    AN_SET_CHOICE(OPT_GATE, acc_args, gate, gate_names, "outputs, entire or single"),
    AN_SET_COS(OPT_WARN_COS, acc_args, warn_cos),
    AN_SET_COS(OPT_ERROR_COS, acc_args, error_cos),
    AN_SET(OPT_QUIET, AN_SET_FLAG, acc_args, quiet),
    AN_SET(OPT_SWEEP, AN_SET_FLAG, acc_args, sweep),
    AN_SET(OPT_SWEEP_POINTS, AN_SET_SWEEP, acc_args, sweep_points),
    AN_SET(OPT_RUN, AN_SET_STR, acc_args, run_cmd),
    AN_SET(OPT_RUNTIME_DUMPS, AN_SET_STR, acc_args, runtime_dumps),
    AN_SET(OPT_BOARD_DUMP_DIR, AN_SET_STR, acc_args, board_dump_dir),
    AN_SET(OPT_BOARD_WORK_DIR, AN_SET_STR, acc_args, board_work_dir),
    AN_SET_RANGE(OPT_RUN_TIMEOUT, acc_args, run_timeout, 1, 86400),
};

static int take_option(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    acc_args *a = user;
    rd_error err = {0};
    switch (id) {
    case OPT_APP_API:
        if (an_app_api_parse(v, &a->app_api, &err) != RD_OK)
            return an_usage(ctx, "--app-api: %s", err.msg);
        a->app_api_given = true;
        break;
    case OPT_APP_OUTPUTS:
        if (a->n_app_outputs == AN_MAX_APP_OUTPUTS)
            return an_usage(ctx, "too many --app-outputs");
        a->app_outputs[a->n_app_outputs++] = v;
        break;
    }
    return AN_GO;
}

/* What the parser leaves to the command: the model or -c, and the options that go together. */
static int check_args(an_cmd_ctx *ctx, acc_args *a)
{
    a->model_path = a->cmd.model;
    if (!a->model_path && !a->cmd.q.config_path)
        return an_usage(ctx, "missing MODEL.onnx (or -c model_config.yml)");
    a->cmd.q.model_path = a->model_path;
    if (a->error_cos > a->warn_cos)
        return an_usage(ctx, "--error-cos %.4f is above --warn-cos %.4f", a->error_cos, a->warn_cos);
    if (a->run_cmd && !a->cmd.target)
        return an_usage(ctx, "--run needs --target T (the board's chip: rk3566, rk3588, ...)");
    if (a->run_cmd && a->runtime_dumps)
        return an_usage(ctx, "give --run (run on the board) or --runtime-dumps DIR (dumps already pulled), not both");
    if (a->cmd.target && !a->run_cmd && !a->runtime_dumps)
        return an_usage(ctx,
                        "--target %s needs --run \"CMD\" (the application to run on the board) or --runtime-dumps DIR",
                        a->cmd.target);
    if ((a->cmd.board_given || a->board_dump_dir || a->board_work_dir) && !a->run_cmd)
        return an_usage(ctx, "board options (--connect, --serial, --board-dump-dir, ...) need --target T --run CMD");
    if (a->app_api_given && !a->run_cmd && !a->runtime_dumps)
        return an_usage(ctx, "--app-api needs the board's dumps (--target T --run CMD, or --runtime-dumps DIR)");
    if (a->n_app_outputs && !a->run_cmd && !a->runtime_dumps)
        return an_usage(ctx, "--app-outputs needs the board's dumps (--target T --run CMD, or --runtime-dumps DIR)");
    if (a->cmd.shard_n && a->cmd.n_inputs)
        return an_usage(ctx, "--shard splits the --samples lines of --dataset; --inputs is one sample");
    if (a->cmd.shard_n && a->sweep)
        return an_usage(ctx, "--sweep measures float16 sets over every sample at once: run it without --shard");
    if (a->cmd.shard_n && (a->run_cmd || a->runtime_dumps))
        return an_usage(ctx, "the board's part concerns one sample: run it without --shard");
    return AN_GO;
}

/* The dump sample's input files (what the board is given and the input check reads). */
static rd_status dump_sample_paths(acc_args *a, const rd_model *m, rd_error *err)
{
    size_t n_in = rd_model_input_count(m);
    if (n_in > AN_MAX_INPUTS)
        return rd_errorf(err, RD_E_LIMIT, "the model has %zu inputs, at most %d are supported", n_in, AN_MAX_INPUTS);
    rd_dataset ds;
    memset(&ds, 0, sizeof ds);
    rd_status st = RD_OK;
    if (!a->cmd.n_inputs)
        st = rd_dataset_load(a->cmd.q.cfg.dataset, n_in, &ds, err);
    for (size_t i = 0; st == RD_OK && i < n_in; i++) {
        const char *path = a->cmd.n_inputs ? a->cmd.inputs[i] : rd_dataset_path(&ds, (size_t)a->dump_sample, i);
        if (!(a->dump_paths[i] = strdup(path)))
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    rd_dataset_fini(&ds);
    return st;
}

static rd_status describe_run(rd_result *r, const acc_args *a, size_t n_samples, size_t set, rd_error *err)
{
    char buf[64];
    rd_status st = rd_result_set_string(&r->tool, "rknn-diag " RD_VERSION, err);
    if (st == RD_OK)
        st = rd_result_set_string(&r->model, a->model_path, err);
    const rd_rknn_config *c = &a->cmd.q.cfg;
    const char *items[][2] = {
        {"dtype", rd_qdtype_name(c->dtype)},
        {"platform", a->cmd.q.platform ? a->cmd.q.platform : "(none)"},
        {"algorithm", rd_qalgo_name(c->algorithm)},
        {"method", rd_qmethod_name(c->method)},
        {"dataset", c->dataset ? c->dataset : "(none: calibrated on the analysed input)"},
        {"cfg", a->cmd.q.qcfg_path ? a->cmd.q.qcfg_path : "(none)"},
    };
    for (size_t i = 0; i < sizeof items / sizeof items[0] && st == RD_OK; i++)
        st = rd_result_set_config(r, items[i][0], items[i][1], err);
    snprintf(buf, sizeof buf, "%d", c->optimization_level);
    if (st == RD_OK)
        st = rd_result_set_config(r, "optimization_level", buf, err);
    snprintf(buf, sizeof buf, "%zu", n_samples);
    if (st == RD_OK)
        st = rd_result_set_config(r, "samples", buf, err);
    if (st == RD_OK && an_dynamic_sets(&a->cmd.q)) {
        char name[256];
        an_dynamic_set_name(&a->cmd.q, set, name, sizeof name);
        st = rd_result_set_config(r, "dynamic_input", name, err);
    }
    if (st == RD_OK && c->model_pruning)
        st = rd_result_set_config(r, "model_pruning", "true", err);
    if (st == RD_OK && c->custom_string)
        st = rd_result_set_string(&r->custom_string, c->custom_string, err);
    if (st == RD_OK && a->cmd.q.rknn_path)
        st = rd_result_set_config(r, "rknn", a->cmd.q.rknn_path, err);
    if (st == RD_OK && a->cmd.q.rknn_log_path)
        st = rd_result_set_config(r, "rknn_build_log", a->cmd.q.rknn_log_path, err);
    return st;
}

/* RKNN's table on stdout; on a terminal each row is coloured by its worst cosine. RD_E_NOMEM when the text
   cannot be made (a table cut short would read as the analysis). */
static rd_status print_table(an_cmd_ctx *ctx, const rd_result *r, const acc_args *a, bool color, rd_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return rd_errorf(err, RD_E_NOMEM, "out of memory (the table)");
    rd_rknn_txt_opts opts = {0};
    rd_status st = rd_rknn_txt_write(r, &opts, mem, err);
    if (fclose(mem) != 0 && st == RD_OK)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory (the table)");
    if (st != RD_OK || !text) {
        free(text);
        return st != RD_OK ? st : rd_errorf(err, RD_E_NOMEM, "out of memory (the table)");
    }
    if (!color) {
        fwrite(text, 1, len, ctx->out);
        free(text);
        return RD_OK;
    }
    /* rows follow the dash rule, one per layer in order */
    char *line = text;
    bool in_rows = false;
    size_t row = 0;
    while (line && *line) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        const char *colour = NULL;
        if (in_rows && row < r->n_layers) {
            double worst = 1.0;
            for (int g = 0; g < RD_GROUP_COUNT; g++)
                if (r->layers[row].groups[g].present && r->layers[row].groups[g].cos_min < worst)
                    worst = r->layers[row].groups[g].cos_min;
            colour = isnan(worst) || worst < a->error_cos ? "\033[31m" : worst < a->warn_cos ? "\033[33m" : NULL;
            row++;
        }
        fprintf(ctx->out, "%s%.*s%s\n", colour ? colour : "", (int)n, line, colour ? "\033[0m" : "");
        if (n > 0 && line[0] == '-' && line[n - 1] == '-')
            in_rows = true;
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return RD_OK;
}

static void print_findings(an_cmd_ctx *ctx, const rd_result *r, bool color)
{
    if (r->n_findings == 0) {
        fprintf(ctx->out, "\nfindings: none (every layer within the thresholds)\n");
        return;
    }
    fprintf(ctx->out, "\nfindings:\n");
    for (size_t i = 0; i < r->n_findings; i++) {
        const rd_finding *f = &r->findings[i];
        const char *tag = f->severity == RD_SEV_ERROR ? "error" : f->severity == RD_SEV_WARNING ? "warning" : "info";
        const char *c = !color ? "" : f->severity == RD_SEV_ERROR ? "\033[1;31m" : "\033[1;33m";
        fprintf(ctx->out, "  %s%s%s: ", c, tag, color ? "\033[0m" : ""); /* findings quote the model's names */
        an_put_text(ctx->out, f->title);
        fputs("\n      ", ctx->out);
        an_put_text(ctx->out, f->evidence);
        fputc('\n', ctx->out);
        if (f->advice) {
            fputs("      -> ", ctx->out);
            an_put_text(ctx->out, f->advice);
            fputc('\n', ctx->out);
        }
    }
}

static bool is_output_layer(const rd_model *m, const char *name)
{
    for (size_t o = 0; o < rd_model_output_count(m); o++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_output(m, o), &vi);
        if (strcmp(vi.name, name) == 0)
            return true;
    }
    return false;
}

/* Exit 1 and the failing layers when the gate's cosine is below the bound. */
static int apply_gate(an_cmd_ctx *ctx, const acc_args *a, const rd_model *m, const rd_result *r)
{
    if (isnan(a->fail_under))
        return AN_EXIT_OK;
    int failing = 0;
    for (size_t i = 0; i < r->n_layers; i++) {
        const rd_layer_result *l = &r->layers[i];
        const rd_metric_group *g = &l->groups[a->gate == GATE_SINGLE ? RD_GROUP_SIM_SINGLE : RD_GROUP_SIM_ENTIRE];
        if (!g->present || (a->gate == GATE_OUTPUTS && !is_output_layer(m, l->name)))
            continue;
        if (isnan(g->cos_min) || g->cos_min < a->fail_under) {
            if (failing++ == 0)
                fprintf(ctx->errs, "gate failed: cosine below %.5f (--gate %s, minimum over samples):\n", a->fail_under,
                        gate_names[a->gate]);
            fprintf(ctx->errs, "  %-40s %.5f (sample %d)\n", RD_TEXT_SHOWN(l->name), g->cos_min, g->worst_sample);
        }
    }
    return failing ? AN_EXIT_GATE : AN_EXIT_OK;
}

/* <snapshot>/runtime/board_dumps: where --run pulls the dumps */
static const char *board_dir_of(acc_args *a)
{
    snprintf(a->board_dir, sizeof a->board_dir, "%s/runtime/board_dumps", a->output_dir);
    return a->board_dir;
}

/* With --run: inputs written and pushed, the command run, the dumps pulled into the snapshot. */
static rd_status board_dumps(an_cmd_ctx *ctx, acc_args *a, const rd_model *m, const rd_tensor *inputs, rd_error *err)
{
    if (!a->run_cmd)
        return RD_OK;
    const rd_platform_info *plat = rd_platform_find(a->cmd.target);
    char local_inputs[4200];
    snprintf(local_inputs, sizeof local_inputs, "%s/runtime", a->output_dir);
    rd_status st = an_mkdirs(a->output_dir, err);
    if (st == RD_OK)
        st = rd_dir_make(local_inputs, RD_DIR_OWN, err);
    snprintf(local_inputs, sizeof local_inputs, "%s/runtime/inputs", a->output_dir);
    if (st == RD_OK)
        st = an_runtime_write_inputs(&a->cmd.q, m, (const char *const *)a->dump_paths, inputs, local_inputs, err);
    if (st != RD_OK)
        return st;
    bool small = strncasecmp(a->cmd.target, "rv110", 5) == 0;
    an_board_run r = {.adb = a->cmd.adb,
                      .run_timeout_ms = (int)(a->run_timeout * 1000),
                      .dump_dir = a->board_dump_dir        ? a->board_dump_dir
                                  : plat && plat->dump_dir ? plat->dump_dir
                                                           : RD_ADB_DEFAULT_DUMP_DIR,
                      .work_dir = a->board_work_dir ? a->board_work_dir
                                  : small           ? "/tmp/rknn-diag"
                                                    : "/userdata/rknn-diag",
                      .command = a->run_cmd,
                      .local_inputs = local_inputs,
                      .n_inputs = rd_model_input_count(m),
                      .local_dumps = board_dir_of(a),
                      .log = ctx->errs};
    r.adb.log = an_adb_log;
    r.adb.log_user = ctx;
    return an_board_run_dumps(&r, err);
}

/* The mapping report, the application checks and the one-line summary. */
static rd_status runtime_extras(an_cmd_ctx *ctx, acc_args *a, an_runtime *rt, const rd_tensor *inputs, rd_result *r,
                                rd_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/runtime/mapping.txt", a->output_dir);
    rd_status st = an_runtime_report(rt, path, err);
    if (st == RD_OK)
        st = an_runtime_checks(rt, inputs, a->app_outputs, a->n_app_outputs, r, err);
    size_t compared = 0, n_layers = 0;
    for (size_t i = 0; i < r->n_layers; i++) {
        n_layers += r->layers[i].groups[RD_GROUP_SIM_ENTIRE].present;
        compared += r->layers[i].groups[RD_GROUP_RT_ENTIRE].present;
    }
    if (st == RD_OK)
        fprintf(ctx->errs,
                "rknn-diag accuracy: runtime: %zu board dumps read from %s, %zu of %zu layers compared "
                "(mapping: %s)\n",
                an_dump_set_count(rt->dumps), a->runtime_dumps ? a->runtime_dumps : board_dir_of(a), compared, n_layers,
                path);
    return st;
}

static rd_status write_reports(const acc_args *a, const rd_result *r, rd_error *err)
{
    char path[4200];
    rd_rknn_txt_opts opts = {0};
    snprintf(path, sizeof path, "%s/error_analysis.txt", a->output_dir);
    rd_status st = rd_rknn_txt_save(r, &opts, path, err);
    snprintf(path, sizeof path, "%s/report.json", a->output_dir);
    if (st == RD_OK)
        st = rd_report_json_save(r, path, err);
    snprintf(path, sizeof path, "%s/report.html", a->output_dir);
    if (st == RD_OK)
        st = rd_report_html_save(r, path, err);
    return st;
}

/* --sweep: the float16 sweep over the int8 tensors of the analysis into result->sweep (before the findings,
   which name its block). A model without int8 tensors has none, with a note. */
static rd_status add_sweep(an_cmd_ctx *ctx, const acc_args *a, rd_model *m, rd_sim *sim, const rd_tensor *samples,
                           size_t n_samples, rd_result *result, rd_error *err)
{
    an_hyb_cand *cands = NULL;
    size_t n = 0;
    rd_status st = an_hyb_candidates(sim, result, &cands, &n, err);
    if (st == RD_OK && n == 0) {
        fprintf(ctx->errs, "rknn-diag accuracy: --sweep: no int8 tensor can move to float16 (--dtype %s): no sweep\n",
                rd_qdtype_name(a->cmd.q.cfg.dtype));
        free(cands);
        return RD_OK;
    }
    an_hyb_ctx hc;
    memset(&hc, 0, sizeof hc);
    bool ready = false;
    if (st == RD_OK)
        ready = (st = an_hyb_init(&hc, m, sim, samples, n_samples, 2, err)) == RD_OK;
    an_hyb_sweep_opts so = {.max_points = (size_t)a->sweep_points, .progress = ctx->errs};
    if (st == RD_OK)
        st = an_hyb_sweep(&hc, cands, n, &so, &result->sweep, err);
    if (ready)
        an_hyb_fini(&hc);
    free(cands);
    return st == RD_OK ? st : rd_error_prefix(err, "--sweep");
}

/* A merge's sample: the dump sample alone, once the run is checked to be the shards' (*total: the run's). */
static rd_status merge_samples(an_cmd_ctx *ctx, acc_args *a, const rd_model *m, rd_tensor **samples, size_t *total,
                               rd_error *err)
{
    char hash[AN_ACC_HASH_HEX];
    *total = a->merge_h->total;
    rd_status st = an_acc_run_hash(&a->cmd.q, a->model_path, ctx->argc, ctx->argv, hash, err);
    if (st == RD_OK && strcmp(hash, a->merge_h->run_hash) != 0)
        st = rd_errorf(err, RD_E_INVAL,
                       "the model, its configuration or the dataset (or rknn-diag itself) differ from what the shards "
                       "analysed (run_hash %.12s... here, %.12s... in the shards): merge where the shards ran, with "
                       "the same files",
                       hash, a->merge_h->run_hash);
    if (st == RD_OK)
        st = an_acc_load_range(&a->cmd.q, m, (size_t)a->dump_sample, (size_t)a->dump_sample + 1, ctx->errs, samples,
                               err);
    return st;
}

/* One analysis: the model (dynamic_input set `set` when the config has them) into a->output_dir. */
static int analyse_once(an_cmd_ctx *ctx, acc_args *a, size_t set)
{
    rd_error err = {0};
    rd_model *m = NULL;
    rd_sim *sim = NULL;
    rd_tensor *samples = NULL;
    size_t n_samples = 0, n_in = 0;
    int rc = AN_EXIT_OK;
    rd_result result;
    rd_result_init(&result);
    an_model_request req = an_cmd_model_request(ctx, &a->cmd,
                                                a->run_cmd || a->runtime_dumps
                                                    ? "the board runs the application on one input shape: give it "
                                                      "with --input-shape (or subgraphs.input_size_list)"
                                                    : NULL);
    req.dynamic_set = set;
    rd_status st = an_model_load_configured(&a->cmd.q, &req, &m, &err);
    if (st == RD_OK && !a->model_path)
        a->model_path = a->cmd.q.cfg.model_file_path;
    size_t n_total = 0; /* a merge analyses the dump sample only, of n_total */
    if (st == RD_OK && a->merge) {
        n_in = rd_model_input_count(m);
        st = merge_samples(ctx, a, m, &samples, &n_total, &err);
        n_samples = 1;
    } else if (st == RD_OK) {
        n_in = rd_model_input_count(m);
        st = an_quant_load_samples(&a->cmd.q, m, a->cmd.inputs, a->cmd.n_inputs, (size_t)a->cmd.samples, ctx->errs,
                                   &samples, &n_samples, &err);
        n_total = n_samples;
    }
    if (st == RD_OK && (size_t)a->dump_sample >= n_total)
        st =
            rd_errorf(&err, RD_E_USAGE, "--dump-sample %ld but only %zu samples are analysed", a->dump_sample, n_total);
    if (st == RD_OK && (a->run_cmd || a->runtime_dumps))
        st = dump_sample_paths(a, m, &err);
    bool tty_err = isatty(fileno(ctx->errs));
    if (st == RD_OK)
        st = an_quant_build_sim(&a->cmd.q, m, samples, ctx->errs, tty_err, &sim, &err);
    an_accuracy_opts ao = {.output_dir = a->output_dir,
                           .dump_sample = (int)a->dump_sample,
                           .no_txt = a->no_txt,
                           .warn_cos = a->warn_cos,
                           .error_cos = a->error_cos,
                           .worst_layers = 6,
                           .progress = ctx->errs,
                           .progress_tty = tty_err,
                           .sample_base = a->merge ? (int)a->dump_sample : 0,
                           .rows = a->merge ? an_acc_parts_merge_rows : NULL,
                           .rows_user = a->merge};
    /* the board: run it (or take the pulled dumps), then load its dumps; a failure here keeps the
       simulator's analysis and ends with exit 3 */
    an_runtime rt;
    memset(&rt, 0, sizeof rt);
    an_layer_runtime *rt_layers = NULL;
    int board_rc = AN_EXIT_OK;
    if (st == RD_OK && (a->run_cmd || a->runtime_dumps)) {
        rd_error berr = {0};
        rd_status bst = board_dumps(ctx, a, m, samples + (size_t)a->dump_sample * n_in, &berr);
        if (bst == RD_OK)
            bst = an_runtime_open(&rt, a->runtime_dumps ? a->runtime_dumps : board_dir_of(a),
                                  rd_platform_find(a->cmd.q.platform), sim, &a->cmd.q, a->app_api,
                                  (const char *const *)a->dump_paths, samples + (size_t)a->dump_sample * n_in,
                                  ctx->errs, &berr);
        if (bst == RD_E_NOMEM) { /* not the board's doing: no snapshot without its part */
            st = bst;
            err = berr;
        } else if (bst != RD_OK) {
            board_rc = an_fail(ctx, &berr);
            fprintf(ctx->errs, "rknn-diag accuracy: the board's part is missing; the simulator's analysis is still "
                               "written\n");
        } else {
            ao.runtime = an_runtime_tensor;
            ao.runtime_user = &rt;
        }
    }
    if (st == RD_OK)
        st = an_accuracy_run_rt(sim, samples, n_in, n_samples, &ao, &result, ao.runtime ? &rt_layers : NULL, &err);
    if (st == RD_OK && a->merge)
        st = an_acc_parts_check_used(a->merge, &err);
    if (st == RD_OK && ao.runtime)
        st = runtime_extras(ctx, a, &rt, samples + (size_t)a->dump_sample * n_in, &result, &err);
    if (st == RD_OK && a->sweep)
        st = add_sweep(ctx, a, m, sim, samples, n_samples, &result, &err);
    if (st == RD_OK)
        st = an_findings_add_sim(&result, &ao, rt_layers, sim, &err);
    if (st == RD_OK)
        st = describe_run(&result, a, n_total, set, &err);
    if (st == RD_OK)
        st = an_quant_built_outputs(&a->cmd.q, sim, a->output_dir, ctx->errs, &result, &err);
    if (st == RD_OK)
        st = write_reports(a, &result, &err);
    free(rt_layers);
    an_runtime_close(&rt);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    const char *no_color = getenv("NO_COLOR");
    bool color_out = isatty(fileno(ctx->out)) && !(no_color && *no_color);
    if (!a->quiet && print_table(ctx, &result, a, color_out, &err) != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    print_findings(ctx, &result, color_out);
    fprintf(ctx->out, "\nsnapshot: %s (error_analysis.txt, report.json, report.html)\n", a->output_dir);
    rc = apply_gate(ctx, a, rd_sim_model(sim), &result);
    if (board_rc != AN_EXIT_OK)
        rc = board_rc;
out:
    for (size_t i = 0; i < AN_MAX_INPUTS; i++) {
        free(a->dump_paths[i]);
        a->dump_paths[i] = NULL;
    }
    rd_result_fini(&result);
    for (size_t k = 0; samples && k < n_samples * n_in; k++)
        rd_tensor_fini(&samples[k]);
    free(samples);
    rd_sim_destroy(sim);
    rd_model_destroy(m);
    return rc;
}

/* accuracy --shard K/N: samples [lo, hi) of the run's into DIR/partial.json, unless it is there already. */
static int analyse_shard(an_cmd_ctx *ctx, acc_args *a)
{
    rd_error err = {0};
    rd_model *m = NULL;
    rd_sim *sim = NULL;
    rd_tensor *samples = NULL;
    an_acc_parts *parts = NULL;
    an_acc_header h = {.shard_k = a->cmd.shard_k, .shard_n = a->cmd.shard_n, .dump_sample = (int)a->dump_sample};
    char path[4300];
    snprintf(path, sizeof path, "%s/partial.json", a->output_dir);
    an_model_request req = {.command = "accuracy",
                            .path = a->model_path,
                            .shapes = a->cmd.shapes,
                            .n_shapes = a->cmd.n_shapes,
                            .errs = ctx->errs};
    rd_status st = an_model_load_configured(&a->cmd.q, &req, &m, &err);
    if (st == RD_OK && !a->model_path)
        a->model_path = a->cmd.q.cfg.model_file_path;
    if (st == RD_OK)
        st = an_acc_dataset_total(&a->cmd.q, m, (size_t)a->cmd.samples, ctx->errs, &h.total, &err);
    if (st == RD_OK && (size_t)a->dump_sample >= h.total)
        st =
            rd_errorf(&err, RD_E_USAGE, "--dump-sample %ld but only %zu samples are analysed", a->dump_sample, h.total);
    if (st == RD_OK)
        st = an_acc_run_hash(&a->cmd.q, a->model_path, ctx->argc, ctx->argv, h.run_hash, &err);
    an_acc_shard_range(h.total, h.shard_k, h.shard_n, &h.lo, &h.hi);
    if (st == RD_OK)
        st = an_acc_shard_hash(h.run_hash, h.shard_k, h.shard_n, h.lo, h.hi, h.shard_hash, &err);
    bool done = false;
    if (st == RD_OK && access(path, F_OK) == 0) { /* resumable: a finished shard of the same run stays */
        an_acc_header old;
        rd_error ignored = {0};
        done = an_acc_partial_load(path, &old, NULL, &ignored) == RD_OK && strcmp(old.run_hash, h.run_hash) == 0 &&
               strcmp(old.shard_hash, h.shard_hash) == 0;
        an_acc_header_fini(&old);
    }
    if (st == RD_OK && done) {
        fprintf(ctx->out, "shard %d/%d: %s is complete for the same run and samples: skipped\n", h.shard_k, h.shard_n,
                path);
        goto out;
    }
    if (st == RD_OK)
        st = an_acc_keep_argv(ctx->argc, ctx->argv, &h, &err);
    if (st == RD_OK && !(h.model = strdup(a->model_path ? a->model_path : "")))
        st = rd_errorf(&err, RD_E_NOMEM, "out of memory");
    if (st == RD_OK)
        st = an_acc_load_range(&a->cmd.q, m, h.lo, h.hi, ctx->errs, &samples, &err);
    bool tty_err = isatty(fileno(ctx->errs));
    if (st == RD_OK) /* calibration: the --dataset, the same in every shard */
        st = an_quant_build_sim(&a->cmd.q, m, samples, ctx->errs, tty_err, &sim, &err);
    if (st == RD_OK)
        st = an_acc_parts_create(&parts, &err);
    an_accuracy_opts ao = {.dump_sample = (int)a->dump_sample,
                           .warn_cos = a->warn_cos,
                           .error_cos = a->error_cos,
                           .worst_layers = 6,
                           .progress = ctx->errs,
                           .progress_tty = tty_err,
                           .sample_base = (int)h.lo,
                           .rows = an_acc_parts_record,
                           .rows_user = parts};
    rd_result result;
    rd_result_init(&result);
    if (st == RD_OK)
        st = an_accuracy_run(sim, samples, rd_model_input_count(m), h.hi - h.lo, &ao, &result, &err);
    rd_result_fini(&result);
    if (st == RD_OK)
        st = an_mkdirs(a->output_dir, &err);
    if (st == RD_OK)
        st = an_acc_partial_save(parts, &h, path, &err);
    if (st == RD_OK)
        fprintf(ctx->out,
                "shard %d/%d: %zu samples (%zu to %zu of the %zu) analysed into %s; when every shard is done: "
                "rknn-diag merge PARTS... -o DIR\n",
                h.shard_k, h.shard_n, h.hi - h.lo, h.lo, h.hi ? h.hi - 1 : 0, h.total, path);
out:
    for (size_t k = 0; samples && m && k < (h.hi - h.lo) * rd_model_input_count(m); k++)
        rd_tensor_fini(&samples[k]);
    free(samples);
    an_acc_parts_destroy(parts);
    an_acc_header_fini(&h);
    rd_sim_destroy(sim);
    rd_model_destroy(m);
    return st == RD_OK ? AN_EXIT_OK : an_fail(ctx, &err);
}

/* Exit codes by severity: an input error (3) outranks a usage error (2), a failed gate (1), success. */
static int worse(int a, int b)
{
    static const int rank[] = {[AN_EXIT_OK] = 0, [AN_EXIT_GATE] = 1, [AN_EXIT_USAGE] = 2, [AN_EXIT_INPUT] = 3};
    int ra = a >= 0 && a <= AN_EXIT_INPUT ? rank[a] : 3, rb = b >= 0 && b <= AN_EXIT_INPUT ? rank[b] : 3;
    return ra >= rb ? a : b;
}

static const acc_args accuracy_defaults = {.output_dir = "snapshot",
                                           .fail_under = NAN,
                                           .warn_cos = 0.99,
                                           .error_cos = 0.98,
                                           .run_timeout = 600,
                                           .sweep_points = AN_HYB_SWEEP_POINTS_DEFAULT};

/* The command; with a->merge, the merge of its shards' parts (a->merge_h: their header). */
static int accuracy_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    acc_args *a = args;
    int rc = check_args(ctx, a);
    size_t n_sets = 0;
    if (rc == AN_GO && a->merge && cmd->shard_n)
        rc = an_usage(ctx, "the parts' command line has --shard: not a partial.json of rknn-diag accuracy --shard");
    if (rc == AN_GO && cmd->shard_n && (rc = an_dynamic_prepare(ctx, &cmd->q, &n_sets)) == AN_GO)
        rc = n_sets ? an_usage(ctx, "--shard: a model with dynamic_input shape sets is analysed set by set; give one "
                                    "set with --input-shape")
                    : analyse_shard(ctx, a);
    if (rc == AN_GO && (rc = an_dynamic_prepare(ctx, &cmd->q, &n_sets)) == AN_GO) {
        /* dynamic_input: one analysis per shape set, each into its own folder of the snapshot */
        const char *top = a->output_dir;
        rc = AN_EXIT_OK;
        for (size_t k = 0; k < (n_sets ? n_sets : 1); k++) {
            char dir[4300], name[256];
            if (n_sets) {
                an_dynamic_set_name(&cmd->q, k, name, sizeof name);
                snprintf(dir, sizeof dir, "%s/dynamic_%zu_%s", top, k, name);
                a->output_dir = dir;
                fprintf(ctx->out, "%s== dynamic_input set %zu of %zu: %s (snapshot %s)\n", k ? "\n" : "", k + 1, n_sets,
                        name, dir);
            }
            rc = worse(rc, analyse_once(ctx, a, k));
        }
        a->output_dir = top;
    }
    return rc;
}

/* The command line ctx of the shards, run with their parts (h: their header) to merge. */
static int merge_shards(an_cmd_ctx *ctx, an_acc_parts *parts, const an_acc_header *h)
{
    acc_args *a = malloc(sizeof *a);
    if (!a)
        return an_fail_nomem(ctx, "the command's options");
    *a = accuracy_defaults;
    a->merge = parts;
    a->merge_h = h;
    int rc = an_cmd_exec_args(ctx, &an_cmd_accuracy, a);
    free(a);
    return rc;
}

int an_accuracy_merge(an_cmd_ctx *ctx, const char *const *paths, size_t n, const char *out_dir)
{
    rd_error err = {0};
    an_acc_header h;
    an_acc_parts *parts = NULL;
    rd_status st = an_acc_parts_load(paths, n, &h, &parts, &err);
    if (st != RD_OK)
        return an_fail(ctx, &err);
    /* the shards' command line again, into out_dir */
    char **argv = calloc((size_t)h.argc + 3, sizeof *argv);
    int rc = AN_EXIT_INPUT;
    if (argv) {
        memcpy(argv, h.argv, (size_t)h.argc * sizeof *argv);
        argv[h.argc] = "-o";
        argv[h.argc + 1] = (char *)out_dir;
        an_cmd_ctx sub = *ctx;
        sub.argc = h.argc + 2;
        sub.argv = argv;
        fprintf(ctx->errs, "merging %d shards of %zu samples: rknn-diag", h.shard_n, h.total);
        for (int i = 0; i < sub.argc; i++)
            fprintf(ctx->errs, " %s", argv[i]);
        fputc('\n', ctx->errs);
        rc = strcmp(h.argv[0], "accuracy") == 0
                 ? merge_shards(&sub, parts, &h)
                 : an_usage(ctx, "the parts record the command '%.40s', not accuracy", h.argv[0]);
    } else {
        rc = an_fail_nomem(ctx, "the command line");
    }
    free(argv);
    an_acc_parts_destroy(parts);
    an_acc_header_fini(&h);
    return rc;
}

const an_cmd_spec an_cmd_accuracy = {
    .usage = "rknn-diag accuracy MODEL.onnx [-c model_config.yml] [--dataset FILE] [--inputs FILE]... [-o DIR]",
    .about = "Per-layer accuracy of the simulated NPU against the FP32 golden, as RKNN-Toolkit2's\n"
             "accuracy_analysis: simulator_error entire (errors accumulated) and single (the error each\n"
             "layer adds by itself), with findings: FP16 overflow, lossy layers, where the error jumps,\n"
             "and configuration problems. --dataset is the calibration set; --inputs the sample analysed\n"
             "(without it, --samples N lines of the dataset). Writes the snapshot folder with\n"
             "error_analysis.txt, report.json and report.html. With a board (--target T --run CMD, or\n"
             "--runtime-dumps DIR) adds RKNN's runtime_error group (entire, single_sim), names the first\n"
             "layer where the board departs from the simulator, and checks the application's input and\n"
             "output (docs/runtime.md); --app-api says how the application feeds its input, which decides\n"
             "what the board's InputOperator dump holds (normal: after mean/std; zero-copy: before).\n"
             "--rknn MODEL.rknn simulates what the toolkit built from MODEL.onnx (its fused ops, int8\n"
             "scales, float16 islands, weights, mean/std) and writes rknn_mapping.txt; --rknn-build-log\n"
             "does the same from a verbose build log (scales then by calibration). --shard K/N -o DIR\n"
             "analyses part K of N of the --samples into DIR/partial.json; `rknn-diag merge DIR... -o SNAP`\n"
             "writes the one-process snapshot from the parts (docs/sharding.md).",
    AN_SPEC_OPTS(accuracy_opts),
    AN_SPEC_SETS(accuracy_sets),
    .groups = AN_OG_SAMPLES | AN_OG_SHAPE | AN_OG_QUANT | AN_OG_BUILT | AN_OG_TARGET | AN_OG_BOARD | AN_OG_SHARD,
    .model = "MODEL.onnx",
    .model_optional = true, /* -c may name it */
    .model_twice = "; give samples with --inputs",
    AN_SPEC_ARGS_CMD(acc_args, cmd, &accuracy_defaults),
    .take = take_option,
    .main = accuracy_main,
};

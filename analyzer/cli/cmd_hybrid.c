/*
 * cmd_hybrid.c: `rknn-diag hybrid suggest|search|sweep|diagnose|verify MODEL`: which int8 tensors to keep in
 * float16 (RKNN's custom_quantize_layers), proven on the simulation, and which configuration mistake explains
 * an error no layer does. The options, the shared setup and suggest; search: hybrid_cli_search.c; sweep:
 * hybrid_cli_sweep.c. docs/hybrid.md.
 */
#include "json_out.h"
#include "accuracy.h"
#include "config_model.h"
#include "hybrid_cli.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

enum {
    OPT_JSON = 1,
    OPT_MEASURE,
    OPT_TOP,
    OPT_TARGET_COS,
    OPT_TARGET_SQNR,
    OPT_MAX_FLOAT,
    OPT_COST,
    OPT_LATENCY,
    OPT_RKNN_CFG,
    OPT_RUNTIME_DUMPS,
    OPT_REUSE_MB,
    OPT_OBJECTIVE,
    OPT_OVER,
    OPT_TARGET_SCORE,
    OPT_SWEEP_POINTS,
};

static const an_optspec hybrid_opts[] = {
    {OPT_MEASURE, "measure", 0, "N",
     "measure the output gain of the N layers with the worst single error (default 16)"},
    {OPT_TOP, "top", 0, "N", "suggest: rows printed (default 20)"},
    {OPT_JSON, "json", 0, NULL, "suggest, diagnose: JSON on stdout"},
    {OPT_TARGET_COS, "target-cos", 0, "X", "search: every output's cosine (minimum over samples) must reach X"},
    {OPT_TARGET_SQNR, "target-sqnr", 0, "DB", "search: and its SQNR must reach DB"},
    {OPT_OBJECTIVE, "objective", 0, "O",
     "how the outputs make one accuracy: min-cos-over-outputs (default: the lowest "
     "cosine of any output), cos or sqnr (all outputs as one vector)"},
    {OPT_OVER, "over", 0, "worst|mean", "search: the target holds for the worst sample (default) or the mean"},
    {OPT_TARGET_SCORE, "target-score", 0, "X",
     "search: the --score-cmd number to reach (the scorer runs on each candidate's outputs; search only)"},
    {OPT_SWEEP_POINTS, "sweep-points", 0, "N", "sweep: values of k measured, spread evenly (default 65; 0: every k)"},
    {OPT_MAX_FLOAT, "max-float", 0, "N", "search: at most N float16 tensors (default 64)"},
    {OPT_COST, "cost", 0, "macs", "search: cost of a float16 tensor: MACs run in float16 (default)"},
    {OPT_LATENCY, "latency-table", 0, "FILE",
     "search: cost in ms: a board RKNN_LOG_LEVEL=4 log or a CSV (repeat: int8 + fp16 logs)"},
    {OPT_RKNN_CFG, "rknn-cfg", 0, "FILE", "search: the toolkit's step-1 cfg: only its keys, under its names"},
    {OPT_REUSE_MB, "reuse-mb", 0, "MB",
     "suggest, search: memory for resuming runs where the float16 set changed, all samples "
     "(default 512; 0: full runs, same results)"},
    {OPT_RUNTIME_DUMPS, "runtime-dumps", 0, "DIR", "verify: the board's dump folder (pulled)"},
};

double an_hyb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *const objective_names[] = {"min-cos-over-outputs", "cos", "sqnr", NULL}; /* an_hyb_objective */
static const char *const over_names[] = {"worst", "mean", NULL};                            /* an_hyb_over */
static const char *const sub_names[] = {"suggest", "search", "sweep", "diagnose", "verify", NULL}; /* sub_kind */

/* In the order of hybrid_opts. */
static const an_optset hybrid_sets[] = {
    AN_SET_RANGE(OPT_MEASURE, hyb_args, measure, 0, 100000),
    AN_SET_RANGE(OPT_TOP, hyb_args, top, 1, 100000),
    AN_SET(OPT_JSON, AN_SET_FLAG, hyb_args, json),
    AN_SET_COS(OPT_TARGET_COS, hyb_args, target_cos),
    AN_SET_REAL(OPT_TARGET_SQNR, hyb_args, target_sqnr, -1000.0, 1000.0, "decibels"),
    AN_SET_CHOICE(OPT_OBJECTIVE, hyb_args, objective, objective_names, "cos, sqnr or min-cos-over-outputs"),
    AN_SET_CHOICE(OPT_OVER, hyb_args, over, over_names, "worst or mean"),
    AN_SET_REAL(OPT_TARGET_SCORE, hyb_args, target_score, -1e300, 1e300, "a number"),
    AN_SET(OPT_SWEEP_POINTS, AN_SET_SWEEP, hyb_args, sweep_points),
    AN_SET_RANGE(OPT_MAX_FLOAT, hyb_args, max_float, 1, 100000),
    AN_SET(OPT_RKNN_CFG, AN_SET_STR, hyb_args, rknn_cfg),
    AN_SET_RANGE(OPT_REUSE_MB, hyb_args, reuse_mb, 0, 1L << 20),
    AN_SET(OPT_RUNTIME_DUMPS, AN_SET_STR, hyb_args, runtime_dumps),
};

static const char *const USAGE =
    "rknn-diag hybrid suggest|search|sweep|diagnose MODEL.onnx --dataset FILE [options]\n"
    "       rknn-diag hybrid verify MODEL.onnx --cfg FILE --runtime-dumps DIR [--target T]\n"
    "       rknn-diag hybrid verify MODEL.onnx --cfg FILE --rknn MODEL.rknn | --rknn-build-log FILE";
static const char *const ABOUT =
    "Hybrid quantization triage: which int8 tensors to keep in float16 (custom_quantize_layers).\n"
    "  suggest   ranks the layers by the error each adds (single) and by how much of it reaches the\n"
    "            outputs (output cosine with that layer alone in float16), with the evidence.\n"
    "  sweep     the output accuracy with float16 on the first k int8 tensors (prefix) and on the rest\n"
    "            (suffix), k over the whole model, with the float16 MAC share, and the block the error\n"
    "            builds up in.\n"
    "  search    finds a cheap float16 set meeting --target-cos (and --target-sqnr, or --target-score of\n"
    "            your --score-cmd) on the outputs: singles that help alone, then windows of consecutive\n"
    "            layers by bisection, then removal of what the target does not need; prints each step and\n"
    "            writes -o OUT.quantization.cfg plus the accuracy report of that config and search.json in\n"
    "            OUT's folder. Exit 3 when even float16 everywhere misses the target, 1 when --max-float\n"
    "            stops it. Cost: MACs in float16, or the added ms of --latency-table: the board's\n"
    "            RKNN_LOG_LEVEL=4 logs of the int8 and of the float16 build, or a CSV (docs/hybrid.md).\n"
    "  diagnose  re-runs with the usual configuration mistakes fixed (RGB/BGR, mean/std, calibration\n"
    "            set, per-tensor weights, algorithm) and names each mistake the evidence shows (input\n"
    "            statistics against BatchNormalization, clipping, weight spread, output cosine).\n"
    "  verify    checks from the board's dumps (RKNN_DUMP_QUANT=1 dtypes, else the int8 grid of float32\n"
    "            values) that every tensor of --cfg's custom_quantize_layers ran in float16; exit 1 if not.\n"
    "            With --rknn or --rknn-build-log instead of dumps: from what the toolkit built (each\n"
    "            tensor's dtype in the .rknn, the log's layer table), and the reverse: tensors the build\n"
    "            runs in float16 that the cfg does not ask for.\n"
    "The analysed samples are --inputs, or --samples N lines of --dataset (also the calibration set).\n"
    "suggest, search and sweep take --rknn / --rknn-build-log to start from what the toolkit built (its fused\n"
    "ops, scales and float16 islands: docs/rknn-model.md); diagnose takes --rknn-build-log only (it\n"
    "re-calibrates with other settings, and a .rknn's scales are fixed).";

static int take_option(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    hyb_args *a = user;
    switch (id) {
    case OPT_COST:
        if (strcmp(v, "macs") != 0)
            return an_usage(ctx, "--cost expects macs (or give --latency-table FILE), got '%s'", v);
        break;
    case OPT_LATENCY:
        if (a->n_latency == sizeof a->latency_paths / sizeof a->latency_paths[0])
            return an_usage(ctx, "too many --latency-table (at most %zu)", a->n_latency);
        a->latency_paths[a->n_latency++] = v;
        a->latency = a->latency_paths[0];
        break;
    }
    return AN_GO;
}

/* What the parser leaves to the command: the options each subcommand needs or refuses. */
static int check_args(an_cmd_ctx *ctx, hyb_args *a)
{
    a->sub = (sub_kind)a->cmd.sub;
    a->model_path = a->cmd.model;
    a->out_path = a->cmd.output;
    if (a->sub == SUB_DIAGNOSE && a->cmd.q.rknn_path)
        return an_usage(ctx, "diagnose re-calibrates with other settings (mean/std, RGB/BGR, calibration set, "
                             "algorithm), but a .rknn's scales are fixed: drop --rknn (or give the build's log with "
                             "--rknn-build-log: its fused ops and precisions, scales by calibration)");
    if (a->sub == SUB_SEARCH) {
        if (isnan(a->target_cos) && isnan(a->target_sqnr) && isnan(a->target_score))
            return an_usage(ctx, "search needs --target-cos X (and/or --target-sqnr DB, or --score-cmd CMD "
                                 "--target-score X)");
        if (!a->out_path)
            return an_usage(ctx, "search needs -o OUT.quantization.cfg");
        if (a->objective == AN_HYB_OBJ_SQNR && isnan(a->target_sqnr))
            return an_usage(ctx, "--objective sqnr needs --target-sqnr DB");
        if (a->cmd.score_cmd && isnan(a->target_score))
            return an_usage(ctx, "--score-cmd needs --target-score X (the number your scorer must reach)");
        if (!a->cmd.score_cmd && !isnan(a->target_score))
            return an_usage(ctx, "--target-score needs --score-cmd CMD (the scorer that prints the number)");
    } else if (a->cmd.score_cmd || !isnan(a->target_score)) {
        return an_usage(ctx, "--score-cmd and --target-score are options of search");
    }
    return AN_GO;
}

/* ---- shared setup --------------------------------------------------------------------------------- */

static void run_fini(hyb_run *r)
{
    free(r->order);
    free(r->cands);
    if (r->hc_ready)
        an_hyb_fini(&r->hc);
    rd_result_fini(&r->result);
    for (size_t k = 0; r->samples && k < r->n_samples * r->n_in; k++)
        rd_tensor_fini(&r->samples[k]);
    free(r->samples);
    rd_sim_destroy(r->s);
    rd_model_destroy(r->m);
}

/* Model, samples, calibrated simulation, golden outputs. */
static rd_status setup(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, rd_error *err)
{
    an_model_request req =
        an_cmd_model_request(ctx, &a->cmd,
                             "the search "
                             "analyses one input shape: give it with --input-shape (or subgraphs.input_size_list)");
    rd_status st = an_model_load_configured(&a->cmd.q, &req, &r->m, err);
    if (st == RD_OK && a->cmd.q.cfg.dtype != RD_QDT_W8A8)
        st = rd_errorf(err, RD_E_PARSE,
                       "empty search space: --dtype %s has no int8 tensor to move to float16 "
                       "(hybrid works on w8a8)",
                       rd_qdtype_name(a->cmd.q.cfg.dtype));
    if (st == RD_OK) {
        r->n_in = rd_model_input_count(r->m);
        st = an_quant_load_samples(&a->cmd.q, r->m, a->cmd.inputs, a->cmd.n_inputs, (size_t)a->cmd.samples, ctx->errs,
                                   &r->samples, &r->n_samples, err);
    }
    if (st == RD_OK)
        st = an_quant_build_sim(&a->cmd.q, r->m, r->samples, ctx->errs, false, &r->s, err);
    if (st == RD_OK)
        st = an_quant_built_outputs(&a->cmd.q, r->s, NULL, ctx->errs, NULL, err);
    if (st == RD_OK)
        st = an_hyb_init(&r->hc, r->m, r->s, r->samples, r->n_samples, rd_pool_threads(a->cmd.q.pool), err);
    r->hc_ready = st == RD_OK;
    r->hc.reuse_bytes = (size_t)a->reuse_mb << 20;
    r->hc.objective = a->objective;
    return st;
}

/* The accuracy analysis, the candidates and their ranking. */
static rd_status analyse(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, rd_error *err)
{
    an_accuracy_opts ao = {.warn_cos = 0.99, .error_cos = 0.98, .worst_layers = 0, .progress = ctx->errs};
    rd_status st = an_accuracy_run(r->s, r->samples, r->n_in, r->n_samples, &ao, &r->result, err);
    if (st == RD_OK && a->sub != SUB_SWEEP) /* sweep adds them once its block is known */
        st = an_findings_add_sim(&r->result, &ao, NULL, r->s, err);
    if (st == RD_OK)
        st = an_hyb_candidates(r->s, &r->result, &r->cands, &r->n_cands, err);
    if (st == RD_OK && r->n_cands == 0)
        st = rd_errorf(err, RD_E_PARSE, "empty search space: no int8 layer output of %s can move to float16",
                       a->model_path);
    if (st == RD_OK && a->latency)
        st = an_hyb_latency_load(a->latency_paths, a->n_latency, r->s, r->cands, r->n_cands, ctx->errs, err);
    return st;
}

static rd_status rank(hyb_args *a, hyb_run *r, rd_error *err)
{
    r->order = calloc(r->n_cands + 1, sizeof *r->order);
    if (!r->order)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    return an_hyb_rank(&r->hc, r->cands, r->n_cands, (size_t)a->measure, r->order, err);
}

/* ---- suggest -------------------------------------------------------------------------------------- */

static int suggest(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, const an_hyb_score *base)
{
    size_t rows = r->n_cands < (size_t)a->top ? r->n_cands : (size_t)a->top;
    if (a->json) {
        bool ok = true;
        cJSON *root = cJSON_CreateObject();
        an_json_add_finite(root, "output_cos_int8", base->cos, &ok);
        an_json_add_finite(root, "output_sqnr_int8", base->sqnr_db, &ok);
        cJSON *arr = an_json_add_array(root, "layers", &ok);
        for (size_t i = 0; i < rows; i++) {
            const an_hyb_cand *c = &r->cands[r->order[i]];
            cJSON *o = an_json_push_object(arr, &ok);
            an_json_add_str(o, "tensor", c->name, &ok);
            an_json_add_str(o, "op_type", c->op_type, &ok);
            an_json_add_num(o, "position", c->position, &ok);
            an_json_add_finite(o, "single_cos", c->single_cos, &ok);
            an_json_add_finite(o, "entire_cos", c->entire_cos, &ok);
            an_json_add_finite(o, "single_sqnr", c->single_sqnr, &ok);
            an_json_add_finite(o, "saturated_share", c->saturated, &ok);
            an_json_add_finite(o, "weight_outlier_ratio", c->w_outlier, &ok);
            an_json_add_finite(o, "macs", c->macs, &ok);
            an_json_add_finite(o, "output_cos_alone_fp16", c->alone_cos, &ok);
            an_json_add_finite(o, "output_cos_gain", c->alone_cos - base->cos, &ok);
        }
        return an_emit_json(ctx, root, ok);
    }
    fprintf(ctx->out, "int8 outputs: cosine %.5f, SQNR %.2f dB (minimum over outputs and %zu samples)\n\n", base->cos,
            base->sqnr_db, r->n_samples);
    fprintf(ctx->out, "%-4s %-44s %-14s %5s %9s %9s %8s %6s %8s %10s %9s\n", "rank", "tensor", "op", "pos", "single",
            "entire", "sqnr_dB", "sat%", "w_outl", "out_alone", "gain");
    for (size_t i = 0; i < rows; i++) {
        const an_hyb_cand *c = &r->cands[r->order[i]];
        char alone[32] = "-", gain[32] = "-", outl[32] = "-";
        if (!isnan(c->alone_cos)) {
            snprintf(alone, sizeof alone, "%.5f", c->alone_cos);
            snprintf(gain, sizeof gain, "%+.5f", c->alone_cos - base->cos);
        }
        if (!isnan(c->w_outlier))
            snprintf(outl, sizeof outl, "%.1fx", c->w_outlier);
        fprintf(ctx->out, "%-4zu %-44s %-14s %5d %9.5f %9.5f %8.2f %6.2f %8s %10s %9s\n", i + 1, RD_TEXT_SHOWN(c->name),
                RD_TEXT_SHOWN(c->op_type), c->position, c->single_cos, c->entire_cos, c->single_sqnr,
                100.0 * c->saturated, outl, alone, gain);
    }
    fprintf(ctx->out,
            "\nsingle/entire: cosine of the layer alone / accumulated (minimum over samples); w_outl: max|w| of "
            "the worst output channel over the median channel's; out_alone: output cosine with only this "
            "layer in float16 (measured for the --measure %ld worst single layers).\n",
            a->measure);
    for (size_t i = 0; i < r->result.n_findings; i++)
        if (r->result.findings[i].kind == RD_FIND_CONFIG)
            fprintf(ctx->out, "\nThe accumulated error has no single layer to blame: `rknn-diag hybrid sweep` shows "
                              "whether it builds up in a block of layers, `rknn-diag hybrid diagnose` tries the usual "
                              "configuration mistakes (same options).\n");
    return AN_EXIT_OK;
}

/* ---- search --------------------------------------------------------------------------------------- */

/* The toolkit's names: candidates without a changeable key are excluded, with the reason and a neighbour. */
static rd_status restrict_to_rknn_cfg(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, rd_error *err)
{
    rd_qcfg tk;
    rd_status st = rd_qcfg_load(a->rknn_cfg, &tk, err);
    if (st != RD_OK) {
        if (err && err->code == RD_E_INVAL)
            err->code = RD_E_PARSE;
        return st;
    }
    const char **tk_name = calloc(r->n_cands + 1, sizeof *tk_name);
    if (!tk_name) {
        rd_qcfg_fini(&tk);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < tk.n_params; i++) {
        const char *ours = an_quant_match_name(r->s, tk.params[i].name);
        for (size_t k = 0; ours && k < r->n_cands; k++)
            if (strcmp(r->cands[k].name, ours) == 0 && !tk_name[k])
                tk_name[k] = tk.params[i].name;
    }
    size_t excluded = 0;
    for (size_t k = 0; k < r->n_cands; k++) {
        an_hyb_cand *c = &r->cands[k];
        const char *n = tk_name[k];
        if (!n) {
            c->allowed = false;
            snprintf(c->reason, sizeof c->reason, "not a key of %s's quantize_parameters", a->rknn_cfg);
        } else if (strstr(n, "_sw") || strstr(n, "-rs") || strstr(n, "#1")) {
            c->allowed = false;
            snprintf(c->reason, sizeof c->reason,
                     "its toolkit name '%.80s' is compiler-made (_sw, -rs, #1): the "
                     "toolkit does not let it change",
                     n);
        }
    }
    for (size_t k = 0; k < r->n_cands; k++) {
        an_hyb_cand *c = &r->cands[k];
        if (c->allowed)
            continue;
        excluded++;
        /* the nearest changeable tensor in table order */
        const an_hyb_cand *near = NULL;
        for (size_t d = 1; d < r->n_cands && !near; d++) {
            if (k >= d && r->cands[k - d].allowed)
                near = &r->cands[k - d];
            else if (k + d < r->n_cands && r->cands[k + d].allowed)
                near = &r->cands[k + d];
        }
        if (excluded <= 20)
            fprintf(ctx->errs, "excluded: '%s': %s; a neighbour that can change: %s\n", RD_TEXT_SHOWN(c->name),
                    RD_TEXT_SHOWN(c->reason), near ? RD_TEXT_SHOWN(near->name) : "(none)");
    }
    if (excluded > 20)
        fprintf(ctx->errs, "excluded: ... %zu tensors in all\n", excluded);
    free(tk_name);
    rd_qcfg_fini(&tk);
    if (excluded == r->n_cands)
        return rd_errorf(err, RD_E_PARSE, "empty search space: none of the %zu int8 tensors has a changeable key in %s",
                         r->n_cands, a->rknn_cfg);
    return RD_OK;
}

int an_hybrid_verify(an_cmd_ctx *ctx, const char *model_path, an_quant_opts *q, const rd_load_options *lopt,
                     const char *dumps_dir, bool json);

static const hyb_args hybrid_defaults = {.measure = 16,
                                         .top = 20,
                                         .max_float = 64,
                                         .reuse_mb = AN_HYB_REUSE_DEFAULT_MB,
                                         .sweep_points = AN_HYB_SWEEP_POINTS_DEFAULT,
                                         .target_cos = NAN,
                                         .target_sqnr = NAN,
                                         .target_score = NAN};

static int hybrid_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    (void)cmd; /* a->cmd, which the helpers of hybrid_cli.h reach through a */
    hyb_args *a = args;
    int rc = check_args(ctx, a);
    hyb_run r;
    memset(&r, 0, sizeof r);
    rd_result_init(&r.result);
    rd_error err = {0};
    if (rc != AN_GO)
        goto out;
    if (an_quant_pool(&a->cmd.q, NULL, &err) != RD_OK) { /* one pool for every run; samples measured at once */
        rc = an_fail(ctx, &err); /* a bad --threads is a usage error (2), no memory for the pool 3 */
        goto out;
    }
    if (a->sub == SUB_DIAGNOSE) {
        rc = an_hyb_cli_diagnose(ctx, a);
        goto out;
    }
    if (a->sub == SUB_VERIFY) {
        rd_load_options lopt = {.input_shapes = a->cmd.shapes, .n_input_shapes = a->cmd.n_shapes};
        rc = an_hybrid_verify(ctx, a->model_path, &a->cmd.q, &lopt, a->runtime_dumps, a->json);
        goto out;
    }
    double t0 = an_hyb_now();
    rd_status st = setup(ctx, a, &r, &err);
    if (st == RD_OK)
        st = analyse(ctx, a, &r, &err);
    if (st == RD_OK && a->sub != SUB_SUGGEST && a->rknn_cfg)
        st = restrict_to_rknn_cfg(ctx, a, &r, &err);
    if (st == RD_OK && a->sub == SUB_SWEEP) {
        rc = an_hyb_cli_sweep(ctx, a, &r, &err);
        goto out;
    }
    an_hyb_score base = {0};
    if (st == RD_OK)
        st = an_hyb_measure(&r.hc, NULL, 0, &base, &err);
    if (st == RD_OK)
        st = rank(a, &r, &err);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    rc = a->sub == SUB_SUGGEST ? suggest(ctx, a, &r, &base) : an_hyb_cli_search(ctx, a, &r, &base, t0, &err);
out:
    run_fini(&r);
    return rc;
}

const an_cmd_spec an_cmd_hybrid = {
    .usage = USAGE,
    .about = ABOUT,
    AN_SPEC_OPTS(hybrid_opts),
    AN_SPEC_SETS(hybrid_sets),
    .output = {0, "output", 'o', "FILE",
               "search: the .quantization.cfg to write (its folder gets the accuracy report)"},
    .groups = AN_OG_SAMPLES | AN_OG_SHAPE | AN_OG_QUANT | AN_OG_BUILT | AN_OG_TARGET | AN_OG_SCORE,
    .model = "MODEL.onnx",
    .subcommands = sub_names,
    AN_SPEC_ARGS_CMD(hyb_args, cmd, &hybrid_defaults),
    .take = take_option,
    .main = hybrid_main,
};

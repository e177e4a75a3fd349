/*
 * cmd_hybrid.c: `rknn-diag hybrid suggest|search|diagnose MODEL`: which int8 tensors to keep in float16
 * (RKNN's custom_quantize_layers), proven on the simulation, and which configuration mistake explains an
 * error no layer does. docs/hybrid.md.
 */
#include "json_out.h"
#include "accuracy.h"
#include "cli_internal.h"
#include "cli_model_args.h"
#include "hybrid.h"
#include "qcfg_build.h"
#include "quant_setup.h"
#include "config_model.h"
#include "tensor_dump.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

enum {
    OPT_HELP = 1,
    OPT_INPUTS,
    OPT_SAMPLES,
    OPT_INPUT_SHAPE,
    OPT_JSON,
    OPT_MEASURE,
    OPT_TOP,
    OPT_TARGET_COS,
    OPT_TARGET_SQNR,
    OPT_MAX_FLOAT,
    OPT_COST,
    OPT_LATENCY,
    OPT_OUTPUT,
    OPT_RKNN_CFG,
    OPT_THREADS,
    OPT_RUNTIME_DUMPS,
    OPT_TARGET,
    OPT_REUSE_MB,
};

static const an_optspec hybrid_opts[] = {
    {OPT_INPUTS, "inputs", 'i', "FILE", "the sample analysed: one file per model input (repeat)"},
    {OPT_SAMPLES, "samples", 0, "N", "without --inputs: analyse the first N lines of the dataset (default 1)"},
    {OPT_INPUT_SHAPE, "input-shape", 0, "NAME=D0,D1,..", "fix symbolic input dims (repeat per input)"},
    {OPT_MEASURE, "measure", 0, "N", "measure the output gain of the N layers with the worst single error (default 16)"},
    {OPT_TOP, "top", 0, "N", "suggest: rows printed (default 20)"},
    {OPT_JSON, "json", 0, NULL, "suggest, diagnose: JSON on stdout"},
    {OPT_TARGET_COS, "target-cos", 0, "X", "search: every output's cosine (minimum over samples) must reach X"},
    {OPT_TARGET_SQNR, "target-sqnr", 0, "DB", "search: and its SQNR must reach DB"},
    {OPT_MAX_FLOAT, "max-float", 0, "N", "search: at most N float16 tensors (default 64)"},
    {OPT_COST, "cost", 0, "macs", "search: cost of a float16 tensor: MACs run in float16 (default)"},
    {OPT_LATENCY, "latency-table", 0, "FILE",
     "search: cost in ms: a board RKNN_LOG_LEVEL=4 log or a CSV (repeat: int8 + fp16 logs)"},
    {OPT_OUTPUT, "output", 'o', "FILE", "search: the .quantization.cfg to write (its folder gets the accuracy report)"},
    {OPT_RKNN_CFG, "rknn-cfg", 0, "FILE", "search: the toolkit's step-1 cfg: only its keys, under its names"},
    {OPT_THREADS, "threads", 0, "N", "analysed samples measured at once (default 2)"},
    {OPT_REUSE_MB, "reuse-mb", 0, "MB", "suggest, search: memory for resuming runs where the float16 set changed, all samples "
                                        "(default 512; 0: full runs, same results)"},
    {OPT_RUNTIME_DUMPS, "runtime-dumps", 0, "DIR", "verify: the board's dump folder (pulled)"},
    {OPT_TARGET, "target", 0, "T", "verify: the board's chip (reads .txt dumps; sets --platform)"},
    AN_QUANT_OPTSPECS,
    {OPT_HELP, "help", 'h', NULL, "show this help"},
};
#define N_HYBRID_OPTS ((int)(sizeof hybrid_opts / sizeof hybrid_opts[0]))

typedef enum sub_kind { SUB_SUGGEST, SUB_SEARCH, SUB_DIAGNOSE, SUB_VERIFY } sub_kind;

typedef struct hyb_args {
    sub_kind sub;
    const char *model_path;
    const char *inputs[AN_MAX_INPUTS];
    size_t n_inputs;
    long samples, measure, top, max_float, threads, reuse_mb;
    bool json;
    double target_cos, target_sqnr; /* NaN: not given */
    const char *latency, *out_path, *rknn_cfg, *runtime_dumps, *target; /* latency: the first table, if any */
    const char *latency_paths[16];
    size_t n_latency;
    rd_input_shape shapes[AN_MAX_INPUTS];
    an_name_buf shape_names[AN_MAX_INPUTS];
    size_t n_shapes;
    an_quant_opts q;
} hyb_args;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool parse_double(const char *text, double lo, double hi, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!end || end == text || *end || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

static const char *const USAGE = "rknn-diag hybrid suggest|search|diagnose MODEL.onnx --dataset FILE [options]\n"
    "       rknn-diag hybrid verify MODEL.onnx --cfg FILE --runtime-dumps DIR [--target T]";
static const char *const ABOUT =
    "Hybrid quantization triage: which int8 tensors to keep in float16 (custom_quantize_layers).\n"
    "  suggest   ranks the layers by the error each adds (single) and by how much of it reaches the\n"
    "            outputs (output cosine with that layer alone in float16), with the evidence.\n"
    "  search    finds a small float16 set meeting --target-cos (and --target-sqnr) on every output,\n"
    "            measured on the simulation (greedy forward, then backward removal), and writes -o\n"
    "            OUT.quantization.cfg plus the accuracy report of that config in OUT's folder. Exit 3\n"
    "            when even float16 everywhere misses the target. Cost: MACs in float16, or the added ms\n"
    "            of --latency-table: the board's RKNN_LOG_LEVEL=4 logs of the int8 and of the float16\n"
    "            build (per-layer table; rows map by node name), or a CSV (docs/hybrid.md).\n"
    "  diagnose  re-runs with the usual configuration mistakes fixed (RGB/BGR, mean/std, calibration\n"
    "            set, per-tensor weights, algorithm) and names each mistake the evidence shows (input\n"
    "            statistics against BatchNormalization, clipping, weight spread, output cosine).\n"
    "  verify    checks from the board's dumps (RKNN_DUMP_QUANT=1 dtypes, else the int8 grid of float32\n"
    "            values) that every tensor of --cfg's custom_quantize_layers ran in float16; exit 1 if not.\n"
    "The analysed samples are --inputs, or --samples N lines of --dataset (also the calibration set).";

static int parse_args(an_cmd_ctx *ctx, hyb_args *a)
{
    rd_error err = {0};
    if (ctx->argc < 2)
        return an_usage(ctx, "missing subcommand: suggest, search, diagnose or verify");
    const char *sub = ctx->argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        an_print_help(ctx->out, USAGE, ABOUT, hybrid_opts, N_HYBRID_OPTS);
        return AN_EXIT_OK;
    }
    if (strcmp(sub, "suggest") == 0)
        a->sub = SUB_SUGGEST;
    else if (strcmp(sub, "search") == 0)
        a->sub = SUB_SEARCH;
    else if (strcmp(sub, "diagnose") == 0)
        a->sub = SUB_DIAGNOSE;
    else if (strcmp(sub, "verify") == 0)
        a->sub = SUB_VERIFY;
    else
        return an_usage(ctx, "unknown subcommand '%s' (suggest, search, diagnose or verify)", sub);
    an_cmd_ctx sub_ctx = *ctx;
    sub_ctx.argc = ctx->argc - 1;
    sub_ctx.argv = ctx->argv + 1;
    an_opts p;
    an_opts_init(&p, &sub_ctx, hybrid_opts, N_HYBRID_OPTS);
    const char *v;
    int id;
    while ((id = an_opts_next(&p, &v)) != -1) {
        if (an_quant_take(&a->q, id, v))
            continue;
        switch (id) {
        case -2:
            return AN_EXIT_USAGE;
        case 0:
            if (a->model_path)
                return an_usage(ctx, "one model only (got '%s' and '%s')", a->model_path, v);
            a->model_path = v;
            break;
        case OPT_HELP:
            an_print_help(ctx->out, USAGE, ABOUT, hybrid_opts, N_HYBRID_OPTS);
            return AN_EXIT_OK;
        case OPT_INPUTS:
            if (a->n_inputs == AN_MAX_INPUTS)
                return an_usage(ctx, "too many --inputs");
            a->inputs[a->n_inputs++] = v;
            break;
        case OPT_SAMPLES:
            if (!an_parse_int("hybrid", "--samples", v, 1, 100000, &a->samples, ctx->errs))
                return AN_EXIT_USAGE;
            break;
        case OPT_MEASURE:
            if (!an_parse_int("hybrid", "--measure", v, 0, 100000, &a->measure, ctx->errs))
                return AN_EXIT_USAGE;
            break;
        case OPT_TOP:
            if (!an_parse_int("hybrid", "--top", v, 1, 100000, &a->top, ctx->errs))
                return AN_EXIT_USAGE;
            break;
        case OPT_MAX_FLOAT:
            if (!an_parse_int("hybrid", "--max-float", v, 1, 100000, &a->max_float, ctx->errs))
                return AN_EXIT_USAGE;
            break;
        case OPT_THREADS:
            if (!an_parse_int("hybrid", "--threads", v, 1, 256, &a->threads, ctx->errs))
                return AN_EXIT_USAGE;
            break;
        case OPT_REUSE_MB:
            if (!an_parse_int("hybrid", "--reuse-mb", v, 0, 1L << 20, &a->reuse_mb, ctx->errs))
                return AN_EXIT_USAGE;
            break;
        case OPT_JSON:
            a->json = true;
            break;
        case OPT_TARGET_COS:
            if (!parse_double(v, -1.0, 1.0, &a->target_cos))
                return an_usage(ctx, "--target-cos expects a cosine in -1..1, got '%s'", v);
            break;
        case OPT_TARGET_SQNR:
            if (!parse_double(v, -1000.0, 1000.0, &a->target_sqnr))
                return an_usage(ctx, "--target-sqnr expects decibels, got '%s'", v);
            break;
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
        case OPT_OUTPUT:
            a->out_path = v;
            break;
        case OPT_RKNN_CFG:
            a->rknn_cfg = v;
            break;
        case OPT_RUNTIME_DUMPS:
            a->runtime_dumps = v;
            break;
        case OPT_TARGET:
            if (!rd_platform_find(v))
                return an_usage(ctx, "--target: unknown chip '%s'", v);
            a->target = v;
            break;
        case OPT_INPUT_SHAPE:
            if (an_parse_input_shape(v, a->shape_names, a->shapes, &a->n_shapes, &err) != RD_OK)
                return an_usage(ctx, "%s", err.msg);
            break;
        }
    }
    if (!a->model_path)
        return an_usage(ctx, "missing MODEL.onnx");
    if (a->target) {
        if (a->q.platform && strcasecmp(a->q.platform, a->target) != 0)
            return an_usage(ctx, "--target %s and --platform %s disagree", a->target, a->q.platform);
        a->q.platform = a->target;
    }
    if (a->sub == SUB_SEARCH) {
        if (isnan(a->target_cos) && isnan(a->target_sqnr))
            return an_usage(ctx, "search needs --target-cos X (and/or --target-sqnr DB)");
        if (!a->out_path)
            return an_usage(ctx, "search needs -o OUT.quantization.cfg");
    }
    return -1;
}

/* ---- shared setup --------------------------------------------------------------------------------- */

typedef struct hyb_run {
    rd_model *m;
    rd_sim *s;
    rd_tensor *samples;
    size_t n_samples, n_in;
    rd_result result;
    an_hyb_ctx hc;
    bool hc_ready;
    an_hyb_cand *cands;
    size_t n_cands;
    size_t *order;
} hyb_run;

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
    an_model_request req = {.command = "hybrid", .path = a->model_path, .shapes = a->shapes, .n_shapes = a->n_shapes,
                            .errs = ctx->errs, .dynamic_refusal = "the search " "analyses one input shape: give it with --input-shape (or subgraphs.input_size_list)"};
    rd_status st = an_model_load_configured(&a->q, &req, &r->m, err);
    if (st == RD_OK && a->q.cfg.dtype != RD_QDT_W8A8)
        st = rd_errorf(err, RD_E_PARSE, "empty search space: --dtype %s has no int8 tensor to move to float16 "
                                        "(hybrid works on w8a8)", rd_qdtype_name(a->q.cfg.dtype));
    if (st == RD_OK) {
        r->n_in = rd_model_input_count(r->m);
        st = an_quant_load_samples(&a->q, r->m, a->inputs, a->n_inputs, (size_t)a->samples, ctx->errs, &r->samples,
                                   &r->n_samples, err);
    }
    if (st == RD_OK)
        st = an_quant_build_sim(&a->q, r->m, r->samples, ctx->errs, false, &r->s, err);
    if (st == RD_OK)
        st = an_hyb_init(&r->hc, r->m, r->s, r->samples, r->n_samples, (int)a->threads, err);
    r->hc_ready = st == RD_OK;
    r->hc.reuse_bytes = (size_t)a->reuse_mb << 20;
    return st;
}

/* The accuracy analysis, the candidates and their ranking. */
static rd_status analyse(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, rd_error *err)
{
    an_accuracy_opts ao = {.warn_cos = 0.99, .error_cos = 0.98, .worst_layers = 0, .progress = ctx->errs};
    rd_status st = an_accuracy_run(r->s, r->samples, r->n_in, r->n_samples, &ao, &r->result, err);
    if (st == RD_OK)
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

static cJSON *num(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static int suggest(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, const an_hyb_score *base)
{
    size_t rows = r->n_cands < (size_t)a->top ? r->n_cands : (size_t)a->top;
    if (a->json) {
        cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray();
        cJSON_AddItemToObject(root, "output_cos_int8", num(base->cos));
        cJSON_AddItemToObject(root, "output_sqnr_int8", num(base->sqnr_db));
        cJSON_AddItemToObject(root, "layers", arr);
        for (size_t i = 0; i < rows; i++) {
            const an_hyb_cand *c = &r->cands[r->order[i]];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "tensor", c->name);
            cJSON_AddStringToObject(o, "op_type", c->op_type);
            cJSON_AddNumberToObject(o, "position", c->position);
            cJSON_AddItemToObject(o, "single_cos", num(c->single_cos));
            cJSON_AddItemToObject(o, "entire_cos", num(c->entire_cos));
            cJSON_AddItemToObject(o, "single_sqnr", num(c->single_sqnr));
            cJSON_AddItemToObject(o, "saturated_share", num(c->saturated));
            cJSON_AddItemToObject(o, "weight_outlier_ratio", num(c->w_outlier));
            cJSON_AddItemToObject(o, "macs", num(c->macs));
            cJSON_AddItemToObject(o, "output_cos_alone_fp16", num(c->alone_cos));
            cJSON_AddItemToObject(o, "output_cos_gain", num(c->alone_cos - base->cos));
            cJSON_AddItemToArray(arr, o);
        }
        an_json_print(ctx->out, root);
        return AN_EXIT_OK;
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
                RD_TEXT_SHOWN(c->op_type),
                c->position, c->single_cos, c->entire_cos, c->single_sqnr, 100.0 * c->saturated, outl, alone, gain);
    }
    fprintf(ctx->out, "\nsingle/entire: cosine of the layer alone / accumulated (minimum over samples); w_outl: max|w| of "
                      "the worst output channel over the median channel's; out_alone: output cosine with only this "
                      "layer in float16 (measured for the --measure %ld worst single layers).\n", a->measure);
    for (size_t i = 0; i < r->result.n_findings; i++)
        if (r->result.findings[i].kind == RD_FIND_CONFIG)
            fprintf(ctx->out, "\nThe accumulated error has no single layer to blame: run `rknn-diag hybrid diagnose` "
                              "with the same options to try the usual configuration mistakes.\n");
    return AN_EXIT_OK;
}

/* ---- search --------------------------------------------------------------------------------------- */

static bool meets(const hyb_args *a, const an_hyb_score *s)
{
    return (isnan(a->target_cos) || s->cos >= a->target_cos) && (isnan(a->target_sqnr) || s->sqnr_db >= a->target_sqnr);
}

/* How far from the target, normalised (0 when met): the greedy step keeps what lowers it. */
static double deficit(const hyb_args *a, const an_hyb_score *s)
{
    double d = 0.0;
    if (!isnan(a->target_cos) && s->cos < a->target_cos)
        d += (a->target_cos - s->cos) / fmax(1e-6, 1.0 - a->target_cos);
    if (!isnan(a->target_sqnr) && s->sqnr_db < a->target_sqnr)
        d += (a->target_sqnr - s->sqnr_db) / 10.0;
    return d;
}

static void print_step(an_cmd_ctx *ctx, const hyb_args *a, const char *what, const char *name, size_t n_float,
                       double cost, const an_hyb_score *s)
{
    fprintf(ctx->out, "%-8s %-44s %6zu %14.6g %9.5f %9.2f %s\n", what, RD_TEXT_SHOWN(name), n_float,
            a->latency ? cost : cost / 1e6,
            s->cos, s->sqnr_db, meets(a, s) ? "meets" : "");
}

static double set_cost(const hyb_run *r, const size_t *set, size_t n)
{
    double c = 0;
    for (size_t i = 0; i < n; i++)
        c += r->cands[set[i]].cost;
    return c;
}

static rd_status measure_set(hyb_run *r, const size_t *set, size_t n, const char **names, an_hyb_score *out,
                             rd_error *err)
{
    for (size_t i = 0; i < n; i++)
        names[i] = r->cands[set[i]].name;
    return an_hyb_measure(&r->hc, names, n, out, err);
}

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
            snprintf(c->reason, sizeof c->reason, "its toolkit name '%.80s' is compiler-made (_sw, -rs, #1): the "
                     "toolkit does not let it change", n);
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

/* Writes the cfg of the current float16 set and the accuracy report beside it. */
static rd_status write_outputs(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, const size_t *set, size_t n, rd_error *err)
{
    for (size_t i = 0; i < n; i++)
        rd_sim_set_precision(r->s, r->cands[set[i]].name, RD_PREC_FP16, NULL);
    rd_qcfg ours, merged;
    rd_qcfg_init(&ours);
    rd_qcfg_init(&merged);
    rd_status st = an_qcfg_collect(r->s, &ours, ctx->errs, err);
    const rd_qcfg *result = &ours;
    if (st == RD_OK && a->rknn_cfg) {
        st = an_qcfg_merge_rknn(r->s, &ours, a->rknn_cfg, &merged, ctx->errs, err);
        result = &merged;
    }
    /* the cfg and the accuracy report of the chosen config go in OUT's folder, created if needed */
    char dir[4096];
    const char *slash = strrchr(a->out_path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - a->out_path), a->out_path);
    else
        snprintf(dir, sizeof dir, ".");
    if (st == RD_OK)
        st = an_mkdirs(dir, err);
    if (st == RD_OK)
        st = rd_qcfg_save(a->out_path, result, err);
    rd_qcfg_fini(&ours);
    rd_qcfg_fini(&merged);
    rd_result rep;
    rd_result_init(&rep);
    an_accuracy_opts ao = {.warn_cos = 0.99, .error_cos = 0.98, .worst_layers = 6};
    if (st == RD_OK)
        st = an_accuracy_run(r->s, r->samples, r->n_in, r->n_samples, &ao, &rep, err);
    if (st == RD_OK)
        st = an_findings_add_sim(&rep, &ao, NULL, r->s, err);
    if (st == RD_OK)
        st = rd_result_set_string(&rep.tool, "rknn-diag " RD_VERSION " (hybrid search)", err);
    if (st == RD_OK)
        st = rd_result_set_string(&rep.model, a->model_path, err);
    if (st == RD_OK)
        st = rd_result_set_config(&rep, "cfg", a->out_path, err);
    char path[4200];
    snprintf(path, sizeof path, "%s/error_analysis.txt", dir);
    if (st == RD_OK)
        st = rd_rknn_txt_save(&rep, NULL, path, err);
    snprintf(path, sizeof path, "%s/report.json", dir);
    if (st == RD_OK)
        st = rd_report_json_save(&rep, path, err);
    snprintf(path, sizeof path, "%s/report.html", dir);
    if (st == RD_OK)
        st = rd_report_html_save(&rep, path, err);
    rd_result_fini(&rep);
    for (size_t i = 0; i < n; i++)
        rd_sim_set_precision(r->s, r->cands[set[i]].name, RD_PREC_INT8, NULL);
    if (st == RD_OK)
        fprintf(ctx->errs, "wrote %s and the accuracy report of that config (%s/error_analysis.txt, report.json, "
                           "report.html)\n", a->out_path, dir);
    return st;
}

static int search(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, const an_hyb_score *base, double t0, rd_error *err)
{
    size_t nc = r->n_cands;
    size_t *set = calloc(nc + 1, sizeof *set), *all = calloc(nc + 1, sizeof *all);
    const char **names = calloc(nc + 1, sizeof *names);
    bool *in_set = calloc(nc + 1, sizeof *in_set);
    int rc = AN_EXIT_INPUT;
    rd_status st = set && all && names && in_set ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t n = 0, n_all = 0;
    an_hyb_score cur = *base, full = {0};
    for (size_t k = 0; k < nc && st == RD_OK; k++)
        if (r->cands[k].allowed)
            all[n_all++] = k;
    if (st == RD_OK)
        st = measure_set(r, all, n_all, names, &full, err);
    if (st != RD_OK)
        goto out;
    const char *unit = a->latency ? "ms added" : "MMACs fp16";
    fprintf(ctx->out, "%-8s %-44s %6s %14s %9s %9s\n", "step", "tensor", "float", unit, "out_cos", "sqnr_dB");
    print_step(ctx, a, "int8", "(all int8)", 0, 0, base);
    print_step(ctx, a, "fp16", "(every candidate in float16)", n_all, set_cost(r, all, n_all), &full);
    if (!meets(a, &full)) {
        fprintf(ctx->out, "\ntarget not reachable: with all %zu candidate tensors in float16 the outputs reach cosine "
                          "%.5f, SQNR %.2f dB (target: cosine %.5f", n_all, full.cos, full.sqnr_db, a->target_cos);
        if (!isnan(a->target_sqnr))
            fprintf(ctx->out, ", SQNR %.2f dB", a->target_sqnr);
        fprintf(ctx->out, "). Float16 alone loses that much: lower the target or look at the float16 error "
                          "(accuracy --dtype float16).\n");
        rc = AN_EXIT_INPUT;
        goto out;
    }
    /* forward: add in rank order, keep what brings the outputs closer to the target */
    for (size_t i = 0; i < nc && !meets(a, &cur) && n < (size_t)a->max_float && st == RD_OK; i++) {
        size_t k = r->order[i];
        if (!r->cands[k].allowed)
            continue;
        set[n] = k;
        an_hyb_score sc;
        st = measure_set(r, set, n + 1, names, &sc, err);
        if (st == RD_OK && deficit(a, &sc) < deficit(a, &cur) - 1e-9) {
            cur = sc;
            in_set[k] = true;
            n++;
            print_step(ctx, a, "add", r->cands[k].name, n, set_cost(r, set, n), &cur);
            an_hyb_keep(&r->hc);
        }
    }
    /* layers that help only together: add the rest in rank order until the target is met */
    for (size_t i = 0; i < nc && !meets(a, &cur) && n < (size_t)a->max_float && st == RD_OK; i++) {
        size_t k = r->order[i];
        if (!r->cands[k].allowed || in_set[k])
            continue;
        set[n++] = k;
        in_set[k] = true;
        st = measure_set(r, set, n, names, &cur, err);
        an_hyb_keep(&r->hc);
        if (st == RD_OK)
            print_step(ctx, a, "add*", r->cands[k].name, n, set_cost(r, set, n), &cur);
    }
    if (st == RD_OK && !meets(a, &cur)) {
        fprintf(ctx->out, "\ntarget not reached within --max-float %ld: best cosine %.5f, SQNR %.2f dB with %zu float16 "
                          "tensors (float16 everywhere reaches %.5f)\n", a->max_float, cur.cos, cur.sqnr_db, n, full.cos);
        rc = AN_EXIT_GATE;
        goto out;
    }
    /* backward: drop what the target does not need, the last added first */
    for (size_t i = n; i-- > 0 && st == RD_OK;) {
        size_t k = set[i];
        memmove(&set[i], &set[i + 1], (n - i - 1) * sizeof *set);
        an_hyb_score sc;
        st = measure_set(r, set, n - 1, names, &sc, err);
        if (st == RD_OK && meets(a, &sc)) {
            n--;
            cur = sc;
            print_step(ctx, a, "drop", r->cands[k].name, n, set_cost(r, set, n), &cur);
            if (i > 0)
                an_hyb_keep(&r->hc);
        } else {
            memmove(&set[i + 1], &set[i], (n - i - 1) * sizeof *set);
            set[i] = k;
        }
    }
    if (st != RD_OK)
        goto out;
    double model_macs = 0;
    for (size_t k = 0; k < nc; k++)
        model_macs += r->cands[k].macs;
    fprintf(ctx->out, "\nresult: %zu float16 tensor%s, output cosine %.5f, SQNR %.2f dB (int8: %.5f, all float16: %.5f)\n",
            n, n == 1 ? "" : "s", cur.cos, cur.sqnr_db, base->cos, full.cos);
    if (a->latency) {
        fprintf(ctx->out, "cost: %.4g ms added (latency table%s", set_cost(r, set, n), a->n_latency > 1 ? "s" : "");
        for (size_t i = 0; i < a->n_latency; i++)
            fprintf(ctx->out, "%s%s", i ? ", " : " ", a->latency_paths[i]);
        size_t estimated = 0;
        for (size_t i = 0; i < n; i++)
            estimated += r->cands[set[i]].cost_estimated;
        if (estimated)
            fprintf(ctx->out, "; %zu of these costs estimated", estimated);
        fprintf(ctx->out, ")\n");
    } else
        fprintf(ctx->out, "cost: %.4g MMACs in float16 (%.1f%% of the int8 layers' MACs)\n", set_cost(r, set, n) / 1e6,
                model_macs > 0 ? 100.0 * set_cost(r, set, n) / model_macs : 0.0);
    for (size_t i = 0; i < n; i++)
        fprintf(ctx->out, "  float16: %s%s\n", RD_TEXT_SHOWN(r->cands[set[i]].name),
                r->cands[set[i]].cost_estimated ? " (cost estimated: timed one way only)" : "");
    an_hyb_reuse ru;
    an_hyb_reuse_get(&r->hc, &ru);
    fprintf(ctx->out, "search: %zu simulator runs over %zu samples in %.1f s, %.1f s in all", r->hc.n_runs,
            r->n_samples, r->hc.run_seconds, now_s() - t0);
    if (r->hc.reuse_bytes && ru.nodes_full)
        fprintf(ctx->out, " (prefix reuse: %llu of %llu nodes computed, %.1f MB kept)",
                (unsigned long long)ru.nodes_computed, (unsigned long long)ru.nodes_full, (double)ru.bytes / 1e6);
    fputc('\n', ctx->out);
    st = write_outputs(ctx, a, r, set, n, err);
    if (st == RD_OK) {
        if (!a->rknn_cfg)
            fprintf(ctx->out, "note: keys are ONNX tensor names of the optimised graph; give --rknn-cfg STEP1.cfg for "
                              "the toolkit's names (what hybrid_quantization_step2 accepts)\n");
        rc = AN_EXIT_OK;
    }
out:
    if (st != RD_OK)
        rc = an_fail(ctx, err);
    free(set);
    free(all);
    free(names);
    free(in_set);
    return rc;
}

int an_hybrid_diagnose(an_cmd_ctx *ctx, const char *model_path, an_quant_opts *q, const rd_load_options *lopt,
                       const char *const *inputs, size_t n_inputs, size_t samples, bool json, int threads);

int an_hybrid_verify(an_cmd_ctx *ctx, const char *model_path, an_quant_opts *q, const rd_load_options *lopt,
                     const char *dumps_dir, bool json);

int an_cmd_hybrid(an_cmd_ctx *ctx)
{
    hyb_args *a = calloc(1, sizeof *a);
    if (!a)
        return an_fail_nomem(ctx, "the command's options");
    a->samples = 1;
    a->measure = 16;
    a->top = 20;
    a->max_float = 64;
    a->threads = 2;
    a->reuse_mb = AN_HYB_REUSE_DEFAULT_MB;
    a->target_cos = a->target_sqnr = NAN;
    an_quant_opts_init(&a->q);
    int rc = parse_args(ctx, a);
    hyb_run r;
    memset(&r, 0, sizeof r);
    rd_result_init(&r.result);
    rd_error err = {0};
    if (rc >= 0)
        goto out;
    if (a->sub == SUB_DIAGNOSE) {
        rd_load_options lopt = {.input_shapes = a->shapes, .n_input_shapes = a->n_shapes};
        rc = an_hybrid_diagnose(ctx, a->model_path, &a->q, &lopt, a->inputs, a->n_inputs, (size_t)a->samples, a->json,
                                (int)a->threads);
        goto out;
    }
    if (a->sub == SUB_VERIFY) {
        rd_load_options lopt = {.input_shapes = a->shapes, .n_input_shapes = a->n_shapes};
        rc = an_hybrid_verify(ctx, a->model_path, &a->q, &lopt, a->runtime_dumps, a->json);
        goto out;
    }
    double t0 = now_s();
    rd_status st = setup(ctx, a, &r, &err);
    if (st == RD_OK)
        st = analyse(ctx, a, &r, &err);
    if (st == RD_OK && a->sub == SUB_SEARCH && a->rknn_cfg)
        st = restrict_to_rknn_cfg(ctx, a, &r, &err);
    an_hyb_score base = {0};
    if (st == RD_OK)
        st = an_hyb_measure(&r.hc, NULL, 0, &base, &err);
    if (st == RD_OK)
        st = rank(a, &r, &err);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    rc = a->sub == SUB_SUGGEST ? suggest(ctx, a, &r, &base) : search(ctx, a, &r, &base, t0, &err);
out:
    run_fini(&r);
    an_quant_opts_fini(&a->q);
    free(a);
    return rc;
}

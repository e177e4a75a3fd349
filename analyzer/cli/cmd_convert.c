/*
 * cmd_convert.c: `rknn-diag convert -t TARGET -i model_config.yml -o OUT [-a "img1 img2"] [-d SERIAL] [-v]`:
 * rknn_convert's command and YAML. Validates the config against the target, cuts the graph at
 * subgraphs.inputs/outputs, quantizes on the config's dataset, writes into OUT the float model
 * (NAME.onnx), our NAME.quantization.cfg and NAME.qdq.onnx, and with -a runs the accuracy analysis on
 * those inputs into OUT/snapshot. What it cannot honour is refused by key name (docs/convert.md).
 */
#include "term_text.h"
#include "cmd_spec.h"
#include "qcfg_build.h"
#include "quant_setup.h"
#include "config_model.h"
#include "rknn_diag/frontends.h"
#include "tensor_dump.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { OPT_TARGET = 1, OPT_INPUT, OPT_OUTPUT, OPT_ACCURACY, OPT_DEVICE, OPT_VERBOSE, OPT_INTEGER };

static const an_optspec convert_opts[] = {
    {OPT_TARGET, "target_platform", 't', "CHIP", "target platform: rk3588, rk3566, rv1106, ... (required)"},
    {OPT_INPUT, "input", 'i', "FILE", "the model config, model_config.yml (required)"},
    {OPT_OUTPUT, "output", 'o', "DIR", "output folder (required; created)"},
    {OPT_ACCURACY, "accuracy_analysis", 'a', "\"F1 F2\"",
     "run the accuracy analysis on these inputs (one per model "
     "input, separated by spaces) into OUT/snapshot"},
    {OPT_DEVICE, "device_id", 'd', "SERIAL", "refused: needs the toolkit's .rknn model (see --help)"},
    {OPT_INTEGER, "integer", 0, NULL,
     "write NAME.qdq.onnx in export-qdq's integer form (ConvInteger/MatMulInteger: "
     "any ONNX runtime reproduces the int8 simulator bit for bit)"},
    {OPT_VERBOSE, "verbose", 'v', NULL, "say what each step does"},
    AN_THREADS_OPTSPEC,
};

#define MAX_ACC_INPUTS 16

typedef struct convert_args {
    const char *target, *config, *out_dir, *accuracy, *device, *threads;
    bool verbose, integer;
} convert_args;

static const an_need convert_needs[] = {{OPT_TARGET, "missing -t TARGET (rk3588, rk3566, ...)"},
                                        {OPT_INPUT, "missing -i model_config.yml"},
                                        {OPT_OUTPUT, "missing -o OUT"}};
static const an_optset convert_sets[] = {
    AN_SET(OPT_TARGET, AN_SET_STR, convert_args, target),    AN_SET(OPT_INPUT, AN_SET_STR, convert_args, config),
    AN_SET(OPT_OUTPUT, AN_SET_STR, convert_args, out_dir),   AN_SET(OPT_ACCURACY, AN_SET_STR, convert_args, accuracy),
    AN_SET(OPT_DEVICE, AN_SET_STR, convert_args, device),    AN_SET(OPT_INTEGER, AN_SET_FLAG, convert_args, integer),
    AN_SET(OPT_VERBOSE, AN_SET_FLAG, convert_args, verbose), AN_SET(AN_QOPT_THREADS, AN_SET_STR, convert_args, threads),
};

/* A positional (the options are all in convert_sets). */
static int take_positional(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    return an_usage(ctx, "unexpected argument '%s': the model comes from the config (-i)", v);
}

/* What the parser leaves to the command: -d. */
static int check_args(an_cmd_ctx *ctx, const convert_args *a)
{
    if (a->device)
        return an_usage(ctx,
                        "-d %s: running on the board needs the .rknn model that only RKNN-Toolkit2 builds; run "
                        "without -d for the simulator's analysis, then `rknn-diag accuracy MODEL --target CHIP --run "
                        "CMD` (or --runtime-dumps DIR) to compare with the board",
                        a->device);
    return AN_GO;
}

/* Keys we read but cannot honour, refused by name with the file and line where we know it. */
static rd_status refuse_unsupported(const rd_rknn_config *c, rd_error *err)
{
    rd_model_format f;
    if (c->framework && rd_model_format_parse(c->framework, &f, err) != RD_OK) {
        err->code = RD_E_PARSE;
        return rd_error_prefix(err, "%s: models.platform", c->path);
    }
    if (c->n_dynamic_sets)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: dynamic_input (%zu shape sets) is not supported: convert builds one fixed shape; give "
                         "it with subgraphs.input_size_list",
                         c->path, c->n_dynamic_sets);
    if (!c->model_file_path)
        return rd_errorf(err, RD_E_PARSE, "%s: model_file_path is missing", c->path);
    if (c->name && (strchr(c->name, '/') || !strcmp(c->name, "..") || !strcmp(c->name, ".") || !*c->name))
        return rd_errorf(err, RD_E_PARSE, "%s: name '%s' must be a plain file name", c->path, c->name);
    return RD_OK;
}

/* The output name: models.name, else the model file's name without .onnx. */
static rd_status output_stem(const rd_rknn_config *c, char *buf, size_t len, rd_error *err)
{
    const char *base = c->name;
    size_t n;
    if (base) {
        n = strlen(base);
    } else {
        const char *slash = strrchr(c->model_file_path, '/');
        base = slash ? slash + 1 : c->model_file_path;
        n = strlen(base);
        if (n > 5 && strcmp(base + n - 5, ".onnx") == 0)
            n -= 5;
    }
    if (n == 0 || n >= len)
        return rd_errorf(err, RD_E_PARSE, "%s: cannot name the outputs after '%s'", c->path, base);
    memcpy(buf, base, n);
    buf[n] = '\0';
    return RD_OK;
}

/* Quantizes as the config says and writes the .quantization.cfg and the QDQ model. */
static rd_status quantize(const convert_args *a, an_quant_opts *q, const rd_model *m, const char *cfg_path,
                          const char *qdq_path, an_cmd_ctx *ctx, rd_error *err)
{
    if (!q->cfg.dataset)
        return rd_errorf(err, RD_E_PARSE, "%s: quantize: true needs a dataset (the calibration list)", a->config);
    rd_sim *s = NULL;
    rd_qcfg params;
    rd_qcfg_init(&params);
    void *buf = NULL;
    size_t len = 0;
    rd_status st = an_quant_build_sim(q, m, NULL, ctx->errs, ctx->color, &s, err);
    if (st == RD_OK)
        st = an_qcfg_collect(s, &params, ctx->errs, err);
    if (st == RD_OK)
        st = rd_qcfg_save(cfg_path, &params, err);
    rd_warn_sink notes = {.fn = an_note_print, .user = ctx->errs};
    if (st == RD_OK)
        st = rd_sim_export_qdq_form(s, a->integer ? RD_QDQ_FORM_INTEGER : RD_QDQ_FORM_QDQ, &buf, &len,
                                    a->verbose ? &notes : NULL, err);
    if (st == RD_OK)
        st = rd_file_write_atomic(qdq_path, buf, len, NULL, err);
    free(buf);
    rd_qcfg_fini(&params);
    rd_sim_destroy(s);
    return st;
}

/* `rknn-diag accuracy` on the converted model, with the config and the parameters just written. */
static int run_accuracy(an_cmd_ctx *ctx, const convert_args *a, const char *float_path, const char *cfg_path,
                        const char *snapshot)
{
    char *list = strdup(a->accuracy);
    if (!list)
        return an_fail_nomem(ctx, "the --accuracy list");
    char *argv[16 + 2 * MAX_ACC_INPUTS];
    int argc = 0;
    argv[argc++] = "accuracy";
    argv[argc++] = (char *)float_path;
    argv[argc++] = "-c";
    argv[argc++] = (char *)a->config;
    argv[argc++] = "--platform";
    argv[argc++] = (char *)a->target;
    argv[argc++] = "-o";
    argv[argc++] = (char *)snapshot;
    if (cfg_path) {
        argv[argc++] = "--cfg";
        argv[argc++] = (char *)cfg_path;
    }
    if (a->threads) {
        argv[argc++] = "--threads";
        argv[argc++] = (char *)a->threads;
    }
    int n_inputs = 0;
    char *save = NULL;
    for (char *tok = strtok_r(list, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (n_inputs == MAX_ACC_INPUTS) {
            free(list);
            return an_usage(ctx, "-a: at most %d inputs", MAX_ACC_INPUTS);
        }
        argv[argc++] = "--inputs";
        argv[argc++] = tok;
        n_inputs++;
    }
    argv[argc] = NULL;
    int rc = n_inputs ? -1 : an_usage(ctx, "-a: no input files given");
    if (rc < 0) {
        if (a->verbose)
            fprintf(ctx->errs, "convert: rknn-diag accuracy on %d input(s) into %s\n", n_inputs, snapshot);
        an_cmd_ctx sub = {.argc = argc, .argv = argv, .out = ctx->out, .errs = ctx->errs, .color = ctx->color};
        rc = an_cmd_exec(&sub, &an_cmd_accuracy);
    }
    free(list);
    return rc;
}

static char *join(const char *dir, const char *stem, const char *suffix)
{
    size_t n = strlen(dir) + strlen(stem) + strlen(suffix) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s%s", dir, stem, suffix);
    return p;
}

static int convert_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    (void)cmd;
    const convert_args *a = args;
    int rc = check_args(ctx, a);
    if (rc != AN_GO)
        return rc;
    rd_error err = {0};
    an_quant_opts q;
    an_quant_opts_init(&q);
    rd_model *m = NULL;
    char stem[256];
    char *float_path = NULL, *cfg_path = NULL, *qdq_path = NULL, *snapshot = NULL;
    rd_rknn_config cfg;
    rd_rknn_config_init(&cfg);
    rd_status st = rd_platform_find(a->target)
                       ? rd_rknn_config_load(a->config, &cfg, &err)
                       : rd_errorf(&err, RD_E_USAGE,
                                   "-t %s: unknown target platform (rk3588, rk3566, rk3568, rv1106, ...)", a->target);
    if (st == RD_OK)
        st = refuse_unsupported(&cfg, &err);
    if (st == RD_OK)
        st = output_stem(&cfg, stem, sizeof stem, &err);
    if (st == RD_OK && cfg.custom_string)
        fprintf(ctx->errs, "note: custom_string goes into the -a analysis's report.json and report.html; convert "
                           "writes no .rknn file to store it in\n");
    if (st == RD_OK) {
        float_path = join(a->out_dir, stem, ".onnx");
        cfg_path = join(a->out_dir, stem, ".quantization.cfg");
        qdq_path = join(a->out_dir, stem, ".qdq.onnx");
        snapshot = join(a->out_dir, "snapshot", "");
        if (!float_path || !cfg_path || !qdq_path || !snapshot)
            st = rd_errorf(&err, RD_E_NOMEM, "out of memory");
    }
    if (st == RD_OK)
        st = an_mkdirs(a->out_dir, &err);
    an_quant_take(&q, AN_QOPT_CONFIG, a->config);
    an_quant_take(&q, AN_QOPT_PLATFORM, a->target); /* -t wins over configs.target_platform */
    if (a->threads)
        an_quant_take(&q, AN_QOPT_THREADS, a->threads);
    an_model_request req = {.command = "convert",
                            .errs = ctx->errs,
                            .dynamic_refusal = "it builds one fixed shape: give it with subgraphs.input_size_list"};
    if (st == RD_OK) /* the model as converted: cut, shapes fixed, pruned; what the other outputs refer to */
        st = an_model_load_configured(&q, &req, &m, &err);
    if (st == RD_OK)
        st = rd_onnx_model_save(m, float_path, &err);
    rd_prec prec = RD_PREC_FP32;
    if (st == RD_OK)
        st = an_quant_precision(&q, &prec, &err);
    if (st == RD_OK && prec == RD_PREC_INT16)
        st = rd_errorf(&err, RD_E_UNSUPPORTED,
                       "convert writes a QDQ model, which has no int16 form yet: %s is simulated by run, accuracy, "
                       "quantize and eval (--dtype %s), not converted",
                       rd_qdtype_name(q.cfg.dtype), rd_qdtype_name(q.cfg.dtype));
    if (st == RD_OK && a->verbose)
        fprintf(ctx->errs, "convert: %s for %s: %s, %s, %s, optimization level %d\n",
                RD_TEXT_SHOWN(cfg.model_file_path), a->target, rd_qdtype_name(q.cfg.dtype),
                rd_qalgo_name(q.cfg.algorithm), rd_qmethod_name(q.cfg.method), q.cfg.optimization_level);
    bool quantized = st == RD_OK && q.cfg.quantize && prec == RD_PREC_INT8;
    if (quantized)
        st = quantize(a, &q, m, cfg_path, qdq_path, ctx, &err);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    fprintf(ctx->errs, "wrote %s%s%s%s%s\n", float_path, quantized ? ", " : "", quantized ? cfg_path : "",
            quantized ? ", " : "", quantized ? qdq_path : "");
    rc = a->accuracy ? run_accuracy(ctx, a, float_path, quantized ? cfg_path : NULL, snapshot) : AN_EXIT_OK;
out:
    free(float_path);
    free(cfg_path);
    free(qdq_path);
    free(snapshot);
    rd_model_destroy(m);
    rd_rknn_config_fini(&cfg);
    an_quant_opts_fini(&q);
    return rc;
}

const an_cmd_spec an_cmd_convert = {
    .usage = "rknn-diag convert -t TARGET -i model_config.yml -o OUT [-a \"F1 F2\"] [--integer] [-v]",
    .about = "rknn_convert with rknn-diag's simulator: validates the config against the target, cuts\n"
             "the graph at subgraphs.inputs/outputs, quantizes (quantize: true) on the config's dataset\n"
             "and writes OUT/NAME.onnx (the float model converted), OUT/NAME.quantization.cfg and\n"
             "OUT/NAME.qdq.onnx; -a runs the accuracy analysis on those inputs into OUT/snapshot.\n"
             "models.platform names the model's framework (onnx, tflite, tensorflow, pytorch, ...:\n"
             "docs/frontends.md; a TensorFlow graph is cut at subgraphs while it is read, a PyTorch model\n"
             "exported with input_size_list); keys it cannot honour (dynamic_input, an unknown\n"
             "framework) are refused by name.",
    AN_SPEC_OPTS(convert_opts),
    AN_SPEC_NEEDS(convert_needs),
    AN_SPEC_SETS(convert_sets),
    AN_SPEC_ARGS(convert_args, NULL),
    .take = take_positional,
    .main = convert_main,
};

/*
 * cmd_run.c: `rknn-diag run MODEL --input NAME=FILE.npy ...`: the FP32 reference, every layer observed.
 * Prints per-layer min/max/mean (or JSON), optionally writes every tensor as .npy plus index.json, and
 * with --bench N times N observed inferences.
 */
#include "array_grow.h"
#include "term_text.h"
#include "json_out.h"
#include "accuracy.h"
#include "cmd_spec.h"
#include "run_bench.h"
#include "config_model.h"
#include "quant_setup.h"
#include "tensor_dump.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_INPUT = 1,
    OPT_DUMP_DIR,
    OPT_OUTPUTS_ONLY,
    OPT_JSON,
    OPT_BENCH,
    OPT_QUIET,
    OPT_PRECISION,
};

static const an_optspec run_opts[] = {
    {OPT_INPUT, "input", 'i', "NAME=FILE.npy", "graph input, exactly as stored (repeat per input)"},
    {OPT_DUMP_DIR, "dump-dir", 'o', "DIR", "write every tensor as .npy plus index.json"},
    {OPT_OUTPUTS_ONLY, "outputs-only", 0, NULL, "dump and print only the graph outputs"},
    {OPT_JSON, "json", 0, NULL, "print the per-layer summary (with --bench: the timings) as JSON"},
    {OPT_BENCH, "bench", 0, "N", "time N inferences (every layer observed): the median, and the time per op type"},
    {OPT_QUIET, "quiet", 'q', NULL, "print no per-layer table"},
    {OPT_PRECISION, "precision", 'p', "P",
     "fp32 (default), fp16 (= float16), int8 (= w8a8), int16 (= w16a16i), w8a16, w16a16i_dfp, or model (a quantized "
     ".tflite with its own quantization)"},
};

typedef struct layer_row {
    int value;
    char *name;
    const char *op_type; /* points into the model */
    int node;
    rd_dtype dtype;
    int rank;
    int64_t dims[RD_MAX_RANK];
    an_tensor_stats stats;
} layer_row;

typedef struct run_observer {
    const rd_model *m;
    const rd_sim *sim; /* NULL for the float32 reference */
    layer_row *rows;
    size_t n_rows, cap_rows;
    an_dump *dump; /* NULL: no dump */
    bool outputs_only;
    bool collect;    /* keep rows (false while benchmarking) */
    double checksum; /* benchmarks: touch every tensor as a real observer would */
    rd_pool *pool;   /* the run's threads, for the statistics of large tensors (NULL: this thread) */
} run_observer;

static bool is_graph_output(const rd_model *m, int value)
{
    for (size_t o = 0; o < rd_model_output_count(m); o++)
        if (rd_model_output(m, o) == value)
            return true;
    return false;
}

static rd_status observe_tensor(void *user, const rd_observed *ev, rd_error *err)
{
    run_observer *ro = user;
    if (ro->outputs_only && !is_graph_output(ro->m, ev->value))
        return RD_OK;
    if (ro->sim) { /* a fused producer's output is not materialised: listed apart (fused.json) */
        rd_sim_tensor info;
        if (rd_sim_tensor_get(ro->sim, ev->name, &info, NULL) == RD_OK && !info.materialized && info.fused_into >= 0)
            return RD_OK;
    }
    an_tensor_stats st;
    an_tensor_stats_compute(ev->tensor, ro->pool, &st);
    if (!ro->collect) {
        ro->checksum += st.mean;
        return RD_OK;
    }
    if (ro->dump) {
        rd_status s = an_dump_add(ro->dump, ev->name, ev->tensor, err);
        if (s != RD_OK)
            return s;
    }
    if (an_array_grow(&ro->rows, &ro->cap_rows, ro->n_rows, sizeof *ro->rows, 64, err) != RD_OK)
        return RD_E_NOMEM; /* err says so */
    layer_row *r = &ro->rows[ro->n_rows];
    r->value = ev->value;
    r->name = strdup(ev->name);
    if (!r->name)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    r->op_type = ev->op_type[0] ? ev->op_type : "(input)";
    r->node = ev->node;
    r->dtype = ev->tensor->dtype;
    r->rank = ev->tensor->rank;
    memcpy(r->dims, ev->tensor->dims, sizeof r->dims);
    r->stats = st;
    ro->n_rows++;
    return RD_OK;
}

static void shape_text(const layer_row *r, char *buf, size_t len)
{
    rd_tensor t = {.dtype = r->dtype, .rank = r->rank};
    memcpy(t.dims, r->dims, sizeof t.dims);
    rd_shape_str(&t, buf, len);
}

static void print_table(FILE *out, const run_observer *ro)
{
    fprintf(out, "%-5s %-18s %-40s %-18s %-8s %13s %13s %13s\n", "#", "op", "tensor", "shape", "dtype", "min", "max",
            "mean");
    for (size_t i = 0; i < ro->n_rows; i++) {
        const layer_row *r = &ro->rows[i];
        char shape[64];
        shape_text(r, shape, sizeof shape);
        char idx[16];
        if (r->node >= 0)
            snprintf(idx, sizeof idx, "%d", r->node);
        else
            snprintf(idx, sizeof idx, "-");
        fprintf(out, "%-5s %-18s %-40s %-18s %-8s %13.6g %13.6g %13.6g", idx, RD_TEXT_SHOWN(r->op_type),
                RD_TEXT_SHOWN(r->name), shape, rd_dtype_name(r->dtype), r->stats.min, r->stats.max, r->stats.mean);
        if (r->stats.n_nan || r->stats.n_inf)
            fprintf(out, "  (%lld NaN, %lld Inf)", (long long)r->stats.n_nan, (long long)r->stats.n_inf);
        if (ro->sim) {
            rd_sim_layer_stats ls;
            rd_sim_layer_stats_get(ro->sim, r->value, &ls);
            if (ls.fp16_overflow)
                fprintf(out, "  FP16 OVERFLOW: %lld values (max |x| %.6g before rounding)", (long long)ls.fp16_overflow,
                        ls.fp16_max_abs);
            rd_sim_tensor t;
            if (ls.saturated && rd_sim_tensor_get(ro->sim, r->name, &t, NULL) == RD_OK)
                fprintf(out, "  %s saturated: %lld of %lld", rd_prec_name(t.precision), (long long)ls.saturated,
                        (long long)ls.count);
        }
        fputc('\n', out);
    }
}

/* The per-layer summary as JSON, printed whole or not at all (RD_E_NOMEM). */
static rd_status print_json(FILE *out, const char *model, const run_observer *ro, rd_error *err)
{
    bool ok = true;
    cJSON *root = cJSON_CreateObject(), *layers = cJSON_CreateArray();
    an_json_add(root, "model", cJSON_CreateString(model), &ok);
    an_json_add(root, "layers", layers, &ok);
    for (size_t i = 0; i < ro->n_rows && ok; i++) {
        const layer_row *r = &ro->rows[i];
        cJSON *o = cJSON_CreateObject();
        if (!an_json_push(layers, o, &ok))
            break;
        an_json_add(o, "name", cJSON_CreateString(r->name), &ok);
        an_json_add(o, "op_type", cJSON_CreateString(r->op_type), &ok);
        an_json_add(o, "node", cJSON_CreateNumber(r->node), &ok);
        an_json_add(o, "dtype", cJSON_CreateString(rd_dtype_name(r->dtype)), &ok);
        cJSON *shape = cJSON_CreateArray();
        if (an_json_add(o, "shape", shape, &ok))
            for (int k = 0; k < r->rank; k++)
                an_json_push(shape, cJSON_CreateNumber((double)r->dims[k]), &ok);
        an_json_add_finite(o, "min", r->stats.min, &ok);
        an_json_add_finite(o, "max", r->stats.max, &ok);
        an_json_add_finite(o, "mean", r->stats.mean, &ok);
        an_json_add(o, "nan", cJSON_CreateNumber((double)r->stats.n_nan), &ok);
        an_json_add(o, "inf", cJSON_CreateNumber((double)r->stats.n_inf), &ok);
    }
    if (ok && an_json_print(out, root))
        return RD_OK;
    if (!ok)
        cJSON_Delete(root);
    return rd_errorf(err, RD_E_NOMEM, "out of memory while printing the JSON summary");
}

/* float16 constants beyond 65504 (inf before the layer computes): the same finding as accuracy's, on stderr. */
static rd_status warn_fp16_constants(an_cmd_ctx *ctx, const rd_sim *sim, rd_error *err)
{
    rd_result r;
    rd_result_init(&r);
    rd_status st = an_findings_numeric(&r, sim, err); /* fails only when memory runs out: never drop a warning */
    if (st == RD_OK)
        for (size_t i = 0; i < r.n_findings; i++) {
            fputs("warning: ", ctx->errs); /* findings quote the model's names */
            an_put_text(ctx->errs, r.findings[i].title);
            fputs(": ", ctx->errs);
            an_put_text(ctx->errs, r.findings[i].evidence);
            fputc('\n', ctx->errs);
        }
    rd_result_fini(&r);
    return st;
}

static rd_status run_once(rd_model *m, rd_sim *sim, const rd_tensor *inputs, size_t n_in, const rd_run_options *opt,
                          rd_error *err)
{
    return sim ? rd_sim_run(sim, inputs, n_in, opt, NULL, 0, err) : rd_model_run(m, inputs, n_in, opt, NULL, 0, err);
}

/* True when some graph input dim is symbolic or unknown (fixed from the actual inputs). */
static bool model_has_open_dims(const rd_model *m)
{
    for (size_t k = 0; k < rd_model_input_count(m); k++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, k), &vi);
        if (vi.rank < 0)
            return true;
        for (int d = 0; d < vi.rank; d++)
            if (vi.dims[d] < 0 || vi.dim_params[d])
                return true;
    }
    return false;
}

/* Writes DIR/fused.json: the tensors the compiler passes fused away, with the tensor each went into. */
static rd_status write_fused_list(const char *dir, const rd_sim *sim, size_t *n_out, rd_error *err)
{
    const rd_model *m = rd_sim_model(sim);
    bool ok = true;
    cJSON *list = cJSON_CreateArray();
    if (!list)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t v = 0; v < rd_model_value_count(m) && ok; v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        rd_sim_tensor t;
        if (rd_sim_tensor_get(sim, vi.name, &t, NULL) != RD_OK || t.fused_into < 0 || t.materialized)
            continue;
        rd_value_info into;
        rd_model_value(m, (size_t)t.fused_into, &into);
        cJSON *o = cJSON_CreateObject();
        if (!an_json_push(list, o, &ok))
            break;
        an_json_add(o, "name", cJSON_CreateString(vi.name), &ok);
        an_json_add(o, "fused_into", cJSON_CreateString(into.name), &ok);
        n++;
    }
    *n_out = n;
    if (!ok) { /* a tree missing entries is never written */
        cJSON_Delete(list);
        return rd_errorf(err, RD_E_NOMEM, "%s/fused.json: out of memory", dir);
    }
    return an_json_save_in(list, dir, "fused.json", err);
}

typedef struct run_args {
    const char *model_path, *dump_dir, *precision;
    const char *in_names[AN_MAX_INPUTS], *in_files[AN_MAX_INPUTS];
    an_name_buf name_bufs[AN_MAX_INPUTS];
    size_t n_given;
    an_cmd_args cmd;
    bool outputs_only, json, quiet;
    bool model_precision; /* --precision model */
    long bench;
} run_args;

static int run_bench(an_cmd_ctx *ctx, const run_args *a, rd_model *m, rd_sim *sim, const rd_tensor *inputs, size_t n_in)
{
    rd_pool *pool = a->cmd.q.pool;
    run_observer ro = {.m = sim ? rd_sim_model(sim) : m, .collect = false, .pool = pool};
    an_bench_target t = {.m = m,
                         .sim = sim,
                         .inputs = inputs,
                         .n_in = n_in,
                         .observer = observe_tensor,
                         .observer_user = &ro,
                         .pool = pool,
                         .model_path = a->model_path,
                         .json = a->json};
    return an_run_bench(ctx, &t, a->bench);
}

static const an_optset run_sets[] = {
    AN_SET(OPT_DUMP_DIR, AN_SET_STR, run_args, dump_dir), AN_SET(OPT_OUTPUTS_ONLY, AN_SET_FLAG, run_args, outputs_only),
    AN_SET(OPT_JSON, AN_SET_FLAG, run_args, json),        AN_SET_RANGE(OPT_BENCH, run_args, bench, 1, 100000),
    AN_SET(OPT_QUIET, AN_SET_FLAG, run_args, quiet),      AN_SET(OPT_PRECISION, AN_SET_STR, run_args, precision),
};

/* --input NAME=FILE.npy (the other options are in run_sets). */
static int take_input(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    run_args *a = user;
    rd_error err = {0};
    if (a->n_given == AN_MAX_INPUTS)
        return an_usage(ctx, "too many --input options");
    if (an_parse_named_file(v, &a->name_bufs[a->n_given], &a->in_names[a->n_given], &a->in_files[a->n_given], &err) !=
        RD_OK)
        return an_usage(ctx, "%s", err.msg);
    a->n_given++;
    return AN_GO;
}

/* Parses the command line into a; returns AN_GO to go on, or an exit code. */

/* Loads the model (as -c describes it); reloads it with the actual input shapes when some input dims are
   symbolic. */
static rd_status load_model_and_inputs(run_args *a, FILE *errs, rd_model **out_m, rd_tensor *inputs, rd_error *err)
{
    an_model_request req = {.command = "run",
                            .path = a->model_path,
                            .shapes = a->cmd.shapes,
                            .n_shapes = a->cmd.n_shapes,
                            .errs = errs,
                            .model_precision = a->model_precision,
                            .dynamic_refusal = "it runs the graph tensors given with --input, of one shape: give "
                                               "it with --input-shape (or subgraphs.input_size_list)"};
    rd_model *m = NULL;
    rd_status st = an_model_load_configured(&a->cmd.q, &req, &m, err);
    if (st != RD_OK)
        return st;
    size_t n_in = rd_model_input_count(m);
    if (n_in > AN_MAX_INPUTS) {
        rd_model_destroy(m);
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: %zu inputs (at most %d supported)", a->model_path, n_in,
                         AN_MAX_INPUTS);
    }
    st = an_load_graph_inputs(m, a->in_names, a->in_files, a->n_given, inputs, err);
    if (st != RD_OK) {
        rd_model_destroy(m);
        return st;
    }
    if (model_has_open_dims(m) && a->cmd.n_shapes == 0) {
        /* reload with the actual input shapes so that every shape (and MAC count) is known before running */
        for (size_t k = 0; k < n_in; k++) {
            rd_value_info vi;
            rd_model_value(m, (size_t)rd_model_input(m, k), &vi);
            snprintf(a->cmd.shape_names[k].name, sizeof a->cmd.shape_names[k].name, "%s", vi.name);
            a->cmd.shapes[k].name = a->cmd.shape_names[k].name;
            a->cmd.shapes[k].rank = inputs[k].rank;
            memcpy(a->cmd.shapes[k].dims, inputs[k].dims, sizeof a->cmd.shapes[k].dims);
        }
        rd_model *fixed = NULL;
        req.shapes = a->cmd.shapes;
        req.n_shapes = n_in;
        st = an_model_load_configured(&a->cmd.q, &req, &fixed, err);
        rd_model_destroy(m);
        m = fixed;
        if (st != RD_OK) {
            for (size_t k = 0; k < n_in; k++)
                rd_tensor_fini(&inputs[k]);
            return st;
        }
    }
    *out_m = m;
    return RD_OK;
}

static int run_and_report(an_cmd_ctx *ctx, run_args *a, rd_model *m, rd_sim *sim, const rd_tensor *inputs, size_t n_in)
{
    rd_error err = {0};
    an_dump dump;
    bool dumping = a->dump_dir != NULL;
    if (dumping && an_dump_open(&dump, a->dump_dir, &err) != RD_OK)
        return an_fail(ctx, &err);
    run_observer ro = {.m = sim ? rd_sim_model(sim) : m,
                       .sim = sim,
                       .dump = dumping ? &dump : NULL,
                       .outputs_only = a->outputs_only,
                       .collect = true,
                       .pool = a->cmd.q.pool};
    rd_run_options opt = {
        .observer = observe_tensor, .user = &ro, .observe_inputs = !a->outputs_only, .pool = a->cmd.q.pool};
    rd_status st = run_once(m, sim, inputs, n_in, &opt, &err);
    size_t n_fused = 0;
    if (st == RD_OK && dumping && sim)
        st = write_fused_list(a->dump_dir, sim, &n_fused, &err);
    if (st == RD_OK && dumping)
        st = an_dump_close(&dump, &err);
    int rc = AN_EXIT_OK;
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
    } else {
        if (a->json && print_json(ctx->out, a->model_path, &ro, &err) != RD_OK)
            rc = an_fail(ctx, &err);
        else if (!a->json && !a->quiet)
            print_table(ctx->out, &ro);
        if (rc == AN_EXIT_OK && sim && warn_fp16_constants(ctx, sim, &err) != RD_OK)
            rc = an_fail(ctx, &err);
        if (dumping)
            fprintf(ctx->errs, "wrote %zu tensors and index.json to %s%s\n", dump.n, a->dump_dir,
                    sim ? " (tensors fused away are listed in fused.json)" : "");
    }
    if (dumping)
        an_dump_fini(&dump);
    for (size_t i = 0; i < ro.n_rows; i++)
        free(ro.rows[i].name);
    free(ro.rows);
    return rc;
}

static int run_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    run_args *a = args;
    a->model_path = cmd->model;
    rd_error err = {0};
    rd_model *m = NULL;
    rd_sim *sim = NULL;
    rd_tensor inputs[AN_MAX_INPUTS];
    size_t n_in = 0;
    int rc;
    a->model_precision = a->precision && strcmp(a->precision, "model") == 0;
    if (a->precision && !a->model_precision) {
        if (rd_precision_parse(a->precision, &cmd->q.cfg.dtype, &err) != RD_OK)
            return an_usage(ctx, "--precision: %s", err.msg);
        if (cmd->q.cfg.dtype != RD_QDT_FLOAT32) /* the reference builds no simulation: nothing for --dtype */
            cmd->q.flag_dtype = rd_qdtype_name(cmd->q.cfg.dtype); /* "int8" is a --precision name, not a --dtype one */
    }
    const bool built = an_quant_wants_built(&cmd->q);
    if (built && a->precision && cmd->q.cfg.dtype == RD_QDT_FLOAT32)
        return an_usage(ctx, "--precision fp32 runs the ONNX reference, --rknn / --rknn-build-log a simulation of the "
                             "built model: drop one of them");
    rd_status st = load_model_and_inputs(a, ctx->errs, &m, inputs, &err);
    if (st != RD_OK)
        return an_fail(ctx, &err);
    n_in = rd_model_input_count(m);
    if (!((a->precision && !a->model_precision && cmd->q.cfg.dtype != RD_QDT_FLOAT32) || built)) {
        if (an_quant_pool(&cmd->q, NULL, &err) != RD_OK) {
            rc = an_fail(ctx, &err); /* a bad --threads is a usage error (2), no memory for the pool 3 */
            goto out;
        }
    } else {
        st = an_quant_finish(&cmd->q, m, &err);
        if (st == RD_OK)
            st = an_quant_build_sim(&cmd->q, m, inputs, ctx->errs, ctx->color, &sim, &err);
        if (st != RD_OK) {
            rc = an_fail(ctx, &err);
            goto out;
        }
    }
    if (a->bench)
        rc = run_bench(ctx, a, m, sim, inputs, n_in);
    else
        rc = run_and_report(ctx, a, m, sim, inputs, n_in);
    if (rc == AN_EXIT_OK && (st = an_quant_built_outputs(&cmd->q, sim, a->bench ? NULL : a->dump_dir,
                                                         a->quiet ? NULL : ctx->errs, NULL, &err)) != RD_OK)
        rc = an_fail(ctx, &err);
out:
    for (size_t k = 0; k < n_in; k++)
        rd_tensor_fini(&inputs[k]);
    rd_sim_destroy(sim);
    rd_model_destroy(m);
    return rc;
}

const an_cmd_spec an_cmd_run = {
    .usage = "rknn-diag run MODEL --input NAME=FILE.npy [...] [--dump-dir DIR] [--precision P]",
    .about = "Runs the model layer by layer: the FP32 reference, or with --precision fp16/int8/int16\n"
             "the simulators (after the compiler passes; int8 and int16 need --dataset or --cfg, else\n"
             "they calibrate on the input itself). --input is the graph tensor exactly as stored\n"
             "(layout, dtype and values untouched). Prints min/max/mean of every tensor produced;\n"
             "simulated tensors are dequantized to float32, and tensors fused away are listed apart\n"
             "(fused.json). MODEL is any format rknn-diag reads (.onnx, .tflite; docs/formats.md).\n"
             "A quantized .tflite runs dequantized in float32, or with --precision model as its own\n"
             "integer arithmetic (TFLite's kernels): inputs, tables and dumps are then its int8/int16\n"
             "codes. --rknn MODEL.rknn (or --rknn-build-log FILE) simulates what the toolkit built\n"
             "from this model, at the file's precision unless --precision says another (its fused\n"
             "ops, scales, float16 islands, weights: docs/rknn-model.md); with --dump-dir the mapping\n"
             "goes to DIR/rknn_mapping.txt.",
    AN_SPEC_OPTS(run_opts),
    AN_SPEC_SETS(run_sets),
    .groups = AN_OG_SHAPE | AN_OG_QUANT | AN_OG_BUILT,
    .model = "MODEL.onnx",
    AN_SPEC_ARGS_CMD(run_args, cmd, NULL),
    .take = take_input,
    .main = run_main,
};

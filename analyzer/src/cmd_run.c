/*
 * cmd_run.c: `rknn-diag run MODEL --input NAME=FILE.npy ...`: the FP32 reference, every layer observed.
 * Prints per-layer min/max/mean (or JSON), optionally writes every tensor as .npy plus index.json, and
 * with --bench N times N observed inferences.
 */
#include "cli_internal.h"
#include "cli_model_args.h"
#include "tensor_dump.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    OPT_HELP = 1,
    OPT_INPUT,
    OPT_INPUT_SHAPE,
    OPT_DUMP_DIR,
    OPT_OUTPUTS_ONLY,
    OPT_JSON,
    OPT_BENCH,
    OPT_THREADS,
    OPT_QUIET,
};

static const an_optspec run_opts[] = {
    {OPT_INPUT, "input", 'i', "NAME=FILE.npy", "graph input, exactly as stored (repeat per input)"},
    {OPT_INPUT_SHAPE, "input-shape", 0, "NAME=D0,D1,..", "fix symbolic input dims (repeat per input)"},
    {OPT_DUMP_DIR, "dump-dir", 'o', "DIR", "write every tensor as .npy plus index.json"},
    {OPT_OUTPUTS_ONLY, "outputs-only", 0, NULL, "dump and print only the graph outputs"},
    {OPT_JSON, "json", 0, NULL, "print the per-layer summary as JSON"},
    {OPT_BENCH, "bench", 0, "N", "time N inferences (every layer observed) and print the median"},
    {OPT_THREADS, "threads", 0, "N", "threads for the kernels (default 1; results are identical)"},
    {OPT_QUIET, "quiet", 'q', NULL, "print no per-layer table"},
    {OPT_HELP, "help", 'h', NULL, "show this help"},
};
#define N_RUN_OPTS ((int)(sizeof run_opts / sizeof run_opts[0]))

typedef struct layer_row {
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
    layer_row *rows;
    size_t n_rows, cap_rows;
    an_dump *dump; /* NULL: no dump */
    bool outputs_only;
    bool collect;  /* keep rows (false while benchmarking) */
    double checksum; /* benchmarks: touch every tensor as a real observer would */
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
    an_tensor_stats st;
    an_tensor_stats_compute(ev->tensor, &st);
    if (!ro->collect) {
        ro->checksum += st.mean;
        return RD_OK;
    }
    if (ro->dump) {
        rd_status s = an_dump_add(ro->dump, ev->name, ev->tensor, err);
        if (s != RD_OK)
            return s;
    }
    if (ro->n_rows == ro->cap_rows) {
        size_t cap = ro->cap_rows ? ro->cap_rows * 2 : 64;
        layer_row *grown = realloc(ro->rows, cap * sizeof *grown);
        if (!grown)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        ro->rows = grown;
        ro->cap_rows = cap;
    }
    layer_row *r = &ro->rows[ro->n_rows];
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
        fprintf(out, "%-5s %-18s %-40s %-18s %-8s %13.6g %13.6g %13.6g", idx, r->op_type, r->name, shape,
                rd_dtype_name(r->dtype), r->stats.min, r->stats.max, r->stats.mean);
        if (r->stats.n_nan || r->stats.n_inf)
            fprintf(out, "  (%lld NaN, %lld Inf)", (long long)r->stats.n_nan, (long long)r->stats.n_inf);
        fputc('\n', out);
    }
}

static cJSON *json_number_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static void print_json(FILE *out, const char *model, const run_observer *ro)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", model);
    cJSON *layers = cJSON_AddArrayToObject(root, "layers");
    for (size_t i = 0; i < ro->n_rows; i++) {
        const layer_row *r = &ro->rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", r->name);
        cJSON_AddStringToObject(o, "op_type", r->op_type);
        cJSON_AddNumberToObject(o, "node", r->node);
        cJSON_AddStringToObject(o, "dtype", rd_dtype_name(r->dtype));
        cJSON *shape = cJSON_AddArrayToObject(o, "shape");
        for (int k = 0; k < r->rank; k++)
            cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)r->dims[k]));
        cJSON_AddItemToObject(o, "min", json_number_or_null(r->stats.min));
        cJSON_AddItemToObject(o, "max", json_number_or_null(r->stats.max));
        cJSON_AddItemToObject(o, "mean", json_number_or_null(r->stats.mean));
        cJSON_AddNumberToObject(o, "nan", (double)r->stats.n_nan);
        cJSON_AddNumberToObject(o, "inf", (double)r->stats.n_inf);
        cJSON_AddItemToArray(layers, o);
    }
    char *text = cJSON_Print(root);
    if (text)
        fprintf(out, "%s\n", text);
    free(text);
    cJSON_Delete(root);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int64_t model_macs(const rd_model *m)
{
    int64_t total = 0;
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        if (!ni.folded)
            total += ni.macs;
    }
    return total;
}

static int run_bench(an_cmd_ctx *ctx, rd_model *m, const rd_tensor *inputs, size_t n_in, long n, int threads)
{
    run_observer ro = {.m = m, .collect = false};
    rd_run_options opt = {.observer = observe_tensor, .user = &ro, .threads = threads};
    double *times = malloc((size_t)n * sizeof *times);
    if (!times)
        return AN_EXIT_INPUT;
    rd_error err = {0};
    /* one warm-up run: page faults and BLAS buffers are not what we measure */
    if (rd_model_run(m, inputs, n_in, &opt, NULL, 0, &err) != RD_OK) {
        free(times);
        return an_fail(ctx, &err);
    }
    for (long i = 0; i < n; i++) {
        double t0 = now_ms();
        if (rd_model_run(m, inputs, n_in, &opt, NULL, 0, &err) != RD_OK) {
            free(times);
            return an_fail(ctx, &err);
        }
        times[i] = now_ms() - t0;
        fprintf(ctx->errs, "\rbench: %ld/%ld", i + 1, n);
    }
    fputc('\n', ctx->errs);
    qsort(times, (size_t)n, sizeof *times, cmp_double);
    double median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    int64_t macs = model_macs(m);
    fprintf(ctx->out, "median %.3f ms over %ld runs (min %.3f, max %.3f), threads %d, %.3f GMAC, %.2f GFLOP/s\n",
            median, n, times[0], times[n - 1], threads, (double)macs / 1e9, 2.0 * (double)macs / (median * 1e6));
    free(times);
    return AN_EXIT_OK;
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

int an_cmd_run(an_cmd_ctx *ctx)
{
    const char *model_path = NULL, *dump_dir = NULL;
    const char *in_names[AN_MAX_INPUTS], *in_files[AN_MAX_INPUTS];
    an_name_buf name_bufs[AN_MAX_INPUTS];
    size_t n_given = 0, n_shapes = 0;
    rd_input_shape shapes[AN_MAX_INPUTS];
    an_name_buf shape_names[AN_MAX_INPUTS];
    bool outputs_only = false, json = false, quiet = false;
    long bench = 0, threads = 1;
    rd_error err = {0};
    an_opts p;
    an_opts_init(&p, ctx, run_opts, N_RUN_OPTS);
    const char *v;
    int id;
    while ((id = an_opts_next(&p, &v)) != -1) {
        switch (id) {
        case -2:
            return AN_EXIT_USAGE;
        case 0:
            if (model_path)
                return an_usage(ctx, "one model only (got '%s' and '%s')", model_path, v);
            model_path = v;
            break;
        case OPT_HELP:
            an_print_help(ctx->out, "rknn-diag run MODEL.onnx --input NAME=FILE.npy [...] [--dump-dir DIR]",
                          "Runs the FP32 reference layer by layer. --input is the graph tensor exactly as stored\n"
                          "(layout, dtype and values untouched). Prints min/max/mean of every tensor produced.",
                          run_opts, N_RUN_OPTS);
            return AN_EXIT_OK;
        case OPT_INPUT:
            if (n_given == AN_MAX_INPUTS)
                return an_usage(ctx, "too many --input options");
            if (an_parse_named_file(v, &name_bufs[n_given], &in_names[n_given], &in_files[n_given], &err) != RD_OK)
                return an_usage(ctx, "%s", err.msg);
            n_given++;
            break;
        case OPT_INPUT_SHAPE:
            if (an_parse_input_shape(v, shape_names, shapes, &n_shapes, &err) != RD_OK)
                return an_usage(ctx, "%s", err.msg);
            break;
        case OPT_DUMP_DIR:
            dump_dir = v;
            break;
        case OPT_OUTPUTS_ONLY:
            outputs_only = true;
            break;
        case OPT_JSON:
            json = true;
            break;
        case OPT_QUIET:
            quiet = true;
            break;
        case OPT_BENCH:
            if (!an_parse_int(ctx->argv[0], "--bench", v, 1, 100000, &bench, ctx->errs))
                return AN_EXIT_USAGE;
            break;
        case OPT_THREADS:
            if (!an_parse_int(ctx->argv[0], "--threads", v, 1, 256, &threads, ctx->errs))
                return AN_EXIT_USAGE;
            break;
        }
    }
    if (!model_path)
        return an_usage(ctx, "missing MODEL.onnx");
    rd_load_options lopt = {.input_shapes = shapes, .n_input_shapes = n_shapes};
    rd_model *m = NULL;
    if (rd_model_load(model_path, &lopt, &m, &err) != RD_OK)
        return an_fail(ctx, &err);
    size_t n_in = rd_model_input_count(m);
    rd_tensor inputs[AN_MAX_INPUTS];
    if (n_in > AN_MAX_INPUTS) {
        rd_model_destroy(m);
        rd_errorf(&err, RD_E_UNSUPPORTED, "%s: %zu inputs (at most %d supported)", model_path, n_in, AN_MAX_INPUTS);
        return an_fail(ctx, &err);
    }
    if (an_load_graph_inputs(m, in_names, in_files, n_given, inputs, &err) != RD_OK) {
        rd_model_destroy(m);
        return err.code == RD_E_INVAL ? an_usage(ctx, "%s", err.msg) : an_fail(ctx, &err);
    }
    if (model_has_open_dims(m) && n_shapes == 0) {
        /* reload with the actual input shapes so that every shape (and MAC count) is known before running */
        for (size_t k = 0; k < n_in; k++) {
            rd_value_info vi;
            rd_model_value(m, (size_t)rd_model_input(m, k), &vi);
            snprintf(shape_names[k].name, sizeof shape_names[k].name, "%s", vi.name);
            shapes[k].name = shape_names[k].name;
            shapes[k].rank = inputs[k].rank;
            memcpy(shapes[k].dims, inputs[k].dims, sizeof shapes[k].dims);
        }
        rd_model *fixed = NULL;
        lopt.n_input_shapes = n_in;
        if (rd_model_load(model_path, &lopt, &fixed, &err) != RD_OK) {
            for (size_t k = 0; k < n_in; k++)
                rd_tensor_fini(&inputs[k]);
            rd_model_destroy(m);
            return an_fail(ctx, &err);
        }
        rd_model_destroy(m);
        m = fixed;
    }
    int rc = AN_EXIT_OK;
    if (bench) {
        rc = run_bench(ctx, m, inputs, n_in, bench, (int)threads);
        goto out;
    }
    an_dump dump;
    bool dumping = dump_dir != NULL;
    if (dumping && an_dump_open(&dump, dump_dir, &err) != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    run_observer ro = {.m = m, .dump = dumping ? &dump : NULL, .outputs_only = outputs_only, .collect = true};
    rd_run_options opt = {.observer = observe_tensor, .user = &ro, .observe_inputs = !outputs_only,
                          .threads = (int)threads};
    rd_status st = rd_model_run(m, inputs, n_in, &opt, NULL, 0, &err);
    if (st == RD_OK && dumping)
        st = an_dump_close(&dump, &err);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
    } else {
        if (json)
            print_json(ctx->out, model_path, &ro);
        else if (!quiet)
            print_table(ctx->out, &ro);
        if (dumping)
            fprintf(ctx->errs, "wrote %zu tensors and index.json to %s\n", dump.n, dump_dir);
    }
    if (dumping)
        an_dump_fini(&dump);
    for (size_t i = 0; i < ro.n_rows; i++)
        free(ro.rows[i].name);
    free(ro.rows);
out:
    for (size_t k = 0; k < n_in; k++)
        rd_tensor_fini(&inputs[k]);
    rd_model_destroy(m);
    return rc;
}

/*
 * cmd_eval.c: `rknn-diag eval MODEL (--dataset FILE --labels FILE | --idx-images F --idx-labels F)`:
 * top-1 and top-5 of a classifier at fp32 (the reference), fp16 and int8 (the simulators) side by side,
 * with the samples where the precisions disagree.
 */
#include "json_out.h"
#include "cli_internal.h"
#include "cli_model_args.h"
#include "progress.h"
#include "quant_setup.h"
#include "config_model.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_HELP = 1, OPT_LABELS, OPT_IDX_IMAGES, OPT_IDX_LABELS, OPT_LIMIT, OPT_CALIB, OPT_JSON, OPT_SHOW };

static const an_optspec eval_opts[] = {
    {OPT_LABELS, "labels", 0, "FILE", "with --dataset: one integer class per line, in the dataset's order"},
    {OPT_IDX_IMAGES, "idx-images", 0, "FILE", "IDX image file (MNIST's format, .gz allowed) instead of --dataset"},
    {OPT_IDX_LABELS, "idx-labels", 0, "FILE", "IDX label file matching --idx-images"},
    {OPT_LIMIT, "limit", 0, "N", "evaluate the first N samples only"},
    {OPT_CALIB, "calib", 0, "N", "with IDX files: calibrate int8 on the first N images (default 100)"},
    {OPT_SHOW, "show", 0, "N", "list the first N samples where the precisions disagree (default 10)"},
    {OPT_JSON, "json", 0, NULL, "print the results as JSON"},
    AN_QUANT_OPTSPECS,
    {OPT_HELP, "help", 'h', NULL, "show this help"},
};
#define N_EVAL_OPTS ((int)(sizeof eval_opts / sizeof eval_opts[0]))

enum { P_FP32, P_FP16, P_INT8, N_PREC };
static const char *const prec_names[N_PREC] = {"fp32", "fp16", "int8"};

typedef struct eval_args {
    const char *model_path, *labels, *idx_images, *idx_labels;
    long limit, calib, show;
    bool json;
    an_quant_opts q;
    const char *int_name;       /* the integer column: "int8" for w8a8, else the dtype (--dtype w16a16i, ...) */
    char dynamic_name[256];     /* the dynamic_input set evaluated ("" without one) */
} eval_args;

static const char *col_name(const eval_args *a, int p)
{
    return p == P_INT8 && a->int_name ? a->int_name : prec_names[p];
}

/* The labelled samples: a dataset list or IDX tensors. */
typedef struct eval_set {
    const eval_args *a;
    const rd_model *m;
    rd_dataset ds;
    rd_tensor images;           /* IDX: uint8 [N, H, W] */
    size_t n;                   /* samples */
    int64_t *labels;
    bool idx;
} eval_set;

typedef struct disagreement {
    size_t sample;
    int64_t label;
    int64_t top1[N_PREC];
} disagreement;

static int parse_args(an_cmd_ctx *ctx, eval_args *a)
{
    an_opts p;
    an_opts_init(&p, ctx, eval_opts, N_EVAL_OPTS);
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
            an_print_help(ctx->out,
                          "rknn-diag eval MODEL.onnx (--dataset FILE --labels FILE | --idx-images F --idx-labels F) "
                          "[--limit N] [quant options]",
                          "Top-1 and top-5 accuracy of a classifier (output 0, highest score wins) at fp32 (the\n"
                          "reference), fp16 and int8 (the simulators) side by side, and the samples where the\n"
                          "precisions disagree; --dtype w16a16i, w8a16, w4a16 or w16a16i_dfp replaces the int8 column.\n"
                          "With --dataset, samples are read as RKNN reads them (mean/std, ...) and the integer\n"
                          "column is calibrated on the same list. IDX images become the graph input as float\n"
                          "pixel values 0..255 (then --mean/--std if given); calibration uses the first\n"
                          "--calib images.",
                          eval_opts, N_EVAL_OPTS);
            return AN_EXIT_OK;
        case OPT_LABELS:
            a->labels = v;
            break;
        case OPT_IDX_IMAGES:
            a->idx_images = v;
            break;
        case OPT_IDX_LABELS:
            a->idx_labels = v;
            break;
        case OPT_JSON:
            a->json = true;
            break;
        case OPT_LIMIT:
            if (!an_parse_int(ctx->argv[0], "--limit", v, 1, 100000000, &a->limit, ctx->errs))
                return AN_EXIT_USAGE;
            break;
        case OPT_CALIB:
            if (!an_parse_int(ctx->argv[0], "--calib", v, 1, 100000, &a->calib, ctx->errs))
                return AN_EXIT_USAGE;
            break;
        case OPT_SHOW:
            if (!an_parse_int(ctx->argv[0], "--show", v, 0, 100000, &a->show, ctx->errs))
                return AN_EXIT_USAGE;
            break;
        }
    }
    if (!a->model_path)
        return an_usage(ctx, "missing MODEL.onnx");
    bool idx = a->idx_images || a->idx_labels;
    if (idx && (!a->idx_images || !a->idx_labels))
        return an_usage(ctx, "give both --idx-images and --idx-labels");
    if (idx && a->q.flag_dataset)
        return an_usage(ctx, "give either --dataset with --labels or the IDX files, not both");
    if (!idx && (!a->q.flag_dataset && !a->q.config_path))
        return an_usage(ctx, "give --dataset FILE --labels FILE, or --idx-images F --idx-labels F");
    if (!idx && !a->labels)
        return an_usage(ctx, "--dataset needs --labels FILE (one integer class per line)");
    return -1;
}

#define AN_LABELS_MAX_BYTES ((uint64_t)64 << 20)

/* Labels file: one integer per line (blank lines and '#' comments skipped). */
static rd_status load_labels(const char *path, size_t want, int64_t **out, rd_error *err)
{
    FILE *f;
    rd_status opened = rd_file_fopen_read(path, 0, AN_LABELS_MAX_BYTES, &f, err);
    if (opened != RD_OK)
        return opened;
    int64_t *labels = calloc(want + 1, sizeof *labels);
    if (!labels) {
        fclose(f);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    char line[256];
    size_t n = 0;
    int lineno = 0;
    rd_status st = RD_OK;
    while (st == RD_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\n' || *p == '\r' || *p == '#' || *p == '\0')
            continue;
        char *end = NULL;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        while (end && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
            end++;
        if (errno || end == p || *end || v < 0)
            st = rd_errorf(err, RD_E_PARSE, "%s:%d: expected one non-negative integer class", path, lineno);
        else if (n == want)
            st = rd_errorf(err, RD_E_PARSE, "%s:%d: more labels than the %zu samples of the dataset", path, lineno, want);
        else
            labels[n++] = v;
    }
    fclose(f);
    if (st == RD_OK && n < want)
        st = rd_errorf(err, RD_E_PARSE, "%s: %zu labels for %zu samples", path, n, want);
    if (st != RD_OK) {
        free(labels);
        return st;
    }
    *out = labels;
    return RD_OK;
}

static rd_status open_set(const eval_args *a, const rd_model *m, eval_set *es, rd_error *err)
{
    es->a = a;
    es->m = m;
    rd_status st;
    if (!es->idx) {
        st = rd_dataset_load(a->q.cfg.dataset, rd_model_input_count(m), &es->ds, err);
        if (st != RD_OK)
            return st;
        es->n = es->ds.n_samples;
        return load_labels(a->labels, es->n, &es->labels, err);
    }
    if (rd_model_input_count(m) != 1)
        return rd_errorf(err, RD_E_INVAL, "IDX images feed a model with one input (this one has %zu)",
                         rd_model_input_count(m));
    rd_tensor lab;
    if ((st = rd_idx_load(a->idx_images, &es->images, err)) != RD_OK)
        return st;
    if ((st = rd_idx_load(a->idx_labels, &lab, err)) != RD_OK)
        return st;
    if (es->images.dtype != RD_DT_U8 || es->images.rank < 2 || lab.rank != 1 || lab.dtype != RD_DT_U8 ||
        lab.dims[0] != es->images.dims[0])
        st = rd_errorf(err, RD_E_PARSE, "%s, %s: expected uint8 images [N, H, W] and N uint8 labels", a->idx_images,
                       a->idx_labels);
    if (st == RD_OK) {
        es->n = (size_t)lab.dims[0];
        es->labels = calloc(es->n + 1, sizeof *es->labels);
        if (!es->labels)
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        for (size_t i = 0; st == RD_OK && i < es->n; i++)
            es->labels[i] = ((const uint8_t *)lab.data)[i];
    }
    rd_tensor_fini(&lab);
    return st;
}

static void close_set(eval_set *es)
{
    rd_dataset_fini(&es->ds);
    rd_tensor_fini(&es->images);
    free(es->labels);
}

/* Sample k as graph inputs (inputs[0..n_inputs-1], new tensors). Thread-safe: calibration calls it too. */
static rd_status get_sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    const eval_set *es = user;
    const rd_model *m = es->m;
    if (!es->idx) {
        size_t n = rd_model_input_count(m);
        for (size_t i = 0; i < n; i++) {
            rd_status st = an_quant_prepare_sample(&es->a->q, m, &es->ds, k, i, NULL, &inputs[i], err);
            if (st != RD_OK) {
                for (size_t j = 0; j < i; j++)
                    rd_tensor_fini(&inputs[j]);
                return rd_error_prefix(err, "%s line %d", es->ds.path, es->ds.lines[k]);
            }
        }
        return RD_OK;
    }
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, 0), &vi);
    int64_t per = 1;
    for (int d = 1; d < es->images.rank; d++)
        per *= es->images.dims[d];
    int64_t dims[RD_MAX_RANK];
    int64_t want = 1;
    for (int d = 0; d < vi.rank; d++) {
        dims[d] = vi.dims[d] < 0 ? 1 : vi.dims[d];
        want *= dims[d];
    }
    if (vi.rank < 0 || want != per)
        return rd_errorf(err, RD_E_INVAL, "input '%s' does not hold one %lld-pixel IDX image", vi.name, (long long)per);
    rd_status st = rd_tensor_alloc(&inputs[0], RD_DT_F32, vi.rank, dims, err);
    if (st != RD_OK)
        return st;
    const rd_rknn_config *c = &es->a->q.cfg;
    float mean = c->n_mean ? c->mean[0].v[0] : 0.0f, std = c->n_std ? c->std[0].v[0] : 1.0f;
    const uint8_t *px = (const uint8_t *)es->images.data + (size_t)k * (size_t)per;
    for (int64_t i = 0; i < per; i++)
        ((float *)inputs[0].data)[i] = ((float)px[i] - mean) / std;
    return RD_OK;
}

/* Top-1 class and whether label is among the 5 highest scores of output 0. */
static rd_status classify(const rd_tensor *out, int64_t label, int64_t *top1, bool *in_top5, rd_error *err)
{
    int64_t n = rd_tensor_numel(out);
    if (out->dtype != RD_DT_F32 || n < 1)
        return rd_errorf(err, RD_E_INVAL, "output 0 is not a float32 score vector");
    const float *x = out->data;
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    *top1 = best;
    int64_t above = 0; /* classes scoring strictly higher than the label */
    if (label < n) {
        for (int64_t i = 0; i < n; i++)
            above += x[i] > x[label];
        *in_top5 = above < 5;
    } else {
        *in_top5 = false;
    }
    return RD_OK;
}

typedef struct eval_result {
    size_t n, correct1[N_PREC], correct5[N_PREC], n_disagree;
    disagreement *shown;
    size_t n_shown;
} eval_result;

static rd_status run_one(rd_model *m, rd_sim *s, const rd_tensor *in, size_t n_in, rd_tensor *out, rd_error *err)
{
    return s ? rd_sim_run(s, in, n_in, NULL, out, 1, err) : rd_model_run(m, in, n_in, NULL, out, 1, err);
}

static rd_status evaluate(an_cmd_ctx *ctx, rd_model *m, rd_sim *sims[N_PREC], const eval_set *es, size_t n,
                          size_t show, eval_result *r, rd_error *err)
{
    r->shown = calloc(show + 1, sizeof *r->shown);
    if (!r->shown)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t n_in = rd_model_input_count(m);
    an_progress bar;
    an_progress_init(&bar, ctx->errs, ctx->color, "evaluating");
    rd_status st = RD_OK;
    for (size_t k = 0; k < n && st == RD_OK; k++) {
        rd_tensor in[AN_MAX_INPUTS];
        if ((st = get_sample((void *)es, k, in, err)) != RD_OK)
            break;
        int64_t top1[N_PREC];
        for (int p = 0; p < N_PREC && st == RD_OK; p++) {
            rd_tensor out;
            st = run_one(m, sims[p], in, n_in, &out, err);
            bool top5 = false;
            if (st == RD_OK) {
                st = classify(&out, es->labels[k], &top1[p], &top5, err);
                rd_tensor_fini(&out);
            }
            if (st != RD_OK) {
                rd_error_prefix(err, "sample %zu (%s)", k, col_name(es->a, p));
                break;
            }
            r->correct1[p] += top1[p] == es->labels[k];
            r->correct5[p] += top5;
        }
        for (size_t i = 0; i < n_in; i++)
            rd_tensor_fini(&in[i]);
        if (st == RD_OK && (top1[P_FP16] != top1[P_FP32] || top1[P_INT8] != top1[P_FP32])) {
            if (r->n_shown < show) {
                disagreement *d = &r->shown[r->n_shown++];
                d->sample = k;
                d->label = es->labels[k];
                memcpy(d->top1, top1, sizeof top1);
            }
            r->n_disagree++;
        }
        r->n = k + 1;
        an_progress_update(&bar, k + 1, n);
    }
    an_progress_done(&bar);
    return st;
}

static double pct(size_t a, size_t n)
{
    return n ? 100.0 * (double)a / (double)n : 0.0;
}

static void print_text(FILE *out, const eval_args *a, const eval_result *r)
{
    fprintf(out, "%s%s%s: %zu samples\n\n%-12s %10s %10s\n", a->model_path, a->dynamic_name[0] ? ", dynamic_input " : "",
            a->dynamic_name, r->n, "precision", "top-1", "top-5");
    for (int p = 0; p < N_PREC; p++)
        fprintf(out, "%-12s %9.2f%% %9.2f%%\n", col_name(a, p), pct(r->correct1[p], r->n), pct(r->correct5[p], r->n));
    fprintf(out, "\nprecisions disagree on %zu samples (top-1)%s\n", r->n_disagree, r->n_shown ? ":" : "");
    if (r->n_shown)
        fprintf(out, "%10s %6s %6s %6s %6s\n", "sample", "label", "fp32", "fp16", col_name(a, P_INT8));
    for (size_t i = 0; i < r->n_shown; i++) {
        const disagreement *d = &r->shown[i];
        fprintf(out, "%10zu %6lld %6lld %6lld %6lld\n", d->sample, (long long)d->label, (long long)d->top1[P_FP32],
                (long long)d->top1[P_FP16], (long long)d->top1[P_INT8]);
    }
}

static void print_json(FILE *out, const eval_args *a, const eval_result *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", a->model_path);
    if (a->dynamic_name[0])
        cJSON_AddStringToObject(root, "dynamic_input", a->dynamic_name);
    cJSON_AddNumberToObject(root, "samples", (double)r->n);
    cJSON *prec = cJSON_AddObjectToObject(root, "precisions");
    for (int p = 0; p < N_PREC; p++) {
        cJSON *o = cJSON_AddObjectToObject(prec, col_name(a, p));
        cJSON_AddNumberToObject(o, "top1", pct(r->correct1[p], r->n));
        cJSON_AddNumberToObject(o, "top5", pct(r->correct5[p], r->n));
        cJSON_AddNumberToObject(o, "correct1", (double)r->correct1[p]);
        cJSON_AddNumberToObject(o, "correct5", (double)r->correct5[p]);
    }
    cJSON_AddNumberToObject(root, "disagreements", (double)r->n_disagree);
    cJSON *list = cJSON_AddArrayToObject(root, "disagreeing_samples");
    for (size_t i = 0; i < r->n_shown; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "sample", (double)r->shown[i].sample);
        cJSON_AddNumberToObject(o, "label", (double)r->shown[i].label);
        for (int p = 0; p < N_PREC; p++)
            cJSON_AddNumberToObject(o, col_name(a, p), (double)r->shown[i].top1[p]);
        cJSON_AddItemToArray(list, o);
    }
    an_json_print(out, root);
}

/* One evaluation: the model (dynamic_input set `set` when the config has them), printed (json_sep: printed
   before the JSON object, NULL for a lone object). */
static int eval_once(an_cmd_ctx *ctx, eval_args *a, size_t set, const char *json_sep)
{
    int rc = AN_EXIT_OK;
    rd_error err = {0};
    rd_model *m = NULL;
    rd_sim *sims[N_PREC] = {NULL, NULL, NULL};
    eval_set es;
    memset(&es, 0, sizeof es);
    es.idx = a->idx_images != NULL;
    eval_result r;
    memset(&r, 0, sizeof r);
    const bool dtype_given = a->q.flag_dtype != NULL;
    an_model_request req = {.command = "eval", .path = a->model_path, .dynamic_set = set, .errs = ctx->errs};
    rd_status st = an_model_load_configured(&a->q, &req, &m, &err);
    if (st == RD_OK && !a->model_path)
        a->model_path = a->q.cfg.model_file_path;
    /* fp16 is always evaluated; the dtype picks the integer column (w8a8 unless an integer dtype is given) */
    const rd_qdtype dt = a->q.cfg.dtype;
    const bool integer = dt != RD_QDT_FLOAT16 && dt != RD_QDT_FLOAT32;
    if (st == RD_OK && !integer && dtype_given)
        st = rd_errorf(&err, RD_E_USAGE,
                       "eval compares fp32, fp16 and one integer dtype: --dtype must be w8a8, w16a16i, w8a16, w4a16 or "
                       "w16a16i_dfp (got %s)", rd_qdtype_name(dt));
    if (st == RD_OK && !integer) {
        a->q.cfg.dtype = RD_QDT_W8A8;
        a->q.cfg.quantize = true;
    }
    a->int_name = a->q.cfg.dtype == RD_QDT_W8A8 ? "int8" : rd_qdtype_name(a->q.cfg.dtype);
    if (st == RD_OK && !es.idx && !a->q.cfg.dataset)
        st = rd_errorf(&err, RD_E_USAGE, "give --dataset FILE (or a -c config naming one) with --labels");
    if (st == RD_OK)
        st = open_set(a, m, &es, &err);
    if (st == RD_OK) {
        rd_sim_options so = {.precision = RD_PREC_FP16, .optimization_level = a->q.cfg.optimization_level};
        st = rd_sim_create(m, &so, &sims[P_FP16], &err);
    }
    if (st == RD_OK) {
        size_t n_calib = es.idx ? ((size_t)a->calib < es.n ? (size_t)a->calib : es.n) : 0;
        st = an_quant_build_sim_from(&a->q, m, NULL, es.idx ? get_sample : NULL, &es, n_calib, ctx->errs, ctx->color,
                                     &sims[P_INT8], &err);
    }
    size_t n = a->limit && (size_t)a->limit < es.n ? (size_t)a->limit : es.n;
    if (st == RD_OK)
        st = evaluate(ctx, m, sims, &es, n, (size_t)a->show, &r, &err);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    if (a->json && json_sep)
        fputs(json_sep, ctx->out);
    if (a->json)
        print_json(ctx->out, a, &r);
    else
        print_text(ctx->out, a, &r);
    rc = AN_EXIT_OK;
out:
    free(r.shown);
    close_set(&es);
    for (int p = 0; p < N_PREC; p++)
        rd_sim_destroy(sims[p]);
    rd_model_destroy(m);
    return rc;
}

int an_cmd_eval(an_cmd_ctx *ctx)
{
    eval_args *a = calloc(1, sizeof *a);
    if (!a)
        return an_fail_nomem(ctx, "the command's options");
    a->calib = 100;
    a->show = 10;
    an_quant_opts_init(&a->q);
    int rc = parse_args(ctx, a);
    size_t n_sets = 0;
    if (rc < 0 && (rc = an_dynamic_prepare(ctx, &a->q, &n_sets)) < 0) {
        /* dynamic_input: one evaluation per shape set (with --json, an array of them) */
        rc = AN_EXIT_OK;
        for (size_t k = 0; rc == AN_EXIT_OK && k < (n_sets ? n_sets : 1); k++) {
            if (n_sets)
                an_dynamic_set_name(&a->q, k, a->dynamic_name, sizeof a->dynamic_name);
            if (n_sets && !a->json && k)
                fputc('\n', ctx->out);
            rc = eval_once(ctx, a, k, !n_sets ? NULL : k ? "," : "[");
        }
        if (n_sets && a->json && rc == AN_EXIT_OK)
            fputs("]\n", ctx->out);
    }
    an_quant_opts_fini(&a->q);
    free(a);
    return rc;
}

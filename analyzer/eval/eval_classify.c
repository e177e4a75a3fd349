/*
 * eval_classify.c: `eval --task classify` (the default): top-1 and top-5 of output 0 against a label per
 * sample (--labels with --dataset, or IDX files), and the samples whose top-1 differs between columns.
 */
#include "eval_task.h"
#include "json_out.h"
#include "term_text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LABELS_MAX_BYTES ((uint64_t)64 << 20)

typedef struct classify_state {
    int64_t *labels;
} classify_state;

/* Labels file: one integer per line (blank lines and '#' comments skipped). */
static rd_status load_labels(const char *path, size_t want, int64_t **out, rd_error *err)
{
    FILE *f;
    rd_status opened = rd_file_fopen_read(path, 0, LABELS_MAX_BYTES, &f, err);
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
            st = rd_errorf(err, RD_E_PARSE, "%s:%d: more labels than the %zu samples of the dataset", path, lineno,
                           want);
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

static rd_status classify_open(an_eval_ctx *c, rd_error *err)
{
    classify_state *s = calloc(1, sizeof *s);
    if (!s)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    c->state = s;
    if (!c->o->idx_images)
        return load_labels(c->o->labels, c->ds.n_samples, &s->labels, err);
    rd_tensor lab;
    rd_status st = rd_idx_load(c->o->idx_labels, &lab, err);
    if (st != RD_OK)
        return st;
    if (lab.rank != 1 || lab.dtype != RD_DT_U8 || lab.dims[0] != c->idx_images.dims[0])
        st = rd_errorf(err, RD_E_PARSE, "%s, %s: expected uint8 images [N, H, W] and N uint8 labels", c->o->idx_images,
                       c->o->idx_labels);
    if (st == RD_OK && !(s->labels = calloc((size_t)lab.dims[0] + 1, sizeof *s->labels)))
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (int64_t i = 0; st == RD_OK && i < lab.dims[0]; i++)
        s->labels[i] = ((const uint8_t *)lab.data)[i];
    rd_tensor_fini(&lab);
    return st;
}

static void classify_close(an_eval_ctx *c)
{
    classify_state *s = c->state;
    if (s)
        free(s->labels);
    free(s);
    c->state = NULL;
}

/* IDX image k as the single graph input: float pixel values, then the first --mean/--std. */
static rd_status idx_input(an_eval_ctx *c, size_t k, rd_tensor *in, rd_error *err)
{
    rd_value_info vi;
    rd_model_value(c->m, (size_t)rd_model_input(c->m, 0), &vi);
    const rd_tensor *im = &c->idx_images;
    int64_t per = 1;
    for (int d = 1; d < im->rank; d++)
        per *= im->dims[d];
    int64_t dims[RD_MAX_RANK];
    int64_t want = 1;
    for (int d = 0; d < vi.rank; d++) {
        dims[d] = vi.dims[d] < 0 ? 1 : vi.dims[d];
        want *= dims[d];
    }
    if (vi.rank < 0 || want != per)
        return rd_errorf(err, RD_E_INVAL, "input '%s' does not hold one %lld-pixel IDX image", vi.name, (long long)per);
    rd_status st = rd_tensor_alloc(&in[0], RD_DT_F32, vi.rank, dims, err);
    if (st != RD_OK)
        return st;
    const rd_rknn_config *cfg = &c->q->cfg;
    float mean = cfg->n_mean ? cfg->mean[0].v[0] : 0.0f, std = cfg->n_std ? cfg->std[0].v[0] : 1.0f;
    const uint8_t *px = (const uint8_t *)im->data + k * (size_t)per;
    for (int64_t i = 0; i < per; i++)
        ((float *)in[0].data)[i] = ((float)px[i] - mean) / std;
    return RD_OK;
}

static rd_status classify_input(an_eval_ctx *c, size_t k, rd_tensor *in, an_eval_geom *g, rd_error *err)
{
    if (c->o->idx_images) {
        memset(g, 0, sizeof *g);
        return idx_input(c, k, in, err);
    }
    return an_eval_default_input(c, k, in, g, err);
}

/* Top-1 class and whether label is among the 5 highest scores of output 0. */
static rd_status classify_one(const rd_tensor *out, int64_t label, int64_t *top1, bool *in_top5, rd_error *err)
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

static rd_status classify_sample(an_eval_ctx *c, size_t k, const an_eval_geom *g, rd_tensor *const *outs, cJSON *rec,
                                 rd_error *err)
{
    (void)g;
    const classify_state *s = c->state;
    bool ok = true;
    an_json_add_num(rec, "label", (double)s->labels[k], &ok);
    cJSON *t1 = an_json_add_array(rec, "top1", &ok), *t5 = an_json_add_array(rec, "top5", &ok);
    for (size_t j = 0; j < c->n_cols; j++) {
        int64_t top1 = 0;
        bool top5 = false;
        rd_status st = classify_one(&outs[j][0], s->labels[k], &top1, &top5, err);
        if (st != RD_OK)
            return rd_error_prefix(err, "sample %zu (%s)", k, c->cols[j].name);
        an_json_push(t1, cJSON_CreateNumber((double)top1), &ok);
        an_json_push(t5, cJSON_CreateNumber(top5 ? 1 : 0), &ok);
    }
    return an_json_status(ok, "the sample's record", err);
}

static double pct(double a, double n)
{
    return n > 0 ? 100.0 * a / n : 0.0;
}

static rd_status classify_report(const cJSON *partial, cJSON *const *recs, size_t n, size_t show, cJSON *report,
                                 rd_error *err)
{
    const char *cols[AN_EVAL_MAX_COLS];
    size_t nc = an_eval_columns(partial, cols);
    double c1[AN_EVAL_MAX_COLS] = {0}, c5[AN_EVAL_MAX_COLS] = {0};
    size_t n_dis = 0;
    bool ok = true;
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const cJSON *t1 = cJSON_GetObjectItemCaseSensitive(recs[i], "top1");
        const cJSON *t5 = cJSON_GetObjectItemCaseSensitive(recs[i], "top5");
        const cJSON *lab = cJSON_GetObjectItemCaseSensitive(recs[i], "label");
        if (!cJSON_IsNumber(lab) || cJSON_GetArraySize(t1) != (int)nc || cJSON_GetArraySize(t5) != (int)nc) {
            cJSON_Delete(list);
            return rd_errorf(err, RD_E_PARSE, "record %zu: expected label, top1 and top5 for %zu columns", i, nc);
        }
        bool differs = false;
        for (size_t j = 0; j < nc; j++) {
            double p = cJSON_GetArrayItem(t1, (int)j)->valuedouble;
            c1[j] += p == lab->valuedouble;
            c5[j] += cJSON_GetArrayItem(t5, (int)j)->valuedouble;
            differs |= p != cJSON_GetArrayItem(t1, 0)->valuedouble;
        }
        if (differs && n_dis++ < show) {
            cJSON *o = cJSON_CreateObject();
            an_json_add_num(o, "sample", cJSON_GetObjectItemCaseSensitive(recs[i], "sample")->valuedouble, &ok);
            an_json_add_num(o, "label", lab->valuedouble, &ok);
            for (size_t j = 0; j < nc; j++)
                an_json_add_num(o, cols[j], cJSON_GetArrayItem(t1, (int)j)->valuedouble, &ok);
            an_json_push(list, o, &ok);
        }
    }
    cJSON *prec = an_json_add_object(report, "precisions", &ok);
    for (size_t j = 0; j < nc; j++) {
        cJSON *o = an_json_add_object(prec, cols[j], &ok);
        an_json_add_num(o, "top1", pct(c1[j], (double)n), &ok);
        an_json_add_num(o, "top5", pct(c5[j], (double)n), &ok);
        an_json_add_num(o, "correct1", c1[j], &ok);
        an_json_add_num(o, "correct5", c5[j], &ok);
    }
    an_json_add_num(report, "disagreements", (double)n_dis, &ok);
    an_json_add(report, "disagreeing_samples", list, &ok);
    return an_json_status(ok, "the classification report", err);
}

static void classify_print(FILE *out, const cJSON *r, size_t show)
{
    (void)show;
    const char *cols[AN_EVAL_MAX_COLS];
    size_t nc = an_eval_columns(r, cols);
    const double n = cJSON_GetObjectItemCaseSensitive(r, "samples")->valuedouble;
    an_eval_print_model(out, r);
    fprintf(out, ": %.0f samples\n\n%-12s %10s %10s\n", n, "precision", "top-1", "top-5");
    const cJSON *prec = cJSON_GetObjectItemCaseSensitive(r, "precisions");
    for (size_t j = 0; j < nc; j++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(prec, cols[j]);
        fprintf(out, "%-12s %9.2f%% %9.2f%%\n", cols[j], cJSON_GetObjectItemCaseSensitive(o, "top1")->valuedouble,
                cJSON_GetObjectItemCaseSensitive(o, "top5")->valuedouble);
    }
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(r, "disagreeing_samples");
    int shown = cJSON_GetArraySize(list);
    fprintf(out, "\nprecisions disagree on %.0f samples (top-1)%s\n",
            cJSON_GetObjectItemCaseSensitive(r, "disagreements")->valuedouble, shown ? ":" : "");
    if (shown) {
        fprintf(out, "%10s %6s", "sample", "label");
        for (size_t j = 0; j < nc; j++)
            fprintf(out, " %6.6s", cols[j]);
        fputc('\n', out);
    }
    const cJSON *d;
    cJSON_ArrayForEach(d, list)
    {
        fprintf(out, "%10.0f %6.0f", cJSON_GetObjectItemCaseSensitive(d, "sample")->valuedouble,
                cJSON_GetObjectItemCaseSensitive(d, "label")->valuedouble);
        for (size_t j = 0; j < nc; j++)
            fprintf(out, " %6.0f", cJSON_GetObjectItemCaseSensitive(d, cols[j])->valuedouble);
        fputc('\n', out);
    }
}

const an_eval_task an_eval_classify = {
    .name = "classify",
    .open = classify_open,
    .input = classify_input,
    .sample = classify_sample,
    .close = classify_close,
    .report = classify_report,
    .print = classify_print,
};

/*
 * eval_partial.c: partial.json (docs/sharding.md): its header and hashes, reading and merging shards, and
 * the report computed from records, the same for one process and for merged shards.
 */
#include "eval_task.h"
#include "json_out.h"
#include "term_text.h"
#include "content_hash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const an_eval_task *an_eval_task_find(const char *name)
{
    static const an_eval_task *const tasks[] = {&an_eval_classify, &an_eval_detect, &an_eval_segment, &an_eval_score};
    for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++)
        if (strcmp(tasks[i]->name, name) == 0)
            return tasks[i];
    return NULL;
}

cJSON *an_json_exact(double v)
{
    char buf[40];
    if (!isfinite(v))
        return cJSON_CreateNull();
    snprintf(buf, sizeof buf, "%.17g", v);
    return cJSON_CreateRaw(buf);
}

rd_status an_json_add_exact(cJSON *o, const char *key, double v, rd_error *err)
{
    bool ok = true;
    return an_json_add(o, key, an_json_exact(v), &ok) ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory");
}

const char *an_json_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

double an_json_num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

size_t an_eval_columns(const cJSON *doc, const char **names)
{
    const cJSON *cols = cJSON_GetObjectItemCaseSensitive(doc, "columns");
    size_t n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cols)
    {
        if (n == AN_EVAL_MAX_COLS || !cJSON_IsString(c))
            break;
        names[n++] = c->valuestring;
    }
    return n;
}

void an_eval_print_model(FILE *out, const cJSON *report)
{
    an_put_name(out, an_json_str(report, "model"));
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(report, "dynamic_input"))) {
        fputs(", dynamic_input ", out);
        an_put_name(out, an_json_str(report, "dynamic_input"));
    }
}

void an_eval_print_metric(FILE *out, int width, double v)
{
    if (v < 0 || !isfinite(v))
        fprintf(out, " %*s", width, "-");
    else
        fprintf(out, " %*.4f", width, v);
}

void an_eval_print_metric_rows(FILE *out, const cJSON *r, const an_eval_figure *figs, size_t n)
{
    const char *cols[AN_EVAL_MAX_COLS];
    size_t nc = an_eval_columns(r, cols);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
    for (size_t j = 0; j < nc; j++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(m, cols[j]);
        fprintf(out, "%-14s", cols[j]);
        for (size_t f = 0; f < n; f++) {
            if (!figs[f].drop)
                an_eval_print_metric(out, figs[f].width, an_json_num(o, figs[f].key));
            else if (j == 0)
                fprintf(out, " %*s", figs[f].width, "-");
            else
                fprintf(out, " %+*.4f", figs[f].width, an_json_num(o, figs[f].key));
        }
        fputc('\n', out);
    }
}

/* ---- hashes ----------------------------------------------------------------------------------------- */

/* Options that do not change a result: where it goes and how it is shown. */
static bool option_neutral(const char *arg, bool *skip_value)
{
    static const char *const with_value[] = {"--shard", "-o", "--output", "--show", "--score-timeout"};
    static const char *const flags[] = {"--json", "-q", "--quiet"};
    *skip_value = false;
    for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; i++) {
        size_t n = strlen(with_value[i]);
        if (strncmp(arg, with_value[i], n) == 0 && (arg[n] == '\0' || arg[n] == '=')) {
            *skip_value = arg[n] == '\0';
            return true;
        }
    }
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (strcmp(arg, flags[i]) == 0)
            return true;
    return false;
}

rd_status an_eval_partial_header(an_eval_ctx *c, const char *dynamic_name, cJSON **out, rd_error *err)
{
    *out = NULL;
    const an_eval_opts *o = c->o;
    an_hash run = {0}, shard = {0};
    cJSON *p = cJSON_CreateObject();
    rd_status st = p ? an_hash_init(&run, err) : rd_errorf(err, RD_E_NOMEM, "out of memory (hash)");
    if (st == RD_OK)
        st = an_hash_init(&shard, err);
    if (st != RD_OK)
        goto out;
    an_hash_str(&run, AN_EVAL_PARTIAL_FORMAT);
    an_hash_str(&run, rd_version());
    an_hash_str(&run, c->task->name);
    an_hash_str(&run, dynamic_name);
    /* the command line, less where results go and how they are shown */
    for (int i = 0; i < o->argc; i++) {
        bool skip_value;
        if (option_neutral(o->argv[i], &skip_value)) {
            i += skip_value;
            continue;
        }
        an_hash_str(&run, o->argv[i]);
    }
    const char *files[8 + AN_EVAL_MAX_COLS] = {c->model_path, c->q->qcfg_path, c->q->config_path, c->q->cfg.dataset,
                                               o->labels,     o->idx_images,   o->idx_labels,     o->annotations};
    size_t n_files = 8;
    for (size_t i = 0; i < o->n_hybrid; i++)
        files[n_files++] = o->hybrid_cfgs[i];
    for (size_t i = 0; i < n_files && st == RD_OK; i++)
        if (files[i])
            st = an_hash_file(&run, files[i], err);
    /* calibration samples (the first --calib of the list) */
    size_t n_calib =
        c->ds.n_samples && o->calib > 0 && (size_t)o->calib < c->ds.n_samples ? (size_t)o->calib : c->ds.n_samples;
    for (size_t k = 0; k < n_calib && st == RD_OK; k++)
        for (size_t i = 0; i < c->ds.n_inputs && st == RD_OK; i++)
            st = an_hash_file(&run, rd_dataset_path(&c->ds, k, i), err);
    /* the shard's own samples and their ground truth files */
    size_t lo = c->n * (size_t)o->shard_k / (size_t)o->shard_n,
           hi = c->n * (size_t)(o->shard_k + 1) / (size_t)o->shard_n;
    for (size_t k = lo; k < hi && st == RD_OK && c->ds.n_samples; k++)
        for (size_t i = 0; i < c->ds.n_inputs && st == RD_OK; i++)
            st = an_hash_file(&shard, rd_dataset_path(&c->ds, k, i), err);
    if (st != RD_OK)
        goto out;
    char run_hex[AN_HASH_HEX] = {0}, shard_hex[AN_HASH_HEX] = {0};
    an_hash_hex(&run, run_hex);
    an_hash_hex(&shard, shard_hex);
    bool ok = true;
    an_json_add_str(p, "format", AN_EVAL_PARTIAL_FORMAT, &ok);
    an_json_add_str(p, "task", c->task->name, &ok);
    an_json_add_str(p, "model", c->model_path, &ok);
    if (dynamic_name && *dynamic_name)
        an_json_add_str(p, "dynamic_input", dynamic_name, &ok);
    an_json_add_str(p, "dataset", c->ds.path ? c->ds.path : o->idx_images ? o->idx_images : "", &ok);
    cJSON *cols = an_json_add_array(p, "columns", &ok);
    for (size_t i = 0; i < c->n_cols; i++)
        an_json_push(cols, cJSON_CreateString(c->cols[i].name), &ok);
    an_json_add_str(p, "run_hash", run_hex, &ok);
    an_json_add_str(p, "shard_hash", shard_hex, &ok);
    cJSON *sh = an_json_add_object(p, "shard", &ok);
    an_json_add_num(sh, "index", (double)o->shard_k, &ok);
    an_json_add_num(sh, "count", (double)o->shard_n, &ok);
    an_json_add_num(p, "samples_total", (double)c->n, &ok);
    cJSON *range = an_json_add_array(p, "sample_range", &ok);
    an_json_push(range, cJSON_CreateNumber((double)lo), &ok);
    an_json_push(range, cJSON_CreateNumber((double)hi), &ok);
    st = an_json_status(ok, "the partial's header", err);
    if (st == RD_OK && c->task->header)
        st = c->task->header(c, p, err);
out:
    an_hash_fini(&run);
    an_hash_fini(&shard);
    if (st != RD_OK)
        cJSON_Delete(p);
    else
        *out = p;
    return st;
}

/* ---- reading and merging ---------------------------------------------------------------------------- */

rd_status an_eval_partial_parse(const char *buf, size_t len, const char *name, cJSON **out, rd_error *err)
{
    *out = NULL;
    rd_status st = RD_OK;
    cJSON *p = cJSON_ParseWithLength(buf, len);
    if (!p && rd_json_well_formed(buf, len, CJSON_NESTING_LIMIT))
        return rd_errorf(err, RD_E_NOMEM, "out of memory reading %s", name);
    if (!p)
        return rd_errorf(err, RD_E_PARSE, "%s: not valid JSON (a partial.json of rknn-diag eval --shard?)", name);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(p, "format");
    const cJSON *recs = cJSON_GetObjectItemCaseSensitive(p, "records");
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(p, "task");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(p, "shard");
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(p, "samples_total");
    const cJSON *hash = cJSON_GetObjectItemCaseSensitive(p, "run_hash");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(p, "model");
    const cJSON *cols = cJSON_GetObjectItemCaseSensitive(p, "columns");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, AN_EVAL_PARTIAL_FORMAT) != 0)
        st = rd_errorf(err, RD_E_PARSE, "%s: \"format\" is not \"%s\"", name, AN_EVAL_PARTIAL_FORMAT);
    else if (!cJSON_IsString(task) || !an_eval_task_find(task->valuestring))
        st = rd_errorf(err, RD_E_PARSE, "%s: \"task\" is not one of classify, detect, segment, score", name);
    else if (!cJSON_IsArray(recs) || !cJSON_IsObject(sh) || !cJSON_IsNumber(total) || !cJSON_IsString(hash) ||
             !cJSON_IsString(model) || !cJSON_IsArray(cols) ||
             !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(sh, "index")) ||
             !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(sh, "count")))
        st = rd_errorf(err, RD_E_PARSE,
                       "%s: missing model, columns, records, shard {index, count}, samples_total or "
                       "run_hash",
                       name);
    else if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "complete")))
        st = rd_errorf(err, RD_E_PARSE, "%s: the shard did not finish (\"complete\" is not true): run it again", name);
    for (int i = 0; st == RD_OK && i < cJSON_GetArraySize(cols); i++)
        if (!cJSON_IsString(cJSON_GetArrayItem(cols, i)) || i >= AN_EVAL_MAX_COLS)
            st = rd_errorf(err, RD_E_PARSE, "%s: columns: at most %d names", name, AN_EVAL_MAX_COLS);
    if (st == RD_OK && (total->valuedouble < 0 || total->valuedouble > (double)RD_MAX_DATASET_SAMPLES * 64))
        st = rd_errorf(err, RD_E_PARSE, "%s: samples_total %g", name, total->valuedouble);
    if (st == RD_OK) {
        const cJSON *r;
        size_t i = 0;
        cJSON_ArrayForEach(r, recs)
        {
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "sample");
            if (!cJSON_IsObject(r) || !cJSON_IsNumber(s) || s->valuedouble < 0 ||
                s->valuedouble >= total->valuedouble || s->valuedouble != floor(s->valuedouble)) {
                st = rd_errorf(err, RD_E_PARSE, "%s: records[%zu]: \"sample\" must be an index below samples_total",
                               name, i);
                break;
            }
            i++;
        }
    }
    if (st != RD_OK) {
        cJSON_Delete(p);
        return st;
    }
    bool ok = true;
    if (!an_json_add_str(p, "_path", name, &ok)) {
        cJSON_Delete(p);
        return rd_errorf(err, RD_E_NOMEM, "out of memory reading %s", name);
    }
    *out = p;
    return RD_OK;
}

rd_status an_eval_partial_load(const char *path, cJSON **out, rd_error *err)
{
    *out = NULL;
    char *buf = NULL;
    size_t len = 0;
    rd_status st = rd_file_read_all(path, "partial.json", AN_EVAL_MAX_PARTIAL_BYTES, &buf, &len, err);
    const char *name = path;
    char joined[4200];
    if (st != RD_OK && err && (err->code == RD_E_IO || err->code == RD_E_NOTFOUND || err->code == RD_E_PARSE)) {
        /* not a folder holding partial.json: the file itself */
        rd_error_clear(err);
        st = rd_file_read_all(NULL, path, AN_EVAL_MAX_PARTIAL_BYTES, &buf, &len, err);
        if (st != RD_OK)
            rd_error_prefix(err, "%s is neither a partial.json nor a folder holding one", path);
    } else if (st == RD_OK) {
        snprintf(joined, sizeof joined, "%s/partial.json", path);
        name = joined;
    }
    if (st != RD_OK)
        return st;
    st = an_eval_partial_parse(buf, len, name, out, err);
    free(buf);
    return st;
}

static int cmp_rec(const void *a, const void *b)
{
    double x = cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)a, "sample")->valuedouble;
    double y = cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)b, "sample")->valuedouble;
    return (x > y) - (x < y);
}

static double num(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k)->valuedouble;
}

rd_status an_eval_partials_merge(const char *const *paths, size_t n, cJSON **out, rd_error *err)
{
    *out = NULL;
    cJSON **parts = calloc(n + 1, sizeof *parts);
    if (!parts)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_status st = RD_OK;
    for (size_t i = 0; i < n && st == RD_OK; i++)
        st = an_eval_partial_load(paths[i], &parts[i], err);
    cJSON *merged = NULL;
    bool *seen = NULL;
    size_t count = 0, total = 0;
    if (st == RD_OK) {
        const cJSON *p0 = parts[0];
        const char *p0name = cJSON_GetObjectItemCaseSensitive(p0, "_path")->valuestring;
        count = (size_t)num(cJSON_GetObjectItemCaseSensitive(p0, "shard"), "count");
        total = (size_t)num(p0, "samples_total");
        if (count < 1 || count > 1000000)
            st = rd_errorf(err, RD_E_PARSE, "%s: shard count %zu", p0name, count);
        seen = calloc(count + 1, sizeof *seen);
        if (st == RD_OK && !seen)
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        for (size_t i = 0; i < n && st == RD_OK; i++) {
            const cJSON *p = parts[i];
            const char *name = cJSON_GetObjectItemCaseSensitive(p, "_path")->valuestring;
            static const char *const same[] = {"task", "run_hash", "model"};
            for (size_t k = 0; k < 3 && st == RD_OK; k++) {
                const cJSON *a = cJSON_GetObjectItemCaseSensitive(p0, same[k]),
                            *b = cJSON_GetObjectItemCaseSensitive(p, same[k]);
                if (!cJSON_IsString(a) || !cJSON_IsString(b) || strcmp(a->valuestring, b->valuestring) != 0)
                    st = rd_errorf(err, RD_E_PARSE,
                                   "%s and %s are shards of different runs: their %s differ (%s, %s): "
                                   "merge shards of one command line, model and dataset",
                                   p0name, name, same[k], cJSON_IsString(a) ? a->valuestring : "?",
                                   cJSON_IsString(b) ? b->valuestring : "?");
            }
            const cJSON *sh = cJSON_GetObjectItemCaseSensitive(p, "shard");
            size_t k = (size_t)num(sh, "index"), c = (size_t)num(sh, "count");
            if (st == RD_OK && (c != count || (size_t)num(p, "samples_total") != total))
                st = rd_errorf(err, RD_E_PARSE, "%s is shard %zu/%zu of %zu samples, %s shard of %zu of %zu samples",
                               name, k, c, (size_t)num(p, "samples_total"), p0name, count, total);
            if (st == RD_OK && k >= count)
                st = rd_errorf(err, RD_E_PARSE, "%s: shard index %zu is not below the count %zu", name, k, count);
            if (st == RD_OK && seen[k])
                st = rd_errorf(err, RD_E_PARSE, "%s: shard %zu/%zu is given twice", name, k, count);
            if (st == RD_OK)
                seen[k] = true;
        }
        for (size_t k = 0; k < count && st == RD_OK; k++)
            if (!seen[k])
                st = rd_errorf(err, RD_E_PARSE,
                               "shard %zu/%zu is missing (%zu of %zu shards given): wait for it or "
                               "run it, then merge all of them",
                               k, count, n, count);
    }
    cJSON **recs = NULL;
    size_t n_recs = 0;
    if (st == RD_OK) {
        for (size_t i = 0; i < n; i++)
            n_recs += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(parts[i], "records"));
        recs = calloc(n_recs + 1, sizeof *recs);
        if (!recs)
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        size_t j = 0;
        for (size_t i = 0; st == RD_OK && i < n; i++) {
            cJSON *r;
            cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(parts[i], "records")) recs[j++] = r;
        }
        if (st == RD_OK)
            qsort(recs, n_recs, sizeof *recs, cmp_rec);
        for (size_t i = 1; st == RD_OK && i < n_recs; i++)
            if (num(recs[i], "sample") == num(recs[i - 1], "sample"))
                st = rd_errorf(err, RD_E_PARSE, "sample %zu appears in two shards", (size_t)num(recs[i], "sample"));
        if (st == RD_OK && n_recs != total)
            st = rd_errorf(err, RD_E_PARSE, "the shards hold %zu records for %zu samples", n_recs, total);
    }
    if (st == RD_OK) {
        /* the first shard's header, every record in order, as one shard 0/1 */
        bool ok = true;
        merged = cJSON_Duplicate(parts[0], false);
        for (cJSON *it = parts[0]->child; merged && it; it = it->next) {
            if (strcmp(it->string, "records") == 0 || strcmp(it->string, "_path") == 0 ||
                strcmp(it->string, "shard") == 0 || strcmp(it->string, "shard_hash") == 0 ||
                strcmp(it->string, "sample_range") == 0)
                continue;
            an_json_add(merged, it->string, cJSON_Duplicate(it, true), &ok);
        }
        cJSON *sh = an_json_add_object(merged, "shard", &ok);
        an_json_add_num(sh, "index", 0, &ok);
        an_json_add_num(sh, "count", 1, &ok);
        cJSON *arr = an_json_add_array(merged, "records", &ok);
        for (size_t i = 0; i < n_recs; i++)
            an_json_push(arr, cJSON_Duplicate(recs[i], true), &ok);
        st = an_json_status(ok && merged, "the merged records", err);
    }
    free(recs);
    free(seen);
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(parts[i]);
    free(parts);
    if (st != RD_OK) {
        cJSON_Delete(merged);
        return st;
    }
    *out = merged;
    return RD_OK;
}

int an_eval_report(an_cmd_ctx *ctx, const cJSON *partial, const char *out_dir, bool json, const char *json_sep,
                   size_t show)
{
    rd_error err = {0};
    const an_eval_task *task = an_eval_task_find(cJSON_GetObjectItemCaseSensitive(partial, "task")->valuestring);
    const cJSON *recs_arr = cJSON_GetObjectItemCaseSensitive(partial, "records");
    size_t n = (size_t)cJSON_GetArraySize(recs_arr);
    cJSON **recs = calloc(n + 1, sizeof *recs);
    cJSON *report = cJSON_CreateObject();
    rd_status st = RD_OK;
    if (!recs || !report)
        st = rd_errorf(&err, RD_E_NOMEM, "out of memory");
    size_t i = 0;
    cJSON *r;
    cJSON_ArrayForEach(r, recs_arr)
    {
        if (recs)
            recs[i++] = r;
    }
    if (st == RD_OK) {
        bool ok = true;
        qsort(recs, n, sizeof *recs, cmp_rec);
        static const char *const copied[] = {"task", "model", "dynamic_input", "dataset"};
        for (size_t k = 0; k < 4; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(partial, copied[k]);
            if (v)
                an_json_add(report, copied[k], cJSON_Duplicate(v, true), &ok);
        }
        an_json_add_num(report, "samples", (double)n, &ok);
        an_json_add(report, "columns", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(partial, "columns"), true),
                    &ok);
        st = an_json_status(ok, "the report", &err);
        if (st == RD_OK)
            st = task->report(partial, recs, n, show, report, &err);
    }
    if (st == RD_OK && out_dir) {
        char path[4200];
        snprintf(path, sizeof path, "%s/report.json", out_dir);
        st = an_json_save(path, report, &err);
    }
    int rc = AN_EXIT_OK;
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
    } else if (json) {
        if (json_sep)
            fputs(json_sep, ctx->out);
        rc = an_emit_json(ctx, report, true);
        report = NULL; /* an_emit_json deleted it */
    } else {
        task->print(ctx->out, report, show);
    }
    cJSON_Delete(report);
    free(recs);
    return rc;
}

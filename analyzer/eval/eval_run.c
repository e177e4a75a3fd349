/*
 * eval_run.c: one evaluation run: the samples of the shard through every column, one record per sample,
 * partial.json (skipped when an identical finished one is already there: resume), and for a run that is
 * the whole set, the report. Progress goes to stderr.
 */
#include "json_out.h"
#include "eval_task.h"
#include "progress.h"

#include <stdlib.h>
#include <string.h>

/* Sample k as RKNN reads its dataset line (images resized, mean/std); no geometry. */
rd_status an_eval_default_input(an_eval_ctx *c, size_t k, rd_tensor *in, an_eval_geom *g, rd_error *err)
{
    memset(g, 0, sizeof *g);
    size_t n = rd_model_input_count(c->m);
    for (size_t i = 0; i < n; i++) {
        rd_status st = an_quant_prepare_sample(c->q, c->m, &c->ds, k, i, NULL, &in[i], err);
        if (st != RD_OK) {
            for (size_t j = 0; j < i; j++)
                rd_tensor_fini(&in[j]);
            return rd_error_prefix(err, "%s line %d", c->ds.path, c->ds.lines[k]);
        }
    }
    return RD_OK;
}

rd_status an_eval_input(an_eval_ctx *c, size_t k, rd_tensor *in, an_eval_geom *g, rd_error *err)
{
    return c->task->input ? c->task->input(c, k, in, g, err) : an_eval_default_input(c, k, in, g, err);
}

/* Same run, same shard, finished: nothing to do. */
static bool already_done(const char *out_dir, const cJSON *header)
{
    cJSON *old = NULL;
    rd_error ignored = {0};
    if (an_eval_partial_load(out_dir, &old, &ignored) != RD_OK)
        return false;
    static const char *const keys[] = {"run_hash", "shard_hash"};
    bool same = true;
    for (size_t i = 0; i < 2 && same; i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(old, keys[i]),
                    *b = cJSON_GetObjectItemCaseSensitive(header, keys[i]);
        same = cJSON_IsString(a) && cJSON_IsString(b) && strcmp(a->valuestring, b->valuestring) == 0;
    }
    const cJSON *sa = cJSON_GetObjectItemCaseSensitive(old, "shard"),
                *sb = cJSON_GetObjectItemCaseSensitive(header, "shard");
    same = same && cJSON_Compare(sa, sb, true);
    cJSON_Delete(old);
    return same;
}

static rd_status run_sample(an_eval_ctx *c, size_t k, cJSON *rec, rd_error *err)
{
    rd_tensor in[RD_MAX_MODEL_INPUTS];
    an_eval_geom g;
    size_t n_in = rd_model_input_count(c->m);
    rd_status st = an_eval_input(c, k, in, &g, err);
    if (st != RD_OK)
        return st;
    rd_tensor *outs = calloc(c->n_cols * c->n_outputs + 1, sizeof *outs);
    rd_tensor *per_col[AN_EVAL_MAX_COLS];
    if (!outs)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t done = 0;
    const rd_run_options ro = {.pool = c->q->pool, .buffers = c->kept}; /* the command's threads (--threads) */
    for (size_t j = 0; j < c->n_cols && st == RD_OK; j++) {
        per_col[j] = outs + j * c->n_outputs;
        st = c->cols[j].sim ? rd_sim_run(c->cols[j].sim, in, n_in, &ro, per_col[j], c->n_outputs, err)
                            : rd_model_run(c->m, in, n_in, &ro, per_col[j], c->n_outputs, err);
        if (st != RD_OK)
            rd_error_prefix(err, "sample %zu (%s)", k, c->cols[j].name);
        else
            done = j + 1;
    }
    for (size_t i = 0; i < n_in; i++)
        rd_tensor_fini(&in[i]);
    if (st == RD_OK) {
        bool ok = true;
        an_json_add_num(rec, "sample", (double)k, &ok);
        if (c->ds.n_samples)
            an_json_add_str(rec, "input", rd_dataset_path(&c->ds, k, 0), &ok);
        st = an_json_status(ok, "the sample's record", err);
    }
    if (st == RD_OK)
        st = c->task->sample(c, k, &g, per_col, rec, err);
    for (size_t j = 0; j < done * c->n_outputs; j++)
        rd_tensor_fini(&outs[j]);
    free(outs);
    return st;
}

int an_eval_execute(an_cmd_ctx *ctx, an_eval_ctx *c, const char *dynamic_name, const char *json_sep)
{
    rd_error err = {0};
    const an_eval_opts *o = c->o;
    cJSON *partial = NULL, *parsed = NULL;
    char *text = NULL;
    int rc = AN_EXIT_OK;
    rd_status st = an_eval_partial_header(c, dynamic_name, &partial, &err);
    const size_t lo = c->n * (size_t)o->shard_k / (size_t)o->shard_n;
    const size_t hi = c->n * (size_t)(o->shard_k + 1) / (size_t)o->shard_n;
    bool skip = st == RD_OK && o->out_dir && already_done(o->out_dir, partial);
    if (skip) {
        fprintf(ctx->errs, "shard %ld/%ld: %s/partial.json is finished and its inputs are unchanged: skipped\n",
                o->shard_k, o->shard_n, o->out_dir);
        if (o->shard_n == 1) {
            cJSON_Delete(partial);
            partial = NULL;
            st = an_eval_partial_load(o->out_dir, &parsed, &err);
            if (st == RD_OK)
                rc = an_eval_report(ctx, parsed, o->out_dir, o->json, json_sep, (size_t)o->show);
            else
                rc = an_fail(ctx, &err);
        }
        goto out;
    }
    bool ok = true;
    cJSON *recs = st == RD_OK ? an_json_add_array(partial, "records", &ok) : NULL;
    if (st == RD_OK && !recs)
        st = rd_errorf(&err, RD_E_NOMEM, "out of memory");
    if (st == RD_OK)
        st = rd_run_buffers_create(&c->kept, &err);
    an_progress bar;
    an_progress_init(&bar, ctx->errs, ctx->color, "evaluating");
    for (size_t k = lo; k < hi && st == RD_OK; k++) {
        cJSON *rec = an_json_push_object(recs, &ok);
        if (!rec) {
            st = rd_errorf(&err, RD_E_NOMEM, "out of memory (the records)");
            break;
        }
        st = run_sample(c, k, rec, &err);
        an_progress_update(&bar, k + 1 - lo, hi - lo);
    }
    an_progress_done(&bar);
    rd_run_buffers_destroy(c->kept);
    c->kept = NULL;
    if (st == RD_OK && c->task->finish)
        st = c->task->finish(c, partial, &err);
    if (st == RD_OK && !an_json_add_bool(partial, "complete", true, &ok))
        st = rd_errorf(&err, RD_E_NOMEM, "out of memory (the partial result)");
    if (st == RD_OK && o->out_dir) {
        char path[4200];
        snprintf(path, sizeof path, "%s/partial.json", o->out_dir);
        st = rd_dir_make(o->out_dir, RD_DIR_PARENTS, &err);
        if (st == RD_OK)
            st = an_json_save(path, partial, &err);
    }
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    if (o->shard_n > 1) {
        fprintf(ctx->out,
                "shard %ld/%ld: samples %zu..%zu of %zu evaluated (%s); merge every shard with "
                "rknn-diag merge DIR... -o OUT\n",
                o->shard_k, o->shard_n, lo, hi ? hi - 1 : 0, c->n, o->out_dir ? o->out_dir : "no -o: nothing written");
        goto out;
    }
    /* the report from the records as merge reads them: printed with exact numbers and parsed back */
    text = cJSON_PrintUnformatted(partial);
    parsed = text ? cJSON_Parse(text) : NULL;
    if (!parsed) {
        st = rd_errorf(&err, RD_E_NOMEM, "out of memory");
        rc = an_fail(ctx, &err);
        goto out;
    }
    rc = an_eval_report(ctx, parsed, o->out_dir, o->json, json_sep, (size_t)o->show);
out:
    free(text);
    cJSON_Delete(partial);
    cJSON_Delete(parsed);
    return rc;
}

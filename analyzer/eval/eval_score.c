/*
 * eval_score.c: `eval --score-cmd CMD` (task "score"): any other task, scored by an outside command
 * (score_cmd.h): each column's outputs of every sample go to OUT/outputs/<column>/ with index.json, then
 * CMD runs once per column and prints its number; the report gives each column's score and its change
 * against fp32.
 */
#include "eval_task.h"
#include "score_cmd.h"
#include "term_text.h"

#include <stdlib.h>
#include <string.h>

typedef struct score_state {
    an_outputs_dir *dirs[AN_EVAL_MAX_COLS];
    char paths[AN_EVAL_MAX_COLS][4200];
} score_state;

static rd_status score_open(an_eval_ctx *c, rd_error *err)
{
    score_state *s = calloc(1, sizeof *s);
    if (!s)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    c->state = s;
    return rd_dir_make(c->o->out_dir, RD_DIR_PARENTS, err);
}

/* The columns' folders, made at the first sample (the columns exist only after open). */
static rd_status make_dirs(an_eval_ctx *c, score_state *s, rd_error *err)
{
    char base[4200];
    snprintf(base, sizeof base, "%s/outputs", c->o->out_dir);
    rd_status st = rd_dir_make(base, RD_DIR_OWN, err);
    for (size_t j = 0; j < c->n_cols && st == RD_OK; j++) {
        snprintf(s->paths[j], sizeof s->paths[j], "%s/%s", base, c->cols[j].name);
        st = rd_dir_make(s->paths[j], RD_DIR_OWN, err);
        if (st == RD_OK)
            st = an_outputs_dir_create(s->paths[j], c->cols[j].name, c->output_names, c->n_outputs, &s->dirs[j], err);
    }
    return st;
}

static void score_close(an_eval_ctx *c)
{
    score_state *s = c->state;
    if (!s)
        return;
    for (size_t j = 0; j < AN_EVAL_MAX_COLS; j++)
        an_outputs_dir_destroy(s->dirs[j]);
    free(s);
    c->state = NULL;
}

static rd_status score_sample(an_eval_ctx *c, size_t k, const an_eval_geom *g, rd_tensor *const *outs, cJSON *rec,
                              rd_error *err)
{
    (void)g;
    (void)rec;
    score_state *s = c->state;
    const char *input = c->ds.n_samples ? rd_dataset_path(&c->ds, k, 0) : "";
    if (!s->dirs[0]) {
        rd_status st = make_dirs(c, s, err);
        if (st != RD_OK)
            return st;
    }
    for (size_t j = 0; j < c->n_cols; j++) {
        rd_status st = an_outputs_dir_add(s->dirs[j], k, &input, 1, outs[j], err);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

static rd_status score_finish(an_eval_ctx *c, cJSON *partial, rd_error *err)
{
    score_state *s = c->state;
    cJSON *scores = cJSON_AddObjectToObject(partial, "scores");
    cJSON_AddStringToObject(partial, "score_cmd", c->o->score_cmd);
    if (!s->dirs[0])
        return rd_errorf(err, RD_E_INVAL, "no sample was evaluated: nothing to score");
    for (size_t j = 0; j < c->n_cols; j++) {
        rd_status st = an_outputs_dir_finish(s->dirs[j], err);
        double v = 0;
        if (st == RD_OK) {
            fprintf(c->errs, "scoring %s: %s %s\n", c->cols[j].name, c->o->score_cmd, s->paths[j]);
            st = an_score_cmd_run(c->o->score_cmd, s->paths[j], c->o->score_timeout, c->errs, &v, err);
        }
        if (st == RD_OK)
            st = an_json_add_exact(scores, c->cols[j].name, v, err);
        if (st != RD_OK)
            return rd_error_prefix(err, "column %s", c->cols[j].name);
    }
    return RD_OK;
}

static rd_status score_report(const cJSON *partial, cJSON *const *recs, size_t n, size_t show, cJSON *report,
                              rd_error *err)
{
    (void)recs;
    (void)n;
    (void)show;
    const char *cols[AN_EVAL_MAX_COLS];
    size_t nc = an_eval_columns(partial, cols);
    const cJSON *scores = cJSON_GetObjectItemCaseSensitive(partial, "scores");
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(partial, "score_cmd");
    if (cJSON_IsString(cmd))
        cJSON_AddStringToObject(report, "score_cmd", cmd->valuestring);
    cJSON *m = cJSON_AddObjectToObject(report, "metrics");
    double first = 0;
    for (size_t j = 0; j < nc; j++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(scores, cols[j]);
        if (!cJSON_IsNumber(v))
            return rd_errorf(err, RD_E_PARSE, "partial.json: no score for column %s", cols[j]);
        if (j == 0)
            first = v->valuedouble;
        cJSON *o = cJSON_AddObjectToObject(m, cols[j]);
        cJSON_AddNumberToObject(o, "score", v->valuedouble);
        cJSON_AddNumberToObject(o, "drop", first - v->valuedouble);
    }
    return RD_OK;
}

static void score_print(FILE *out, const cJSON *r, size_t show)
{
    (void)show;
    const char *cols[AN_EVAL_MAX_COLS];
    size_t nc = an_eval_columns(r, cols);
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(r, "score_cmd");
    an_eval_print_model(out, r);
    fprintf(out, ": %.0f samples scored by ", an_json_num(r, "samples"));
    an_put_name(out, cJSON_IsString(cmd) ? cmd->valuestring : "?");
    fprintf(out, "\n\n%-14s %14s %14s\n", "precision", "score", "drop");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
    for (size_t j = 0; j < nc; j++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(m, cols[j]);
        fprintf(out, "%-14s %14.6g", cols[j], cJSON_GetObjectItemCaseSensitive(o, "score")->valuedouble);
        if (j == 0)
            fprintf(out, " %14s\n", "-");
        else
            fprintf(out, " %+14.6g\n", cJSON_GetObjectItemCaseSensitive(o, "drop")->valuedouble);
    }
}

const an_eval_task an_eval_score = {
    .name = "score",
    .sample = score_sample,
    .open = score_open,
    .finish = score_finish,
    .close = score_close,
    .report = score_report,
    .print = score_print,
};

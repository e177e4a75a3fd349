/*
 * hybrid_score.c: the external scorer of `hybrid search --score-cmd CMD` (docs/hybrid.md, "Objectives"),
 * on the one scorer contract of score_cmd.h (docs/score-cmd.md).
 *
 * The golden (FP32) outputs of the analysed samples are written once to `candidates/golden/` of the search's
 * output folder, an outputs folder of its own (precision "fp32"). Every measured float16 set gets a folder
 * `candidates/NNNN/` (precision "hybrid") whose index.json adds "candidate" (its number), "float16" (the set)
 * and "reference": "../golden" (the golden file of s<k>_o<j>.npy is ../golden/s<k>_o<j>.npy). A scorer that
 * fails is an error naming the candidate; its folder is then kept for the user to look at, otherwise removed (also
 * when the measurement or the folder fails before the scorer has run, or memory runs out).
 *
 * Thread safety: an_hyb_scorer_put is called by the measuring threads, each for its own sample;
 * begin and finish run on the caller's thread.
 */
#include "hybrid.h"
#include "score_cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct an_hyb_scorer {
    char *cmd; /* as given */
    double timeout_s;
    FILE *errs;          /* the command's stderr goes here */
    char work_dir[4096]; /* <out>/candidates */
    char **out_names;    /* graph outputs */
    size_t n_samples, n_out, n_in;
    char **inputs;       /* n_samples * n_in input files (entries may be NULL) */
    size_t candidate;    /* number of the set being measured (1, 2, ...) */
    char dir[4200];      /* its folder */
    an_outputs_dir *out; /* its outputs */
    char who[400];       /* "candidate 7 (3 float16 tensors: a, b, c)" */
    size_t calls;
    double seconds; /* spent in the command */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void an_hyb_scorer_destroy(an_hyb_scorer *sc)
{
    if (!sc)
        return;
    an_outputs_dir_destroy(sc->out);
    for (size_t i = 0; sc->out_names && i < sc->n_out; i++)
        free(sc->out_names[i]);
    free(sc->out_names);
    for (size_t i = 0; sc->inputs && i < sc->n_samples * sc->n_in; i++)
        free(sc->inputs[i]);
    free(sc->inputs);
    free(sc->cmd);
    free(sc);
}

/* A new outputs folder in dir (emptied first). */
static rd_status open_dir(an_hyb_scorer *sc, const char *dir, const char *precision, an_outputs_dir **out,
                          rd_error *err)
{
    rd_status st = rd_dir_remove_tree(dir, err);
    if (st == RD_OK)
        st = rd_dir_make(dir, RD_DIR_OWN, err);
    return st == RD_OK ? an_outputs_dir_create(dir, precision, (const char *const *)sc->out_names, sc->n_out, out, err)
                       : st;
}

rd_status an_hyb_scorer_create(const an_hyb_scorer_opts *o, an_hyb_scorer **out, rd_error *err)
{
    *out = NULL;
    an_hyb_scorer *sc = calloc(1, sizeof *sc);
    if (!sc)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    sc->n_samples = o->n_samples;
    sc->n_out = rd_model_output_count(o->model);
    sc->n_in = o->n_in;
    sc->timeout_s = o->timeout_s;
    sc->errs = o->errs;
    snprintf(sc->work_dir, sizeof sc->work_dir, "%s", o->work_dir);
    sc->cmd = strdup(o->cmd);
    sc->out_names = calloc(sc->n_out + 1, sizeof *sc->out_names);
    sc->inputs = calloc(sc->n_samples * sc->n_in + 1, sizeof *sc->inputs);
    rd_status st = sc->cmd && sc->out_names && sc->inputs ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < sc->n_out && st == RD_OK; i++) {
        rd_value_info vi;
        rd_model_value(o->model, (size_t)rd_model_output(o->model, i), &vi);
        if (!(sc->out_names[i] = strdup(vi.name)))
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; o->inputs && i < sc->n_samples * sc->n_in && st == RD_OK; i++)
        if (o->inputs[i] && !(sc->inputs[i] = strdup(o->inputs[i])))
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    /* a fresh candidates/ folder with the golden outputs, which every candidate's index.json points at */
    char golden[4200];
    snprintf(golden, sizeof golden, "%s/golden", sc->work_dir);
    an_outputs_dir *g = NULL;
    if (st == RD_OK)
        st = rd_dir_remove_tree(sc->work_dir, err);
    if (st == RD_OK)
        st = rd_dir_make(sc->work_dir, RD_DIR_OWN, err);
    if (st == RD_OK)
        st = open_dir(sc, golden, "fp32", &g, err);
    for (size_t k = 0; k < sc->n_samples && st == RD_OK; k++)
        st = an_outputs_dir_add(g, k, (const char *const *)&sc->inputs[k * sc->n_in], sc->n_in,
                                &o->golden[k * sc->n_out], err);
    if (st == RD_OK)
        st = an_outputs_dir_finish(g, err);
    an_outputs_dir_destroy(g);
    if (st != RD_OK) {
        an_hyb_scorer_destroy(sc);
        return rd_error_prefix(err, "--score-cmd");
    }
    *out = sc;
    return RD_OK;
}

/* "candidate 7 (3 float16 tensors: a, b, c)" */
static void describe(an_hyb_scorer *sc, const char *const *names, size_t n)
{
    char *buf = sc->who;
    size_t len = sizeof sc->who;
    int w = snprintf(buf, len, "candidate %zu (%zu float16 tensor%s", sc->candidate, n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n && w > 0 && (size_t)w < len; i++) {
        if (i == 4 && n > 5) {
            w += snprintf(buf + w, len - (size_t)w, ", ... %.60s", names[n - 1]);
            break;
        }
        w += snprintf(buf + w, len - (size_t)w, "%s%.60s", i ? ", " : ": ", names[i]);
    }
    if (w > 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, ")");
}

rd_status an_hyb_scorer_begin(an_hyb_scorer *sc, const char *const *names, size_t n, rd_error *err)
{
    an_outputs_dir_destroy(sc->out);
    sc->out = NULL;
    sc->candidate++;
    describe(sc, names, n);
    snprintf(sc->dir, sizeof sc->dir, "%s/%04zu", sc->work_dir, sc->candidate);
    rd_status st = open_dir(sc, sc->dir, "hybrid", &sc->out, err);
    cJSON *set = st == RD_OK ? cJSON_CreateArray() : NULL;
    for (size_t i = 0; set && i < n; i++)
        cJSON_AddItemToArray(set, cJSON_CreateString(names[i]));
    if (st == RD_OK && (!set || cJSON_GetArraySize(set) != (int)n)) {
        cJSON_Delete(set);
        set = NULL;
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    if (st == RD_OK)
        st = an_outputs_dir_note(sc->out, "candidate", cJSON_CreateNumber((double)sc->candidate), err);
    if (st == RD_OK) {
        st = an_outputs_dir_note(sc->out, "float16", set, err); /* taken over, even on failure */
        set = NULL;
    }
    cJSON_Delete(set);
    if (st == RD_OK)
        st = an_outputs_dir_note(sc->out, "reference", cJSON_CreateString("../golden"), err);
    if (st != RD_OK)
        an_hyb_scorer_abandon(sc);
    return st;
}

/* File k of a candidate's folder: its .npy files, then index.json. */
static void candidate_file(void *user, size_t k, char *buf, size_t len)
{
    const an_hyb_scorer *sc = user;
    if (k == sc->n_samples * sc->n_out)
        snprintf(buf, len, "index.json");
    else
        snprintf(buf, len, "s%06zu_o%zu.npy", k / sc->n_out, k % sc->n_out);
}

/* Removes the candidate's folder by the names it was written with, allocating nothing (it runs when memory ran out
   too); only what the scorer added there is listed. */
static rd_status remove_candidate(an_hyb_scorer *sc, rd_error *err)
{
    return rd_dir_remove_named(sc->dir, sc->n_samples * sc->n_out + 1, candidate_file, sc, err);
}

void an_hyb_scorer_abandon(an_hyb_scorer *sc)
{
    an_outputs_dir_destroy(sc->out);
    sc->out = NULL;
    remove_candidate(sc, NULL);
}

rd_status an_hyb_scorer_put(an_hyb_scorer *sc, size_t sample, const rd_tensor *outs, size_t n_out, rd_error *err)
{
    if (sample >= sc->n_samples || n_out != sc->n_out || !sc->out)
        return rd_errorf(err, RD_E_INVAL, "scorer: sample %zu with %zu outputs (expected < %zu, %zu)", sample, n_out,
                         sc->n_samples, sc->n_out);
    return an_outputs_dir_add(sc->out, sample, (const char *const *)&sc->inputs[sample * sc->n_in], sc->n_in, outs,
                              err);
}

rd_status an_hyb_scorer_finish(an_hyb_scorer *sc, double *score, rd_error *err)
{
    *score = NAN;
    if (!sc->out)
        return rd_errorf(err, RD_E_INVAL, "scorer: no candidate begun");
    rd_status st = an_outputs_dir_finish(sc->out, err);
    double t0 = now_s();
    if (st == RD_OK)
        st = an_score_cmd_run(sc->cmd, sc->dir, sc->timeout_s, sc->errs, score, err);
    sc->seconds += now_s() - t0;
    sc->calls++;
    if (st == RD_E_NOMEM) { /* not the scorer's failure: nothing of the candidate to look at */
        an_hyb_scorer_abandon(sc);
        return st;
    }
    if (st != RD_OK)
        return rd_error_prefix(err, "%s, whose outputs stay in %s", sc->who, sc->dir);
    return remove_candidate(sc, err);
}

void an_hyb_scorer_stats(const an_hyb_scorer *sc, size_t *calls, double *seconds)
{
    *calls = sc ? sc->calls : 0;
    *seconds = sc ? sc->seconds : 0;
}

/*
 * hybrid_cli_search.c: `rknn-diag hybrid search`: runs the block search (hybrid_search.c), prints each step
 * as it is measured, and writes OUT.quantization.cfg, the accuracy report of that config and search.json
 * (the path and the result, also when the search fails half-way) in OUT's folder. docs/hybrid.md.
 */
#include "array_grow.h"
#include "json_out.h"
#include "accuracy.h"
#include "hybrid_cli.h"
#include "qcfg_build.h"
#include "tensor_dump.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What the step callback needs, and the steps kept for search.json. */
typedef struct printer {
    an_cmd_ctx *ctx;
    const hyb_args *a;
    bool means; /* several samples: print the mean cosine too */
    bool score; /* --score-cmd: print its number */
    an_hyb_step *steps;
    size_t n, cap;
    bool failed; /* out of memory for the steps */
} printer;

static void print_header(const printer *p)
{
    FILE *f = p->ctx->out;
    fprintf(f, "%-7s %-48s %6s %14s %9s", "step", "tensor / window", "float", p->a->latency ? "ms added" : "MMACs fp16",
            "out_cos");
    if (p->means)
        fprintf(f, " %9s", "mean_cos");
    fprintf(f, " %9s", "sqnr_dB");
    if (p->score)
        fprintf(f, " %12s", "score");
    fputc('\n', f);
}

static void print_step(const printer *p, const an_hyb_step *s)
{
    FILE *f = p->ctx->out;
    fprintf(f, "%-7s %-48s %6zu %14.6g %9.6f", s->phase, RD_TEXT_SHOWN(s->what), s->n_float,
            p->a->latency ? s->cost : s->cost / 1e6, s->score.cos);
    if (p->means)
        fprintf(f, " %9.6f", s->score.cos_mean);
    fprintf(f, " %9.2f", s->score.sqnr_db);
    if (p->score)
        fprintf(f, " %12.6g", s->score.score);
    fprintf(f, " %s%s\n", s->meets ? "meets" : "", s->cached ? (s->meets ? " (cached)" : "(cached)") : "");
    fflush(f); /* the path so far stays visible when a later step fails or hangs */
}

static void on_step(void *user, const an_hyb_step *s)
{
    printer *p = user;
    print_step(p, s);
    rd_error err;
    if (an_array_grow(&p->steps, &p->cap, p->n, sizeof *p->steps, 64, &err) != RD_OK) {
        p->failed = true;
        return;
    }
    p->steps[p->n++] = *s;
}

static cJSON *num(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v)
           : isnan(v)  ? cJSON_CreateNull()
                       : cJSON_CreateString(v > 0 ? "inf" : "-inf");
}

static cJSON *score_json(const an_hyb_score *s, bool *ok)
{
    cJSON *o = cJSON_CreateObject();
    an_json_add(o, "cos", num(s->cos), ok);
    an_json_add(o, "cos_mean", num(s->cos_mean), ok);
    an_json_add(o, "sqnr_db", num(s->sqnr_db), ok);
    an_json_add(o, "sqnr_db_mean", num(s->sqnr_mean), ok);
    an_json_add(o, "score", num(s->score), ok);
    return o;
}

/* search.json: the target, every step, and the result or the error (docs/hybrid.md). */
static rd_status write_search_json(const char *dir, const hyb_args *a, const printer *p, const hyb_run *r,
                                   const an_hyb_search_result *res, const char *error, rd_error *err)
{
    bool ok = true;
    cJSON *root = cJSON_CreateObject();
    an_json_add_str(root, "status",
                    error              ? "failed"
                    : res->unreachable ? "unreachable"
                    : res->reached     ? "reached"
                                       : "not_reached",
                    &ok);
    an_json_add(root, "error", error ? cJSON_CreateString(error) : cJSON_CreateNull(), &ok);
    an_json_add_str(root, "objective", an_hyb_objective_name(a->objective), &ok);
    an_json_add_str(root, "over", a->over == AN_HYB_OVER_MEAN ? "mean" : "worst", &ok);
    cJSON *target = an_json_add_object(root, "target", &ok);
    an_json_add(target, "cos", num(a->target_cos), &ok);
    an_json_add(target, "sqnr_db", num(a->target_sqnr), &ok);
    an_json_add(target, "score", num(a->target_score), &ok);
    an_json_add_str(root, "cost_unit", a->latency ? "ms added" : "MACs", &ok);
    an_json_add_num(root, "samples", (double)r->n_samples, &ok);
    cJSON *steps = an_json_add_array(root, "steps", &ok);
    for (size_t i = 0; i < p->n; i++) {
        const an_hyb_step *s = &p->steps[i];
        cJSON *o = an_json_push_object(steps, &ok);
        an_json_add_str(o, "phase", s->phase, &ok);
        an_json_add_str(o, "what", s->what, &ok);
        an_json_add_num(o, "float16", (double)s->n_float, &ok);
        an_json_add(o, "cost", num(s->cost), &ok);
        an_json_add(o, "score", score_json(&s->score, &ok), &ok);
        an_json_add_bool(o, "meets", s->meets, &ok);
        an_json_add_bool(o, "kept", s->kept, &ok);
        an_json_add_bool(o, "cached", s->cached, &ok);
    }
    if (!error && !res->unreachable) {
        cJSON *result = cJSON_CreateObject();
        an_json_add_bool(result, "reached", res->reached, &ok);
        cJSON *set = an_json_add_array(result, "float16", &ok);
        double cost = 0;
        for (size_t i = 0; i < res->n; i++) {
            an_json_push(set, cJSON_CreateString(r->cands[res->set[i]].name), &ok);
            cost += r->cands[res->set[i]].cost;
        }
        an_json_add(result, "cost", num(cost), &ok);
        an_json_add(result, "score", score_json(&res->score, &ok), &ok);
        an_json_add(root, "result", result, &ok);
    }
    if (!error)
        an_json_add(root, "all_float16", score_json(&res->full, &ok), &ok);
    if (!ok) {
        cJSON_Delete(root);
        return rd_errorf(err, RD_E_NOMEM, "out of memory (search.json)");
    }
    return an_json_save_in(root, dir, "search.json", err);
}

/* Writes the cfg of the chosen float16 set and the accuracy report beside it. */
static rd_status write_outputs(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, const char *dir, const size_t *set, size_t n,
                               rd_error *err)
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
    if (st == RD_OK) /* the mapping beside the report, and the fidelity notes in it */
        st = an_quant_built_outputs(&a->cmd.q, r->s, dir, NULL, &rep, err);
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
        fprintf(ctx->errs,
                "wrote %s and the accuracy report of that config (%s/error_analysis.txt, report.json, "
                "report.html, search.json)\n",
                a->out_path, dir);
    return st;
}

/* The input files of each analysed sample, for the scorer's index.json (NULL entries where unknown). */
static rd_status sample_inputs(const hyb_args *a, const hyb_run *r, rd_dataset *ds, const char ***out, rd_error *err)
{
    *out = calloc(r->n_samples * r->n_in + 1, sizeof **out);
    if (!*out)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (a->cmd.n_inputs) {
        for (size_t i = 0; i < r->n_in && i < a->cmd.n_inputs; i++)
            (*out)[i] = a->cmd.inputs[i];
        return RD_OK;
    }
    if (!a->cmd.q.cfg.dataset)
        return RD_OK; /* the samples came another way: index.json says null */
    /* the samples were read from this list: failing to read it again (memory, a file changed) is an error */
    rd_status st = rd_dataset_load(a->cmd.q.cfg.dataset, r->n_in, ds, err);
    if (st != RD_OK)
        return st;
    for (size_t k = 0; k < r->n_samples && k < ds->n_samples; k++)
        for (size_t i = 0; i < r->n_in; i++)
            (*out)[k * r->n_in + i] = rd_dataset_path(ds, k, i);
    return RD_OK;
}

static rd_status make_scorer(const hyb_args *a, hyb_run *r, const char *dir, FILE *errs, an_hyb_scorer **out,
                             rd_error *err)
{
    rd_dataset ds;
    memset(&ds, 0, sizeof ds);
    const char **inputs = NULL;
    char work[4200];
    snprintf(work, sizeof work, "%s/candidates", dir);
    rd_status st = sample_inputs(a, r, &ds, &inputs, err);
    an_hyb_scorer_opts so = {.cmd = a->cmd.score_cmd,
                             .timeout_s = a->cmd.score_timeout,
                             .work_dir = work,
                             .model = r->m,
                             .golden = r->hc.golden,
                             .n_samples = r->n_samples,
                             .n_in = r->n_in,
                             .inputs = inputs,
                             .errs = errs};
    if (st == RD_OK)
        st = an_hyb_scorer_create(&so, out, err);
    free(inputs);
    rd_dataset_fini(&ds);
    return st;
}

static void print_result(an_cmd_ctx *ctx, const hyb_args *a, const hyb_run *r, const an_hyb_score *base,
                         const an_hyb_search_result *res)
{
    double model_macs = 0, cost = 0;
    for (size_t k = 0; k < r->n_cands; k++)
        model_macs += r->cands[k].macs;
    for (size_t i = 0; i < res->n; i++)
        cost += r->cands[res->set[i]].cost;
    fprintf(ctx->out,
            "\nresult: %zu float16 tensor%s, output cosine %.5f, SQNR %.2f dB (int8: %.5f, all float16: %.5f)\n",
            res->n, res->n == 1 ? "" : "s", res->score.cos, res->score.sqnr_db, base->cos, res->full.cos);
    if (r->n_samples > 1)
        fprintf(ctx->out,
                "over the %zu samples: worst cosine %.5f, mean %.5f; worst SQNR %.2f dB, mean %.2f dB (the "
                "target holds for the %s)\n",
                r->n_samples, res->score.cos, res->score.cos_mean, res->score.sqnr_db, res->score.sqnr_mean,
                a->over == AN_HYB_OVER_MEAN ? "mean" : "worst sample");
    if (a->cmd.score_cmd)
        fprintf(ctx->out, "score: %.6g (target %.6g; int8 %.6g, all float16 %.6g)\n", res->score.score, a->target_score,
                base->score, res->full.score);
    if (a->latency) {
        fprintf(ctx->out, "cost: %.4g ms added (latency table%s", cost, a->n_latency > 1 ? "s" : "");
        for (size_t i = 0; i < a->n_latency; i++)
            fprintf(ctx->out, "%s%s", i ? ", " : " ", a->latency_paths[i]);
        size_t estimated = 0;
        for (size_t i = 0; i < res->n; i++)
            estimated += r->cands[res->set[i]].cost_estimated;
        if (estimated)
            fprintf(ctx->out, "; %zu of these costs estimated", estimated);
        fprintf(ctx->out, ")\n");
    } else {
        fprintf(ctx->out, "cost: %.4g MMACs in float16 (%.1f%% of the int8 layers' MACs)\n", cost / 1e6,
                model_macs > 0 ? 100.0 * cost / model_macs : 0.0);
    }
    for (size_t i = 0; i < res->n; i++)
        fprintf(ctx->out, "  float16: %s%s\n", RD_TEXT_SHOWN(r->cands[res->set[i]].name),
                r->cands[res->set[i]].cost_estimated ? " (cost estimated: timed one way only)" : "");
}

static void print_timing(an_cmd_ctx *ctx, const hyb_run *r, const an_hyb_search_result *res, const an_hyb_scorer *sc,
                         double t0)
{
    an_hyb_reuse ru;
    an_hyb_reuse_get(&r->hc, &ru);
    fprintf(ctx->out,
            "search: %zu sets measured (%zu more from the cache), %zu simulator runs over %zu samples in "
            "%.1f s, %.1f s in all",
            res->measurements, res->cached, r->hc.n_runs, r->n_samples, r->hc.run_seconds, an_hyb_now() - t0);
    if (r->hc.reuse_bytes && ru.nodes_full)
        fprintf(ctx->out, " (prefix reuse: %llu of %llu nodes computed, %.1f MB kept)",
                (unsigned long long)ru.nodes_computed, (unsigned long long)ru.nodes_full, (double)ru.bytes / 1e6);
    size_t calls;
    double secs;
    an_hyb_scorer_stats(sc, &calls, &secs);
    if (calls)
        fprintf(ctx->out, "; --score-cmd ran %zu times, %.1f s", calls, secs);
    fputc('\n', ctx->out);
}

int an_hyb_cli_search(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, const an_hyb_score *base_in, double t0, rd_error *err)
{
    /* OUT's folder holds the cfg, the reports, search.json and the scorer's candidates */
    char dir[4096];
    const char *slash = strrchr(a->out_path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - a->out_path), a->out_path);
    else
        snprintf(dir, sizeof dir, ".");
    printer p = {.ctx = ctx, .a = a, .means = r->n_samples > 1, .score = a->cmd.score_cmd != NULL};
    an_hyb_search_result res;
    memset(&res, 0, sizeof res);
    an_hyb_scorer *sc = NULL;
    an_hyb_score base = *base_in;
    rd_status st = an_mkdirs(dir, err);
    if (st == RD_OK && a->cmd.score_cmd) {
        st = make_scorer(a, r, dir, ctx->errs, &sc, err);
        r->hc.scorer = sc;
        if (st == RD_OK) /* the all-int8 score: the baseline was measured before the scorer existed */
            st = an_hyb_measure(&r->hc, NULL, 0, &base, err);
    }
    an_hyb_search_opts so = {
        .target = {.cos = a->target_cos, .sqnr_db = a->target_sqnr, .score = a->target_score, .over = a->over},
        .max_float = (size_t)a->max_float,
        .on_step = on_step,
        .user = &p};
    if (st == RD_OK) {
        print_header(&p);
        st = an_hyb_search(&r->hc, r->cands, r->n_cands, r->order, &base, &so, &res, err);
    }
    if (st == RD_OK && p.failed) /* a step search.json would lack */
        st = rd_errorf(err, RD_E_NOMEM, "out of memory (the list of the search's steps)");
    r->hc.scorer = NULL;
    int rc = AN_EXIT_OK;
    if (st != RD_OK) {
        /* the path so far is on stdout and in search.json; not when memory ran out (nothing more is written) */
        rd_error jerr = {0};
        if (err->code != RD_E_NOMEM && write_search_json(dir, a, &p, r, &res, err->msg, &jerr) == RD_OK)
            fprintf(ctx->errs, "the search's steps so far are in %s/search.json\n", dir);
        rc = an_fail(ctx, err);
        goto out;
    }
    if (res.unreachable) {
        size_t n_allowed = 0;
        for (size_t k = 0; k < r->n_cands; k++)
            n_allowed += r->cands[k].allowed;
        fprintf(ctx->out,
                "\ntarget not reachable: with all %zu candidate tensors in float16 the outputs reach cosine "
                "%.5f, SQNR %.2f dB",
                n_allowed, res.full.cos, res.full.sqnr_db);
        if (a->cmd.score_cmd)
            fprintf(ctx->out, ", score %.6g", res.full.score);
        fprintf(ctx->out, " (target:");
        if (!isnan(a->target_cos))
            fprintf(ctx->out, " cosine %.5f", a->target_cos);
        if (!isnan(a->target_sqnr))
            fprintf(ctx->out, " SQNR %.2f dB", a->target_sqnr);
        if (!isnan(a->target_score))
            fprintf(ctx->out, " score %.6g", a->target_score);
        fprintf(ctx->out, "). Float16 alone loses that much: lower the target or look at the float16 error "
                          "(accuracy --dtype float16).\n");
        rc = AN_EXIT_INPUT;
    } else if (!res.reached) {
        fprintf(ctx->out,
                "\ntarget not reached within --max-float %ld: best cosine %.5f, SQNR %.2f dB with %zu float16 "
                "tensors (float16 everywhere reaches %.5f; the smallest set found that meets the target "
                "needs more tensors)\n",
                a->max_float, res.score.cos, res.score.sqnr_db, res.n, res.full.cos);
        rc = AN_EXIT_GATE;
    } else {
        print_result(ctx, a, r, &base, &res);
        print_timing(ctx, r, &res, sc, t0);
        st = write_outputs(ctx, a, r, dir, res.set, res.n, err);
        if (st != RD_OK) {
            rc = an_fail(ctx, err);
            goto out;
        }
        if (!a->rknn_cfg)
            fprintf(ctx->out, "note: keys are ONNX tensor names of the optimised graph; give --rknn-cfg STEP1.cfg for "
                              "the toolkit's names (what hybrid_quantization_step2 accepts)\n");
    }
    if (write_search_json(dir, a, &p, r, &res, NULL, err) != RD_OK)
        rc = an_fail(ctx, err);
out:
    an_hyb_scorer_destroy(sc);
    an_hyb_search_result_fini(&res);
    free(p.steps);
    return rc;
}

/*
 * hybrid.c: measuring float16 sets on the simulation, the candidates and their ranking (latency tables:
 * latency_table.c).
 */
#include "hybrid.h"
#include "metrics.h"
#include "qcfg_build.h"
#include "quant_setup.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

rd_status an_hyb_init(an_hyb_ctx *c, rd_model *m, rd_sim *s, const rd_tensor *inputs, size_t n_samples, int threads,
                      rd_error *err)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->inputs = inputs;
    c->n_in = rd_model_input_count(m);
    c->n_out = rd_model_output_count(m);
    c->n_samples = n_samples;
    c->threads = threads;
    c->reuse_bytes = (size_t)AN_HYB_REUSE_DEFAULT_MB << 20;
    c->golden = calloc(n_samples * c->n_out + 1, sizeof *c->golden);
    if (!c->golden)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_run_buffers *kept = NULL; /* one sample's memory serves the next */
    rd_status st = rd_run_buffers_create(&kept, err);
    rd_run_options ro = {.pool = rd_sim_pool(s), .buffers = kept};
    for (size_t k = 0; k < n_samples && st == RD_OK; k++) {
        st = rd_model_run(m, &inputs[k * c->n_in], c->n_in, &ro, &c->golden[k * c->n_out], c->n_out, err);
        if (st != RD_OK)
            rd_error_prefix(err, "golden of sample %zu", k);
    }
    rd_run_buffers_destroy(kept);
    if (st != RD_OK)
        an_hyb_fini(c); /* the caller only finishes a context that started */
    return st;
}

void an_hyb_fini(an_hyb_ctx *c)
{
    for (size_t i = 0; c->golden && i < c->n_samples * c->n_out; i++)
        rd_tensor_fini(&c->golden[i]);
    free(c->golden);
    c->golden = NULL;
    for (size_t k = 0; c->prefix && k < c->n_samples; k++)
        rd_sim_prefix_destroy(c->prefix[k]);
    free(c->prefix);
    c->prefix = NULL;
}

/* One recording per sample, sharing reuse_bytes (0: they never record, but keep each run's own stats). */
static rd_status prefix_ready(an_hyb_ctx *c, rd_error *err)
{
    if (c->prefix)
        return RD_OK;
    c->prefix = calloc(c->n_samples + 1, sizeof *c->prefix);
    if (!c->prefix)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t k = 0; k < c->n_samples; k++) {
        /* the recording and a tentative run each hold up to this */
        rd_status st = rd_sim_prefix_create(c->reuse_bytes / c->n_samples / 2, &c->prefix[k], err);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

void an_hyb_reuse_get(const an_hyb_ctx *c, an_hyb_reuse *out)
{
    memset(out, 0, sizeof *out);
    for (size_t k = 0; c->prefix && k < c->n_samples; k++) {
        rd_sim_prefix_stats ps;
        rd_sim_prefix_stats_get(c->prefix[k], &ps);
        out->nodes_computed += ps.nodes_computed;
        out->nodes_full += ps.nodes_computed + ps.nodes_reused;
        out->bytes += ps.bytes;
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static rd_status set_all(rd_sim *s, const char *const *names, size_t n, rd_prec p, rd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        rd_status st = rd_sim_set_precision(s, names[i], p, err);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

/* The cosine and SQNR of every output taken together (one vector): sums in double. */
typedef struct out_sums {
    double rt, rr, tt, ee;
    bool nonfinite;
} out_sums;

static void sums_add(out_sums *a, const float *r, const float *t, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double x = r[i], y = t[i], e = x - y;
        if (!isfinite(x) || !isfinite(y))
            a->nonfinite = true;
        a->rt += x * y;
        a->rr += x * x;
        a->tt += y * y;
        a->ee += e * e;
    }
}

/* As an_cos_effective: both zero 1, one zero 0, non-finite -1 (counted as the worst). */
static double sums_cos(const out_sums *a)
{
    if (a->nonfinite)
        return -1.0;
    if (a->rr == 0 && a->tt == 0)
        return 1.0;
    if (a->rr == 0 || a->tt == 0)
        return 0.0;
    return fmax(-1.0, fmin(1.0, a->rt / sqrt(a->rr * a->tt)));
}

static double sums_sqnr(const out_sums *a)
{
    if (a->nonfinite)
        return -INFINITY;
    if (a->ee == 0)
        return INFINITY;
    return a->rr == 0 ? -INFINITY : 10.0 * log10(a->rr / a->ee);
}

/*
 * One sample's run (tentative: an_hyb_keep makes it the baseline) and its cosine and SQNR per the
 * objective; the outputs go to the scorer first when there is one.
 */
static rd_status measure_sample(an_hyb_ctx *c, size_t k, rd_prefix_mode concurrency, rd_tensor *outs, an_hyb_score *sc,
                                rd_error *err)
{
    sc->cos = INFINITY;
    sc->sqnr_db = INFINITY;
    out_sums all = {0};
    rd_run_options ro = {0}; /* the simulation's pool; busy with another sample's run, this one computes inline */
    rd_status st = rd_sim_run_prefix(c->s, c->prefix[k], RD_PREFIX_TRY | concurrency, &c->inputs[k * c->n_in], c->n_in,
                                     &ro, outs, c->n_out, err);
    if (st == RD_OK && c->scorer)
        st = an_hyb_scorer_put(c->scorer, k, outs, c->n_out, err);
    for (size_t o = 0; o < c->n_out && st == RD_OK; o++) {
        const rd_tensor *g = &c->golden[k * c->n_out + o];
        rd_metrics mt;
        if (rd_tensor_numel(g) != rd_tensor_numel(&outs[o])) {
            an_metrics_shape_mismatch(rd_tensor_numel(g), rd_tensor_numel(&outs[o]), &mt);
            all.nonfinite = true; /* not comparable: the worst */
        } else {
            an_metrics_compute(g->data, outs[o].data, rd_tensor_numel(g), NULL, &mt);
            if (c->objective != AN_HYB_OBJ_MIN_COS)
                sums_add(&all, g->data, outs[o].data, rd_tensor_numel(g));
        }
        double cs = an_cos_effective(&mt);
        if (isnan(cs))
            cs = -1.0;
        double sq = isnan(mt.sqnr_db) ? -INFINITY : mt.sqnr_db;
        sc->cos = fmin(sc->cos, cs);
        sc->sqnr_db = fmin(sc->sqnr_db, sq);
    }
    if (st == RD_OK && c->objective != AN_HYB_OBJ_MIN_COS) {
        sc->cos = sums_cos(&all);
        sc->sqnr_db = sums_sqnr(&all);
    }
    for (size_t o = 0; o < c->n_out; o++)
        rd_tensor_fini(&outs[o]);
    return st;
}

/* Samples on several threads: each takes the next sample; the lowest failing sample's error is reported. */
typedef struct sample_job {
    an_hyb_ctx *c;
    an_hyb_score *scores;
    atomic_size_t next;
    atomic_bool stop;
} sample_job;

typedef struct sample_worker {
    sample_job *job;
    pthread_t thread;
    bool started, failed;
    size_t failed_sample;
    rd_error err;
} sample_worker;

static void *sample_worker_main(void *arg)
{
    sample_worker *w = arg;
    sample_job *job = w->job;
    rd_tensor *outs = calloc(job->c->n_out + 1, sizeof *outs);
    if (!outs) {
        rd_errorf(&w->err, RD_E_NOMEM, "out of memory");
        w->failed = true;
        w->failed_sample = 0;
        atomic_store(&job->stop, true);
        return NULL;
    }
    while (!atomic_load(&job->stop)) {
        size_t k = atomic_fetch_add(&job->next, 1);
        if (k >= job->c->n_samples)
            break;
        if (measure_sample(job->c, k, RD_PREFIX_CONCURRENT, outs, &job->scores[k], &w->err) != RD_OK) {
            rd_error_prefix(&w->err, "sample %zu", k);
            w->failed = true;
            w->failed_sample = k;
            atomic_store(&job->stop, true);
        }
    }
    free(outs);
    return NULL;
}

static rd_status measure_parallel(an_hyb_ctx *c, int n_workers, an_hyb_score *scores, rd_error *err)
{
    rd_status st = rd_sim_prepare(c->s, err); /* the runs then only read the simulation */
    if (st != RD_OK)
        return st;
    sample_job job = {.c = c, .scores = scores};
    atomic_init(&job.next, 0);
    atomic_init(&job.stop, false);
    sample_worker *w = calloc((size_t)n_workers, sizeof *w);
    if (!w)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (int t = 0; t < n_workers; t++) {
        w[t].job = &job;
        int e = pthread_create(&w[t].thread, NULL, sample_worker_main, &w[t]);
        if (e != 0) {
            st = rd_errorf(err, RD_E_NOMEM, "hybrid: cannot start measuring thread %d of %d: %s", t + 1, n_workers,
                           strerror(e));
            atomic_store(&job.stop, true);
            break;
        }
        w[t].started = true;
    }
    for (int t = 0; t < n_workers; t++)
        if (w[t].started)
            pthread_join(w[t].thread, NULL);
    const sample_worker *bad = NULL;
    for (int t = 0; t < n_workers && st == RD_OK; t++)
        if (w[t].failed && (!bad || w[t].failed_sample < bad->failed_sample))
            bad = &w[t];
    if (bad) {
        if (err)
            *err = bad->err;
        st = bad->err.code;
    }
    free(w);
    return st;
}

/* Worst and mean over the samples (an infinite SQNR of an identical sample keeps the mean infinite). */
static void aggregate(const an_hyb_score *scores, size_t n, an_hyb_score *out)
{
    double cs = 0, sq = 0;
    for (size_t k = 0; k < n; k++) {
        out->cos = fmin(out->cos, scores[k].cos);
        out->sqnr_db = fmin(out->sqnr_db, scores[k].sqnr_db);
        cs += scores[k].cos;
        sq += scores[k].sqnr_db;
    }
    out->cos_mean = n ? cs / (double)n : NAN;
    out->sqnr_mean = n ? sq / (double)n : NAN;
}

rd_status an_hyb_measure(an_hyb_ctx *c, const char *const *names, size_t n, an_hyb_score *out, rd_error *err)
{
    *out = (an_hyb_score){.cos = INFINITY, .sqnr_db = INFINITY, .cos_mean = NAN, .sqnr_mean = NAN, .score = NAN};
    rd_status st = prefix_ready(c, err);
    if (st == RD_OK)
        st = set_all(c->s, names, n, RD_PREC_FP16, err);
    an_hyb_score *scores = calloc(c->n_samples + 1, sizeof *scores);
    rd_tensor *outs = calloc(c->n_out + 1, sizeof *outs);
    if (st == RD_OK && (!scores || !outs))
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    bool begun = false;
    if (st == RD_OK && c->scorer)
        begun = (st = an_hyb_scorer_begin(c->scorer, names, n, err)) == RD_OK;
    double t0 = now_s();
    /* samples side by side when there are threads for them (each run then mostly computes on its own thread) */
    int workers = c->threads > 1 && c->n_samples > 1
                      ? (int)(c->n_samples < (size_t)c->threads ? c->n_samples : (size_t)c->threads)
                      : 1;
    if (st == RD_OK && workers > 1)
        st = measure_parallel(c, workers, scores, err);
    for (size_t k = 0; k < c->n_samples && st == RD_OK && workers == 1; k++) {
        st = measure_sample(c, k, 0, outs, &scores[k], err);
        if (st != RD_OK)
            rd_error_prefix(err, "sample %zu", k);
    }
    if (st == RD_OK)
        c->n_runs += c->n_samples;
    c->run_seconds += now_s() - t0;
    if (st == RD_OK)
        aggregate(scores, c->n_samples, out);
    if (st == RD_OK && c->scorer)
        st = an_hyb_scorer_finish(c->scorer, &out->score, err);
    else if (begun) /* a sample failed: the scorer has nothing to score */
        an_hyb_scorer_abandon(c->scorer);
    free(outs);
    free(scores);
    rd_status back = set_all(c->s, names, n, RD_PREC_INT8, st == RD_OK ? err : NULL);
    return st != RD_OK ? st : back;
}

const char *an_hyb_objective_name(an_hyb_objective o)
{
    return o == AN_HYB_OBJ_COS ? "cos" : o == AN_HYB_OBJ_SQNR ? "sqnr" : "min-cos-over-outputs";
}

double an_hyb_cos_of(const an_hyb_target *t, const an_hyb_score *s)
{
    return t->over == AN_HYB_OVER_MEAN ? s->cos_mean : s->cos;
}

double an_hyb_sqnr_of(const an_hyb_target *t, const an_hyb_score *s)
{
    return t->over == AN_HYB_OVER_MEAN ? s->sqnr_mean : s->sqnr_db;
}

bool an_hyb_meets(const an_hyb_target *t, const an_hyb_score *s)
{
    return (isnan(t->cos) || an_hyb_cos_of(t, s) >= t->cos) &&
           (isnan(t->sqnr_db) || an_hyb_sqnr_of(t, s) >= t->sqnr_db) && (isnan(t->score) || s->score >= t->score);
}

double an_hyb_deficit(const an_hyb_target *t, const an_hyb_score *s)
{
    double d = 0.0, c = an_hyb_cos_of(t, s), q = an_hyb_sqnr_of(t, s);
    if (!isnan(t->cos) && !(c >= t->cos))
        d += (t->cos - (isnan(c) ? -1.0 : c)) / fmax(1e-6, 1.0 - t->cos);
    if (!isnan(t->sqnr_db) && !(q >= t->sqnr_db))
        d += (t->sqnr_db - (isfinite(q) ? q : -1000.0)) / 10.0;
    if (!isnan(t->score) && !(s->score >= t->score))
        d += (t->score - (isnan(s->score) ? t->score - 1e6 : s->score)) / fmax(1e-6, fabs(t->score));
    return d;
}

void an_hyb_keep(an_hyb_ctx *c)
{
    for (size_t k = 0; c->prefix && k < c->n_samples; k++)
        rd_sim_prefix_commit(c->prefix[k]);
}

/* *ratio: max|w| of the worst channel over the median channel's; NaN for fewer than two channels or a node
   without float weights. Fails only when memory runs out (a ratio missing would rank the layer wrongly). */
static rd_status outlier_ratio(rd_sim *s, int node, double *ratio, rd_error *err)
{
    *ratio = NAN;
    rd_sim_weights sw;
    if (rd_sim_weights_get(s, node, &sw, NULL) != RD_OK)
        return RD_OK;
    const rd_model *m = rd_sim_model(s);
    const rd_tensor *w = rd_model_constant(m, (size_t)sw.value);
    if (!w || w->dtype != RD_DT_F32 || w->rank < 1)
        return RD_OK;
    int64_t channels = w->dims[sw.axis] * (sw.group > 1 ? sw.group : 1);
    if (channels < 2 || channels > (1 << 20))
        return RD_OK;
    /* per-tensor weights have one scale: measure the channels all the same */
    rd_sim_weights per_channel = sw;
    per_channel.n_scale = (int)channels;
    float *mx = calloc((size_t)channels * 2, sizeof *mx);
    if (!mx)
        return rd_errorf(err, RD_E_NOMEM, "out of memory (weight channels of node %d)", node);
    rd_status st = an_weight_channel_max_abs(w, &per_channel, mx, err);
    if (st == RD_OK) {
        float *sorted = mx + channels;
        memcpy(sorted, mx, (size_t)channels * sizeof *sorted);
        for (int64_t i = 1; i < channels; i++) /* insertion sort: channel counts are small */
            for (int64_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
                float t = sorted[j];
                sorted[j] = sorted[j - 1];
                sorted[j - 1] = t;
            }
        double median = sorted[channels / 2];
        *ratio = median > 0 ? sorted[channels - 1] / median : INFINITY;
    }
    free(mx);
    if (st == RD_E_NOMEM)
        return st;
    rd_error_clear(err); /* weights it cannot measure have no ratio */
    return RD_OK;
}

int an_hyb_holder(const rd_sim *s, int v)
{
    const rd_model *m = rd_sim_model(s);
    for (int hops = 0; hops < 16; hops++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)v, &vi);
        rd_sim_tensor t;
        if (rd_sim_tensor_get(s, vi.name, &t, NULL) != RD_OK || t.fused_into < 0 || t.fused_into == v)
            return v;
        v = t.fused_into;
    }
    return v;
}

rd_status an_hyb_candidates(rd_sim *s, const rd_result *r, an_hyb_cand **out, size_t *n, rd_error *err)
{
    const rd_model *m = rd_sim_model(s);
    size_t nv = rd_model_value_count(m);
    double *macs = calloc(nv + 1, sizeof *macs), *outlier = calloc(nv + 1, sizeof *outlier);
    an_hyb_cand *c = calloc(r->n_layers + 1, sizeof *c);
    if (!macs || !outlier || !c) {
        free(macs);
        free(outlier);
        free(c);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (size_t v = 0; v < nv; v++)
        outlier[v] = NAN;
    for (size_t v = 0; v < nv; v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        if (vi.producer < 0)
            continue;
        rd_node_info ni;
        rd_model_node(m, (size_t)vi.producer, &ni);
        int h = an_hyb_holder(s, (int)v);
        if (ni.outputs[0] == (int)v)
            macs[h] += (double)ni.macs;
        double ratio;
        if (outlier_ratio(s, vi.producer, &ratio, err) != RD_OK) {
            free(macs);
            free(outlier);
            free(c);
            return err->code;
        }
        if (!isnan(ratio) && (isnan(outlier[h]) || ratio > outlier[h]))
            outlier[h] = ratio;
    }
    size_t k = 0;
    for (size_t i = 0; i < r->n_layers; i++) {
        const rd_layer_result *l = &r->layers[i];
        const rd_metric_group *se = &l->groups[RD_GROUP_SIM_SINGLE], *en = &l->groups[RD_GROUP_SIM_ENTIRE];
        if (l->fused_into || !se->present || !l->precision || strcmp(l->precision, "int8") != 0 ||
            strcmp(l->op_type, "Input") == 0 || strcmp(l->op_type, "exDataConvert") == 0)
            continue;
        rd_sim_tensor t;
        if (rd_sim_tensor_get(s, l->name, &t, NULL) != RD_OK || !t.materialized || t.precision != RD_PREC_INT8 ||
            t.value < 0)
            continue;
        rd_value_info vi;
        rd_model_value(m, (size_t)t.value, &vi);
        if (vi.producer < 0)
            continue; /* graph inputs and constants */
        an_hyb_cand *cd = &c[k++];
        cd->name = l->name;
        cd->op_type = l->op_type;
        cd->position = (int)i;
        cd->single_cos = se->cos_min;
        cd->entire_cos = en->present ? en->cos_min : NAN;
        cd->single_sqnr = se->mean.sqnr_db;
        cd->entire_sqnr = en->present ? en->mean.sqnr_db : NAN;
        cd->saturated = se->mean.saturated_share;
        cd->w_outlier = outlier[t.value];
        cd->macs = macs[t.value];
        cd->cost = cd->macs;
        cd->alone_cos = cd->alone_sqnr = NAN;
        cd->allowed = true;
    }
    free(macs);
    free(outlier);
    *out = c;
    *n = k;
    return RD_OK;
}

/* The error a candidate adds by itself: 1 - single cosine (NaN ranks as the worst). */
static double single_error(const an_hyb_cand *c)
{
    return isnan(c->single_cos) ? 2.0 : 1.0 - c->single_cos;
}

typedef struct rank_key {
    const an_hyb_cand *c;
    size_t i;
} rank_key;

static int by_single_error(const void *a, const void *b)
{
    const rank_key *x = a, *y = b;
    if (x->c->allowed != y->c->allowed)
        return x->c->allowed ? -1 : 1;
    double ex = single_error(x->c), ey = single_error(y->c);
    return ex > ey ? -1 : ex < ey ? 1 : (x->i > y->i) - (x->i < y->i);
}

static int by_gain(const void *a, const void *b)
{
    const rank_key *x = a, *y = b;
    bool mx = x->c->allowed && !isnan(x->c->alone_cos), my = y->c->allowed && !isnan(y->c->alone_cos);
    if (mx != my)
        return mx ? -1 : 1;
    if (mx && x->c->alone_cos != y->c->alone_cos)
        return x->c->alone_cos > y->c->alone_cos ? -1 : 1;
    if (mx && x->c->alone_sqnr != y->c->alone_sqnr)
        return x->c->alone_sqnr > y->c->alone_sqnr ? -1 : 1;
    return by_single_error(a, b);
}

rd_status an_hyb_rank(an_hyb_ctx *c, an_hyb_cand *cands, size_t n, size_t measure, size_t *order, rd_error *err)
{
    rank_key *keys = calloc(n + 1, sizeof *keys);
    if (!keys)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        keys[i] = (rank_key){&cands[i], i};
    qsort(keys, n, sizeof *keys, by_single_error);
    rd_status st = RD_OK;
    for (size_t i = 0; i < n && i < measure && st == RD_OK; i++) {
        an_hyb_cand *cd = &cands[keys[i].i];
        if (!cd->allowed)
            break;
        an_hyb_score sc;
        st = an_hyb_measure(c, &cd->name, 1, &sc, err);
        cd->alone = sc;
        cd->alone_cos = sc.cos;
        cd->alone_sqnr = sc.sqnr_db;
    }
    qsort(keys, n, sizeof *keys, by_gain);
    for (size_t i = 0; i < n; i++)
        order[i] = keys[i].i;
    free(keys);
    return st;
}

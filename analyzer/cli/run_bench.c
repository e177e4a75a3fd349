/*
 * run_bench.c: `run --bench N`. Each run's time is split by the events of its observer: the time from the end
 * of one event's observer to the next event is the node that event reports (its op type), the observer's own
 * time is "observer", and what comes before the first node (binding the inputs) and after the last is "other".
 * The float32 reference computes the elementwise nodes fused into a Conv with it (docs/threads.md), so a Conv's
 * time includes theirs there, and theirs is about zero; in a simulator a node's time includes the rounding of its
 * outputs to their precision.
 */
#include "run_bench.h"
#include "array_grow.h"
#include "json_out.h"
#include "progress.h"
#include "term_text.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct op_time {
    const char *op; /* points into the model */
    double ms;      /* over all the timed runs */
    int64_t events;
} op_time;

typedef struct bench_clock {
    const an_bench_target *t;
    double last;        /* end of the previous event's observer (ms) */
    double observer_ms; /* in the observer, over all runs */
    double other_ms;    /* before the first node and after the last */
    bool timing;        /* false during the warm-up */
    op_time *ops;
    size_t n_ops, cap_ops;
} bench_clock;

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

static int cmp_op_time(const void *a, const void *b)
{
    const op_time *x = a, *y = b;
    return (x->ms < y->ms) - (x->ms > y->ms); /* longest first */
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

static rd_status add_time(bench_clock *c, const char *op, double ms, rd_error *err)
{
    size_t i = 0;
    while (i < c->n_ops && strcmp(c->ops[i].op, op) != 0)
        i++;
    if (i == c->n_ops) {
        if (an_array_grow(&c->ops, &c->cap_ops, c->n_ops, sizeof *c->ops, 16, err) != RD_OK)
            return RD_E_NOMEM;
        c->ops[c->n_ops++] = (op_time){.op = op};
    }
    c->ops[i].ms += ms;
    c->ops[i].events++;
    return RD_OK;
}

static rd_status clock_observe(void *user, const rd_observed *ev, rd_error *err)
{
    bench_clock *c = user;
    const double t0 = now_ms();
    rd_status st = RD_OK;
    if (c->timing) {
        if (ev->node >= 0)
            st = add_time(c, ev->op_type, t0 - c->last, err);
        else
            c->other_ms += t0 - c->last;
    }
    if (st == RD_OK)
        st = c->t->observer(c->t->observer_user, ev, err);
    c->last = now_ms();
    if (c->timing)
        c->observer_ms += c->last - t0;
    return st;
}

/* One run; *ms its wall time. */
static rd_status run_timed(bench_clock *c, const rd_run_options *opt, double *ms, rd_error *err)
{
    const an_bench_target *t = c->t;
    const double t0 = now_ms();
    c->last = t0;
    rd_status st = t->sim ? rd_sim_run(t->sim, t->inputs, t->n_in, opt, NULL, 0, err)
                          : rd_model_run(t->m, t->inputs, t->n_in, opt, NULL, 0, err);
    const double t1 = now_ms();
    if (c->timing)
        c->other_ms += t1 - c->last;
    *ms = t1 - t0;
    return st;
}

/* The figures of n timed runs, times[] sorted. */
typedef struct bench_figures {
    long n;
    const double *times;
    double median, total;
    int64_t macs;
} bench_figures;

static void print_text(FILE *out, const bench_clock *c, const bench_figures *f)
{
    const an_bench_target *t = c->t;
    const long n = f->n;
    fprintf(out,
            "median %.3f ms over %ld runs (min %.3f, max %.3f), %d thread%s, %.3f GMAC, %.2f GFLOP/s, OpenBLAS kernel "
            "%s%s\n",
            f->median, n, f->times[0], f->times[n - 1], rd_pool_threads(t->pool),
            rd_pool_threads(t->pool) == 1 ? "" : "s", (double)f->macs / 1e9, 2.0 * (double)f->macs / (f->median * 1e6),
            rd_blas_kernel(), t->sim ? ", simulated" : "");
    fprintf(out, "time per run by op type (mean of the %ld runs%s):\n", n,
            t->sim ? "" : "; a Conv's time includes the elementwise nodes fused into it");
    const double share = f->total > 0 ? 100.0 / f->total : 0;
    for (size_t i = 0; i < c->n_ops; i++)
        fprintf(out, "  %-24s %10.3f ms %6.1f %%  %lld node%s\n", RD_TEXT_SHOWN(c->ops[i].op), c->ops[i].ms / (double)n,
                c->ops[i].ms * share, (long long)(c->ops[i].events / n), c->ops[i].events / n == 1 ? "" : "s");
    fprintf(out, "  %-24s %10.3f ms %6.1f %%\n", "(observer: statistics)", c->observer_ms / (double)n,
            c->observer_ms * share);
    fprintf(out, "  %-24s %10.3f ms %6.1f %%\n", "(other: inputs, set-up)", c->other_ms / (double)n,
            c->other_ms * share);
}

/* The same figures as one JSON object (times in ms, per run), printed whole or not at all. */
static rd_status print_json(FILE *out, const bench_clock *c, const bench_figures *f, rd_error *err)
{
    const an_bench_target *t = c->t;
    const double n = (double)f->n;
    bool ok = true;
    cJSON *root = cJSON_CreateObject();
    an_json_add_str(root, "model", t->model_path, &ok);
    an_json_add_bool(root, "simulated", t->sim != NULL, &ok);
    an_json_add_num(root, "threads", rd_pool_threads(t->pool), &ok);
    an_json_add_str(root, "blas_kernel", rd_blas_kernel(), &ok);
    an_json_add_num(root, "runs", n, &ok);
    an_json_add_num(root, "median_ms", f->median, &ok);
    an_json_add_num(root, "min_ms", f->times[0], &ok);
    an_json_add_num(root, "max_ms", f->times[f->n - 1], &ok);
    an_json_add_num(root, "mean_ms", f->total / n, &ok);
    an_json_add_num(root, "gmac", (double)f->macs / 1e9, &ok);
    an_json_add_num(root, "gflops", 2.0 * (double)f->macs / (f->median * 1e6), &ok);
    cJSON *ops = an_json_add_array(root, "ops", &ok);
    for (size_t i = 0; ops && ok && i < c->n_ops; i++) {
        cJSON *o = an_json_push_object(ops, &ok);
        an_json_add_str(o, "op_type", c->ops[i].op, &ok);
        an_json_add_num(o, "ms", c->ops[i].ms / n, &ok);
        an_json_add_num(o, "nodes", (double)(c->ops[i].events / f->n), &ok);
    }
    an_json_add_num(root, "observer_ms", c->observer_ms / n, &ok);
    an_json_add_num(root, "other_ms", c->other_ms / n, &ok);
    if (ok && an_json_print(out, root))
        return RD_OK;
    if (!ok)
        cJSON_Delete(root);
    return rd_errorf(err, RD_E_NOMEM, "out of memory while printing the --bench JSON");
}

int an_run_bench(an_cmd_ctx *ctx, const an_bench_target *t, long n)
{
    bench_clock c = {.t = t};
    rd_error err = {0};
    rd_run_buffers *kept = NULL; /* as every command that runs a model many times: no page faults per run */
    if (rd_run_buffers_create(&kept, &err) != RD_OK)
        return an_fail(ctx, &err);
    rd_run_options opt = {.observer = clock_observe, .user = &c, .pool = t->pool, .buffers = kept};
    double *times = malloc((size_t)n * sizeof *times), total = 0, warm;
    rd_status st = times ? RD_OK : rd_errorf(&err, RD_E_NOMEM, "out of memory for the --bench timings");
    /* one warm-up run: the first allocations and BLAS buffers are not what we measure */
    if (st == RD_OK)
        st = run_timed(&c, &opt, &warm, &err);
    an_progress bar; /* a bar on a terminal, a line every few seconds elsewhere */
    an_progress_init(&bar, ctx->errs, ctx->color, "bench");
    c.timing = true;
    for (long i = 0; i < n && st == RD_OK; i++) {
        st = run_timed(&c, &opt, &times[i], &err);
        total += times[i];
        an_progress_update(&bar, (size_t)i + 1, (size_t)n);
    }
    an_progress_done(&bar);
    rd_run_buffers_destroy(kept);
    if (st != RD_OK) {
        free(times);
        free(c.ops);
        return an_fail(ctx, &err);
    }
    qsort(times, (size_t)n, sizeof *times, cmp_double);
    qsort(c.ops, c.n_ops, sizeof *c.ops, cmp_op_time);
    const bench_figures f = {.n = n,
                             .times = times,
                             .median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2,
                             .total = total,
                             .macs = model_macs(t->sim ? rd_sim_model(t->sim) : t->m)};
    if (t->json)
        st = print_json(ctx->out, &c, &f, &err);
    else
        print_text(ctx->out, &c, &f);
    free(times);
    free(c.ops);
    return st == RD_OK ? AN_EXIT_OK : an_fail(ctx, &err);
}

/*
 * calib.c: rd_calibrate, activation ranges of a simulation over a dataset (docs/calibration.md).
 *
 * The optimised graph runs in float32 on every sample; an observer folds each materialised tensor into
 * per-tensor statistics the moment it exists (calib_hist.c), so no activation is kept. normal needs one
 * pass (min/max); kl_divergence and mmse need a second one, whose histograms span the ranges the first
 * found, and then search each tensor's range (calib_kl.c, calib_mmse.c).
 *
 * Threads: samples are handed out to workers from an atomic counter; each worker has its own statistics,
 * merged in worker order at the end. min, max and integer counts do not depend on which worker saw which
 * sample, so the result is the same for any thread count. The calling thread only starts, watches (for
 * progress) and joins the workers.
 */
#include "calib_internal.h"
#include "kernels/blas_threads.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#define CALIB_MAX_THREADS 256
#define CALIB_POLL_NS 10000000L /* progress poll period: 10 ms */

typedef enum calib_pass { PASS_RANGE = 1, PASS_HIST = 2, PASS_SEARCH = 3 } calib_pass;

struct calib_worker;
struct calib_ctx;

/* What the workers of a pass share: read-only but for the atomics. */
typedef struct calib_job {
    struct calib_ctx *ctx;
    rd_status (*item)(struct calib_worker *w, size_t k, rd_error *err); /* one unit of work */
    size_t n_items;                                                     /* samples, or tensors for PASS_SEARCH */
    rd_model *m;
    rd_sample_fn get_sample;
    void *user;
    size_t n_samples;
    size_t n_inputs;
    size_t n_values;
    const int *slot_of; /* value index -> tracked slot, -1 when not calibrated */
    size_t n_slots;
    calib_pass pass;
    const float *amax;  /* PASS_HIST: histogram half-width per slot */
    atomic_size_t next; /* next sample to hand out */
    atomic_size_t done; /* samples finished */
    atomic_int running; /* workers not yet finished */
    atomic_bool stop;   /* a worker failed */
} calib_job;

typedef struct calib_worker {
    calib_job *job;
    calib_stat *stats;    /* PASS_RANGE: n_slots */
    uint64_t *hist;       /* PASS_HIST: n_slots * CALIB_HIST_BINS */
    rd_tensor *inputs;    /* n_inputs, filled by get_sample */
    rd_run_buffers *kept; /* this worker's memory from one sample's run to the next (NULL: none kept) */
    pthread_t thread;
    bool started;
    bool failed;
    size_t failed_sample;
    rd_error err;
} calib_worker;

/* Folds a tensor that is not float32 (float16, float64, bfloat16) through a small float32 buffer. */
static void fold_converted(calib_worker *w, int slot, const rd_tensor *t, int64_t n)
{
    float buf[1024];
    for (int64_t i = 0; i < n;) {
        int64_t c = n - i < 1024 ? n - i : 1024;
        for (int64_t j = 0; j < c; j++)
            buf[j] = (float)sim_get_f64(t, i + j);
        if (w->job->pass == PASS_RANGE)
            sim_calib_fold_range(&w->stats[slot], buf, (size_t)c);
        else
            sim_calib_fold_hist(w->hist + (size_t)slot * CALIB_HIST_BINS, w->job->amax[slot], buf, (size_t)c);
        i += c;
    }
}

static rd_status observe(void *user, const rd_observed *ev, rd_error *err)
{
    calib_worker *w = user;
    const calib_job *job = w->job;
    if (ev->value < 0 || (size_t)ev->value >= job->n_values)
        return RD_OK;
    int slot = job->slot_of[ev->value];
    const rd_tensor *t = ev->tensor;
    if (slot < 0 || !rd_dtype_get(t->dtype)->is_float) /* integer tensors (shapes, indices) are not quantized */
        return RD_OK;
    int64_t n = rd_tensor_numel(t);
    if (n == 0)
        return RD_OK;
    if (t->dtype != RD_DT_F32) {
        fold_converted(w, slot, t, n);
        return RD_OK;
    }
    if (job->pass == PASS_RANGE)
        sim_calib_fold_range(&w->stats[slot], t->data, (size_t)n);
    else
        sim_calib_fold_hist(w->hist + (size_t)slot * CALIB_HIST_BINS, job->amax[slot], t->data, (size_t)n);
    return RD_OK;
}

static rd_status run_sample(calib_worker *w, size_t k, rd_error *err)
{
    const calib_job *job = w->job;
    memset(w->inputs, 0, job->n_inputs * sizeof *w->inputs);
    rd_error_clear(err);
    rd_status st = job->get_sample(job->user, k, w->inputs, err);
    if (st != RD_OK && !err->msg[0])
        rd_errorf(err, st, "the sample function failed (%s)", rd_status_str(st));
    if (st == RD_OK) {
        rd_run_options ro = {.observer = observe, .user = w, .observe_inputs = true, .threads = 1, .buffers = w->kept};
        st = rd_model_run(job->m, w->inputs, job->n_inputs, &ro, NULL, 0, err);
    }
    for (size_t i = 0; i < job->n_inputs; i++)
        rd_tensor_fini(&w->inputs[i]);
    if (st != RD_OK) {
        err->code = st;
        rd_error_prefix(err, "calibration sample %zu", k);
    }
    return st;
}

static void *worker_main(void *arg)
{
    calib_worker *w = arg;
    calib_job *job = w->job;
    rd_error ignored; /* without kept buffers the runs allocate afresh: slower, the same results */
    if (rd_run_buffers_create(&w->kept, &ignored) != RD_OK)
        w->kept = NULL;
    while (!atomic_load(&job->stop)) {
        size_t k = atomic_fetch_add(&job->next, 1);
        if (k >= job->n_items)
            break;
        rd_error_clear(&w->err);
        if (job->item(w, k, &w->err) != RD_OK) {
            w->failed = true;
            w->failed_sample = k;
            atomic_store(&job->stop, true);
            break;
        }
        atomic_fetch_add(&job->done, 1);
    }
    rd_run_buffers_destroy(w->kept);
    w->kept = NULL;
    atomic_fetch_sub(&job->running, 1);
    return NULL;
}

typedef struct calib_progress {
    rd_progress_fn fn;
    void *user;
    size_t base, total; /* sample-passes before this pass, and in all */
} calib_progress;

/* Runs job->item on every item on nw workers; reports the failure of the lowest item index. */
static rd_status run_pass(calib_job *job, calib_worker *workers, int nw, const calib_progress *pr, rd_error *err)
{
    atomic_store(&job->next, 0);
    atomic_store(&job->done, 0);
    atomic_store(&job->running, nw);
    atomic_store(&job->stop, false);
    rd_status st = RD_OK;
    for (int t = 0; t < nw; t++) {
        workers[t].failed = false;
        workers[t].started = false;
        rd_error_clear(&workers[t].err);
    }
    for (int t = 0; t < nw; t++) {
        int e = pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]);
        if (e != 0) {
            st = rd_errorf(err, RD_E_NOMEM, "calibration: cannot start worker thread %d of %d: %s", t + 1, nw,
                           strerror(e));
            atomic_store(&job->stop, true);
            atomic_fetch_sub(&job->running, nw - t);
            break;
        }
        workers[t].started = true;
    }
    size_t last = (size_t)-1;
    if (pr->fn) {
        while (atomic_load(&job->running) > 0) {
            size_t d = atomic_load(&job->done);
            if (d != last)
                pr->fn(pr->user, pr->base + d, pr->total);
            last = d;
            struct timespec ts = {0, CALIB_POLL_NS};
            nanosleep(&ts, NULL);
        }
    }
    for (int t = 0; t < nw; t++)
        if (workers[t].started)
            pthread_join(workers[t].thread, NULL);
    if (st != RD_OK)
        return st;
    const calib_worker *bad = NULL;
    for (int t = 0; t < nw; t++)
        if (workers[t].failed && (!bad || workers[t].failed_sample < bad->failed_sample))
            bad = &workers[t];
    if (bad) {
        if (err)
            *err = bad->err;
        return bad->err.code;
    }
    size_t d = atomic_load(&job->done);
    if (pr->fn && d != last)
        pr->fn(pr->user, pr->base + d, pr->total);
    return RD_OK;
}

static int thread_count(int asked, size_t n_samples)
{
    long n = asked > 0 ? asked : rd_cpu_count();
    if (n < 1)
        n = 1;
    if (n > CALIB_MAX_THREADS)
        n = CALIB_MAX_THREADS;
    if ((size_t)n > n_samples)
        n = (long)n_samples;
    return (int)n;
}

/* The calibration's working set, freed by calib_fini. */
typedef struct calib_ctx {
    calib_job job;
    rd_calib_method method;
    float *lo, *hi; /* per slot: the ranges found */
    int *slot_of;
    int *slot_value;    /* slot -> value index */
    bool *slot_wide;    /* per slot: held at int16 when calibrating (kl/mmse keep its min/max) */
    calib_stat *merged; /* per slot, after pass 1 */
    float *amax;
    calib_worker *workers;
    int nw;
} calib_ctx;

static void calib_fini(calib_ctx *c)
{
    for (int t = 0; c->workers && t < c->nw; t++) {
        free(c->workers[t].stats);
        free(c->workers[t].hist);
        free(c->workers[t].inputs);
    }
    free(c->workers);
    free(c->slot_of);
    free(c->slot_value);
    free(c->slot_wide);
    free(c->merged);
    free(c->amax);
    free(c->lo);
    free(c->hi);
}

/* Chooses the tensors to calibrate: materialised float (or not yet typed) activations and graph inputs. */
static rd_status select_tensors(calib_ctx *c, rd_sim *s, rd_error *err)
{
    const rd_model *m = c->job.m;
    size_t nv = rd_model_value_count(m);
    c->slot_of = sim_malloc_array(nv, sizeof *c->slot_of);
    c->slot_value = sim_malloc_array(nv, sizeof *c->slot_value);
    c->slot_wide = sim_calloc_array(nv, sizeof *c->slot_wide);
    if (!c->slot_of || !c->slot_value || !c->slot_wide)
        return rd_errorf(err, RD_E_NOMEM, "calibration: out of memory for %zu tensors", nv);
    c->job.n_values = nv;
    for (size_t v = 0; v < nv; v++) {
        c->slot_of[v] = -1;
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        if (vi.is_constant)
            continue;
        if (vi.dtype != RD_DT_UNDEFINED && !rd_dtype_get(vi.dtype)->is_float)
            continue;
        rd_sim_tensor info;
        rd_error e;
        rd_status st = rd_sim_tensor_get(s, vi.name, &info, &e);
        if (st == RD_E_NOTFOUND) /* made by a pass, unknown to the original model: nothing to set */
            continue;
        if (st != RD_OK) {
            if (err)
                *err = e;
            return rd_error_prefix(err, "calibration");
        }
        if (!info.materialized || info.value != (int)v)
            continue;
        c->slot_of[v] = (int)c->job.n_slots;
        c->slot_wide[c->job.n_slots] = info.precision == RD_PREC_INT16;
        c->slot_value[c->job.n_slots++] = (int)v;
    }
    return RD_OK;
}

static rd_status alloc_workers(calib_ctx *c, int nw, rd_error *err)
{
    c->workers = sim_calloc_array((size_t)nw, sizeof *c->workers);
    if (!c->workers)
        return rd_errorf(err, RD_E_NOMEM, "calibration: out of memory");
    c->nw = nw;
    size_t n_in = c->job.n_inputs;
    for (int t = 0; t < nw; t++) {
        calib_worker *w = &c->workers[t];
        w->job = &c->job;
        w->stats = sim_malloc_array(c->job.n_slots, sizeof *w->stats);
        w->inputs = sim_calloc_array(n_in, sizeof *w->inputs);
        if (!w->stats || !w->inputs)
            return rd_errorf(err, RD_E_NOMEM, "calibration: out of memory");
        for (size_t k = 0; k < c->job.n_slots; k++)
            sim_calib_stat_init(&w->stats[k]);
    }
    return RD_OK;
}

/* Pass 1 merged: the range of every tensor, checked finite. */
static rd_status merge_ranges(calib_ctx *c, rd_error *err)
{
    size_t ns = c->job.n_slots;
    c->merged = sim_malloc_array(ns, sizeof *c->merged);
    c->amax = sim_malloc_array(ns, sizeof *c->amax);
    c->lo = sim_malloc_array(ns, sizeof *c->lo);
    c->hi = sim_malloc_array(ns, sizeof *c->hi);
    if (!c->merged || !c->amax || !c->lo || !c->hi)
        return rd_errorf(err, RD_E_NOMEM, "calibration: out of memory");
    for (size_t k = 0; k < ns; k++) {
        sim_calib_stat_init(&c->merged[k]);
        for (int t = 0; t < c->nw; t++)
            sim_calib_stat_merge(&c->merged[k], &c->workers[t].stats[k]);
        calib_stat *st = &c->merged[k];
        st->min += 0.0f; /* -0 becomes +0: which signed zero won depended on the order values came in */
        st->max += 0.0f;
        if (st->seen && !(isfinite(st->min) && isfinite(st->max))) {
            rd_value_info vi;
            rd_model_value(c->job.m, (size_t)c->slot_value[k], &vi);
            return rd_errorf(err, RD_E_INVAL,
                             "calibration: tensor '%s' has no finite range over the dataset (min %g, max %g): it "
                             "cannot be quantized",
                             vi.name, st->min, st->max);
        }
        c->amax[k] = st->seen ? sim_calib_amax(st->min, st->max) : 0.0f;
    }
    return RD_OK;
}

/* Pass 2 merged: histograms added into worker 0's, in worker order (exact integer sums). */
static void merge_hists(calib_ctx *c)
{
    size_t n = c->job.n_slots * CALIB_HIST_BINS;
    uint64_t *dst = c->workers[0].hist;
    for (int t = 1; t < c->nw; t++)
        for (size_t i = 0; i < n; i++)
            dst[i] += c->workers[t].hist[i];
}

/* PASS_SEARCH item: the range of tensor slot k from its merged statistics, into ctx->lo/hi. */
static rd_status search_slot(calib_worker *w, size_t k, rd_error *err)
{
    calib_ctx *c = w->job->ctx;
    const calib_stat *st = &c->merged[k];
    c->lo[k] = st->min;
    c->hi[k] = st->max;
    /* the searches trade clipping against int8's 255 steps; an int16 tensor keeps its min/max (our choice) */
    if (!st->seen || c->method == RD_CALIB_NORMAL || c->slot_wide[k])
        return RD_OK;
    const uint64_t *hist = c->workers[0].hist + k * CALIB_HIST_BINS;
    float wlo = st->min < 0 ? st->min : 0, whi = st->max > 0 ? st->max : 0; /* searches work on 0-widened ranges */
    bool ok = c->method == RD_CALIB_KL ? sim_calib_kl_range(hist, wlo, whi, &c->lo[k], &c->hi[k])
                                       : sim_calib_mmse_range(hist, wlo, whi, &c->lo[k], &c->hi[k]);
    if (!ok) {
        rd_value_info vi;
        rd_model_value(c->job.m, (size_t)c->slot_value[k], &vi);
        return rd_errorf(err, RD_E_NOMEM, "calibration: out of memory searching the range of '%s'", vi.name);
    }
    return RD_OK;
}

static rd_status set_ranges(calib_ctx *c, rd_sim *s, rd_error *err)
{
    for (size_t k = 0; k < c->job.n_slots; k++) {
        if (!c->merged[k].seen) /* never produced (no sample reached it): left unquantized */
            continue;
        rd_value_info vi;
        rd_model_value(c->job.m, (size_t)c->slot_value[k], &vi);
        rd_status rs = rd_sim_set_range(s, vi.name, c->lo[k], c->hi[k], err);
        if (rs != RD_OK)
            return rd_error_prefix(err, "calibration");
    }
    return RD_OK;
}

rd_status rd_calibrate(rd_sim *s, rd_sample_fn get_sample, void *user, size_t n_samples, const rd_calib_options *opt,
                       rd_error *err)
{
    if (!s || !get_sample)
        return rd_errorf(err, RD_E_INVAL, "rd_calibrate: %s is NULL", !s ? "the simulation" : "the sample function");
    rd_calib_method method = opt ? opt->method : RD_CALIB_NORMAL;
    if (method != RD_CALIB_NORMAL && method != RD_CALIB_KL && method != RD_CALIB_MMSE)
        return rd_errorf(err, RD_E_INVAL, "calibration: unknown method %d", (int)method);
    if (opt && opt->threads < 0)
        return rd_errorf(err, RD_E_INVAL, "calibration: thread count %d is negative", opt->threads);
    if (n_samples == 0)
        return rd_errorf(err, RD_E_INVAL, "calibration: the dataset is empty (0 samples)");

    calib_ctx c = {.method = method};
    /* runs never modify the model (the executor keeps per-run state), so workers share it */
    c.job.ctx = &c;
    c.job.m = (rd_model *)rd_sim_model(s);
    c.job.get_sample = get_sample;
    c.job.user = user;
    c.job.n_samples = n_samples;
    c.job.n_inputs = rd_model_input_count(c.job.m);
    int passes = method == RD_CALIB_NORMAL ? 1 : 2;
    calib_progress pr = {.fn = opt ? opt->progress : NULL,
                         .user = opt ? opt->progress_user : NULL,
                         .base = 0,
                         .total = n_samples * (size_t)passes};
    rd_status st = select_tensors(&c, s, err);
    if (st == RD_OK)
        st = alloc_workers(&c, thread_count(opt ? opt->threads : 0, n_samples), err);
    c.job.slot_of = c.slot_of;
    blas_use_one_thread(); /* before the workers start: a process-wide setting */
    c.job.item = run_sample;
    c.job.n_items = n_samples;
    if (st == RD_OK) {
        c.job.pass = PASS_RANGE;
        st = run_pass(&c.job, c.workers, c.nw, &pr, err);
    }
    if (st == RD_OK)
        st = merge_ranges(&c, err);
    if (st == RD_OK && passes == 2) {
        for (int t = 0; t < c.nw && st == RD_OK; t++) {
            c.workers[t].hist = sim_calloc_array(c.job.n_slots * CALIB_HIST_BINS, sizeof(uint64_t));
            if (!c.workers[t].hist)
                st = rd_errorf(err, RD_E_NOMEM, "calibration: out of memory for %zu histograms", c.job.n_slots);
        }
        c.job.pass = PASS_HIST;
        c.job.amax = c.amax;
        pr.base = n_samples;
        if (st == RD_OK)
            st = run_pass(&c.job, c.workers, c.nw, &pr, err);
        if (st == RD_OK)
            merge_hists(&c);
    }
    if (st == RD_OK) { /* each tensor's search on the workers: results land in their own slots */
        calib_progress quiet = {0};
        c.job.pass = PASS_SEARCH;
        c.job.item = search_slot;
        c.job.n_items = c.job.n_slots;
        st = run_pass(&c.job, c.workers, c.nw, &quiet, err);
    }
    if (st == RD_OK)
        st = set_ranges(&c, s, err);
    if (st == RD_OK)
        st = sim_qrules_apply(s, err);
    calib_fini(&c);
    return st;
}

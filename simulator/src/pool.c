/*
 * pool.c: the thread pool the kernels split their work over (kernels/parallel.h), created once per
 * command or run and reused by every layer: no thread is started per layer.
 *
 * A job is n tasks claimed one at a time from an atomic counter that also carries the job's number, so a
 * worker that wakes late, after its job ended and another began, cannot take a task of the new job with
 * the old job's function. The caller runs tasks too and waits only for tasks that were claimed, never for
 * a worker that has not been scheduled yet (the machine may be busy). Tasks never fail: kernels check
 * their arguments before they split.
 */
#include "internal.h"
#include "kernels/parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#define POOL_MAX_THREADS 1024
#define POOL_SPIN 4000 /* polls before a thread sleeps: about 150 us (a pause is ~40 ns on recent x86) */

typedef struct pool_worker {
    struct rd_pool *pool;
    int index;
} pool_worker;

struct rd_pool {
    int n;         /* threads taking part in a job, the caller included */
    int n_started; /* workers running (n - 1 once created) */
    pthread_t *threads;
    pool_worker *workers;
    pthread_mutex_t submit; /* held by the thread whose job runs; others run theirs inline */
    pthread_mutex_t lock;   /* guards the job description, stop and the condition waits */
    pthread_cond_t wake, finished;
    sim_task_fn fn;
    void *arg;
    int64_t n_tasks;
    atomic_uint job;            /* number of the current job (0: none yet) */
    atomic_uint_fast64_t claim; /* job << 32 | next task */
    atomic_int_fast64_t done;   /* tasks of the current job finished */
    bool stop;
};

int rd_cpu_count(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (n > POOL_MAX_THREADS ? POOL_MAX_THREADS : (int)n) : 1;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* Claims and runs tasks of job `job` until none is left (or another job has replaced it). */
static void run_tasks(struct rd_pool *p, unsigned job, sim_task_fn fn, void *arg, int64_t n, int worker)
{
    for (;;) {
        uint_fast64_t c = atomic_load(&p->claim);
        do {
            if ((unsigned)(c >> 32) != job || (int64_t)(c & 0xffffffffu) >= n)
                return;
        } while (!atomic_compare_exchange_weak(&p->claim, &c, c + 1));
        fn(arg, (int64_t)(c & 0xffffffffu), worker);
        if (atomic_fetch_add(&p->done, 1) + 1 == n) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_broadcast(&p->finished);
            pthread_mutex_unlock(&p->lock);
        }
    }
}

static void *worker_main(void *user)
{
    const pool_worker *w = user;
    struct rd_pool *p = w->pool;
    unsigned seen = 0;
    for (;;) {
        for (int spin = 0; spin < POOL_SPIN && atomic_load(&p->job) == seen; spin++)
            cpu_relax();
        pthread_mutex_lock(&p->lock);
        while (!p->stop && atomic_load(&p->job) == seen)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stop) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        seen = atomic_load(&p->job);
        sim_task_fn fn = p->fn;
        void *arg = p->arg;
        int64_t n = p->n_tasks;
        pthread_mutex_unlock(&p->lock);
        run_tasks(p, seen, fn, arg, n, w->index);
    }
}

static void stop_workers(struct rd_pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n_started; i++)
        pthread_join(p->threads[i], NULL);
    p->n_started = 0;
}

rd_status rd_pool_create(int threads, rd_pool **out, rd_error *err)
{
    *out = NULL;
    if (threads < 0 || threads > POOL_MAX_THREADS)
        return rd_errorf(err, RD_E_INVAL, "thread count %d is outside 0..%d", threads, POOL_MAX_THREADS);
    if (threads == 0)
        threads = rd_cpu_count();
    rd_pool *p = calloc(1, sizeof *p);
    if (!p)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    p->n = threads;
    p->threads = calloc((size_t)threads, sizeof *p->threads);
    p->workers = calloc((size_t)threads, sizeof *p->workers);
    if (!p->threads || !p->workers) {
        free(p->threads);
        free(p->workers);
        free(p);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    pthread_mutex_init(&p->submit, NULL);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->finished, NULL);
    atomic_init(&p->job, 0);
    atomic_init(&p->claim, 0);
    atomic_init(&p->done, 0);
    for (int i = 1; i < threads; i++) {
        p->workers[i] = (pool_worker){.pool = p, .index = i};
        int rc = pthread_create(&p->threads[p->n_started], NULL, worker_main, &p->workers[i]);
        if (rc != 0) {
            rd_pool_destroy(p);
            return rd_errorf(err, RD_E_NOMEM,
                             "cannot start thread %d of %d: the system is out of resources for threads (error %d): try "
                             "a smaller --threads",
                             i + 1, threads, rc);
        }
        p->n_started++;
    }
    *out = p;
    return RD_OK;
}

void rd_pool_destroy(rd_pool *p)
{
    if (!p)
        return;
    stop_workers(p);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->finished);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->submit);
    free(p->threads);
    free(p->workers);
    free(p);
}

int rd_pool_threads(const rd_pool *p)
{
    return p ? p->n : 1;
}

int sim_pool_width(const rd_pool *p)
{
    return p ? p->n : 1;
}

void sim_parallel(rd_pool *p, int64_t n_tasks, sim_task_fn fn, void *arg)
{
    if (n_tasks <= 0)
        return;
    if (!p || p->n < 2 || n_tasks < 2 || n_tasks > INT32_MAX || pthread_mutex_trylock(&p->submit) != 0) {
        for (int64_t t = 0; t < n_tasks; t++)
            fn(arg, t, 0);
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->arg = arg;
    p->n_tasks = n_tasks;
    unsigned job = atomic_load(&p->job) + 1;
    if (job == 0)
        job = 1;
    atomic_store(&p->done, 0);
    atomic_store(&p->claim, (uint_fast64_t)job << 32);
    atomic_store(&p->job, job);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    run_tasks(p, job, fn, arg, n_tasks, 0);
    /* the last tasks are usually a few microseconds from done: sleeping now would add a wake-up (tens of
       microseconds on a virtual machine) to every layer */
    for (int spin = 0; spin < POOL_SPIN && atomic_load(&p->done) < n_tasks; spin++)
        cpu_relax();
    pthread_mutex_lock(&p->lock);
    while (atomic_load(&p->done) < n_tasks)
        pthread_cond_wait(&p->finished, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->submit);
}

void rd_pool_for(rd_pool *pool, int64_t n_tasks, rd_pool_task_fn fn, void *arg)
{
    sim_parallel(pool, n_tasks, fn, arg);
}

rd_status sim_run_pool(const rd_run_options *opt, rd_pool *fallback, rd_pool **pool, rd_pool **owned, rd_error *err)
{
    *owned = NULL;
    *pool = opt && opt->pool ? opt->pool : fallback;
    if (*pool || !opt || opt->threads <= 1)
        return RD_OK;
    rd_status st = rd_pool_create(opt->threads, owned, err);
    *pool = *owned;
    return st;
}

/*
 * parallel.h: how kernels spread work over the run's thread pool (rd_pool, pool.c).
 *
 * A kernel cuts its output into tasks whose number and bounds depend only on the layer's shape (output
 * channel blocks, row blocks, GEMM column blocks), never on the thread count, and each task computes its
 * elements by the same sequence of operations wherever it runs. Results are therefore bit-identical for
 * any number of threads, including a busy or absent pool (every task then runs on the calling thread).
 */
#ifndef RD_KERNELS_PARALLEL_H
#define RD_KERNELS_PARALLEL_H

#include <stdint.h>

struct rd_pool;

/** One task: fn(arg, task, worker) with worker in [0, sim_pool_width(pool)) naming per-worker scratch. */
typedef void (*sim_task_fn)(void *arg, int64_t task, int worker);

/**
 * Runs fn for every task in [0, n_tasks) and returns when all have finished. The calling thread takes
 * part (as worker 0). Runs inline when pool is NULL, has one thread, n_tasks < 2, or another caller is
 * using the pool (nested or concurrent runs), so it never blocks on a busy pool.
 */
void sim_parallel(struct rd_pool *pool, int64_t n_tasks, sim_task_fn fn, void *arg);

/** Workers that may run tasks of one sim_parallel call (1 for NULL): the per-worker scratch to provide. */
int sim_pool_width(const struct rd_pool *pool);

/**
 * A region of an output viewed as [N, C, P] (batch, channels, flat positions; a 2-D [M, N] output is [1, M, N])
 * that a task has finished: batch n, channels [c0, c1), positions [p0, p1). The regions of one kernel call
 * cover every element exactly once.
 */
typedef struct sim_tile {
    int64_t n, c0, c1, p0, p1;
} sim_tile;

/** Called once per finished region, on the thread that computed it (worker as for sim_task_fn). */
typedef void (*sim_tile_fn)(void *user, const sim_tile *t, int worker);

/** Tasks of about `target` units each when `units` are split in fixed blocks: ceil(units / target), >= 1. */
static inline int64_t sim_blocks(int64_t units, int64_t target)
{
    if (target < 1)
        target = 1;
    return units <= target ? 1 : (units + target - 1) / target;
}

#endif

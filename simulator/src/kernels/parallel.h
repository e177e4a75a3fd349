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

/*
 * A layer with the work for it is cut into at least this many tasks of about the same size, so that two
 * threads (or more) each get an even share: five tasks on two threads leave one waiting for the fifth.
 */
#define SIM_MIN_TASKS 8

/**
 * A block size for `units` split into tasks of at most `cap` units, rounded up to a multiple of align (>= 1):
 * at least min_blocks blocks where blocks of `least` units or more allow it, all about the same size rather
 * than full ones and a short last one. Depends on its arguments only, never on a thread count.
 */
static inline int64_t sim_even_block(int64_t units, int64_t cap, int64_t min_blocks, int64_t least, int64_t align)
{
    if (align < 1)
        align = 1;
    if (cap < align)
        cap = align;
    if (units <= 0)
        return cap;
    int64_t blocks = sim_blocks(units, cap);
    const int64_t most = least > 1 ? units / least : units; /* blocks of at least `least` units */
    if (blocks < min_blocks && most > blocks)
        blocks = min_blocks < most ? min_blocks : most;
    const int64_t block = (units + blocks - 1) / blocks;
    return (block + align - 1) / align * align;
}

/** Blocks of a task count `have` must be multiplied by to reach SIM_MIN_TASKS (>= 1). */
static inline int64_t sim_more_blocks(int64_t have)
{
    return have >= SIM_MIN_TASKS || have < 1 ? 1 : (SIM_MIN_TASKS + have - 1) / have;
}

#endif

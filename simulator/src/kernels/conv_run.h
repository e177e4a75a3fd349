/*
 * conv_run.h: what every task of a float, double or int8 conv run reads besides its operands, so the three
 * kernels (conv_f32.c, conv_f64.c, qconv.c) set it up, report finished tiles and find scratch one way.
 */
#ifndef RD_KERNELS_CONV_RUN_H
#define RD_KERNELS_CONV_RUN_H

#include "conv_f32.h"

#include <stddef.h>
#include <string.h>

typedef struct conv_run {
    const conv_geom *g;
    const conv_plan *plan;
    char *scratch; /* plan->scratch bytes per worker, or NULL when none is planned */
    sim_tile_fn done;
    void *done_user;
    int64_t cg, mg, in_plane, out_plane, ksz; /* channels per group (in, out), spatial sizes, kernel taps */
    const float *presplit; /* a presplit direct plan: the split input of the batch element being computed */
    int64_t task0;         /* and its first task (conv_run_presplit) */
} conv_run;

static inline conv_run conv_run_of(const conv_geom *g, const conv_plan *plan, void *scratch, sim_tile_fn done,
                                   void *done_user)
{
    return (conv_run){.g = g,
                      .plan = plan,
                      .scratch = scratch,
                      .done = done,
                      .done_user = done_user,
                      .cg = g->in_c / g->group,
                      .mg = g->out_c / g->group,
                      .in_plane = conv_prod(g->in, g->nsp),
                      .out_plane = conv_prod(g->out, g->nsp),
                      .ksz = conv_prod(g->k, g->nsp)};
}

/** Reports output channels [c0, c1) x positions [p0, p1) of batch n as finished (no-op without a callback). */
static inline void conv_run_done(const conv_run *r, int64_t n, int64_t c0, int64_t c1, int64_t p0, int64_t p1,
                                 int worker)
{
    if (!r->done)
        return;
    const sim_tile t = {.n = n, .c0 = c0, .c1 = c1, .p0 = p0, .p1 = p1};
    r->done(r->done_user, &t, worker);
}

/**
 * A presplit direct plan (conv_plan.presplit): per batch element, x's input split once into worker 0's scratch,
 * then that element's tasks, fn(job, task - r->task0, worker); the tasks read r->presplit. job holds r.
 */
static inline void conv_run_presplit(conv_run *r, const float *x, struct rd_pool *pool, sim_task_fn fn, void *job)
{
    const int64_t per_batch = r->plan->tasks / (r->g->batch > 0 ? r->g->batch : 1);
    float *split = (float *)(void *)r->scratch;
    r->presplit = split;
    for (int64_t n = 0; n < r->g->batch; n++) {
        conv_direct_presplit(r->g, x, n, split);
        r->task0 = n * per_batch;
        sim_parallel(pool, per_batch, fn, job);
    }
}

/** The worker's scratch; NULL when the plan needs none (no offset applied to a null pointer). */
static inline void *conv_run_scratch(const conv_run *r, int worker)
{
    return r->scratch ? r->scratch + (size_t)worker * r->plan->scratch : NULL;
}

/** Task `task` of a pointwise plan (ordered batch, group, block of output channels, block of positions). */
static inline conv_task_span conv_run_gemm_span(const conv_run *r, int64_t task)
{
    const conv_plan *p = r->plan;
    const int64_t rb = sim_blocks(r->mg, p->ch_block), cb = sim_blocks(r->out_plane, p->col_block);
    const int64_t slice = task / cb / rb, m0 = task / cb % rb * p->ch_block, p0 = task % cb * p->col_block;
    return (conv_task_span){.n = slice / r->g->group,
                            .grp = slice % r->g->group,
                            .m0 = m0,
                            .m1 = m0 + p->ch_block < r->mg ? m0 + p->ch_block : r->mg,
                            .p0 = p0,
                            .np = p0 + p->col_block < r->out_plane ? p->col_block : r->out_plane - p0};
}

/** Task `task` of a ConvTranspose plan (ordered batch, group, block of output channels [m0, m1) in the group). */
static inline conv_task_span conv_run_transpose_span(const conv_run *r, int64_t task)
{
    const int64_t blocks = sim_blocks(r->mg, r->plan->ch_block), slice = task / blocks;
    const int64_t m0 = task % blocks * r->plan->ch_block;
    return (conv_task_span){.n = slice / r->g->group,
                            .grp = slice % r->g->group,
                            .m0 = m0,
                            .m1 = m0 + r->plan->ch_block < r->mg ? m0 + r->plan->ch_block : r->mg};
}

/** Rows x cols elements of esize bytes (row stride ld elements) set to their row's b[r], or to zero bits. */
static inline void conv_fill_rows(void *y, size_t esize, int64_t rows, int64_t cols, int64_t ld, const void *b)
{
    for (int64_t r = 0; r < rows; r++) {
        char *yr = (char *)y + (size_t)(r * ld) * esize;
        if (!b) {
            memset(yr, 0, (size_t)cols * esize);
            continue;
        }
        for (int64_t i = 0; i < cols; i++)
            memcpy(yr + (size_t)i * esize, (const char *)b + (size_t)r * esize, esize);
    }
}

#endif

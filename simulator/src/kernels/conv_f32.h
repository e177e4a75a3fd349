/*
 * conv_f32.h: fast float Conv and ConvTranspose, split into tiles over the run's threads.
 *
 * Strategies (conv_plan_f32 picks one from the geometry):
 *   - 1x1, stride 1, no padding: Y_g = W_g X_g by sim_sgemm_f32, tiles of output channels x positions
 *     (channel blocks halved, in whole micro-tiles, while the layer has fewer than 8 tasks);
 *   - depthwise and small-channel convs (1-D/2-D, at most CONV_DIRECT_MAX_TAPS taps per output:
 *     channels per group x kernel taps): a direct loop over output rows, vectorised along the row
 *     (conv_direct_f32.c), tiles of output channels;
 *   - otherwise im2col over a tile of output positions (a whole number of 16-column GEMM panels), one
 *     panel of about SGEMM_KC rows at a time written in the GEMM's packed layout and multiplied at once
 *     by sim_sgemm_f32_packed for all output channels of the group.
 * ConvTranspose: per block of output channels, GEMM into a column tile, then col2im.
 *
 * Numerical contract: every output element is a chain of fused multiply-adds in a fixed order starting
 * from its bias (Conv: taps (c, k...) in W's order, padding taps skipped by the direct loop and read as 0
 * by im2col; ConvTranspose: 0, then input positions in order, then the bias added). Tiles depend on the
 * geometry only and never change how an element is computed, so results are bit-identical for any thread
 * count. Scratch: plan->scratch bytes per worker (sim_pool_width), 64-byte aligned.
 */
#ifndef RD_KERNELS_CONV_F32_H
#define RD_KERNELS_CONV_F32_H

#include "conv_geom.h"
#include "parallel.h"

#include <stddef.h>

#define CONV_SCRATCH_BUDGET ((size_t)8 << 20) /* bytes of im2col/col2im buffer per tile (f64 and int8 kernels) */
#define CONV_TILE_BUDGET ((size_t)256 << 10)  /* bytes of im2col columns per float task (about half of L2) */
#define CONV_DIRECT_MAX_TAPS 64               /* direct loop up to this many (channel, tap) pairs per output */
#define CONV_DIRECT_ELEMS 16384               /* outputs of a direct task, in whole channels */
#define CONV_DIRECT_LEAST 2048                /* outputs of a direct task cut smaller for more tasks */

typedef enum conv_kind {
    CONV_KIND_GEMM = 0,  /* 1x1 stride 1 unpadded: GEMM per (batch, group) */
    CONV_KIND_DEPTHWISE, /* direct loop (Conv only): depthwise (int8), or any group of few taps (float) */
    CONV_KIND_TILED,     /* im2col (Conv) or col2im (ConvTranspose) over tiles */
} conv_kind;

typedef struct conv_plan {
    conv_kind kind;
    int64_t tile;   /* positions per tile (output positions for Conv, input for ConvTranspose) */
    size_t scratch; /* bytes of scratch the run needs (float kernels: per worker) */
    /* float kernels: tasks and their blocks */
    int64_t tasks;     /* tasks of one run */
    int64_t ch_block;  /* output channels per task (GEMM, direct, ConvTranspose) */
    int64_t col_block; /* output positions per task (GEMM) */
    bool transpose;    /* a ConvTranspose plan (tasks are channel blocks over column tiles) */
    bool presplit;     /* direct, strided, one group: the input split once per batch element into worker 0's
                          scratch before the tasks (conv_direct_presplit), not once per task */
} conv_plan;

/** Where a task of a conv plan writes: batch n, group grp, output channels [m0, m1), positions [p0, p0 + np). */
typedef struct conv_task_span {
    int64_t n, grp, m0, m1, p0, np;
} conv_task_span;

/** Task `task` of a tiled plan (tasks ordered batch, group, tile of plan->tile positions of out_plane). */
static inline conv_task_span conv_tiled_span(const conv_geom *g, const conv_plan *plan, int64_t out_plane, int64_t task)
{
    const int64_t tiles = sim_blocks(out_plane, plan->tile), slice = task / tiles, p0 = task % tiles * plan->tile;
    const int64_t np = out_plane - p0 < plan->tile ? out_plane - p0 : plan->tile;
    return (conv_task_span){.n = slice / g->group, .grp = slice % g->group, .p0 = p0, .np = np};
}

/** Task `task` of a direct plan (tasks ordered batch, block of plan->ch_block of the g->out_c channels). */
static inline conv_task_span conv_direct_span(const conv_geom *g, const conv_plan *plan, int64_t task)
{
    const int64_t blocks = sim_blocks(g->out_c, plan->ch_block), m0 = task % blocks * plan->ch_block;
    const int64_t m1 = m0 + plan->ch_block < g->out_c ? m0 + plan->ch_block : g->out_c;
    return (conv_task_span){.n = task / blocks, .m0 = m0, .m1 = m1};
}

/** Positions per tile so that rows * tile * elem_size <= budget (at least min(total, 16)). */
int64_t conv_tile_cols(int64_t rows, int64_t total, int64_t row_len, size_t elem_size, size_t budget);

/**
 * GEMM when pointwise, else im2col (Conv) or col2im (ConvTranspose) tiles of elements of elem_size bytes
 * under CONV_SCRATCH_BUDGET: the plan of the double kernels.
 */
void conv_plan_sized(const conv_geom *g, size_t elem_size, bool transpose, conv_plan *out);

/** Sets the positions per im2col (Conv) or column (ConvTranspose) tile of a TILED plan, and its tasks and scratch. */
void conv_plan_set_tile(const conv_geom *g, int64_t tile, conv_plan *plan);

/** Chooses the strategy and tiles for Conv with geometry g (float elements). */
void conv_plan_f32(const conv_geom *g, conv_plan *out);
/**
 * Y = conv(X, W) + B (b may be NULL) on pool's threads; scratch holds plan->scratch bytes per worker (may be
 * NULL when 0). done (may be NULL) is called for each finished region with done_user.
 */
void conv_f32(const conv_geom *g, const conv_plan *plan, const float *x, const float *w, const float *b, float *y,
              float *scratch, struct rd_pool *pool, sim_tile_fn done, void *done_user);

/** Chooses the strategy and tiles for ConvTranspose with geometry g. */
void conv_transpose_plan_f32(const conv_geom *g, conv_plan *out);
/** Y = conv_transpose(X, W) + B (b may be NULL), as conv_f32. */
void conv_transpose_f32(const conv_geom *g, const conv_plan *plan, const float *x, const float *w, const float *b,
                        float *y, float *scratch, struct rd_pool *pool, sim_tile_fn done, void *done_user);

/* conv_direct_f32.c: the direct loop. */

/** Whether the direct loop computes this Conv (1-D/2-D, few taps per output, not pointwise). */
bool conv_direct_applies(const conv_geom *g);
/** The direct plan (float and int8 kernels): tasks of about CONV_DIRECT_ELEMS outputs in whole channels. */
void conv_direct_plan(const conv_geom *g, conv_plan *out);
/** Scratch bytes of one worker of the direct loop (the input of a group split by column phase when strided). */
size_t conv_direct_scratch(const conv_geom *g);
/** A presplit plan's input of batch n split by column phase into dst (conv_direct_scratch bytes). */
void conv_direct_presplit(const conv_geom *g, const float *x, int64_t n, float *dst);
/**
 * Output channels [m0, m1) of batch n, all positions: fma chains from the bias over the taps inside the input.
 * presplit: batch n's input already split (a presplit plan), else NULL and each group is split into scratch.
 */
void conv_direct_f32(const conv_geom *g, const float *x, const float *w, const float *b, float *y, int64_t n,
                     int64_t m0, int64_t m1, float *scratch, const float *presplit);

#endif

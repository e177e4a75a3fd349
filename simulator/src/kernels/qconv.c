/*
 * qconv.c: integer Conv and ConvTranspose (strategies and contract in qconv.h).
 * All accumulation is uint32 (wrapping, no undefined behaviour), read back as int32.
 */
#include "qconv.h"
#include "conv_run.h"
#include "qgemm.h"

#include <stdbool.h>
#include <string.h>

/* each inclusion defines im2col and col2im; one of each pair is unused here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#define IM2COL_T int8_t
#define IM2COL_NAME im2col_s8
#define COL2IM_NAME col2im_s8_unused
#include "im2col_tmpl.h"
#undef IM2COL_T
#undef IM2COL_NAME
#undef COL2IM_NAME
#define IM2COL_T uint32_t
#define IM2COL_NAME im2col_u32_unused
#define COL2IM_NAME col2im_u32
#include "im2col_tmpl.h"
#undef IM2COL_T
#undef IM2COL_NAME
#undef COL2IM_NAME
#pragma GCC diagnostic pop

#define QGEMM_TASK_ROWS 96     /* output channels of a pointwise task (a multiple of QGEMM_MR) */
#define QGEMM_TASK_COLS 512    /* output positions of a pointwise task */
#define QTRANSPOSE_CHANNELS 16 /* output channels of a ConvTranspose task */
#define QGEMM_LEAST_COLS 64    /* positions of a pointwise task cut smaller for more tasks */
#define QTILED_LEAST 64        /* positions of an im2col task cut smaller for more tasks */

static size_t align64(size_t v)
{
    return (v + 63) & ~(size_t)63;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

void qconv_plan_s8(const conv_geom *g, conv_plan *out)
{
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t out_plane = conv_prod(g->out, g->nsp), slices = g->batch * g->group;
    memset(out, 0, sizeof *out);
    if (conv_is_pointwise(g)) {
        out->kind = CONV_KIND_GEMM;
        out->ch_block = mg <= QGEMM_TASK_ROWS ? mg : sim_even_block(mg, QGEMM_TASK_ROWS, 1, 1, QGEMM_MR);
        out->col_block =
            sim_even_block(out_plane, QGEMM_TASK_COLS, sim_more_blocks(slices * sim_blocks(mg, out->ch_block)),
                           QGEMM_LEAST_COLS, QGEMM_NR);
        out->tasks = slices * sim_blocks(mg, out->ch_block) * sim_blocks(out_plane, out->col_block);
        out->scratch = align64(qgemm_workspace_bytes(out->ch_block, out->col_block, cg));
    } else if (conv_direct_applies(g)) {
        conv_direct_plan(g, out);
    } else {
        const int64_t rows = cg * conv_prod(g->k, g->nsp);
        out->kind = CONV_KIND_TILED;
        const int64_t cap = conv_tile_cols(rows, out_plane, g->out[g->nsp - 1], 1, CONV_TILE_BUDGET);
        out->tile = sim_even_block(out_plane, cap, sim_more_blocks(slices), QTILED_LEAST, 1);
        out->tasks = slices * sim_blocks(out_plane, out->tile);
        out->scratch = align64((size_t)rows * (size_t)out->tile) + align64(qgemm_workspace_bytes(mg, out->tile, rows));
    }
    if (out_plane == 0 || mg == 0)
        out->tasks = 0;
}

typedef struct qconv_job {
    conv_run r;
    const qconv_args *a;
} qconv_job;

/* Pointwise: task = (batch, group, channel block, position block). */
static void gemm_task(void *arg, int64_t task, int worker)
{
    const qconv_job *j = arg;
    const conv_geom *g = j->r.g;
    const conv_task_span t = conv_run_gemm_span(&j->r, task);
    const int64_t n = t.n, grp = t.grp, r0 = t.m0, r1 = t.m1, p0 = t.p0, p1 = t.p0 + t.np;
    const int64_t c0 = grp * j->r.mg + r0;
    const qgemm_mat a = {.data = j->a->wq + c0 * j->r.cg, .rs = j->r.cg, .cs = 1, .zp = 0};
    const qgemm_mat b = {.data = j->a->xq + (n * g->in_c + grp * j->r.cg) * j->r.in_plane + p0,
                         .rs = j->r.in_plane,
                         .cs = 1,
                         .zp = j->a->x_zp};
    sim_qgemm_s8s8s32(r1 - r0, p1 - p0, j->r.cg, &a, &b, j->a->bias ? j->a->bias + c0 : NULL, QGEMM_BIAS_PER_M,
                      j->a->y + (n * g->out_c + c0) * j->r.out_plane + p0, j->r.out_plane,
                      conv_run_scratch(&j->r, worker));
    conv_run_done(&j->r, n, c0, grp * j->r.mg + r1, p0, p1, worker);
}

/*
 * Direct: task = (batch, block of output channels). The float loop leaves exact integer sums (qconv.h) in y's
 * memory; they become int32 and take the bias (wrapping like the register).
 */
static void direct_task(void *arg, int64_t task, int worker)
{
    const qconv_job *j = arg;
    const conv_geom *g = j->r.g;
    const conv_task_span t = conv_direct_span(g, j->r.plan, task + j->r.task0);
    const int64_t n = t.n, m0 = t.m0, m1 = t.m1;
    float *yf = (float *)(void *)j->a->y;
    conv_direct_f32(g, j->a->xc, j->a->wc, NULL, yf, n, m0, m1, conv_run_scratch(&j->r, worker), j->r.presplit);
    const int64_t plane = j->r.out_plane; /* a local: the stores below may alias any memory, j included */
    for (int64_t m = m0; m < m1; m++) {
        const uint32_t b = j->a->bias ? (uint32_t)j->a->bias[m] : 0;
        float *row = yf + (n * g->out_c + m) * plane;
        for (int64_t i = 0; i < plane; i++) {
            const uint32_t v = (uint32_t)(int32_t)row[i] + b;
            memcpy(row + i, &v, sizeof v);
        }
    }
    conv_run_done(&j->r, n, m0, m1, 0, j->r.out_plane, worker);
}

/* im2col: task = (batch, group, tile of output positions), all channels of the group. */
static void tiled_task(void *arg, int64_t task, int worker)
{
    const qconv_job *j = arg;
    const conv_geom *g = j->r.g;
    const conv_task_span t = conv_tiled_span(g, j->r.plan, j->r.out_plane, task);
    const int64_t n = t.n, grp = t.grp, p0 = t.p0, np = t.np, rows = j->r.cg * j->r.ksz;
    char *s = conv_run_scratch(&j->r, worker);
    int8_t *col = (int8_t *)s;
    void *ws = s + align64((size_t)rows * (size_t)j->r.plan->tile);
    im2col_s8(g, j->a->xq + (n * g->in_c + grp * j->r.cg) * j->r.in_plane, j->r.cg, p0, np, (int8_t)j->a->x_zp, col);
    const qgemm_mat a = {.data = j->a->wq + grp * j->r.mg * rows, .rs = rows, .cs = 1, .zp = 0};
    const qgemm_mat b = {.data = col, .rs = np, .cs = 1, .zp = j->a->x_zp};
    sim_qgemm_s8s8s32(j->r.mg, np, rows, &a, &b, j->a->bias ? j->a->bias + grp * j->r.mg : NULL, QGEMM_BIAS_PER_M,
                      j->a->y + (n * g->out_c + grp * j->r.mg) * j->r.out_plane + p0, j->r.out_plane, ws);
    conv_run_done(&j->r, n, grp * j->r.mg, grp * j->r.mg + j->r.mg, p0, p0 + np, worker);
}

void qconv_s8(const conv_geom *g, const conv_plan *plan, const qconv_args *a, void *scratch, struct rd_pool *pool,
              sim_tile_fn done, void *done_user)
{
    qconv_job j = {.r = conv_run_of(g, plan, scratch, done, done_user), .a = a};
    if (plan->kind == CONV_KIND_DEPTHWISE && plan->presplit && scratch) {
        conv_run_presplit(&j.r, a->xc, pool, direct_task, &j);
        return;
    }
    sim_task_fn fn = plan->kind == CONV_KIND_GEMM        ? gemm_task
                     : plan->kind == CONV_KIND_DEPTHWISE ? direct_task
                                                         : tiled_task;
    sim_parallel(pool, plan->tasks, fn, &j);
}

/* ------------------------------------------------------------------------------------------------- */

void qconv_transpose_plan_s8(const conv_geom *g, conv_plan *out)
{
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group, ksz = conv_prod(g->k, g->nsp);
    const int64_t in_plane = conv_prod(g->in, g->nsp), out_plane = conv_prod(g->out, g->nsp);
    memset(out, 0, sizeof *out);
    out->kind = CONV_KIND_TILED;
    out->transpose = true;
    out->ch_block = mg < QTRANSPOSE_CHANNELS ? (mg > 0 ? mg : 1) : QTRANSPOSE_CHANNELS;
    const int64_t rows = out->ch_block * ksz;
    out->tile = conv_tile_cols(rows, in_plane, g->in[g->nsp - 1], sizeof(int32_t), CONV_TILE_BUDGET);
    out->tasks = out_plane > 0 && mg > 0 ? g->batch * g->group * sim_blocks(mg, out->ch_block) : 0;
    out->scratch = align64((size_t)rows * (size_t)out->tile * sizeof(int32_t)) +
                   align64(qgemm_workspace_bytes(rows, out->tile, cg));
}

/* ConvTranspose: task = (batch, group, block of output channels): GEMM into columns, col2im, then the bias. */
static void transpose_task(void *arg, int64_t task, int worker)
{
    const qconv_job *j = arg;
    const conv_geom *g = j->r.g;
    const conv_task_span t = conv_run_transpose_span(&j->r, task);
    const int64_t n = t.n, grp = t.grp, m0 = t.m0, m1 = t.m1;
    const int64_t rows = (m1 - m0) * j->r.ksz, row_stride = j->r.mg * j->r.ksz;
    char *s = conv_run_scratch(&j->r, worker);
    int32_t *col = (int32_t *)(void *)s;
    void *ws = s + align64((size_t)(j->r.plan->ch_block * j->r.ksz) * (size_t)j->r.plan->tile * sizeof(int32_t));
    uint32_t *y = (uint32_t *)(j->a->y + (n * g->out_c + grp * j->r.mg + m0) * j->r.out_plane);
    memset(y, 0, (size_t)((m1 - m0) * j->r.out_plane) * sizeof(uint32_t));
    const int8_t *xg = j->a->xq + (n * g->in_c + grp * j->r.cg) * j->r.in_plane;
    /* A(r, c) = W[c, m0 * taps + r]: W is [C, M/group, k...] */
    const qgemm_mat a = {
        .data = j->a->wq + grp * j->r.cg * row_stride + m0 * j->r.ksz, .rs = 1, .cs = row_stride, .zp = 0};
    for (int64_t p0 = 0; p0 < j->r.in_plane && rows > 0; p0 += j->r.plan->tile) {
        const int64_t np = min64(j->r.plan->tile, j->r.in_plane - p0);
        const qgemm_mat b = {.data = xg + p0, .rs = j->r.in_plane, .cs = 1, .zp = j->a->x_zp};
        sim_qgemm_s8s8s32(rows, np, j->r.cg, &a, &b, NULL, QGEMM_BIAS_NONE, col, np, ws);
        col2im_u32(g, (const uint32_t *)col, m1 - m0, p0, np, y);
    }
    if (j->a->bias) {
        for (int64_t m = m0; m < m1; m++) {
            uint32_t *ym = y + (m - m0) * j->r.out_plane;
            const uint32_t v = (uint32_t)j->a->bias[grp * j->r.mg + m];
            for (int64_t i = 0; i < j->r.out_plane; i++)
                ym[i] += v;
        }
    }
    conv_run_done(&j->r, n, grp * j->r.mg + m0, grp * j->r.mg + m1, 0, j->r.out_plane, worker);
}

void qconv_transpose_s8(const conv_geom *g, const conv_plan *plan, const qconv_args *a, void *scratch,
                        struct rd_pool *pool, sim_tile_fn done, void *done_user)
{
    qconv_job j = {.r = conv_run_of(g, plan, scratch, done, done_user), .a = a};
    sim_parallel(pool, plan->tasks, transpose_task, &j);
}

/*
 * conv_f64.c: Conv and ConvTranspose in double (contract in conv_f64.h). Used by the int16 layers only,
 * where the operands are integers and the sums therefore exact.
 */
#include "conv_f64.h"
#include "conv_run.h"
#include "blas_threads.h"

#include <cblas.h>
#include <stdbool.h>
#include <string.h>

#define IM2COL_T double
#define IM2COL_NAME im2col_f64
#define COL2IM_NAME col2im_f64
#include "im2col_tmpl.h"
#undef IM2COL_T
#undef IM2COL_NAME
#undef COL2IM_NAME

#define F64_TILE_BUDGET ((size_t)1 << 20) /* bytes of im2col/col2im columns per task */

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

void conv_plan_f64(const conv_geom *g, conv_plan *out)
{
    const int64_t cg = g->in_c / g->group, out_plane = conv_prod(g->out, g->nsp);
    memset(out, 0, sizeof *out);
    out->kind = conv_is_pointwise(g) ? CONV_KIND_GEMM : CONV_KIND_TILED;
    const int64_t rows = cg * conv_prod(g->k, g->nsp);
    out->tile = conv_tile_cols(out->kind == CONV_KIND_GEMM ? cg : rows, out_plane, g->out[g->nsp - 1], sizeof(double),
                               F64_TILE_BUDGET);
    out->tasks = out_plane > 0 && g->out_c > 0 ? g->batch * g->group * sim_blocks(out_plane, out->tile) : 0;
    out->scratch =
        out->kind == CONV_KIND_GEMM ? 64 : ((size_t)rows * (size_t)out->tile * sizeof(double) + 63) / 64 * 64;
}

typedef struct f64_job {
    conv_run r;
    const double *x, *w, *b;
    double *y;
} f64_job;

/* Conv: task = (batch, group, tile of output positions). Integer-valued doubles: exact in any order. */
static void conv_task(void *arg, int64_t task, int worker)
{
    const f64_job *j = arg;
    const conv_geom *g = j->r.g;
    const conv_task_span t = conv_tiled_span(g, j->r.plan, j->r.out_plane, task);
    const int64_t n = t.n, grp = t.grp, p0 = t.p0, np = t.np, rows = j->r.cg * j->r.ksz;
    const double *xg = j->x + (n * g->in_c + grp * j->r.cg) * j->r.in_plane;
    const double *wg = j->w + grp * j->r.mg * rows;
    double *yt = j->y + (n * g->out_c + grp * j->r.mg) * j->r.out_plane + p0;
    conv_fill_rows(yt, sizeof(double), j->r.mg, np, j->r.out_plane, j->b ? j->b + grp * j->r.mg : NULL);
    if (rows == 0 || j->r.mg == 0)
        return;
    if (j->r.plan->kind == CONV_KIND_GEMM) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)j->r.mg, (int)np, (int)j->r.cg, 1.0, wg,
                    (int)j->r.cg, xg + p0, (int)j->r.in_plane, 1.0, yt, (int)j->r.out_plane);
        return;
    }
    double *col = (double *)(void *)conv_run_scratch(&j->r, worker);
    im2col_f64(g, xg, j->r.cg, p0, np, 0.0, col);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)j->r.mg, (int)np, (int)rows, 1.0, wg, (int)rows, col,
                (int)np, 1.0, yt, (int)j->r.out_plane);
}

void conv_f64(const conv_geom *g, const conv_plan *plan, const double *x, const double *w, const double *b, double *y,
              double *scratch, struct rd_pool *pool)
{
    f64_job j = {.r = conv_run_of(g, plan, scratch, NULL, NULL), .x = x, .w = w, .b = b, .y = y};
    blas_use_one_thread();
    sim_parallel(pool, plan->tasks, conv_task, &j);
}

void conv_transpose_plan_f64(const conv_geom *g, conv_plan *out)
{
    const int64_t mg = g->out_c / g->group, in_plane = conv_prod(g->in, g->nsp), out_plane = conv_prod(g->out, g->nsp);
    memset(out, 0, sizeof *out);
    out->kind = CONV_KIND_TILED;
    out->transpose = true;
    out->ch_block = mg < 16 ? (mg > 0 ? mg : 1) : 16;
    const int64_t rows = out->ch_block * conv_prod(g->k, g->nsp);
    out->tile = conv_tile_cols(rows, in_plane, g->in[g->nsp - 1], sizeof(double), F64_TILE_BUDGET);
    out->tasks = out_plane > 0 && mg > 0 ? g->batch * g->group * sim_blocks(mg, out->ch_block) : 0;
    out->scratch = ((size_t)rows * (size_t)out->tile * sizeof(double) + 63) / 64 * 64;
}

/* ConvTranspose: task = (batch, group, block of output channels): dgemm into columns, then col2im. */
static void transpose_task(void *arg, int64_t task, int worker)
{
    const f64_job *j = arg;
    const conv_geom *g = j->r.g;
    const conv_task_span t = conv_run_transpose_span(&j->r, task);
    const int64_t n = t.n, grp = t.grp, m0 = t.m0, m1 = t.m1;
    const int64_t rows = (m1 - m0) * j->r.ksz, row_stride = j->r.mg * j->r.ksz;
    double *ym = j->y + (n * g->out_c + grp * j->r.mg + m0) * j->r.out_plane;
    conv_fill_rows(ym, sizeof(double), m1 - m0, j->r.out_plane, j->r.out_plane,
                   j->b ? j->b + grp * j->r.mg + m0 : NULL);
    if (j->r.cg == 0 || rows == 0)
        return;
    const double *xg = j->x + (n * g->in_c + grp * j->r.cg) * j->r.in_plane;
    const double *wg = j->w + grp * j->r.cg * row_stride + m0 * j->r.ksz; /* W is [C, M/group, k...] */
    double *col = (double *)(void *)conv_run_scratch(&j->r, worker);
    for (int64_t p0 = 0; p0 < j->r.in_plane; p0 += j->r.plan->tile) {
        const int64_t np = min64(j->r.plan->tile, j->r.in_plane - p0);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)rows, (int)np, (int)j->r.cg, 1.0, wg, (int)row_stride,
                    xg + p0, (int)j->r.in_plane, 0.0, col, (int)np);
        col2im_f64(g, col, m1 - m0, p0, np, ym);
    }
}

void conv_transpose_f64(const conv_geom *g, const conv_plan *plan, const double *x, const double *w, const double *b,
                        double *y, double *scratch, struct rd_pool *pool)
{
    f64_job j = {.r = conv_run_of(g, plan, scratch, NULL, NULL), .x = x, .w = w, .b = b, .y = y};
    blas_use_one_thread();
    sim_parallel(pool, plan->tasks, transpose_task, &j);
}

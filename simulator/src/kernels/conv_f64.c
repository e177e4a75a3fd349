/*
 * conv_f64.c: Conv and ConvTranspose in double (contract in conv_f64.h). Used by the int16 layers only,
 * where the operands are integers and the sums therefore exact.
 */
#include "conv_f64.h"
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

static void fill_rows(double *y, int64_t rows, int64_t len, int64_t ld, const double *b)
{
    for (int64_t r = 0; r < rows; r++) {
        const double v = b ? b[r] : 0.0;
        double *yr = y + r * ld;
        for (int64_t i = 0; i < len; i++)
            yr[i] = v;
    }
}

typedef struct f64_job {
    const conv_geom *g;
    const conv_plan *plan;
    const double *x, *w, *b;
    double *y;
    char *scratch;
    int64_t cg, mg, in_plane, out_plane, ksz;
} f64_job;

static f64_job job_of(const conv_geom *g, const conv_plan *plan, const double *x, const double *w, const double *b,
                      double *y, double *scratch)
{
    return (f64_job){.g = g,
                     .plan = plan,
                     .x = x,
                     .w = w,
                     .b = b,
                     .y = y,
                     .scratch = (char *)scratch,
                     .cg = g->in_c / g->group,
                     .mg = g->out_c / g->group,
                     .in_plane = conv_prod(g->in, g->nsp),
                     .out_plane = conv_prod(g->out, g->nsp),
                     .ksz = conv_prod(g->k, g->nsp)};
}

/* Conv: task = (batch, group, tile of output positions). Integer-valued doubles: exact in any order. */
static void conv_task(void *arg, int64_t task, int worker)
{
    const f64_job *j = arg;
    const conv_geom *g = j->g;
    const conv_task_span t = conv_tiled_span(g, j->plan, j->out_plane, task);
    const int64_t n = t.n, grp = t.grp, p0 = t.p0, np = t.np, rows = j->cg * j->ksz;
    const double *xg = j->x + (n * g->in_c + grp * j->cg) * j->in_plane;
    const double *wg = j->w + grp * j->mg * rows;
    double *yt = j->y + (n * g->out_c + grp * j->mg) * j->out_plane + p0;
    fill_rows(yt, j->mg, np, j->out_plane, j->b ? j->b + grp * j->mg : NULL);
    if (rows == 0 || j->mg == 0)
        return;
    if (j->plan->kind == CONV_KIND_GEMM) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)j->mg, (int)np, (int)j->cg, 1.0, wg, (int)j->cg,
                    xg + p0, (int)j->in_plane, 1.0, yt, (int)j->out_plane);
        return;
    }
    double *col = (double *)(void *)(j->scratch ? j->scratch + (size_t)worker * j->plan->scratch : NULL);
    im2col_f64(g, xg, j->cg, p0, np, 0.0, col);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)j->mg, (int)np, (int)rows, 1.0, wg, (int)rows, col,
                (int)np, 1.0, yt, (int)j->out_plane);
}

void conv_f64(const conv_geom *g, const conv_plan *plan, const double *x, const double *w, const double *b, double *y,
              double *scratch, struct rd_pool *pool)
{
    f64_job j = job_of(g, plan, x, w, b, y, scratch);
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
    const conv_geom *g = j->g;
    const int64_t blocks = sim_blocks(j->mg, j->plan->ch_block);
    const int64_t slice = task / blocks, n = slice / g->group, grp = slice % g->group;
    const int64_t m0 = task % blocks * j->plan->ch_block, m1 = min64(m0 + j->plan->ch_block, j->mg);
    const int64_t rows = (m1 - m0) * j->ksz, row_stride = j->mg * j->ksz;
    double *ym = j->y + (n * g->out_c + grp * j->mg + m0) * j->out_plane;
    fill_rows(ym, m1 - m0, j->out_plane, j->out_plane, j->b ? j->b + grp * j->mg + m0 : NULL);
    if (j->cg == 0 || rows == 0)
        return;
    const double *xg = j->x + (n * g->in_c + grp * j->cg) * j->in_plane;
    const double *wg = j->w + grp * j->cg * row_stride + m0 * j->ksz; /* W is [C, M/group, k...] */
    double *col = (double *)(void *)(j->scratch ? j->scratch + (size_t)worker * j->plan->scratch : NULL);
    for (int64_t p0 = 0; p0 < j->in_plane; p0 += j->plan->tile) {
        const int64_t np = min64(j->plan->tile, j->in_plane - p0);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)rows, (int)np, (int)j->cg, 1.0, wg, (int)row_stride,
                    xg + p0, (int)j->in_plane, 0.0, col, (int)np);
        col2im_f64(g, col, m1 - m0, p0, np, ym);
    }
}

void conv_transpose_f64(const conv_geom *g, const conv_plan *plan, const double *x, const double *w, const double *b,
                        double *y, double *scratch, struct rd_pool *pool)
{
    f64_job j = job_of(g, plan, x, w, b, y, scratch);
    blas_use_one_thread();
    sim_parallel(pool, plan->tasks, transpose_task, &j);
}

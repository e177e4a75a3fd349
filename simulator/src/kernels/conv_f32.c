/*
 * conv_f32.c: fast float Conv and ConvTranspose (strategies and contract in conv_f32.h), split into tasks
 * over the run's pool. Workload: every conv layer of the models; 2-D 3x3, 1x1 and depthwise dominate.
 */
#include "conv_f32.h"
#include "conv_run.h"
#include "sgemm_f32.h"

#include <stdbool.h>
#include <string.h>

#define IM2COL_T float
#define IM2COL_NAME im2col_f32
#define COL2IM_NAME col2im_f32
#include "im2col_tmpl.h"
#undef IM2COL_T
#undef IM2COL_NAME
#undef COL2IM_NAME

#define GEMM_ROWS 96       /* output channels of a pointwise task (a multiple of SGEMM_MR) */
#define GEMM_COLS 256      /* output positions of a pointwise task (a multiple of SGEMM_NR) */
#define GEMM_LEAST_COLS 64 /* positions of a pointwise task cut smaller for more tasks: 4 micro-tiles */
#define TILED_LEAST 64     /* positions of an im2col task cut smaller for more tasks */

static size_t align64(size_t v)
{
    return (v + 63) & ~(size_t)63;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Input channels whose im2col rows (channel x taps) one panel of a tiled Conv holds: about SGEMM_KC rows. */
static int64_t panel_channels(const conv_geom *g)
{
    const int64_t ksz = conv_prod(g->k, g->nsp), per = ksz > 0 ? SGEMM_KC / ksz : 1;
    return per < 1 ? 1 : per;
}

/* Rows of a tiled Conv's panel buffer: the channels of panel_channels (at most those of a group) x taps. */
static int64_t panel_rows(const conv_geom *g)
{
    const int64_t cg = g->in_c / g->group, ch = panel_channels(g);
    return (ch < cg ? ch : cg) * conv_prod(g->k, g->nsp);
}

int64_t conv_tile_cols(int64_t rows, int64_t total, int64_t row_len, size_t elem_size, size_t budget)
{
    if (rows < 1)
        rows = 1;
    int64_t cols = (int64_t)(budget / elem_size) / rows;
    if (cols >= total)
        return total;
    if (row_len > 0 && cols >= row_len)
        cols -= cols % row_len; /* whole output rows keep the inner copies long */
    const int64_t floor_cols = total < 16 ? total : 16;
    return cols < floor_cols ? floor_cols : cols;
}

void conv_plan_sized(const conv_geom *g, size_t elem_size, bool transpose, conv_plan *out)
{
    memset(out, 0, sizeof *out);
    if (conv_is_pointwise(g)) {
        out->kind = CONV_KIND_GEMM;
        return;
    }
    /* Conv tiles output positions over its (C/group * taps) rows; ConvTranspose input positions over
       (M/group * taps) */
    const int64_t per_group = transpose ? g->out_c / g->group : g->in_c / g->group;
    const int64_t rows = per_group * conv_prod(g->k, g->nsp);
    const int64_t *tiled = transpose ? g->in : g->out;
    out->kind = CONV_KIND_TILED;
    out->tile = conv_tile_cols(rows, conv_prod(tiled, g->nsp), tiled[g->nsp - 1], elem_size, CONV_SCRATCH_BUDGET);
    out->scratch = (size_t)rows * (size_t)out->tile * elem_size;
}

void conv_plan_f32(const conv_geom *g, conv_plan *out)
{
    memset(out, 0, sizeof *out);
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t out_plane = conv_prod(g->out, g->nsp), slices = g->batch * g->group;
    if (conv_is_pointwise(g)) {
        out->kind = CONV_KIND_GEMM;
        out->ch_block = mg <= GEMM_ROWS ? mg : sim_even_block(mg, GEMM_ROWS, 1, 1, SGEMM_MR);
        /* enough tasks from the positions first (each task packs its columns once for all its channels) */
        const int64_t have = slices * sim_blocks(mg, out->ch_block);
        out->col_block = sim_even_block(out_plane, GEMM_COLS, sim_more_blocks(have), GEMM_LEAST_COLS, SGEMM_NR);
        /* a small map with few channels (mobilenet_v2's 14x14 projections to 64 and 96) would still be one or
           two tasks: halve the channel blocks (whole micro-tiles) while the tasks are too few */
        while (slices * sim_blocks(mg, out->ch_block) * sim_blocks(out_plane, out->col_block) < SIM_MIN_TASKS &&
               out->ch_block > 2 * SGEMM_MR)
            out->ch_block = ((out->ch_block + 1) / 2 + SGEMM_MR - 1) / SGEMM_MR * SGEMM_MR;
        out->tasks = slices * sim_blocks(mg, out->ch_block) * sim_blocks(out_plane, out->col_block);
        out->scratch = align64(sgemm_f32_work_bytes(cg, out->col_block));
    } else if (conv_direct_applies(g)) {
        conv_direct_plan(g, out);
    } else {
        const int64_t rows = cg * conv_prod(g->k, g->nsp);
        out->kind = CONV_KIND_TILED;
        int64_t tile = conv_tile_cols(rows, out_plane, g->out[g->nsp - 1], sizeof(float), CONV_TILE_BUDGET);
        if (tile < out_plane && tile > SGEMM_NR)
            tile -= tile % SGEMM_NR; /* whole panels: no micro-tile computes columns it drops */
        /* even tiles, enough of them (the tile only bounds a task's work: the panels are 16 positions) */
        tile = sim_even_block(out_plane, tile, sim_more_blocks(slices), TILED_LEAST, SGEMM_NR);
        conv_plan_set_tile(g, tile, out);
    }
    if (out_plane == 0 || mg == 0)
        out->tasks = 0;
}

/* ConvTranspose's column tile: rows (channel block x taps) by `tile` input positions, and the GEMM's packing. */
static void transpose_tile(const conv_geom *g, int64_t tile, conv_plan *plan)
{
    const int64_t cg = g->in_c / g->group, rows = plan->ch_block * conv_prod(g->k, g->nsp);
    plan->tile = tile;
    plan->scratch = align64((size_t)rows * (size_t)tile * sizeof(float)) + align64(sgemm_f32_work_bytes(cg, tile));
}

void conv_plan_set_tile(const conv_geom *g, int64_t tile, conv_plan *plan)
{
    const int64_t mg = g->out_c / g->group, out_plane = conv_prod(g->out, g->nsp);
    if (tile < 1)
        return;
    if (plan->transpose) {
        transpose_tile(g, tile, plan);
        return;
    }
    if (plan->kind != CONV_KIND_TILED)
        return;
    plan->tile = tile;
    plan->tasks = out_plane > 0 && mg > 0 ? g->batch * g->group * sim_blocks(out_plane, tile) : 0;
    plan->scratch = align64((size_t)panel_rows(g) * SGEMM_NR * sizeof(float));
}

typedef struct conv_job {
    conv_run r;
    const float *x, *w, *b;
    float *y;
} conv_job;

/* Chains that start from 0 (a constant, shared by every call) */
static const float zero_value = 0.0f;
static const sgemm_start zero_start = {.from = &zero_value, .stride = 0};

/* The GEMM's chains start from the bias of output channel m onwards, or from 0: C is not filled first. */
static sgemm_start bias_start(const conv_job *j, int64_t m)
{
    return j->b ? (sgemm_start){.from = j->b + m, .stride = 1} : zero_start;
}

static void gemm_task(void *arg, int64_t task, int worker)
{
    const conv_job *j = arg;
    const conv_geom *g = j->r.g;
    const conv_task_span t = conv_run_gemm_span(&j->r, task);
    const int64_t n = t.n, grp = t.grp, r0 = t.m0, r1 = t.m1, p0 = t.p0, p1 = t.p0 + t.np;
    float *yt = j->y + (n * g->out_c + grp * j->r.mg + r0) * j->r.out_plane + p0;
    const sgemm_start start = bias_start(j, grp * j->r.mg + r0);
    const sgemm_mat a = {.data = j->w + (grp * j->r.mg + r0) * j->r.cg, .rs = j->r.cg, .cs = 1};
    const sgemm_mat bm = {
        .data = j->x + (n * g->in_c + grp * j->r.cg) * j->r.in_plane + p0, .rs = j->r.in_plane, .cs = 1};
    sim_sgemm_f32(r1 - r0, p1 - p0, j->r.cg, &a, &bm, yt, j->r.out_plane,
                  (float *)(void *)conv_run_scratch(&j->r, worker), &start);
    conv_run_done(&j->r, n, grp * j->r.mg + r0, grp * j->r.mg + r1, p0, p1, worker);
}

/* Direct: task = (batch, block of output channels); a presplit plan's run one batch element at a time. */
static void direct_task(void *arg, int64_t task, int worker)
{
    const conv_job *j = arg;
    const conv_task_span t = conv_direct_span(j->r.g, j->r.plan, task + j->r.task0);
    conv_direct_f32(j->r.g, j->x, j->w, j->b, j->y, t.n, t.m0, t.m1, (float *)(void *)conv_run_scratch(&j->r, worker),
                    j->r.presplit);
    conv_run_done(&j->r, t.n, t.m0, t.m1, 0, j->r.out_plane, worker);
}

/* Values [a, b) of a run of len taps from src (element stride sw), padding zeros around them. */
static void panel_run(float *d, const float *src, int64_t sw, int64_t a, int64_t b, int64_t len)
{
    if (sw == 1 && a == 0 && b == SGEMM_NR) { /* the common case: a fixed-size copy the compiler inlines */
        memcpy(d, src, SGEMM_NR * sizeof(float));
        return;
    }
    for (int64_t t = 0; t < a; t++)
        d[t] = 0.0f;
    if (sw == 1) {
        if (b > a)
            memcpy(d + a, src, (size_t)(b - a) * sizeof(float));
    } else {
        for (int64_t t = a; t < b; t++)
            d[t] = src[(t - a) * sw];
    }
    for (int64_t t = b; t < len; t++)
        d[t] = 0.0f;
}

/*
 * One GEMM panel of a 1-D or 2-D Conv's im2col: positions [p, p + w) (w <= SGEMM_NR) in columns 0 .. w - 1,
 * rows (c, kh, kw) in W's order with stride SGEMM_NR; columns w .. SGEMM_NR - 1 are 0. A run of positions
 * along one output row reads one input row per tap: a plain copy when the column stride is 1.
 */
static void panel_2d(const conv_geom *g, const float *xg, int64_t cg, int64_t ksz, int64_t p, int64_t w, float *dst)
{
    const bool two = g->nsp == 2;
    const int64_t out_w = g->out[g->nsp - 1], in_h = two ? g->in[0] : 1, in_w = g->in[g->nsp - 1];
    const int64_t k_h = two ? g->k[0] : 1, k_w = g->k[g->nsp - 1], sw = g->stride[g->nsp - 1];
    const int64_t in_plane = in_h * in_w, row_stride = ksz * SGEMM_NR;
    for (int64_t j0 = 0; j0 < w;) {
        const int64_t oh = (p + j0) / out_w, ow0 = (p + j0) % out_w, len = min64(w - j0, out_w - ow0);
        for (int64_t kh = 0; kh < k_h; kh++) {
            const int64_t ih = two ? oh * g->stride[0] + kh * g->dil[0] - g->pad[0] : 0;
            const bool row_in = ih >= 0 && ih < in_h;
            for (int64_t kw = 0; kw < k_w; kw++) {
                const int64_t koff = kw * g->dil[g->nsp - 1] - g->pad[g->nsp - 1];
                /* run positions t (output column ow0 + t) whose input column lies in [0, in_w): [a, b) */
                const int64_t lo = koff >= 0 ? 0 : (-koff + sw - 1) / sw;
                const int64_t hi = in_w - koff <= 0 ? 0 : (in_w - koff - 1) / sw + 1;
                int64_t a = row_in ? lo - ow0 : 0, b = row_in ? hi - ow0 : 0;
                a = a < 0 ? 0 : a > len ? len : a;
                b = b < a ? a : b > len ? len : b;
                float *d = dst + (kh * k_w + kw) * SGEMM_NR + j0;
                const int64_t src0 = row_in ? ih * in_w + (ow0 + a) * sw + koff : 0;
                for (int64_t c = 0; c < cg; c++)
                    panel_run(d + c * row_stride, xg + c * in_plane + src0, sw, a, b, len);
            }
        }
        j0 += len;
    }
    if (w < SGEMM_NR)
        for (int64_t r = 0; r < cg * ksz; r++)
            memset(dst + r * SGEMM_NR + w, 0, (size_t)(SGEMM_NR - w) * sizeof(float));
}

/*
 * One 16-position panel of the im2col (positions [p, p + w), w <= SGEMM_NR) for input channels xg[0 .. cg) into
 * bp (cg x taps rows of SGEMM_NR; columns w .. SGEMM_NR - 1 set to 0). 3-D and wider: the generic im2col of
 * w positions, spread to the panel layout.
 */
static void im2col_panel(const conv_geom *g, const float *xg, int64_t cg, int64_t ksz, int64_t p, int64_t w, float *bp)
{
    if (g->nsp <= 2) {
        panel_2d(g, xg, cg, ksz, p, w, bp);
        return;
    }
    im2col_f32(g, xg, cg, p, w, 0.0f, bp);
    if (w == SGEMM_NR)
        return;
    for (int64_t r = cg * ksz - 1; r >= 0; r--) {
        memmove(bp + r * SGEMM_NR, bp + r * w, (size_t)w * sizeof(float));
        memset(bp + r * SGEMM_NR + w, 0, (size_t)(SGEMM_NR - w) * sizeof(float));
    }
}

/*
 * im2col: task = (batch, group, tile of output positions), all channels of the group. Per panel of 16
 * positions and block of about SGEMM_KC rows (whole input channels), the columns are written straight in
 * the GEMM's packed layout and multiplied at once while they are in L1 (no second copy by a packing, no
 * tile-sized buffer). The blocks run in increasing k, so each element is still one chain from its bias.
 */
static void tiled_task(void *arg, int64_t task, int worker)
{
    const conv_job *j = arg;
    const conv_geom *g = j->r.g;
    const conv_task_span t = conv_tiled_span(g, j->r.plan, j->r.out_plane, task);
    const int64_t n = t.n, grp = t.grp, p0 = t.p0, np = t.np, rows = j->r.cg * j->r.ksz, per = panel_channels(g);
    float *panel = (float *)(void *)conv_run_scratch(&j->r, worker);
    float *yt = j->y + (n * g->out_c + grp * j->r.mg) * j->r.out_plane + p0;
    const sgemm_start start = bias_start(j, grp * j->r.mg);
    if (rows <= 0)
        conv_fill_rows(yt, sizeof(float), j->r.mg, np, j->r.out_plane, j->b ? j->b + grp * j->r.mg : NULL);
    const float *xg = j->x + (n * g->in_c + grp * j->r.cg) * j->r.in_plane, *wg = j->w + grp * j->r.mg * rows;
    for (int64_t q = 0; rows > 0 && q < np; q += SGEMM_NR) {
        const int64_t w = min64(SGEMM_NR, np - q);
        for (int64_t c0 = 0; c0 < j->r.cg; c0 += per) {
            const int64_t nc = min64(per, j->r.cg - c0);
            im2col_panel(g, xg + c0 * j->r.in_plane, nc, j->r.ksz, p0 + q, w, panel);
            const sgemm_mat a = {.data = wg + c0 * j->r.ksz, .rs = rows, .cs = 1};
            sim_sgemm_f32_packed(j->r.mg, w, nc * j->r.ksz, &a, panel, yt + q, j->r.out_plane, c0 == 0 ? &start : NULL,
                                 false);
        }
    }
    conv_run_done(&j->r, n, grp * j->r.mg, grp * j->r.mg + j->r.mg, p0, p0 + np, worker);
}

void conv_f32(const conv_geom *g, const conv_plan *plan, const float *x, const float *w, const float *b, float *y,
              float *scratch, struct rd_pool *pool, sim_tile_fn done, void *done_user)
{
    conv_job j = {.r = conv_run_of(g, plan, scratch, done, done_user), .x = x, .w = w, .b = b, .y = y};
    if (plan->kind == CONV_KIND_DEPTHWISE && plan->presplit && scratch) {
        conv_run_presplit(&j.r, x, pool, direct_task, &j);
        return;
    }
    sim_task_fn fn = plan->kind == CONV_KIND_GEMM        ? gemm_task
                     : plan->kind == CONV_KIND_DEPTHWISE ? direct_task
                                                         : tiled_task;
    sim_parallel(pool, plan->tasks, fn, &j);
}

/* ------------------------------------------------------------------------------------------------- */

void conv_transpose_plan_f32(const conv_geom *g, conv_plan *out)
{
    memset(out, 0, sizeof *out);
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group, ksz = conv_prod(g->k, g->nsp);
    const int64_t in_plane = conv_prod(g->in, g->nsp), out_plane = conv_prod(g->out, g->nsp);
    out->kind = conv_is_pointwise(g) ? CONV_KIND_GEMM : CONV_KIND_TILED;
    /* blocks of output channels so that a column tile of at least one input row stays small */
    out->ch_block = mg < GEMM_ROWS / SGEMM_MR ? mg : GEMM_ROWS / SGEMM_MR;
    if (out->ch_block < 1)
        out->ch_block = 1;
    out->transpose = true;
    out->tasks = out_plane > 0 && mg > 0 && cg >= 0 ? g->batch * g->group * sim_blocks(mg, out->ch_block) : 0;
    transpose_tile(g, conv_tile_cols(out->ch_block * ksz, in_plane, g->in[g->nsp - 1], sizeof(float), CONV_TILE_BUDGET),
                   out);
}

/* ConvTranspose: task = (batch, group, block of output channels): GEMM into columns, col2im, then the bias. */
static void transpose_task(void *arg, int64_t task, int worker)
{
    const conv_job *j = arg;
    const conv_geom *g = j->r.g;
    const conv_task_span t = conv_run_transpose_span(&j->r, task);
    const int64_t n = t.n, grp = t.grp, m0 = t.m0, m1 = t.m1;
    const int64_t rows = (m1 - m0) * j->r.ksz, row_stride = j->r.mg * j->r.ksz;
    char *s = conv_run_scratch(&j->r, worker);
    float *col = (float *)(void *)s;
    float *work = (float *)(void *)(s + align64((size_t)j->r.plan->ch_block * j->r.ksz * (size_t)j->r.plan->tile *
                                                sizeof(float)));
    float *ym = j->y + (n * g->out_c + grp * j->r.mg + m0) * j->r.out_plane;
    conv_fill_rows(ym, sizeof(float), m1 - m0, j->r.out_plane, j->r.out_plane, NULL);
    const float *xg = j->x ? j->x + (n * g->in_c + grp * j->r.cg) * j->r.in_plane : NULL;
    /* A(r, c) = W[c, m0 * taps + r]: W is [C, M/group, k...] */
    const sgemm_mat a = {.data = j->w + grp * j->r.cg * row_stride + m0 * j->r.ksz, .rs = 1, .cs = row_stride};
    for (int64_t p0 = 0; xg && j->r.cg > 0 && rows > 0 && p0 < j->r.in_plane; p0 += j->r.plan->tile) {
        const int64_t np = min64(j->r.plan->tile, j->r.in_plane - p0);
        const sgemm_mat bm = {.data = xg + p0, .rs = j->r.in_plane, .cs = 1};
        sim_sgemm_f32(rows, np, j->r.cg, &a, &bm, col, np, work, &zero_start); /* no memset of the columns */
        col2im_f32(g, col, m1 - m0, p0, np, ym);
    }
    if (j->b) {
        for (int64_t m = m0; m < m1; m++) {
            float *yr = ym + (m - m0) * j->r.out_plane;
            const float v = j->b[grp * j->r.mg + m];
            for (int64_t i = 0; i < j->r.out_plane; i++)
                yr[i] += v;
        }
    }
    conv_run_done(&j->r, n, grp * j->r.mg + m0, grp * j->r.mg + m1, 0, j->r.out_plane, worker);
}

void conv_transpose_f32(const conv_geom *g, const conv_plan *plan, const float *x, const float *w, const float *b,
                        float *y, float *scratch, struct rd_pool *pool, sim_tile_fn done, void *done_user)
{
    conv_job j = {.r = conv_run_of(g, plan, scratch, done, done_user), .x = x, .w = w, .b = b, .y = y};
    sim_parallel(pool, plan->tasks, transpose_task, &j);
}

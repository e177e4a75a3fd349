/* pool_f32.c: max, average and global pooling (see pool_f32.h). Workload: small next to the convs. */
#include "pool_f32.h"

#include <float.h>
#include <stddef.h>

/* Per output position: the valid taps [lo, hi) of each dim and the tap counts for the divisor. */
typedef struct window {
    int64_t lo[CONV_MAX_SP], hi[CONV_MAX_SP], start[CONV_MAX_SP];
    int64_t n_valid, n_padded;
} window;

static void window_at(const conv_geom *g, const int64_t *o, window *w)
{
    w->n_valid = 1;
    w->n_padded = 1;
    for (int d = 0; d < g->nsp; d++) {
        const int64_t start = o[d] * g->stride[d] - g->pad[d], dil = g->dil[d];
        int64_t lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
        int64_t hi = g->in[d] - start <= 0 ? 0 : (g->in[d] - 1 - start) / dil + 1;
        if (hi > g->k[d])
            hi = g->k[d];
        if (lo > hi)
            lo = hi;
        /* taps inside [-pad, in + pad_end) */
        const int64_t pstart = start + g->pad[d];
        int64_t phi = g->in[d] + g->pad_end[d] + g->pad[d] - pstart <= 0
                          ? 0
                          : (g->in[d] + g->pad_end[d] + g->pad[d] - 1 - pstart) / dil + 1;
        if (phi > g->k[d])
            phi = g->k[d];
        w->lo[d] = lo;
        w->hi[d] = hi;
        w->start[d] = start;
        w->n_valid *= hi - lo;
        w->n_padded *= phi;
    }
}

/* Sets k to the window's first tap; false when the window has none. */
static bool tap_first(int64_t *k, const window *w, int n)
{
    for (int d = 0; d < n; d++)
        k[d] = w->lo[d];
    return w->n_valid > 0;
}

/* Advances tap indices over [lo, hi) per dim; false once done. */
static bool tap_next(int64_t *k, const window *w, int n)
{
    for (int d = n - 1; d >= 0; d--) {
        if (++k[d] < w->hi[d])
            return true;
        k[d] = w->lo[d];
    }
    return false;
}

/* What a pool reads besides the window: max's index order, average's divisor rule. */
typedef struct pool_opts {
    bool col_major;
    bool count_include_pad;
} pool_opts;

/* One output from plane xp over window w; *arg gets the chosen tap's offset in the plane, or -1. */
typedef float (*pool_reduce)(const conv_geom *g, const float *xp, const window *w, const pool_opts *o, int64_t *arg);

static float reduce_max(const conv_geom *g, const float *xp, const window *w, const pool_opts *opts, int64_t *arg)
{
    float best = -FLT_MAX;
    int64_t k[CONV_MAX_SP];
    if (tap_first(k, w, g->nsp)) {
        do {
            int64_t off = 0, coff = 0, cstride = 1;
            for (int d = 0; d < g->nsp; d++) {
                const int64_t i = w->start[d] + k[d] * g->dil[d];
                off = off * g->in[d] + i;
                coff += i * cstride;
                cstride *= g->in[d];
            }
            const float v = xp[off];
            if (*arg < 0 || v > best) {
                best = v;
                *arg = opts->col_major ? coff : off;
            }
        } while (tap_next(k, w, g->nsp));
    }
    return best;
}

static float reduce_avg(const conv_geom *g, const float *xp, const window *w, const pool_opts *opts, int64_t *arg)
{
    (void)arg;
    float sum = 0.0f;
    int64_t k[CONV_MAX_SP];
    if (tap_first(k, w, g->nsp)) {
        do {
            int64_t off = 0;
            for (int d = 0; d < g->nsp; d++)
                off = off * g->in[d] + w->start[d] + k[d] * g->dil[d];
            sum += xp[off];
        } while (tap_next(k, w, g->nsp));
    }
    const int64_t div = opts->count_include_pad ? w->n_padded : w->n_valid;
    return div > 0 ? sum / (float)div : 0.0f;
}

/* Every (plane, output position) of the pool through one reduce; indices (optional) are flat input offsets. */
static void pool_run(const conv_geom *g, const float *x, float *y, int64_t *indices, pool_reduce reduce,
                     const pool_opts *opts)
{
    const int64_t in_plane = conv_prod(g->in, g->nsp), out_plane = conv_prod(g->out, g->nsp);
    for (int64_t pl = 0; pl < g->batch * g->in_c; pl++) {
        int64_t o[CONV_MAX_SP] = {0};
        for (int64_t op = 0; op < out_plane; op++, conv_odo_next(o, g->out, g->nsp)) {
            window w;
            window_at(g, o, &w);
            int64_t arg = -1;
            y[pl * out_plane + op] = reduce(g, x + pl * in_plane, &w, opts, &arg);
            if (indices)
                indices[pl * out_plane + op] = arg < 0 ? -1 : pl * in_plane + arg;
        }
    }
}

void pool_max_f32(const conv_geom *g, const float *x, float *y, int64_t *indices, bool col_major)
{
    const pool_opts opts = {.col_major = col_major};
    pool_run(g, x, y, indices, reduce_max, &opts);
}

void pool_avg_f32(const conv_geom *g, const float *x, float *y, bool count_include_pad)
{
    const pool_opts opts = {.count_include_pad = count_include_pad};
    pool_run(g, x, y, NULL, reduce_avg, &opts);
}

void pool_global_f32(const float *x, int64_t planes, int64_t len, bool max, float *y)
{
    for (int64_t p = 0; p < planes; p++) {
        const float *xp = x + p * len;
        if (max) {
            float best = len > 0 ? xp[0] : -FLT_MAX;
            for (int64_t i = 1; i < len; i++)
                if (xp[i] > best)
                    best = xp[i];
            y[p] = best;
        } else {
            double sum = 0.0;
            for (int64_t i = 0; i < len; i++)
                sum += xp[i];
            y[p] = len > 0 ? (float)(sum / (double)len) : 0.0f;
        }
    }
}

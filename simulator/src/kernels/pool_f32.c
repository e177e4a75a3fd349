/* pool_f32.c: max, average and global pooling (see pool_f32.h). Workload: small next to the convs. */
#include "pool_f32.h"

#include <float.h>

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

/* Advances an odometer over [0, dims); false once it wraps. */
static bool odo_next(int64_t *idx, const int64_t *dims, int n)
{
    for (int d = n - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return true;
        idx[d] = 0;
    }
    return false;
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

void pool_max_f32(const conv_geom *g, const float *x, float *y, int64_t *indices, bool col_major)
{
    const int nsp = g->nsp;
    const int64_t in_plane = conv_prod(g->in, nsp), out_plane = conv_prod(g->out, nsp);
    for (int64_t pl = 0; pl < g->batch * g->in_c; pl++) {
        const float *xp = x + pl * in_plane;
        int64_t o[CONV_MAX_SP] = {0};
        for (int64_t op = 0; op < out_plane; op++, odo_next(o, g->out, nsp)) {
            window w;
            window_at(g, o, &w);
            float best = -FLT_MAX;
            int64_t best_i = -1;
            if (w.n_valid > 0) {
                int64_t k[CONV_MAX_SP];
                for (int d = 0; d < nsp; d++)
                    k[d] = w.lo[d];
                do {
                    int64_t off = 0, coff = 0, cstride = 1;
                    for (int d = 0; d < nsp; d++) {
                        const int64_t i = w.start[d] + k[d] * g->dil[d];
                        off = off * g->in[d] + i;
                        coff += i * cstride;
                        cstride *= g->in[d];
                    }
                    const float v = xp[off];
                    if (best_i < 0 || v > best) {
                        best = v;
                        best_i = col_major ? coff : off;
                    }
                } while (tap_next(k, &w, nsp));
            }
            y[pl * out_plane + op] = best;
            if (indices)
                indices[pl * out_plane + op] = best_i < 0 ? -1 : pl * in_plane + best_i;
        }
    }
}

void pool_avg_f32(const conv_geom *g, const float *x, float *y, bool count_include_pad)
{
    const int nsp = g->nsp;
    const int64_t in_plane = conv_prod(g->in, nsp), out_plane = conv_prod(g->out, nsp);
    for (int64_t pl = 0; pl < g->batch * g->in_c; pl++) {
        const float *xp = x + pl * in_plane;
        int64_t o[CONV_MAX_SP] = {0};
        for (int64_t op = 0; op < out_plane; op++, odo_next(o, g->out, nsp)) {
            window w;
            window_at(g, o, &w);
            float sum = 0.0f;
            if (w.n_valid > 0) {
                int64_t k[CONV_MAX_SP];
                for (int d = 0; d < nsp; d++)
                    k[d] = w.lo[d];
                do {
                    int64_t off = 0;
                    for (int d = 0; d < nsp; d++)
                        off = off * g->in[d] + w.start[d] + k[d] * g->dil[d];
                    sum += xp[off];
                } while (tap_next(k, &w, nsp));
            }
            const int64_t div = count_include_pad ? w.n_padded : w.n_valid;
            y[pl * out_plane + op] = div > 0 ? sum / (float)div : 0.0f;
        }
    }
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

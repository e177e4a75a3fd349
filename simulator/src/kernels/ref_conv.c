/*
 * ref_conv.c: naive reference convolution, transposed convolution and GEMM (see ref_conv.h).
 * Float accumulators; no blocking, no BLAS: these are the oracles, speed does not matter.
 */
#include "ref_conv.h"

#include <stddef.h>

void ref_conv_f32(const conv_geom *g, const float *x, const float *w, const float *b, float *y)
{
    const int nsp = g->nsp;
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t in_plane = conv_prod(g->in, nsp), out_plane = conv_prod(g->out, nsp);
    const int64_t ksz = conv_prod(g->k, nsp);
    for (int64_t n = 0; n < g->batch; n++) {
        for (int64_t m = 0; m < g->out_c; m++) {
            const int64_t grp = m / mg;
            int64_t o[CONV_MAX_SP] = {0};
            for (int64_t op = 0; op < out_plane; op++, conv_odo_next(o, g->out, nsp)) {
                float acc = 0.0f;
                for (int64_t c = 0; c < cg; c++) {
                    const float *xc = x + (n * g->in_c + grp * cg + c) * in_plane;
                    const float *wc = w + (m * cg + c) * ksz;
                    int64_t k[CONV_MAX_SP] = {0};
                    for (int64_t kp = 0; kp < ksz; kp++, conv_odo_next(k, g->k, nsp)) {
                        int64_t off = 0;
                        bool inside = true;
                        for (int d = 0; d < nsp; d++) {
                            int64_t i = o[d] * g->stride[d] + k[d] * g->dil[d] - g->pad[d];
                            if (i < 0 || i >= g->in[d]) {
                                inside = false;
                                break;
                            }
                            off = off * g->in[d] + i;
                        }
                        if (inside)
                            acc += xc[off] * wc[kp];
                    }
                }
                y[(n * g->out_c + m) * out_plane + op] = acc + (b ? b[m] : 0.0f);
            }
        }
    }
}

void ref_conv_transpose_f32(const conv_geom *g, const float *x, const float *w, const float *b, float *y)
{
    const int nsp = g->nsp;
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t in_plane = conv_prod(g->in, nsp), out_plane = conv_prod(g->out, nsp);
    const int64_t ksz = conv_prod(g->k, nsp);
    for (int64_t n = 0; n < g->batch; n++) {
        float *yn = y + n * g->out_c * out_plane;
        for (int64_t m = 0; m < g->out_c; m++)
            for (int64_t op = 0; op < out_plane; op++)
                yn[m * out_plane + op] = 0.0f;
        for (int64_t c = 0; c < g->in_c; c++) {
            const int64_t grp = c / cg;
            const float *xc = x + (n * g->in_c + c) * in_plane;
            int64_t i[CONV_MAX_SP] = {0};
            for (int64_t ip = 0; ip < in_plane; ip++, conv_odo_next(i, g->in, nsp)) {
                for (int64_t mm = 0; mm < mg; mm++) {
                    const int64_t m = grp * mg + mm;
                    const float *wc = w + (c * mg + mm) * ksz;
                    int64_t k[CONV_MAX_SP] = {0};
                    for (int64_t kp = 0; kp < ksz; kp++, conv_odo_next(k, g->k, nsp)) {
                        int64_t off = 0;
                        bool inside = true;
                        for (int d = 0; d < nsp; d++) {
                            int64_t o = i[d] * g->stride[d] + k[d] * g->dil[d] - g->pad[d];
                            if (o < 0 || o >= g->out[d]) {
                                inside = false;
                                break;
                            }
                            off = off * g->out[d] + o;
                        }
                        if (inside)
                            yn[m * out_plane + off] += xc[ip] * wc[kp];
                    }
                }
            }
        }
        if (b)
            for (int64_t m = 0; m < g->out_c; m++)
                for (int64_t op = 0; op < out_plane; op++)
                    yn[m * out_plane + op] += b[m];
    }
}

void ref_gemm_f32(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, const float *bm,
                  float beta, float *c)
{
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int64_t p = 0; p < k; p++)
                acc += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? bm[j * k + p] : bm[p * n + j]);
            c[i * n + j] = alpha * acc + (beta != 0.0f ? beta * c[i * n + j] : 0.0f);
        }
    }
}

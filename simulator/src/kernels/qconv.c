/*
 * qconv.c: integer Conv and ConvTranspose slices (strategies and contract in qconv.h).
 * All accumulation is uint32 (wrapping, no undefined behaviour), read back as int32.
 */
#include "qconv.h"
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

typedef uint32_t v8u __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef int8_t v8c __attribute__((vector_size(8)));

static size_t align64(size_t v)
{
    return (v + 63) & ~(size_t)63;
}

void qconv_plan_s8(const conv_geom *g, conv_plan *out)
{
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    memset(out, 0, sizeof *out);
    if (conv_is_pointwise(g)) {
        out->kind = CONV_KIND_GEMM;
        out->scratch = qgemm_workspace_bytes(mg, conv_prod(g->out, g->nsp), cg);
        return;
    }
    if (cg == 1 && g->group > 1 && g->nsp <= 2) {
        out->kind = CONV_KIND_DEPTHWISE;
        return;
    }
    const int64_t rows = cg * conv_prod(g->k, g->nsp);
    const int64_t total = conv_prod(g->out, g->nsp);
    out->kind = CONV_KIND_TILED;
    out->tile = conv_tile_cols(rows, total, g->out[g->nsp - 1], 1, CONV_SCRATCH_BUDGET);
    out->scratch = align64((size_t)rows * (size_t)out->tile) + qgemm_workspace_bytes(mg, out->tile, rows);
}

/* y[i] += w * (x[i] - zp) for i < n, eight lanes at a time; the tail does the same per element. */
static void axpy_s8(uint32_t *restrict y, const int8_t *restrict x, int32_t w, int32_t zp, int64_t n)
{
    const uint32_t wu = (uint32_t)w, zu = (uint32_t)zp;
    const v8u wv = {wu, wu, wu, wu, wu, wu, wu, wu}, zv = {zu, zu, zu, zu, zu, zu, zu, zu};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        v8c xc;
        v8u yv;
        memcpy(&xc, x + i, sizeof xc);
        memcpy(&yv, y + i, sizeof yv);
        yv += wv * ((v8u)__builtin_convertvector(xc, v8i) - zv);
        memcpy(y + i, &yv, sizeof yv);
    }
    for (; i < n; i++)
        y[i] += wu * ((uint32_t)(int32_t)x[i] - zu);
}

/* Depthwise 1-D/2-D slice: one input channel xc, mg outputs; taps outside the input add nothing. */
static void depthwise_s8(const conv_geom *g, const int8_t *xc, int32_t zp, const int8_t *wg, const int32_t *bias,
                         int32_t *yg)
{
    const bool two = g->nsp == 2;
    const int64_t ih_n = two ? g->in[0] : 1, iw_n = g->in[g->nsp - 1];
    const int64_t oh_n = two ? g->out[0] : 1, ow_n = g->out[g->nsp - 1];
    const int64_t kh_n = two ? g->k[0] : 1, kw_n = g->k[g->nsp - 1];
    const int64_t sh = two ? g->stride[0] : 1, sw = g->stride[g->nsp - 1];
    const int64_t dh = two ? g->dil[0] : 1, dw = g->dil[g->nsp - 1];
    const int64_t ph = two ? g->pad[0] : 0, pw = g->pad[g->nsp - 1];
    const int64_t mg = g->out_c / g->group;
    for (int64_t m = 0; m < mg; m++) {
        const int8_t *wm = wg + m * kh_n * kw_n;
        uint32_t *ym = (uint32_t *)yg + m * oh_n * ow_n;
        const uint32_t b0 = bias ? (uint32_t)bias[m] : 0;
        for (int64_t i = 0; i < oh_n * ow_n; i++)
            ym[i] = b0;
        for (int64_t oh = 0; oh < oh_n; oh++) {
            uint32_t *yr = ym + oh * ow_n;
            for (int64_t kh = 0; kh < kh_n; kh++) {
                const int64_t ih = oh * sh + kh * dh - ph;
                if (ih < 0 || ih >= ih_n)
                    continue;
                const int8_t *xr = xc + ih * iw_n;
                for (int64_t kw = 0; kw < kw_n; kw++) {
                    const int32_t wv = wm[kh * kw_n + kw];
                    const int64_t koff = kw * dw - pw;
                    int64_t lo = koff >= 0 ? 0 : (-koff + sw - 1) / sw;
                    int64_t hi = iw_n - koff <= 0 ? 0 : (iw_n - koff - 1) / sw + 1;
                    if (hi > ow_n)
                        hi = ow_n;
                    if (wv == 0 || hi <= lo)
                        continue;
                    if (sw == 1) {
                        axpy_s8(yr + lo, xr + koff + lo, wv, zp, hi - lo);
                    } else {
                        for (int64_t ow = lo; ow < hi; ow++)
                            yr[ow] += (uint32_t)wv * ((uint32_t)(int32_t)xr[ow * sw + koff] - (uint32_t)zp);
                    }
                }
            }
        }
    }
}

void qconv_s8_slice(const conv_geom *g, const conv_plan *plan, const int8_t *xg, int32_t x_zp, const int8_t *wg,
                    const int32_t *bias_g, int32_t *yg, void *scratch)
{
    if (plan->kind == CONV_KIND_DEPTHWISE) {
        depthwise_s8(g, xg, x_zp, wg, bias_g, yg);
        return;
    }
    const int nsp = g->nsp;
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t in_plane = conv_prod(g->in, nsp), out_plane = conv_prod(g->out, nsp);
    const int64_t rows = cg * conv_prod(g->k, nsp);
    const qgemm_mat a = {.data = wg, .rs = rows, .cs = 1, .zp = 0};
    if (plan->kind == CONV_KIND_GEMM) {
        const qgemm_mat b = {.data = xg, .rs = in_plane, .cs = 1, .zp = x_zp};
        sim_qgemm_s8s8s32(mg, out_plane, cg, &a, &b, bias_g, QGEMM_BIAS_PER_M, yg, out_plane, scratch);
        return;
    }
    int8_t *col = scratch;
    void *ws = (char *)scratch + align64((size_t)rows * (size_t)plan->tile);
    if (out_plane == 0)
        return;
    for (int64_t p0 = 0; p0 < out_plane; p0 += plan->tile) {
        const int64_t np = out_plane - p0 < plan->tile ? out_plane - p0 : plan->tile;
        im2col_s8(g, xg, cg, p0, np, (int8_t)x_zp, col);
        const qgemm_mat b = {.data = col, .rs = np, .cs = 1, .zp = x_zp};
        sim_qgemm_s8s8s32(mg, np, rows, &a, &b, bias_g, QGEMM_BIAS_PER_M, yg + p0, out_plane, ws);
    }
}

void qconv_transpose_plan_s8(const conv_geom *g, conv_plan *out)
{
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t in_plane = conv_prod(g->in, g->nsp);
    memset(out, 0, sizeof *out);
    if (conv_is_pointwise(g)) {
        out->kind = CONV_KIND_GEMM;
        out->scratch = qgemm_workspace_bytes(mg, in_plane, cg);
        return;
    }
    const int64_t rows = mg * conv_prod(g->k, g->nsp);
    out->kind = CONV_KIND_TILED;
    out->tile = conv_tile_cols(rows, in_plane, g->in[g->nsp - 1], sizeof(int32_t), CONV_SCRATCH_BUDGET);
    out->scratch = align64((size_t)rows * (size_t)out->tile * sizeof(int32_t)) +
                   qgemm_workspace_bytes(rows, out->tile, cg);
}

void qconv_transpose_s8_slice(const conv_geom *g, const conv_plan *plan, const int8_t *xg, int32_t x_zp,
                              const int8_t *wg, const int32_t *bias_g, int32_t *yg, void *scratch)
{
    const int nsp = g->nsp;
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t in_plane = conv_prod(g->in, nsp), out_plane = conv_prod(g->out, nsp);
    const int64_t rows = mg * conv_prod(g->k, nsp);
    if (plan->kind == CONV_KIND_GEMM) {
        /* A(m, c) = W[c, m]: the transposed weight through strides */
        const qgemm_mat a = {.data = wg, .rs = 1, .cs = mg, .zp = 0};
        const qgemm_mat b = {.data = xg, .rs = in_plane, .cs = 1, .zp = x_zp};
        sim_qgemm_s8s8s32(mg, in_plane, cg, &a, &b, bias_g, QGEMM_BIAS_PER_M, yg, out_plane, scratch);
        return;
    }
    uint32_t *y = (uint32_t *)yg;
    memset(y, 0, (size_t)(mg * out_plane) * sizeof(uint32_t));
    int32_t *col = scratch;
    void *ws = (char *)scratch + align64((size_t)rows * (size_t)plan->tile * sizeof(int32_t));
    const qgemm_mat a = {.data = wg, .rs = 1, .cs = rows, .zp = 0}; /* A(r, c) = W[c, r], r = (m, tap) */
    for (int64_t p0 = 0; p0 < in_plane && rows > 0; p0 += plan->tile) {
        const int64_t np = in_plane - p0 < plan->tile ? in_plane - p0 : plan->tile;
        const qgemm_mat b = {.data = xg + p0, .rs = in_plane, .cs = 1, .zp = x_zp};
        sim_qgemm_s8s8s32(rows, np, cg, &a, &b, NULL, QGEMM_BIAS_NONE, col, np, ws);
        col2im_u32(g, (const uint32_t *)col, mg, p0, np, y);
    }
    if (bias_g) {
        for (int64_t m = 0; m < mg; m++) {
            uint32_t *ym = y + m * out_plane;
            const uint32_t v = (uint32_t)bias_g[m];
            for (int64_t i = 0; i < out_plane; i++)
                ym[i] += v;
        }
    }
}

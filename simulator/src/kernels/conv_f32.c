/*
 * conv_f32.c: fast float Conv and ConvTranspose (strategies in conv_f32.h).
 * Workload: every conv layer of the models; 2-D 3x3 and 1x1 dominate.
 */
#include "conv_f32.h"

#include <cblas.h>
#include <stdbool.h>
#include <string.h>

#define IM2COL_T float
#define IM2COL_NAME im2col_f32
#define COL2IM_NAME col2im_f32
#include "im2col_tmpl.h"
#undef IM2COL_T
#undef IM2COL_NAME
#undef COL2IM_NAME

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
    conv_plan_sized(g, sizeof(float), false, out);
    if (out->kind == CONV_KIND_TILED && g->in_c / g->group == 1 && g->group > 1 && g->nsp <= 2) {
        memset(out, 0, sizeof *out);
        out->kind = CONV_KIND_DEPTHWISE;
    }
}

/* Every row of y[rows, len] set to its bias (or 0). */
static void fill_bias(float *y, int64_t rows, int64_t len, const float *b)
{
    for (int64_t r = 0; r < rows; r++) {
        const float v = b ? b[r] : 0.0f;
        float *yr = y + r * len;
        for (int64_t i = 0; i < len; i++)
            yr[i] = v;
    }
}

typedef float v8f __attribute__((vector_size(32)));

/*
 * y[i] += a * x[i] for i < n, eight lanes at a time with GCC vector extensions (SSE/AVX or NEON,
 * whatever the target has; -O2 does not vectorise this loop by itself). Same product and sum per
 * element as the scalar tail, so results do not depend on n's alignment.
 */
static void axpy_f32(float *restrict y, const float *restrict x, float a, int64_t n)
{
    const v8f av = {a, a, a, a, a, a, a, a};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        v8f xv, yv;
        memcpy(&xv, x + i, sizeof xv);
        memcpy(&yv, y + i, sizeof yv);
        yv += av * xv;
        memcpy(y + i, &yv, sizeof yv);
    }
    for (; i < n; i++)
        y[i] += a * x[i];
}

/*
 * Depthwise 1-D/2-D: y[m] = b[m] + sum over taps (kh, kw) in that order, each tap a pass over the
 * valid output columns of a row. 1-D is the 2-D case with height 1.
 */
static void depthwise_f32(const conv_geom *g, const float *x, const float *w, const float *b, float *y)
{
    const bool two = g->nsp == 2;
    const int64_t ih_n = two ? g->in[0] : 1, iw_n = g->in[g->nsp - 1];
    const int64_t oh_n = two ? g->out[0] : 1, ow_n = g->out[g->nsp - 1];
    const int64_t kh_n = two ? g->k[0] : 1, kw_n = g->k[g->nsp - 1];
    const int64_t sh = two ? g->stride[0] : 1, sw = g->stride[g->nsp - 1];
    const int64_t dh = two ? g->dil[0] : 1, dw = g->dil[g->nsp - 1];
    const int64_t ph = two ? g->pad[0] : 0, pw = g->pad[g->nsp - 1];
    const int64_t mult = g->out_c / g->group;
    for (int64_t n = 0; n < g->batch; n++) {
        for (int64_t m = 0; m < g->out_c; m++) {
            const float *xc = x + (n * g->in_c + m / mult) * ih_n * iw_n;
            const float *wm = w + m * kh_n * kw_n;
            float *ym = y + (n * g->out_c + m) * oh_n * ow_n;
            fill_bias(ym, 1, oh_n * ow_n, b ? b + m : NULL);
            for (int64_t oh = 0; oh < oh_n; oh++) {
                float *yr = ym + oh * ow_n;
                for (int64_t kh = 0; kh < kh_n; kh++) {
                    const int64_t ih = oh * sh + kh * dh - ph;
                    if (ih < 0 || ih >= ih_n)
                        continue;
                    const float *xr = xc + ih * iw_n;
                    for (int64_t kw = 0; kw < kw_n; kw++) {
                        const float wv = wm[kh * kw_n + kw];
                        const int64_t koff = kw * dw - pw;
                        int64_t lo = koff >= 0 ? 0 : (-koff + sw - 1) / sw;
                        int64_t hi = iw_n - koff <= 0 ? 0 : (iw_n - koff - 1) / sw + 1;
                        if (hi > ow_n)
                            hi = ow_n;
                        if (sw == 1) {
                            if (hi > lo)
                                axpy_f32(yr + lo, xr + koff + lo, wv, hi - lo);
                        } else {
                            for (int64_t ow = lo; ow < hi; ow++)
                                yr[ow] += wv * xr[ow * sw + koff];
                        }
                    }
                }
            }
        }
    }
}

void conv_f32(const conv_geom *g, const conv_plan *plan, const float *x, const float *w, const float *b,
              float *y, float *scratch)
{
    if (plan->kind == CONV_KIND_DEPTHWISE) {
        depthwise_f32(g, x, w, b, y);
        return;
    }
    const int nsp = g->nsp;
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t in_plane = conv_prod(g->in, nsp), out_plane = conv_prod(g->out, nsp);
    const int64_t rows = cg * conv_prod(g->k, nsp);
    for (int64_t n = 0; n < g->batch; n++) {
        for (int64_t grp = 0; grp < g->group; grp++) {
            const float *xg = x + (n * g->in_c + grp * cg) * in_plane;
            const float *wg = w + grp * mg * rows;
            float *yg = y + (n * g->out_c + grp * mg) * out_plane;
            fill_bias(yg, mg, out_plane, b ? b + grp * mg : NULL);
            if (rows == 0 || out_plane == 0)
                continue;
            if (plan->kind == CONV_KIND_GEMM) {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mg, (int)out_plane, (int)cg, 1.0f,
                            wg, (int)cg, xg, (int)in_plane, 1.0f, yg, (int)out_plane);
                continue;
            }
            for (int64_t p0 = 0; p0 < out_plane; p0 += plan->tile) {
                const int64_t np = out_plane - p0 < plan->tile ? out_plane - p0 : plan->tile;
                im2col_f32(g, xg, cg, p0, np, 0.0f, scratch);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mg, (int)np, (int)rows, 1.0f, wg,
                            (int)rows, scratch, (int)np, 1.0f, yg + p0, (int)out_plane);
            }
        }
    }
}

void conv_transpose_plan_f32(const conv_geom *g, conv_plan *out)
{
    conv_plan_sized(g, sizeof(float), true, out);
}

void conv_transpose_f32(const conv_geom *g, const conv_plan *plan, const float *x, const float *w,
                        const float *b, float *y, float *scratch)
{
    const int nsp = g->nsp;
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t in_plane = conv_prod(g->in, nsp), out_plane = conv_prod(g->out, nsp);
    const int64_t rows = mg * conv_prod(g->k, nsp);
    for (int64_t n = 0; n < g->batch; n++) {
        for (int64_t grp = 0; grp < g->group; grp++) {
            const float *xg = x + (n * g->in_c + grp * cg) * in_plane;
            const float *wg = w + grp * cg * rows; /* W is [C, M/group, k...] */
            float *yg = y + (n * g->out_c + grp * mg) * out_plane;
            if (plan->kind == CONV_KIND_GEMM) {
                fill_bias(yg, mg, out_plane, b ? b + grp * mg : NULL);
                if (cg > 0 && out_plane > 0)
                    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)mg, (int)in_plane, (int)cg, 1.0f,
                                wg, (int)mg, xg, (int)in_plane, 1.0f, yg, (int)out_plane);
                continue;
            }
            fill_bias(yg, mg, out_plane, NULL);
            for (int64_t p0 = 0; p0 < in_plane && rows > 0 && cg > 0; p0 += plan->tile) {
                const int64_t np = in_plane - p0 < plan->tile ? in_plane - p0 : plan->tile;
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)rows, (int)np, (int)cg, 1.0f, wg,
                            (int)rows, xg + p0, (int)in_plane, 0.0f, scratch, (int)np);
                col2im_f32(g, scratch, mg, p0, np, yg);
            }
            if (b) {
                for (int64_t m = 0; m < mg; m++) {
                    float *ym = yg + m * out_plane;
                    const float v = b[grp * mg + m];
                    for (int64_t i = 0; i < out_plane; i++)
                        ym[i] += v;
                }
            }
        }
    }
}

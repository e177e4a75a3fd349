/*
 * conv_f64.c: Conv and ConvTranspose in double (contract in conv_f64.h). Used by the int16 layers only,
 * where the operands are integers and the sums therefore exact.
 */
#include "conv_f64.h"

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

void conv_plan_f64(const conv_geom *g, conv_plan *out)
{
    conv_plan_sized(g, sizeof(double), false, out);
}

static void fill_rows(double *y, int64_t rows, int64_t len, const double *b)
{
    for (int64_t r = 0; r < rows; r++) {
        const double v = b ? b[r] : 0.0;
        double *yr = y + r * len;
        for (int64_t i = 0; i < len; i++)
            yr[i] = v;
    }
}

void conv_f64(const conv_geom *g, const conv_plan *plan, const double *x, const double *w, const double *b,
              double *y, double *scratch)
{
    const int nsp = g->nsp;
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t in_plane = conv_prod(g->in, nsp), out_plane = conv_prod(g->out, nsp);
    const int64_t rows = cg * conv_prod(g->k, nsp);
    for (int64_t n = 0; n < g->batch; n++) {
        for (int64_t grp = 0; grp < g->group; grp++) {
            const double *xg = x + (n * g->in_c + grp * cg) * in_plane;
            const double *wg = w + grp * mg * rows;
            double *yg = y + (n * g->out_c + grp * mg) * out_plane;
            fill_rows(yg, mg, out_plane, b ? b + grp * mg : NULL);
            if (rows == 0 || out_plane == 0 || mg == 0)
                continue;
            if (plan->kind == CONV_KIND_GEMM) {
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mg, (int)out_plane, (int)cg, 1.0, wg,
                            (int)cg, xg, (int)in_plane, 1.0, yg, (int)out_plane);
                continue;
            }
            for (int64_t p0 = 0; p0 < out_plane; p0 += plan->tile) {
                const int64_t np = out_plane - p0 < plan->tile ? out_plane - p0 : plan->tile;
                im2col_f64(g, xg, cg, p0, np, 0.0, scratch);
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mg, (int)np, (int)rows, 1.0, wg,
                            (int)rows, scratch, (int)np, 1.0, yg + p0, (int)out_plane);
            }
        }
    }
}

void conv_transpose_plan_f64(const conv_geom *g, conv_plan *out)
{
    conv_plan_sized(g, sizeof(double), true, out);
}

void conv_transpose_f64(const conv_geom *g, const conv_plan *plan, const double *x, const double *w,
                        const double *b, double *y, double *scratch)
{
    const int nsp = g->nsp;
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t in_plane = conv_prod(g->in, nsp), out_plane = conv_prod(g->out, nsp);
    const int64_t rows = mg * conv_prod(g->k, nsp);
    for (int64_t n = 0; n < g->batch; n++) {
        for (int64_t grp = 0; grp < g->group; grp++) {
            const double *xg = x + (n * g->in_c + grp * cg) * in_plane;
            const double *wg = w + grp * cg * rows; /* W is [C, M/group, k...] */
            double *yg = y + (n * g->out_c + grp * mg) * out_plane;
            fill_rows(yg, mg, out_plane, b ? b + grp * mg : NULL);
            if (cg == 0 || mg == 0)
                continue;
            if (plan->kind == CONV_KIND_GEMM) {
                if (out_plane > 0)
                    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)mg, (int)in_plane, (int)cg, 1.0, wg,
                                (int)mg, xg, (int)in_plane, 1.0, yg, (int)out_plane);
                continue;
            }
            for (int64_t p0 = 0; p0 < in_plane && rows > 0; p0 += plan->tile) {
                const int64_t np = in_plane - p0 < plan->tile ? in_plane - p0 : plan->tile;
                cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)rows, (int)np, (int)cg, 1.0, wg, (int)rows,
                            xg + p0, (int)in_plane, 0.0, scratch, (int)np);
                col2im_f64(g, scratch, mg, p0, np, yg);
            }
        }
    }
}

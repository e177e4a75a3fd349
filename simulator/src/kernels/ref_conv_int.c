/* ref_conv_int.c: direct integer convolution and matrix product (see ref_conv_int.h). */
#include "ref_conv_int.h"

void ref_conv_int32(const ref_conv_int_geom *g, const int32_t *x, const int32_t *w, const int32_t *bias, int32_t *y)
{
    int64_t cg = g->c / g->group, mg = g->m / g->group;
    int64_t in_sp = g->in[0] * g->in[1] * g->in[2];
    int64_t k_sp = g->k[0] * g->k[1] * g->k[2];
    int64_t out_sp = g->out[0] * g->out[1] * g->out[2];
    for (int64_t b = 0; b < g->n; b++) {
        for (int64_t m = 0; m < g->m; m++) {
            int64_t grp = m / mg;
            const int32_t *wm = w + m * cg * k_sp;
            int32_t *ym = y + (b * g->m + m) * out_sp;
            for (int64_t od = 0; od < g->out[0]; od++)
                for (int64_t oh = 0; oh < g->out[1]; oh++)
                    for (int64_t ow = 0; ow < g->out[2]; ow++) {
                        int64_t acc = bias ? bias[m] : 0;
                        for (int64_t c = 0; c < cg; c++) {
                            const int32_t *xc = x + (b * g->c + grp * cg + c) * in_sp;
                            const int32_t *wc = wm + c * k_sp;
                            for (int64_t kd = 0; kd < g->k[0]; kd++) {
                                int64_t id = od * g->stride[0] + kd * g->dil[0] - g->pad[0];
                                if (id < 0 || id >= g->in[0])
                                    continue;
                                for (int64_t kh = 0; kh < g->k[1]; kh++) {
                                    int64_t ih = oh * g->stride[1] + kh * g->dil[1] - g->pad[1];
                                    if (ih < 0 || ih >= g->in[1])
                                        continue;
                                    const int32_t *xr = xc + (id * g->in[1] + ih) * g->in[2];
                                    const int32_t *wr = wc + (kd * g->k[1] + kh) * g->k[2];
                                    for (int64_t kw = 0; kw < g->k[2]; kw++) {
                                        int64_t iw = ow * g->stride[2] + kw * g->dil[2] - g->pad[2];
                                        if (iw >= 0 && iw < g->in[2])
                                            acc += (int64_t)xr[iw] * wr[kw];
                                    }
                                }
                            }
                        }
                        ym[(od * g->out[1] + oh) * g->out[2] + ow] = (int32_t)(uint32_t)(uint64_t)acc;
                    }
        }
    }
}

void ref_matmul_int32(int64_t m, int64_t k, int64_t n, const int32_t *a, const int32_t *b, int32_t *y)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t acc = 0;
            for (int64_t p = 0; p < k; p++)
                acc += (int64_t)a[i * k + p] * b[p * n + j];
            y[i * n + j] = (int32_t)(uint32_t)(uint64_t)acc;
        }
}

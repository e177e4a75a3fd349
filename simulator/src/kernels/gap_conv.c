/* gap_conv.c: GlobalAveragePool lowered to depthwise convs (contracts in gap_conv.h). */
#include "gap_conv.h"

/* The largest divisor of n in 2..GAP_CONV_MAX_KERNEL, or 0 when there is none. */
static int64_t small_divisor(int64_t n)
{
    for (int64_t k = GAP_CONV_MAX_KERNEL; k >= 2; k--)
        if (n % k == 0)
            return k;
    return 0;
}

void gap_plan_make(int64_t h, int64_t w, gap_plan *p)
{
    p->n_stages = 1;
    p->kh[0] = h;
    p->kw[0] = w;
    p->kh[1] = p->kw[1] = 1;
    if (h <= GAP_CONV_MAX_KERNEL && w <= GAP_CONV_MAX_KERNEL)
        return;
    const int64_t dh = h <= GAP_CONV_MAX_KERNEL ? h : small_divisor(h);
    const int64_t dw = w <= GAP_CONV_MAX_KERNEL ? w : small_divisor(w);
    if (!dh || !dw || h / dh > GAP_CONV_MAX_KERNEL || w / dw > GAP_CONV_MAX_KERNEL)
        return; /* no split of that shape: one conv over the whole map */
    p->n_stages = 2;
    p->kh[0] = dh;
    p->kw[0] = dw;
    p->kh[1] = h / dh;
    p->kw[1] = w / dw;
}

/* Window sums of one stage: x is h x w, out is (h / kh) x (w / kw), row-major, exact (integer doubles). */
static void window_sums(const double *x, int64_t h, int64_t w, int64_t kh, int64_t kw, double *out)
{
    const int64_t oh = h / kh, ow = w / kw;
    for (int64_t i = 0; i < oh; i++)
        for (int64_t j = 0; j < ow; j++) {
            double s = 0.0;
            for (int64_t a = 0; a < kh; a++)
                for (int64_t b = 0; b < kw; b++)
                    s += x[(i * kh + a) * w + j * kw + b];
            out[i * ow + j] = s;
        }
}

void gap_conv_int(const double *x, int64_t planes, int64_t h, int64_t w, const gap_plan *p, const double *w_code,
                  const float *w_scale, float in_scale, gap_requant_fn requant, const void *user, double *mid, float *y)
{
    for (int64_t pl = 0; pl < planes; pl++) {
        const double *xp = x + pl * h * w;
        if (p->n_stages == 1) {
            double s;
            window_sums(xp, h, w, h, w, &s);
            y[pl] = (float)(s * w_code[0] * in_scale * w_scale[0]);
            continue;
        }
        const int64_t mh = h / p->kh[0], mw = w / p->kw[0];
        window_sums(xp, h, w, p->kh[0], p->kw[0], mid);
        for (int64_t i = 0; i < mh * mw; i++)
            mid[i] = requant((float)(mid[i] * w_code[0] * in_scale * w_scale[0]), user);
        double s;
        window_sums(mid, mh, mw, mh, mw, &s);
        y[pl] = (float)(s * w_code[1] * in_scale * w_scale[1]);
    }
}

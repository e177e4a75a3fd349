/*
 * tfl_int.c: TensorFlow Lite's integer requantization and its NHWC integer convolution (tfl_int.h).
 *
 * Accumulators: TFLite sums int8 products in int32 and int16x8 products in int64. Here both sum in int64 (no
 * overflow for any model that fits RD_MAX_TENSOR_BYTES: |product| <= 2^22, at most 2^32 terms) and the int8 path
 * then saturates to int32, where TFLite would overflow (undefined in C++): identical for every model TFLite
 * itself runs correctly.
 */
#include "tfl_int.h"

#include <math.h>

int64_t tfl_round(double v)
{
    if (!(v == v))
        return 0;
    if (v >= 9.2e18)
        return INT64_MAX;
    if (v <= -9.2e18)
        return INT64_MIN;
    return (int64_t)round(v);
}

void tfl_quantize_multiplier(double m, int32_t *significand, int *shift)
{
    *significand = 0;
    *shift = 0;
    if (!(m > 0.0) || !isfinite(m))
        return;
    int e = 0;
    double q = frexp(m, &e);
    int64_t fixed = tfl_round(q * 2147483648.0);
    if (fixed == ((int64_t)1 << 31)) {
        fixed /= 2;
        e++;
    }
    if (e < -31) { /* too small to matter: TFLite's rule */
        e = 0;
        fixed = 0;
    }
    if (e > 30) { /* TFLite clamps too large a multiplier the same way */
        e = 30;
        fixed = ((int64_t)1 << 31) - 1;
    }
    *significand = (int32_t)fixed;
    *shift = e;
}

static int32_t sat32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

/* gemmlowp's SaturatingRoundingDoublingHighMul. */
static int32_t srdhm(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN)
        return INT32_MAX;
    int64_t ab = (int64_t)a * (int64_t)b;
    int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : 1 - ((int64_t)1 << 30);
    return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* gemmlowp's RoundingDivideByPOT: x / 2^exponent rounded half away from zero. */
static int32_t rdbpot(int32_t x, int exponent)
{
    if (exponent <= 0)
        return x;
    int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

int32_t tfl_mbqm32(int32_t x, int32_t significand, int shift)
{
    int left = shift > 0 ? shift : 0;
    int right = shift > 0 ? 0 : -shift;
    return rdbpot(srdhm(sat32((int64_t)x * ((int64_t)1 << left)), significand), right);
}

int32_t tfl_mbqm64(int64_t x, int32_t significand, int shift)
{
    const int64_t lim = (int64_t)1 << 47;
    if (x >= lim)
        x = lim - 1;
    else if (x < -lim)
        x = -lim;
    int32_t reduced = significand < 0x7FFF0000 ? (significand + (1 << 15)) >> 16 : 0x7FFF;
    int total_shift = 15 - shift; /* shift <= 30: total_shift >= -15 */
    int64_t result;
    if (total_shift <= 0) {
        result = x * (int64_t)reduced * ((int64_t)1 << -total_shift);
    } else {
        int64_t round_bit = (int64_t)1 << (total_shift - 1);
        result = (x * (int64_t)reduced + round_bit) >> total_shift;
    }
    return sat32(result);
}

void tfl_conv_int(const tfl_conv_geom *g, const tfl_requant *q, const void *x, bool x16, const int8_t *w,
                  const int32_t *b32, const int64_t *b64, void *y)
{
    const int8_t *x8 = x;
    const int16_t *xs = x;
    int8_t *y8 = y;
    int16_t *ys = y;
    const int64_t in_per_out = g->depth_multiplier ? 1 : g->ic;
    for (int64_t b = 0; b < g->n; b++)
        for (int64_t oy = 0; oy < g->oh; oy++)
            for (int64_t ox = 0; ox < g->ow; ox++)
                for (int64_t oc = 0; oc < g->oc; oc++) {
                    int64_t acc = 0;
                    int64_t ic0 = g->depth_multiplier ? oc / g->depth_multiplier : 0;
                    for (int64_t ky = 0; ky < g->kh; ky++) {
                        int64_t iy = oy * g->sh - g->ph + ky * g->dh;
                        if (iy < 0 || iy >= g->ih)
                            continue;
                        for (int64_t kx = 0; kx < g->kw; kx++) {
                            int64_t ix = ox * g->sw - g->pw + kx * g->dw;
                            if (ix < 0 || ix >= g->iw)
                                continue;
                            int64_t xbase = ((b * g->ih + iy) * g->iw + ix) * g->ic;
                            int64_t wbase = g->depth_multiplier ? (ky * g->kw + kx) * g->oc + oc
                                                                : ((oc * g->kh + ky) * g->kw + kx) * g->ic;
                            for (int64_t c = 0; c < in_per_out; c++) {
                                int64_t xi = xbase + ic0 + c;
                                int64_t xv = x16 ? xs[xi] : x8[xi];
                                acc += (int64_t)w[wbase + c] * (xv - q->in_zp);
                            }
                        }
                    }
                    if (b32)
                        acc += b32[oc];
                    else if (b64)
                        acc += b64[oc];
                    int64_t v = q->wide ? tfl_mbqm64(acc, q->mult[oc], q->shift[oc])
                                        : tfl_mbqm32(sat32(acc), q->mult[oc], q->shift[oc]);
                    v += q->out_zp;
                    v = v < q->act_min ? q->act_min : v > q->act_max ? q->act_max : v;
                    int64_t yi = ((b * g->oh + oy) * g->ow + ox) * g->oc + oc;
                    if (x16)
                        ys[yi] = (int16_t)v;
                    else
                        y8[yi] = (int8_t)v;
                }
}

/*
 * ref_resize.c: coordinate transforms, interpolation weights and the separable pass of Resize (see
 * ref_resize.h). Everything is double: the ONNX reference computes coordinates and weights in float64,
 * and the conformance vectors come from it. Neighbour choice follows the reference: for a source
 * coordinate x, base = ceil(x) - 1 and ratio = x - base lies in (0, 1], so an integral x takes all its
 * weight from index x; indices outside [0, in) are clamped (edge padding).
 */
#include "ref_resize.h"

#include <math.h>

/* Source coordinate of output index x; *outside set for tf_crop_and_resize outside the input. */
static double source_coord(const rr_axis_params *p, double x, bool *outside)
{
    double in = (double)p->in, s = p->scale, ow = s * in; /* the reference's non-integral output length */
    *outside = false;
    switch (p->coord) {
    case RR_HALF_PIXEL:
        return (x + 0.5) / s - 0.5;
    case RR_HALF_PIXEL_SYMMETRIC: {
        double adj = (double)p->out / ow, center = in / 2.0;
        return center * (1.0 - adj) + (x + 0.5) / s - 0.5;
    }
    case RR_PYTORCH_HALF_PIXEL:
        return ow == 1.0 ? -0.5 : (x + 0.5) / s - 0.5;
    case RR_ALIGN_CORNERS:
        return ow == 1.0 ? 0.0 : x * (in - 1.0) / (ow - 1.0);
    case RR_ASYMMETRIC:
        return x / s;
    case RR_TF_HALF_PIXEL_FOR_NN:
        return (x + 0.5) / s;
    case RR_TF_CROP_AND_RESIZE: {
        double span = p->roi_end - p->roi_start, v;
        if (ow == 1.0)
            v = span * (in - 1.0) / 2.0;
        else
            v = x * span * (in - 1.0) / (ow - 1.0);
        v += p->roi_start * (in - 1.0);
        *outside = v < 0.0 || v > in - 1.0;
        return v;
    }
    }
    return x;
}

/* Keys cubic kernel with parameter a at distance d (antialias form). */
static double cubic_kernel(double d, double a)
{
    d = fabs(d);
    if (d <= 1.0)
        return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
    if (d < 2.0)
        return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
    return 0.0;
}

/* First tap offset relative to base (taps run base+start .. base+start+n-1). */
static int tap_start(const rr_axis_params *p)
{
    if (p->mode == RR_NEAREST)
        return 0;
    if (p->antialias) {
        double s = p->scale < 1.0 ? p->scale : 1.0;
        return (int)floor((p->mode == RR_LINEAR ? -1.0 : -2.0) / s) + 1;
    }
    return p->mode == RR_LINEAR ? 0 : -1;
}

int rr_taps(const rr_axis_params *p)
{
    if (p->mode == RR_NEAREST)
        return 1;
    return 2 - 2 * tap_start(p);
}

/* Index nearest to x by the rounding rule (before clamping). */
static int64_t nearest_index(const rr_axis_params *p, double x)
{
    double f = floor(x);
    if (f == x)
        return (int64_t)f;
    double r = x - f;
    switch (p->nearest) {
    case RR_ROUND_PREFER_FLOOR:
        return (int64_t)f + (r > 0.5);
    case RR_ROUND_PREFER_CEIL:
        return (int64_t)f + (r >= 0.5);
    case RR_FLOOR:
        return (int64_t)f;
    case RR_CEIL:
        return (int64_t)f + 1;
    case RR_SIMPLE:
        return (int64_t)f + (p->scale < 1.0);
    }
    return (int64_t)f;
}

static int64_t clamp_index(int64_t i, int64_t n)
{
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

void rr_axis_table(const rr_axis_params *p, int64_t *idx, double *w, unsigned char *outside)
{
    int n = rr_taps(p), start = tap_start(p);
    double s_aa = p->scale < 1.0 ? p->scale : 1.0;
    for (int64_t o = 0; o < p->out; o++) {
        bool out_of_range;
        double x = source_coord(p, (double)o, &out_of_range);
        int64_t *ix = idx + o * n;
        double *wt = w + o * n;
        outside[o] = out_of_range;
        if (p->mode == RR_NEAREST) {
            ix[0] = clamp_index(nearest_index(p, x), p->in);
            wt[0] = 1.0;
            continue;
        }
        double base = ceil(x) - 1.0, ratio = x - base;
        double sum = 0.0;
        for (int t = 0; t < n; t++) {
            int64_t j = (int64_t)base + start + t;
            double c;
            if (p->antialias) {
                double d = ((double)(start + t) - ratio) * s_aa;
                c = p->mode == RR_LINEAR ? fmax(0.0, fmin(1.0, 1.0 - fabs(d))) : cubic_kernel(d, p->cubic_a);
            } else if (p->mode == RR_LINEAR) {
                c = t == 0 ? 1.0 - ratio : ratio;
            } else {
                /* the reference's four cubic coefficients for distances 1+r, r, 1-r, 2-r */
                double a = p->cubic_a, r = ratio;
                switch (t) {
                case 0:
                    c = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
                    break;
                case 1:
                    c = ((a + 2) * r - (a + 3)) * r * r + 1;
                    break;
                case 2:
                    c = ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1;
                    break;
                default:
                    c = ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a;
                    break;
                }
            }
            if (p->exclude_outside && (j < 0 || j >= p->in))
                c = 0.0;
            wt[t] = c;
            ix[t] = clamp_index(j, p->in);
            sum += c;
        }
        /* antialias weights are normalised by the reference; exclude_outside renormalises */
        if ((p->antialias || p->exclude_outside) && sum != 0.0)
            for (int t = 0; t < n; t++)
                wt[t] /= sum;
    }
}

bool rr_axis_is_identity(const rr_axis_params *p, const int64_t *idx, const double *w, const unsigned char *outside)
{
    if (p->in != p->out)
        return false;
    int n = rr_taps(p);
    for (int64_t o = 0; o < p->out; o++) {
        if (outside[o])
            return false;
        for (int t = 0; t < n; t++) {
            double c = w[o * n + t];
            if (c != 0.0 && !(c == 1.0 && idx[o * n + t] == o))
                return false;
        }
    }
    return true;
}

void rr_pass(const double *src, double *dst, int64_t outer, int64_t in, int64_t out, int64_t inner, int taps,
             const int64_t *idx, const double *w, const unsigned char *outside, double extrap)
{
    for (int64_t b = 0; b < outer; b++) {
        const double *s = src + b * in * inner;
        for (int64_t o = 0; o < out; o++) {
            double *d = dst + (b * out + o) * inner;
            if (outside[o]) {
                for (int64_t k = 0; k < inner; k++)
                    d[k] = extrap;
                continue;
            }
            for (int64_t k = 0; k < inner; k++)
                d[k] = 0.0;
            for (int t = 0; t < taps; t++) {
                double c = w[o * taps + t];
                if (c == 0.0)
                    continue;
                const double *row = s + idx[o * taps + t] * inner;
                for (int64_t k = 0; k < inner; k++)
                    d[k] += c * row[k];
            }
        }
    }
}

/*
 * runtime_io.c: the application's input and output against the simulator's (runtime_io.h).
 *
 * Each known mistake is a transformation of the expected data; the board's data is compared with each
 * transformation in turn and the first that matches within rounding names the mistake. What matches
 * none is reported with the cosine and a per-channel gain/offset fit, so the reader still has numbers.
 */
#include "runtime_io.h"
#include "rknn_diag/reports.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |a - b| within rounding of 8-bit data, or of the data's range */
static bool close_all(const float *a, const float *b, int64_t n, double tol)
{
    for (int64_t i = 0; i < n; i++)
        if (!(fabs((double)a[i] - (double)b[i]) <= tol))
            return false;
    return true;
}

static double range_of(const float *v, int64_t n)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        if (v[i] < lo)
            lo = v[i];
        if (v[i] > hi)
            hi = v[i];
    }
    return n ? hi - lo : 0;
}

static double cosine(const float *a, const float *b, int64_t n)
{
    double ab = 0, aa = 0, bb = 0;
    for (int64_t i = 0; i < n; i++) {
        ab += (double)a[i] * b[i];
        aa += (double)a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : NAN;
}

/* Least squares y ~ g*x + o over n values (stride 1); r2 the share of variance explained. */
static void affine_fit(const float *x, const float *y, int64_t n, double *g, double *o, double *r2)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
    for (int64_t i = 0; i < n; i++) {
        sx += x[i];
        sy += y[i];
        sxx += (double)x[i] * x[i];
        sxy += (double)x[i] * y[i];
        syy += (double)y[i] * y[i];
    }
    double vx = sxx - sx * sx / (double)n, vy = syy - sy * sy / (double)n, cxy = sxy - sx * sy / (double)n;
    *g = vx > 0 ? cxy / vx : NAN;
    *o = (sy - *g * sx) / (double)n;
    *r2 = vx > 0 && vy > 0 ? cxy * cxy / (vx * vy) : (vy == 0 ? 1.0 : 0.0);
}

static void dims_text(const rd_tensor *t, char *buf, size_t len)
{
    int w = snprintf(buf, len, "[");
    for (int d = 0; d < t->rank && w > 0 && (size_t)w < len; d++)
        w += snprintf(buf + w, len - (size_t)w, "%s%lld", d ? "," : "", (long long)t->dims[d]);
    if (w > 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, "]");
}

/* Sum of (x[i+1] - x[i])^2 along rows of width w: how much fine detail an image has (a blurred edge has
   the same total variation but spread over more pixels, so less of this energy). */
static double variation(const float *x, int64_t n, int64_t w)
{
    double s = 0;
    for (int64_t i = 0; i + 1 < n; i++)
        if ((i + 1) % w != 0) {
            double d = (double)x[i + 1] - (double)x[i];
            s += d * d;
        }
    return s;
}

/* b is r smoothed: close in direction and mean, with clearly less fine detail */
static bool blurred(const float *r, const float *b, int64_t n, int64_t w)
{
    double vr = variation(r, n, w), vb = variation(b, n, w), mr = 0, mb = 0;
    for (int64_t i = 0; i < n; i++) {
        mr += r[i];
        mb += b[i];
    }
    double c = cosine(r, b, n);
    return vr > 0 && vb < 0.85 * vr && c > 0.9 && fabs(mr - mb) <= 0.05 * (fabs(mr) + 1e-9 * (double)n + 1.0);
}

an_input_verdict an_check_input(const rd_tensor *board, const rd_tensor *raw, const rd_input_spec *spec, char *why,
                                size_t why_len)
{
    rd_tensor bf = {0};
    why[0] = '\0';
    if (rd_tensor_to_f32(&bf, board, NULL) != RD_OK) {
        snprintf(why, why_len, "the board's input dump could not be read as numbers");
        return AN_IN_OTHER;
    }
    int64_t n = rd_tensor_numel(raw);
    const float *b = bf.data, *r = raw->data;
    an_input_verdict v = AN_IN_OTHER;
    char bd[128], rdims[128];
    dims_text(board, bd, sizeof bd);
    dims_text(raw, rdims, sizeof rdims);
    if (rd_tensor_numel(&bf) != n) {
        snprintf(why, why_len, "the board's input has %lld values %s, the model's input %lld %s: wrong size (resize the "
                 "image to the model's input size in the application)", (long long)rd_tensor_numel(&bf), bd,
                 (long long)n, rdims);
        rd_tensor_fini(&bf);
        return AN_IN_SIZE;
    }
    /* integer dumps hold the raw data rounded; float dumps hold it as it was, up to float rounding */
    bool integer = board->dtype == RD_DT_U8 || board->dtype == RD_DT_I8 || board->dtype == RD_DT_I16 ||
                   board->dtype == RD_DT_U16 || board->dtype == RD_DT_I32;
    double tol = integer ? 0.51 : 1e-3 * range_of(r, n) + 1e-6;
    float *t = malloc((size_t)(n ? n : 1) * sizeof *t);
    if (!t) {
        rd_tensor_fini(&bf);
        snprintf(why, why_len, "out of memory");
        return AN_IN_OTHER;
    }
    bool img = raw->rank == 4;
    int64_t N = img ? raw->dims[0] : 1, C = img ? raw->dims[1] : 1, H = img ? raw->dims[2] : 1,
            W = img ? raw->dims[3] : n;
    int64_t plane = H * W;
    if (close_all(r, b, n, tol)) {
        v = AN_IN_OK;
        goto done;
    }
    if (img && C == 3) { /* channels 0 and 2 swapped */
        for (int64_t k = 0; k < N; k++)
            for (int64_t c = 0; c < 3; c++)
                memcpy(t + (k * 3 + c) * plane, r + (k * 3 + (2 - c)) * plane, (size_t)plane * sizeof *t);
        if (close_all(t, b, n, tol)) {
            v = AN_IN_BGR;
            snprintf(why, why_len, "the board's input is the simulator's with colour channels 0 and 2 swapped: the "
                     "application feeds BGR where the model was converted for RGB (or the reverse): convert with "
                     "cv2.cvtColor(img, cv2.COLOR_BGR2RGB) before rknn_inputs_set");
            goto done;
        }
    }
    if (img && C > 1) { /* NHWC bytes in a buffer the runtime reads as NCHW */
        for (int64_t k = 0; k < N; k++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t p = 0; p < plane; p++)
                    t[k * C * plane + p * C + c] = r[(k * C + c) * plane + p];
        if (close_all(t, b, n, tol)) {
            v = AN_IN_NHWC;
            snprintf(why, why_len, "the board's input %s holds NHWC data read as NCHW: set rknn_input.fmt = "
                     "RKNN_TENSOR_NHWC (or transpose the data to NCHW) in the application", bd);
            goto done;
        }
    }
    bool above127 = false;
    for (int64_t i = 0; i < n; i++)
        above127 |= r[i] > 127.5f;
    if (above127) {
        for (int64_t i = 0; i < n; i++)
            t[i] = r[i] > 127.0f ? 127.0f : r[i];
        bool clamp = close_all(t, b, n, tol);
        for (int64_t i = 0; i < n; i++)
            t[i] = r[i] > 127.5f ? r[i] - 256.0f : r[i];
        if (clamp || close_all(t, b, n, tol)) {
            v = AN_IN_INT8_CLAMP;
            snprintf(why, why_len, "uint8 input values above 127 were %s into int8 on the board: pass the image as "
                     "RKNN_TENSOR_UINT8 (rknn_input.type) instead of int8", clamp ? "clamped" : "wrapped");
            goto done;
        }
    }
    if (img && W > 2 && blurred(r, b, n, W)) {
        v = AN_IN_SIZE;
        snprintf(why, why_len, "the board's input is the expected image with its fine detail lost (same mean, %.0f%% of "
                 "the pixel-to-pixel gradient energy): it was resized from another size (or to another size and back): "
                 "give the runtime the image at the model's input size %s, resized as the model was trained",
                 100.0 * variation(b, n, W) / variation(r, n, W), rdims);
        goto done;
    }
    /* a per-channel affine map: normalisation applied twice, or missing */
    bool fits = true, all_shrink = true, all_grow = true, like_spec = spec && spec->n_std == (size_t)C;
    double g0 = NAN, o0 = NAN;
    for (int64_t c = 0; c < C && fits; c++) {
        double g = 0, o = 0, r2 = 0, sum_r2 = 0, sum_g = 0, sum_o = 0;
        for (int64_t k = 0; k < N; k++) {
            affine_fit(r + (k * C + c) * plane, b + (k * C + c) * plane, plane, &g, &o, &r2);
            sum_r2 += r2;
            sum_g += g;
            sum_o += o;
        }
        g = sum_g / (double)N;
        o = sum_o / (double)N;
        fits = isfinite(g) && sum_r2 / (double)N > 0.999;
        all_shrink &= g < 0.67;
        all_grow &= g > 1.5;
        if (like_spec) {
            double sd = spec->std[c], mean = spec->n_mean == (size_t)C ? spec->mean[c] : 0;
            like_spec = fabs(g * sd - 1.0) < 0.02 && fabs(o + mean / sd) < 0.02 * (fabs(mean / sd) + 1.0);
        }
        if (c == 0) {
            g0 = g;
            o0 = o;
        }
    }
    if (fits && (like_spec || all_shrink)) {
        v = AN_IN_NORM_TWICE;
        snprintf(why, why_len, "the board's input is the image already normalised (channel 0: x %.4g %+.4g)%s: the "
                 "application normalises and the model's mean_values/std_values normalise again: pass the raw image",
                 g0, o0, like_spec ? ", exactly the model's mean/std" : "");
    } else if (fits && all_grow) {
        v = AN_IN_NORM_MISSING;
        snprintf(why, why_len, "the board's input is the expected input scaled (channel 0: x %.4g %+.4g): it was not "
                 "normalised: apply the training mean/std in the application, or set mean_values/std_values when "
                 "converting the model", g0, o0);
    } else {
        snprintf(why, why_len, "the board's input differs from the simulator's (cosine %.5f, channel 0 fit x %.4g %+.4g): "
                 "check the application's preprocessing (size, colour order, layout, dtype, mean/std)",
                 cosine(r, b, n), g0, o0);
    }
done:
    free(t);
    rd_tensor_fini(&bf);
    return v;
}

static const char *ratio_reason(double ratio)
{
    if (fabs(ratio - 4) < 1e-9)
        return "4 times as many values: the float32 output's bytes were read as 8-bit values (int8/uint8)";
    if (fabs(ratio - 2) < 1e-9)
        return "twice as many values: the float32 output's bytes were read as 16-bit values (float16/int16)";
    if (fabs(ratio - 0.25) < 1e-9)
        return "a quarter of the values: an 8-bit output's bytes were read as float32";
    if (fabs(ratio - 0.5) < 1e-9)
        return "half the values: a 16-bit output's bytes were read as float32";
    return "a different element count: the output was read with the wrong size or dtype";
}

bool an_check_output(const rd_tensor *app, const rd_tensor *board_out, float q_scale, int32_t q_zp, char *why,
                     size_t why_len)
{
    why[0] = '\0';
    int64_t n = rd_tensor_numel(board_out), na = rd_tensor_numel(app);
    if (na != n) {
        snprintf(why, why_len, "the application received %lld values, the output has %lld: %s", (long long)na,
                 (long long)n, ratio_reason(n ? (double)na / (double)n : 0));
        return true;
    }
    rd_tensor af = {0};
    if (rd_tensor_to_f32(&af, app, NULL) != RD_OK || board_out->dtype != RD_DT_F32) {
        snprintf(why, why_len, "the application's output could not be read as numbers");
        return true;
    }
    const float *a = af.data, *o = board_out->data;
    double tol = fmax(1e-5, 1e-3 * range_of(o, n));
    bool bad = true;
    float *t = malloc((size_t)(n ? n : 1) * sizeof *t);
    if (close_all(a, o, n, tol)) {
        bad = false;
    } else if (t && q_scale > 0) {
        for (int64_t i = 0; i < n; i++)
            t[i] = (float)nearbyint(o[i] / q_scale) + (float)q_zp;
        if (close_all(a, t, n, 0.51)) {
            snprintf(why, why_len, "the application received the int8 codes, not the values: dequantize them "
                     "((q - %d) * %g) or set want_float = 1 in rknn_output", (int)q_zp, (double)q_scale);
            goto done;
        }
    }
    if (bad && !why[0]) {
        double g, off, r2;
        affine_fit(o, a, n, &g, &off, &r2);
        if (r2 > 0.9999 && isfinite(g))
            snprintf(why, why_len, "the application received the output times %.6g %+.6g: a wrong scale or zero point "
                     "was applied when dequantizing (use the output's own rknn_tensor_attr scale and zp)", g, off);
        else
            snprintf(why, why_len, "the application's output differs from the board's (cosine %.5f): was it read with "
                     "the wrong dtype (%s received)?", cosine(o, a, n), app->dtype == RD_DT_F32 ? "float32" : "integers");
    }
done:
    free(t);
    rd_tensor_fini(&af);
    return bad;
}

rd_status an_io_finding(rd_result *r, rd_finding_kind kind, const char *tensor, const char *why, rd_error *err)
{
    char title[700];
    bool in = kind == RD_FIND_INPUT_MISMATCH;
    snprintf(title, sizeof title, "The application's %s '%s' is not what the simulator %s", in ? "input" : "output",
             tensor, in ? "used" : "computed");
    rd_finding f = {.kind = kind, .severity = RD_SEV_ERROR, .layer = (char *)tensor, .title = title,
                    .evidence = (char *)why, .score = 1.0,
                    .advice = in ? "fix the application's preprocessing; the per-layer comparison above is only "
                                   "meaningful once the board's input matches"
                                 : "fix how the application reads its outputs (rknn_outputs_get: want_float, the "
                                   "output's dtype, scale and zero point)"};
    return rd_result_add_finding(r, &f, err);
}

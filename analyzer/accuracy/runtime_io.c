/*
 * runtime_io.c: the application's input and output against the simulator's (runtime_io.h).
 *
 * Each known mistake is a transformation of the expected data; the board's data is compared with each
 * transformation in turn and the first that matches within rounding names the mistake. What matches
 * none is reported with the cosine and a per-channel gain/offset fit, so the reader still has numbers.
 */
#include "runtime_io.h"
#include "accuracy.h"
#include "board_app.h"
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

const char *an_app_api_name(an_app_api api)
{
    return api == AN_API_ZERO_COPY ? "zero-copy" : "normal";
}

rd_status an_app_api_parse(const char *text, an_app_api *out, rd_error *err)
{
    if (strcmp(text, "normal") == 0)
        *out = AN_API_NORMAL;
    else if (strcmp(text, "zero-copy") == 0)
        *out = AN_API_ZERO_COPY;
    else
        return rd_errorf(err, RD_E_USAGE,
                         "'%s' is not an application API: normal (rknn_inputs_set) or zero-copy (rknn_create_mem and "
                         "rknn_set_io_mem)",
                         text);
    return RD_OK;
}

/* One input check: the board's values and scratch room for the candidates. */
typedef struct in_check {
    const an_input_expect *x;
    const float *b; /* the board's dump, float32 */
    int64_t n;      /* elements of the input */
    bool img;       /* rank-4 NCHW */
    int64_t N, C, H, W, plane;
    double tol;  /* how far a matching candidate may be from the dump, per element */
    float *cand; /* a candidate on the raw side */
    float *side; /* a candidate on the dump's side */
    bool *nomem; /* set when a candidate could not be made for want of memory (the check then fails) */
} in_check;

/* The runtime's normalisation of src (RGB2BGR for images, then (x - mean) / std) into dst. */
static bool normalise_into(const in_check *k, const float *src, float *dst)
{
    const rd_tensor *r = k->x->raw;
    rd_tensor t = {.dtype = RD_DT_F32, .rank = r->rank, .data = (void *)src}, out = {0};
    memcpy(t.dims, r->dims, sizeof t.dims);
    rd_error err;
    rd_status st = an_app_normalise(&t, k->x->is_image, k->x->spec, "input", &out, &err);
    if (st != RD_OK) {
        *k->nomem |= st == RD_E_NOMEM;
        return false;
    }
    memcpy(dst, out.data, (size_t)k->n * sizeof *dst);
    rd_tensor_fini(&out);
    return true;
}

/* A raw-side candidate on the dump's side of the normalisation: the zero-copy dump is the buffer itself;
   the normal API's is the normalised input (normalise false: the runtime skipped it) on the graph input's
   int8 grid when it has one. */
static bool to_dump_side(const in_check *k, const float *src, bool normalise, float *dst)
{
    if (k->x->api == AN_API_ZERO_COPY) {
        memcpy(dst, src, (size_t)k->n * sizeof *dst);
        return true;
    }
    if (normalise) {
        if (!normalise_into(k, src, dst))
            return false;
    } else {
        memcpy(dst, src, (size_t)k->n * sizeof *dst);
    }
    float scale = k->x->scale;
    if (scale > 0)
        for (int64_t i = 0; i < k->n; i++) {
            float q = isfinite(dst[i]) ? nearbyintf(dst[i] / scale) + (float)k->x->zero_point : (float)k->x->zero_point;
            q = q < -128.0f ? -128.0f : q > 127.0f ? 127.0f : q;
            dst[i] = (q - (float)k->x->zero_point) * scale;
        }
    return true;
}

static bool matches(in_check *k, const float *src, bool normalise)
{
    return to_dump_side(k, src, normalise, k->side) && close_all(k->side, k->b, k->n, k->tol);
}

/* The model's normalisation changes the data (mean, std or RGB2BGR other than identity). */
static bool normalisation_changes(const in_check *k)
{
    const rd_input_spec *s = k->x->spec;
    for (size_t c = 0; c < s->n_mean; c++)
        if (s->mean[c] != 0.0f)
            return true;
    for (size_t c = 0; c < s->n_std; c++)
        if (s->std[c] != 1.0f)
            return true;
    return k->x->is_image && s->rgb2bgr && k->img && k->C == 3;
}

/* Where the fix goes, by API. */
static const char *where_fed(const an_input_expect *x)
{
    return x->api == AN_API_ZERO_COPY ? "before writing it into the rknn_create_mem buffer" : "before rknn_inputs_set";
}

/* Candidates made on the raw input: the first that matches names the mistake. */
static an_input_verdict known_mistakes(in_check *k, const char *bd, char *why, size_t why_len)
{
    const an_input_expect *x = k->x;
    const float *r = x->raw->data;
    float *t = k->cand;
    int64_t n = k->n, N = k->N, C = k->C, plane = k->plane;
    bool zc = x->api == AN_API_ZERO_COPY;
    if (k->img && C == 3) { /* channels 0 and 2 swapped */
        for (int64_t b = 0; b < N; b++)
            for (int64_t c = 0; c < 3; c++)
                memcpy(t + (b * 3 + c) * plane, r + (b * 3 + (2 - c)) * plane, (size_t)plane * sizeof *t);
        if (matches(k, t, true)) {
            snprintf(why, why_len,
                     "the board's input is the simulator's with colour channels 0 and 2 swapped: the "
                     "application feeds BGR where the model was converted for RGB (or the reverse): convert with "
                     "cv2.cvtColor(img, cv2.COLOR_BGR2RGB) %s",
                     where_fed(x));
            return AN_IN_BGR;
        }
    }
    if (k->img && C > 1) { /* NHWC bytes in a buffer the runtime reads as NCHW */
        for (int64_t b = 0; b < N; b++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t p = 0; p < plane; p++)
                    t[b * C * plane + p * C + c] = r[(b * C + c) * plane + p];
        if (matches(k, t, true)) {
            snprintf(why, why_len,
                     "the board's input %s holds NHWC data read as NCHW: %s (or transpose the data to "
                     "NCHW) in the application",
                     bd,
                     zc ? "set the input's rknn_tensor_attr.fmt = RKNN_TENSOR_NHWC before rknn_set_io_mem"
                        : "set rknn_input.fmt = RKNN_TENSOR_NHWC");
            return AN_IN_NHWC;
        }
    }
    bool above127 = false;
    for (int64_t i = 0; i < n; i++)
        above127 |= r[i] > 127.5f;
    for (int wrap = 0; above127 && wrap < 2; wrap++) {
        for (int64_t i = 0; i < n; i++)
            t[i] = r[i] <= 127.0f ? r[i] : wrap ? (r[i] > 127.5f ? r[i] - 256.0f : r[i]) : 127.0f;
        if (matches(k, t, true)) {
            snprintf(why, why_len,
                     "uint8 input values above 127 were %s into int8 on the board: give the image as "
                     "RKNN_TENSOR_UINT8 (%s) instead of int8",
                     wrap ? "wrapped" : "clamped",
                     zc ? "rknn_tensor_attr.type before rknn_set_io_mem" : "rknn_input.type");
            return AN_IN_INT8_CLAMP;
        }
    }
    if (!normalisation_changes(k))
        return AN_IN_OK;
    /* the application's own (x - mean) / std, then the runtime's */
    if (normalise_into(k, r, t) && matches(k, t, true)) {
        snprintf(why, why_len,
                 "the board's input is the image normalised %s: the application normalises and the "
                 "model's mean_values/std_values normalise again: give the runtime the raw image%s",
                 zc ? "already" : "twice",
                 zc ? " (if the application feeds it with rknn_inputs_set, whose InputOperator dump holds "
                      "the normalised input, this is no mistake: analyse with --app-api normal)"
                    : "");
        return AN_IN_NORM_TWICE;
    }
    if (!zc && matches(k, r, false)) {
        snprintf(why, why_len,
                 "the board's input was not normalised: with the normal API (rknn_inputs_set) the "
                 "InputOperator dump holds the input after mean_values/std_values, and this one holds it as the "
                 "application gave it: the runtime skipped the normalisation (rknn_input.pass_through = 1 hands the "
                 "data to the NPU as it is: set pass_through = 0). If the application uses the zero-copy API "
                 "(rknn_create_mem, rknn_set_io_mem), whose dump is the data before normalisation, this is no "
                 "mistake: analyse with --app-api zero-copy");
        return AN_IN_NORM_MISSING;
    }
    return AN_IN_OK;
}

/* No known mistake matched exactly: a blurred image, a per-channel affine map (normalisation twice or
   missing), else the cosine and a fit, on the dump's side. */
static an_input_verdict approximate(in_check *k, const float *e, const char *rdims, char *why, size_t why_len)
{
    const an_input_expect *x = k->x;
    const float *b = k->b;
    int64_t n = k->n, N = k->N, C = k->C, W = k->W, plane = k->plane;
    bool zc = x->api == AN_API_ZERO_COPY;
    if (k->img && W > 2 && blurred(e, b, n, W)) {
        snprintf(why, why_len,
                 "the board's input is the expected image with its fine detail lost (same mean, %.0f%% of "
                 "the pixel-to-pixel gradient energy): it was resized from another size (or to another size and back): "
                 "give the runtime the image at the model's input size %s, resized as the model was trained",
                 100.0 * variation(b, n, W) / variation(e, n, W), rdims);
        return AN_IN_SIZE;
    }
    const rd_input_spec *spec = x->spec;
    bool fits = true, all_shrink = true, all_grow = true, like_spec = spec->n_std == (size_t)C,
         like_inverse = !zc && spec->n_std == (size_t)C;
    double g0 = NAN, o0 = NAN;
    for (int64_t c = 0; c < C && fits; c++) {
        double g = 0, o = 0, r2 = 0, sum_r2 = 0, sum_g = 0, sum_o = 0;
        for (int64_t s = 0; s < N; s++) {
            affine_fit(e + (s * C + c) * plane, b + (s * C + c) * plane, plane, &g, &o, &r2);
            sum_r2 += r2;
            sum_g += g;
            sum_o += o;
        }
        g = sum_g / (double)N;
        o = sum_o / (double)N;
        fits = isfinite(g) && sum_r2 / (double)N > 0.999;
        all_shrink &= g < 0.67;
        all_grow &= g > 1.5;
        double sd = like_spec ? spec->std[c] : 1.0, mean = spec->n_mean == (size_t)C ? spec->mean[c] : 0;
        like_spec = like_spec && fabs(g * sd - 1.0) < 0.02 && fabs(o + mean / sd) < 0.02 * (fabs(mean / sd) + 1.0);
        like_inverse = like_inverse && fabs(g / sd - 1.0) < 0.02 && fabs(o - mean) < 0.02 * (fabs(mean) + 1.0);
        if (c == 0) {
            g0 = g;
            o0 = o;
        }
    }
    if (fits && (like_spec || all_shrink)) {
        snprintf(why, why_len,
                 "the board's input is the image normalised %s (channel 0: x %.4g %+.4g)%s: the "
                 "application normalises and the model's mean_values/std_values normalise again: give the runtime "
                 "the raw image",
                 zc ? "already" : "twice", g0, o0, like_spec ? ", exactly the model's mean/std" : "");
        return AN_IN_NORM_TWICE;
    }
    if (fits && (like_inverse || all_grow)) {
        snprintf(why, why_len,
                 "the board's input is the expected input scaled (channel 0: x %.4g %+.4g)%s: it was not "
                 "normalised: apply the training mean/std in the application, or set mean_values/std_values when "
                 "converting the model",
                 g0, o0, like_inverse ? ", exactly the model's mean/std undone" : "");
        return AN_IN_NORM_MISSING;
    }
    snprintf(why, why_len,
             "the board's input differs from the simulator's (cosine %.5f, channel 0 fit x %.4g %+.4g): "
             "check the application's preprocessing (size, colour order, layout, dtype, mean/std)",
             cosine(e, b, n), g0, o0);
    return AN_IN_OTHER;
}

rd_status an_check_input(const rd_tensor *board, const an_input_expect *x, an_input_verdict *verdict, char *why,
                         size_t why_len, rd_error *err)
{
    rd_tensor bf = {0};
    why[0] = '\0';
    rd_status st = rd_tensor_to_f32(&bf, board, err);
    if (st == RD_E_NOMEM)
        return st;
    if (st != RD_OK) {
        snprintf(why, why_len, "the board's input dump could not be read as numbers");
        *verdict = AN_IN_OTHER;
        return RD_OK;
    }
    const rd_tensor *raw = x->raw;
    int64_t n = rd_tensor_numel(raw);
    char bd[128], rdims[128];
    dims_text(board, bd, sizeof bd);
    dims_text(raw, rdims, sizeof rdims);
    if (rd_tensor_numel(&bf) != n) {
        snprintf(why, why_len,
                 "the board's input has %lld values %s, the model's input %lld %s: wrong size (resize the "
                 "image to the model's input size in the application)",
                 (long long)rd_tensor_numel(&bf), bd, (long long)n, rdims);
        rd_tensor_fini(&bf);
        *verdict = AN_IN_SIZE;
        return RD_OK;
    }
    bool img = raw->rank == 4, nomem = false;
    in_check k = {.x = x,
                  .nomem = &nomem,
                  .b = bf.data,
                  .n = n,
                  .img = img,
                  .N = img ? raw->dims[0] : 1,
                  .C = img ? raw->dims[1] : 1,
                  .H = img ? raw->dims[2] : 1,
                  .W = img ? raw->dims[3] : n};
    k.plane = k.H * k.W;
    size_t bytes = (size_t)(n ? n : 1) * sizeof(float);
    float *e = malloc(bytes);
    k.cand = malloc(bytes);
    k.side = malloc(bytes);
    an_input_verdict v = AN_IN_OTHER;
    nomem = !e || !k.cand || !k.side;
    if (nomem || !to_dump_side(&k, raw->data, true, e)) {
        snprintf(why, why_len, "the model's mean/std do not fit the input: its check is skipped");
        goto done;
    }
    /* integer buffers hold the raw data rounded; the normal API's dump is on the input's int8 grid, where a
       runtime normalising in fixed point may land one code off; float dumps hold the data up to rounding */
    bool integer = board->dtype == RD_DT_U8 || board->dtype == RD_DT_I8 || board->dtype == RD_DT_I16 ||
                   board->dtype == RD_DT_U16 || board->dtype == RD_DT_I32;
    k.tol = 1e-3 * range_of(e, n) + 1e-6;
    if (x->api == AN_API_ZERO_COPY && integer)
        k.tol = 0.51;
    else if (x->api == AN_API_NORMAL && x->scale > 0 && 1.01 * x->scale > k.tol)
        k.tol = 1.01 * x->scale;
    if (close_all(e, k.b, n, k.tol)) {
        v = AN_IN_OK;
        goto done;
    }
    v = known_mistakes(&k, bd, why, why_len);
    if (v == AN_IN_OK)
        v = approximate(&k, e, rdims, why, why_len);
done:
    free(e);
    free(k.cand);
    free(k.side);
    rd_tensor_fini(&bf);
    *verdict = v;
    return nomem ? rd_errorf(err, RD_E_NOMEM, "out of memory checking the board's input") : RD_OK;
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

rd_status an_check_output(const rd_tensor *app, const rd_tensor *board_out, float q_scale, int32_t q_zp, bool *mismatch,
                          char *why, size_t why_len, rd_error *err)
{
    why[0] = '\0';
    *mismatch = true;
    int64_t n = rd_tensor_numel(board_out), na = rd_tensor_numel(app);
    if (na != n) {
        snprintf(why, why_len, "the application received %lld values, the output has %lld: %s", (long long)na,
                 (long long)n, ratio_reason(n ? (double)na / (double)n : 0));
        return RD_OK;
    }
    rd_tensor af = {0};
    rd_status st = board_out->dtype == RD_DT_F32 ? rd_tensor_to_f32(&af, app, err) : RD_E_INVAL;
    if (st == RD_E_NOMEM)
        return st;
    if (st != RD_OK) {
        snprintf(why, why_len, "the application's output could not be read as numbers");
        return RD_OK;
    }
    const float *a = af.data, *o = board_out->data;
    double tol = fmax(1e-5, 1e-3 * range_of(o, n));
    bool bad = true;
    float *t = malloc((size_t)(n ? n : 1) * sizeof *t);
    if (!t) {
        rd_tensor_fini(&af);
        return rd_errorf(err, RD_E_NOMEM, "out of memory checking the application's output");
    }
    if (close_all(a, o, n, tol)) {
        bad = false;
    } else if (q_scale > 0) {
        for (int64_t i = 0; i < n; i++)
            t[i] = (float)nearbyint(o[i] / q_scale) + (float)q_zp;
        if (close_all(a, t, n, 0.51)) {
            snprintf(why, why_len,
                     "the application received the int8 codes, not the values: dequantize them "
                     "((q - %d) * %g) or set want_float = 1 in rknn_output",
                     (int)q_zp, (double)q_scale);
            goto done;
        }
    }
    if (bad && !why[0]) {
        double g, off, r2;
        affine_fit(o, a, n, &g, &off, &r2);
        if (r2 > 0.9999 && isfinite(g))
            snprintf(why, why_len,
                     "the application received the output times %.6g %+.6g: a wrong scale or zero point "
                     "was applied when dequantizing (use the output's own rknn_tensor_attr scale and zp)",
                     g, off);
        else
            snprintf(why, why_len,
                     "the application's output differs from the board's (cosine %.5f): was it read with "
                     "the wrong dtype (%s received)?",
                     cosine(o, a, n), app->dtype == RD_DT_F32 ? "float32" : "integers");
    }
done:
    free(t);
    rd_tensor_fini(&af);
    *mismatch = bad;
    return RD_OK;
}

const char *an_input_verdict_name(an_input_verdict v)
{
    static const char *const names[] = {
        [AN_IN_OK] = "",
        [AN_IN_SIZE] = "wrong size",
        [AN_IN_BGR] = "RGB/BGR swapped",
        [AN_IN_NORM_TWICE] = "normalisation applied twice",
        [AN_IN_NORM_MISSING] = "normalisation not applied",
        [AN_IN_NHWC] = "wrong layout (NHWC read as NCHW)",
        [AN_IN_INT8_CLAMP] = "uint8 data clamped into int8",
        [AN_IN_OTHER] = "different data",
    };
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "different data";
}

rd_status an_io_finding(rd_result *r, rd_finding_kind kind, const char *tensor, const char *mistake, const char *why,
                        rd_error *err)
{
    char title[700];
    bool in = kind == RD_FIND_INPUT_MISMATCH;
    if (mistake && *mistake)
        snprintf(title, sizeof title, "The application's %s '%s': %s", in ? "input" : "output", tensor, mistake);
    else
        snprintf(title, sizeof title, "The application's %s '%s' is not what the simulator %s", in ? "input" : "output",
                 tensor, in ? "used" : "computed");
    return an_finding_add(r, kind, RD_SEV_ERROR, tensor, 1.0, title, why,
                          in ? "fix the application's preprocessing; the per-layer comparison above is only "
                               "meaningful once the board's input matches"
                             : "fix how the application reads its outputs (rknn_outputs_get: want_float, the "
                               "output's dtype, scale and zero point)",
                          err);
}

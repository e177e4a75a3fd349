/* preprocess.c: an image or .npy file turned into a graph input the way RKNN-Toolkit2 prepares
 * calibration and accuracy-analysis inputs.
 *
 * Images (uint8 HWC RGB from rd_image_parse): grey to 3 channels where the model wants 3 (as OpenCV's
 * imread does), RGB to grey with ITU-R 601 weights where it wants 1, bilinear resize with half-pixel
 * centres (OpenCV INTER_LINEAR, align_corners false; results rounded to uint8 as cv2.resize gives
 * them) when the size differs, then quant_img_RGB2BGR, then (x - mean) / std per channel, then HWC to
 * NCHW. .npy data: NHWC (rank 4) or HWC (rank 3) unless the spec says NCHW; never resized; the same
 * mean/std on axis 1. The result is a new float32 tensor of exactly the model input's dims. */
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static void warnf(const rd_warn_sink *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warnf(const rd_warn_sink *w, const char *fmt, ...)
{
    if (!w || !w->fn)
        return;
    char msg[RD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    w->fn(w->user, msg);
}

static const char *dims_str(int rank, const int64_t *dims, char *buf, size_t cap)
{
    rd_tensor t = {.dtype = RD_DT_F32, .rank = rank};
    for (int i = 0; i < rank && i < RD_MAX_RANK; i++)
        t.dims[i] = dims[i];
    return rd_shape_str(&t, buf, cap);
}

/* mean/std of the spec against the channel count; fills per-channel arrays. */
static rd_status norm_values(const rd_input_spec *spec, int64_t channels, const char *name, float *mean, float *inv_std,
                             rd_error *err)
{
    if (channels > RD_MAX_INPUT_CHANNELS) {
        if (spec->n_mean || spec->n_std)
            return rd_errorf(err, RD_E_PARSE, "%s: mean/std values given for an input of %lld channels (at most %d)",
                             name, (long long)channels, RD_MAX_INPUT_CHANNELS);
        return RD_OK;
    }
    if (spec->n_mean && spec->n_mean != (size_t)channels)
        return rd_errorf(err, RD_E_PARSE, "%s: mean_values has %zu value%s, the model input has %lld channel%s", name,
                         spec->n_mean, spec->n_mean == 1 ? "" : "s", (long long)channels, channels == 1 ? "" : "s");
    if (spec->n_std && spec->n_std != (size_t)channels)
        return rd_errorf(err, RD_E_PARSE, "%s: std_values has %zu value%s, the model input has %lld channel%s", name,
                         spec->n_std, spec->n_std == 1 ? "" : "s", (long long)channels, channels == 1 ? "" : "s");
    for (int64_t c = 0; c < channels; c++) {
        mean[c] = spec->n_mean ? spec->mean[c] : 0.0f;
        float s = spec->n_std ? spec->std[c] : 1.0f;
        if (s == 0.0f)
            return rd_errorf(err, RD_E_PARSE, "%s: std_values[%lld] is 0", name, (long long)c);
        inv_std[c] = s;
    }
    return RD_OK;
}

/* One axis of a bilinear resize: the two source taps of output position o and the second one's weight. */
typedef struct lerp_tap {
    int64_t i0, i1;
    double w;
} lerp_tap;

/* Half-pixel centres, clamped to the edge. */
static lerp_tap lerp_tap_at(int64_t o, double scale, int64_t n)
{
    double f = ((double)o + 0.5) * scale - 0.5;
    if (f < 0)
        f = 0;
    lerp_tap t = {.i0 = (int64_t)f};
    if (t.i0 > n - 1)
        t.i0 = n - 1;
    t.i1 = t.i0 + 1 < n ? t.i0 + 1 : n - 1;
    t.w = f - (double)t.i0;
    if (t.w > 1)
        t.w = 1;
    return t;
}

/* Bilinear resize of an HWC uint8 image, half-pixel centres, edge clamped, rounded to uint8. */
static void resize_bilinear(const unsigned char *src, int64_t sh, int64_t sw, int64_t c, unsigned char *dst, int64_t dh,
                            int64_t dw)
{
    double sy_scale = (double)sh / (double)dh, sx_scale = (double)sw / (double)dw;
    for (int64_t y = 0; y < dh; y++) {
        const lerp_tap ty = lerp_tap_at(y, sy_scale, sh);
        const int64_t y0 = ty.i0, y1 = ty.i1;
        const double wy = ty.w;
        for (int64_t x = 0; x < dw; x++) {
            const lerp_tap tx = lerp_tap_at(x, sx_scale, sw);
            const int64_t x0 = tx.i0, x1 = tx.i1;
            const double wx = tx.w;
            for (int64_t k = 0; k < c; k++) {
                double a = src[(y0 * sw + x0) * c + k], b = src[(y0 * sw + x1) * c + k];
                double d = src[(y1 * sw + x0) * c + k], e = src[(y1 * sw + x1) * c + k];
                double v = (a * (1 - wx) + b * wx) * (1 - wy) + (d * (1 - wx) + e * wx) * wy;
                long r = lrint(v);
                dst[(y * dw + x) * c + k] = (unsigned char)(r < 0 ? 0 : r > 255 ? 255 : r);
            }
        }
    }
}

static rd_status prepare_image(const rd_tensor *src, const char *name, const rd_input_spec *spec, int rank,
                               const int64_t *dims, const rd_warn_sink *warn, rd_tensor *out, rd_error *err)
{
    char want[128];
    dims_str(rank, dims, want, sizeof want);
    if (src->dtype != RD_DT_U8 || src->rank != 3 || (src->dims[2] != 1 && src->dims[2] != 3))
        return rd_errorf(err, RD_E_INVAL, "%s: an image must be uint8 HxWx1 or HxWx3", name);
    if (!((rank == 4 && dims[0] == 1) || rank == 3))
        return rd_errorf(err, RD_E_PARSE, "%s: an image cannot fill a model input of shape %s (expected 1xCxHxW)", name,
                         want);
    const int64_t *chw = rank == 4 ? dims + 1 : dims;
    int64_t mc = chw[0], mh = chw[1], mw = chw[2];
    int64_t h = src->dims[0], w = src->dims[1], c = src->dims[2];
    if (mc != 1 && mc != 3)
        return rd_errorf(err, RD_E_PARSE, "%s: the model input %s has %lld channels; images give 1 or 3", name, want,
                         (long long)mc);
    float mean[RD_MAX_INPUT_CHANNELS], sd[RD_MAX_INPUT_CHANNELS];
    rd_status st = norm_values(spec, mc, name, mean, sd, err);
    if (st != RD_OK)
        return st;

    /* channels first (on the source size), then size */
    size_t n_px;
    if (!sim_mul_ok((size_t)h, (size_t)w, &n_px))
        return rd_errorf(err, RD_E_LIMIT, "%s: image too large", name);
    unsigned char *conv = NULL;
    const unsigned char *px = src->data;
    if (c != mc) {
        conv = sim_malloc_array(n_px, (size_t)mc);
        if (!conv)
            return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", name);
        for (size_t i = 0; i < n_px; i++) {
            if (c == 1) {
                conv[i * 3] = conv[i * 3 + 1] = conv[i * 3 + 2] = px[i];
            } else { /* OpenCV's RGB2GRAY weights */
                double y = 0.299 * px[i * 3] + 0.587 * px[i * 3 + 1] + 0.114 * px[i * 3 + 2];
                conv[i] = (unsigned char)lrint(y);
            }
        }
        if (c == 3)
            warnf(warn, "%s: RGB image converted to grey for a 1-channel model input", name);
        px = conv;
    }
    unsigned char *resized = NULL;
    if (h != mh || w != mw) {
        resized = sim_malloc_array((size_t)(mh * mw), (size_t)mc);
        if (!resized) {
            free(conv);
            return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", name);
        }
        resize_bilinear(px, h, w, mc, resized, mh, mw);
        warnf(warn,
              "%s: resized from %lldx%lld to %lldx%lld (WxH; bilinear, half-pixel centres, as OpenCV's INTER_LINEAR)",
              name, (long long)w, (long long)h, (long long)mw, (long long)mh);
        px = resized;
    }
    st = rd_tensor_alloc(out, RD_DT_F32, rank, dims, err);
    if (st == RD_OK) {
        float *o = out->data;
        size_t plane = (size_t)(mh * mw);
        for (int64_t k = 0; k < mc; k++) {
            int64_t from = (spec->rgb2bgr && mc == 3) ? 2 - k : k; /* quant_img_RGB2BGR before mean/std */
            for (size_t i = 0; i < plane; i++)
                o[(size_t)k * plane + i] = ((float)px[i * (size_t)mc + (size_t)from] - mean[k]) / sd[k];
        }
    }
    free(conv);
    free(resized);
    return st;
}

static bool same_dims(int ra, const int64_t *a, int rb, const int64_t *b)
{
    if (ra != rb)
        return false;
    for (int i = 0; i < ra; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

static rd_status prepare_array(const rd_tensor *src, const char *name, const rd_input_spec *spec, int rank,
                               const int64_t *dims, rd_tensor *out, rd_error *err)
{
    char want[128], got[128];
    dims_str(rank, dims, want, sizeof want);
    rd_shape_str(src, got, sizeof got);
    /* the source shape with a leading batch of 1 added when it has one dim less than the model */
    int sr = src->rank;
    int64_t sd[RD_MAX_RANK + 1];
    int off = (sr == rank - 1) ? 1 : 0;
    sd[0] = 1;
    for (int i = 0; i < sr; i++)
        sd[i + off] = src->dims[i];
    sr += off;
    bool nhwc = spec->layout == RD_LAYOUT_NHWC && rank == 4;
    const int64_t nhwc_dims[4] = {dims[0], rank == 4 ? dims[2] : 0, rank == 4 ? dims[3] : 0, rank == 4 ? dims[1] : 0};
    if (rank == 4) {
        bool fits_nchw = same_dims(sr, sd, 4, dims), fits_nhwc = same_dims(sr, sd, 4, nhwc_dims);
        if (nhwc && !fits_nhwc)
            return rd_errorf(err, RD_E_PARSE, "%s: shape %s read as NHWC does not fit the model input %s (NCHW)%s",
                             name, got, want,
                             fits_nchw ? "; the file looks NCHW already: use --input-layout nchw" : "");
        if (!nhwc && !fits_nchw)
            return rd_errorf(err, RD_E_PARSE, "%s: shape %s read as NCHW does not fit the model input %s%s", name, got,
                             want, fits_nhwc ? "; the file looks NHWC: use --input-layout nhwc (RKNN's default)" : "");
    } else if (!same_dims(sr, sd, rank, dims)) {
        return rd_errorf(err, RD_E_PARSE, "%s: shape %s does not fit the model input %s", name, got, want);
    }
    int64_t channels = rank >= 2 ? dims[1] : 1;
    float mean[RD_MAX_INPUT_CHANNELS], isd[RD_MAX_INPUT_CHANNELS];
    rd_status st = norm_values(spec, channels, name, mean, isd, err);
    if (st != RD_OK)
        return st;
    rd_tensor f = {0};
    if ((st = rd_tensor_to_f32(&f, src, err)) != RD_OK)
        return rd_error_prefix(err, "%s", name);
    if ((st = rd_tensor_alloc(out, RD_DT_F32, rank, dims, err)) != RD_OK) {
        rd_tensor_fini(&f);
        return rd_error_prefix(err, "%s", name);
    }
    const float *in = f.data;
    float *o = out->data;
    int64_t numel = rd_tensor_numel(out);
    int64_t inner = 1; /* elements per (n, c) in NCHW */
    for (int i = 2; i < rank; i++)
        inner *= dims[i];
    bool norm = (spec->n_mean || spec->n_std) && channels <= RD_MAX_INPUT_CHANNELS;
    if (nhwc) {
        int64_t n = dims[0], c = dims[1], hw = dims[2] * dims[3];
        for (int64_t b = 0; b < n; b++)
            for (int64_t i = 0; i < hw; i++)
                for (int64_t k = 0; k < c; k++)
                    o[(b * c + k) * hw + i] = in[(b * hw + i) * c + k];
    } else {
        memcpy(o, in, (size_t)numel * sizeof *o);
    }
    if (norm)
        for (int64_t i = 0; i < numel; i++) {
            int64_t k = (i / inner) % channels;
            o[i] = (o[i] - mean[k]) / isd[k];
        }
    rd_tensor_fini(&f);
    return RD_OK;
}

rd_status rd_input_prepare_tensor(const rd_tensor *src, bool is_image, const char *name, const rd_input_spec *spec,
                                  int rank, const int64_t *dims, const rd_warn_sink *warn, rd_tensor *out,
                                  rd_error *err)
{
    static const rd_input_spec defaults = {.layout = RD_LAYOUT_NHWC};
    if (!spec)
        spec = &defaults;
    if (!name)
        name = "input";
    memset(out, 0, sizeof *out);
    if (rank < 1 || rank > RD_MAX_RANK)
        return rd_errorf(err, RD_E_INVAL, "%s: model input rank %d is not supported", name, rank);
    for (int i = 0; i < rank; i++)
        if (dims[i] <= 0) {
            char want[128];
            return rd_errorf(err, RD_E_INVAL,
                             "%s: the model input shape %s has an unknown dimension %d (give the shape)", name,
                             dims_str(rank, dims, want, sizeof want), i);
        }
    if (spec->n_mean > RD_MAX_INPUT_CHANNELS || spec->n_std > RD_MAX_INPUT_CHANNELS)
        return rd_errorf(err, RD_E_INVAL, "%s: more than %d mean/std values", name, RD_MAX_INPUT_CHANNELS);
    if (is_image)
        return prepare_image(src, name, spec, rank, dims, warn, out, err);
    return prepare_array(src, name, spec, rank, dims, out, err);
}

rd_status rd_input_prepare(const char *path, const rd_input_spec *spec, int rank, const int64_t *dims,
                           const rd_warn_sink *warn, rd_tensor *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    char *buf = NULL;
    size_t len = 0;
    bool is_npy = false;
    rd_tensor src = {0};
    /* by content, not by name: a .jpg that is really a PNG still reads; an .npy is read straight into src,
       after its header showed as many elements as the model input takes (in either layout) */
    rd_npy_expect want = {.rank = -1, .numel = 1, .what = "the model input"};
    for (int d = 0; d < rank && want.numel > 0; d++)
        want.numel = dims[d] > 0 && !__builtin_mul_overflow(want.numel, dims[d], &want.numel) ? want.numel : 0;
    rd_status st = sim_input_file_load(path, RD_MAX_IMAGE_FILE_BYTES, &want, &is_npy, &src, &buf, &len, err);
    if (st == RD_OK && !is_npy)
        st = rd_image_parse(buf, len, path, spec ? spec->max_image_pixels : 0, &src, err);
    free(buf);
    if (st != RD_OK)
        return st;
    st = rd_input_prepare_tensor(&src, !is_npy, path, spec, rank, dims, warn, out, err);
    rd_tensor_fini(&src);
    return st;
}

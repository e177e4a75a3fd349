/*
 * board_app.c: the emulated board's application: its raw input, the runtime's normalisation of it, and
 * the mistakes real applications make (issue 6 item 5), made on purpose so the input check has
 * something to name.
 */
#include "board_app.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const mistake_names[AN_MISTAKE_COUNT] = {
    [AN_MISTAKE_NONE] = "none",
    [AN_MISTAKE_RGB_BGR] = "rgb-bgr",
    [AN_MISTAKE_DOUBLE_NORM] = "double-norm",
    [AN_MISTAKE_NO_NORM] = "no-norm",
    [AN_MISTAKE_NHWC_AS_NCHW] = "nhwc-as-nchw",
    [AN_MISTAKE_INT8_CLAMP] = "int8-clamp",
    [AN_MISTAKE_WRONG_SIZE] = "wrong-size",
    [AN_MISTAKE_OUTPUT_DTYPE] = "output-dtype",
};

const char *an_app_mistake_name(an_app_mistake k)
{
    return (unsigned)k < AN_MISTAKE_COUNT ? mistake_names[k] : "unknown";
}

rd_status an_app_mistake_parse(const char *name, an_app_mistake *out, rd_error *err)
{
    for (int k = 0; k < AN_MISTAKE_COUNT; k++)
        if (strcmp(name, mistake_names[k]) == 0) {
            *out = (an_app_mistake)k;
            return RD_OK;
        }
    return rd_errorf(err, RD_E_USAGE,
                     "unknown application mistake '%s' (expected rgb-bgr, double-norm, no-norm, nhwc-as-nchw, "
                     "int8-clamp, wrong-size or output-dtype)",
                     name);
}

bool an_app_mistake_on_input(an_app_mistake k)
{
    return k != AN_MISTAKE_NONE && k != AN_MISTAKE_OUTPUT_DTYPE && k < AN_MISTAKE_COUNT;
}

/* float32 values (exactly representable) into a new tensor of dtype dt. */
static rd_status from_f32(const rd_tensor *f, rd_dtype dt, rd_tensor *out, rd_error *err)
{
    rd_status st = rd_tensor_alloc(out, dt, f->rank, f->dims, err);
    if (st != RD_OK)
        return st;
    const float *x = f->data;
    int64_t n = rd_tensor_numel(f);
    for (int64_t i = 0; i < n; i++) {
        float v = nearbyintf(x[i]);
        if (dt == RD_DT_U8)
            ((uint8_t *)out->data)[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        else if (dt == RD_DT_I8)
            ((int8_t *)out->data)[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
        else
            ((float *)out->data)[i] = x[i];
    }
    return RD_OK;
}

rd_status an_app_raw_input(const char *path, rd_input_layout layout, uint64_t max_image_pixels, int rank,
                           const int64_t *dims, rd_tensor *out, bool *is_image, rd_error *err)
{
    memset(out, 0, sizeof *out);
    *is_image = rd_path_is_image(path);
    rd_tensor src = {0};
    rd_status st = *is_image ? rd_image_load_max(path, max_image_pixels, &src, err) : rd_npy_load(path, &src, err);
    if (st != RD_OK)
        return st;
    /* the host's own preparation without mean/std: the application's resize and layout, values untouched */
    rd_input_spec plain = RD_INPUT_SPEC_DEFAULT;
    plain.layout = layout;
    rd_tensor f = {0};
    st = rd_input_prepare_tensor(&src, *is_image, path, &plain, rank, dims, NULL, &f, err);
    rd_dtype dt = *is_image || src.dtype == RD_DT_U8 ? RD_DT_U8 : src.dtype == RD_DT_I8 ? RD_DT_I8 : RD_DT_F32;
    rd_tensor_fini(&src);
    if (st == RD_OK)
        st = from_f32(&f, dt, out, err);
    rd_tensor_fini(&f);
    return st;
}

static void swap_planes(rd_tensor *t, int64_t a, int64_t b)
{
    size_t es = rd_dtype_get(t->dtype)->size;
    size_t plane = es;
    for (int i = 2; i < t->rank; i++)
        plane *= (size_t)t->dims[i];
    for (int64_t n = 0; n < t->dims[0]; n++) {
        unsigned char *base = (unsigned char *)t->data + (size_t)(n * t->dims[1]) * plane;
        unsigned char *pa = base + (size_t)a * plane, *pb = base + (size_t)b * plane;
        for (size_t i = 0; i < plane; i++) {
            unsigned char c = pa[i];
            pa[i] = pb[i];
            pb[i] = c;
        }
    }
}

rd_status an_app_normalise(const rd_tensor *raw, bool is_image, const rd_input_spec *spec, const char *name,
                           rd_tensor *out, rd_error *err)
{
    rd_input_spec s = *spec;
    s.layout = RD_LAYOUT_NCHW;
    s.rgb2bgr = false;
    if (!(is_image && spec->rgb2bgr && raw->rank == 4 && raw->dims[1] == 3))
        return rd_input_prepare_tensor(raw, false, name, &s, raw->rank, raw->dims, NULL, out, err);
    /* quant_img_RGB2BGR applies to images, before mean/std */
    rd_tensor swapped;
    rd_status st = rd_tensor_clone(&swapped, raw, err);
    if (st != RD_OK)
        return st;
    swap_planes(&swapped, 0, 2);
    st = rd_input_prepare_tensor(&swapped, false, name, &s, raw->rank, raw->dims, NULL, out, err);
    rd_tensor_fini(&swapped);
    return st;
}

/* Bilinear resize of one H x W plane, half-pixel centres (OpenCV's INTER_LINEAR). */
static void resize_plane(const float *src, int64_t sh, int64_t sw, float *dst, int64_t dh, int64_t dw)
{
    for (int64_t y = 0; y < dh; y++) {
        double fy = ((double)y + 0.5) * (double)sh / (double)dh - 0.5;
        fy = fy < 0 ? 0 : fy;
        int64_t y0 = (int64_t)fy, y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
        double wy = fy - (double)y0;
        for (int64_t x = 0; x < dw; x++) {
            double fx = ((double)x + 0.5) * (double)sw / (double)dw - 0.5;
            fx = fx < 0 ? 0 : fx;
            int64_t x0 = (int64_t)fx, x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
            double wx = fx - (double)x0;
            double top = src[y0 * sw + x0] * (1 - wx) + src[y0 * sw + x1] * wx;
            double bot = src[y1 * sw + x0] * (1 - wx) + src[y1 * sw + x1] * wx;
            dst[y * dw + x] = (float)(top * (1 - wy) + bot * wy);
        }
    }
}

/* Down to half the size and back up, per plane, rounded back to the raw dtype. */
static rd_status wrong_size(rd_tensor *raw, rd_error *err)
{
    int64_t h = raw->dims[2], w = raw->dims[3], sh = h / 2, sw = w / 2;
    int64_t planes = raw->dims[0] * raw->dims[1];
    rd_tensor f = {0};
    rd_status st = rd_tensor_to_f32(&f, raw, err);
    if (st != RD_OK)
        return st;
    float *small = malloc((size_t)(sh * sw) * sizeof *small);
    if (!small) {
        rd_tensor_fini(&f);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    float *x = f.data;
    for (int64_t p = 0; p < planes; p++) {
        resize_plane(x + p * h * w, h, w, small, sh, sw);
        resize_plane(small, sh, sw, x + p * h * w, h, w);
    }
    free(small);
    rd_tensor back;
    st = from_f32(&f, raw->dtype, &back, err);
    rd_tensor_fini(&f);
    if (st == RD_OK) {
        rd_tensor_fini(raw);
        *raw = back;
    }
    return st;
}

/* The NCHW tensor's elements laid out NHWC, dims still NCHW: a buffer declared with the wrong layout. */
static rd_status nhwc_as_nchw(rd_tensor *raw, rd_error *err)
{
    rd_tensor t;
    rd_status st = rd_tensor_alloc(&t, raw->dtype, raw->rank, raw->dims, err);
    if (st != RD_OK)
        return st;
    size_t es = rd_dtype_get(raw->dtype)->size;
    int64_t n = raw->dims[0], c = raw->dims[1], hw = raw->dims[2] * raw->dims[3];
    const unsigned char *src = raw->data;
    unsigned char *dst = t.data;
    for (int64_t b = 0; b < n; b++)
        for (int64_t k = 0; k < c; k++)
            for (int64_t i = 0; i < hw; i++)
                memcpy(dst + (size_t)((b * hw + i) * c + k) * es, src + (size_t)((b * c + k) * hw + i) * es, es);
    rd_tensor_fini(raw);
    *raw = t;
    return RD_OK;
}

static rd_status int8_clamp(rd_tensor *raw, const char *name, rd_error *err)
{
    if (raw->dtype != RD_DT_U8)
        return rd_errorf(
            err, RD_E_USAGE,
            "%s: int8-clamp clamps uint8 values into int8, but this input is %s (give an image or a uint8 .npy)", name,
            rd_dtype_name(raw->dtype));
    rd_tensor t;
    rd_status st = rd_tensor_alloc(&t, RD_DT_I8, raw->rank, raw->dims, err);
    if (st != RD_OK)
        return st;
    const uint8_t *u = raw->data;
    int8_t *q = t.data;
    for (int64_t i = 0; i < rd_tensor_numel(raw); i++)
        q[i] = (int8_t)(u[i] > 127 ? 127 : u[i]);
    rd_tensor_fini(raw);
    *raw = t;
    return RD_OK;
}

rd_status an_app_apply_mistake(an_app_mistake k, rd_tensor *raw, bool is_image, const rd_input_spec *spec,
                               const char *name, FILE *errs, rd_error *err)
{
    bool nchw4 = raw->rank == 4;
    switch (k) {
    case AN_MISTAKE_RGB_BGR:
        if (!nchw4 || raw->dims[1] != 3)
            return rd_errorf(err, RD_E_USAGE, "%s: rgb-bgr needs a 3-channel NCHW input", name);
        swap_planes(raw, 0, 2);
        return RD_OK;
    case AN_MISTAKE_DOUBLE_NORM: {
        if (!spec->n_mean && !spec->n_std && errs)
            fprintf(errs, "warning: %s: double-norm without --mean/--std changes nothing (mean 0, std 1)\n", name);
        rd_input_spec own = *spec;
        own.rgb2bgr = false; /* the application's own (x - mean) / std */
        rd_tensor t;
        rd_status st = an_app_normalise(raw, false, &own, name, &t, err);
        if (st == RD_OK) {
            rd_tensor_fini(raw);
            *raw = t;
        }
        return st;
    }
    case AN_MISTAKE_NO_NORM: /* the data stays as it is: the runtime skips the normalisation (board-run feeds it raw) */
        if (!spec->n_mean && !spec->n_std && errs)
            fprintf(errs, "warning: %s: no-norm without --mean/--std changes nothing (mean 0, std 1)\n", name);
        return RD_OK;
    case AN_MISTAKE_NHWC_AS_NCHW:
        if (!nchw4)
            return rd_errorf(err, RD_E_USAGE, "%s: nhwc-as-nchw needs a rank-4 input", name);
        if ((raw->dims[1] == 1 || raw->dims[2] * raw->dims[3] == 1) && errs)
            fprintf(errs, "warning: %s: nhwc-as-nchw changes nothing on a single channel or pixel\n", name);
        return nhwc_as_nchw(raw, err);
    case AN_MISTAKE_INT8_CLAMP:
        return int8_clamp(raw, name, err);
    case AN_MISTAKE_WRONG_SIZE:
        if (!nchw4 || raw->dims[2] < 2 || raw->dims[3] < 2)
            return rd_errorf(err, RD_E_USAGE, "%s: wrong-size needs a rank-4 input of at least 2x2 pixels", name);
        return wrong_size(raw, err);
    default:
        (void)is_image;
        return RD_OK;
    }
}

rd_status an_app_output(const rd_tensor *out_f32, an_app_mistake k, const rd_sim_tensor *info, rd_tensor *saved,
                        rd_error *err)
{
    if (k != AN_MISTAKE_OUTPUT_DTYPE)
        return rd_tensor_clone(saved, out_f32, err);
    rd_status st = rd_tensor_alloc(saved, RD_DT_I8, out_f32->rank, out_f32->dims, err);
    if (st != RD_OK)
        return st;
    const float *x = out_f32->data;
    int64_t n = rd_tensor_numel(out_f32);
    float scale = 1.0f;
    int32_t zp = 0;
    if (info && info->quantized) {
        scale = info->scale;
        zp = info->zero_point;
    } else {
        float amax = 0;
        for (int64_t i = 0; i < n; i++)
            if (isfinite(x[i]) && fabsf(x[i]) > amax)
                amax = fabsf(x[i]);
        scale = amax > 0 ? amax / 127.0f : 1.0f;
    }
    for (int64_t i = 0; i < n; i++) {
        float q = isfinite(x[i]) ? nearbyintf(x[i] / scale) + (float)zp : (float)zp;
        ((int8_t *)saved->data)[i] = (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
    }
    return RD_OK;
}

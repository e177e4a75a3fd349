/*
 * eval_image.c: the input of a detection or segmentation sample and where its pixels went: an image
 * stretched to the model input (RKNN's preprocessing: bilinear, half-pixel centres) or letterboxed
 * (Ultralytics' LetterBox: scaled to fit with the aspect ratio kept, centred, padded with grey 114), then
 * RGB2BGR and mean/std as configured. A .npy sample is taken as it is (no geometry: the annotation's
 * image size, if any, is assumed stretched).
 */
#include "eval_image.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's round() for the letterbox padding: half to even. */
static double round_half_even(double v)
{
    double r = nearbyint(v); /* the default rounding mode is to nearest, ties to even */
    return r;
}

static rd_status input_spec(const an_eval_ctx *c, rd_input_spec *spec, rd_error *err)
{
    *spec = RD_INPUT_SPEC_DEFAULT;
    spec->layout = c->ds.graph_layout ? RD_LAYOUT_NCHW : c->q->layout;
    spec->max_image_pixels = c->q->max_image_pixels;
    return rd_rknn_config_input_spec(&c->q->cfg, 0, spec, err);
}

/* Letterboxed uint8 HWC canvas of the model input's size from a decoded image. */
static rd_status letterbox(const rd_tensor *img, int64_t channels, int in_w, int in_h, const char *name, rd_tensor *out,
                           an_eval_geom *g, rd_error *err)
{
    const double w0 = (double)img->dims[1], h0 = (double)img->dims[0];
    const double r = fmin((double)in_h / h0, (double)in_w / w0);
    int64_t nw = (int64_t)round_half_even(w0 * r), nh = (int64_t)round_half_even(h0 * r);
    if (nw < 1)
        nw = 1;
    if (nh < 1)
        nh = 1;
    const double dw = ((double)in_w - (double)nw) / 2, dh = ((double)in_h - (double)nh) / 2;
    const int64_t left = (int64_t)round_half_even(dw - 0.1), top = (int64_t)round_half_even(dh - 0.1);
    rd_input_spec plain = RD_INPUT_SPEC_DEFAULT;
    plain.max_image_pixels = RD_MAX_IMAGE_PIXELS;
    rd_tensor resized;
    const int64_t rdims[4] = {1, channels, nh, nw};
    rd_status st = rd_input_prepare_tensor(img, true, name, &plain, 4, rdims, NULL, &resized, err);
    if (st != RD_OK)
        return st;
    const int64_t cdims[3] = {in_h, in_w, channels};
    st = rd_tensor_alloc(out, RD_DT_U8, 3, cdims, err);
    if (st == RD_OK) {
        uint8_t *dst = out->data;
        memset(dst, 114, (size_t)(in_h * in_w * channels));
        const float *src = resized.data;
        for (int64_t y = 0; y < nh; y++)
            for (int64_t x = 0; x < nw; x++)
                for (int64_t ch = 0; ch < channels; ch++) {
                    int64_t ty = y + top, tx = x + left;
                    if (ty < 0 || ty >= in_h || tx < 0 || tx >= in_w)
                        continue;
                    float v = src[(ch * nh + y) * nw + x];
                    dst[(ty * in_w + tx) * channels + ch] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : lrintf(v));
                }
        /* Ultralytics' scale_boxes: gain r, padding round((w1 - w0 * r) / 2 - 0.1) */
        g->sx = g->sy = r;
        g->pad_x = round_half_even(((double)in_w - w0 * r) / 2 - 0.1);
        g->pad_y = round_half_even(((double)in_h - h0 * r) / 2 - 0.1);
    }
    rd_tensor_fini(&resized);
    return st;
}

rd_status an_eval_image_input(an_eval_ctx *c, size_t k, bool lbox, rd_tensor *in, an_eval_geom *g, rd_error *err)
{
    memset(g, 0, sizeof *g);
    if (rd_model_input_count(c->m) != 1)
        return rd_errorf(err, RD_E_INVAL, "the model has %zu inputs: detection and segmentation take one image input",
                         rd_model_input_count(c->m));
    const char *path = rd_dataset_path(&c->ds, k, 0);
    if (!rd_path_is_image(path)) {
        rd_status st = an_quant_prepare_sample(c->q, c->m, &c->ds, k, 0, NULL, &in[0], err);
        return st == RD_OK ? RD_OK : rd_error_prefix(err, "%s line %d", c->ds.path, c->ds.lines[k]);
    }
    rd_value_info vi;
    rd_model_value(c->m, (size_t)rd_model_input(c->m, 0), &vi);
    if (vi.rank != 4 || c->in_w <= 0 || c->in_h <= 0)
        return rd_errorf(err, RD_E_INVAL, "input '%s' is not [1, C, H, W] with a known size: give --input-shape",
                         vi.name);
    int64_t dims[4];
    for (int d = 0; d < 4; d++)
        dims[d] = vi.dims[d] < 0 ? 1 : vi.dims[d];
    rd_input_spec spec;
    rd_status st = input_spec(c, &spec, err);
    rd_tensor img = {0};
    if (st == RD_OK)
        st = rd_image_load_max(path, c->q->max_image_pixels, &img, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s line %d", c->ds.path, c->ds.lines[k]);
    g->orig_w = img.dims[1];
    g->orig_h = img.dims[0];
    if (lbox) {
        rd_tensor canvas;
        st = letterbox(&img, dims[1], c->in_w, c->in_h, path, &canvas, g, err);
        if (st == RD_OK) {
            st = rd_input_prepare_tensor(&canvas, true, path, &spec, 4, dims, NULL, &in[0], err);
            rd_tensor_fini(&canvas);
        }
    } else {
        g->sx = (double)c->in_w / (double)g->orig_w;
        g->sy = (double)c->in_h / (double)g->orig_h;
        st = rd_input_prepare_tensor(&img, true, path, &spec, 4, dims, NULL, &in[0], err);
    }
    rd_tensor_fini(&img);
    return st == RD_OK ? RD_OK : rd_error_prefix(err, "%s line %d", c->ds.path, c->ds.lines[k]);
}

void an_eval_sibling_path(const an_eval_ctx *c, size_t k, const char *dir, const char *ext, char *buf, size_t len)
{
    const char *p = rd_dataset_path(&c->ds, k, 0);
    const char *base = strrchr(p, '/');
    base = base ? base + 1 : p;
    const char *dot = strrchr(base, '.');
    int n = dot ? (int)(dot - base) : (int)strlen(base);
    snprintf(buf, len, "%s/%.*s%s", dir, n, base, ext);
}

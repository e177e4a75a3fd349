/* image.c: PNG (libpng) and JPEG (libjpeg-turbo) decoding to uint8 HWC RGB or grey, and the format
 * dispatch by magic bytes (BMP is in image_bmp.c).
 *
 * We match what RKNN-Toolkit2 sees through OpenCV's imread: no gamma or colour management, alpha
 * dropped (not composited), 16-bit samples reduced to their high byte, JPEG decoded with libjpeg's
 * default (islow IDCT, fancy upsampling). Truncated or corrupt files are errors, never grey-filled
 * pictures: libjpeg's "premature end" warning is turned into an error. Dimensions are checked
 * against max_pixels before any pixel buffer is allocated. */
#include "internal.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <strings.h>

#include <jpeglib.h>
#include <jerror.h>

#define MAX_JPEG_SCANS 1000 /* progressive JPEGs with more scans are refused (fuzzers make slow ones) */

/* Allocates the H x W x C uint8 output after checking the pixel budget. */
static rd_status alloc_image(rd_tensor *out, uint64_t w, uint64_t h, int c, uint64_t max_pixels, const char *name,
                             const char *fmt, rd_error *err)
{
    if (w == 0 || h == 0)
        return rd_errorf(err, RD_E_PARSE, "%s: %s image with a zero dimension (%llux%llu)", name, fmt,
                         (unsigned long long)w, (unsigned long long)h);
    rd_status st = sim_image_check_size(w, h, max_pixels, name, fmt, err);
    if (st != RD_OK)
        return st;
    int64_t dims[3] = {(int64_t)h, (int64_t)w, c};
    st = rd_tensor_alloc(out, RD_DT_U8, 3, dims, err);
    if (st != RD_OK)
        rd_error_prefix(err, "%s", name);
    return st;
}

rd_status sim_image_check_size(uint64_t w, uint64_t h, uint64_t max_pixels, const char *name, const char *fmt,
                               rd_error *err)
{
    if (w > max_pixels || h > max_pixels || w * h > max_pixels)
        return rd_errorf(err, RD_E_LIMIT,
                         "%s: %s image of %llux%llu pixels is above the limit of %llu pixels (a larger picture than a "
                         "camera's; raise the bound with --max-image-pixels if it is real)",
                         name, fmt, (unsigned long long)w, (unsigned long long)h, (unsigned long long)max_pixels);
    return RD_OK;
}

/* ------------------------------------------------------------------------------------------------
 * PNG
 */

typedef struct png_ctx {
    const unsigned char *buf;
    size_t len, pos;
    char msg[256];
    jmp_buf jmp;
    png_bytep *rows; /* these two live here, not in locals, so that they survive a longjmp */
    rd_tensor img;
} png_ctx;

static void png_on_error(png_structp png, png_const_charp msg)
{
    png_ctx *c = png_get_error_ptr(png);
    snprintf(c->msg, sizeof c->msg, "%s", msg);
    longjmp(c->jmp, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg)
{
    (void)png; /* benign (an sRGB profile note, an ancillary CRC): the pixels are still right */
    (void)msg;
}

static void png_read_mem(png_structp png, png_bytep data, png_size_t n)
{
    png_ctx *c = png_get_io_ptr(png);
    if (n > c->len - c->pos)
        png_error(png, "file is truncated");
    memcpy(data, c->buf + c->pos, n);
    c->pos += n;
}

static rd_status png_decode(const unsigned char *buf, size_t len, const char *name, uint64_t max_pixels, rd_tensor *out,
                            rd_error *err)
{
    png_ctx c = {.buf = buf, .len = len};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &c, png_on_error, png_on_warning);
    if (!png)
        return rd_errorf(err, RD_E_NOMEM, "%s: cannot create a PNG reader", name);
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return rd_errorf(err, RD_E_NOMEM, "%s: cannot create a PNG reader", name);
    }
    volatile rd_status st = RD_OK;
    if (setjmp(c.jmp)) {
        st = rd_errorf(err, RD_E_PARSE, "%s: cannot decode PNG: %s (at byte %zu of %zu)", name, c.msg, c.pos, len);
        goto out;
    }
    png_set_read_fn(png, &c, png_read_mem);
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_read_info(png, info); /* the header only: rows are sized by png_read_update_info, after our check */
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    st = sim_image_check_size(w, h, max_pixels, name, "PNG", err);
    if (st != RD_OK)
        goto out;
    int depth = png_get_bit_depth(png, info), type = png_get_color_type(png, info);
    if (depth == 16)
        png_set_strip_16(png);
    if (type == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (type == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if ((type & PNG_COLOR_MASK_ALPHA) || png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_strip_alpha(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int channels = png_get_channels(png, info);
    if (channels != 1 && channels != 3) {
        st = rd_errorf(err, RD_E_UNSUPPORTED, "%s: PNG decodes to %d channels (expected grey or RGB)", name, channels);
        goto out;
    }
    st = alloc_image(&c.img, w, h, channels, max_pixels, name, "PNG", err);
    if (st != RD_OK)
        goto out;
    c.rows = sim_malloc_array(h, sizeof *c.rows);
    if (!c.rows) {
        st = rd_errorf(err, RD_E_NOMEM, "%s: out of memory", name);
        goto out;
    }
    for (png_uint_32 y = 0; y < h; y++)
        c.rows[y] = (png_bytep)c.img.data + (size_t)y * w * (size_t)channels;
    png_read_image(png, c.rows);
    png_read_end(png, NULL);
out:
    png_destroy_read_struct(&png, &info, NULL);
    free(c.rows);
    if (st != RD_OK) {
        rd_tensor_fini(&c.img);
        return st;
    }
    *out = c.img;
    return RD_OK;
}

/* ------------------------------------------------------------------------------------------------
 * JPEG
 */

typedef struct jpeg_ctx {
    struct jpeg_error_mgr mgr; /* first: libjpeg hands us back this pointer */
    jmp_buf jmp;
    char msg[JMSG_LENGTH_MAX + 64];
    rd_tensor img; /* here rather than in a local so that it survives a longjmp */
} jpeg_ctx;

static void jpeg_on_error(j_common_ptr ci)
{
    jpeg_ctx *c = (jpeg_ctx *)ci->err;
    ci->err->format_message(ci, c->msg);
    longjmp(c->jmp, 1);
}

/* Warnings mean corrupt data (premature end, bad Huffman code): an error for a calibration image.
 * "Extraneous bytes before marker" alone is common in good files and only skipped. */
static void jpeg_on_message(j_common_ptr ci, int level)
{
    if (level != -1 || ci->err->msg_code == JWRN_EXTRANEOUS_DATA)
        return;
    jpeg_on_error(ci);
}

static void jpeg_on_progress(j_common_ptr ci)
{
    j_decompress_ptr d = (j_decompress_ptr)ci;
    if (ci->is_decompressor && d->input_scan_number > MAX_JPEG_SCANS) {
        jpeg_ctx *c = (jpeg_ctx *)ci->err;
        snprintf(c->msg, sizeof c->msg, "more than %d progressive scans", MAX_JPEG_SCANS);
        longjmp(c->jmp, 1);
    }
}

static rd_status jpeg_decode(const unsigned char *buf, size_t len, const char *name, uint64_t max_pixels,
                             rd_tensor *out, rd_error *err)
{
    struct jpeg_decompress_struct ci;
    struct jpeg_progress_mgr progress = {.progress_monitor = jpeg_on_progress};
    jpeg_ctx c;
    volatile rd_status st = RD_OK;
    memset(&c.img, 0, sizeof c.img);
    ci.err = jpeg_std_error(&c.mgr);
    c.mgr.error_exit = jpeg_on_error;
    c.mgr.emit_message = jpeg_on_message;
    c.msg[0] = '\0';
    if (setjmp(c.jmp)) {
        if (st == RD_OK)
            st = rd_errorf(err, RD_E_PARSE, "%s: cannot decode JPEG: %s", name, c.msg);
        goto out;
    }
    jpeg_create_decompress(&ci);
    ci.progress = &progress;
    jpeg_mem_src(&ci, buf, (unsigned long)len);
    jpeg_read_header(&ci, TRUE);
    if (ci.jpeg_color_space == JCS_CMYK || ci.jpeg_color_space == JCS_YCCK) {
        st = rd_errorf(err, RD_E_UNSUPPORTED, "%s: CMYK JPEG images are not supported (convert it to RGB)", name);
        goto out;
    }
    ci.out_color_space = ci.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    st = alloc_image(&c.img, ci.image_width, ci.image_height, ci.num_components == 1 ? 1 : 3, max_pixels, name, "JPEG",
                     err);
    if (st != RD_OK)
        goto out;
    jpeg_start_decompress(&ci);
    if (ci.output_width != (JDIMENSION)c.img.dims[1] || ci.output_height != (JDIMENSION)c.img.dims[0] ||
        ci.output_components != (int)c.img.dims[2]) {
        st = rd_errorf(err, RD_E_PARSE, "%s: JPEG output geometry changed after decoding started", name);
        goto out;
    }
    size_t stride = (size_t)ci.output_width * (size_t)ci.output_components;
    while (ci.output_scanline < ci.output_height) {
        JSAMPROW row = (JSAMPROW)c.img.data + (size_t)ci.output_scanline * stride;
        jpeg_read_scanlines(&ci, &row, 1);
    }
    jpeg_finish_decompress(&ci);
out:
    jpeg_destroy_decompress(&ci);
    if (st != RD_OK) {
        rd_tensor_fini(&c.img);
        return st;
    }
    *out = c.img;
    return RD_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Dispatch
 */

bool sim_image_signature(const uint8_t *b, size_t len)
{
    return (len >= 4 && b[0] == 0x89 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G') ||
           (len >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) || (len >= 2 && b[0] == 'B' && b[1] == 'M');
}

rd_status rd_image_parse(const void *buf, size_t len, const char *name, uint64_t max_pixels, rd_tensor *out,
                         rd_error *err)
{
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    const unsigned char *b = buf;
    if (max_pixels == 0)
        max_pixels = RD_DEFAULT_IMAGE_PIXELS;
    if (max_pixels > RD_MAX_IMAGE_PIXELS)
        max_pixels = RD_MAX_IMAGE_PIXELS;
    if (len >= 8 && !memcmp(b, png_sig, 8))
        return png_decode(b, len, name, max_pixels, out, err);
    if (len >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
        return jpeg_decode(b, len, name, max_pixels, out, err);
    if (len >= 2 && b[0] == 'B' && b[1] == 'M')
        return sim_bmp_parse(b, len, name, max_pixels, out, err);
    if (len == 0)
        return rd_errorf(err, RD_E_PARSE, "%s: empty file, not an image", name);
    return rd_errorf(err, RD_E_PARSE, "%s: not a PNG, JPEG or BMP image (first bytes %02x %02x %02x %02x)", name, b[0],
                     len > 1 ? b[1] : 0, len > 2 ? b[2] : 0, len > 3 ? b[3] : 0);
}

rd_status rd_image_load_max(const char *path, uint64_t max_pixels, rd_tensor *out, rd_error *err)
{
    sim_file_bytes f;
    rd_status st = sim_file_bytes_read(path, RD_MAX_IMAGE_FILE_BYTES, &f, err);
    if (st == RD_OK)
        st = rd_image_parse(f.buf, f.len, path, max_pixels, out, err);
    sim_file_bytes_free(&f);
    return st;
}

rd_status rd_image_load(const char *path, rd_tensor *out, rd_error *err)
{
    return rd_image_load_max(path, 0, out, err);
}

bool rd_path_is_image(const char *path)
{
    static const char *const exts[] = {".png", ".jpg", ".jpeg", ".bmp"};
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t e = strlen(exts[i]);
        if (n > e && !strcasecmp(path + n - e, exts[i]))
            return true;
    }
    return false;
}

/* image_bmp.c: a small BMP reader (no Debian library does BMP alone).
 *
 * Handles what cameras, OpenCV and PIL write: BITMAPCOREHEADER (12 bytes) and BITMAPINFOHEADER and
 * its V2..V5 extensions (40, 52, 56, 108, 124 bytes); 1, 4 and 8-bit palettes (a palette whose
 * entries are all grey gives a 1-channel image), 24-bit BGR, 32-bit BGRX and 32-bit BI_BITFIELDS;
 * bottom-up (positive height) and top-down (negative height) rows. RLE and 16-bit are refused as
 * unsupported. Every offset and size is checked against the buffer before it is read and the pixel
 * count against max_pixels before allocation. Out-of-range palette indices read as black. */
#include "internal.h"

#include <stdio.h>

static uint32_t rd_u16(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t rd_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A channel mask of BI_BITFIELDS as shift and width, so any contiguous mask scales to 8 bits. */
typedef struct mask {
    uint32_t mask;
    int shift, bits;
} mask;

static bool mask_init(mask *m, uint32_t v)
{
    m->mask = v;
    m->shift = 0;
    m->bits = 0;
    if (v == 0)
        return false;
    while (!(v & 1)) {
        v >>= 1;
        m->shift++;
    }
    while (v & 1) {
        v >>= 1;
        m->bits++;
    }
    return v == 0; /* contiguous */
}

static unsigned char mask_get(const mask *m, uint32_t px)
{
    uint32_t v = (px & m->mask) >> m->shift;
    if (m->bits >= 8)
        return (unsigned char)(v >> (m->bits - 8));
    uint32_t max = (1u << m->bits) - 1;
    return (unsigned char)((v * 255 + max / 2) / max);
}

rd_status sim_bmp_parse(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, rd_tensor *out,
                        rd_error *err)
{
    if (len < 14 + 12)
        return rd_errorf(err, RD_E_PARSE, "%s: BMP is truncated: %zu bytes, the headers alone need %d", name, len, 26);
    uint32_t data_off = rd_u32(b + 10);
    uint32_t hsize = rd_u32(b + 14);
    if (hsize != 12 && hsize != 40 && hsize != 52 && hsize != 56 && hsize != 108 && hsize != 124)
        return rd_errorf(err, RD_E_PARSE, "%s: BMP header size %u is not one of 12, 40, 52, 56, 108, 124", name, hsize);
    if (len < 14 + (size_t)hsize)
        return rd_errorf(err, RD_E_PARSE, "%s: BMP is truncated: %zu bytes, the headers need %zu", name, len,
                         14 + (size_t)hsize);
    const unsigned char *h = b + 14;
    int64_t w, ht;
    uint32_t bpp, compression = 0, clr_used = 0;
    if (hsize == 12) {
        w = rd_u16(h + 4);
        ht = rd_u16(h + 6);
        bpp = rd_u16(h + 10);
    } else {
        w = (int32_t)rd_u32(h + 4);
        ht = (int32_t)rd_u32(h + 8);
        bpp = rd_u16(h + 14);
        compression = rd_u32(h + 16);
        clr_used = rd_u32(h + 32);
    }
    bool top_down = ht < 0;
    if (top_down)
        ht = -ht;
    if (w <= 0 || ht <= 0)
        return rd_errorf(err, RD_E_PARSE, "%s: BMP has invalid dimensions %lldx%lld", name, (long long)w,
                         (long long)(top_down ? -ht : ht));
    rd_status st = sim_image_check_size((uint64_t)w, (uint64_t)ht, max_pixels, name, "BMP", err);
    if (st != RD_OK)
        return st;
    if (compression == 1 || compression == 2)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: RLE-compressed BMP is not supported", name);
    if (compression != 0 && !(compression == 3 && bpp == 32))
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: BMP compression %u with %u bits per pixel is not supported", name,
                         compression, bpp);
    if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 24 && bpp != 32)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: BMP with %u bits per pixel is not supported (1, 4, 8, 24, 32 are)",
                         name, bpp);

    /* masks for 32-bit BI_BITFIELDS: in the V2+ header, or just after a 40-byte header */
    mask mr, mg, mb;
    size_t after_header = 14 + (size_t)hsize;
    if (compression == 3) {
        const unsigned char *m = h + 40;
        if (hsize == 40) {
            if (len < after_header + 12)
                return rd_errorf(err, RD_E_PARSE, "%s: BMP is truncated inside its colour masks", name);
            m = b + after_header;
            after_header += 12;
        }
        if (!mask_init(&mr, rd_u32(m)) || !mask_init(&mg, rd_u32(m + 4)) || !mask_init(&mb, rd_u32(m + 8)))
            return rd_errorf(err, RD_E_UNSUPPORTED, "%s: BMP colour masks %08x %08x %08x are not contiguous bit runs",
                             name, rd_u32(m), rd_u32(m + 4), rd_u32(m + 8));
    } else {
        mask_init(&mr, 0x00ff0000);
        mask_init(&mg, 0x0000ff00);
        mask_init(&mb, 0x000000ff);
    }

    /* palette */
    unsigned char pal[256][3] = {{0}};
    uint32_t n_colors = 0;
    bool grey = false;
    if (bpp <= 8) {
        uint32_t max_colors = 1u << bpp;
        n_colors = clr_used == 0 || clr_used > max_colors ? max_colors : clr_used;
        size_t entry = hsize == 12 ? 3 : 4;
        size_t pal_end = after_header + (size_t)n_colors * entry;
        if (pal_end > len || pal_end > data_off) {
            /* a shorter palette than announced: use what lies before the pixel data */
            size_t avail = (data_off < len ? data_off : len);
            n_colors = avail > after_header ? (uint32_t)((avail - after_header) / entry) : 0;
            if (n_colors > max_colors)
                n_colors = max_colors;
            if (n_colors == 0)
                return rd_errorf(err, RD_E_PARSE, "%s: BMP with %u bits per pixel has no palette", name, bpp);
        }
        grey = true;
        for (uint32_t i = 0; i < n_colors; i++) {
            const unsigned char *e = b + after_header + i * entry;
            pal[i][0] = e[2];
            pal[i][1] = e[1];
            pal[i][2] = e[0];
            grey = grey && e[0] == e[1] && e[1] == e[2];
        }
    }

    uint64_t stride = (((uint64_t)w * bpp + 31) / 32) * 4;
    uint64_t need = (uint64_t)data_off + stride * (uint64_t)(ht - 1) + ((uint64_t)w * bpp + 7) / 8;
    if (data_off < after_header || need > len)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: BMP is truncated: %lldx%lld pixels at %u bits from offset %u need %llu bytes, the file "
                         "has %zu",
                         name, (long long)w, (long long)ht, bpp, data_off, (unsigned long long)need, len);

    int c = grey ? 1 : 3;
    int64_t dims[3] = {ht, w, c};
    st = rd_tensor_alloc(out, RD_DT_U8, 3, dims, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", name);
    unsigned char *dst = out->data;
    for (int64_t y = 0; y < ht; y++) {
        const unsigned char *row = b + data_off + (size_t)stride * (size_t)(top_down ? y : ht - 1 - y);
        unsigned char *o = dst + (size_t)y * (size_t)w * (size_t)c;
        for (int64_t x = 0; x < w; x++, o += c) {
            if (bpp <= 8) {
                size_t bit = (size_t)x * bpp;
                unsigned idx = (row[bit / 8] >> (8 - bpp - bit % 8)) & ((1u << bpp) - 1);
                static const unsigned char black[3] = {0, 0, 0}; /* an index past the palette */
                const unsigned char *rgb = idx < n_colors ? pal[idx] : black;
                o[0] = rgb[0];
                if (c == 3) {
                    o[1] = rgb[1];
                    o[2] = rgb[2];
                }
            } else if (bpp == 24) {
                const unsigned char *p = row + (size_t)x * 3;
                o[0] = p[2];
                o[1] = p[1];
                o[2] = p[0];
            } else {
                uint32_t px = rd_u32(row + (size_t)x * 4);
                o[0] = mask_get(&mr, px);
                o[1] = mask_get(&mg, px);
                o[2] = mask_get(&mb, px);
            }
        }
    }
    return RD_OK;
}

/*
 * png_canvas.c: the RGB canvas of the charts: rectangles, thick and dashed lines, bitmap text, and
 * the PNG encoding through libpng (in memory, with libpng's longjmp error handling kept local).
 */
#include "png_chart.h"

#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#define GLYPH_W 5
#define GLYPH_H 7
#define GLYPH_ADVANCE 6 /* columns per character, one of them blank */

rd_status rep_canvas_init(rep_canvas *c, int w, int h, uint32_t rgb, rd_error *err)
{
    c->w = c->h = 0;
    c->px = NULL;
    if (w <= 0 || h <= 0 || w > 8192 || h > 8192)
        return rd_errorf(err, RD_E_INVAL, "chart: canvas %dx%d out of range", w, h);
    c->px = malloc((size_t)w * (size_t)h * 3);
    if (!c->px)
        return rd_errorf(err, RD_E_NOMEM, "chart: out of memory for a %dx%d canvas", w, h);
    c->w = w;
    c->h = h;
    rep_fill_rect(c, 0, 0, w, h, rgb);
    return RD_OK;
}

void rep_canvas_fini(rep_canvas *c)
{
    free(c->px);
    c->px = NULL;
    c->w = c->h = 0;
}

static void put(rep_canvas *c, int x, int y, uint32_t rgb)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return;
    uint8_t *p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    p[0] = (uint8_t)(rgb >> 16);
    p[1] = (uint8_t)(rgb >> 8);
    p[2] = (uint8_t)rgb;
}

void rep_fill_rect(rep_canvas *c, int x, int y, int w, int h, uint32_t rgb)
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    for (int yy = y0; yy < y1; yy++)
        for (int xx = x0; xx < x1; xx++)
            put(c, xx, yy, rgb);
}

void rep_draw_line(rep_canvas *c, int x0, int y0, int x1, int y1, uint32_t rgb, int thick, int dash)
{
    /* Bresenham, stamping a thick x thick square at every step; far-off endpoints are clamped first so
     * that a wild coordinate cannot make the loop long */
    const int lim = 100000;
    x0 = x0 < -lim ? -lim : x0 > lim ? lim : x0;
    x1 = x1 < -lim ? -lim : x1 > lim ? lim : x1;
    y0 = y0 < -lim ? -lim : y0 > lim ? lim : y0;
    y1 = y1 < -lim ? -lim : y1 > lim ? lim : y1;
    int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
    int dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
    int e = dx + dy, step = 0, half = (thick - 1) / 2;
    for (;;) {
        if (dash <= 0 || (step / dash) % 2 == 0)
            rep_fill_rect(c, x0 - half, y0 - half, thick, thick, rgb);
        step++;
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * e;
        if (e2 >= dy) {
            e += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            e += dx;
            y0 += sy;
        }
    }
}

int rep_text_width(const char *s, int scale)
{
    size_t n = strlen(s);
    return n ? (int)(n * GLYPH_ADVANCE - 1) * scale : 0;
}

int rep_text_height(int scale)
{
    return GLYPH_H * scale;
}

void rep_draw_text(rep_canvas *c, int x, int y, const char *s, uint32_t rgb, int scale, bool vertical)
{
    for (int i = 0; s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        const unsigned char *g = rep_font5x7[(ch >= 32 && ch <= 126 ? ch : '?') - 32];
        for (int row = 0; row < GLYPH_H; row++)
            for (int col = 0; col < GLYPH_W; col++) {
                if (!(g[row] & (0x10 >> col)))
                    continue;
                int u = (i * GLYPH_ADVANCE + col) * scale, v = row * scale;
                if (vertical) /* reading upwards: u runs up from y, v runs right from x */
                    rep_fill_rect(c, x + v, y - u - scale, scale, scale, rgb);
                else
                    rep_fill_rect(c, x + u, y + v, scale, scale, rgb);
            }
    }
}

typedef struct png_mem {
    unsigned char *data;
    size_t len, cap;
    bool failed;
} png_mem;

static void mem_write(png_structp png, png_bytep data, png_size_t n)
{
    png_mem *m = png_get_io_ptr(png);
    if (m->failed)
        return;
    if (m->len + n > m->cap) {
        size_t cap = m->cap ? m->cap : 65536;
        while (cap < m->len + n)
            cap *= 2;
        unsigned char *p = realloc(m->data, cap);
        if (!p) {
            m->failed = true;
            return;
        }
        m->data = p;
        m->cap = cap;
    }
    memcpy(m->data + m->len, data, n);
    m->len += n;
}

static void mem_flush(png_structp png)
{
    (void)png;
}

rd_status rep_png_encode(const rep_canvas *c, unsigned char **out, size_t *out_len, rd_error *err)
{
    *out = NULL;
    *out_len = 0;
    png_mem m = {0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    png_bytep *volatile rows = NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, NULL);
        return rd_errorf(err, RD_E_NOMEM, "chart: out of memory in libpng");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(rows);
        free(m.data);
        return rd_errorf(err, RD_E_NOMEM, "chart: libpng failed to encode a %dx%d image", c->w, c->h);
    }
    rows = malloc((size_t)c->h * sizeof *rows);
    if (!rows)
        png_error(png, "out of memory");
    for (int y = 0; y < c->h; y++)
        rows[y] = c->px + (size_t)y * (size_t)c->w * 3;
    png_set_write_fn(png, &m, mem_write, mem_flush);
    png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_rows(png, info, rows);
    png_write_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    if (m.failed) {
        free(m.data);
        return rd_errorf(err, RD_E_NOMEM, "chart: out of memory for the PNG");
    }
    *out = m.data;
    *out_len = m.len;
    return RD_OK;
}

/* test_image.c: PNG, JPEG and BMP decoding: known pixels of the shared photos, BMPs we write in every
 * supported variant, and the malformed cases (undecodable, truncated, absurd sizes). */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *shared_image(const char *file)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/images/%s", rd_test_shared_dir(), file);
    return path;
}

static const unsigned char *px(const rd_tensor *t, int64_t x, int64_t y)
{
    return (const unsigned char *)t->data + (y * t->dims[1] + x) * t->dims[2];
}

/* Reference values from an independent pure-Python PNG decoder (zlib + unfiltering). */
static void test_png_known_pixels(void)
{
    rd_error err;
    rd_tensor t;
    CU_ASSERT_EQUAL_FATAL(rd_image_load(shared_image("astronaut.png"), &t, &err), RD_OK);
    CU_ASSERT_EQUAL(t.dtype, RD_DT_U8);
    CU_ASSERT_EQUAL(t.rank, 3);
    CU_ASSERT_EQUAL(t.dims[0], 512);
    CU_ASSERT_EQUAL(t.dims[1], 512);
    CU_ASSERT_EQUAL(t.dims[2], 3);
    CU_ASSERT_EQUAL(memcmp(px(&t, 0, 0), (unsigned char[]){154, 147, 151}, 3), 0);
    CU_ASSERT_EQUAL(memcmp(px(&t, 511, 0), (unsigned char[]){125, 119, 110}, 3), 0);
    CU_ASSERT_EQUAL(memcmp(px(&t, 0, 511), (unsigned char[]){184, 167, 172}, 3), 0);
    CU_ASSERT_EQUAL(memcmp(px(&t, 256, 170), (unsigned char[]){213, 201, 201}, 3), 0);
    CU_ASSERT_EQUAL(memcmp(px(&t, 17, 123), (unsigned char[]){29, 9, 64}, 3), 0);
    rd_tensor_fini(&t);

    CU_ASSERT_EQUAL_FATAL(rd_image_load(shared_image("camera.png"), &t, &err), RD_OK);
    CU_ASSERT_EQUAL(t.dims[2], 1); /* grey stays one channel until an input wants three */
    CU_ASSERT_EQUAL(*px(&t, 0, 0), 200);
    CU_ASSERT_EQUAL(*px(&t, 511, 0), 190);
    CU_ASSERT_EQUAL(*px(&t, 0, 511), 25);
    CU_ASSERT_EQUAL(*px(&t, 511, 511), 149);
    CU_ASSERT_EQUAL(*px(&t, 17, 123), 216);
    rd_tensor_fini(&t);

    CU_ASSERT_EQUAL_FATAL(rd_image_load(shared_image("chelsea.png"), &t, &err), RD_OK);
    CU_ASSERT_EQUAL(t.dims[0], 300);
    CU_ASSERT_EQUAL(t.dims[1], 451);
    CU_ASSERT_EQUAL(memcmp(px(&t, 450, 299), (unsigned char[]){162, 138, 128}, 3), 0);
    CU_ASSERT_EQUAL(memcmp(px(&t, 225, 100), (unsigned char[]){186, 140, 106}, 3), 0);
    rd_tensor_fini(&t);
}

/* No second JPEG decoder is installed here: the values are libjpeg-turbo's (islow IDCT, fancy
 * upsampling, the defaults OpenCV and PIL also use), kept as a regression check. */
static void test_jpeg_decodes(void)
{
    rd_error err;
    rd_tensor t;
    CU_ASSERT_EQUAL_FATAL(rd_image_load(shared_image("dog.jpg"), &t, &err), RD_OK);
    CU_ASSERT_EQUAL(t.dims[0], 576);
    CU_ASSERT_EQUAL(t.dims[1], 768);
    CU_ASSERT_EQUAL(t.dims[2], 3);
    double sum = 0;
    for (int64_t i = 0; i < rd_tensor_numel(&t); i++)
        sum += ((unsigned char *)t.data)[i];
    double mean = sum / (double)rd_tensor_numel(&t);
    CU_ASSERT(mean > 60 && mean < 200); /* a photo, not a grey fill */
    CU_ASSERT_EQUAL(memcmp(px(&t, 0, 0), (unsigned char[]){57, 58, 50}, 3), 0);
    CU_ASSERT_EQUAL(memcmp(px(&t, 767, 575), (unsigned char[]){50, 39, 35}, 3), 0);
    CU_ASSERT_EQUAL(memcmp(px(&t, 300, 200), (unsigned char[]){141, 141, 149}, 3), 0);
    rd_tensor_fini(&t);
    CU_ASSERT_EQUAL_FATAL(rd_image_load(shared_image("rocket.jpg"), &t, &err), RD_OK);
    CU_ASSERT_EQUAL(t.dims[0], 427);
    CU_ASSERT_EQUAL(t.dims[1], 640);
    rd_tensor_fini(&t);
}

/* ---- BMP writer for the tests ---- */

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Encodes rgb (w*h*3) as a BMP; bpp 24/32 direct, 8 with a palette (grey palette when grey). */
static unsigned char *make_bmp(const unsigned char *rgb, int w, int h, int bpp, bool top_down, bool grey, size_t *len)
{
    int stride = ((w * bpp + 31) / 32) * 4;
    int pal = bpp == 8 ? 256 : 0;
    size_t off = 14 + 40 + (size_t)pal * 4;
    *len = off + (size_t)stride * (size_t)h;
    unsigned char *b = calloc(1, *len);
    b[0] = 'B';
    b[1] = 'M';
    put32(b + 2, (uint32_t)*len);
    put32(b + 10, (uint32_t)off);
    put32(b + 14, 40);
    put32(b + 18, (uint32_t)w);
    put32(b + 22, (uint32_t)(top_down ? -h : h));
    put16(b + 26, 1);
    put16(b + 28, (unsigned)bpp);
    for (int i = 0; i < pal; i++) { /* grey ramp, or 6x7x6 colour cube */
        unsigned char *e = b + 54 + i * 4;
        if (grey)
            e[0] = e[1] = e[2] = (unsigned char)i;
        else {
            e[2] = (unsigned char)((i % 6) * 51);
            e[1] = (unsigned char)(((i / 6) % 7) * 42);
            e[0] = (unsigned char)((i / 42) % 6 * 51);
        }
    }
    for (int y = 0; y < h; y++) {
        unsigned char *row = b + off + (size_t)stride * (size_t)(top_down ? y : h - 1 - y);
        for (int x = 0; x < w; x++) {
            const unsigned char *p = rgb + (y * w + x) * 3;
            if (bpp == 24 || bpp == 32) {
                row[x * (bpp / 8)] = p[2];
                row[x * (bpp / 8) + 1] = p[1];
                row[x * (bpp / 8) + 2] = p[0];
            } else {
                row[x] = grey ? p[0] : (unsigned char)((x + y) % 252);
            }
        }
    }
    return b;
}

static void test_bmp_variants(void)
{
    const int w = 7, h = 5; /* odd width: rows are padded */
    unsigned char rgb[7 * 5 * 3];
    for (int i = 0; i < w * h * 3; i++)
        rgb[i] = (unsigned char)(i * 37 + 11);
    for (int v = 0; v < 4; v++) {
        int bpp = v < 2 ? 24 : 32;
        bool top = v % 2;
        size_t len;
        unsigned char *b = make_bmp(rgb, w, h, bpp, top, false, &len);
        rd_error err;
        rd_tensor t;
        CU_ASSERT_EQUAL_FATAL(rd_image_parse(b, len, "t.bmp", 0, &t, &err), RD_OK);
        CU_ASSERT_EQUAL(t.dims[0], h);
        CU_ASSERT_EQUAL(t.dims[1], w);
        CU_ASSERT_EQUAL(t.dims[2], 3);
        CU_ASSERT_EQUAL(memcmp(t.data, rgb, sizeof rgb), 0);
        rd_tensor_fini(&t);
        free(b);
    }
    /* 8-bit grey palette gives one channel */
    unsigned char g[7 * 5 * 3];
    for (int i = 0; i < w * h; i++)
        g[i * 3] = g[i * 3 + 1] = g[i * 3 + 2] = (unsigned char)(i * 7);
    size_t len;
    unsigned char *b = make_bmp(g, w, h, 8, false, true, &len);
    rd_error err;
    rd_tensor t;
    CU_ASSERT_EQUAL_FATAL(rd_image_parse(b, len, "g.bmp", 0, &t, &err), RD_OK);
    CU_ASSERT_EQUAL(t.dims[2], 1);
    CU_ASSERT_EQUAL(*px(&t, 3, 2), (2 * 7 + 3) * 7);
    rd_tensor_fini(&t);
    free(b);
    /* 8-bit colour palette, top-down */
    b = make_bmp(g, w, h, 8, true, false, &len);
    CU_ASSERT_EQUAL_FATAL(rd_image_parse(b, len, "p.bmp", 0, &t, &err), RD_OK);
    CU_ASSERT_EQUAL(t.dims[2], 3);
    int idx = (4 + 3) % 252; /* x=4, y=3 */
    unsigned char want[3] = {(unsigned char)((idx % 6) * 51), (unsigned char)(((idx / 6) % 7) * 42),
                             (unsigned char)((idx / 42) % 6 * 51)};
    CU_ASSERT_EQUAL(memcmp(px(&t, 4, 3), want, 3), 0);
    rd_tensor_fini(&t);
    free(b);
}

/* A BMP written to disk loads by path the same way (and a real photo re-encoded as BMP matches). */
static void test_bmp_file_matches_png(void)
{
    rd_error err;
    rd_tensor png;
    CU_ASSERT_EQUAL_FATAL(rd_image_load(shared_image("chelsea.png"), &png, &err), RD_OK);
    size_t len;
    unsigned char *b = make_bmp(png.data, (int)png.dims[1], (int)png.dims[0], 24, false, false, &len);
    char *dir = rd_test_tmpdir("image");
    char path[4200];
    snprintf(path, sizeof path, "%s/chelsea.bmp", dir);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL);
    fwrite(b, 1, len, f);
    fclose(f);
    rd_tensor bmp;
    CU_ASSERT_EQUAL_FATAL(rd_image_load(path, &bmp, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_tensor_nbytes(&bmp), rd_tensor_nbytes(&png));
    CU_ASSERT_EQUAL(memcmp(bmp.data, png.data, rd_tensor_nbytes(&png)), 0);
    rd_tensor_fini(&bmp);
    rd_tensor_fini(&png);
    free(b);
    free(dir);
}

static void expect_error(const void *buf, size_t len, const char *name, rd_status code, const char *substr)
{
    rd_error err = {0};
    rd_tensor t = {0};
    rd_status st = rd_image_parse(buf, len, name, 0, &t, &err);
    CU_ASSERT_EQUAL(st, code);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, name));
    if (!strstr(err.msg, substr)) {
        fprintf(stderr, "\n  message '%s' lacks '%s'\n", err.msg, substr);
        CU_FAIL("message");
    }
    if (st == RD_OK)
        rd_tensor_fini(&t);
}

static void test_malformed(void)
{
    expect_error("hello, world", 12, "notes.png", RD_E_PARSE, "not a PNG, JPEG or BMP");
    expect_error("", 0, "empty.jpg", RD_E_PARSE, "empty file");
    size_t len;
    unsigned char *png = rd_test_read_file(shared_image("astronaut.png"), &len);
    CU_ASSERT_FATAL(png != NULL);
    expect_error(png, len / 2, "half.png", RD_E_PARSE, "truncated");
    expect_error(png, 40, "header.png", RD_E_PARSE, "cannot decode PNG");
    png[20] ^= 0x55; /* IHDR CRC no longer matches */
    expect_error(png, len, "crc.png", RD_E_PARSE, "cannot decode PNG");
    free(png);
    unsigned char *jpg = rd_test_read_file(shared_image("dog.jpg"), &len);
    CU_ASSERT_FATAL(jpg != NULL);
    expect_error(jpg, len / 2, "half.jpg", RD_E_PARSE, "Premature end");
    expect_error(jpg, 100, "head.jpg", RD_E_PARSE, "cannot decode JPEG");
    free(jpg);

    unsigned char rgb[4 * 4 * 3] = {0};
    unsigned char *b = make_bmp(rgb, 4, 4, 24, false, false, &len);
    expect_error(b, len - 5, "short.bmp", RD_E_PARSE, "truncated");
    expect_error(b, 20, "tiny.bmp", RD_E_PARSE, "truncated");
    put32(b + 18, 1000000);
    put32(b + 22, 1000000);
    expect_error(b, len, "huge.bmp", RD_E_LIMIT, "above the limit");
    put32(b + 18, 0);
    expect_error(b, len, "zero.bmp", RD_E_PARSE, "invalid dimensions");
    put32(b + 18, 4);
    put32(b + 22, 4);
    put32(b + 30, 1); /* BI_RLE8 */
    expect_error(b, len, "rle.bmp", RD_E_UNSUPPORTED, "RLE");
    put32(b + 30, 0);
    put32(b + 14, 77);
    expect_error(b, len, "hdr.bmp", RD_E_PARSE, "header size 77");
    free(b);

    /* the pixel cap applies before allocation */
    b = make_bmp(rgb, 4, 4, 24, false, false, &len);
    rd_error err;
    rd_tensor t;
    CU_ASSERT_EQUAL(rd_image_parse(b, len, "cap.bmp", 15, &t, &err), RD_E_LIMIT);
    CU_ASSERT_EQUAL(rd_image_parse(b, len, "cap.bmp", 16, &t, &err), RD_OK);
    rd_tensor_fini(&t);
    free(b);
    CU_ASSERT_EQUAL(rd_image_load("/nonexistent/x.png", &t, &err), RD_E_NOTFOUND);
}

/* CRC-32 of PNG chunks (ISO 3309, as zlib's crc32). */
static uint32_t png_crc(const unsigned char *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
    return ~c;
}

static void put_be32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)(v >> 24);
    b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);
    b[3] = (unsigned char)v;
}

/* Appends a chunk (length, type, data, CRC) at b + *len. */
static void png_chunk(unsigned char *b, size_t *len, const char *type, const unsigned char *data, uint32_t n)
{
    put_be32(b + *len, n);
    memcpy(b + *len + 4, type, 4);
    if (n)
        memcpy(b + *len + 8, data, n);
    put_be32(b + *len + 8 + n, png_crc(b + *len + 4, 4 + n));
    *len += 12 + n;
}

/* A small PNG whose header claims w x h RGB pixels, with a few bytes of pixel data. */
static size_t make_claiming_png(unsigned char *b, uint32_t w, uint32_t h)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    memcpy(b, sig, 8);
    size_t len = 8;
    unsigned char ihdr[13] = {0};
    put_be32(ihdr, w);
    put_be32(ihdr + 4, h);
    ihdr[8] = 8; /* bit depth */
    ihdr[9] = 2; /* RGB */
    png_chunk(b, &len, "IHDR", ihdr, 13);
    static const unsigned char idat[] = {0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01}; /* zlib of one 0 */
    png_chunk(b, &len, "IDAT", idat, sizeof idat);
    png_chunk(b, &len, "IEND", NULL, 0);
    return len;
}

/* A baseline JPEG header (SOI, DQT, SOF0, SOS) claiming w x h grey pixels, and no real scan. */
static size_t make_claiming_jpeg(unsigned char *b, unsigned w, unsigned h)
{
    size_t n = 0;
    b[n++] = 0xff, b[n++] = 0xd8;
    b[n++] = 0xff, b[n++] = 0xdb, b[n++] = 0, b[n++] = 67, b[n++] = 0;
    for (int i = 0; i < 64; i++)
        b[n++] = 1;
    b[n++] = 0xff, b[n++] = 0xc0, b[n++] = 0, b[n++] = 11, b[n++] = 8;
    b[n++] = (unsigned char)(h >> 8), b[n++] = (unsigned char)h, b[n++] = (unsigned char)(w >> 8),
    b[n++] = (unsigned char)w;
    b[n++] = 1, b[n++] = 1, b[n++] = 0x11, b[n++] = 0;
    b[n++] = 0xff, b[n++] = 0xda, b[n++] = 0, b[n++] = 8, b[n++] = 1, b[n++] = 1, b[n++] = 0, b[n++] = 0, b[n++] = 63,
    b[n++] = 0;
    b[n++] = 0x00, b[n++] = 0xff, b[n++] = 0xd9;
    return n;
}

/* Small files claiming huge pictures are refused from their header, before any pixel buffer exists, under
   the default bound of 67 M pixels; a caller may raise it (--max-image-pixels). */
static void test_huge_claims(void)
{
    unsigned char b[512];
    size_t len = make_claiming_png(b, 16000, 16000); /* 768 MB of RGB from 70 bytes */
    CU_ASSERT(len < 100);
    expect_error(b, len, "huge.png", RD_E_LIMIT, "16000x16000");
    expect_error(b, len, "huge.png", RD_E_LIMIT, "--max-image-pixels");
    len = make_claiming_png(b, 1, 0x7fffffff); /* one side alone */
    expect_error(b, len, "tall.png", RD_E_LIMIT, "above the limit");
    /* just above the default: refused; with the bound raised, decoding starts and meets the missing data */
    len = make_claiming_png(b, 8200, 8200);
    expect_error(b, len, "big.png", RD_E_LIMIT, "67108864 pixels");
    rd_error err;
    rd_tensor t;
    CU_ASSERT_EQUAL(rd_image_parse(b, len, "big.png", 70000000, &t, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot decode PNG"));
    /* a bound above the hard maximum is capped */
    len = make_claiming_png(b, 20000, 20000);
    CU_ASSERT_EQUAL(rd_image_parse(b, len, "cap.png", UINT64_MAX, &t, &err), RD_E_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "268435456 pixels"));
    len = make_claiming_jpeg(b, 20000, 20000);
    expect_error(b, len, "huge.jpg", RD_E_LIMIT, "20000x20000");
    unsigned char rgb[3] = {0};
    unsigned char *bmp = make_bmp(rgb, 1, 1, 24, false, false, &len);
    put32(bmp + 18, 9000);
    put32(bmp + 22, 9000);
    expect_error(bmp, len, "huge.bmp", RD_E_LIMIT, "9000x9000");
    free(bmp);
}

static void test_path_is_image(void)
{
    CU_ASSERT_TRUE(rd_path_is_image("a/b.PNG"));
    CU_ASSERT_TRUE(rd_path_is_image("x.jpeg"));
    CU_ASSERT_TRUE(rd_path_is_image("x.bmp"));
    CU_ASSERT_FALSE(rd_path_is_image("x.npy"));
    CU_ASSERT_FALSE(rd_path_is_image(".png"));
}

RD_TEST_REGISTER(register_image_tests)
{
    RD_SUITE("image", {"png known pixels", test_png_known_pixels}, {"jpeg decodes", test_jpeg_decodes},
             {"bmp variants", test_bmp_variants}, {"bmp file equals png", test_bmp_file_matches_png},
             {"malformed images", test_malformed}, {"huge claims", test_huge_claims},
             {"path is image", test_path_is_image});
}

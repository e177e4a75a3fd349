/*
 * test_npy_load.c: .npy files are checked on their header before their data is read, and the data is
 * read once, into the tensor (issue 16 item 12).
 *
 * Sparse files stand for huge ones: a file of 1 GiB that occupies no disk. A header that claims less or
 * more than the file holds, a header too long, a shape or dtype the caller did not expect: each is
 * refused without reading the data, which the peak resident size shows (a read of the data would touch
 * its 1 GiB). The normal load of a 64 MiB file peaks at about its size (docs/benchmarks.md).
 */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define SPARSE_BYTES ((off_t)1 << 30)

/* Writes a version 1.0 (2.0 with v2) header for dict, then makes the file size bytes long (sparse). */
static char *sparse_npy(const char *dir, const char *name, const char *dict, bool v2, off_t size)
{
    static char path[4300]; /* test-only, single-threaded */
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t hlen = strlen(dict), prefix = v2 ? 12 : 10;
    unsigned char head[512];
    memcpy(head, "\x93NUMPY", 6);
    head[6] = v2 ? 2 : 1;
    head[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++)
        head[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(head + prefix, dict, hlen);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(write(fd, head, prefix + hlen) == (ssize_t)(prefix + hlen));
    CU_ASSERT_FATAL(ftruncate(fd, size) == 0);
    close(fd);
    return path;
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void expect_refused(const char *path, const rd_npy_expect *want, rd_status code, const char *msg)
{
    long before = peak_rss_kb();
    rd_tensor t;
    rd_error err = {0};
    rd_status st = rd_npy_load_expect(path, want, &t, &err);
    if (st != code || !strstr(err.msg, msg))
        fprintf(stderr, "\n  %s: got %s '%s', want %s '%s'\n", path, rd_status_str(st), err.msg, rd_status_str(code),
                msg);
    CU_ASSERT_EQUAL(st, code);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path)); /* the file is named */
    CU_ASSERT_PTR_NULL(t.data);
    CU_ASSERT(peak_rss_kb() - before < 64 * 1024); /* far from the 1 GiB a read would touch */
}

static void test_huge_claims_refused_cheaply(void)
{
    char *dir = rd_test_tmpdir("npy-sparse");
    /* 1 GiB of file behind a 2-element header */
    char *p = sparse_npy(dir, "small_claim.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", false,
                         SPARSE_BYTES);
    expect_refused(p, NULL, RD_E_PARSE, "bytes after the data: the float32 shape in the header needs 8 bytes");
    /* a header claiming 4 GiB in a 1 GiB file: truncated */
    p = sparse_npy(dir, "big_claim.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824,), }\n", false,
                   SPARSE_BYTES);
    expect_refused(p, NULL, RD_E_PARSE, "truncated data: float32 shape needs 4294967296 bytes");
    /* a claim that matches the file, refused against the shape the caller expects */
    off_t data_off = 10 + (off_t)strlen("{'descr': '<f4', 'fortran_order': False, 'shape': (256, 1024, 1024), }\n");
    p = sparse_npy(dir, "exact_claim.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (256, 1024, 1024), }\n",
                   false, data_off + SPARSE_BYTES);
    rd_npy_expect want = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, 3, -1, -1}, .what = "graph input 'image'"};
    expect_refused(p, &want, RD_E_INVAL,
                   "exact_claim.npy: the header's shape is 256x1024x1024, graph input 'image' must have shape 1x3x?x?");
    rd_npy_expect want_i8 = {.dtype = RD_DT_I8, .rank = -1};
    expect_refused(p, &want_i8, RD_E_INVAL, "the header's dtype is float32, the caller needs int8");
    /* a header length of 2 GiB: refused before anything of that size is allocated */
    p = sparse_npy(dir, "long_header.npy", "{", true, 2 * SPARSE_BYTES);
    int fd = open(p, O_WRONLY);
    CU_ASSERT_FATAL(pwrite(fd, "\x00\x00\x00\x40", 4, 8) == 4);
    close(fd);
    expect_refused(p, NULL, RD_E_LIMIT, "byte 8: a header of 1073741824 bytes is above the 1048576-byte limit");
    free(dir);
}

static void test_trailing_bytes_refused(void)
{
    rd_tensor t = {0};
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_I16, 2, (const int64_t[]){2, 3}, &err), RD_OK);
    memset(t.data, 7, 12);
    void *img;
    size_t len;
    CU_ASSERT_EQUAL_FATAL(rd_npy_write(&t, &img, &len, &err), RD_OK);
    rd_tensor_fini(&t);
    unsigned char *longer = malloc(len + 1);
    memcpy(longer, img, len);
    longer[len] = 0;
    CU_ASSERT_EQUAL(rd_npy_parse(longer, len + 1, "x.npy", &t, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "x.npy: 1 bytes after the data: the int16 shape in the header needs 12 "
                                           "bytes after byte 128, the file has 13"));
    CU_ASSERT_EQUAL(rd_npy_parse(longer, len, "x.npy", &t, &err), RD_OK); /* the exact file loads */
    rd_tensor_fini(&t);
    free(longer);
    free(img);
}

/* A normal load: the right values, one copy of the data resident. The file is written in 1 MiB pieces so
   that nothing of its size was resident before the load. */
static void test_normal_load_one_copy(void)
{
    char *dir = rd_test_tmpdir("npy-big");
    const int64_t n = (int64_t)16 << 20; /* 64 MiB of float32 */
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (16777216,), }\n";
    off_t data_off = 10 + (off_t)strlen(dict);
    char *path = sparse_npy(dir, "big.npy", dict, false, data_off + (off_t)n * 4);
    int fd = open(path, O_WRONLY);
    CU_ASSERT_FATAL(fd >= 0);
    enum { PIECE = 1 << 18 }; /* floats per write */
    float *piece = malloc(PIECE * sizeof *piece);
    for (int64_t at = 0; at < n; at += PIECE) {
        for (int64_t i = 0; i < PIECE; i++)
            piece[i] = (float)((at + i) % 1000);
        CU_ASSERT_FATAL(pwrite(fd, piece, PIECE * sizeof *piece, data_off + (off_t)at * 4) == PIECE * sizeof *piece);
    }
    close(fd);
    free(piece);
    long before = peak_rss_kb();
    rd_tensor t;
    rd_error err;
    rd_npy_expect want = {.dtype = RD_DT_F32, .rank = 1, .dims = {n}};
    CU_ASSERT_EQUAL_FATAL(rd_npy_load_expect(path, &want, &t, &err), RD_OK);
    long grew = peak_rss_kb() - before;
    CU_ASSERT_EQUAL(((float *)t.data)[12345], 345.0f);
    CU_ASSERT_EQUAL(((float *)t.data)[n - 1], (float)((n - 1) % 1000));
    /* 64 MiB read into the tensor; a second copy of the file would make it 128. ThreadSanitizer maps shadow
       memory beside every page touched, so the peak means nothing in that build (the ASan build checks it). */
#ifndef __SANITIZE_THREAD__
    if (grew > 96 * 1024)
        fprintf(stderr, "\n  loading 64 MiB raised the peak by %ld KiB\n", grew);
    CU_ASSERT(grew <= 96 * 1024);
#else
    (void)grew;
#endif
    rd_tensor_fini(&t);
    unlink(path);
    free(dir);
}

/* An .npy named in data (index.json): read inside its folder only, header first (a huge file of the right
   magic is refused without its data being read). */
static void test_load_within_folder(void)
{
    char *dir = rd_test_tmpdir("npy-within");
    rd_tensor t = {0};
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, 1, (const int64_t[]){3}, &err), RD_OK);
    ((float *)t.data)[2] = 2.5f;
    char path[4300], link[4300];
    snprintf(path, sizeof path, "%s/a.npy", dir);
    CU_ASSERT_EQUAL_FATAL(rd_npy_save(path, &t, &err), RD_OK);
    rd_tensor_fini(&t);
    CU_ASSERT_EQUAL_FATAL(rd_npy_load_within(dir, "a.npy", NULL, &t, &err), RD_OK);
    CU_ASSERT_EQUAL(((float *)t.data)[2], 2.5f);
    rd_tensor_fini(&t);
    snprintf(link, sizeof link, "%s/l.npy", dir);
    CU_ASSERT_FATAL(symlink("a.npy", link) == 0);
    CU_ASSERT_EQUAL(rd_npy_load_within(dir, "l.npy", NULL, &t, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "symbolic link"));
    CU_ASSERT_NOT_EQUAL(rd_npy_load_within(dir, "../a.npy", NULL, &t, &err), RD_OK);
    CU_ASSERT_PTR_NULL(t.data);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n";
    sparse_npy(dir, "huge.npy", dict, false, SPARSE_BYTES);
    long before = peak_rss_kb();
    CU_ASSERT_EQUAL(rd_npy_load_within(dir, "huge.npy", NULL, &t, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bytes after the data"));
    CU_ASSERT(peak_rss_kb() - before < 64 * 1024);
    unlink(link);
    unlink(path);
    snprintf(path, sizeof path, "%s/huge.npy", dir);
    unlink(path);
    free(dir);
}

/* A model input that is neither an .npy nor an image is refused on its first bytes: a sparse 1 GiB file of
   zeros was read whole before its first bytes were looked at. */
static void test_input_neither_npy_nor_image(void)
{
    char *dir = rd_test_tmpdir("input-junk");
    char path[4300];
    snprintf(path, sizeof path, "%s/junk.png", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(ftruncate(fd, SPARSE_BYTES) == 0);
    close(fd);
    long before = peak_rss_kb();
    rd_tensor t = {0};
    rd_error err = {0};
    CU_ASSERT_EQUAL(rd_input_prepare(path, NULL, 4, (const int64_t[]){1, 3, 8, 8}, NULL, &t, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a PNG, JPEG or BMP image (first bytes 00 00 00 00)"));
    CU_ASSERT(peak_rss_kb() - before < 64 * 1024);
    CU_ASSERT_PTR_NULL(t.data);
    unlink(path);
    free(dir);
}

RD_TEST_REGISTER(register_npy_load)
{
    RD_SUITE("npy_load", {"huge claims are refused cheaply", test_huge_claims_refused_cheaply},
             {"bytes after the data are refused", test_trailing_bytes_refused},
             {"a normal load holds one copy", test_normal_load_one_copy},
             {"an .npy named in data stays in its folder", test_load_within_folder},
             {"an input neither .npy nor image is refused unread", test_input_neither_npy_nor_image});
}

/*
 * test_txt_writer.c: the snapshot's text files on a writer thread: the same bytes as rd_snapshot_txt_save
 * whatever the queue's cap, failures reaching the caller with the file's name, nothing half-written when
 * the analysis stops early, and an accuracy run on the demo model writing the same snapshot with and
 * without the thread.
 */
#include "demo_model.h"
#include "rd_test.h"
#include "paths_in.h"
#include "txt_writer_check.h"
#include "rknn_diag/reports.h"
#include "snapshot_compare.h"
#include "txt_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { N_FILES = 24 };

/* File i's values: sizes from 0 to about 9000, some above the small caps used below. */
static float *values(int i, int64_t *n)
{
    *n = (int64_t)i * i * 16;
    float *v = malloc((size_t)(*n + 1) * sizeof *v);
    uint32_t s = 2463534242u + (uint32_t)i;
    for (int64_t k = 0; k < *n; k++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        v[k] = k % 7 == 0 ? (float)(k % 255) / 128.0f : ldexpf((float)(s & 0xffffff) - 8388608.0f, (int)(s >> 27) - 30);
    }
    return v;
}

/* Writes N_FILES files into dir/sub through w (NULL: rd_snapshot_txt_save). */
static void write_files(const char *dir, const char *sub, an_txt_writer *w)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    mkdir(path, 0777);
    for (int i = 0; i < N_FILES; i++) {
        int64_t n;
        float *v = values(i, &n);
        snprintf(path, sizeof path, "%s/%s/t%02d.txt", dir, sub, i);
        rd_error err;
        rd_status st = w ? an_txt_writer_add(w, path, v, n, &err) : rd_snapshot_txt_save(path, v, n, &err);
        CU_ASSERT_EQUAL(st, RD_OK);
        free(v); /* the writer keeps its own copy */
    }
}

static void test_same_bytes_any_cap(void)
{
    char *dir = rd_test_tmpdir("txtw-same");
    write_files(dir, "ref", NULL);
    const size_t caps[] = {1, 4096, AN_TXT_WRITER_CAP};
    const char *subs[] = {"cap1", "cap4k", "capbig", "inline"};
    for (int c = 0; c < 4; c++) {
        an_txt_writer *w = NULL;
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(an_txt_writer_create(c < 3, c < 3 ? caps[c] : 0, &w, &err), RD_OK);
        write_files(dir, subs[c], w);
        CU_ASSERT_EQUAL(an_txt_writer_finish(w, &err), RD_OK);
        an_txt_writer_destroy(w);
        char a[4400], b[4400];
        snprintf(a, sizeof a, "%s/ref", dir);
        snprintf(b, sizeof b, "%s/%s", dir, subs[c]);
        const char *const here[] = {"", NULL};
        CU_ASSERT_EQUAL(rd_test_snapshots_compare(a, b, here), N_FILES);
    }
    free(dir);
}

static void test_failure_names_the_file(void)
{
    char *dir = rd_test_tmpdir("txtw-fail");
    for (int bg = 0; bg < 2; bg++) {
        an_txt_writer *w = NULL;
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(an_txt_writer_create(bg, 64, &w, &err), RD_OK);
        char path[4400];
        float v[4] = {1, 2, 3, 4};
        snprintf(path, sizeof path, "%s/no-such-folder/bad.txt", dir);
        rd_status first = an_txt_writer_add(w, path, v, 4, &err); /* fails now (inline) or later */
        CU_ASSERT(bg ? first == RD_OK || first == RD_E_IO : first == RD_E_IO);
        rd_status st = RD_OK;
        for (int i = 0; i < 50 && st == RD_OK; i++) { /* the failure comes back at a later call */
            snprintf(path, sizeof path, "%s/after%d.txt", dir, i);
            st = an_txt_writer_add(w, path, v, 4, &err);
        }
        rd_status fin = an_txt_writer_finish(w, &err);
        CU_ASSERT_EQUAL(fin, RD_E_IO);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no-such-folder/bad.txt"));
        an_txt_writer_destroy(w);
    }
    free(dir);
}

/* Destroyed without finish (a failed analysis): every file present is complete, no temporary is left. */
static void test_destroy_drops_the_rest(void)
{
    char *dir = rd_test_tmpdir("txtw-drop");
    write_files(dir, "ref", NULL);
    an_txt_writer *w = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_txt_writer_create(true, 1 << 20, &w, &err), RD_OK);
    write_files(dir, "cut", w);
    an_txt_writer_destroy(w);
    int present = 0;
    for (int i = 0; i < N_FILES; i++) {
        char a[4400], b[4400], t[4500];
        snprintf(a, sizeof a, "%s/ref/t%02d.txt", dir, i);
        snprintf(b, sizeof b, "%s/cut/t%02d.txt", dir, i);
        snprintf(t, sizeof t, "%s.tmp", b);
        CU_ASSERT_NOT_EQUAL(access(t, F_OK), 0);
        if (access(b, F_OK) != 0)
            continue;
        present++;
        size_t la, lb;
        char *x = rd_test_read_file(a, &la), *y = rd_test_read_file(b, &lb);
        CU_ASSERT(x && y && la == lb && memcmp(x, y, la) == 0);
        free(x);
        free(y);
    }
    fprintf(stderr, "(%d of %d files written before the stop) ", present, N_FILES);
    free(dir);
}

/* The demo model analysed into dir/name, text files written inline or on the thread. */
static void test_demo_same_snapshot(void)
{
    char *dir = rd_test_tmpdir("txtw-demo");
    char model[4400], input[4400];
    rd_test_paths_in(dir, sizeof model, model, "demo.onnx", input, "image.npy", NULL);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_demo_model_write(model, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(an_demo_input_write(input, &err), RD_OK);
    CU_ASSERT(rd_test_txt_writer_snapshot_files(dir, model, input) > 20);
    free(dir);
}

RD_TEST_REGISTER(register_txt_writer)
{
    RD_SUITE("txt_writer", {"same bytes whatever the cap", test_same_bytes_any_cap},
             {"a failure names the file", test_failure_names_the_file},
             {"destroy without finish", test_destroy_drops_the_rest},
             {"demo snapshot with and without the thread", test_demo_same_snapshot});
}

/* test_dataset.c: dataset.txt lists: relative and absolute paths, blank and comment lines, several
 * inputs per line, and the errors (missing file, wrong count, empty list) naming file and line. */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *g_dir;

static void write_text(const char *name, const char *text)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL);
    fputs(text, f);
    fclose(f);
}

static char *in_dir(const char *name)
{
    static char path[4300];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    return path;
}

static void setup_dir(void)
{
    if (!g_dir)
        g_dir = rd_test_tmpdir("dataset");
    write_text("a.png", "x");
    write_text("b.npy", "x");
    write_text("c.jpg", "x");
}

static void test_good_list(void)
{
    setup_dir();
    char text[8192];
    snprintf(text, sizeof text, "\xef\xbb\xbf# calibration set\n\n./a.png  b.npy\r\n   \n\t%s/c.jpg\ta.png  \n", g_dir);
    write_text("two.txt", text);
    rd_dataset ds;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_dataset_load(in_dir("two.txt"), 2, &ds, &err), RD_OK);
    CU_ASSERT_EQUAL(ds.n_samples, 2);
    CU_ASSERT_EQUAL(ds.n_inputs, 2);
    CU_ASSERT_STRING_EQUAL(rd_dataset_path(&ds, 0, 0), in_dir("a.png"));
    CU_ASSERT_STRING_EQUAL(rd_dataset_path(&ds, 0, 1), in_dir("b.npy"));
    CU_ASSERT_STRING_EQUAL(rd_dataset_path(&ds, 1, 0), in_dir("c.jpg"));
    CU_ASSERT_EQUAL(ds.lines[0], 3);
    CU_ASSERT_EQUAL(ds.lines[1], 5);
    CU_ASSERT_PTR_NULL(rd_dataset_path(&ds, 2, 0));
    rd_dataset_fini(&ds);
    /* n_inputs 0 takes the first line's count */
    write_text("one.txt", "a.png\nc.jpg");
    CU_ASSERT_EQUAL_FATAL(rd_dataset_load(in_dir("one.txt"), 0, &ds, &err), RD_OK);
    CU_ASSERT_EQUAL(ds.n_inputs, 1);
    CU_ASSERT_EQUAL(ds.n_samples, 2);
    rd_dataset_fini(&ds);
}

static void expect(const char *file, const char *text, size_t n_inputs, rd_status code, const char *substr)
{
    write_text(file, text);
    rd_dataset ds;
    rd_error err = {0};
    CU_ASSERT_EQUAL(rd_dataset_load(in_dir(file), n_inputs, &ds, &err), code);
    if (!strstr(err.msg, substr)) {
        fprintf(stderr, "\n  message '%s' lacks '%s'\n", err.msg, substr);
        CU_FAIL("message");
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, file));
    CU_ASSERT_EQUAL(ds.n_samples, 0);
    rd_dataset_fini(&ds);
}

static void test_errors(void)
{
    setup_dir();
    expect("missing.txt", "a.png\n\nnope.png\n", 1, RD_E_NOTFOUND, "missing.txt:3: ");
    expect("missing2.txt", "a.png\nnope.png\n", 1, RD_E_NOTFOUND, "/nope.png: No such file");
    expect("count.txt", "a.png b.npy\nc.jpg\n", 2, RD_E_PARSE, "count.txt:2: 1 path where 2 are expected");
    expect("count2.txt", "a.png b.npy c.jpg\n", 2, RD_E_PARSE, "count2.txt:1: 3 paths where 2 are expected");
    expect("count3.txt", "a.png\na.png b.npy\n", 0, RD_E_PARSE, "count3.txt:2: 2 paths where 1 is expected");
    expect("empty.txt", "", 1, RD_E_PARSE, "empty.txt: the dataset has no samples");
    expect("blank.txt", "\n  \n# only a comment\n", 1, RD_E_PARSE, "no samples (3 lines");
    expect("dir.txt", ".\n", 1, RD_E_PARSE, "is not a regular file");
    rd_dataset ds;
    rd_error err;
    CU_ASSERT_EQUAL(rd_dataset_load(in_dir("absent.txt"), 1, &ds, &err), RD_E_NOTFOUND);
    rd_dataset_fini(&ds);
}

static void test_parse_in_memory(void)
{
    rd_dataset ds;
    rd_error err;
    const char text[] = "x.png y.png\nz.png w.png";
    CU_ASSERT_EQUAL_FATAL(rd_dataset_parse(text, sizeof text - 1, "mem", NULL, 0, false, &ds, &err), RD_OK);
    CU_ASSERT_STRING_EQUAL(rd_dataset_path(&ds, 1, 1), "w.png");
    rd_dataset_fini(&ds);
    const char nul[] = "x.png\0y\n";
    CU_ASSERT_EQUAL(rd_dataset_parse(nul, sizeof nul - 1, "mem", NULL, 0, false, &ds, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "mem:1: a NUL byte"));
    rd_dataset_fini(&ds);
}

RD_TEST_REGISTER(register_dataset_tests)
{
    RD_SUITE("dataset", {"good list", test_good_list}, {"errors name file and line", test_errors},
             {"parse in memory", test_parse_in_memory});
}

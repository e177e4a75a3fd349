/*
 * test_pull.c: rd_adb_pull against boards that lie or loop (issue 16, defects 4, 8 and 9): links
 * that lead back to a folder, a listing slower than the timeout, files cut short or longer than
 * announced, sizes announced as 0 by an old board, names of 251-255 bytes, and a name this
 * computer cannot store, which fails alone while the other files arrive.
 */
#include "adb_internal.h"
#include "adb_test_util.h"
#include "rd_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Starts a board (no auth: these tests are about the pull) with faults and features. */
static bool start(at_board *fx, const char *tag, const char *faults, const char *features, uint32_t version)
{
    rd_board_options bo = {.no_auth = true, .faults = faults, .features = features, .version = version};
    return at_board_start(fx, tag, &bo, true);
}

static rd_status pull(at_board *fx, int timeout_ms, at_log *log, const char *remote, const char *out, rd_error *err)
{
    rd_adb *dev = NULL;
    rd_status st = at_board_open(fx, timeout_ms, log, &dev, err);
    if (st == RD_OK)
        st = rd_adb_pull(dev, remote, out, NULL, NULL, err);
    rd_adb_close(dev);
    return st;
}

static bool exists(const char *dir, const char *name)
{
    char *p = at_join(dir, name);
    struct stat st;
    bool e = lstat(p, &st) == 0;
    free(p);
    return e;
}

/* No temporary file (rd_atomic_file's ".NAME.XXXXXXXX.tmp") anywhere under dir. */
static bool no_temp_left(const char *dir)
{
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "test -z \"$(find '%s' -name '.*.tmp' -o -name '*.part')\"", dir);
    return system(cmd) == 0;
}

static void test_link_loop(void)
{
    at_board fx;
    CU_ASSERT_FATAL(start(&fx, "pull-loop", NULL, NULL, 0));
    /* l1 -> ., l2 -> ., sub/up -> .. : the tree is infinite if links are followed blindly */
    char *l1 = at_join(fx.dumps, "l1"), *l2 = at_join(fx.dumps, "l2"), *up = at_join(fx.dumps, "sub/up");
    CU_ASSERT_EQUAL(symlink(".", l1), 0);
    CU_ASSERT_EQUAL(symlink(".", l2), 0);
    CU_ASSERT_EQUAL(symlink("..", up), 0);
    char *out = at_join(fx.dir, "out");
    at_log log;
    at_log_init(&log);
    rd_error err;
    int64_t t0 = adb_now_ms();
    CU_ASSERT_EQUAL(pull(&fx, 5000, &log, "/userdata/dumps", out, &err), RD_OK);
    CU_ASSERT_TRUE(adb_now_ms() - t0 < 30000); /* a few seconds; followed blindly it never ends */
    /* every file once; the links were skipped, saying why */
    CU_ASSERT_TRUE(exists(out, "001_ConvRelu_conv1_shape_1_64_112_112_float.npy"));
    CU_ASSERT_TRUE(exists(out, "sub/deeper/010_OutputOperator_out_shape_1_1000_float.npy"));
    CU_ASSERT_FALSE(exists(out, "l1"));
    CU_ASSERT_FALSE(exists(out, "l2"));
    CU_ASSERT_FALSE(exists(out, "sub/up"));
    CU_ASSERT_EQUAL(at_count_files(out), 12);
    CU_ASSERT_TRUE(at_log_has(&log, "a link loop on the board"));
    at_rm_rf(out);
    free(l1), free(l2), free(up), free(out);
    at_board_stop(&fx);
}

/* A board that gives no inodes cannot be checked for loops: two links make the tree grow as 2^depth
 * (the kernel's 40 links per path only cut each branch), so the timeout ends the listing. */
static void test_link_loop_without_inodes(void)
{
    at_board fx;
    CU_ASSERT_FATAL(start(&fx, "pull-loop-noino", "no-inode", NULL, 0));
    char *l1 = at_join(fx.dumps, "l1"), *l2 = at_join(fx.dumps, "l2");
    CU_ASSERT_EQUAL(symlink(".", l1), 0);
    CU_ASSERT_EQUAL(symlink(".", l2), 0);
    char *out = at_join(fx.dir, "out");
    rd_error err;
    int64_t t0 = adb_now_ms();
    rd_status st = pull(&fx, 2000, NULL, "/userdata/dumps", out, &err);
    int64_t took = adb_now_ms() - t0;
    CU_ASSERT_EQUAL(st, RD_E_TIMEOUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "listing the board's folders took longer than"));
    CU_ASSERT_TRUE(took < 15000); /* the 2 s deadline and some slack for a loaded machine */
    if (st != RD_E_TIMEOUT || took >= 15000)
        fprintf(stderr, "loop without inodes: %s after %lld ms: %s\n", rd_status_str(st), (long long)took, err.msg);
    CU_ASSERT_FALSE(exists(fx.dir, "out")); /* nothing was written: the listing comes first */
    free(l1), free(l2), free(out);
    at_board_stop(&fx);
}

/* Folders nested deeper than 64 levels are refused. */
static void test_depth_bound(void)
{
    at_board fx;
    CU_ASSERT_FATAL(start(&fx, "pull-deep", NULL, NULL, 0));
    char path[4096];
    size_t n = (size_t)snprintf(path, sizeof path, "%s", fx.dumps);
    for (int i = 0; i < 70; i++) {
        n += (size_t)snprintf(path + n, sizeof path - n, "/d");
        CU_ASSERT_EQUAL(mkdir(path, 0755), 0);
    }
    char *out = at_join(fx.dir, "out");
    rd_error err;
    CU_ASSERT_EQUAL(pull(&fx, 5000, NULL, "/userdata/dumps", out, &err), RD_E_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "deeper than 64 levels"));
    free(out);
    at_board_stop(&fx);
}

/* --timeout bounds the listing as a whole, not only each wait. */
static void test_listing_bounded_by_timeout(void)
{
    at_board fx;
    CU_ASSERT_FATAL(start(&fx, "pull-slow-list", "slow-list:1500", NULL, 0));
    for (int i = 0; i < 12; i++) { /* 12 more folders, each listing 1.5 s: over 22 s in all */
        char name[64];
        snprintf(name, sizeof name, "userdata/dumps/f%d", i);
        char *d = at_join(fx.root, name);
        mkdir(d, 0755);
        free(d);
    }
    char *out = at_join(fx.dir, "out");
    rd_error err;
    int64_t t0 = adb_now_ms();
    /* each wait (1.5 s) is within the 3 s timeout; the listing as a whole is not */
    CU_ASSERT_EQUAL(pull(&fx, 3000, NULL, "/userdata/dumps", out, &err), RD_E_TIMEOUT);
    int64_t took = adb_now_ms() - t0;
    CU_ASSERT_TRUE(took < 12000);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "listing the board's folders took longer than"));
    if (took >= 12000)
        fprintf(stderr, "listing took %lld ms\n", (long long)took);
    free(out);
    at_board_stop(&fx);
}

/* A file cut short: never kept under its name; the other files still arrive. */
static void test_short_file(void)
{
    at_board fx;
    CU_ASSERT_FATAL(start(&fx, "pull-short", "short:1000", NULL, 0));
    char *big = at_join(fx.dumps, "big.npy");
    CU_ASSERT_TRUE(at_write_file(big, 300000, 7));
    char *out = at_join(fx.dir, "out");
    mkdir(out, 0755);
    at_log log;
    at_log_init(&log);
    rd_error err;
    CU_ASSERT_EQUAL(pull(&fx, 5000, &log, "/userdata/dumps", out, &err), RD_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "could not be pulled"));
    CU_ASSERT_TRUE(at_log_has(&log, "big.npy: the board sent 1000 of the 300000 bytes"));
    char *got = at_join(out, "dumps");
    CU_ASSERT_FALSE(exists(got, "big.npy"));
    CU_ASSERT_FALSE(exists(got, "001_ConvRelu_conv1_shape_1_64_112_112_float.npy"));
    /* files of at most 1000 bytes are whole, and were kept */
    CU_ASSERT_TRUE(exists(got, "002_empty.npy"));
    CU_ASSERT_TRUE(exists(got, "004_512.npy"));
    CU_ASSERT_TRUE(exists(got, "sub/011_x.txt"));
    CU_ASSERT_TRUE(no_temp_left(fx.dir));
    /* a single file too */
    char *one = at_join(fx.dir, "one.npy");
    CU_ASSERT_EQUAL(pull(&fx, 5000, NULL, "/userdata/dumps/big.npy", one, &err), RD_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "sent 1000 of the 300000 bytes"));
    CU_ASSERT_NOT_EQUAL(access(one, F_OK), 0);
    CU_ASSERT_TRUE(no_temp_left(fx.dir));
    free(big), free(out), free(got), free(one);
    at_board_stop(&fx);
}

/* Sizes announced as 0 (an old board, or any board): at most 0 bytes are taken. */
static void check_zero_size(const char *tag, const char *features, uint32_t version)
{
    at_board fx;
    CU_ASSERT_FATAL(start(&fx, tag, "zero-size", features, version));
    char *out = at_join(fx.dir, "out");
    rd_error err;
    int64_t t0 = adb_now_ms();
    CU_ASSERT_EQUAL(pull(&fx, 5000, NULL, "/userdata/dumps/007_65537.npy", out, &err), RD_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "more than the 0 bytes it announced"));
    CU_ASSERT_TRUE(adb_now_ms() - t0 < 20000); /* at once: not a byte more than announced */
    CU_ASSERT_NOT_EQUAL(access(out, F_OK), 0);
    CU_ASSERT_EQUAL(pull(&fx, 5000, NULL, "/userdata/dumps", out, &err), RD_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "more than the 0 bytes it announced"));
    CU_ASSERT_TRUE(no_temp_left(fx.dir));
    free(out);
    at_board_stop(&fx);
}

static void test_zero_size_old_board(void)
{
    check_zero_size("pull-zero-v1", "cmd", 0x01000000); /* STAT/LIST: 32-bit sizes */
}

static void test_zero_size_v2(void)
{
    check_zero_size("pull-zero-v2", NULL, 0);
}

/* Names of 251 to 255 bytes: the temporary name no longer depends on them. */
static void test_long_names(void)
{
    at_board fx;
    CU_ASSERT_FATAL(start(&fx, "pull-long", NULL, NULL, 0));
    for (size_t len = 251; len <= 255; len++) {
        char name[256];
        memset(name, 'a' + (int)(len - 251), len);
        name[len] = '\0';
        char *p = at_join(fx.dumps, name);
        CU_ASSERT_TRUE(at_write_file(p, 70000 + len, (unsigned)len));
        free(p);
    }
    char *out = at_join(fx.dir, "out");
    rd_error err;
    CU_ASSERT_EQUAL(pull(&fx, 5000, NULL, "/userdata/dumps", out, &err), RD_OK);
    CU_ASSERT_TRUE(at_trees_equal(fx.dumps, out));
    free(out);
    at_board_stop(&fx);
}

/* A name this computer cannot store fails alone, with a clear message. */
static void test_unstorable_name(void)
{
    at_board fx;
    CU_ASSERT_FATAL(start(&fx, "pull-toolong", "long-name:300", NULL, 0));
    char *out = at_join(fx.dir, "out");
    at_log log;
    at_log_init(&log);
    rd_error err;
    CU_ASSERT_EQUAL(pull(&fx, 5000, &log, "/userdata/dumps", out, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "could not be pulled"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "longer than file names here can be (255)"));
    /* everything else arrived */
    CU_ASSERT_TRUE(exists(out, "008_1MiB_plus.npy"));
    CU_ASSERT_TRUE(exists(out, "sub/deeper/010_OutputOperator_out_shape_1_1000_float.npy"));
    CU_ASSERT_EQUAL(at_count_files(out), 12);
    CU_ASSERT_TRUE(no_temp_left(fx.dir));
    free(out);
    at_board_stop(&fx);
}

RD_TEST_REGISTER(register_pull)
{
    RD_SUITE("adb_pull", {"link loop visited once", test_link_loop},
             {"link loop without inodes: the timeout ends it", test_link_loop_without_inodes},
             {"folders deeper than 64 levels", test_depth_bound},
             {"listing bounded by --timeout", test_listing_bounded_by_timeout}, {"file cut short", test_short_file},
             {"size 0 announced, old board", test_zero_size_old_board},
             {"size 0 announced, stat_v2", test_zero_size_v2}, {"names of 251-255 bytes", test_long_names},
             {"a name this computer cannot store", test_unstorable_name});
}

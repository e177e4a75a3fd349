/* rd_test.h: what every CUnit binary of the suite shares (see cunit_main.c). */
#ifndef RD_TEST_H
#define RD_TEST_H

#include <CUnit/CUnit.h>
#include <stdbool.h>

/**
 * Each test file registers its suites with RD_TEST_REGISTER(fn): fn runs after the CUnit registry is
 * set up, so files can be added to a test binary without a central list.
 */
typedef void (*rd_test_register_fn)(void);
void rd_test_defer(rd_test_register_fn fn);
#define RD_TEST_REGISTER(fn)                                    \
    static void fn(void);                                       \
    __attribute__((constructor)) static void rd_ctor_##fn(void) \
    {                                                           \
        rd_test_defer(fn);                                      \
    }                                                           \
    static void fn(void)

/** Adds a suite with its tests: RD_SUITE("npy", { "parse v1", test_parse_v1 }, ...). */
typedef struct rd_test_case {
    const char *name;
    CU_TestFunc fn;
} rd_test_case;
void rd_test_add_suite(const char *name, const rd_test_case *cases, int n);
#define RD_SUITE(name, ...)                                                                \
    do {                                                                                   \
        static const rd_test_case rd_cases_[] = {__VA_ARGS__};                             \
        rd_test_add_suite(name, rd_cases_, (int)(sizeof rd_cases_ / sizeof rd_cases_[0])); \
    } while (0)

/**
 * Path of ../shared seen from the source tree (RD_SHARED_DIR overrides). When it is absent: prints a
 * skip message and exits 77 (CTest's SKIP) unless CI is set, where it fails the binary instead.
 */
const char *rd_test_shared_dir(void);

/** The path of a file in ../shared, printf-style relative to it ("rknn/models/%s"), malloc'ed; caller frees.
    When the file is absent: skips (or fails under CI) as rd_test_shared_dir does, naming the path. */
char *rd_test_shared_file(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Source and build directories, for fixtures and derived files. */
const char *rd_test_source_dir(void);
const char *rd_test_binary_dir(void);

/** A fresh temporary directory under the build tree, created for this process; caller frees. */
char *rd_test_tmpdir(const char *tag);

/** Reads a whole file into a malloc'ed buffer; NULL if it cannot. */
void *rd_test_read_file(const char *path, size_t *len);

/** Writes text to path (replacing it); a CUnit fatal failure if it cannot. */
void rd_test_write_text(const char *path, const char *text);

/** True when the file at path holds exactly text. */
bool rd_test_file_is(const char *path, const char *text);

/** dir + "/" + name, malloc'ed; caller frees. */
char *rd_test_join(const char *dir, const char *name);

/** A monotonic clock in seconds, for tests that bound how long a refusal takes. */
double rd_test_seconds(void);

/** Skips the whole binary with a reason (exit 77), or fails when CI is set. */
void rd_test_skip_all(const char *why);

#endif

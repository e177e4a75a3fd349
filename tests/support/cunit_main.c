/*
 * cunit_main.c: the one main() of every CUnit test binary. Options: a suite name to run only that
 * suite; -v for verbose output. Exits with the number of failures (capped), 77 for a skip.
 */
#include "rd_test.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_REGISTER 256
static rd_test_register_fn registered[MAX_REGISTER]; /* filled by constructors before main */
static int n_registered;

void rd_test_defer(rd_test_register_fn fn)
{
    if (n_registered < MAX_REGISTER)
        registered[n_registered++] = fn;
}

void rd_test_add_suite(const char *name, const rd_test_case *cases, int n)
{
    CU_pSuite s = CU_add_suite(name, NULL, NULL);
    if (!s) {
        fprintf(stderr, "cannot add suite %s\n", name);
        exit(2);
    }
    for (int i = 0; i < n; i++)
        CU_add_test(s, cases[i].name, cases[i].fn);
}

void rd_test_skip_all(const char *why)
{
    const char *ci = getenv("CI");
    if (ci && *ci) {
        fprintf(stderr, "FAIL: %s (CI is set, so a skip is a failure)\n", why);
        exit(1);
    }
    fprintf(stderr, "SKIP: %s\n", why);
    exit(77);
}

const char *rd_test_shared_dir(void)
{
    static char path[4096]; /* test-only cache; tests are single-threaded */
    if (path[0])
        return path;
    const char *env = getenv("RD_SHARED_DIR");
    snprintf(path, sizeof path, "%s", env && *env ? env : RD_SOURCE_DIR "/../shared");
    struct stat st;
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/models", path);
    if (stat(probe, &st) != 0 || !S_ISDIR(st.st_mode)) {
        char why[4400];
        snprintf(why, sizeof why, "needs ../shared (looked for %s)", probe);
        path[0] = '\0';
        rd_test_skip_all(why);
    }
    return path;
}

char *rd_test_shared_file(const char *fmt, ...)
{
    char rel[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    char *path = rd_test_join(rd_test_shared_dir(), rel);
    struct stat st;
    if (stat(path, &st) != 0) {
        char why[8300];
        snprintf(why, sizeof why, "needs %s", path);
        free(path);
        rd_test_skip_all(why);
    }
    return path;
}

const char *rd_test_source_dir(void)
{
    return RD_SOURCE_DIR;
}

const char *rd_test_binary_dir(void)
{
    return RD_BINARY_DIR;
}

char *rd_test_tmpdir(const char *tag)
{
    char base[4096];
    snprintf(base, sizeof base, "%s/test-tmp", RD_BINARY_DIR);
    mkdir(base, 0755);
    size_t n = strlen(base) + strlen(tag) + 32;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s-%ld", base, tag, (long)getpid());
    char cmd[8300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    if (system(cmd) != 0) { /* best effort */
    }
    if (mkdir(p, 0755) != 0 && errno != EEXIST) {
        free(p);
        return NULL;
    }
    return p;
}

void *rd_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(n > 0 ? (size_t)n + 1 : 1); /* NUL-terminated so text can be searched */
    if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n > 0 ? n : 0] = '\0';
    fclose(f);
    if (buf && len)
        *len = (size_t)(n > 0 ? n : 0);
    return buf;
}

void rd_test_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

bool rd_test_file_is(const char *path, const char *text)
{
    size_t len;
    char *got = rd_test_read_file(path, &len);
    bool same = got && len == strlen(text) && memcmp(got, text, len) == 0;
    free(got);
    return same;
}

char *rd_test_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

double rd_test_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    bool verbose = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0)
            verbose = true;
        else
            only = argv[i];
    }
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    for (int i = 0; i < n_registered; i++)
        registered[i]();
    CU_basic_set_mode(verbose ? CU_BRM_VERBOSE : CU_BRM_NORMAL);
    if (only) {
        CU_pSuite s = CU_get_suite(only);
        if (!s) {
            fprintf(stderr, "no suite named %s\n", only);
            CU_cleanup_registry();
            return 2;
        }
        CU_basic_run_suite(s);
    } else {
        CU_basic_run_tests();
    }
    unsigned failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    unsigned ran = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    if (ran == 0) {
        fprintf(stderr, "no test ran\n");
        return 1;
    }
    return failures ? 1 : 0;
}

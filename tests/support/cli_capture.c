/* cli_capture.c: runs rknn-diag in-process with arguments and captures stdout and stderr (tests only). */
#include "cli_capture.h"

#include "rd_test.h"
#include "rknn_diag/analyzer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rd_cli_result rd_test_cli(const char *first, ...)
{
    const char *args[63];
    int n = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 62; a = va_arg(ap, const char *))
        args[n++] = a;
    va_end(ap);
    return rd_test_cli_argv(n, args);
}

rd_cli_result rd_test_cli_argv(int n, const char *const *args)
{
    char *argv[64];
    int argc = 0;
    argv[argc++] = "rknn-diag";
    for (int i = 0; i < n && argc < 63; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    rd_cli_result r = {0};
    size_t out_len = 0, err_len = 0;
    FILE *out = open_memstream(&r.out, &out_len);
    FILE *errs = open_memstream(&r.errs, &err_len);
    r.code = rd_cli_run(argc, argv, out, errs);
    fclose(out);
    fclose(errs);
    return r;
}

void rd_test_cli_free(rd_cli_result *r)
{
    free(r->out);
    free(r->errs);
}

int rd_test_cli_run(int argc, char **argv, char **out)
{
    rd_cli_result r = rd_test_cli_argv(argc - 1, (const char *const *)argv + 1);
    if (r.code)
        fprintf(stderr, "%s\n", r.errs);
    if (out) {
        *out = r.out;
        r.out = NULL;
    }
    rd_test_cli_free(&r);
    return r.code;
}

char *rd_test_demo_dir(const char *tag)
{
    char *dir = rd_test_tmpdir(tag);
    rd_cli_result r = rd_test_cli("demo", "-o", dir, "--quiet", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    return dir;
}

void rd_test_cli_says(int code, const char *says, ...)
{
    const char *args[63];
    int n = 0;
    va_list ap;
    va_start(ap, says);
    for (const char *a = va_arg(ap, const char *); a && n < 62; a = va_arg(ap, const char *))
        args[n++] = a;
    va_end(ap);
    rd_cli_result r = rd_test_cli_argv(n, args);
    CU_ASSERT_EQUAL(r.code, code);
    if (says)
        CU_ASSERT_PTR_NOT_NULL(strstr(code == 0 ? r.out : r.errs, says));
    rd_test_cli_free(&r);
}

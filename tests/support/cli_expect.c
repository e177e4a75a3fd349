/* cli_expect.c: one rknn-diag command run in-process and checked (see cli_expect.h). */
#include "cli_expect.h"

#include "cli_capture.h"
#include "rd_test.h"

#include <stdio.h>

bool rd_test_cli_expect_at(const char *file, int line, int code, const char *const *out_has,
                           const char *const *errs_has, const char *const *args)
{
    int n = 0;
    while (args[n])
        n++;
    rd_cli_result r = rd_test_cli_argv(n, args);
    char cond[64];
    snprintf(cond, sizeof cond, "exit code %d (got %d)", code, r.code);
    CU_assertImplementation(r.code == code, (unsigned)line, cond, file, "", CU_FALSE);
    if (r.code != code)
        fprintf(stderr, "%s:%d: %s", file, line, r.errs);
    rd_test_has_texts_at(file, line, "stdout", r.out, out_has);
    rd_test_has_texts_at(file, line, "stderr", r.errs, errs_has);
    bool ok = r.code == code;
    rd_test_cli_free(&r);
    return ok;
}

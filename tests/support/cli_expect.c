/* cli_expect.c: one rknn-diag command run in-process and checked (see cli_expect.h). */
#include "cli_expect.h"

#include "cli_capture.h"
#include "rd_test.h"

#include <stdio.h>
#include <string.h>

/* Each text of has must stand in what; a failure names the text and the stream it was looked for in. */
static void expect_texts(const char *file, int line, const char *stream, const char *what, const char *const *has)
{
    for (int i = 0; has && has[i]; i++) {
        char cond[512];
        snprintf(cond, sizeof cond, "%s holds \"%s\"", stream, has[i]);
        CU_assertImplementation(what && strstr(what, has[i]) != NULL, (unsigned)line, cond, file, "", CU_FALSE);
    }
}

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
    expect_texts(file, line, "stdout", r.out, out_has);
    expect_texts(file, line, "stderr", r.errs, errs_has);
    bool ok = r.code == code;
    rd_test_cli_free(&r);
    return ok;
}

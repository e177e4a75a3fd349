/* cli_expect.h: one rknn-diag command run in-process and checked: its exit code and texts its output must hold. */
#ifndef RD_TEST_CLI_EXPECT_H
#define RD_TEST_CLI_EXPECT_H

#include "text_check.h"

#include <stdbool.h>

/**
 * Runs rknn-diag with args (NULL-terminated) and asserts, as CUnit failures at file:line, that it exits
 * with code and that stdout holds every text of out_has and stderr every text of errs_has (NULL lists: not
 * checked). Prints stderr when the code differs. Returns whether the code was the one expected.
 */
bool rd_test_cli_expect_at(const char *file, int line, int code, const char *const *out_has,
                           const char *const *errs_has, const char *const *args);

/** RD_CLI_EXPECT(2, NULL, RD_TEXTS("unknown option"), "run", "m.onnx", "--nope"): the caller's line is reported. */
#define RD_CLI_EXPECT(code, out_has, errs_has, ...) \
    rd_test_cli_expect_at(__FILE__, __LINE__, (code), (out_has), (errs_has), RD_TEXTS(__VA_ARGS__))

#endif

/* cli_capture.h: runs rknn-diag in-process with arguments and captures stdout and stderr (tests only). */
#ifndef RD_TEST_CLI_CAPTURE_H
#define RD_TEST_CLI_CAPTURE_H

typedef struct rd_cli_result {
    int code;   /* the exit code rknn-diag would return */
    char *out;  /* everything printed to stdout, NUL-terminated */
    char *errs; /* everything printed to stderr */
} rd_cli_result;

/** rknn-diag first ... (NULL-terminated arguments, at most 62). */
rd_cli_result rd_test_cli(const char *first, ...);
/** The same with an array of n arguments (at most 62). */
rd_cli_result rd_test_cli_argv(int n, const char *const *args);
void rd_test_cli_free(rd_cli_result *r);
/** rknn-diag with the NULL-terminated arguments (at most 62) must exit with code (a CUnit assertion) and, when says
    is not NULL, say it: on stdout for code 0, else on stderr. */
void rd_test_cli_says(int code, const char *says, ...);
/** argv[0..argc) as a shell passes them (argv[0] the program's name): the exit code, stdout in *out (NULL:
    dropped; the caller frees it), stderr printed when the command fails. */
int rd_test_cli_run(int argc, char **argv, char **out);

/** A fresh temporary folder (rd_test_tmpdir(tag)) holding `rknn-diag demo --quiet`'s model and data; caller frees. */
char *rd_test_demo_dir(const char *tag);

#endif

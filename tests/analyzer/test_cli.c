/* test_cli.c: the rknn-diag command line driven in-process: help, version, exit codes, run, inspect, demo. */
#include "rd_test.h"
#include "rknn_diag/analyzer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cli_result {
    int code;
    char *out;
    char *errs;
} cli_result;

/* Runs rknn-diag with the given arguments (NULL-terminated) and captures both streams. */
static cli_result cli(const char *first, ...)
{
    char *argv[64];
    int argc = 0;
    argv[argc++] = "rknn-diag";
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 63; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    cli_result r = {0};
    size_t out_len = 0, err_len = 0;
    FILE *out = open_memstream(&r.out, &out_len);
    FILE *errs = open_memstream(&r.errs, &err_len);
    r.code = rd_cli_run(argc, argv, out, errs);
    fclose(out);
    fclose(errs);
    return r;
}

static void cli_free(cli_result *r)
{
    free(r->out);
    free(r->errs);
}

static void test_version_and_help(void)
{
    cli_result r = cli("--version", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "rknn-diag 0."));
    cli_free(&r);
    r = cli("--help", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "exit codes"));
    cli_free(&r);
    static const char *const cmds[] = {"run", "inspect", "ops", "demo"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        r = cli(cmds[i], "--help", NULL);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "usage: rknn-diag"));
        cli_free(&r);
    }
}

static void test_usage_errors(void)
{
    cli_result r = cli("frobnicate", NULL);
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "unknown command"));
    cli_free(&r);
    r = cli("run", NULL);
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "missing MODEL"));
    cli_free(&r);
    r = cli("run", "m.onnx", "--bench", "zero", NULL);
    CU_ASSERT_EQUAL(r.code, 2);
    cli_free(&r);
    r = cli("run", "m.onnx", "--no-such-option", NULL);
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "unknown option"));
    cli_free(&r);
    r = cli("inspect", "/nonexistent/model.onnx", NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "/nonexistent/model.onnx"));
    cli_free(&r);
}

static void test_demo_run_inspect(void)
{
    char *dir = rd_test_tmpdir("cli-demo");
    cli_result r = cli("demo", "-o", dir, NULL);
    if (r.code != 0)
        fprintf(stderr, "%s", r.errs);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "amplified"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "probs"));
    cli_free(&r);

    char model[4200], input[4200], named[4300], dumps[4200], index[4300];
    snprintf(model, sizeof model, "%s/demo.onnx", dir);
    snprintf(input, sizeof input, "%s/image.npy", dir);
    snprintf(named, sizeof named, "image=%s", input);
    snprintf(dumps, sizeof dumps, "%s/dump2", dir);
    snprintf(index, sizeof index, "%s/index.json", dumps);

    /* options after the positional, --opt=value form, JSON summary */
    r = cli("run", "--json", model, "--input", named, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"layers\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"conv1_out\""));
    cli_free(&r);

    char dump_opt[4300];
    snprintf(dump_opt, sizeof dump_opt, "--dump-dir=%s", dumps);
    r = cli("run", model, "-i", input, dump_opt, "--outputs-only", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    cli_free(&r);
    size_t len;
    char *text = rd_test_read_file(index, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"probs\""));
    CU_ASSERT_PTR_NULL(strstr(text, "\"conv1_out\""));
    free(text);

    r = cli("inspect", model, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Conv"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "parameters"));
    cli_free(&r);
    r = cli("inspect", model, "--json", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"macs\""));
    cli_free(&r);

    /* wrong input name, wrong shape */
    r = cli("run", model, "--input", "nosuch=x.npy", NULL);
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "nosuch"));
    cli_free(&r);
    r = cli("run", model, "--input-shape", "image=1,3,16,16", "--input", named, NULL);
    CU_ASSERT_EQUAL(r.code, 2);
    cli_free(&r);
    free(dir);
}

RD_TEST_REGISTER(register_cli)
{
    RD_SUITE("cli", {"version and help", test_version_and_help}, {"usage errors", test_usage_errors},
             {"demo, run, inspect", test_demo_run_inspect});
}

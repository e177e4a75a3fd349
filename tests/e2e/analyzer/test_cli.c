/* test_cli.c: the rknn-diag command line driven in-process: help, version, exit codes, run, inspect, demo. */
#include "rd_test.h"
#include "paths_in.h"
#include "files_in.h"
#include "text_check.h"
#include "cli_capture.h"
#include "cli_expect.h"
#include "rknn_diag/analyzer.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_version_and_help(void)
{
    RD_CLI_EXPECT(0, RD_TEXTS("rknn-diag 0."), NULL, "--version");
    RD_CLI_EXPECT(0, RD_TEXTS("exit codes"), NULL, "--help");
    static const char *const cmds[] = {"run", "inspect", "ops", "demo"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        RD_CLI_EXPECT(0, RD_TEXTS("usage: rknn-diag"), NULL, cmds[i], "--help");
}

static void test_usage_errors(void)
{
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("unknown command"), "frobnicate");
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("missing MODEL"), "run");
    RD_CLI_EXPECT(2, NULL, NULL, "run", "m.onnx", "--bench", "zero");
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("unknown option"), "run", "m.onnx", "--no-such-option");
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("/nonexistent/model.onnx"), "inspect", "/nonexistent/model.onnx");
}

/* The shares of a --bench table (the lines after its "time per run by op type" header) add up to 100 %. */
static double bench_share_sum(const char *out)
{
    const char *at = strstr(out, "time per run by op type");
    double sum = 0;
    for (at = at ? strchr(at, '\n') : NULL; at && at[1] == ' '; at = strchr(at + 1, '\n')) {
        const char *ms = strstr(at, " ms ");
        if (ms)
            sum += strtod(ms + 4, NULL);
    }
    return sum;
}

/* run --bench: the median line and the time per op type, for the reference and a simulator */
static void check_bench(const char *model, const char *input)
{
    for (int p = 0; p < 2; p++) {
        rd_cli_result r = rd_test_cli("run", model, "-i", input, "-p", p ? "int8" : "fp32", "--bench", "3", NULL);
        CU_ASSERT_EQUAL(r.code, 0);
        RD_ASSERT_HAS_TEXTS(r.out, "median ", " over 3 runs", "time per run by op type (mean of the 3 runs",
                            "\n  Conv ", " 3 nodes\n", "\n  MaxPool ", " 1 node\n", "(observer: statistics)");
        CU_ASSERT_DOUBLE_EQUAL(bench_share_sum(r.out), 100.0, 1.0);
        rd_test_cli_free(&r);
    }
    /* --json: the same figures; the op types, the observer and the rest add up to the mean run */
    rd_cli_result r = rd_test_cli("run", model, "-i", input, "--bench", "4", "--json", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    const cJSON *ops = cJSON_GetObjectItem(doc, "ops");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(doc, "runs")->valuedouble, 4);
    CU_ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(doc, "simulated")));
    double sum =
        cJSON_GetObjectItem(doc, "observer_ms")->valuedouble + cJSON_GetObjectItem(doc, "other_ms")->valuedouble;
    bool conv = false;
    const cJSON *o;
    cJSON_ArrayForEach(o, ops)
    {
        sum += cJSON_GetObjectItem(o, "ms")->valuedouble;
        conv |= strcmp(cJSON_GetObjectItem(o, "op_type")->valuestring, "Conv") == 0 &&
                cJSON_GetObjectItem(o, "nodes")->valuedouble == 3;
    }
    CU_ASSERT(conv);
    const double mean = cJSON_GetObjectItem(doc, "mean_ms")->valuedouble;
    CU_ASSERT(mean > 0 && fabs(sum - mean) <= 1e-6 * mean);
    cJSON_Delete(doc);
    rd_test_cli_free(&r);
}

static void test_demo_run_inspect(void)
{
    char *dir = rd_test_tmpdir("cli-demo");
    rd_cli_result r = rd_test_cli("demo", "-o", dir, NULL);
    if (r.code != 0)
        fprintf(stderr, "%s", r.errs);
    CU_ASSERT_EQUAL(r.code, 0);
    RD_ASSERT_HAS_TEXTS(r.out, "amplified", "probs");
    rd_test_cli_free(&r);

    char model[4200], input[4200], named[4300], dumps[4200], index[4300];
    rd_test_paths_in(dir, sizeof model, model, "demo.onnx", input, "image.npy", dumps, "dump2", NULL);
    snprintf(named, sizeof named, "image=%s", input);
    snprintf(index, sizeof index, "%s/index.json", dumps);

    /* options after the positional, --opt=value form, JSON summary */
    RD_CLI_EXPECT(0, RD_TEXTS("\"layers\"", "\"conv1_out\""), NULL, "run", "--json", model, "--input", named);

    check_bench(model, input);

    /* --threads: the same summary (min, max, mean of every tensor) for 1 and 3 threads, fp32 and int8 */
    for (int p = 0; p < 2; p++) {
        const char *prec = p ? "int8" : "fp32";
        rd_cli_result one = rd_test_cli("run", "--json", model, "-i", input, "-p", prec, "--threads", "1", NULL);
        rd_cli_result three = rd_test_cli("run", "--json", model, "-i", input, "-p", prec, "--threads", "3", NULL);
        CU_ASSERT_EQUAL(one.code, 0);
        CU_ASSERT_EQUAL(three.code, 0);
        CU_ASSERT_STRING_EQUAL(one.out, three.out);
        rd_test_cli_free(&one);
        rd_test_cli_free(&three);
    }
    static const char *const bad_threads[] = {"0", "1025", "two", "-3"};
    for (int k = 0; k < 4; k++) {
        RD_CLI_EXPECT(2, NULL, RD_TEXTS("--threads expects a count from 1 to 1024"), "run", model, "-i", input,
                      "--threads", bad_threads[k]);
    }

    char dump_opt[4300];
    snprintf(dump_opt, sizeof dump_opt, "--dump-dir=%s", dumps);
    RD_CLI_EXPECT(0, NULL, NULL, "run", model, "-i", input, dump_opt, "--outputs-only");
    size_t len;
    char *text = rd_test_read_file(index, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"probs\""));
    CU_ASSERT_PTR_NULL(strstr(text, "\"conv1_out\""));
    free(text);

    RD_CLI_EXPECT(0, RD_TEXTS("Conv", "parameters"), NULL, "inspect", model);
    RD_CLI_EXPECT(0, RD_TEXTS("\"macs\""), NULL, "inspect", model, "--json");

    /* wrong input name, wrong shape */
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("nosuch"), "run", model, "--input", "nosuch=x.npy");
    RD_CLI_EXPECT(2, NULL, NULL, "run", model, "--input-shape", "image=1,3,16,16", "--input", named);
    free(dir);
}

/* Broken models give one clear error naming the file, and exit code 3. */
static void test_bad_models(void)
{
    char *dir = rd_test_tmpdir("cli-bad");
    char good[4200], path[4200];
    snprintf(good, sizeof good, "%s/good", dir);
    rd_cli_result r = rd_test_cli("demo", "-o", good, NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    rd_test_cli_free(&r);
    snprintf(path, sizeof path, "%s/demo.onnx", good);
    size_t len;
    char *bytes = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);

    snprintf(path, sizeof path, "%s/truncated.onnx", dir);
    rd_test_write_bytes(path, bytes, len / 2);
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("truncated.onnx"), "inspect", path);

    snprintf(path, sizeof path, "%s/garbage.onnx", dir);
    static const char garbage[] = "\xff\xff\xff\xff this is not protobuf";
    rd_test_write_bytes(path, garbage, sizeof garbage - 1);
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("garbage.onnx"), "run", path, "-i", "x.npy");

    /* two unknown ops are listed together, with their node names */
    rd_onnx_builder *b = rd_onnx_builder_create(8, 17);
    rd_onnx_add_input(b, "x", RD_DT_F32, 1, (const int64_t[]){4}, NULL);
    rd_onnx_add_node(b, "FancyOp", "first_fancy", (const char *const[]){"x"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_add_node(b, "OtherOp", "second_other", (const char *const[]){"y"}, 1, (const char *const[]){"z"}, 1);
    rd_onnx_add_output(b, "z", RD_DT_F32, -1, NULL, NULL);
    snprintf(path, sizeof path, "%s/unknown_ops.onnx", dir);
    rd_error err;
    CU_ASSERT_EQUAL(rd_onnx_builder_save(b, path, &err), RD_OK);
    rd_onnx_builder_destroy(b);
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("first_fancy", "second_other"), "run", path, "-i", "x.npy");
    RD_CLI_EXPECT(0, RD_TEXTS("UNSUPPORTED", "second_other"), NULL, "inspect", path);

    /* an input .npy of the wrong shape */
    char npy[4200], named[4300];
    snprintf(npy, sizeof npy, "%s/small.npy", dir);
    rd_tensor t;
    CU_ASSERT_EQUAL(rd_tensor_alloc(&t, RD_DT_F32, 4, (const int64_t[]){1, 3, 8, 8}, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_npy_save(npy, &t, &err), RD_OK);
    rd_tensor_fini(&t);
    snprintf(path, sizeof path, "%s/demo.onnx", good);
    snprintf(named, sizeof named, "image=%s", npy);
    r = rd_test_cli("run", path, "--input", named, NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "small.npy: the header's shape is 1x3x8x8, graph input 'image' must have "
                                          "shape 1x3x32x32"));
    rd_test_cli_free(&r);
    free(bytes);
    free(dir);
}

RD_TEST_REGISTER(register_cli)
{
    RD_SUITE("cli", {"version and help", test_version_and_help}, {"usage errors", test_usage_errors},
             {"demo, run, inspect", test_demo_run_inspect}, {"bad models and inputs", test_bad_models});
}

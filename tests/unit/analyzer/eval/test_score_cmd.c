/* test_score_cmd.c: the scorer contract (score_cmd.h): the number read, every way a scorer can go wrong,
   the timeout killing its whole process group; and `eval --score-cmd` end to end. */
#include "cli_capture.h"
#include "rd_test.h"
#include "score_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_parse(void)
{
    double v = 0;
    rd_error err = {0};
    const char *ok = "loading...\n0.875\n\n";
    CU_ASSERT_EQUAL(an_score_parse_output(ok, strlen(ok), "s", &v, &err), RD_OK);
    CU_ASSERT_DOUBLE_EQUAL(v, 0.875, 0);
    CU_ASSERT_EQUAL(an_score_parse_output("  -3e2 \r\n", 9, "s", &v, &err), RD_OK);
    CU_ASSERT_DOUBLE_EQUAL(v, -300, 0);
    static const char *const bad[] = {"", "\n\n", "mAP 0.5\n", "0.5 points\n", "nan\n", "1e999\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(an_score_parse_output(bad[i], strlen(bad[i]), "s", &v, &err), RD_E_PARSE);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--score-cmd 's'"));
    }
}

static void test_run(void)
{
    char *dir = rd_test_tmpdir("score_cmd");
    double v = 0;
    rd_error err = {0};
    /* $1 and $RD_OUTPUTS name the folder; stderr passes through; the last line is the score */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "f() { test \"$1\" = \"$RD_OUTPUTS\" && echo log >&2 && echo 1 && echo 0.25; }; f");
    CU_ASSERT_EQUAL(an_score_cmd_run(cmd, dir, 30, NULL, &v, &err), RD_OK);
    CU_ASSERT_DOUBLE_EQUAL(v, 0.25, 0);
    CU_ASSERT_EQUAL(an_score_cmd_run("exit 4;", dir, 30, NULL, &v, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "exited with status 4"));
    CU_ASSERT_EQUAL(an_score_cmd_run("kill -9 $$;", dir, 30, NULL, &v, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "killed by signal 9"));
    CU_ASSERT_EQUAL(an_score_cmd_run("echo no number #", dir, 30, NULL, &v, &err), RD_E_PARSE);
    CU_ASSERT_EQUAL(an_score_cmd_run("/nonexistent/scorer", dir, 30, NULL, &v, &err), RD_E_INVAL);
    /* a scorer that hangs (its child too, holding stdout) is stopped at the timeout, quickly */
    double t0 = rd_test_seconds();
    CU_ASSERT_EQUAL(an_score_cmd_run("sleep 30 & sleep 30;", dir, 0.5, NULL, &v, &err), RD_E_TIMEOUT);
    CU_ASSERT(rd_test_seconds() - t0 < 10);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "did not finish within 0.5 s"));
    /* the last output is quoted; {outputs} marks where the folder goes; RKNN_DIAG_OUTPUTS is RD_OUTPUTS' alias */
    CU_ASSERT_EQUAL(an_score_cmd_run("echo 'labels missing'; exit 5;", dir, 30, NULL, &v, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "its last output: labels missing"));
    CU_ASSERT_EQUAL(an_score_cmd_run("test -d {outputs} && test \"$RKNN_DIAG_OUTPUTS\" = {outputs} && echo 0.5 | cat",
                                     dir, 30, NULL, &v, &err),
                    RD_OK);
    CU_ASSERT_DOUBLE_EQUAL(v, 0.5, 0);
    /* a scorer that exits but leaves a child holding stdout: its number counts, the child is stopped */
    t0 = rd_test_seconds();
    CU_ASSERT_EQUAL(an_score_cmd_run("sleep 30 & echo 0.75 #", dir, 30, NULL, &v, &err), RD_OK);
    CU_ASSERT_DOUBLE_EQUAL(v, 0.75, 0);
    CU_ASSERT(rd_test_seconds() - t0 < 10);
    /* a flood on stdout is cut */
    CU_ASSERT_EQUAL(an_score_cmd_run("yes 1;", dir, 30, NULL, &v, &err), RD_E_LIMIT);
    free(dir);
}

/* eval --score-cmd on the demo classifier: the scorer reads index.json and counts the .npy files. */
static void test_eval_score(void)
{
    char *dir = rd_test_demo_dir("eval_score");
    char model[4200], ds[4200], out[4200], cmd[4400];
    snprintf(model, sizeof model, "%s/demo.onnx", dir);
    snprintf(ds, sizeof ds, "%s/dataset.txt", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(cmd, sizeof cmd,
             "grep -c '\"s0000' \"$RD_OUTPUTS/index.json\" >/dev/null && ls \"$RD_OUTPUTS\" | grep -c "
             "'_o0.npy$' #");
    rd_cli_result r = rd_test_cli("eval", model, "--dataset", ds, "--input-layout", "nchw", "--score-cmd", cmd, "-o",
                                  out, "--limit", "5", "--json", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"score\":\t5"));
    if (r.code)
        fprintf(stderr, "%s\n", r.errs);
    rd_test_cli_free(&r);
    char idx[4400];
    snprintf(idx, sizeof idx, "%s/outputs/int8/index.json", out);
    size_t len = 0;
    char *text = rd_test_read_file(idx, &len);
    CU_ASSERT_PTR_NOT_NULL(text);
    if (text)
        CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"format\":\t\"rknn-diag-outputs/1\""));
    free(text);
    /* usage: no -o, and --shard */
    rd_test_cli_says(2, NULL, "eval", model, "--dataset", ds, "--score-cmd", "true", NULL);
    /* a failing scorer: exit 3 naming it */
    r = rd_test_cli("eval", model, "--dataset", ds, "--input-layout", "nchw", "--score-cmd", "exit 7;", "-o", out,
                    "--limit", "2", NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "exited with status 7"));
    rd_test_cli_free(&r);
    free(dir);
}

/* The outputs folder: samples added out of order (as measuring threads do) are listed in order. */
static void test_outputs_dir(void)
{
    char *dir = rd_test_tmpdir("outputs_dir");
    const char *names[] = {"probs"};
    an_outputs_dir *d = NULL;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(an_outputs_dir_create(dir, "int8", names, 1, &d, &err), RD_OK);
    float data[3] = {1, 2, 3};
    rd_tensor t = {.dtype = RD_DT_F32, .rank = 2, .dims = {1, 3}, .data = data};
    const char *inputs[] = {"a.jpg", NULL};
    CU_ASSERT_EQUAL(an_outputs_dir_note(d, "candidate", cJSON_CreateNumber(3), &err), RD_OK);
    CU_ASSERT_EQUAL(an_outputs_dir_add(d, 2, inputs, 2, &t, &err), RD_OK);
    CU_ASSERT_EQUAL(an_outputs_dir_add(d, 0, inputs, 1, &t, &err), RD_OK);
    CU_ASSERT_EQUAL(an_outputs_dir_finish(d, &err), RD_OK);
    an_outputs_dir_destroy(d);
    char idx[4400];
    snprintf(idx, sizeof idx, "%s/index.json", dir);
    size_t len = 0;
    char *text = rd_test_read_file(idx, &len);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    const cJSON *samples = cJSON_GetObjectItem(root, "samples");
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(samples), 2);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(root, "candidate")->valueint, 3);
    const cJSON *s0 = cJSON_GetArrayItem(samples, 0), *s2 = cJSON_GetArrayItem(samples, 1);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(s0, "sample")->valueint, 0);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(s2, "sample")->valueint, 2);
    CU_ASSERT_STRING_EQUAL(cJSON_GetArrayItem(cJSON_GetObjectItem(s2, "files"), 0)->valuestring, "s000002_o0.npy");
    CU_ASSERT(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(s2, "inputs"), 1)));
    CU_ASSERT_EQUAL(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(s2, "shapes"), 0), 1)->valueint, 3);
    cJSON_Delete(root);
    free(text);
    free(dir);
}

RD_TEST_REGISTER(reg_score_cmd)
{
    RD_SUITE("score_cmd", {"the printed number", test_parse}, {"running, failures, timeout", test_run},
             {"the outputs folder", test_outputs_dir}, {"eval --score-cmd", test_eval_score});
}

/*
 * test_inspect_rknn.c: `rknn-diag inspect` on a .rknn file made by rknn_synth.c (under a name that is not
 * .rknn: the magic decides), on a build log, and on files it must refuse (exit 3).
 */
#include "cli_capture.h"
#include "rd_test.h"
#include "rknn_synth.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *write_file(const char *tag, const char *name, const void *data, size_t len)
{
    char *dir = rd_test_tmpdir(tag);
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(data, 1, len, f);
    fclose(f);
    free(dir);
    return path;
}

static char *demo_path(void)
{
    rs_model sm;
    rs_demo(&sm);
    uint8_t *buf;
    size_t len;
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    char *path = write_file("inspect_rknn", "model.bin", buf, len);
    free(buf);
    return path;
}

static void test_text(void)
{
    char *path = demo_path();
    rd_cli_result r = rd_test_cli("inspect", path, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "format       RKNPU lite"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "compiler     1.6.2b0 (number 10602)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "runtime int8 NHWC"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "mean [127.5, 127.5, 127.5] std [58.5, 57, 57.5] reorder 2 1 0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "ConvAdd                     1     1     0        0     1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Conv:conv_y | x, w, b, r -> y"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "channel int8 scale [0.1, 0.2, 0.3, 0.4] zp [1, -2, 3, -4]"));
    rd_test_cli_free(&r);
    r = rd_test_cli("inspect", path, "--max", "1", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "nodes: 4 (the first 1; --all or --max N for more)"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "Conv:conv_y |"));
    rd_test_cli_free(&r);
    rd_test_cli_says(2, NULL, "inspect", path, "--max", "x", NULL);
    free(path);
}

static void test_json(void)
{
    char *path = demo_path();
    rd_cli_result r = rd_test_cli("inspect", "--json", path, NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    cJSON *root = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "schema")->valuestring, "rknn-diag/inspect-rknn/1");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "target_platform")->valuestring, "rk3566");
    cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "graphs"), 0);
    cJSON *nodes = cJSON_GetObjectItem(g, "nodes"), *tensors = cJSON_GetObjectItem(g, "tensors");
    CU_ASSERT(cJSON_GetArraySize(nodes) == 4 && cJSON_GetArraySize(tensors) == 6);
    cJSON *conv = cJSON_GetArrayItem(nodes, 1);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(conv, "target")->valuestring, "NPU");
    CU_ASSERT_STRING_EQUAL(cJSON_GetArrayItem(cJSON_GetObjectItem(conv, "input_names"), 1)->valuestring, "w");
    cJSON *params = cJSON_GetObjectItem(conv, "params");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(params, "type_name")->valuestring, "Conv");
    cJSON *pads = cJSON_GetArrayItem(cJSON_GetObjectItem(params, "fields"), 3);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(pads, "name")->valuestring, "pads");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(pads, "value")), 4);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(conv, "attrs"), "alpha")->valuedouble, 0.5);
    cJSON *out = cJSON_GetArrayItem(nodes, 3);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "attrs"), "bytes_hex")->valuestring,
                           "00000000000000000200000006000000");
    cJSON *y = cJSON_GetArrayItem(tensors, 5);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(y, "scale")), 4);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(y, "layout")->valuestring, "NC1HWC2");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(y, "role")->valuestring, "output");
    cJSON *attrs = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "attrs"), 0);
    CU_ASSERT_EQUAL(cJSON_GetArrayItem(cJSON_GetObjectItem(attrs, "std"), 2)->valuedouble, 57.5);
    cJSON_Delete(root);
    rd_test_cli_free(&r);
    free(path);
}

/* A name with broken UTF-8 and a terminal escape: shown escaped in the text, U+FFFD in the JSON
   (docs/report-schema.md, "Names": every JSON rknn-diag writes). */
static void test_hostile_names(void)
{
    rs_model sm;
    rs_demo(&sm);
    sm.tensors[4].name = "r\xff\x1b[31m";
    uint8_t *buf;
    size_t len;
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    char *path = write_file("inspect_rknn_names", "names.rknn", buf, len);
    free(buf);
    rd_cli_result r = rd_test_cli("inspect", path, "--all", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "r\\xff\\x1b[31m"));
    CU_ASSERT_PTR_NULL(strchr(r.out, '\x1b'));
    rd_test_cli_free(&r);
    r = rd_test_cli("inspect", path, "--json", NULL);
    cJSON *root = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    cJSON *t = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "graphs"), 0), "tensors"), 4);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(t, "name")->valuestring, "r\xef\xbf\xbd\x1b[31m");
    cJSON_Delete(root);
    rd_test_cli_free(&r);
    free(path);
}

static void test_refused_and_help(void)
{
    char *enc = write_file("inspect_rknn_enc", "secret.rknn", "CYPTRKNN\0\0\0\0\0\0\0\0", 16);
    rd_cli_result r = rd_test_cli("inspect", enc, NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "encrypted RKNN model (CYPTRKNN)"));
    rd_test_cli_free(&r);
    char *trunc = write_file("inspect_rknn_cut", "cut.rknn", "RKNN\0\0\0\0\6\0\0\0\0\0\0\0\0\1", 18);
    r = rd_test_cli("inspect", trunc, "--json", NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "cut short"));
    CU_ASSERT_STRING_EQUAL(r.out, "");
    rd_test_cli_free(&r);
    r = rd_test_cli("inspect", "--help", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--build-log FILE"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "MODEL.onnx"));
    rd_test_cli_free(&r);
    rd_test_cli_says(2, NULL, "inspect", enc, "--build-log", enc, NULL);
    free(enc);
    free(trunc);
}

static void test_build_log(void)
{
    static const char log[] = "I rknn-toolkit2 version: 2.3.2\n"
                              "I fuse_ops results:\n"
                              "I     replace_exswish: remove node = ['s', 'm'], add node = ['s_2swish']\n"
                              "I     replace_exswish: remove node = ['s2', 'm2'], add node = ['s2_2swish']\n"
                              "ID OpType DataType Target InputShape OutputShape FullName\n"
                              "0 InputOperator INT8 CPU \\ (1,3,4,4) InputOperator:x\n"
                              "1 ConvExSwish INT8 NPU (1,3,4,4),(8,3,1,1),(8) (1,8,4,4) Conv:c\n";
    char *path = write_file("inspect_log", "build.log", log, sizeof log - 1);
    rd_cli_result r = rd_test_cli("inspect", "--build-log", path, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "toolkit      2.3.2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "replace_exswish x2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "layer table 1: build, 2 rows, header at line 5"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "ConvExSwish                 1     1     0        0     1"));
    rd_test_cli_free(&r);
    r = rd_test_cli("inspect", "--build-log", path, "--json", NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    cJSON *root = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(root, "fuse_ops")), 2);
    cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "tables"), 0);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(t, "kind")->valuestring, "build");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(t, "rows")), 2);
    cJSON_Delete(root);
    rd_test_cli_free(&r);
    char *empty = write_file("inspect_log_empty", "empty.log", "nothing here\n", 13);
    rd_test_cli_says(3, "nothing read", "inspect", "--build-log", empty, NULL);
    free(empty);
    free(path);
}

RD_TEST_REGISTER(reg_inspect_rknn)
{
    RD_SUITE("inspect_rknn", {"text", test_text}, {"--json", test_json}, {"hostile names", test_hostile_names},
             {"refused files, --help, usage", test_refused_and_help}, {"--build-log", test_build_log});
}

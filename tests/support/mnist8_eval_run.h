/* mnist8_eval_run.h: `rknn-diag eval` run on ../shared's mnist8 and its digits, its JSON report parsed. */
#ifndef RD_TEST_MNIST8_EVAL_RUN_H
#define RD_TEST_MNIST8_EVAL_RUN_H

#include "cli_capture.h"
#include "mnist8_eval.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

/**
 * `rknn-diag eval MODEL --idx-images IMAGES --idx-labels LABELS --calib 100 EXTRA... --json` on mnist8, extra
 * NULL-terminated (at most 16): its parsed report (a fatal failure when the command fails or prints no JSON);
 * the caller deletes it.
 */
static inline cJSON *rd_test_mnist8_eval(const char *const *extra)
{
    char model[RD_TEST_PATH_MAX], images[RD_TEST_PATH_MAX], labels[RD_TEST_PATH_MAX];
    rd_test_mnist8_paths(model, images, labels);
    char *argv[32] = {"rknn-diag", "eval", model, "--idx-images", images, "--idx-labels", labels, "--calib", "100"};
    int argc = 9;
    for (int i = 0; extra[i] && i < 16; i++)
        argv[argc++] = (char *)extra[i];
    argv[argc++] = "--json";
    argv[argc] = NULL;
    char *out = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_test_cli_run(argc, argv, &out), 0);
    cJSON *root = cJSON_Parse(out);
    free(out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    return root;
}

#endif

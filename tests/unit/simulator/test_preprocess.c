/* test_preprocess.c: images and arrays turned into graph inputs as RKNN prepares them: grey to RGB,
 * resize with a warning, RGB2BGR, mean/std, NHWC/NCHW layouts and the layout hint. */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct warnings {
    int n;
    char last[1024];
} warnings;

static void collect(void *user, const char *msg)
{
    warnings *w = user;
    w->n++;
    snprintf(w->last, sizeof w->last, "%s", msg);
}

static char *shared_image(const char *file)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/images/%s", rd_test_shared_dir(), file);
    return path;
}

/* ../shared/images/astronaut.png decoded; it must load (a fatal assertion). */
static rd_tensor astronaut(void)
{
    rd_tensor img;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_image_load(shared_image("astronaut.png"), &img, &err), RD_OK);
    return img;
}

static float at(const rd_tensor *t, int64_t c, int64_t y, int64_t x)
{
    return ((const float *)t->data)[(c * t->dims[2] + y) * t->dims[3] + x];
}

static void test_grey_image_to_three_channels(void)
{
    rd_error err;
    rd_tensor x;
    warnings w = {0};
    rd_warn_sink sink = {collect, &w};
    rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
    spec.n_mean = 3;
    spec.mean[0] = 100;
    spec.mean[1] = 0;
    spec.mean[2] = 0;
    spec.n_std = 3;
    spec.std[0] = 2;
    spec.std[1] = 1;
    spec.std[2] = 4;
    int64_t dims[4] = {1, 3, 512, 512};
    CU_ASSERT_EQUAL_FATAL(rd_input_prepare(shared_image("camera.png"), &spec, 4, dims, &sink, &x, &err), RD_OK);
    CU_ASSERT_EQUAL(w.n, 0);
    CU_ASSERT_EQUAL(x.dtype, RD_DT_F32);
    CU_ASSERT_DOUBLE_EQUAL(at(&x, 0, 0, 0), (200 - 100) / 2.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(at(&x, 1, 0, 0), 200, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(at(&x, 2, 0, 0), 50, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(at(&x, 1, 123, 17), 216, 1e-6);
    rd_tensor_fini(&x);
}

static void test_resize_warns_and_averages(void)
{
    rd_error err;
    rd_tensor img = astronaut(), x;
    warnings w = {0};
    rd_warn_sink sink = {collect, &w};
    int64_t dims[4] = {1, 3, 256, 256};
    CU_ASSERT_EQUAL_FATAL(rd_input_prepare_tensor(&img, true, "astronaut.png", NULL, 4, dims, &sink, &x, &err), RD_OK);
    CU_ASSERT_EQUAL(w.n, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(w.last, "resized from 512x512 to 256x256"));
    CU_ASSERT_PTR_NOT_NULL(strstr(w.last, "half-pixel"));
    /* halving with half-pixel centres samples the middle of each 2x2 block: their mean, rounded */
    const unsigned char *p = img.data;
    for (int k = 0; k < 3; k++) {
        int y = 40, xx = 77;
        double m = (p[((2 * y) * 512 + 2 * xx) * 3 + k] + p[((2 * y) * 512 + 2 * xx + 1) * 3 + k] +
                    p[((2 * y + 1) * 512 + 2 * xx) * 3 + k] + p[((2 * y + 1) * 512 + 2 * xx + 1) * 3 + k]) /
                   4.0;
        CU_ASSERT_DOUBLE_EQUAL(at(&x, k, y, xx), rint(m), 0.51);
    }
    rd_tensor_fini(&x);
    /* upscaling a 2x1 image: the ends keep the edge values, the middle interpolates */
    rd_tensor small;
    int64_t sd[3] = {1, 2, 1};
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&small, RD_DT_U8, 3, sd, &err), RD_OK);
    ((unsigned char *)small.data)[0] = 0;
    ((unsigned char *)small.data)[1] = 100;
    int64_t d2[4] = {1, 1, 1, 4};
    CU_ASSERT_EQUAL_FATAL(rd_input_prepare_tensor(&small, true, "s", NULL, 4, d2, NULL, &x, &err), RD_OK);
    const float *o = x.data;
    CU_ASSERT_DOUBLE_EQUAL(o[0], 0, 1e-6);   /* x=0 -> src -0.25 clamped to 0 */
    CU_ASSERT_DOUBLE_EQUAL(o[1], 25, 1e-6);  /* src 0.25 */
    CU_ASSERT_DOUBLE_EQUAL(o[2], 75, 1e-6);  /* src 0.75 */
    CU_ASSERT_DOUBLE_EQUAL(o[3], 100, 1e-6); /* src 1.25 clamped to the edge */
    rd_tensor_fini(&x);
    rd_tensor_fini(&small);
    rd_tensor_fini(&img);
}

static void test_rgb2bgr_before_mean(void)
{
    rd_error err;
    rd_tensor img = astronaut(), x;
    rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
    spec.rgb2bgr = true;
    spec.n_mean = 3;
    spec.mean[0] = 10;
    spec.mean[1] = 20;
    spec.mean[2] = 30;
    int64_t dims[4] = {1, 3, 512, 512};
    CU_ASSERT_EQUAL_FATAL(rd_input_prepare_tensor(&img, true, "a", &spec, 4, dims, NULL, &x, &err), RD_OK);
    /* pixel (17,123) is RGB 29 9 64: channel 0 now holds B, minus mean[0] */
    CU_ASSERT_DOUBLE_EQUAL(at(&x, 0, 123, 17), 64 - 10, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(at(&x, 1, 123, 17), 9 - 20, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(at(&x, 2, 123, 17), 29 - 30, 1e-6);
    rd_tensor_fini(&x);
    /* RGB to a 1-channel input: converted with a warning */
    warnings w = {0};
    rd_warn_sink sink = {collect, &w};
    int64_t d1[4] = {1, 1, 512, 512};
    CU_ASSERT_EQUAL_FATAL(rd_input_prepare_tensor(&img, true, "a", NULL, 4, d1, &sink, &x, &err), RD_OK);
    CU_ASSERT_EQUAL(w.n, 1);
    CU_ASSERT_DOUBLE_EQUAL(at(&x, 0, 123, 17), rint(0.299 * 29 + 0.587 * 9 + 0.114 * 64), 1e-6);
    rd_tensor_fini(&x);
    rd_tensor_fini(&img);
}

static void test_mean_std_wrong_length(void)
{
    rd_error err;
    rd_tensor img = astronaut(), x;
    rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
    spec.n_mean = 2;
    int64_t dims[4] = {1, 3, 512, 512};
    CU_ASSERT_EQUAL(rd_input_prepare_tensor(&img, true, "astro.png", &spec, 4, dims, NULL, &x, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "astro.png: mean_values has 2 values, the model input has 3 channels"));
    spec.n_mean = 0;
    spec.n_std = 1;
    CU_ASSERT_EQUAL(rd_input_prepare_tensor(&img, true, "astro.png", &spec, 4, dims, NULL, &x, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "std_values has 1 value,"));
    int64_t bad[4] = {1, 4, 512, 512};
    CU_ASSERT_EQUAL(rd_input_prepare_tensor(&img, true, "astro.png", NULL, 4, bad, NULL, &x, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "4 channels"));
    int64_t unknown[4] = {1, 3, -1, 512};
    CU_ASSERT_EQUAL(rd_input_prepare_tensor(&img, true, "astro.png", NULL, 4, unknown, NULL, &x, &err), RD_E_INVAL);
    rd_tensor_fini(&img);
}

/* A 1x2x3x4 NCHW model input fed from arrays in both layouts. */
static void test_array_layouts(void)
{
    rd_error err;
    int64_t dims[4] = {1, 2, 3, 4};
    rd_tensor nhwc, x;
    int64_t hd[4] = {1, 3, 4, 2};
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&nhwc, RD_DT_U8, 4, hd, &err), RD_OK);
    unsigned char *v = nhwc.data;
    for (int h = 0; h < 3; h++)
        for (int w = 0; w < 4; w++)
            for (int c = 0; c < 2; c++)
                v[(h * 4 + w) * 2 + c] = (unsigned char)(100 * c + 10 * h + w);
    rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
    spec.n_std = 2;
    spec.std[0] = 1;
    spec.std[1] = 10;
    CU_ASSERT_EQUAL_FATAL(rd_input_prepare_tensor(&nhwc, false, "x.npy", &spec, 4, dims, NULL, &x, &err), RD_OK);
    CU_ASSERT_EQUAL(x.dtype, RD_DT_F32);
    CU_ASSERT_DOUBLE_EQUAL(at(&x, 0, 2, 3), 23, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(at(&x, 1, 1, 2), 11.2, 1e-5);
    rd_tensor_fini(&x);
    /* HWC (rank 3) gets the batch added */
    nhwc.rank = 3;
    memmove(nhwc.dims, nhwc.dims + 1, 3 * sizeof nhwc.dims[0]);
    CU_ASSERT_EQUAL_FATAL(rd_input_prepare_tensor(&nhwc, false, "x.npy", NULL, 4, dims, NULL, &x, &err), RD_OK);
    CU_ASSERT_DOUBLE_EQUAL(at(&x, 1, 2, 0), 120, 1e-6);
    rd_tensor_fini(&x);
    /* the same data declared NCHW does not fit, and the hint says so */
    spec.layout = RD_LAYOUT_NCHW;
    CU_ASSERT_EQUAL(rd_input_prepare_tensor(&nhwc, false, "x.npy", &spec, 4, dims, NULL, &x, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "x.npy: shape 3x4x2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--input-layout nhwc"));
    rd_tensor_fini(&nhwc);
    /* NCHW data read as NHWC gets the opposite hint; declared NCHW it is copied */
    rd_tensor nchw;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&nchw, RD_DT_F32, 4, dims, &err), RD_OK);
    ((float *)nchw.data)[5] = 7.5f;
    CU_ASSERT_EQUAL(rd_input_prepare_tensor(&nchw, false, "y.npy", NULL, 4, dims, NULL, &x, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--input-layout nchw"));
    CU_ASSERT_EQUAL_FATAL(rd_input_prepare_tensor(&nchw, false, "y.npy", &spec, 4, dims, NULL, &x, &err), RD_OK);
    CU_ASSERT_EQUAL(((float *)x.data)[5], 7.5f);
    rd_tensor_fini(&x);
    rd_tensor_fini(&nchw);
    /* a shape fitting neither */
    int64_t odd[2] = {5, 5};
    rd_tensor o;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&o, RD_DT_F32, 2, odd, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_input_prepare_tensor(&o, false, "z.npy", NULL, 4, dims, NULL, &x, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NULL(strstr(err.msg, "--input-layout"));
    /* non-image inputs of other ranks must match exactly */
    int64_t d2[2] = {5, 5};
    CU_ASSERT_EQUAL_FATAL(rd_input_prepare_tensor(&o, false, "z.npy", NULL, 2, d2, NULL, &x, &err), RD_OK);
    rd_tensor_fini(&x);
    rd_tensor_fini(&o);
}

/* .npy files go through rd_npy_parse by content; the layout hint names the file. */
static void test_npy_file(void)
{
    rd_error err;
    rd_tensor t, x;
    int64_t hwc[3] = {2, 2, 3};
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, 3, hwc, &err), RD_OK);
    ((float *)t.data)[1] = 4.0f; /* h0 w0 c1 */
    char *dir = rd_test_tmpdir("preprocess");
    char path[4200];
    snprintf(path, sizeof path, "%s/x.npy", dir);
    CU_ASSERT_EQUAL_FATAL(rd_npy_save(path, &t, &err), RD_OK);
    int64_t dims[4] = {1, 3, 2, 2};
    CU_ASSERT_EQUAL_FATAL(rd_input_prepare(path, NULL, 4, dims, NULL, &x, &err), RD_OK);
    CU_ASSERT_EQUAL(at(&x, 1, 0, 0), 4.0f);
    rd_tensor_fini(&x);
    int64_t other[4] = {1, 2, 2, 3};
    rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
    spec.layout = RD_LAYOUT_NCHW;
    CU_ASSERT_EQUAL(rd_input_prepare(path, &spec, 4, other, NULL, &x, &err), RD_OK); /* 2x2x3 is NCHW 1x2x2x3 */
    rd_tensor_fini(&x);
    CU_ASSERT_EQUAL(rd_input_prepare(path, &spec, 4, dims, NULL, &x, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "x.npy: shape 2x2x3 read as NCHW"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--input-layout nhwc"));
    rd_tensor_fini(&t);
    free(dir);
}

RD_TEST_REGISTER(register_preprocess_tests)
{
    RD_SUITE("preprocess", {"grey image to 3 channels with mean/std", test_grey_image_to_three_channels},
             {"resize warns and averages", test_resize_warns_and_averages},
             {"rgb2bgr before mean", test_rgb2bgr_before_mean}, {"mean/std wrong length", test_mean_std_wrong_length},
             {"array layouts", test_array_layouts}, {".npy file", test_npy_file});
}

/*
 * test_accuracy_models.c: `rknn-diag accuracy` end to end on ultraface_rfb320 and mobilenet_v2 with a
 * 20-image calibration set made from ../shared/images (the 10 photos and their mirror images, written
 * as BMP files into the build tree). ultraface's int8 outputs stay within 1e-3 of the golden;
 * mobilenet_v2's weights are random (../shared/models/mobilenet_v2/SOURCE.md), so errors compound and its
 * output drops below 0.99: the analysis must then explain it with findings. super_resolution checks a model
 * whose batch size is symbolic.
 */
#include "rd_test.h"
#include "rknn_diag/analyzer.h"
#include "rknn_diag/reports.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const photos[] = {"astronaut.png",         "camera.png", "chelsea.png", "coffee.png",
                                     "raccoon.png",           "china.jpg",  "dog.jpg",     "flower.jpg",
                                     "hubble_deep_field.jpg", "rocket.jpg"};

/* Writes a uint8 HWC image as a 24-bit bottom-up BMP, optionally mirrored left to right. */
static void write_bmp(const char *path, const rd_tensor *img, bool mirror)
{
    int64_t h = img->dims[0], w = img->dims[1], c = img->dims[2];
    int64_t row = (w * 3 + 3) / 4 * 4;
    uint32_t size = (uint32_t)(54 + row * h);
    unsigned char hdr[54] = {'B', 'M'};
    memcpy(hdr + 2, &size, 4);
    hdr[10] = 54;
    hdr[14] = 40;
    int32_t wi = (int32_t)w, hi = (int32_t)h;
    memcpy(hdr + 18, &wi, 4);
    memcpy(hdr + 22, &hi, 4);
    hdr[26] = 1;
    hdr[28] = 24;
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(hdr, 1, 54, f);
    unsigned char *line = calloc((size_t)row, 1);
    for (int64_t y = h - 1; y >= 0; y--) {
        for (int64_t x = 0; x < w; x++) {
            int64_t sx = mirror ? w - 1 - x : x;
            const uint8_t *px = (const uint8_t *)img->data + (y * w + sx) * c;
            line[x * 3 + 0] = px[c == 3 ? 2 : 0];
            line[x * 3 + 1] = px[c == 3 ? 1 : 0];
            line[x * 3 + 2] = px[0];
        }
        fwrite(line, 1, (size_t)row, f);
    }
    free(line);
    fclose(f);
}

/* dataset.txt of 20 images in dir; returns its path (caller frees). */
static char *make_calibration_set(const char *dir)
{
    const char *shared = rd_test_shared_dir();
    char *list = malloc(4200);
    snprintf(list, 4200, "%s/dataset.txt", dir);
    FILE *f = fopen(list, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (size_t i = 0; i < sizeof photos / sizeof photos[0]; i++) {
        char src[4200], dst[4200];
        snprintf(src, sizeof src, "%s/images/%s", shared, photos[i]);
        fprintf(f, "%s\n", src);
        rd_tensor img;
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(rd_image_load(src, &img, &err), RD_OK);
        snprintf(dst, sizeof dst, "%s/mirror_%zu.bmp", dir, i);
        write_bmp(dst, &img, true);
        rd_tensor_fini(&img);
        fprintf(f, "mirror_%zu.bmp\n", i);
    }
    fclose(f);
    return list;
}

static int cli(const char *first, ...)
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
    FILE *out = fopen("/dev/null", "w");
    int rc = rd_cli_run(argc, argv, out, stderr);
    fclose(out);
    return rc;
}

/* The entire cosine of a named layer in report.json. */
static double entire_cos(const rd_result *r, const char *name)
{
    for (size_t i = 0; i < r->n_layers; i++)
        if (strcmp(r->layers[i].name, name) == 0 && r->layers[i].groups[RD_GROUP_SIM_ENTIRE].present)
            return r->layers[i].groups[RD_GROUP_SIM_ENTIRE].cos_min;
    return NAN;
}

static void analyse(const char *model_rel, const char *image, const char *mean, const char *std,
                    const char *const *outs, size_t n_outs, size_t min_layers, double min_cos)
{
    const char *shared = rd_test_shared_dir();
    char *dir = rd_test_tmpdir("accuracy-e2e");
    char *list = make_calibration_set(dir);
    char model[4200], input[4200], snap[4200], json[4400];
    snprintf(model, sizeof model, "%s/models/%s", shared, model_rel);
    snprintf(input, sizeof input, "%s/images/%s", shared, image);
    snprintf(snap, sizeof snap, "%s/snapshot", dir);
    int rc = cli("accuracy", model, "--dataset", list, "--inputs", input, "--mean", mean, "--std", std, "-o", snap,
                 "--no-txt", NULL);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    snprintf(json, sizeof json, "%s/report.json", snap);
    rd_result r;
    rd_result_init(&r);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_report_json_load(json, &r, &err), RD_OK);
    fprintf(stderr, "%s: %zu layers, %zu findings", model_rel, r.n_layers, r.n_findings);
    CU_ASSERT(r.n_layers >= min_layers);
    for (size_t o = 0; o < n_outs; o++) {
        double c = entire_cos(&r, outs[o]);
        fprintf(stderr, ", %s entire cos %.5f", outs[o], c);
        CU_ASSERT(c >= min_cos);
        /* an output below the warning threshold must come with findings that explain it */
        if (c < 0.99)
            CU_ASSERT(r.n_findings > 0);
    }
    fputc('\n', stderr);
    rd_result_fini(&r);
    free(list);
    free(dir);
}

static void test_ultraface(void)
{
    static const char *const outs[] = {"scores", "boxes"};
    analyse("ultraface_rfb320/model.onnx", "astronaut.png", "127,127,127", "128,128,128", outs, 2, 150, 0.999);
}

static void test_mobilenet(void)
{
    static const char *const outs[] = {"logits"};
    analyse("mobilenet_v2/model.onnx", "chelsea.png", "123.675,116.28,103.53", "58.395,57.12,57.375", outs, 1, 60, 0.9);
}

/* super_resolution's batch size is symbolic: every activation must still be calibrated and analysed
   without --input-shape (it once stopped at "tensor '10' has no int8 parameters"). */
static void test_super_resolution_symbolic_batch(void)
{
    const char *shared = rd_test_shared_dir();
    char *dir = rd_test_tmpdir("accuracy-sr");
    char model[4200], input[4200], snap[4200], json[4400];
    snprintf(model, sizeof model, "%s/models/super_resolution/model.onnx", shared);
    snprintf(input, sizeof input, "%s/models/super_resolution/inputs/set0.npy", shared);
    snprintf(snap, sizeof snap, "%s/snapshot", dir);
    CU_ASSERT_EQUAL_FATAL(
        cli("accuracy", model, "--inputs", input, "--input-layout", "nchw", "-o", snap, "--no-txt", NULL), 0);
    snprintf(json, sizeof json, "%s/report.json", snap);
    rd_result r;
    rd_result_init(&r);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_report_json_load(json, &r, &err), RD_OK);
    double c = entire_cos(&r, "output");
    fprintf(stderr, "super_resolution: %zu layers, output entire cos %.5f\n", r.n_layers, c);
    CU_ASSERT(c >= 0.99);
    CU_ASSERT_FALSE(isnan(entire_cos(&r, "10"))); /* the first Relu, once without parameters */
    rd_result_fini(&r);
    free(dir);
}

RD_TEST_REGISTER(register_accuracy_models)
{
    RD_SUITE("accuracy_models", {"ultraface_rfb320, 20-image calibration", test_ultraface},
             {"mobilenet_v2, 20-image calibration", test_mobilenet},
             {"super_resolution, symbolic batch", test_super_resolution_symbolic_batch});
}

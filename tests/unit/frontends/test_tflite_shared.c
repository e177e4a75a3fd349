/*
 * test_tflite_shared.c: the TFLite frontend on the real models of ../shared/tflite (read in place):
 *  - seanet_conv/conv0..8.tflite (int16 activations, int8 weights): run with their own quantization
 *    (`--precision model`) on TFLite's input CSV, every output code equal to TFLite's reference-kernel golden;
 *  - person_detect.tflite (int8 MobileNet): person.bmp scores "person" (index 1) above "no person" (index 0),
 *    no_person.bmp the reverse, as TFLite Micro's person_detection_test.cc expects, with the int8 output codes
 *    of the model's own arithmetic; the float32 form (dequantized) on the dequantized input agrees.
 */
#include "rd_test.h"
#include "rknn_diag/frontends.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *shared_path(const char *rel)
{
    return rd_test_shared_file("tflite/%s", rel);
}

/* Comma- and newline-separated integers. */
static int16_t *read_csv(const char *rel, size_t *n)
{
    char *path = shared_path(rel);
    size_t len = 0;
    char *text = rd_test_read_file(path, &len);
    free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    int16_t *v = malloc(len * sizeof *v + 1);
    *n = 0;
    for (char *p = text; p < text + len;) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p) {
            p++;
            continue;
        }
        v[(*n)++] = (int16_t)x;
        p = end;
    }
    free(text);
    return v;
}

static rd_model *load(const char *rel, bool model_precision, rd_frontend_info *info)
{
    char *path = shared_path(rel);
    rd_frontend_options fo = {.model_precision = model_precision};
    rd_model *m = NULL;
    rd_error err;
    rd_status st = rd_frontend_load(path, &fo, NULL, &m, info, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n%s\n", err.msg);
    free(path);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    return m;
}

static void test_seanet_bit_exact(void)
{
    for (int k = 0; k <= 8; k++) {
        char rel[64];
        snprintf(rel, sizeof rel, "seanet_conv/conv%d.tflite", k);
        rd_frontend_info info;
        rd_model *m = load(rel, true, &info);
        CU_ASSERT(info.quantized && info.model_precision);
        size_t n_in = 0, n_gold = 0;
        snprintf(rel, sizeof rel, "seanet_conv/conv%d_input0_int16.csv", k);
        int16_t *in = read_csv(rel, &n_in);
        snprintf(rel, sizeof rel, "seanet_conv/conv%d_golden_int16.csv", k);
        int16_t *gold = read_csv(rel, &n_gold);
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, 0), &vi);
        CU_ASSERT_EQUAL_FATAL(vi.dtype, RD_DT_I16);
        rd_tensor x = {.dtype = RD_DT_I16, .rank = vi.rank, .data = in};
        memcpy(x.dims, vi.dims, sizeof x.dims);
        CU_ASSERT_EQUAL_FATAL((size_t)rd_tensor_numel(&x), n_in);
        rd_tensor y = {0};
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(rd_model_run(m, &x, 1, NULL, &y, 1, &err), RD_OK);
        CU_ASSERT_EQUAL(y.dtype, RD_DT_I16);
        CU_ASSERT_EQUAL_FATAL((size_t)rd_tensor_numel(&y), n_gold);
        size_t differ = 0;
        for (size_t i = 0; i < n_gold; i++)
            differ += ((int16_t *)y.data)[i] != gold[i];
        if (differ)
            fprintf(stderr, "\nconv%d: %zu of %zu codes differ from TFLite's golden\n", k, differ, n_gold);
        CU_ASSERT_EQUAL(differ, 0);
        rd_tensor_fini(&y);
        free(in);
        free(gold);
        rd_model_destroy(m);
    }
}

/* The image's bytes as the int8 input, as TFLite Micro's test copies them (memcpy of the BMP's pixels). */
static void image_input(const char *rel, int8_t *codes)
{
    char *path = shared_path(rel);
    rd_tensor img = {0};
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_image_load(path, &img, &err), RD_OK);
    free(path);
    CU_ASSERT_EQUAL_FATAL(img.dims[0] * img.dims[1], 96 * 96);
    const uint8_t *px = img.data;
    int64_t c = img.dims[2];
    for (int i = 0; i < 96 * 96; i++)
        codes[i] = (int8_t)px[i * c];
    rd_tensor_fini(&img);
}

static void test_person_detect(void)
{
    rd_frontend_info info;
    rd_model *mq = load("person_detect/person_detect.tflite", true, &info);
    CU_ASSERT(info.quantized && info.model_precision);
    rd_model *mf = load("person_detect/person_detect.tflite", false, &info);
    CU_ASSERT(info.quantized && !info.model_precision);
    static const char *const images[2] = {"person_detect/person.bmp", "person_detect/no_person.bmp"};
    for (int k = 0; k < 2; k++) {
        static int8_t codes[96 * 96];
        static float deq[96 * 96];
        image_input(images[k], codes);
        rd_tensor x = {.dtype = RD_DT_I8, .rank = 4, .dims = {1, 96, 96, 1}, .data = codes};
        rd_tensor y = {0}, yf = {0};
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(rd_model_run(mq, &x, 1, NULL, &y, 1, &err), RD_OK);
        CU_ASSERT_EQUAL_FATAL(y.dtype, RD_DT_I8);
        CU_ASSERT_EQUAL_FATAL(rd_tensor_numel(&y), 2);
        int8_t no_person = ((int8_t *)y.data)[0], person = ((int8_t *)y.data)[1];
        fprintf(stderr, "\n%s: person score %d, no person score %d\n", images[k], person, no_person);
        CU_ASSERT(k == 0 ? person > no_person : no_person > person);
        /* the float32 golden on the dequantized input: the same verdict */
        size_t first = 0; /* the first convolution carries the input's quantization */
        for (rd_node_info ni; first < rd_model_node_count(mq); first++) {
            rd_model_node(mq, first, &ni);
            if (strcmp(ni.op_type, "TFLiteConv2D") == 0)
                break;
        }
        float scale = 0.0f;
        int64_t zp = 0;
        CU_ASSERT_FATAL(rd_model_node_attr_float(mq, first, "x_scale", &scale) &&
                        rd_model_node_attr_int(mq, first, "x_zero_point", &zp));
        for (int i = 0; i < 96 * 96; i++)
            deq[i] = scale * (float)(codes[i] - zp);
        rd_tensor xf = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, 96, 96, 1}, .data = deq};
        CU_ASSERT_EQUAL_FATAL(rd_model_run(mf, &xf, 1, NULL, &yf, 1, &err), RD_OK);
        float fn = ((float *)yf.data)[0], fp = ((float *)yf.data)[1];
        CU_ASSERT(k == 0 ? fp > fn : fn > fp);
        rd_tensor_fini(&y);
        rd_tensor_fini(&yf);
    }
    rd_model_destroy(mq);
    rd_model_destroy(mf);
}

RD_TEST_REGISTER(register_tflite_shared)
{
    RD_SUITE("tflite_shared", {"seanet_conv int16x8 bit-exact", test_seanet_bit_exact},
             {"person_detect person / no person", test_person_detect});
}

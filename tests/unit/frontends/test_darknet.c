/*
 * test_darknet.c: the Darknet frontend on models written here (darknet_synth.c): names and shapes of every
 * layer, both .weights header versions, and malformed input: a .cfg without its .weights, a short .weights,
 * bad options, references out of range, unknown layers all listed at once, every truncation of the .cfg.
 * Numerical agreement with Darknet itself: test_darknet_oracle.c (Debian's libdarknet).
 */
#include "darknet_synth.h"
#include "fe_check.h"
#include "rd_test.h"
#include "rknn_diag/frontends.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rd_status convert(const char *cfg, const uint8_t *w, size_t wlen, rd_model **m, rd_error *err)
{
    void *onnx = NULL;
    size_t len = 0;
    rd_frontend_info info;
    *m = NULL;
    rd_status st = rd_darknet_to_onnx(cfg, strlen(cfg), "tiny.cfg", w, wlen, "tiny.weights", &onnx, &len, &info, err);
    if (st == RD_OK) {
        CU_ASSERT_EQUAL(info.format, RD_FORMAT_DARKNET);
        st = rd_model_load_mem(onnx, len, "tiny.cfg", NULL, NULL, m, err);
    }
    free(onnx);
    return st;
}

static void test_tiny_names_and_shapes(void)
{
    for (int version = 0; version < 2; version++) {
        size_t wlen = 0;
        uint8_t *w = dns_weights(dns_tiny_layers, 0, version ? 2 : 1, 5, &wlen);
        rd_model *m = NULL;
        rd_error err;
        rd_status st = convert(dns_tiny_cfg, w, wlen, &m, &err);
        fe_assert_ok(st, &err);
        static const struct {
            const char *name;
            int64_t c, h, w;
        } want[] = {
            {"0_conv", 8, 32, 32},      {"1_max", 8, 16, 16},     {"2_conv", 16, 16, 16}, {"3_max", 16, 8, 8},
            {"4_conv", 16, 8, 8},       {"5_max", 16, 8, 8},      {"6_conv", 16, 8, 8},   {"7_shortcut", 16, 8, 8},
            {"8_conv", 21, 8, 8},       {"9_yolo", 21, 8, 8},     {"10_route", 16, 8, 8}, {"11_conv", 8, 8, 8},
            {"12_upsample", 8, 16, 16}, {"13_route", 24, 16, 16}, {"14_conv", 8, 8, 8},   {"15_conv", 21, 8, 8},
            {"16_yolo", 21, 8, 8},
        };
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            int v = rd_model_find_value(m, want[i].name);
            CU_ASSERT_FATAL(v >= 0);
            rd_value_info vi;
            rd_model_value(m, (size_t)v, &vi);
            CU_ASSERT(vi.rank == 4 && vi.dims[1] == want[i].c && vi.dims[2] == want[i].h && vi.dims[3] == want[i].w);
        }
        CU_ASSERT_EQUAL(rd_model_output_count(m), 2); /* the yolo heads */
        rd_model_destroy(m);
        free(w);
    }
}

static void test_weights_refused(void)
{
    size_t wlen = 0;
    uint8_t *w = dns_weights(dns_tiny_layers, 0, 2, 5, &wlen);
    rd_model *m;
    rd_error err;
    CU_ASSERT_EQUAL(convert(dns_tiny_cfg, w, wlen - 4, &m, &err), RD_E_PARSE); /* one float short */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tiny.weights: layer 15 ([convolutional], tiny.cfg line"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is it the .weights of this .cfg?"));
    CU_ASSERT_EQUAL(convert(dns_tiny_cfg, w, 10, &m, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "too short for a .weights header"));
    float nan = 0.0f / 0.0f;
    memcpy(w + 20 + 4 * 3, &nan, 4);
    CU_ASSERT_EQUAL(convert(dns_tiny_cfg, w, wlen, &m, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not finite"));
    free(w);
    /* a .cfg without its .weights beside it */
    fe_check_alone("darknet_alone", "alone.cfg", dns_tiny_cfg, "alone.cfg: its weights (the .weights beside the .cfg)",
                   "alone.weights");
}

static void test_cfg_refused(void)
{
    size_t wlen = 0;
    uint8_t *w = dns_weights(dns_tiny_layers, 0, 2, 5, &wlen);
    rd_model *m;
    rd_error err;
    static const struct {
        const char *cfg;
        const char *msg;
    } bad[] = {
        {"[net]\nwidth=32\nheight=32\n[convolutional]\nfilters=4\n", "[net] needs width, height and channels"},
        {"[net]\nwidth=32\nheight=32\nchannels=3\n[convolutional]\nfilters=four\n",
         "tiny.cfg:6: filters=four: not an integer"},
        {"[net]\nwidth=32\nheight=32\nchannels=3\n[convolutional]\nfilters=-4\n", "filters=-4 is outside 1..1048576"},
        {"[net]\nwidth=32\nheight=32\nchannels=3\nthis line has no equals\n", "tiny.cfg:5: expected key=value"},
        {"[net]\nwidth=32\nheight=32\nchannels=3\n[route]\nlayers=-3\n", "layer reference -3 from layer 0"},
        {"[net]\nwidth=32\nheight=32\nchannels=3\n[convolutional\n", "is not a [section] line"},
        {"[net]\nwidth=32\nheight=32\nchannels=3\n", "no layer after [net]"},
        {"[convolutional]\nfilters=4\n", "the first section is [convolutional], expected [net]"},
        {"[net]\nwidth=99999999\nheight=32\nchannels=3\n[maxpool]\n", "width=99999999 is outside"},
        {"[net]\nwidth=32\nheight=32\nchannels=3\n[lstm]\n[maxpool]\n[crnn]\n[lstm]\n",
         "3 layers are of 2 kinds not supported (first of each): [lstm] (layer 0, tiny.cfg line 5), [crnn] (layer 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rd_status st = convert(bad[i].cfg, w, wlen, &m, &err);
        CU_ASSERT_NOT_EQUAL(st, RD_OK);
        if (!strstr(err.msg, bad[i].msg))
            fprintf(stderr, "\ncase %zu: %s\n", i, err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].msg));
        if (st == RD_OK)
            rd_model_destroy(m);
    }
    /* every truncation of the .cfg: an error or a smaller network, never a crash */
    size_t n = strlen(dns_tiny_cfg);
    for (size_t cut = 0; cut < n; cut += 7) {
        char *c = strndup(dns_tiny_cfg, cut);
        if (convert(c, w, wlen, &m, &err) == RD_OK)
            rd_model_destroy(m);
        free(c);
    }
    free(w);
}

static void test_detection(void)
{
    CU_ASSERT_EQUAL(rd_model_format_detect(dns_tiny_cfg, strlen(dns_tiny_cfg)), RD_FORMAT_DARKNET);
    CU_ASSERT_EQUAL(rd_model_format_detect("\n\n  [network]\n", 13), RD_FORMAT_DARKNET);
    CU_ASSERT_EQUAL(rd_model_format_detect("[convolutional]\n", 16), RD_FORMAT_UNKNOWN);
}

RD_TEST_REGISTER(register_darknet)
{
    RD_SUITE("darknet", {"tiny YOLO: names and shapes, weights 0.1 and 0.2", test_tiny_names_and_shapes},
             {"weights refused", test_weights_refused}, {"cfg refused", test_cfg_refused},
             {"detection", test_detection});
}

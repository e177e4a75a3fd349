/* small_convnet.h: the small float32 network the quantization tests build and save (tests only). */
#ifndef RD_TEST_SMALL_CONVNET_H
#define RD_TEST_SMALL_CONVNET_H

#include "random_inits.h"
#include "rknn_diag/simulator.h"

#include <CUnit/CUnit.h>
#include <stdbool.h>

/**
 * Saves to path x [1,2,6,6] -> Conv 3x3 pad 1 (+bias) -> Relu -> Conv 1x1 stride 2 (pad 1 when conv2_pad)
 * -> Flatten -> Gemm -> y [1,5], its weights drawn from rnd. exported_names: nodes and tensors named as a
 * PyTorch export names them ("/conv1/Conv", "/relu/Relu_output_0"), else short ("conv1", "r").
 */
static inline void rd_test_write_small_convnet(const char *path, float (*rnd)(void), bool conv2_pad,
                                               bool exported_names)
{
    static const char *const exported[] = {"/conv1/Conv", "/conv1/Conv_output_0", "/relu/Relu", "/relu/Relu_output_0",
                                           "/conv2/Conv", "/conv2/Conv_output_0", "/Flatten",   "/Flatten_output_0",
                                           "/fc/Gemm"};
    static const char *const short_names[] = {"conv1", "c1", "relu", "r", "conv2", "c2", "flat", "f", "fc"};
    const char *const *nm = exported_names ? exported : short_names;
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 2, 6, 6}, NULL);
    const int64_t side = conv2_pad ? 4 : 3; /* conv2's output side */
    const rd_test_init inits[] = {{"conv1.weight", 4, {3, 2, 3, 3}, 0.5f},
                                  {"conv1.bias", 1, {3}, 0.1f},
                                  {"conv2.weight", 4, {4, 3, 1, 1}, 0.7f},
                                  {"fc.weight", 2, {4 * side * side, 5}, 0.3f},
                                  {"fc.bias", 1, {5}, 0.1f}};
    rd_test_add_random_inits(b, inits, sizeof inits / sizeof inits[0], rnd);
    rd_onnx_node *n =
        rd_onnx_add_node(b, "Conv", nm[0], (const char *const[]){"x", "conv1.weight", "conv1.bias"}, 3, &nm[1], 1);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_node(b, "Relu", nm[2], &nm[1], 1, &nm[3], 1);
    n = rd_onnx_add_node(b, "Conv", nm[4], (const char *const[]){nm[3], "conv2.weight"}, 2, &nm[5], 1);
    rd_onnx_attr_ints(n, "strides", (const int64_t[]){2, 2}, 2);
    if (conv2_pad)
        rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_node(b, "Flatten", nm[6], &nm[5], 1, &nm[7], 1);
    rd_onnx_add_node(b, "Gemm", nm[8], (const char *const[]){nm[7], "fc.weight", "fc.bias"}, 3,
                     (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 2, (const int64_t[]){1, 5}, NULL);
    CU_ASSERT_EQUAL(rd_onnx_builder_save(b, path, NULL), RD_OK);
    rd_onnx_builder_destroy(b);
}

#endif

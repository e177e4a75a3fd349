/*
 * demo_model.c: the built-in demo, a small image classifier written with our own ONNX writer.
 *
 * It is built so that an accuracy analysis has something to find:
 *   - "amplified": a Mul by 32768 whose output passes 65504 (float16 overflow) before a Div undoes it;
 *   - "conv_outlier": a conv with one output channel whose weights are 200 times larger than the others,
 *     so per-tensor INT8 weight quantization flattens the other channels; that channel's bias is so
 *     negative that the Relu after it zeroes it, so the flattened channels carry the whole output and the
 *     loss shows in the cosine;
 *   - ordinary Conv/Relu/Clip/MaxPool/GlobalAveragePool/Gemm/Softmax layers around them.
 * Weights come from a fixed linear congruential sequence: the file is identical on every machine.
 */
#include "demo_model.h"

#include "tensor_dump.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct lcg {
    uint64_t state;
} lcg;

/* Uniform in [-1, 1). */
static float lcg_next(lcg *g)
{
    g->state = g->state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(g->state >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f;
}

/* outlier_channel >= 0 multiplies that output channel (dims[0]) by 200: a per-tensor int8 scale then
   flattens every other channel to a few codes. */
static rd_status add_weights_outlier(rd_onnx_builder *b, lcg *g, const char *name, int rank, const int64_t *dims,
                                     float scale, int outlier_channel, rd_error *err)
{
    rd_tensor t;
    rd_status st = rd_tensor_alloc(&t, RD_DT_F32, rank, dims, err);
    if (st != RD_OK)
        return st;
    float *w = t.data;
    int64_t per_channel = rd_tensor_numel(&t) / dims[0];
    for (int64_t i = 0; i < rd_tensor_numel(&t); i++)
        w[i] = i / per_channel == outlier_channel && rank == 1
                   ? -1000.0f /* a bias: the Relu after it zeroes the channel */
                   : lcg_next(g) * scale * (i / per_channel == outlier_channel ? 200.0f : 1.0f);
    st = rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
    rd_tensor_fini(&t);
    return st;
}

static rd_status add_weights(rd_onnx_builder *b, lcg *g, const char *name, int rank, const int64_t *dims, float scale,
                             rd_error *err)
{
    return add_weights_outlier(b, g, name, rank, dims, scale, -1, err);
}

static rd_status add_scalar(rd_onnx_builder *b, const char *name, float v)
{
    rd_tensor t = {.dtype = RD_DT_F32, .rank = 0, .data = &v};
    return rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
}

static void conv(rd_onnx_builder *b, const char *name, const char *x, const char *w, const char *bias, const char *y,
                 int64_t pad, int64_t group)
{
    rd_onnx_node *n =
        rd_onnx_add_node(b, "Conv", name, (const char *const[]){x, w, bias}, 3, (const char *const[]){y}, 1);
    rd_onnx_attr_ints(n, "kernel_shape", (const int64_t[]){3, 3}, 2);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){pad, pad, pad, pad}, 4);
    rd_onnx_attr_int(n, "group", group);
}

static void unary(rd_onnx_builder *b, const char *op, const char *name, const char *x, const char *y)
{
    rd_onnx_add_node(b, op, name, (const char *const[]){x}, 1, (const char *const[]){y}, 1);
}

static void binary(rd_onnx_builder *b, const char *op, const char *name, const char *x, const char *c, const char *y)
{
    rd_onnx_add_node(b, op, name, (const char *const[]){x, c}, 2, (const char *const[]){y}, 1);
}

static rd_status build(rd_onnx_builder *b, rd_error *err)
{
    lcg g = {20261202};
    rd_onnx_set_graph_name(b, "rknn_diag_demo");
    rd_onnx_add_input(b, "image", RD_DT_F32, 4, (const int64_t[]){1, 3, 32, 32}, NULL);
    add_weights(b, &g, "conv1.w", 4, (const int64_t[]){8, 3, 3, 3}, 0.4f, err);
    add_weights(b, &g, "conv1.b", 1, (const int64_t[]){8}, 0.1f, err);
    add_weights(b, &g, "dw.w", 4, (const int64_t[]){8, 1, 3, 3}, 0.5f, err);
    add_weights(b, &g, "dw.b", 1, (const int64_t[]){8}, 0.1f, err);
    add_weights_outlier(b, &g, "conv_outlier.w", 4, (const int64_t[]){16, 8, 3, 3}, 0.15f, 3, err);
    add_weights_outlier(b, &g, "conv_outlier.b", 1, (const int64_t[]){16}, 0.05f, 3, err);
    add_weights(b, &g, "fc.w", 2, (const int64_t[]){10, 16}, 0.5f, err);
    add_weights(b, &g, "fc.b", 1, (const int64_t[]){10}, 0.1f, err);
    add_scalar(b, "gain", 32768.0f);
    add_scalar(b, "clip_min", 0.0f);
    add_scalar(b, "clip_max", 6.0f);
    conv(b, "conv1", "image", "conv1.w", "conv1.b", "conv1_out", 1, 1);
    unary(b, "Relu", "relu1", "conv1_out", "relu1_out");
    binary(b, "Mul", "amplify", "relu1_out", "gain", "amplified");
    binary(b, "Div", "attenuate", "amplified", "gain", "restored");
    conv(b, "dwconv", "restored", "dw.w", "dw.b", "dw_out", 1, 8);
    rd_onnx_add_node(b, "Clip", "relu6", (const char *const[]){"dw_out", "clip_min", "clip_max"}, 3,
                     (const char *const[]){"relu6_out"}, 1);
    rd_onnx_node *pool = rd_onnx_add_node(b, "MaxPool", "pool", (const char *const[]){"relu6_out"}, 1,
                                          (const char *const[]){"pool_out"}, 1);
    rd_onnx_attr_ints(pool, "kernel_shape", (const int64_t[]){2, 2}, 2);
    rd_onnx_attr_ints(pool, "strides", (const int64_t[]){2, 2}, 2);
    conv(b, "conv_outlier", "pool_out", "conv_outlier.w", "conv_outlier.b", "outlier_out", 1, 1);
    unary(b, "Relu", "relu2", "outlier_out", "relu2_out");
    unary(b, "GlobalAveragePool", "gap", "relu2_out", "gap_out");
    rd_onnx_node *flat = rd_onnx_add_node(b, "Flatten", "flatten", (const char *const[]){"gap_out"}, 1,
                                          (const char *const[]){"features"}, 1);
    rd_onnx_attr_int(flat, "axis", 1);
    rd_onnx_node *fc = rd_onnx_add_node(b, "Gemm", "fc", (const char *const[]){"features", "fc.w", "fc.b"}, 3,
                                        (const char *const[]){"logits"}, 1);
    rd_onnx_attr_int(fc, "transB", 1);
    rd_onnx_add_node(b, "Softmax", "softmax", (const char *const[]){"logits"}, 1, (const char *const[]){"probs"}, 1);
    rd_onnx_add_output(b, "probs", RD_DT_F32, 2, (const int64_t[]){1, 10}, NULL);
    return rd_onnx_builder_status(b, err);
}

rd_status an_demo_model_write(const char *path, rd_error *err)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    if (!b)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_status st = build(b, err);
    if (st == RD_OK)
        st = rd_onnx_builder_save(b, path, err);
    rd_onnx_builder_destroy(b);
    return st;
}

rd_status an_demo_input_write(const char *path, rd_error *err)
{
    rd_tensor t;
    rd_status st = rd_tensor_alloc(&t, RD_DT_F32, 4, (const int64_t[]){1, 3, 32, 32}, err);
    if (st != RD_OK)
        return st;
    /* a smooth colour pattern with an edge: something a classifier's first layers respond to */
    float *x = t.data;
    for (int c = 0; c < 3; c++)
        for (int h = 0; h < 32; h++)
            for (int w = 0; w < 32; w++)
                x[(c * 32 + h) * 32 + w] =
                    0.5f * sinf(0.3f * (float)(h + 2 * c)) + (w > 16 ? 0.8f : -0.2f) + 0.05f * (float)c;
    st = rd_npy_save(path, &t, err);
    rd_tensor_fini(&t);
    return st;
}

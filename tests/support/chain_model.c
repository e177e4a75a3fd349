/* chain_model.c: the chain of chain_model.h. */
#include "chain_model.h"

#include <stdio.h>
#include <string.h>

float rd_chain_constant(int i)
{
    return 0.001f * (float)(i - 4);
}

rd_onnx_builder *rd_chain_model(long n)
{
    static const char *const ops[3] = {"Add", "Relu", "Identity"};
    rd_onnx_builder *b = rd_onnx_builder_create(8, 17);
    const int64_t dims[2] = {1, RD_CHAIN_WIDTH};
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, dims, NULL);
    float c[RD_CHAIN_WIDTH];
    for (int i = 0; i < RD_CHAIN_WIDTH; i++)
        c[i] = rd_chain_constant(i);
    rd_tensor ct = {.dtype = RD_DT_F32, .rank = 2, .dims = {1, RD_CHAIN_WIDTH}, .data = c};
    rd_onnx_add_initializer(b, "c", &ct, RD_ONNX_RAW);
    char prev[48] = "x", out[48], node[48];
    for (long i = 0; i < n; i++) {
        snprintf(out, sizeof out, i + 1 == n ? "y" : "block_%ld/out", i);
        snprintf(node, sizeof node, "block_%ld/%s", i, ops[i % 3]);
        if (i % 3 == 0)
            rd_onnx_add_node(b, "Add", node, (const char *const[]){prev, "c"}, 2, (const char *const[]){out}, 1);
        else
            rd_onnx_add_node(b, ops[i % 3], node, (const char *const[]){prev}, 1, (const char *const[]){out}, 1);
        memcpy(prev, out, sizeof prev);
    }
    rd_onnx_add_output(b, "y", RD_DT_F32, 2, dims, NULL);
    return b;
}

void rd_chain_expected(long n, const float *x, float *y)
{
    memcpy(y, x, RD_CHAIN_WIDTH * sizeof *y);
    for (long i = 0; i < n; i++)
        for (int k = 0; k < RD_CHAIN_WIDTH && i % 3 != 2; k++)
            y[k] = i % 3 == 0 ? y[k] + rd_chain_constant(k) : (y[k] > 0.0f ? y[k] : 0.0f);
}

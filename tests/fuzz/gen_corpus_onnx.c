/*
 * gen_corpus_onnx.c: writes the builder-made seeds of tests/fuzz/corpus/onnx/ (small valid models
 * covering every loader path: raw and typed storage, Constant forms, IR 3 inputs, attributes of every
 * type, symbolic dims, external data). Not part of the build; to regenerate after a builder change:
 *
 *     cc -Isimulator/include tests/fuzz/gen_corpus_onnx.c build/simulator/librd_simulator.a \
 *        $(pkg-config --libs libprotobuf-c openblas libpng libjpeg yaml-0.1 libcjson) -lm -o /tmp/gen \
 *        && /tmp/gen tests/fuzz/corpus/onnx
 */
#include "rknn_diag/simulator.h"

#include <stdio.h>
#include <stdlib.h>

static int save(rd_onnx_builder *b, const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    rd_error err;
    rd_status st = rd_onnx_builder_save(b, path, &err);
    rd_onnx_builder_destroy(b);
    if (st != RD_OK)
        fprintf(stderr, "%s: %s\n", path, err.msg);
    return st != RD_OK;
}

static void fill(rd_tensor *t, rd_dtype dt, int rank, const int64_t *dims)
{
    rd_tensor_alloc(t, dt, rank, dims, NULL);
    int64_t n = rd_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        if (dt == RD_DT_F32)
            ((float *)t->data)[i] = (float)((i * 7) % 11) * 0.125f - 0.5f;
        else if (dt == RD_DT_F16)
            ((uint16_t *)t->data)[i] = rd_f32_to_f16((float)i * 0.25f);
        else if (dt == RD_DT_I64)
            ((int64_t *)t->data)[i] = i - 2;
        else if (dt == RD_DT_I8)
            ((int8_t *)t->data)[i] = (int8_t)(i * 13 - 60);
    }
}

static int conv_relu(const char *dir)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 8, 8}, NULL);
    rd_tensor w, bias;
    fill(&w, RD_DT_F32, 4, (const int64_t[]){4, 3, 3, 3});
    fill(&bias, RD_DT_F32, 1, (const int64_t[]){4});
    rd_onnx_add_initializer(b, "w", &w, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "b", &bias, RD_ONNX_TYPED);
    rd_onnx_node *n =
        rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w", "b"}, 3, (const char *const[]){"c"}, 1);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_attr_ints(n, "kernel_shape", (const int64_t[]){3, 3}, 2);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"c"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 4, (const int64_t[]){1, 4, 8, 8}, NULL);
    rd_tensor_fini(&w);
    rd_tensor_fini(&bias);
    return save(b, dir, "conv_relu.onnx");
}

static int constants(const char *dir)
{
    rd_onnx_builder *b = rd_onnx_builder_create(7, 12);
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, (const int64_t[]){-1, 6}, (const char *const[]){"N", NULL});
    rd_tensor t;
    fill(&t, RD_DT_F32, 1, (const int64_t[]){6});
    rd_onnx_attr_tensor(rd_onnx_add_node(b, "Constant", "k", NULL, 0, (const char *const[]){"k"}, 1), "value", &t,
                        RD_ONNX_RAW);
    rd_onnx_attr_float(rd_onnx_add_node(b, "Constant", "kf", NULL, 0, (const char *const[]){"kf"}, 1), "value_float",
                       2.0f);
    rd_onnx_attr_ints(rd_onnx_add_node(b, "Constant", "shape", NULL, 0, (const char *const[]){"shape"}, 1),
                      "value_ints", (const int64_t[]){-1, 3, 2}, 3);
    rd_onnx_add_node(b, "Add", "add", (const char *const[]){"x", "k"}, 2, (const char *const[]){"a"}, 1);
    rd_onnx_add_node(b, "Mul", "mul", (const char *const[]){"a", "kf"}, 2, (const char *const[]){"m"}, 1);
    rd_onnx_add_node(b, "Reshape", "reshape", (const char *const[]){"m", "shape"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 3, (const int64_t[]){-1, 3, 2}, (const char *const[]){"N", NULL, NULL});
    rd_tensor_fini(&t);
    return save(b, dir, "constants.onnx");
}

static int ir3_typed(const char *dir)
{
    rd_onnx_builder *b = rd_onnx_builder_create(3, 8);
    rd_tensor h, q;
    fill(&h, RD_DT_F16, 2, (const int64_t[]){2, 3});
    fill(&q, RD_DT_I8, 1, (const int64_t[]){3});
    rd_onnx_add_input(b, "x", RD_DT_F16, 2, (const int64_t[]){2, 3}, NULL);
    rd_onnx_add_input(b, "h", RD_DT_F16, 2, (const int64_t[]){2, 3}, NULL);
    rd_onnx_add_initializer(b, "h", &h, RD_ONNX_TYPED);
    rd_onnx_add_initializer(b, "q", &q, RD_ONNX_TYPED);
    rd_onnx_add_node(b, "Sub", "sub", (const char *const[]){"x", "h"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F16, 2, (const int64_t[]){2, 3}, NULL);
    rd_tensor_fini(&h);
    rd_tensor_fini(&q);
    return save(b, dir, "ir3_typed.onnx");
}

static int attributes(const char *dir)
{
    rd_onnx_builder *b = rd_onnx_builder_create(9, 17);
    rd_onnx_add_opset(b, "com.microsoft", 1);
    rd_tensor t;
    fill(&t, RD_DT_I64, 1, (const int64_t[]){2});
    rd_onnx_add_input(b, "x", RD_DT_F32, 3, NULL, (const char *const[]){"a", "b", "c"});
    rd_onnx_node *n =
        rd_onnx_add_node(b, "Custom", "custom", (const char *const[]){"x", NULL}, 2, (const char *const[]){"y", ""}, 2);
    rd_onnx_node_set_domain(n, "com.microsoft");
    rd_onnx_attr_int(n, "i", 3);
    rd_onnx_attr_float(n, "f", 0.5f);
    rd_onnx_attr_string(n, "s", "mode");
    rd_onnx_attr_ints(n, "ints", (const int64_t[]){1, 2, 3}, 3);
    rd_onnx_attr_floats(n, "floats", (const float[]){1.5f}, 1);
    rd_onnx_attr_strings(n, "strings", (const char *const[]){"a", "b"}, 2);
    rd_onnx_attr_tensor(n, "t", &t, RD_ONNX_TYPED);
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    rd_onnx_add_value_info(b, "y", RD_DT_F32, 1, (const int64_t[]){-1}, NULL);
    rd_tensor_fini(&t);
    return save(b, dir, "attributes.onnx");
}

static int external(const char *dir)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_initializer_external(b, "w", RD_DT_F32, 1, (const int64_t[]){4}, "weights.bin", 0, 16);
    rd_onnx_add_node(b, "Identity", "id", (const char *const[]){"w"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 1, (const int64_t[]){4}, NULL);
    return save(b, dir, "external.onnx");
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    return conv_relu(dir) | constants(dir) | ir3_typed(dir) | attributes(dir) | external(dir);
}

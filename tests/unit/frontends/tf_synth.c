/*
 * tf_synth.c: the GraphDef writer and the test graph (tf_synth.h).
 */
#include "tf_synth.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static void put(tgs_buf *b, const void *d, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void varint(tgs_buf *b, uint64_t v)
{
    uint8_t t[10];
    int n = 0;
    do {
        t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    put(b, t, (size_t)n);
}

static void tag(tgs_buf *b, int field, int wire)
{
    varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

static void field_varint(tgs_buf *b, int field, int64_t v)
{
    tag(b, field, 0);
    varint(b, (uint64_t)v);
}

static void field_bytes(tgs_buf *b, int field, const void *d, size_t n)
{
    tag(b, field, 2);
    varint(b, n);
    put(b, d, n);
}

/* Appends sub as a length-delimited field and frees it. */
static void field_msg(tgs_buf *b, int field, tgs_buf *sub)
{
    b->oom |= sub->oom;
    field_bytes(b, field, sub->p, sub->n);
    free(sub->p);
    memset(sub, 0, sizeof *sub);
}

void tgs_node(tgs_buf *node, const char *name, const char *op, const char *const *inputs, int n_inputs)
{
    memset(node, 0, sizeof *node);
    field_bytes(node, 1, name, strlen(name));
    field_bytes(node, 2, op, strlen(op));
    for (int i = 0; i < n_inputs; i++)
        field_bytes(node, 3, inputs[i], strlen(inputs[i]));
}

/* NodeDef field 5: an AttrEntry {key = 1, value = 2 (AttrValue)}. */
static void attr(tgs_buf *node, const char *key, tgs_buf *value)
{
    tgs_buf e = {0};
    field_bytes(&e, 1, key, strlen(key));
    field_msg(&e, 2, value);
    field_msg(node, 5, &e);
}

void tgs_attr_s(tgs_buf *node, const char *key, const char *v)
{
    tgs_buf a = {0};
    field_bytes(&a, 2, v, strlen(v));
    attr(node, key, &a);
}

/* An attribute whose AttrValue is the one varint field given (i = 3, b = 5, type = 6). */
static void attr_varint(tgs_buf *node, const char *key, int field, int64_t v)
{
    tgs_buf a = {0};
    field_varint(&a, field, v);
    attr(node, key, &a);
}

void tgs_attr_i(tgs_buf *node, const char *key, int64_t v)
{
    attr_varint(node, key, 3, v);
}

void tgs_attr_f(tgs_buf *node, const char *key, float v)
{
    tgs_buf a = {0};
    tag(&a, 4, 5);
    put(&a, &v, 4);
    attr(node, key, &a);
}

void tgs_attr_b(tgs_buf *node, const char *key, bool v)
{
    attr_varint(node, key, 5, v);
}

void tgs_attr_type(tgs_buf *node, const char *key, int dtype)
{
    attr_varint(node, key, 6, dtype);
}

void tgs_attr_ints(tgs_buf *node, const char *key, const int64_t *v, int n)
{
    tgs_buf packed = {0}, list = {0}, a = {0};
    for (int i = 0; i < n; i++)
        varint(&packed, (uint64_t)v[i]);
    field_msg(&list, 3, &packed); /* ListValue.i, packed */
    field_msg(&a, 1, &list);
    attr(node, key, &a);
}

static void shape(tgs_buf *out, const int64_t *dims, int rank)
{
    for (int i = 0; i < rank; i++) {
        tgs_buf d = {0};
        field_varint(&d, 1, dims[i]);
        field_msg(out, 2, &d);
    }
}

void tgs_attr_shape(tgs_buf *node, const char *key, const int64_t *dims, int rank)
{
    tgs_buf s = {0}, a = {0};
    shape(&s, dims, rank);
    field_msg(&a, 7, &s);
    attr(node, key, &a);
}

void tgs_attr_tensor(tgs_buf *node, const char *key, int dtype, const int64_t *dims, int rank, const void *data,
                     bool as_bytes)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    tgs_attr_tensor_n(node, key, dtype, dims, rank, data, n, as_bytes);
}

void tgs_attr_tensor_n(tgs_buf *node, const char *key, int dtype, const int64_t *dims, int rank, const void *data,
                       size_t n, bool as_bytes)
{
    tgs_buf t = {0}, s = {0}, vals = {0}, a = {0};
    field_varint(&t, 1, dtype);
    shape(&s, dims, rank);
    field_msg(&t, 2, &s);
    if (as_bytes) {
        field_bytes(&t, 4, data, n * 4);
    } else if (dtype == TGS_FLOAT) {
        put(&vals, data, n * 4);
        field_msg(&t, 5, &vals); /* float_val, packed */
    } else {
        for (size_t i = 0; i < n; i++)
            varint(&vals, (uint64_t)(int64_t)((const int32_t *)data)[i]);
        field_msg(&t, 7, &vals); /* int_val, packed */
    }
    field_msg(&a, 8, &t);
    attr(node, key, &a);
}

void tgs_add(tgs_buf *graph, tgs_buf *node)
{
    field_msg(graph, 1, node);
}

/* A Const node of dtype with the tensor value (tensor_content bytes when as_bytes). */
static void add_const(tgs_buf *graph, const char *name, int dtype, const int64_t *dims, int rank, const void *data,
                      bool as_bytes)
{
    tgs_buf n;
    tgs_node(&n, name, "Const", NULL, 0);
    tgs_attr_type(&n, "dtype", dtype);
    tgs_attr_tensor(&n, "value", dtype, dims, rank, data, as_bytes);
    tgs_add(graph, &n);
}

void tgs_placeholder_f32(tgs_buf *graph, const char *name, const int64_t *dims, int rank)
{
    tgs_buf n;
    tgs_node(&n, name, "Placeholder", NULL, 0);
    tgs_attr_type(&n, "dtype", TGS_FLOAT);
    tgs_attr_shape(&n, "shape", dims, rank);
    tgs_add(graph, &n);
}

void tgs_const_f32(tgs_buf *graph, const char *name, const int64_t *dims, int rank, const float *data)
{
    add_const(graph, name, TGS_FLOAT, dims, rank, data, rank > 1);
}

void tgs_const_i32(tgs_buf *graph, const char *name, const int32_t *data, int n)
{
    add_const(graph, name, TGS_INT32, (const int64_t[]){n}, 1, data, false);
}

uint8_t *tgs_finish(tgs_buf *graph, size_t *len)
{
    tgs_buf v = {0};
    field_varint(&v, 1, 27); /* versions.producer */
    field_msg(graph, 4, &v);
    if (graph->oom) {
        free(graph->p);
        return NULL;
    }
    *len = graph->n;
    return graph->p;
}

void tgs_test_weights(uint32_t seed, float *out)
{
    for (int i = 0; i < TGS_TEST_WEIGHTS; i++) {
        seed = seed * 1664525u + 1013904223u;
        out[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
    }
    for (int i = 0; i < 4; i++) {
        out[112 + i] += 1.0f; /* BatchNorm scale near 1 */
        out[124 + i] += 1.0f; /* variance positive */
    }
}

#define IN(...) (const char *const[]){__VA_ARGS__}, (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

static void op2d(tgs_buf *n, const char *pad, int64_t s)
{
    tgs_attr_s(n, "padding", pad);
    tgs_attr_ints(n, "strides", (const int64_t[]){1, s, s, 1}, 4);
    tgs_attr_s(n, "data_format", "NHWC");
}

uint8_t *tgs_test_graph(uint32_t seed, size_t *len)
{
    float w[TGS_TEST_WEIGHTS];
    tgs_test_weights(seed, w);
    tgs_buf g = {0}, n;
    tgs_placeholder_f32(&g, "input", (const int64_t[]){1, 8, 8, 3}, 4);
    tgs_const_f32(&g, "conv1/weights", (const int64_t[]){3, 3, 3, 4}, 4, w);
    tgs_node(&n, "conv1/weights/read", "Identity", IN("conv1/weights"));
    tgs_add(&g, &n);
    tgs_node(&n, "conv1/Conv2D", "Conv2D", IN("input", "conv1/weights/read"));
    op2d(&n, "SAME", 1);
    tgs_add(&g, &n);
    tgs_const_f32(&g, "conv1/biases", (const int64_t[]){4}, 1, w + 108);
    tgs_node(&n, "conv1/BiasAdd", "BiasAdd", IN("conv1/Conv2D", "conv1/biases"));
    tgs_add(&g, &n);
    static const char *const bn[4] = {"bn/gamma", "bn/beta", "bn/moving_mean", "bn/moving_variance"};
    for (int i = 0; i < 4; i++)
        tgs_const_f32(&g, bn[i], (const int64_t[]){4}, 1, w + 112 + 4 * i);
    tgs_node(&n, "bn/FusedBatchNormV3", "FusedBatchNormV3", IN("conv1/BiasAdd", bn[0], bn[1], bn[2], bn[3], "^input"));
    tgs_attr_f(&n, "epsilon", 0.001f);
    tgs_attr_b(&n, "is_training", false);
    tgs_attr_s(&n, "data_format", "NHWC");
    tgs_add(&g, &n);
    tgs_node(&n, "bn/Relu6", "Relu6", IN("bn/FusedBatchNormV3:0"));
    tgs_add(&g, &n);
    tgs_const_f32(&g, "dw/weights", (const int64_t[]){3, 3, 4, 1}, 4, w + 128);
    tgs_node(&n, "dw/depthwise", "DepthwiseConv2dNative", IN("bn/Relu6", "dw/weights"));
    op2d(&n, "SAME", 2);
    tgs_add(&g, &n);
    tgs_node(&n, "dw/Relu", "Relu", IN("dw/depthwise"));
    tgs_add(&g, &n);
    tgs_node(&n, "pool", "MaxPool", IN("dw/Relu"));
    op2d(&n, "VALID", 2);
    tgs_attr_ints(&n, "ksize", (const int64_t[]){1, 2, 2, 1}, 4);
    tgs_add(&g, &n);
    tgs_node(&n, "avg", "AvgPool", IN("dw/Relu"));
    op2d(&n, "SAME", 1);
    tgs_attr_ints(&n, "ksize", (const int64_t[]){1, 3, 3, 1}, 4);
    tgs_add(&g, &n);
    tgs_const_i32(&g, "up/size", (const int32_t[]){4, 4}, 2);
    tgs_node(&n, "up", "ResizeBilinear", IN("pool", "up/size"));
    tgs_attr_b(&n, "half_pixel_centers", true);
    tgs_add(&g, &n);
    tgs_node(&n, "sum", "AddV2", IN("up", "avg"));
    tgs_add(&g, &n);
    tgs_node(&n, "cat/axis", "Const", NULL, 0);
    tgs_attr_tensor(&n, "value", TGS_INT32, NULL, 0, (const int32_t[]){3}, false);
    tgs_add(&g, &n);
    tgs_node(&n, "cat", "ConcatV2", IN("sum", "dw/Relu", "cat/axis"));
    tgs_attr_i(&n, "N", 2);
    tgs_add(&g, &n);
    tgs_const_i32(&g, "gap/axes", (const int32_t[]){1, 2}, 2);
    tgs_node(&n, "gap", "Mean", IN("cat", "gap/axes"));
    tgs_attr_b(&n, "keep_dims", false);
    tgs_add(&g, &n);
    tgs_const_i32(&g, "flat/shape", (const int32_t[]){1, 16}, 2);
    tgs_node(&n, "flat", "Reshape", IN("pool", "flat/shape"));
    tgs_add(&g, &n);
    tgs_const_f32(&g, "fc/weights", (const int64_t[]){16, 5}, 2, w + 164);
    tgs_node(&n, "fc/MatMul", "MatMul", IN("flat", "fc/weights"));
    tgs_add(&g, &n);
    tgs_const_f32(&g, "fc/biases", (const int64_t[]){5}, 1, w + 244);
    tgs_node(&n, "fc/BiasAdd", "BiasAdd", IN("fc/MatMul", "fc/biases"));
    tgs_add(&g, &n);
    tgs_node(&n, "probs", "Softmax", IN("fc/BiasAdd"));
    tgs_add(&g, &n);
    tgs_node(&n, "pad/paddings", "Const", NULL, 0);
    tgs_attr_tensor(&n, "value", TGS_INT32, (const int64_t[]){4, 2}, 2, (const int32_t[]){0, 0, 1, 1, 2, 2, 0, 0},
                    true);
    tgs_add(&g, &n);
    tgs_node(&n, "padded", "Pad", IN("input", "pad/paddings"));
    tgs_add(&g, &n);
    tgs_const_i32(&g, "chmax/axes", (const int32_t[]){3}, 1);
    tgs_node(&n, "chmax", "Max", IN("padded", "chmax/axes"));
    tgs_attr_b(&n, "keep_dims", true);
    tgs_add(&g, &n);
    tgs_node(&n, "squeezed", "Squeeze", IN("chmax"));
    tgs_attr_ints(&n, "squeeze_dims", (const int64_t[]){0, 3}, 2);
    tgs_add(&g, &n);
    return tgs_finish(&g, len);
}

uint8_t *tgs_small_graph(size_t *len)
{
    static const float w[2 * 2 * 2 * 3] = {0.5f,  -0.25f, 1,    0.75f,  -1,    0.125f, 0.5f,  0.5f,
                                           -0.5f, 0.25f,  2,    -0.75f, 0.3f,  0.1f,   -0.2f, 0.6f,
                                           0.9f,  -0.4f,  0.2f, 0.7f,   -0.1f, 0.05f,  1.5f,  -0.3f};
    tgs_buf g = {0}, n;
    tgs_placeholder_f32(&g, "x", (const int64_t[]){1, 2, 6, 6}, 4);
    tgs_const_f32(&g, "k", (const int64_t[]){2, 2, 2, 3}, 4, w);
    tgs_node(&n, "conv", "Conv2D", IN("x", "k"));
    tgs_attr_s(&n, "padding", "VALID");
    tgs_attr_s(&n, "data_format", "NCHW");
    tgs_attr_ints(&n, "strides", (const int64_t[]){1, 1, 1, 1}, 4);
    tgs_attr_ints(&n, "dilations", (const int64_t[]){1, 1, 2, 2}, 4); /* 1x3x4x4 */
    tgs_add(&g, &n);
    tgs_const_f32(&g, "b", (const int64_t[]){3}, 1, (const float[]){0.1f, -0.2f, 0.3f});
    tgs_node(&n, "bias", "BiasAdd", IN("conv", "b"));
    tgs_attr_s(&n, "data_format", "NCHW");
    tgs_add(&g, &n);
    tgs_node(&n, "leaky", "LeakyRelu", IN("bias"));
    tgs_attr_f(&n, "alpha", 0.1f);
    tgs_add(&g, &n);
    tgs_node(&n, "mp/paddings", "Const", NULL, 0);
    tgs_attr_tensor(&n, "value", TGS_INT32, (const int64_t[]){4, 2}, 2, (const int32_t[]){0, 0, 0, 0, 1, 1, 1, 1},
                    false);
    tgs_add(&g, &n);
    tgs_node(&n, "mp", "MirrorPad", IN("leaky", "mp/paddings"));
    tgs_attr_s(&n, "mode", "REFLECT");
    tgs_add(&g, &n); /* 1x3x6x6 */
    tgs_const_i32(&g, "perm", (const int32_t[]){0, 2, 3, 1}, 4);
    tgs_node(&n, "nhwc", "Transpose", IN("mp", "perm"));
    tgs_add(&g, &n);
    tgs_const_i32(&g, "size", (const int32_t[]){3, 3}, 2);
    tgs_node(&n, "near", "ResizeNearestNeighbor", IN("nhwc", "size"));
    tgs_attr_b(&n, "align_corners", true);
    tgs_add(&g, &n); /* 1x3x3x3 */
    tgs_node(&n, "sq", "Square", IN("near"));
    tgs_add(&g, &n);
    tgs_node(&n, "rs", "Rsqrt", IN("sq"));
    tgs_add(&g, &n);
    tgs_const_i32(&g, "ax", (const int32_t[]){0}, 1);
    tgs_node(&n, "ex", "ExpandDims", IN("rs", "ax"));
    tgs_add(&g, &n); /* 1x1x3x3x3 */
    tgs_const_i32(&g, "sum/axes", (const int32_t[]){4}, 1);
    tgs_node(&n, "out", "Sum", IN("ex", "sum/axes"));
    tgs_attr_b(&n, "keep_dims", false);
    tgs_add(&g, &n); /* 1x1x3x3 */
    return tgs_finish(&g, len);
}

/* An int32 Const of rank 0 (a scalar) or 1. */
static void const_i32(tgs_buf *g, const char *name, int rank, const int32_t *v, int n)
{
    tgs_buf c;
    tgs_node(&c, name, "Const", NULL, 0);
    tgs_attr_tensor(&c, "value", TGS_INT32, (const int64_t[]){n}, rank, v, false);
    tgs_attr_type(&c, "dtype", TGS_INT32);
    tgs_add(g, &c);
}

/* A node of op reading ins, with its type attribute T. */
static void op_node(tgs_buf *g, const char *name, const char *op, const char *const *in, int n_in, int t)
{
    tgs_buf n;
    tgs_node(&n, name, op, in, n_in);
    if (t)
        tgs_attr_type(&n, "T", t);
    tgs_add(g, &n);
}

/* A StridedSlice of x: bes holds begin, end and strides (n each); masks: begin, end, ellipsis, new axis, shrink. */
static void strided(tgs_buf *g, const char *name, const char *x, const int32_t *bes, int n, const int64_t masks[5])
{
    char b[64], e[64], s[64];
    snprintf(b, sizeof b, "%s/begin", name);
    snprintf(e, sizeof e, "%s/end", name);
    snprintf(s, sizeof s, "%s/strides", name);
    const_i32(g, b, 1, bes, n);
    const_i32(g, e, 1, bes + n, n);
    const_i32(g, s, 1, bes + 2 * n, n);
    tgs_buf nd;
    tgs_node(&nd, name, "StridedSlice", IN(x, b, e, s));
    static const char *const keys[5] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"};
    for (int i = 0; i < 5; i++)
        if (masks[i])
            tgs_attr_i(&nd, keys[i], masks[i]);
    tgs_add(g, &nd);
}

uint8_t *tgs_shape_graph(size_t *len)
{
    tgs_buf g = {0}, n;
    tgs_placeholder_f32(&g, "x", (const int64_t[]){-1, 4, 6, 3}, 4);
    op_node(&g, "s", "Shape", IN("x"), TGS_FLOAT);
    strided(&g, "batch", "s", (const int32_t[]){0, 1, 1}, 1, (const int64_t[]){0, 0, 0, 0, 1}); /* s[0] */
    strided(&g, "hw", "s", (const int32_t[]){1, 3, 1}, 1, (const int64_t[]){0, 0, 0, 0, 0});    /* s[1:3] */
    const_i32(&g, "hwprod/axes", 1, (const int32_t[]){0}, 1);
    op_node(&g, "hwprod", "Prod", IN("hw", "hwprod/axes"), TGS_INT32);
    const_i32(&g, "three", 0, (const int32_t[]){3}, 1);
    tgs_node(&n, "shp", "Pack", IN("batch", "hwprod", "three"));
    tgs_attr_i(&n, "N", 3);
    tgs_add(&g, &n);
    op_node(&g, "r", "Reshape", IN("x", "shp"), TGS_FLOAT); /* [B, 24, 3] */
    const_i32(&g, "sp/sizes", 1, (const int32_t[]){10, -1}, 2);
    const_i32(&g, "one", 0, (const int32_t[]){1}, 1);
    tgs_node(&n, "sp", "SplitV", IN("r", "sp/sizes", "one"));
    tgs_attr_i(&n, "num_split", 2);
    tgs_add(&g, &n); /* [B,10,3], [B,14,3] */
    const_i32(&g, "two", 0, (const int32_t[]){2}, 1);
    tgs_node(&n, "split", "Split", IN("two", "sp:1"));
    tgs_attr_i(&n, "num_split", 3);
    tgs_add(&g, &n); /* 3 x [B,14,1] */
    tgs_node(&n, "un", "Unpack", IN("r"));
    tgs_attr_i(&n, "num", 2);
    tgs_attr_i(&n, "axis", 0);
    tgs_add(&g, &n); /* 2 x [24,3] */
    tgs_node(&n, "fill/dims", "Pack", IN("batch", "one", "three"));
    tgs_add(&g, &n);
    tgs_const_f32(&g, "half", NULL, 0, (const float[]){0.5f});
    op_node(&g, "fill", "Fill", IN("fill/dims", "half"), TGS_FLOAT); /* [B,1,3] of 0.5 */
    op_node(&g, "add", "AddV2", IN("sp", "fill"), TGS_FLOAT);
    const_i32(&g, "zero", 0, (const int32_t[]){0}, 1);
    op_node(&g, "rng", "Range", IN("zero", "three", "one"), 0);
    tgs_node(&n, "rng_f", "Cast", IN("rng"));
    tgs_attr_type(&n, "SrcT", TGS_INT32);
    tgs_attr_type(&n, "DstT", TGS_FLOAT);
    tgs_add(&g, &n);
    op_node(&g, "mul", "Mul", IN("add", "rng_f"), TGS_FLOAT); /* out 0: [B,10,3] */
    const_i32(&g, "sl/begin", 1, (const int32_t[]){0, 1, 0, 0}, 4);
    const_i32(&g, "sl/size", 1, (const int32_t[]){-1, 2, -1, 2}, 4);
    op_node(&g, "sl", "Slice", IN("x", "sl/begin", "sl/size"), TGS_FLOAT);
    const_i32(&g, "tile/multiples", 1, (const int32_t[]){1, 1, 1, 2}, 4);
    op_node(&g, "tile", "Tile", IN("sl", "tile/multiples"), TGS_FLOAT); /* out 3: [B,2,6,4] */
    /* x[:, 1:-1, ..., ::-1] */
    strided(&g, "ss", "x", (const int32_t[]){0, 1, 0, 0, 0, -1, 0, 0, 1, 1, 1, -1}, 4,
            (const int64_t[]){9, 9, 4, 0, 0});
    /* x[0, newaxis, :, 2] */
    strided(&g, "ss2", "x", (const int32_t[]){0, 0, 0, 2, 1, 0, 0, 3, 1, 1, 1, 1}, 4, (const int64_t[]){4, 4, 0, 2, 9});
    const_i32(&g, "halve", 0, (const int32_t[]){2}, 1);
    op_node(&g, "hd", "FloorDiv", IN("hw", "halve"), TGS_INT32);
    tgs_node(&n, "half_dims", "Cast", IN("hd"));
    tgs_attr_type(&n, "DstT", TGS_FLOAT);
    tgs_add(&g, &n); /* out 6: [2, 3] */
    const_i32(&g, "g/indices", 1, (const int32_t[]){2, 0}, 2);
    op_node(&g, "g", "GatherV2", IN("x", "g/indices", "three"), TGS_FLOAT);
    op_node(&g, "idn", "IdentityN", IN("mul", "g"), 0);
    op_node(&g, "gr", "Relu", IN("idn:1"), TGS_FLOAT); /* out 7: [B,4,6,2] */
    return tgs_finish(&g, len);
}

/*
 * tf_synth.h: frozen TensorFlow GraphDefs for tests and fuzz seeds, written with a protobuf wire encoder of
 * its own (not the protobuf-c code the reader uses), field numbers from TensorFlow's graph, node_def,
 * attr_value, tensor and tensor_shape .proto files.
 */
#ifndef RD_TESTS_TF_SYNTH_H
#define RD_TESTS_TF_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Protobuf bytes under construction (oom set when an allocation failed: tgs_finish then returns NULL). */
typedef struct tgs_buf {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} tgs_buf;

enum { TGS_FLOAT = 1, TGS_INT32 = 3 };

/** Starts a NodeDef in node (name, op, inputs). */
void tgs_node(tgs_buf *node, const char *name, const char *op, const char *const *inputs, int n_inputs);
void tgs_attr_s(tgs_buf *node, const char *key, const char *v);
void tgs_attr_i(tgs_buf *node, const char *key, int64_t v);
void tgs_attr_f(tgs_buf *node, const char *key, float v);
void tgs_attr_b(tgs_buf *node, const char *key, bool v);
void tgs_attr_type(tgs_buf *node, const char *key, int dtype);
void tgs_attr_ints(tgs_buf *node, const char *key, const int64_t *v, int n);
/** A shape attribute (-1 for an unknown dim). */
void tgs_attr_shape(tgs_buf *node, const char *key, const int64_t *dims, int rank);
/** The value of a Const: float32 or int32 data; as_bytes writes tensor_content, else float_val / int_val. */
void tgs_attr_tensor(tgs_buf *node, const char *key, int dtype, const int64_t *dims, int rank, const void *data,
                     bool as_bytes);
/** As tgs_attr_tensor with n values whatever the shape says (for malformed constants). */
void tgs_attr_tensor_n(tgs_buf *node, const char *key, int dtype, const int64_t *dims, int rank, const void *data,
                       size_t n, bool as_bytes);
/** Appends the node to graph (field 1) and frees it. */
void tgs_add(tgs_buf *graph, tgs_buf *node);
/** A float Placeholder of the given shape (-1: a dimension left open). */
void tgs_placeholder_f32(tgs_buf *graph, const char *name, const int64_t *dims, int rank);
/** Convenience: a float32 Const node (tensor_content) and an int32 Const node (int_val). */
void tgs_const_f32(tgs_buf *graph, const char *name, const int64_t *dims, int rank, const float *data);
void tgs_const_i32(tgs_buf *graph, const char *name, const int32_t *data, int n);
/** The GraphDef bytes (versions.producer written), malloc'ed; graph is consumed. NULL when out of memory. */
uint8_t *tgs_finish(tgs_buf *graph, size_t *len);

/**
 * The test graph (NHWC, input "input" 1x8x8x3): Conv2D SAME + weights/read Identity + BiasAdd,
 * FusedBatchNormV3, Relu6, DepthwiseConv2dNative stride 2 SAME, Relu, MaxPool VALID, AvgPool SAME,
 * ResizeBilinear (half-pixel), AddV2, ConcatV2, Mean, Reshape, MatMul, BiasAdd, Softmax, Pad, Squeeze.
 * Outputs "gap" (1x8), "probs" (1x5) and "squeezed" (10x12: the channel maximum of the padded input).
 * Weights from seed. NULL when out of memory.
 */
uint8_t *tgs_test_graph(uint32_t seed, size_t *len);
/**
 * A second graph for the other options (no oracle: shapes only): input "x" 1x2x6x6 NCHW, Conv2D NCHW VALID with
 * dilations 2 + BiasAdd NCHW, LeakyRelu, MirrorPad REFLECT, Transpose to NHWC, ResizeNearestNeighbor
 * (align_corners), Square, Rsqrt, ExpandDims, Sum; output "out" (1x1x3x3). NULL when out of
 * memory.
 */
uint8_t *tgs_small_graph(size_t *len);
/**
 * A graph that computes shapes (no oracle of its own: test_tf.c writes the equivalent ONNX): input "x" [-1,4,6,3]
 * (NHWC, batch unknown); Shape, StridedSlice (shrink, new axis, ellipsis, negative stride), Prod, Pack, Reshape to
 * the computed [B,24,3], SplitV with -1, Split, Unpack, Fill, Range, Cast, Slice with -1, Tile, FloorDiv, GatherV2,
 * IdentityN. Outputs to ask for: "mul" [B,10,3], "split:2" [B,14,1], "un:1" [24,3], "tile" [B,2,6,4], "ss"
 * [B,2,6,3], "ss2" [1,4,3], "half_dims" [2] and "gr" [B,4,6,2]. NULL when out of memory.
 */
uint8_t *tgs_shape_graph(size_t *len);
/** Weights of tgs_test_graph: w1 [3,3,3,4] HWIO, b1 [4], bn scale/offset/mean/var [4] each, dw [3,3,4,1], fc
    [16,5], fcb [5]: in this order, 108 + 4 + 16 + 36 + 80 + 5 floats. */
void tgs_test_weights(uint32_t seed, float *out);
#define TGS_TEST_WEIGHTS (108 + 4 + 16 + 36 + 80 + 5)

#endif

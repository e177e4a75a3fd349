/*
 * tf_lower.h: TensorFlow frozen graphs (GraphDef .pb, protobuf-c from proto/tf_graph.proto) written as ONNX:
 * what tf_graph.c (decoding, constants, attributes, the node order, inputs and outputs) shares with tf_ops.c
 * (one function per kind of TensorFlow op).
 *
 * Names: every node's output 0 keeps the node's name ("MobilenetV1/Conv2d_0/Relu6"); values the translation
 * adds carry a suffix (":nchw", ":scale", ...). Layout: data_format NHWC (TensorFlow's default) stays the layout
 * of every tensor: Conv2D, DepthwiseConv2dNative, the pools and the resizes read a Transpose of their input to
 * NCHW (made once per value) and write a Transpose back, as the TFLite frontend does; NCHW graphs need none.
 * Constants are read through Identity chains (the "weights/read" nodes of frozen graphs).
 */
#ifndef RD_FE_TF_LOWER_H
#define RD_FE_TF_LOWER_H

#include "fe_internal.h"

#include "tf_graph.pb-c.h"

#define TF_MAX_IO 256
#define TF_MAX_PORT RD_FE_MAX_OP_IO /* the highest output number a reference may name */

typedef struct tf_ctx {
    const Rdtf__GraphDef *g;
    const char *path;
    rd_onnx_builder *b;
    fe_names names;
    fe_map index;             /* node name -> node index + 1 */
    const char **value;       /* per node: the ONNX value of its output 0, once written */
    rd_tensor *konst;         /* per node: a Const's value (float32 or int64; dtype 0 when unread) */
    int *konst_of;            /* per node: the Const it forwards (itself, or through Identity), -1 none */
    const char **konst_value; /* per Const: its initializer, once written */
    bool *read;               /* per node: some node reads it */
    uint8_t *cut;             /* per node: one of its outputs is a graph input (the inputs asked): not lowered */
    uint8_t *dead;            /* per node: not supported, or reads one that is: not written, not reported again */
    fe_map ports;             /* "node:K" (K > 0) -> the ONNX value of that output, once written */
    const rd_frontend_options *fo;
    fe_map nchw; /* value -> its NCHW Transpose */
    fe_unsupported unsup;
    size_t cur; /* the node being written */
    rd_status st;
    rd_error *err;
} tf_ctx;

/* TensorFlow's DataType numbers (types.proto). */
enum { DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_INT64 = 9, DT_BOOL = 10, DT_BFLOAT16 = 14, DT_HALF = 19 };

/* ---- tf_graph.c ---- */

/** Records the first failure (C->st) with a message; returns C->st. */
#define tf_fail(C, code, ...) fe_fail(&(C)->st, (C)->err, code, NULL, __VA_ARGS__)
/** The current node's name and op for messages ("node 'conv1/Conv2D' (Conv2D)"), in buf. */
const char *tf_where(tf_ctx *C, char *buf, size_t len);
const Rdtf__NodeDef *tf_node_def(const tf_ctx *C);
/** Attribute key of the current node, NULL when absent. */
const Rdtf__AttrValue *tf_attr(const tf_ctx *C, const char *key);
int64_t tf_attr_int(tf_ctx *C, const char *key, int64_t def);
float tf_attr_float(tf_ctx *C, const char *key, float def);
bool tf_attr_bool(tf_ctx *C, const char *key, bool def);
/** A string attribute into buf (def when absent). */
const char *tf_attr_str(tf_ctx *C, const char *key, const char *def, char *buf, size_t len);
/** A list(int) attribute into out[0..*n) (at most max); false (failure recorded) when malformed. */
bool tf_attr_ints(tf_ctx *C, const char *key, int64_t *out, int max, int *n);
/** A type attribute of the current node (def when absent). */
int tf_attr_type(tf_ctx *C, const char *key, int def);
/** The node a reference names ("x", "x:0", "x:2"; control inputs "^x" too) with its output in *port; -1 with a
    failure naming node (the reader) when there is no such node. */
int tf_resolve(tf_ctx *C, size_t node, const char *ref, int *port);
/** Data inputs of the current node (control inputs "^x" excluded). */
int tf_n_inputs(const tf_ctx *C);
/** The ONNX value of data input k (a Const's initializer written on first use); NULL with a failure. */
const char *tf_in(tf_ctx *C, int k);
/** The constant value of data input k (through Identity), or NULL (no failure recorded). */
const rd_tensor *tf_const_in(tf_ctx *C, int k);
/** The integer values of constant input k into out[0..*n); false with a failure naming the input when it is
    not a constant integer tensor of at most max values. */
bool tf_const_ints(tf_ctx *C, int k, int64_t *out, int max, int *n);
/** The value the current node's output is written to (the node's name). */
const char *tf_out(tf_ctx *C);
/** The value of the current node's output k ("name:K" for K > 0, as TensorFlow names it). */
const char *tf_out_k(tf_ctx *C, int k);
/** The value of output port of node, or NULL when it was not written. */
const char *tf_port_value(tf_ctx *C, size_t node, int port);
const char *tf_fresh(tf_ctx *C, const char *base, const char *suffix);
/** t as an initializer (consumed). */
const char *tf_init(tf_ctx *C, const char *base, const char *suffix, rd_tensor *t);
const char *tf_init_i64(tf_ctx *C, const char *suffix, const int64_t *v, int n);
const char *tf_init_scalar(tf_ctx *C, const char *suffix, float v);
/** A node named after the current one; NULL when any name is NULL (an earlier failure). */
rd_onnx_node *tf_add(tf_ctx *C, const char *op, const char *const *in, int n_in, const char *const *out, int n_out);
/** The NCHW Transpose of NHWC value v (made once per value); out written from NCHW y. */
const char *tf_nchw(tf_ctx *C, const char *v);
void tf_to_nhwc(tf_ctx *C, const char *y_nchw, const char *out);

/** True when buf starts as a GraphDef does: field 1 (a NodeDef) whose own field 1 (its name) comes first. */
bool tf_looks_like_graphdef(const void *buf, size_t len);

/** A Placeholder as a graph input: float32 only, its shape when it has one (unknown dims symbolic). */
void tf_placeholder(tf_ctx *C);

/* ---- tf_cut.c ---- */

/**
 * The nodes to write, in an order where every data input comes first, into order[0..*n_order): those the
 * outputs need (the outputs asked, else every node nothing reads), walking no further than the inputs asked
 * (declared here as the graph's inputs, in their order); control inputs are not followed. Cycles and unknown
 * names are refused, unknown asked names with the graph's names closest to them.
 */
rd_status tf_plan(tf_ctx *C, size_t *order, size_t *n_order);
/** The graph's outputs: the outputs asked in their order, else the values written that nothing reads. */
void tf_outputs(tf_ctx *C);

/* ---- tf_ops.c ---- */

/** Writes the current node (op); false when the op (or an option of it) is not supported. */
bool tf_lower_node(tf_ctx *C, const char *op);

/* ---- tf_shape_ops.c ---- */

/** The ops graphs use to compute shapes and index tensors (Shape, StridedSlice, Pack, Split, Fill, Range, Cast,
    ...) as ONNX (the loader folds them once the input shapes are known); false when op is none of them. */
bool tf_lower_shape_node(tf_ctx *C, const char *op, bool *handled);

#endif

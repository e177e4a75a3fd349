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
    fe_map nchw;              /* value -> its NCHW Transpose */
    fe_unsupported unsup;
    size_t cur; /* the node being written */
    rd_status st;
    rd_error *err;
} tf_ctx;

/* ---- tf_graph.c ---- */

rd_status tf_fail(tf_ctx *C, rd_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
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

/* ---- tf_ops.c ---- */

/** Writes the current node (op); false when the op (or an option of it) is not supported. */
bool tf_lower_node(tf_ctx *C, const char *op);

#endif

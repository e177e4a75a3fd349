/*
 * caffe_lower.h: what caffe_lower.c (the net, its inputs, weights and outputs) shares with caffe_layers.c (one
 * function per Caffe layer type): the lowering context and its helpers. Every helper is a no-op returning NULL
 * or false once C->st holds a failure, so a layer writes its nodes without checking each step.
 */
#ifndef RD_FE_CAFFE_LOWER_H
#define RD_FE_CAFFE_LOWER_H

#include "caffe.h"

#include "caffe.pb-c.h"

#define CF_MAX_IO 64

typedef struct cf_ctx {
    const ct_doc *d;
    rd_onnx_builder *b;
    const Rdcaffe__NetParameter *net; /* the .caffemodel */
    const char *wname;
    fe_names names;
    fe_map blob;          /* top name -> current ONNX value (const char *) */
    fe_map rank;          /* ONNX value -> rank (intptr_t) */
    fe_map weights;       /* layer name -> its LayerParameter in the .caffemodel */
    const char **written; /* every value a layer wrote, in order (outputs are those nobody reads) */
    size_t n_written, cap_written;
    fe_unsupported unsup;
    rd_status st;
    rd_error *err;
    int layer; /* node index of the layer being written */
    int index; /* its position among the layers */
} cf_ctx;

/** Records the first failure (C->st) with a message; returns C->st. */
#define cf_fail(C, code, ...) fe_fail(&(C)->st, (C)->err, code, NULL, __VA_ARGS__)
/** cf_fail with the message of a ct_* accessor's error; true. */
bool cf_opt_fail(cf_ctx *C, const rd_error *le);
const char *cf_layer_name(const cf_ctx *C);
/** A fresh value name base + suffix. */
const char *cf_fresh(cf_ctx *C, const char *base, const char *suffix);
void cf_set_rank(cf_ctx *C, const char *v, int rank);
/** The rank of value v (4 when unknown). */
int cf_rank_of(const cf_ctx *C, const char *v);
/** A node of the current layer; NULL when any input or output name is NULL (an earlier failure). */
rd_onnx_node *cf_node(cf_ctx *C, const char *op, const char *const *in, int n_in, const char *const *out, int n_out);
/** t as an initializer named base + suffix (t is consumed). */
const char *cf_init(cf_ctx *C, const char *base, const char *suffix, rd_tensor *t);
const char *cf_init_i64(cf_ctx *C, const char *base, const char *suffix, const int64_t *v, int n);
const char *cf_init_scalar(cf_ctx *C, const char *base, const char *suffix, float v);
/** Blob k of the current layer's weights as float32 (want_numel >= 0 checks its size); false on failure. */
bool cf_blob(cf_ctx *C, int k, int64_t want_numel, rd_tensor *out);
/** A per-channel vector [c] shaped to broadcast on axis 1 of a rank-r tensor. */
void cf_per_channel(rd_tensor *t, int r);
/** Bottom k's current value. */
const char *cf_bottom(cf_ctx *C, int k);
/** How many fields named key the current layer has. */
int cf_count(const cf_ctx *C, const char *key);
/** The value top k of the layer is written to (rank recorded). */
const char *cf_top(cf_ctx *C, int k, int rank);

/** One layer (caffe_layers.c); false when its type (or an option of it) is not supported. */
bool cf_lower_layer(cf_ctx *C, const char *type);

#endif

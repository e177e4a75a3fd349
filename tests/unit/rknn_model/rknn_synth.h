/*
 * rknn_synth.h: writes small `.rknn` files of our own (tests and fuzz seeds): the 64- or 24-byte header,
 * a FlatBuffer laid out as ../shared/docs/rknn-model-format.md describes (Model, Graph, Tensor, Node slots,
 * parameter unions, attribute blobs, weight blobs) and the trailing JSON. Nothing is copied from real
 * files; every field is chosen here.
 */
#ifndef RD_TEST_RKNN_SYNTH_H
#define RD_TEST_RKNN_SYNTH_H

#include "rknn_diag/flatbuf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RS_MAX 16

typedef struct rs_tensor {
    const char *name;
    int dtype, layout, role;
    int rank, shape[6];
    int native_rank, native[6];
    const char *qmethod, *qtype;
    int n_q; /* entries of min/max/scale/zp (0: none) */
    float min[4], max[4], scale[4];
    int32_t zp[4];
    uint32_t size, offset;
    int blob; /* -1: no slot 18 */
} rs_tensor;

typedef struct rs_node {
    const char *type, *name;
    int target; /* -1: no slot 3 */
    int n_in, in[6];
    int n_out, out[4];
    int param_type;       /* 0 none; 1 Conv, 19 Concat, 20 Split, 26 Resize, 77 unknown (guessed fields) */
    const uint8_t *attrs; /* attribute blob, or NULL */
    size_t attrs_len;
    int n_tasks, tasks[4];
} rs_node;

typedef struct rs_model {
    uint64_t version; /* header format version (6; 2 puts the blobs in Model slot 4; 1 = 24-byte header) */
    bool no_json;     /* file ends after the model data */
    const char *format, *target, *compiler, *source, *shape_mode, *dict, *input_json, *output_json, *json;
    int compiler_num, schema;
    int n_tensors;
    rs_tensor tensors[RS_MAX];
    int n_nodes;
    rs_node nodes[RS_MAX];
    int n_inputs, inputs[4], n_outputs, outputs[4];
    int n_blobs;
    const uint8_t *blobs[RS_MAX];
    size_t blob_len[RS_MAX];
    uint8_t storage[1024]; /* what rs_demo's attribute blob, bias and weights point into */
} rs_model;

/** A small valid model (weight w: code of (o, i, y, x) = o*27 + i*9 + y*3 + x - 100, padding lanes = o - 4):
 * InputOperator -> Conv -> ConvAdd(residual) -> OutputOperator, with weights, per-layer and per-channel quantization, a
 * dict string, the JSON envelope and runtime I/O JSON. */
void rs_demo(rs_model *m);

/** The whole file (malloc'ed). */
rd_status rs_write(const rs_model *m, uint8_t **out, size_t *len, rd_error *err);

/* Attribute blob encoder (node slot 9): records into b (cap bytes); rs_ab_finish gives the length. */
typedef struct rs_ab {
    uint8_t *b;
    size_t n, cap;
    size_t open[8];
    int depth;
} rs_ab;
void rs_ab_init(rs_ab *a, uint8_t *buf, size_t cap);
void rs_ab_int(rs_ab *a, const char *key, int32_t v);
void rs_ab_f64(rs_ab *a, const char *key, double v);
void rs_ab_str(rs_ab *a, const char *key, const char *v);
void rs_ab_open(rs_ab *a, int tag, const char *key); /* 3 map, 4 list */
void rs_ab_close(rs_ab *a);
size_t rs_ab_finish(rs_ab *a);

#endif

/*
 * caffe.h: Caffe models (.prototxt text + .caffemodel binary) read into ONNX.
 *
 * caffe_text.c parses protobuf's text format (what a .prototxt is) into a tree of fields, without a schema:
 * `key: value`, `key { ... }` (and `key: { }`, `key < >`), `[a, b]` lists, strings with escapes, adjacent string
 * concatenation, `#` comments. Bounded: CT_MAX_DEPTH nesting, CT_MAX_NODES fields, the file at most
 * CT_MAX_BYTES. caffe_lower.c reads the layers from it and the weight blobs from the .caffemodel (protobuf-c).
 */
#ifndef RD_FE_CAFFE_H
#define RD_FE_CAFFE_H

#include "fe_internal.h"

#define CT_MAX_DEPTH 64
#define CT_MAX_NODES (1u << 22)
#define CT_MAX_BYTES ((size_t)64 << 20)

typedef struct ct_node {
    const char *key;   /* field name */
    const char *value; /* scalar text (strings unescaped), NULL for a message */
    bool quoted;       /* the scalar was a string */
    int line;
    int first, next; /* children of a message and the next sibling: node indices, -1 none */
} ct_node;

typedef struct ct_doc {
    const char *path;
    ct_node *nodes; /* nodes[0] is the root message */
    size_t n_nodes;
    char *text; /* keys and values, NUL-terminated, owned */
} ct_doc;

rd_status ct_parse(const char *buf, size_t len, const char *path, ct_doc *out, rd_error *err);
void ct_fini(ct_doc *d);

/** The first child of message m named key, after child `after` (-1: from the start); -1 when none. */
int ct_find(const ct_doc *d, int m, const char *key, int after);
/** Scalars of message m (def when absent); RD_E_PARSE naming path:line:key for a malformed value or a
    message where a scalar is expected. */
rd_status ct_int(const ct_doc *d, int m, const char *key, int64_t def, int64_t lo, int64_t hi, int64_t *out,
                 rd_error *err);
rd_status ct_float(const ct_doc *d, int m, const char *key, float def, float *out, rd_error *err);
rd_status ct_bool(const ct_doc *d, int m, const char *key, bool def, bool *out, rd_error *err);
/** A string or enum identifier, or def. */
const char *ct_str(const ct_doc *d, int m, const char *key, const char *def);
/** Every value of a repeated int field (key: 1 key: 2, or key: [1, 2]) into out[0..*n) (at most max). */
rd_status ct_ints(const ct_doc *d, int m, const char *key, int64_t lo, int64_t hi, int64_t *out, int max, int *n,
                  rd_error *err);
/** Every value of a repeated float field into out[0..*n) (at most max). */
rd_status ct_floats(const ct_doc *d, int m, const char *key, float *out, int max, int *n, rd_error *err);
/** The line of key in m (m's own line when absent). */
int ct_line(const ct_doc *d, int m, const char *key);

/** True when buf looks like a .prototxt: its first token is an identifier followed by ':' or '{'. */
bool ct_looks_like_text(const void *buf, size_t len);

/** Writes the net as ONNX (caffe_lower.c). weights: the .caffemodel bytes, wname names them. */
rd_status caffe_lower(const ct_doc *net, const void *weights, size_t wlen, const char *wname, void **out_buf,
                      size_t *out_len, char *detail, size_t detail_len, rd_error *err);

#endif

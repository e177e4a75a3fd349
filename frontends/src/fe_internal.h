/*
 * fe_internal.h: what the frontends share: a string map (names taken, derived names), the writer context that
 * hands out fresh value names beside the model's own, the list of unsupported operators reported at once, and the
 * operator mappings the TensorFlow and TFLite frontends both make.
 */
#ifndef RD_FE_INTERNAL_H
#define RD_FE_INTERNAL_H

#include "rknn_diag/frontends.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- string map: open addressing, keys owned, values are caller data --------------------------------- */

typedef struct fe_map_slot {
    char *key;
    void *val;
} fe_map_slot;

typedef struct fe_map {
    fe_map_slot *slots;
    size_t cap, n;
} fe_map;

/** The slot of key, or NULL. */
fe_map_slot *fe_map_get(const fe_map *m, const char *key);
/** Inserts key (copied) with val, or finds it; NULL when out of memory. *added tells which (may be NULL). */
fe_map_slot *fe_map_put(fe_map *m, const char *key, void *val, bool *added);
/** Frees the keys (values are the caller's) and the table. */
void fe_map_fini(fe_map *m);

/* ---- names ------------------------------------------------------------------------------------------ */

/** Names in use in one graph: the model's own first, then derived ones made unique. */
typedef struct fe_names {
    fe_map used;
    char **owned; /* every name handed out, freed with the set */
    size_t n_owned, cap_owned;
} fe_names;

void fe_names_fini(fe_names *s);
/** Claims name exactly; false when it is taken (or out of memory: *nomem set). */
bool fe_names_claim(fe_names *s, const char *name, bool *nomem);
/**
 * A new unique name base + suffix (base + suffix + ":2", ":3" ... when taken), owned by s; NULL when out of
 * memory.
 */
const char *fe_names_fresh(fe_names *s, const char *base, const char *suffix);

/* ---- unsupported operators ------------------------------------------------------------------------- */

/** Distinct unsupported operator kinds with the first place each was seen, for one message. */
typedef struct fe_unsupported {
    size_t n_kinds; /* distinct kinds */
    size_t n_total; /* operators */
    char text[700]; /* "LSTM (operator #3 'lstm1'), CUSTOM 'Foo' (operator #9 'x'), ..." */
    size_t used;
    fe_map seen;
} fe_unsupported;

/** Records one unsupported operator: kind names it ("LSTM"), where says where ("operator #3 'lstm1'"). */
void fe_unsupported_add(fe_unsupported *u, const char *kind, const char *where);
/** RD_E_UNSUPPORTED naming file and every kind when any was recorded, else RD_OK. Frees u. */
rd_status fe_unsupported_finish(fe_unsupported *u, const char *file, const char *what, rd_error *err);

/* ---- small helpers --------------------------------------------------------------------------------- */

/**
 * A node of op named name, unless *sticky already holds a failure or any input or output name is NULL (an
 * earlier failure made it); NULL then, and on out of memory (*sticky and err set).
 */
rd_onnx_node *fe_node(rd_onnx_builder *b, rd_status *sticky, rd_error *err, const char *op, const char *name,
                      const char *const *in, int n_in, const char *const *out, int n_out);

/**
 * The frontends' sticky failure: the first failure of a translation wins. When *sticky is RD_OK, sets it to
 * code and err to prefix (NULL: none) and the formatted message; returns *sticky. Each frontend's *_fail
 * macro passes its context's sticky status and error.
 */
rd_status fe_fail(rd_status *sticky, rd_error *err, rd_status code, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/** The float of a float32 / float16 / bfloat16 / float64 element. */
float fe_load_float(rd_dtype dt, const void *data, int64_t i);

/**
 * The attributes of the ONNX Resize (on NCHW) that TensorFlow's ResizeBilinear (bilinear) or
 * ResizeNearestNeighbor computes with its align_corners (align) and half_pixel_centers (half) flags: the
 * TensorFlow and TFLite frontends both map it.
 */
void fe_tf_resize_attrs(rd_onnx_node *n, bool bilinear, bool align, bool half);

#endif

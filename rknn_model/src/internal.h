/* internal.h: what the .c files of rknn_model share (not installed, not for other modules). */
#ifndef RD_RKNN_INTERNAL_H
#define RD_RKNN_INTERNAL_H

#include "rknn_diag/flatbuf.h"
#include "rknn_diag/rknn_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena: everything a model or a log owns, freed at once; a byte budget caps hostile inputs ---- */

typedef struct rk_chunk rk_chunk;

typedef struct rk_arena {
    rk_chunk *head;
    size_t used;   /* bytes handed out */
    size_t budget; /* bound on used; 0 = unbounded */
} rk_arena;

void rk_arena_init(rk_arena *a, size_t budget);
void rk_arena_fini(rk_arena *a);
/** Zeroed, 16-byte aligned; NULL (and err RD_E_LIMIT or RD_E_NOMEM, naming what) on failure. */
void *rk_alloc(rk_arena *a, size_t n, const char *what, rd_error *err);
/** n elements of size bytes, overflow-checked. */
void *rk_alloc_array(rk_arena *a, size_t n, size_t size, const char *what, rd_error *err);
char *rk_strndup(rk_arena *a, const char *s, size_t n, rd_error *err);

/* ---- growable array in an arena (old storage is left to the arena: fine for the sizes involved) ---- */

typedef struct rk_vec {
    void *items;
    size_t n, cap, size;
} rk_vec;

/** Appends one zeroed element of v->size bytes; returns it or NULL (err set). */
void *rk_vec_push(rk_arena *a, rk_vec *v, size_t max, const char *what, rd_error *err);

/* ---- the model ---- */

typedef struct rk_blob {
    size_t off, len; /* in the model's copy of the file */
} rk_blob;

#define RK_MAX_WARNINGS 64

struct rd_rknn_model {
    rk_arena arena;
    rd_rknn_limits lim;
    uint8_t *file; /* the whole file (owned) */
    size_t file_len;
    size_t data_off; /* FlatBuffer section start in file */
    rd_rknn_info info;
    rd_rknn_graph *graphs;
    size_t n_graphs;
    rk_blob *blobs;
    size_t n_blobs;
    const char *warnings[RK_MAX_WARNINGS];
    size_t n_warnings; /* kept */
    size_t n_warn_dropped;
};

/** Records a warning (formatted into the arena); silently counted when RK_MAX_WARNINGS are kept. */
void rk_warn(rd_rknn_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* model_fb.c: the FlatBuffer Model table (everything but the graphs' nodes) */
rd_status rk_read_model(rd_rknn_model *m, rd_error *err);

/** An [int] of tensor indices (graph inputs/outputs, node inputs/outputs), at most max, each < n_tensors. */
rd_status rk_index_list(rd_rknn_model *m, const rd_fb_table *t, unsigned slot, size_t max, size_t n_tensors,
                        const char *what, const int32_t **out, size_t *n, rd_error *err);

/* node_fb.c: the nodes of graph g (tensors already read) */
rd_status rk_read_nodes(rd_rknn_model *m, const rd_fb_table *graph, rd_rknn_graph *g, size_t gi, rd_error *err);

/* attr_blob.c: node slot 9 (section 4.3 of the format notes). *partial when an unknown tag stopped it. */
rd_status rk_attr_blob_decode(rk_arena *a, const uint8_t *blob, size_t len, size_t file_off, unsigned max_depth,
                              rd_rknn_value *out, bool *partial, char *why, size_t why_len, rd_error *err);

/* pylit.c: the Python literal parser into an arena */
/* base: offset of text in the file (for messages); consumed NULL: only blanks may follow the value */
rd_status rk_pylit_parse(rk_arena *a, const char *text, size_t len, const char *what, size_t base, unsigned max_depth,
                         rd_rknn_value *out, size_t *consumed, rd_error *err);

/* dict_io.c: the dict string (slot 3), the trailing JSON and the runtime I/O JSON (slots 12/13) */
rd_status rk_read_dict(rd_rknn_model *m, const char *text, size_t len, size_t file_off, rd_error *err);
rd_status rk_read_json(rd_rknn_model *m, const char *text, size_t len, size_t file_off, rd_error *err);
rd_status rk_read_runtime_io(rd_rknn_model *m, const char *text, size_t len, bool is_output, size_t file_off,
                             rd_error *err);

/* summary.c: per graph, after the nodes: producers, consumers, name index, op counts */
rd_status rk_index_graph(rd_rknn_model *m, rd_rknn_graph *g, rd_error *err);
/** One node or table row for the per-op-type counts. */
typedef struct rk_op_sample {
    const char *op_type;
    rd_rknn_target target;
    bool float16, int8;
} rk_op_sample;
/** Counts per op type into the arena, most frequent first, then by name. */
rd_status rk_count_ops(rk_arena *a, const rk_op_sample *s, size_t n, rd_rknn_op_count **out, size_t *n_out,
                       rd_error *err);

/** What every public entry point reports through: err, or local when err is NULL; cleared. */
static inline rd_error *rk_err(rd_error *err, rd_error *local)
{
    if (!err)
        err = local;
    rd_error_clear(err);
    return err;
}

#endif

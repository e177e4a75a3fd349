/*
 * inspect_rknn.h: what `rknn-diag inspect` prints of what RKNN-Toolkit2 built, a `.rknn` model and a build
 * log, as text and as JSON (the command itself: cli/cmd_inspect_rknn.h). Output layouts: docs/rknn-model.md.
 */
#ifndef RD_AN_INSPECT_RKNN_H
#define RD_AN_INSPECT_RKNN_H

#include "cli_internal.h"
#include "rknn_diag/rknn_model.h"

#include <cjson/cJSON.h>

/** How many nodes, tensors or rows the text output lists (SIZE_MAX: all). */
typedef struct an_rk_text_opts {
    size_t max_rows;
} an_rk_text_opts;

/* inspect_rknn_text.c */
/** A string member of a struct shown as a labelled field of the text output. */
typedef struct an_rk_field {
    const char *label; /* "target       " */
    size_t off;        /* offsetof the const char * member */
} an_rk_field;
/** For each field: before, its label, its value ("-" when NULL or empty; an_rk_put), after. */
void an_rk_put_fields(FILE *out, const void *base, const an_rk_field *fields, size_t n, const char *before,
                      const char *after);
void an_rk_print_model(FILE *out, const rd_rknn_model *m, const an_rk_text_opts *o);
/** Writes s in display form (an_put_name: controls, bidirectional controls and broken UTF-8 as \xNN, \uNNNN;
    names come from hostile files). */
void an_rk_put(FILE *out, const char *s);
/** an_rk_put, then blanks up to width columns. */
void an_rk_put_pad(FILE *out, const char *s, int width);
/** The per-op-type table (OpType, count, NPU, CPU, float16, int8). */
void an_rk_print_ops(FILE *out, const rd_rknn_op_count *ops, size_t n_ops);

/* inspect_rknn_json.c */
/** The JSON of inspect --json on a .rknn model (docs/rknn-model.md); NULL when memory ran out. */
cJSON *an_rk_model_json(const rd_rknn_model *m);
cJSON *an_rk_value_json(const rd_rknn_value *v, bool *ok);
cJSON *an_rk_ops_json(const rd_rknn_op_count *ops, size_t n, bool *ok);

/* inspect_build_log.c */
void an_rk_print_log(FILE *out, const rd_rknn_build_log *b, const an_rk_text_opts *o);
/** The JSON of inspect --json --build-log; NULL when memory ran out. */
cJSON *an_rk_log_json(const rd_rknn_build_log *b);

#endif

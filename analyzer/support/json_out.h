/* json_out.h: JSON text out of cJSON trees, always valid UTF-8 (docs/report-schema.md, "Names"). */
#ifndef RD_AN_JSON_OUT_H
#define RD_AN_JSON_OUT_H

#include "rknn_diag/simulator.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

/** The indented JSON text of root, valid UTF-8 and safe on a terminal (rd_text_json_safe: a name from outside
    keeps its bytes in cJSON; an invalid one becomes U+FFFD, a C1 or bidirectional control \uHHHH). malloc'ed,
    NULL on allocation failure. */
char *an_json_text(const cJSON *root);

/** Prints an_json_text(root) and a newline to f and deletes root (NULL: nothing printed). False when the text
    could not be made (out of memory). */
bool an_json_print(FILE *f, cJSON *root);

/** Adds item under key to obj; when item is NULL (its creation ran out of memory) or cannot be added, deletes
    it and clears *ok, so that a tree built with many calls is checked once at the end (false: incomplete, do
    not write it). Returns *ok. */
bool an_json_add(cJSON *obj, const char *key, cJSON *item, bool *ok);
/** an_json_add for an array: appends item to arr. */
bool an_json_push(cJSON *arr, cJSON *item, bool *ok);

/** A number, or null for NaN and infinities (JSON has neither); NULL when memory ran out. */
cJSON *an_json_number_or_null(double v);

/* The same contract for the common members: on failure *ok is cleared and nothing is left behind. */
bool an_json_add_str(cJSON *obj, const char *key, const char *s, bool *ok);
bool an_json_add_num(cJSON *obj, const char *key, double v, bool *ok);
/** v as an_json_number_or_null makes it: null for NaN and infinities. */
bool an_json_add_finite(cJSON *obj, const char *key, double v, bool *ok);
bool an_json_add_bool(cJSON *obj, const char *key, bool v, bool *ok);
bool an_json_add_null(cJSON *obj, const char *key, bool *ok);
/** A new empty object or array added under key (pushed onto arr), or NULL with *ok cleared. Members added to
    the NULL of a failed container fail in turn, so the caller fills it without testing and checks *ok once. */
cJSON *an_json_add_object(cJSON *obj, const char *key, bool *ok);
cJSON *an_json_add_array(cJSON *obj, const char *key, bool *ok);
cJSON *an_json_push_object(cJSON *arr, bool *ok);
cJSON *an_json_push_array(cJSON *arr, bool *ok);

/** RD_OK when ok, else RD_E_NOMEM "out of memory (what)": the one check at the end of a tree's building. */
rd_status an_json_status(bool ok, const char *what, rd_error *err);

/** Writes an_json_text(doc) and a newline to path through the atomic writer; doc stays the caller's. */
rd_status an_json_save(const char *path, const cJSON *doc, rd_error *err);

/** an_json_save to dir/name, then deletes root (in every case). */
rd_status an_json_save_in(cJSON *root, const char *dir, const char *name, rd_error *err);

#endif

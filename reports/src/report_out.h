/*
 * report_out.h: what the JSON and HTML writers of reports/ share: a growable text buffer with a
 * ceiling, small number formatting helpers and the atomic save of a report (report_out.c).
 */
#ifndef RD_REPORT_OUT_H
#define RD_REPORT_OUT_H

#include "rknn_diag/reports.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Largest report we build in memory: a report is text about layers, never tensor data. */
#define REP_OUT_MAX_BYTES ((size_t)512 << 20)

/** A growable NUL-terminated buffer. After the first failed append, every append is a no-op and
 *  failed stays set, so writers check once at the end. */
typedef struct rep_buf {
    char *data;
    size_t len, cap;
    bool failed;
} rep_buf;

void rep_buf_fini(rep_buf *b);
void rep_buf_put(rep_buf *b, const void *s, size_t n);
void rep_buf_puts(rep_buf *b, const char *s);
void rep_buf_printf(rep_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Appends s with & < > " ' replaced by entities (NULL appends nothing). */
void rep_buf_html(rep_buf *b, const char *s);
/** Appends before, s as rep_buf_html does, then after: a string from outside inside markup. */
void rep_buf_html_in(rep_buf *b, const char *before, const char *s, const char *after);

/** A whole report of r written in memory (rd_report_json_write, rd_report_html_write). */
typedef rd_status (*rep_write_fn)(const rd_result *r, char **out, size_t *out_len, rd_error *err);

/** Saves what write makes of r at path, atomically; its errors name path. */
rd_status rep_save(const rd_result *r, rep_write_fn write, const char *path, rd_error *err);

#endif

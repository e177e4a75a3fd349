/*
 * perf_log.h: the RKNN runtime's per-layer performance table ("Network Layer Information Table", printed
 * with RKNN_LOG_LEVEL=4, by rknn_query(RKNN_QUERY_PERF_DETAIL) and by the toolkit's eval_perf), read from
 * a log as printed. Layouts and the public examples they were learnt from: docs/hybrid.md.
 *
 * Columns are found by name in the header line (ID, OpType, DataType, Target, Time(us), FullName, with
 * "DDR Cycles"-style two-word names of older runtimes), log prefixes such as "D RKNN: [05:07:06.566] "
 * are removed, FullName is the last column. Pure text: no model needed.
 */
#ifndef RD_AN_PERF_LOG_H
#define RD_AN_PERF_LOG_H

#include "rknn_diag/simulator.h"

#include <stdbool.h>
#include <stddef.h>

/** Largest log read (bytes) and longest table line; longer is an error, not an allocation. */
#define AN_PERF_LOG_MAX_BYTES ((size_t)256 << 20)
#define AN_PERF_LOG_MAX_LINE 65536

/** The precision a row ran in, as hybrid quantization sees it. */
typedef enum an_perf_prec {
    AN_PERF_INT8,    /* INT8, UINT8, INT4, UINT4 */
    AN_PERF_FLOAT16, /* FLOAT16, FP16 */
    AN_PERF_OTHER,   /* FLOAT (float32), INT16, INT32, ... */
} an_perf_prec;

/** One timed row of a table. */
typedef struct an_perf_row {
    int line;           /* 1-based line of the text */
    int table;          /* 0-based: which timed table of the log (the runtime prints one per run) */
    long id;            /* the ID column */
    char op_type[48];   /* OpType as printed (cut to fit) */
    char data_type[16]; /* DataType as printed (cut to fit) */
    an_perf_prec prec;
    bool on_npu;     /* Target NPU (else CPU, GPU, ...) */
    double us;       /* Time(us) */
    char *full_name; /* FullName as printed, e.g. "Conv:Conv_12" (owned) */
} an_perf_row;

/** The timed rows of every table of a log. */
typedef struct an_perf_log {
    an_perf_row *rows;
    size_t n_rows, cap;
    int n_tables;  /* timed tables read */
    int n_untimed; /* tables skipped: no Time(us) column, or every time 0 (the build-time table) */
    int first_untimed_line;
} an_perf_log;

void an_perf_log_init(an_perf_log *log);
void an_perf_log_fini(an_perf_log *log);

/** True when text holds a header line of the table (ID ... OpType ... FullName): CSV otherwise. */
bool an_perf_log_detect(const char *text, size_t len);

/**
 * Reads every table of text (len bytes; NUL bytes are an error). what names the source in messages.
 * RD_E_PARSE naming the line for a malformed row or header, binary data, a line over
 * AN_PERF_LOG_MAX_LINE in a table, or no timed table at all; RD_E_NOMEM. log is filled either way
 * (fini it).
 */
rd_status an_perf_log_parse(const char *text, size_t len, const char *what, an_perf_log *log, rd_error *err);

/** The node part of a FullName: "Conv:Conv_12" -> "Conv_12" (the text after an OpType-like prefix). */
const char *an_perf_node_name(const char *full_name);

#endif

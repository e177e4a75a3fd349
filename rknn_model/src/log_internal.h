/* log_internal.h: what the build-log reader's files (log_text.c, log_parse.c, log_table.c) share. */
#ifndef RD_RKNN_LOG_INTERNAL_H
#define RD_RKNN_LOG_INTERNAL_H

#include "internal.h"

/** A logical line: colour codes and log prefixes removed, wrapped `remove node`/`add node` parts joined. */
typedef struct lg_line {
    const char *s; /* NUL-terminated, valid during the callback only; right-trimmed, leading blanks kept */
    size_t len;
    int line;  /* 1-based line of the text where it starts */
    bool rknn; /* it carried librknnc's "RKNN:" prefix */
} lg_line;

/** Calls fn for every non-blank logical line of text, in order; stops at the first error fn returns. */
typedef rd_status (*lg_line_fn)(void *ctx, const lg_line *l, rd_error *err);
rd_status lg_scan(const char *text, size_t len, const char *what, lg_line_fn fn, void *ctx, rd_error *err);

/** Splits s at blanks: at most max words (start offset and length); returns the count kept. */
typedef struct lg_word {
    size_t start, len;
} lg_word;
size_t lg_words(const char *s, size_t n, lg_word *w, size_t max);

struct rd_rknn_log {
    rk_arena arena;
    rd_rknn_build_log pub;
    rk_vec options, fold, fuses, quant_opts, hybrid, tables, rows, rank_rows;
};

#define LG_MAX_ENTRIES ((size_t)1 << 20)

/* log_table.c: layer tables and ranking tables, fed line by line; *used when the line belonged to one */
typedef struct lg_tables lg_tables;
lg_tables *lg_tables_create(rd_rknn_log *log, rd_error *err);
rd_status lg_tables_line(lg_tables *t, const lg_line *l, bool *used, rd_error *err);
rd_status lg_tables_finish(lg_tables *t, rd_error *err);

#endif

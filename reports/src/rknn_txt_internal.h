/* rknn_txt_internal.h: the geometry of error_analysis.txt shared by its writer and parser (docs/formats.md). */
#ifndef RD_REP_RKNN_TXT_INTERNAL_H
#define RD_REP_RKNN_TXT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#define REP_GROUP_WIDTH 44 /* 2.x: two 20-character cells and 4 spaces per column group */
#define REP_CELL_WIDTH 20  /* "1.00000 | 0.0       " */
#define REP_EUC_WIDTH 10   /* the euc text is left-justified in 10 characters */
#define REP_EUC_CHARS 6    /* str(float(euc))[:6] */
#define REP_LEGACY_GROUP_WIDTH 25

extern const char *const rep_comments_sim[3];
extern const char *const rep_comments_runtime[3];
extern const char *const rep_comments_legacy[4];

/* 2.x header pieces, 44 characters each: [line][0 simulator, 1 runtime] */
extern const char *const rep_header_2x[3][2];
extern const char *const rep_header_legacy[2];

/** True when a label part is written quoted and escaped ("..." with \\ \" \n \xHH \uHHHH, rd_text_escape's
    quoted form): it is empty, starts with a quote, holds a control, bidirectional control or invalid UTF-8,
    ends with a blank (a name) or holds ']' (an op type). Anything else is written as RKNN writes it. */
bool rep_label_needs_quotes(const char *s, bool is_op);

/** Number of code points of a UTF-8 string (what Python's len() and ljust count). */
size_t rep_utf8_len(const char *s, size_t bytes);

#endif

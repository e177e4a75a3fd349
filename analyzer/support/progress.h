/*
 * progress.h: progress of long work on stderr: a bar redrawn in place on a terminal, a plain line
 * every few seconds otherwise; and warnings from the libraries printed as "warning: ...".
 */
#ifndef RD_AN_PROGRESS_H
#define RD_AN_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct an_progress {
    FILE *out;        /* NULL: silent */
    bool tty;         /* redraw one line in place */
    const char *what; /* "calibrating" */
    double start;     /* seconds */
    double last_print;
    size_t last_done;
} an_progress;

void an_progress_init(an_progress *p, FILE *out, bool tty, const char *what);
/** rd_progress_fn-compatible: user is an an_progress. */
void an_progress_update(void *user, size_t done, size_t total);
/** Ends the line (on a terminal) and prints the total time. */
void an_progress_done(an_progress *p);

typedef struct an_warn_ctx {
    FILE *errs; /* NULL: warnings dropped */
} an_warn_ctx;
/** rd_warn_fn-compatible: prints "warning: msg" to ctx->errs. */
void an_warn_print(void *user, const char *msg);

#endif

/* term_text.h: text from outside on the terminal (docs/security.md, "Names from outside"). */
#ifndef RD_AN_TERM_TEXT_H
#define RD_AN_TERM_TEXT_H

#include "rknn_diag/simulator.h" /* RD_TEXT_SHOWN for single names in printf arguments */

#include <stdio.h>

/**
 * Writes a message that embeds names from outside (an error, a warning, a finding) in display form
 * (rd_text_escape's RD_ESC_DISPLAY: ESC is \x1b, a newline \n, ...) at any length. The one line break a
 * message may carry on purpose, a newline followed by four spaces (a continuation line, such as the caret
 * under a formula), is kept as it is: a forged one can only ever indent, never start a line.
 */
void an_put_text(FILE *f, const char *msg);

/** Writes one name from outside in display form (rd_text_escape's RD_ESC_DISPLAY), whole, at any length. */
void an_put_name(FILE *f, const char *name);

/** An rd_warn_sink function printing "note: MSG" (an_put_text) to the FILE * given as user. */
void an_note_print(void *user, const char *msg);

#endif

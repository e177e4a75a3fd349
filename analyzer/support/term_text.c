/* term_text.c: text from outside on the terminal. */
#include "term_text.h"

#include <stdlib.h>
#include <string.h>

#define CONTINUATION "\n    "

/* Writes s[0..len) in display form. */
static void put_shown(FILE *f, const char *s, size_t len)
{
    if (!rd_text_needs_escape(s, len, RD_ESC_DISPLAY)) {
        fwrite(s, 1, len, f);
        return;
    }
    size_t need = rd_text_escape(s, len, RD_ESC_DISPLAY, NULL, 0);
    char *shown = malloc(need + 1);
    if (!shown) { /* out of memory: the bytes that need no escape, a marker for the rest */
        for (size_t i = 0; i < len; i++)
            fputc(rd_text_needs_escape(s + i, 1, RD_ESC_DISPLAY) ? '?' : s[i], f);
        return;
    }
    rd_text_escape(s, len, RD_ESC_DISPLAY, shown, need + 1);
    fwrite(shown, 1, need, f);
    free(shown);
}

void an_put_text(FILE *f, const char *msg)
{
    if (!msg)
        return;
    const char *cont;
    while ((cont = strstr(msg, CONTINUATION)) != NULL) {
        put_shown(f, msg, (size_t)(cont - msg));
        fputs(CONTINUATION, f);
        msg = cont + strlen(CONTINUATION);
    }
    put_shown(f, msg, strlen(msg));
}

void an_put_name(FILE *f, const char *name)
{
    if (name)
        put_shown(f, name, strlen(name));
}

void an_note_print(void *user, const char *msg)
{
    FILE *f = user;
    fputs("note: ", f);
    an_put_text(f, msg);
    fputc('\n', f);
}

/*
 * report_out.c: growable text buffer and HTML escaping for the report writers.
 */
#include "report_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rep_buf_fini(rep_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* Makes room for n more bytes plus the NUL; sets failed when that exceeds the ceiling or memory. */
static bool reserve(rep_buf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n > REP_OUT_MAX_BYTES - b->len - 1 || b->len >= REP_OUT_MAX_BYTES) {
        b->failed = true;
        return false;
    }
    if (b->len + n + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void rep_buf_put(rep_buf *b, const void *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void rep_buf_puts(rep_buf *b, const char *s)
{
    if (s)
        rep_buf_put(b, s, strlen(s));
}

void rep_buf_printf(rep_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        rep_buf_put(b, small, (size_t)n);
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void rep_buf_html(rep_buf *b, const char *s)
{
    if (!s)
        return;
    /* names from outside: controls, bidirectional overrides and invalid UTF-8 shown as the terminal shows them
       (\x1b, \u202e, \xff), so the page is valid UTF-8 and reads the same as the other reports */
    char *shown = NULL;
    size_t len = strlen(s);
    if (rd_text_needs_escape(s, len, RD_ESC_DISPLAY)) {
        size_t need = rd_text_escape(s, len, RD_ESC_DISPLAY, NULL, 0);
        if (!(shown = malloc(need + 1))) {
            b->failed = true;
            return;
        }
        rd_text_escape(s, len, RD_ESC_DISPLAY, shown, need + 1);
        s = shown;
    }
    const char *run = s;
    for (const char *p = s; *p; p++) {
        const char *ent = NULL;
        switch (*p) {
        case '&':
            ent = "&amp;";
            break;
        case '<':
            ent = "&lt;";
            break;
        case '>':
            ent = "&gt;";
            break;
        case '"':
            ent = "&quot;";
            break;
        case '\'':
            ent = "&#39;";
            break;
        default:
            continue;
        }
        rep_buf_put(b, run, (size_t)(p - run));
        rep_buf_puts(b, ent);
        run = p + 1;
    }
    rep_buf_puts(b, run);
    free(shown);
}

void rep_buf_html_in(rep_buf *b, const char *before, const char *s, const char *after)
{
    rep_buf_puts(b, before);
    rep_buf_html(b, s);
    rep_buf_puts(b, after);
}

rd_status rep_save(const rd_result *r, rep_write_fn write, const char *path, rd_error *err)
{
    char *text;
    size_t len;
    rd_status st = write(r, &text, &len, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", path);
    st = rd_file_write_atomic(path, text, len, NULL, err);
    free(text);
    return st;
}

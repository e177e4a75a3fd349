/* text.c: growing NUL-terminated text with a ceiling (shell output, rewritten shell commands). */
#include "adb_internal.h"

#include <stdlib.h>
#include <string.h>

void adb_text_add(adb_text *t, const void *data, size_t n, size_t limit)
{
    if (t->oom)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *nb = cap <= limit ? realloc(t->buf, cap) : NULL;
        if (!nb) {
            t->oom = true;
            return;
        }
        t->buf = nb;
        t->cap = cap;
    }
    if (n)
        memcpy(t->buf + t->len, data, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

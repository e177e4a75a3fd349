/*
 * log_text.c: turning a build or board log into logical lines: '\r' and ANSI colour sequences removed,
 * log prefixes stripped (a level letter "I "/"W "/"D "/"E ", "RKNN: ", "[hh:mm:ss.mmm] ", a leading
 * "YYYY-MM-DD hh:mm:ss" stamp), and the parts of a `fuse_ops` rewrite that a terminal or a tutorial wrapped
 * ("rule:" / "remove node = [...]," / "add node = [...]", or a list that goes on) joined into one line.
 */
#include "log_internal.h"

#define MAX_JOINS 256

size_t rd_rknn_log_strip_escapes(const char *p, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\x1b') {
            if (i + 1 < n && p[i + 1] == '[') {
                i += 2;
                while (i < n && !(p[i] >= 0x40 && p[i] <= 0x7e))
                    i++;
            } else {
                i++;
            }
            continue;
        }
        if (p[i] != '\r')
            out[k++] = p[i];
    }
    out[k] = '\0';
    return k;
}

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Length of a "YYYY-MM-DD hh:mm:ss[.fff]" (or 'T' between) stamp at s, 0 when none. */
static size_t date_stamp(const char *s, size_t n)
{
    static const char pat[] = "dddd-dd-dd?dd:dd:dd";
    size_t i = 0;
    for (; pat[i]; i++) {
        if (i >= n)
            return 0;
        char c = s[i];
        bool ok = pat[i] == 'd' ? digit(c) : pat[i] == '?' ? (c == ' ' || c == 'T') : c == pat[i];
        if (!ok)
            return 0;
    }
    if (i < n && (s[i] == '.' || s[i] == ','))
        for (i++; i < n && digit(s[i]); i++)
            ;
    return i;
}

/* Strips the prefixes at s (repeatedly: "D RKNN: [15:13:15.945] "); returns the offset of the rest. */
static size_t strip_prefix(const char *s, size_t n, bool *rknn)
{
    size_t i = 0;
    for (int round = 0; round < 6; round++) {
        size_t before = i;
        size_t d = date_stamp(s + i, n - i);
        if (d) {
            i += d;
            while (i < n && (s[i] == ' ' || s[i] == '-' || s[i] == ':'))
                i++;
        }
        if (i + 1 < n && strchr("IWDEF", s[i]) && s[i] && s[i + 1] == ' ')
            i += 2;
        if (n - i >= 5 && memcmp(s + i, "RKNN", 4) == 0) {
            size_t k = i + 4;
            while (k < n && s[k] == ' ')
                k++;
            if (k < n && s[k] == ':') {
                i = k + 1;
                *rknn = true;
                while (i < n && s[i] == ' ')
                    i++;
            }
        }
        if (i < n && s[i] == '[' && n - i > 2 && digit(s[i + 1])) {
            const char *close = memchr(s + i, ']', n - i < 40 ? n - i : 40);
            if (close) {
                i = (size_t)(close - s) + 1;
                while (i < n && s[i] == ' ')
                    i++;
            }
        }
        if (i == before)
            break;
    }
    return i;
}

static const char *ltrim(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* True when s (trimmed) goes on the line before it: the wrapped part of a fuse_ops rewrite. */
static bool is_continuation(const char *s)
{
    return strncmp(s, "remove node", 11) == 0 || strncmp(s, "add node", 8) == 0;
}

/* '[' minus ']' outside quotes: > 0 when a list is still open. */
static long open_brackets(const char *s)
{
    long depth = 0;
    char q = 0;
    for (; *s; s++) {
        if (q) {
            if (*s == '\\' && s[1])
                s++;
            else if (*s == q)
                q = 0;
        } else if (*s == '\'' || *s == '"') {
            q = *s;
        } else if (*s == '[') {
            depth++;
        } else if (*s == ']') {
            depth--;
        }
    }
    return depth;
}

/* A line that opened a name list ("node = [", "nodes = [", "rule: [") which may go on. */
static bool opens_list(const char *s)
{
    const char *t = ltrim(s);
    if (strstr(t, "node = [") || strstr(t, "nodes = ["))
        return true;
    size_t id = strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    return id && strncmp(t + id, ": [", 3) == 0;
}

/* The logical line being built: kept until the next physical line says whether it goes on. */
typedef struct pending {
    char *s;
    size_t len, cap;
    int line;
    bool rknn, set;
    int joins;
} pending;

static rd_status pending_put(pending *p, const char *s, size_t n, bool append, const char *what, rd_error *err)
{
    size_t need = (append ? p->len + 1 : 0) + n + 1;
    if (need > p->cap) {
        size_t cap = need > 2 * p->cap ? need : 2 * p->cap;
        char *grown = realloc(p->s, cap);
        if (!grown)
            return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", what);
        p->s = grown;
        p->cap = cap;
    }
    if (append)
        p->s[p->len++] = ' ';
    else
        p->len = 0;
    memcpy(p->s + p->len, s, n);
    p->len += n;
    p->s[p->len] = '\0';
    return RD_OK;
}

static rd_status flush(pending *p, lg_line_fn fn, void *ctx, rd_error *err)
{
    if (!p->set)
        return RD_OK;
    p->set = false;
    lg_line l = {p->s, p->len, p->line, p->rknn};
    return fn(ctx, &l, err);
}

rd_status lg_scan(const char *text, size_t len, const char *what, lg_line_fn fn, void *ctx, rd_error *err)
{
    size_t cap = len < RD_RKNN_LOG_MAX_LINE ? len : RD_RKNN_LOG_MAX_LINE; /* no line is longer than the text */
    char *buf = malloc(cap + 1);
    pending p = {0};
    if (!buf)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", what);
    rd_status st = RD_OK;
    int lineno = 0;
    for (size_t pos = 0; pos < len && st == RD_OK;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t plen = nl ? (size_t)(nl - text) - pos : len - pos;
        const char *raw = text + pos;
        pos += plen + 1;
        lineno++;
        if (plen > RD_RKNN_LOG_MAX_LINE)
            continue; /* no line of interest is that long: not ours */
        size_t k = rd_rknn_log_strip_escapes(raw, plen, buf);
        bool rknn = false;
        size_t at = strip_prefix(buf, k, &rknn);
        while (k > at && (buf[k - 1] == ' ' || buf[k - 1] == '\t'))
            buf[--k] = '\0';
        const char *s = buf + at, *t = ltrim(s);
        size_t sn = k - at, tn = sn - (size_t)(t - s);
        bool join = p.set && tn > 0 && p.joins < MAX_JOINS && p.len + 1 + tn <= RD_RKNN_LOG_MAX_LINE &&
                    (is_continuation(t) || (opens_list(p.s) && open_brackets(p.s) > 0));
        if (join) {
            st = pending_put(&p, t, tn, true, what, err);
            p.joins++;
            continue;
        }
        st = flush(&p, fn, ctx, err);
        if (st != RD_OK)
            break;
        if (tn == 0) { /* blank lines carry nothing, and end no table */
            continue;
        }
        st = pending_put(&p, s, sn, false, what, err);
        p.line = lineno;
        p.rknn = rknn;
        p.set = true;
        p.joins = 0;
    }
    if (st == RD_OK)
        st = flush(&p, fn, ctx, err);
    free(p.s);
    free(buf);
    return st;
}

size_t lg_words(const char *s, size_t n, lg_word *w, size_t max)
{
    size_t count = 0, i = 0;
    while (i < n && count < max) {
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == n)
            break;
        size_t b = i;
        while (i < n && s[i] != ' ' && s[i] != '\t')
            i++;
        w[count++] = (lg_word){b, i - b};
    }
    return count;
}

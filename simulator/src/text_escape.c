/*
 * text_escape.c: names from outside (tensor and node names of a model, file names on a board) made safe to
 * show (docs/security.md, "Names from outside").
 *
 * A model or a board chooses its names: an ESC sequence in one would drive the user's terminal, a newline
 * would forge lines of a text table, a byte 0xff would make JSON invalid. The display form keeps every
 * printable character (any language) and spells out the rest:
 *   - C0 controls and DEL: \t \n \r, else \xHH (ESC is \x1b);
 *   - C1 controls (U+0080..U+009F, which 8-bit terminals obey), the bidirectional controls that reorder
 *     what a reader sees (U+200E, U+200F, U+202A..U+202E, U+2066..U+2069: "Trojan Source") and the line
 *     and paragraph separators U+2028, U+2029: \uHHHH;
 *   - each byte of an invalid UTF-8 sequence (stray continuation bytes, overlong forms, surrogates, code
 *     points above U+10FFFF, truncated sequences): \xHH.
 * The quoted form also escapes \ and " so that rd_text_unescape gives the exact bytes back: \xHH is a
 * byte, \uHHHH a code point written in UTF-8.
 */
#include "internal.h"

#include <stdio.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the byte at s starts none; *cp its value. */
static size_t utf8_seq(const unsigned char *s, size_t len, uint32_t *cp)
{
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    uint32_t v, min;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        v = c & 0x1f;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        v = c & 0x0f;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        v = c & 0x07;
        min = 0x10000;
    } else {
        return 0; /* a continuation byte, 0xc0/0xc1 (overlong) or 0xf5..0xff */
    }
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

/* Code points shown as \uHHHH: C1 controls, bidirectional controls, line and paragraph separators. */
static bool hidden_cp(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

/* The escape of one character or invalid byte at s into e (at most 7 bytes and a NUL); *used the bytes of s
   it stands for. Returns the escape's length, 0 when the character stays as it is. */
static size_t escape_one(const unsigned char *s, size_t len, rd_escape_style style, char e[8], size_t *used)
{
    uint32_t cp;
    size_t n = utf8_seq(s, len, &cp);
    *used = n ? n : 1;
    if (!n)
        return (size_t)snprintf(e, 8, "\\x%02x", s[0]);
    if (cp == '\n' || cp == '\r' || cp == '\t') {
        e[0] = '\\';
        e[1] = cp == '\n' ? 'n' : cp == '\r' ? 'r' : 't';
        e[2] = '\0';
        return 2;
    }
    if (cp < 0x20 || cp == 0x7f)
        return (size_t)snprintf(e, 8, "\\x%02x", (unsigned)cp);
    if (hidden_cp(cp))
        return (size_t)snprintf(e, 8, "\\u%04x", (unsigned)cp);
    if (style == RD_ESC_QUOTED && (cp == '\\' || cp == '"')) {
        e[0] = '\\';
        e[1] = (char)cp;
        e[2] = '\0';
        return 2;
    }
    return 0;
}

bool rd_text_needs_escape(const char *s, size_t len, rd_escape_style style)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        char e[8];
        size_t used;
        if (escape_one(p + i, len - i, style, e, &used))
            return true;
        i += used;
    }
    return false;
}

size_t rd_text_escape(const char *s, size_t len, rd_escape_style style, char *out, size_t cap)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0, copied = 0; /* copying stops at the first piece that does not fit whole: no half escape */
    bool fits = cap > 0;
    for (size_t i = 0; i < len;) {
        char e[8];
        size_t used, n = escape_one(p + i, len - i, style, e, &used), k = n ? n : used;
        if (fits && o + k < cap) {
            memcpy(out + o, n ? e : s + i, k);
            copied = o + k;
        } else {
            fits = false;
        }
        o += k;
        i += used;
    }
    if (cap)
        out[copied] = '\0';
    return o;
}

bool rd_text_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = utf8_seq(p + i, len - i, &cp);
        if (!n)
            return false;
        i += n;
    }
    return true;
}

/* A copy of s with each invalid UTF-8 byte as U+FFFD and, with json, each hidden code point as \uHHHH. */
static char *repaired(const char *s, size_t len, bool json, size_t *out_len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t total = len + 1;
    for (size_t i = 0; i < len;) { /* an invalid byte grows by 2 (EF BF BD), a hidden code point to 6 bytes */
        uint32_t cp;
        size_t n = utf8_seq(p + i, len - i, &cp);
        size_t grow = !n ? 2 : json && hidden_cp(cp) ? 6 - n : 0;
        if (__builtin_add_overflow(total, grow, &total))
            return NULL;
        i += n ? n : 1;
    }
    char *o = malloc(total);
    if (!o)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = utf8_seq(p + i, len - i, &cp);
        if (!n) {
            memcpy(o + k, "\xef\xbf\xbd", 3); /* U+FFFD REPLACEMENT CHARACTER */
            k += 3;
            i++;
        } else if (json && hidden_cp(cp)) {
            k += (size_t)snprintf(o + k, 7, "\\u%04x", (unsigned)cp);
            i += n;
        } else {
            memcpy(o + k, s + i, n);
            k += n;
            i += n;
        }
    }
    o[k] = '\0';
    if (out_len)
        *out_len = k;
    return o;
}

char *rd_text_utf8_repaired(const char *s, size_t len, size_t *out_len)
{
    return repaired(s, len, false, out_len);
}

char *rd_text_json_safe(const char *json, size_t len, size_t *out_len)
{
    return repaired(json, len, true, out_len);
}

const char *rd_text_shown(const char *s, char *buf, size_t cap)
{
    if (!cap)
        return "";
    if (!s) {
        snprintf(buf, cap, "(null)");
        return buf;
    }
    size_t len = strlen(s);
    size_t need = rd_text_escape(s, len, RD_ESC_DISPLAY, buf, cap);
    if (need >= cap && cap > 4) { /* cut: say so, on a character boundary */
        size_t end = strlen(buf);
        while (end > 0 && end + 3 >= cap)
            end--;
        while (end > 0 && ((unsigned char)buf[end] & 0xc0) == 0x80)
            end--;
        memcpy(buf + end, "...", 4);
    }
    return buf;
}

static int hex_value(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The value of n hex digits at s, or -1. */
static long hex_run(const char *s, size_t avail, size_t n)
{
    if (avail < n)
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = hex_value(s[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

rd_status rd_text_unescape(const char *s, size_t len, char **out, size_t *out_len, rd_error *err)
{
    *out = NULL;
    if (out_len)
        *out_len = 0;
    char *o = malloc(len + 1); /* escapes only ever shrink */
    if (!o)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '\\') {
            if (s[i] == '\0') {
                free(o);
                return rd_errorf(err, RD_E_PARSE, "a NUL byte at offset %zu of a quoted name", i);
            }
            o[k++] = s[i];
            continue;
        }
        size_t at = i++;
        long v = -1;
        char c = i < len ? s[i] : '\0';
        switch (c) {
        case '\\':
        case '"':
            o[k++] = c;
            continue;
        case 'n':
            o[k++] = '\n';
            continue;
        case 'r':
            o[k++] = '\r';
            continue;
        case 't':
            o[k++] = '\t';
            continue;
        case 'x':
            v = hex_run(s + i + 1, len - i - 1, 2);
            if (v > 0) {
                o[k++] = (char)v;
                i += 2;
                continue;
            }
            break;
        case 'u':
            v = hex_run(s + i + 1, len - i - 1, 4);
            if (v > 0 && (v < 0xd800 || v > 0xdfff)) {
                unsigned char *u = (unsigned char *)o + k;
                if (v < 0x80) {
                    u[0] = (unsigned char)v;
                    k += 1;
                } else if (v < 0x800) {
                    u[0] = (unsigned char)(0xc0 | (v >> 6));
                    u[1] = (unsigned char)(0x80 | (v & 0x3f));
                    k += 2;
                } else {
                    u[0] = (unsigned char)(0xe0 | (v >> 12));
                    u[1] = (unsigned char)(0x80 | ((v >> 6) & 0x3f));
                    u[2] = (unsigned char)(0x80 | (v & 0x3f));
                    k += 3;
                }
                i += 4;
                continue;
            }
            break;
        default:
            break;
        }
        free(o);
        return rd_errorf(err, RD_E_PARSE,
                         "bad escape '\\%c' at offset %zu of a quoted name (known: \\\\ \\\" \\n "
                         "\\r \\t \\xHH \\uHHHH)",
                         c >= 0x20 && c < 0x7f ? c : '?', at);
    }
    o[k] = '\0';
    *out = o;
    if (out_len)
        *out_len = k;
    return RD_OK;
}

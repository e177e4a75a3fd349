/*
 * pylit.c: a bounded parser for the subset of Python literal syntax that repr() prints for the toolkit's
 * dicts (Model slot 3) and the name lists of build logs: dicts, lists, tuples, str/bytes with escapes,
 * ints, floats (1e-05, inf, nan), True/False/None, and numpy scalar wrappers such as np.float32(0.5).
 *
 * Recursive descent with an explicit depth bound; every read is checked against len, so a truncated text
 * is an error naming where it ended and what was open. Values go into the caller's arena.
 */
#include "internal.h"

#include <errno.h>
#include <math.h>

typedef struct pl {
    rk_arena *a;
    const char *s;
    size_t len, pos;
    const char *what;
    size_t base;
    unsigned max_depth;
    rd_error *err;
} pl;

static rd_status fail(pl *p, const char *expected)
{
    if (p->pos >= p->len)
        return rd_errorf(p->err, RD_E_PARSE,
                         "%s: byte %zu: the text ends (after %zu bytes) where %s was expected: "
                         "cut short?",
                         p->what, p->base + p->pos, p->len, expected);
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c >= 0x20 && c < 0x7f)
        return rd_errorf(p->err, RD_E_PARSE, "%s: byte %zu: expected %s, found '%c'", p->what, p->base + p->pos,
                         expected, c);
    return rd_errorf(p->err, RD_E_PARSE, "%s: byte %zu: expected %s, found byte 0x%02x", p->what, p->base + p->pos,
                     expected, c);
}

static void skip_ws(pl *p)
{
    while (p->pos < p->len &&
           (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static bool at(pl *p, char c)
{
    return p->pos < p->len && p->s[p->pos] == c;
}

static bool is_ident(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

static rd_status parse_value(pl *p, unsigned depth, rd_rknn_value *out);

/* Appends the UTF-8 encoding of code point cp to buf (at least 4 free bytes). */
static size_t put_utf8(char *buf, uint32_t cp)
{
    if (cp < 0x80) {
        buf[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        buf[0] = (char)(0xc0 | (cp >> 6));
        buf[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        buf[0] = (char)(0xe0 | (cp >> 12));
        buf[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        buf[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    buf[0] = (char)(0xf0 | (cp >> 18));
    buf[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    buf[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    buf[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* An escaped code: one byte in a bytes literal, else the UTF-8 of the code point. */
static size_t put_code(char *buf, uint32_t cp, bool bytes)
{
    if (bytes) {
        buf[0] = (char)(cp & 0xff);
        return 1;
    }
    return put_utf8(buf, cp);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The character a one-character escape (\n, \t, \', ...) stands for; NUL for the other escapes. */
static char simple_escape(char e)
{
    static const char from[] = "\\'\"nrtabfv", to[] = "\\'\"\n\r\t\a\b\f\v";
    const char *at = e ? strchr(from, e) : NULL;
    return at ? to[at - from] : '\0';
}

/* A quoted string at p->pos (after any prefix letters); raw: no escapes. */
static rd_status parse_string(pl *p, bool raw, bool bytes, rd_rknn_value *out)
{
    char q = p->s[p->pos];
    size_t start = p->pos++;
    /* the decoded text is never longer than the quoted one (\U escapes shrink to <= 4 bytes) */
    size_t end = start + 1;
    while (end < p->len && p->s[end] != q) {
        if (p->s[end] == '\\' && end + 1 < p->len)
            end++;
        if (p->s[end] == '\n') {
            p->pos = end;
            return fail(p, "the closing quote of the string that starts at an earlier byte");
        }
        end++;
    }
    if (end >= p->len) {
        return rd_errorf(p->err, RD_E_PARSE,
                         "%s: byte %zu: the string that starts at byte %zu is not closed before "
                         "the text ends (after %zu bytes): cut short?",
                         p->what, p->base + p->len, p->base + start, p->len);
    }
    char *buf = rk_alloc(p->a, end - start + 4, p->what, p->err);
    if (!buf)
        return p->err ? p->err->code : RD_E_NOMEM;
    size_t n = 0;
    while (p->pos < end) {
        char c = p->s[p->pos++];
        if (c != '\\' || raw) {
            buf[n++] = c;
            continue;
        }
        char e = p->s[p->pos++];
        const char simple = simple_escape(e);
        if (simple) {
            buf[n++] = simple;
            continue;
        }
        int digits = 0;
        switch (e) {
        case '\n':
            break; /* line continuation */
        case 'x':
            digits = 2;
            break;
        case 'u':
        case 'U':
            if (bytes) { /* not an escape in a bytes literal */
                buf[n++] = '\\';
                buf[n++] = e;
            } else {
                digits = e == 'u' ? 4 : 8;
            }
            break;
        default:
            if (e >= '0' && e <= '7') { /* up to three octal digits */
                unsigned v = (unsigned)(e - '0');
                for (int k = 0; k < 2 && p->pos < end && p->s[p->pos] >= '0' && p->s[p->pos] <= '7'; k++)
                    v = v * 8 + (unsigned)(p->s[p->pos++] - '0');
                n += put_code(buf + n, v, bytes);
            } else {
                buf[n++] = '\\'; /* Python keeps unknown escapes as they are */
                buf[n++] = e;
            }
        }
        if (digits) {
            uint32_t cp = 0;
            for (int k = 0; k < digits; k++) {
                int h = p->pos < end ? hexval(p->s[p->pos]) : -1;
                if (h < 0)
                    return fail(p, "a hexadecimal digit of a \\x, \\u or \\U escape");
                cp = cp * 16 + (uint32_t)h;
                p->pos++;
            }
            if (cp > 0x10ffff)
                return rd_errorf(p->err, RD_E_PARSE, "%s: byte %zu: escape for code point 0x%x, above U+10FFFF",
                                 p->what, p->base + p->pos, cp);
            n += put_code(buf + n, cp, bytes);
        }
    }
    buf[n] = '\0';
    p->pos = end + 1;
    out->kind = bytes ? RD_RKNN_V_BYTES : RD_RKNN_V_STRING;
    out->s = buf;
    out->len = n;
    return RD_OK;
}

static rd_status parse_number(pl *p, rd_rknn_value *out)
{
    size_t start = p->pos;
    bool is_float = false;
    if (at(p, '-') || at(p, '+'))
        p->pos++;
    if (p->pos + 3 <= p->len && (memcmp(p->s + p->pos, "inf", 3) == 0 || memcmp(p->s + p->pos, "nan", 3) == 0) &&
        !(p->pos + 3 < p->len && is_ident(p->s[p->pos + 3], false))) {
        bool neg = p->s[start] == '-';
        bool nan = p->s[p->pos] == 'n';
        p->pos += 3;
        out->kind = RD_RKNN_V_FLOAT;
        out->f = nan ? NAN : neg ? -INFINITY : INFINITY;
        return RD_OK;
    }
    size_t digits = 0;
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c >= '0' && c <= '9')
            digits++;
        else if (c == '.' || c == 'e' || c == 'E')
            is_float = true;
        else if (!((c == '-' || c == '+') && (p->s[p->pos - 1] == 'e' || p->s[p->pos - 1] == 'E')) && c != '_')
            break;
        p->pos++;
    }
    size_t n = p->pos - start;
    if (!digits || n > 400) {
        p->pos = start;
        return fail(p, "a number");
    }
    char tmp[401];
    size_t k = 0;
    for (size_t i = start; i < p->pos; i++)
        if (p->s[i] != '_')
            tmp[k++] = p->s[i];
    tmp[k] = '\0';
    char *end = NULL;
    errno = 0;
    if (!is_float) {
        long long v = strtoll(tmp, &end, 10);
        if (end == tmp + k && errno == 0) {
            out->kind = RD_RKNN_V_INT;
            out->i = v;
            out->f = (double)v;
            return RD_OK;
        }
        errno = 0; /* an int beyond int64: kept as a float, as precise as a double is */
    }
    double d = strtod(tmp, &end);
    if (end != tmp + k) {
        p->pos = start + (size_t)(end - tmp);
        return fail(p, "a number");
    }
    out->kind = RD_RKNN_V_FLOAT;
    out->f = d;
    return RD_OK;
}

/* numpy scalar wrappers that repr() prints with numpy 2: np.float32(0.5) */
static bool is_wrapper(const char *s, size_t n)
{
    static const char *const types[] = {"float16", "float32", "float64", "int8",   "int16", "int32", "int64",
                                        "uint8",   "uint16",  "uint32",  "uint64", "bool_", "str_"};
    if (n > 3 && memcmp(s, "np.", 3) == 0)
        s += 3, n -= 3;
    else if (n > 6 && memcmp(s, "numpy.", 6) == 0)
        s += 6, n -= 6;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strlen(types[i]) == n && memcmp(s, types[i], n) == 0)
            return true;
    return false;
}

/* Items of a list, tuple or dict up to close; *out gets them. */
static rd_status parse_items(pl *p, unsigned depth, char close, bool dict, rd_rknn_value *out)
{
    rk_vec items = {.size = sizeof(rd_rknn_value)};
    rk_vec keys = {.size = sizeof(const char *)};
    bool tuple_comma = false;
    for (;;) {
        skip_ws(p);
        if (at(p, close))
            break;
        const char *key = NULL;
        if (dict) {
            size_t kstart = p->pos;
            rd_rknn_value k;
            memset(&k, 0, sizeof k);
            rd_status st = parse_value(p, depth + 1, &k);
            if (st != RD_OK)
                return st;
            key = k.kind == RD_RKNN_V_STRING ? k.s : rk_strndup(p->a, p->s + kstart, p->pos - kstart, p->err);
            if (!key)
                return p->err ? p->err->code : RD_E_NOMEM;
            skip_ws(p);
            if (!at(p, ':'))
                return fail(p, "':' after a dict key");
            p->pos++;
        }
        rd_rknn_value *v = rk_vec_push(p->a, &items, SIZE_MAX, p->what, p->err);
        if (!v)
            return p->err ? p->err->code : RD_E_NOMEM;
        rd_status st = parse_value(p, depth + 1, v);
        if (st != RD_OK)
            return st;
        if (dict) {
            const char **kp = rk_vec_push(p->a, &keys, SIZE_MAX, p->what, p->err);
            if (!kp)
                return p->err ? p->err->code : RD_E_NOMEM;
            *kp = key;
        }
        skip_ws(p);
        if (at(p, ',')) {
            p->pos++;
            tuple_comma = true;
            continue;
        }
        if (!at(p, close)) {
            char expected[32];
            snprintf(expected, sizeof expected, "',' or '%c'", close);
            return fail(p, expected);
        }
    }
    p->pos++;
    if (close == ')' && items.n == 1 && !tuple_comma) { /* (x) is x */
        *out = *(rd_rknn_value *)items.items;
        return RD_OK;
    }
    out->kind = dict ? RD_RKNN_V_MAP : close == ']' ? RD_RKNN_V_LIST : RD_RKNN_V_TUPLE;
    out->n = items.n;
    out->items = items.items;
    out->keys = keys.items;
    return RD_OK;
}

static rd_status parse_value(pl *p, unsigned depth, rd_rknn_value *out)
{
    memset(out, 0, sizeof *out);
    if (depth > p->max_depth)
        return rd_errorf(p->err, RD_E_LIMIT, "%s: byte %zu: values nested %u deep, more than the %u allowed", p->what,
                         p->base + p->pos, depth, p->max_depth);
    skip_ws(p);
    if (p->pos >= p->len)
        return fail(p, "a value");
    char c = p->s[p->pos];
    if (c == '{' || c == '[' || c == '(') {
        p->pos++;
        if (c == '{') {
            /* a set literal {1, 2} is not something repr() of the toolkit's data gives */
            return parse_items(p, depth, '}', true, out);
        }
        return parse_items(p, depth, c == '[' ? ']' : ')', false, out);
    }
    if (c == '\'' || c == '"')
        return parse_string(p, false, false, out);
    if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.')
        return parse_number(p, out);
    if (is_ident(c, true)) {
        size_t start = p->pos;
        while (p->pos < p->len && (is_ident(p->s[p->pos], false) || p->s[p->pos] == '.'))
            p->pos++;
        const char *w = p->s + start;
        size_t n = p->pos - start;
        if (n <= 3 && p->pos < p->len && (p->s[p->pos] == '\'' || p->s[p->pos] == '"')) {
            bool raw = false, bytes = false, ok = true;
            for (size_t i = 0; i < n; i++) {
                char l = (char)(w[i] | 0x20);
                raw |= l == 'r';
                bytes |= l == 'b';
                ok &= l == 'r' || l == 'b' || l == 'u';
            }
            if (ok)
                return parse_string(p, raw, bytes, out);
        }
        if (n == 4 && memcmp(w, "True", 4) == 0) {
            out->kind = RD_RKNN_V_BOOL;
            out->b = true;
            out->f = 1;
            return RD_OK;
        }
        if (n == 5 && memcmp(w, "False", 5) == 0) {
            out->kind = RD_RKNN_V_BOOL;
            return RD_OK;
        }
        if (n == 4 && memcmp(w, "None", 4) == 0)
            return RD_OK;
        if ((n == 3 && (memcmp(w, "inf", 3) == 0 || memcmp(w, "nan", 3) == 0))) {
            p->pos = start;
            return parse_number(p, out);
        }
        if (is_wrapper(w, n)) {
            skip_ws(p);
            if (!at(p, '('))
                return fail(p, "'(' after a numpy type name");
            p->pos++;
            rd_status st = parse_value(p, depth + 1, out);
            if (st != RD_OK)
                return st;
            skip_ws(p);
            if (!at(p, ')'))
                return fail(p, "')' closing a numpy scalar");
            p->pos++;
            return RD_OK;
        }
        p->pos = start;
        return fail(p, "a Python literal (dict, list, tuple, string, number, True, False, None)");
    }
    return fail(p, "a Python literal (dict, list, tuple, string, number, True, False, None)");
}

rd_status rk_pylit_parse(rk_arena *a, const char *text, size_t len, const char *what, size_t base, unsigned max_depth,
                         rd_rknn_value *out, size_t *consumed, rd_error *err)
{
    pl p = {a, text, len, 0, what ? what : "literal", base, max_depth, err};
    memset(out, 0, sizeof *out);
    rd_status st = parse_value(&p, 0, out);
    if (st != RD_OK)
        return st;
    if (consumed) {
        *consumed = p.pos;
        return RD_OK;
    }
    skip_ws(&p);
    if (p.pos < p.len)
        return fail(&p, "the end of the text after the value");
    return RD_OK;
}

/* The standalone API: a value whose arena travels with it. */
typedef struct pylit_box {
    rk_arena arena;
    rd_rknn_value v;
} pylit_box;

rd_status rd_rknn_pylit_parse(const char *text, size_t len, const char *what, unsigned max_depth, rd_rknn_value **out,
                              rd_error *err)
{
    rd_error local;
    err = rk_err(err, &local);
    *out = NULL;
    pylit_box *box = calloc(1, sizeof *box);
    if (!box)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rk_arena_init(&box->arena, len > SIZE_MAX / 8 - (64u << 20) ? 0 : 8 * len + (64u << 20));
    rd_status st = rk_pylit_parse(&box->arena, text, len, what, 0, max_depth, &box->v, NULL, err);
    if (st != RD_OK) {
        rk_arena_fini(&box->arena);
        free(box);
        return st;
    }
    *out = &box->v;
    return RD_OK;
}

void rd_rknn_value_free(rd_rknn_value *v)
{
    if (!v)
        return;
    pylit_box *box = (pylit_box *)((char *)v - offsetof(pylit_box, v));
    rk_arena_fini(&box->arena);
    free(box);
}

const rd_rknn_value *rd_rknn_value_get(const rd_rknn_value *v, const char *key)
{
    if (!v || v->kind != RD_RKNN_V_MAP || !key)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (v->keys[i] && strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

bool rd_rknn_value_is_number(const rd_rknn_value *v)
{
    return v && (v->kind == RD_RKNN_V_INT || v->kind == RD_RKNN_V_FLOAT || v->kind == RD_RKNN_V_BOOL);
}

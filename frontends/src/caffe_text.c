/*
 * caffe_text.c: protobuf's text format (a .prototxt) into a schema-less tree (caffe.h). One pass over the bytes
 * with a cursor and an explicit depth; every token is copied NUL-terminated into one buffer of at most twice
 * the input's size, so memory is bounded by the file.
 */
#include "caffe.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <strings.h>

typedef struct ct_parser {
    const char *p, *end;
    int line;
    ct_doc *d;
    size_t cap_nodes;
    size_t used; /* bytes of d->text written */
    rd_error *err;
} ct_parser;

static rd_status perr(ct_parser *P, const char *what)
{
    char got[24] = "end of file";
    if (P->p < P->end)
        snprintf(got, sizeof got, "'%.*s'", (int)(P->end - P->p < 12 ? P->end - P->p : 12), P->p);
    for (char *c = got; *c; c++)
        if (*c == '\n' || *c == '\r' || (unsigned char)*c < 0x20)
            *c = ' ';
    return rd_errorf(P->err, RD_E_PARSE, "%s:%d: expected %s, got %s", P->d->path, P->line, what, got);
}

/* Skips spaces and # comments, counting lines. */
static void skip(ct_parser *P)
{
    while (P->p < P->end) {
        char c = *P->p;
        if (c == '\n') {
            P->line++;
            P->p++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            P->p++;
        } else if (c == '#') {
            while (P->p < P->end && *P->p != '\n')
                P->p++;
        } else {
            break;
        }
    }
}

static bool ident_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

/* Copies n bytes into the text buffer, NUL-terminated. */
static char *store(ct_parser *P, const char *s, size_t n)
{
    char *out = P->d->text + P->used;
    memcpy(out, s, n);
    out[n] = '\0';
    P->used += n + 1;
    return out;
}

static int new_node(ct_parser *P, const char *key, int line)
{
    ct_doc *d = P->d;
    if (d->n_nodes == CT_MAX_NODES) {
        rd_errorf(P->err, RD_E_LIMIT, "%s:%d: more than %u fields", d->path, line, CT_MAX_NODES);
        return -1;
    }
    if (d->n_nodes == P->cap_nodes) {
        size_t cap = P->cap_nodes ? P->cap_nodes * 2 : 256;
        ct_node *g = realloc(d->nodes, cap * sizeof *g);
        if (!g) {
            rd_errorf(P->err, RD_E_NOMEM, "%s: out of memory", d->path);
            return -1;
        }
        d->nodes = g;
        P->cap_nodes = cap;
    }
    d->nodes[d->n_nodes] = (ct_node){.key = key, .line = line, .first = -1, .next = -1};
    return (int)d->n_nodes++;
}

/* A quoted string (several adjacent ones are concatenated), unescaped into the text buffer. */
static rd_status string_value(ct_parser *P, const char **out)
{
    char *dst = P->d->text + P->used, *w = dst;
    while (P->p < P->end && (*P->p == '"' || *P->p == '\'')) {
        char q = *P->p++;
        while (P->p < P->end && *P->p != q) {
            char c = *P->p++;
            if (c == '\n')
                return perr(P, "the end of a string before the end of the line");
            if (c == '\\') {
                if (P->p >= P->end)
                    return perr(P, "an escaped character");
                c = *P->p++;
                switch (c) {
                case 'n':
                    c = '\n';
                    break;
                case 't':
                    c = '\t';
                    break;
                case 'r':
                    c = '\r';
                    break;
                case '0':
                case '1':
                case '2':
                case '3':
                case '4':
                case '5':
                case '6':
                case '7': {
                    int v = c - '0';
                    for (int k = 0; k < 2 && P->p < P->end && *P->p >= '0' && *P->p <= '7'; k++)
                        v = v * 8 + (*P->p++ - '0');
                    c = (char)v;
                    break;
                }
                default:
                    break; /* \\ \" \' and others: the character itself */
                }
            }
            *w++ = c;
        }
        if (P->p >= P->end)
            return perr(P, "a closing quote");
        P->p++;
        skip(P);
    }
    *w = '\0';
    P->used += (size_t)(w - dst) + 1;
    *out = dst;
    return RD_OK;
}

/* An unquoted scalar: identifier, number, true/false (sign included). */
static rd_status bare_value(ct_parser *P, const char **out)
{
    const char *s = P->p;
    while (P->p < P->end && (ident_char(*P->p, false) || *P->p == '-' || *P->p == '+' || *P->p == '.'))
        P->p++;
    if (P->p == s)
        return perr(P, "a value");
    *out = store(P, s, (size_t)(P->p - s));
    return RD_OK;
}

static rd_status parse_message(ct_parser *P, int parent, char close, int depth);

/* One scalar for field key into parent's children. */
static rd_status scalar(ct_parser *P, int parent, const char *key, int *last)
{
    int line = P->line;
    const char *v = NULL;
    bool quoted = P->p < P->end && (*P->p == '"' || *P->p == '\'');
    rd_status st = quoted ? string_value(P, &v) : bare_value(P, &v);
    if (st != RD_OK)
        return st;
    int k = new_node(P, key, line);
    if (k < 0)
        return P->err ? P->err->code : RD_E_NOMEM;
    P->d->nodes[k].value = v;
    P->d->nodes[k].quoted = quoted;
    if (*last < 0)
        P->d->nodes[parent].first = k;
    else
        P->d->nodes[*last].next = k;
    *last = k;
    return RD_OK;
}

static rd_status parse_message(ct_parser *P, int parent, char close, int depth)
{
    if (depth > CT_MAX_DEPTH)
        return rd_errorf(P->err, RD_E_LIMIT, "%s:%d: messages nest deeper than %d levels", P->d->path, P->line,
                         CT_MAX_DEPTH);
    int last = -1;
    for (;;) {
        skip(P);
        if (P->p >= P->end) {
            if (close)
                return perr(P, close == '}' ? "'}'" : "'>'");
            return RD_OK;
        }
        if (close && *P->p == close) {
            P->p++;
            return RD_OK;
        }
        if (!ident_char(*P->p, true))
            return perr(P, "a field name");
        const char *s = P->p;
        while (P->p < P->end && ident_char(*P->p, false))
            P->p++;
        const char *key = store(P, s, (size_t)(P->p - s));
        int line = P->line;
        skip(P);
        bool colon = P->p < P->end && *P->p == ':';
        if (colon) {
            P->p++;
            skip(P);
        }
        rd_status st = RD_OK;
        if (P->p < P->end && (*P->p == '{' || *P->p == '<')) {
            char c = *P->p++ == '{' ? '}' : '>';
            int k = new_node(P, key, line);
            if (k < 0)
                return P->err ? P->err->code : RD_E_NOMEM;
            if (last < 0)
                P->d->nodes[parent].first = k;
            else
                P->d->nodes[last].next = k;
            last = k;
            st = parse_message(P, k, c, depth + 1);
        } else if (!colon) {
            return perr(P, "':' or '{' after a field name");
        } else if (P->p < P->end && *P->p == '[') { /* key: [v, v, ...] */
            P->p++;
            skip(P);
            while (st == RD_OK && P->p < P->end && *P->p != ']') {
                st = scalar(P, parent, key, &last);
                skip(P);
                if (st == RD_OK && P->p < P->end && *P->p == ',') {
                    P->p++;
                    skip(P);
                } else if (st == RD_OK && (P->p >= P->end || *P->p != ']')) {
                    st = perr(P, "',' or ']'");
                }
            }
            if (st == RD_OK && P->p >= P->end)
                st = perr(P, "']'");
            else if (st == RD_OK)
                P->p++;
        } else {
            st = scalar(P, parent, key, &last);
        }
        if (st != RD_OK)
            return st;
        skip(P);
        if (P->p < P->end && (*P->p == ';' || *P->p == ','))
            P->p++;
    }
}

rd_status ct_parse(const char *buf, size_t len, const char *path, ct_doc *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    out->path = path;
    if (len > CT_MAX_BYTES)
        return rd_errorf(err, RD_E_LIMIT, "%s: %zu bytes (a .prototxt is at most %zu)", path, len, CT_MAX_BYTES);
    if (memchr(buf, '\0', len))
        return rd_errorf(err, RD_E_PARSE, "%s: a NUL byte (not a text file)", path);
    out->text = malloc(2 * len + 2);
    if (!out->text)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", path);
    ct_parser P = {.p = buf, .end = buf + len, .line = 1, .d = out, .err = err};
    int root = new_node(&P, "", 1);
    rd_status st = root < 0 ? (err ? err->code : RD_E_NOMEM) : parse_message(&P, root, 0, 0);
    if (st != RD_OK)
        ct_fini(out);
    return st;
}

void ct_fini(ct_doc *d)
{
    free(d->nodes);
    free(d->text);
    memset(d, 0, sizeof *d);
}

int ct_find(const ct_doc *d, int m, const char *key, int after)
{
    for (int k = after >= 0 ? d->nodes[after].next : d->nodes[m].first; k >= 0; k = d->nodes[k].next)
        if (strcmp(d->nodes[k].key, key) == 0)
            return k;
    return -1;
}

int ct_line(const ct_doc *d, int m, const char *key)
{
    int k = ct_find(d, m, key, -1);
    return k >= 0 ? d->nodes[k].line : d->nodes[m].line;
}

static rd_status scalar_of(const ct_doc *d, int m, const char *key, const ct_node **out, rd_error *err)
{
    int k = ct_find(d, m, key, -1);
    *out = NULL;
    if (k < 0)
        return RD_OK;
    if (!d->nodes[k].value)
        return rd_errorf(err, RD_E_PARSE, "%s:%d: %s is a message, expected a value", d->path, d->nodes[k].line, key);
    *out = &d->nodes[k];
    return RD_OK;
}

static rd_status to_int(const ct_doc *d, const ct_node *n, int64_t lo, int64_t hi, int64_t *out, rd_error *err)
{
    char *end;
    errno = 0;
    long long v = strtoll(n->value, &end, 0);
    if (n->quoted || end == n->value || *end || errno)
        return rd_errorf(err, RD_E_PARSE, "%s:%d: %s: '%s' is not an integer", d->path, n->line, n->key, n->value);
    if (v < lo || v > hi)
        return rd_errorf(err, RD_E_PARSE, "%s:%d: %s: %lld is outside %lld..%lld", d->path, n->line, n->key, v,
                         (long long)lo, (long long)hi);
    *out = v;
    return RD_OK;
}

rd_status ct_int(const ct_doc *d, int m, const char *key, int64_t def, int64_t lo, int64_t hi, int64_t *out,
                 rd_error *err)
{
    const ct_node *n;
    *out = def;
    rd_status st = scalar_of(d, m, key, &n, err);
    return st != RD_OK || !n ? st : to_int(d, n, lo, hi, out, err);
}

static rd_status to_float(const ct_doc *d, const ct_node *n, float *out, rd_error *err)
{
    char *end;
    errno = 0;
    float v = strtof(n->value, &end);
    if (n->quoted || end == n->value || (*end && strcasecmp(end, "f") != 0) || errno || !isfinite(v))
        return rd_errorf(err, RD_E_PARSE, "%s:%d: %s: '%s' is not a number", d->path, n->line, n->key, n->value);
    *out = v;
    return RD_OK;
}

rd_status ct_float(const ct_doc *d, int m, const char *key, float def, float *out, rd_error *err)
{
    const ct_node *n;
    *out = def;
    rd_status st = scalar_of(d, m, key, &n, err);
    return st != RD_OK || !n ? st : to_float(d, n, out, err);
}

/* Node k as value number n (of at most max) of the repeated field key. */
static rd_status list_value(const ct_doc *d, int k, const char *key, int n, int max, rd_error *err)
{
    if (!d->nodes[k].value)
        return rd_errorf(err, RD_E_PARSE, "%s:%d: %s is a message, expected a value", d->path, d->nodes[k].line, key);
    if (n == max)
        return rd_errorf(err, RD_E_LIMIT, "%s:%d: more than %d values of %s", d->path, d->nodes[k].line, max, key);
    return RD_OK;
}

rd_status ct_floats(const ct_doc *d, int m, const char *key, float *out, int max, int *n, rd_error *err)
{
    *n = 0;
    for (int k = ct_find(d, m, key, -1); k >= 0; k = ct_find(d, m, key, k), (*n)++) {
        rd_status st = list_value(d, k, key, *n, max, err);
        if (st != RD_OK || (st = to_float(d, &d->nodes[k], &out[*n], err)) != RD_OK)
            return st;
    }
    return RD_OK;
}

rd_status ct_bool(const ct_doc *d, int m, const char *key, bool def, bool *out, rd_error *err)
{
    const ct_node *n;
    *out = def;
    rd_status st = scalar_of(d, m, key, &n, err);
    if (st != RD_OK || !n)
        return st;
    if (!strcmp(n->value, "true") || !strcmp(n->value, "True") || !strcmp(n->value, "1"))
        *out = true;
    else if (!strcmp(n->value, "false") || !strcmp(n->value, "False") || !strcmp(n->value, "0"))
        *out = false;
    else
        return rd_errorf(err, RD_E_PARSE, "%s:%d: %s: '%s' is not true or false", d->path, n->line, key, n->value);
    return RD_OK;
}

const char *ct_str(const ct_doc *d, int m, const char *key, const char *def)
{
    int k = ct_find(d, m, key, -1);
    return k >= 0 && d->nodes[k].value ? d->nodes[k].value : def;
}

rd_status ct_ints(const ct_doc *d, int m, const char *key, int64_t lo, int64_t hi, int64_t *out, int max, int *n,
                  rd_error *err)
{
    *n = 0;
    for (int k = ct_find(d, m, key, -1); k >= 0; k = ct_find(d, m, key, k), (*n)++) {
        rd_status st = list_value(d, k, key, *n, max, err);
        if (st != RD_OK || (st = to_int(d, &d->nodes[k], lo, hi, &out[*n], err)) != RD_OK)
            return st;
    }
    return RD_OK;
}

bool ct_looks_like_text(const void *buf, size_t len)
{
    const char *p = buf, *end = p + len;
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
            p++;
        if (p < end && *p == '#') {
            while (p < end && *p != '\n')
                p++;
            continue;
        }
        break;
    }
    if (p >= end || !ident_char(*p, true))
        return false;
    while (p < end && ident_char(*p, false))
        p++;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p < end && (*p == ':' || *p == '{');
}

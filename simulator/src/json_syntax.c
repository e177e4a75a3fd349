/*
 * json_syntax.c: is this text one well-formed JSON value? Checked without allocating, so that a reader
 * whose cJSON parse failed can tell "out of memory" (the text was fine) from "not valid JSON" (cJSON's
 * NULL means either). Deliberately at least as strict as cJSON: whatever passes here, cJSON parses when it
 * has the memory (RFC 8259 blanks only, no control characters in strings, lone surrogate escapes and
 * numbers longer than cJSON's 63-character buffer refused, cJSON's nesting limit).
 */
#include "internal.h"

#include <string.h>

enum { JSON_NUMBER_MAX = 63 };

typedef struct {
    const char *s;
    size_t len, at;
    int max_depth;
} json_scan;

static void skip_blanks(json_scan *j)
{
    while (j->at < j->len && strchr(" \t\r\n", j->s[j->at]) && j->s[j->at])
        j->at++;
}

static bool take(json_scan *j, const char *word)
{
    size_t n = strlen(word);
    if (j->len - j->at < n || memcmp(j->s + j->at, word, n) != 0)
        return false;
    j->at += n;
    return true;
}

static int hex4(json_scan *j)
{
    if (j->len - j->at < 4)
        return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = j->s[j->at + i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    j->at += 4;
    return v;
}

static bool string(json_scan *j)
{
    if (!take(j, "\""))
        return false;
    while (j->at < j->len) {
        unsigned char c = (unsigned char)j->s[j->at++];
        if (c == '"')
            return true;
        if (c < 0x20)
            return false;
        if (c != '\\')
            continue;
        if (j->at >= j->len)
            return false;
        c = (unsigned char)j->s[j->at++];
        if (c != 'u') {
            if (!strchr("\"\\/bfnrt", c) || !c)
                return false;
            continue;
        }
        int u = hex4(j);
        if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF))
            return false;
        if (u >= 0xD800 && u <= 0xDBFF) { /* a high surrogate: its low half must follow */
            int low = take(j, "\\u") ? hex4(j) : -1;
            if (low < 0xDC00 || low > 0xDFFF)
                return false;
        }
    }
    return false;
}

static bool digits(json_scan *j)
{
    size_t from = j->at;
    while (j->at < j->len && j->s[j->at] >= '0' && j->s[j->at] <= '9')
        j->at++;
    return j->at > from;
}

static bool number(json_scan *j)
{
    size_t from = j->at;
    take(j, "-");
    if (take(j, "0")) {
        if (j->at < j->len && j->s[j->at] >= '0' && j->s[j->at] <= '9')
            return false;
    } else if (!digits(j)) {
        return false;
    }
    if (take(j, ".") && !digits(j))
        return false;
    if (take(j, "e") || take(j, "E")) {
        if (!take(j, "+"))
            take(j, "-");
        if (!digits(j))
            return false;
    }
    return j->at - from <= JSON_NUMBER_MAX;
}

static bool value(json_scan *j, int depth);

/* The members or elements of an object (close '}') or array (close ']') after its opening bracket. */
static bool members(json_scan *j, int depth, char close)
{
    if (depth >= j->max_depth)
        return false;
    skip_blanks(j);
    if (j->at < j->len && j->s[j->at] == close) {
        j->at++;
        return true;
    }
    for (;;) {
        skip_blanks(j);
        if (close == '}') {
            if (!string(j))
                return false;
            skip_blanks(j);
            if (!take(j, ":"))
                return false;
        }
        if (!value(j, depth + 1))
            return false;
        skip_blanks(j);
        if (j->at >= j->len)
            return false;
        char c = j->s[j->at++];
        if (c == close)
            return true;
        if (c != ',')
            return false;
    }
}

static bool value(json_scan *j, int depth)
{
    skip_blanks(j);
    if (j->at >= j->len)
        return false;
    switch (j->s[j->at]) {
    case '{':
        j->at++;
        return members(j, depth, '}');
    case '[':
        j->at++;
        return members(j, depth, ']');
    case '"':
        return string(j);
    case 't':
        return take(j, "true");
    case 'f':
        return take(j, "false");
    case 'n':
        return take(j, "null");
    default:
        return number(j);
    }
}

bool rd_json_well_formed(const char *text, size_t len, int max_depth)
{
    json_scan j = {.s = text, .len = text ? len : 0, .at = 0, .max_depth = max_depth};
    return value(&j, 0);
}

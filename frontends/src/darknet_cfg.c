/*
 * darknet_cfg.c: the .cfg text of a Darknet model (darknet.h), read as Darknet's read_cfg reads it, with bounds
 * (DN_MAX_CFG_BYTES, DN_MAX_SECTIONS, DN_MAX_KEYS) and errors naming the file and line.
 */
#include "darknet.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

/* Removes every whitespace character of s in place (Darknet's strip). */
static void strip(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++)
        if (*r != ' ' && *r != '\t' && *r != '\r' && *r != '\n' && *r != '\v' && *r != '\f')
            *w++ = *r;
    *w = '\0';
}

/* Room for entry n of *arr (capacity *cap entries of elem bytes), which holds at most max entries (called what in
   the message). */
static rd_status grow(void **arr, size_t *cap, size_t n, size_t elem, size_t max, const char *what, const char *path,
                      int line, rd_error *err)
{
    if (n == max)
        return rd_errorf(err, RD_E_LIMIT, "%s:%d: more than %zu %s", path, line, max, what);
    if (n < *cap)
        return RD_OK;
    size_t c = *cap ? *cap * 2 : 64;
    void *g = realloc(*arr, c * elem);
    if (!g)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", path);
    *arr = g;
    *cap = c;
    return RD_OK;
}

rd_status dn_cfg_parse(const char *buf, size_t len, const char *path, dn_cfg *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    out->path = path;
    if (len > DN_MAX_CFG_BYTES)
        return rd_errorf(err, RD_E_LIMIT, "%s: %zu bytes (a .cfg is at most %zu)", path, len, DN_MAX_CFG_BYTES);
    out->text = malloc(len + 1);
    if (!out->text)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", path);
    memcpy(out->text, buf, len);
    out->text[len] = '\0';
    size_t cap_sec = 0, cap_kv = 0;
    int line = 0;
    rd_status st = RD_OK;
    for (char *p = out->text; p <= out->text + len && st == RD_OK;) {
        char *nl = memchr(p, '\n', (size_t)(out->text + len - p));
        char *end = nl ? nl : out->text + len;
        *end = '\0';
        line++;
        if (memchr(p, '\0', (size_t)(end - p)))
            st = rd_errorf(err, RD_E_PARSE, "%s:%d: a NUL byte (not a text file)", path, line);
        char *s = p;
        p = end + 1;
        if (st != RD_OK)
            break;
        strip(s);
        if (s[0] == '\0' || s[0] == '#' || s[0] == ';')
            continue;
        if (s[0] == '[') {
            size_t n = strlen(s);
            if (n < 3 || s[n - 1] != ']') {
                st = rd_errorf(err, RD_E_PARSE, "%s:%d: '%.60s' is not a [section] line", path, line, s);
                break;
            }
            s[n - 1] = '\0';
            st = grow((void **)&out->sec, &cap_sec, out->n_sec, sizeof *out->sec, DN_MAX_SECTIONS, "sections", path,
                      line, err);
            if (st != RD_OK)
                break;
            out->sec[out->n_sec++] = (dn_section){.type = s + 1, .line = line, .first_kv = out->n_kv};
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq || eq == s) {
            st = rd_errorf(err, RD_E_PARSE, "%s:%d: expected key=value or [section], got '%.60s'", path, line, s);
            break;
        }
        if (out->n_sec == 0) {
            st = rd_errorf(err, RD_E_PARSE, "%s:%d: '%.60s' before the first [section]", path, line, s);
            break;
        }
        st = grow((void **)&out->kv, &cap_kv, out->n_kv, sizeof *out->kv, DN_MAX_KEYS, "options", path, line, err);
        if (st != RD_OK)
            break;
        *eq = '\0';
        out->kv[out->n_kv++] = (dn_kv){.key = s, .val = eq + 1, .line = line};
        out->sec[out->n_sec - 1].n_kv++;
    }
    if (st == RD_OK && out->n_sec == 0)
        st = rd_errorf(err, RD_E_PARSE, "%s: no [section] at all (not a Darknet .cfg)", path);
    if (st != RD_OK)
        dn_cfg_fini(out);
    return st;
}

void dn_cfg_fini(dn_cfg *c)
{
    free(c->text);
    free(c->sec);
    free(c->kv);
    memset(c, 0, sizeof *c);
}

/* The last value of key in s (Darknet keeps the first; a key given twice is rare either way). */
static const dn_kv *find(const dn_cfg *c, const dn_section *s, const char *key)
{
    for (size_t i = 0; i < s->n_kv; i++)
        if (strcmp(c->kv[s->first_kv + i].key, key) == 0)
            return &c->kv[s->first_kv + i];
    return NULL;
}

int dn_line(const dn_section *s, const dn_cfg *c, const char *key)
{
    const dn_kv *kv = find(c, s, key);
    return kv ? kv->line : s->line;
}

const char *dn_str(const dn_cfg *c, const dn_section *s, const char *key, const char *def)
{
    const dn_kv *kv = find(c, s, key);
    return kv ? kv->val : def;
}

static rd_status parse_int(const dn_cfg *c, const dn_kv *kv, const char *text, int64_t lo, int64_t hi, int64_t *out,
                           rd_error *err)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || (*end && *end != ',') || errno)
        return rd_errorf(err, RD_E_PARSE, "%s:%d: %s=%s: not an integer", c->path, kv->line, kv->key, kv->val);
    if (v < lo || v > hi)
        return rd_errorf(err, RD_E_PARSE, "%s:%d: %s=%lld is outside %lld..%lld", c->path, kv->line, kv->key, v,
                         (long long)lo, (long long)hi);
    *out = v;
    return RD_OK;
}

rd_status dn_int(const dn_cfg *c, const dn_section *s, const char *key, int64_t def, int64_t lo, int64_t hi,
                 int64_t *out, rd_error *err)
{
    const dn_kv *kv = find(c, s, key);
    *out = def;
    return kv ? parse_int(c, kv, kv->val, lo, hi, out, err) : RD_OK;
}

rd_status dn_float(const dn_cfg *c, const dn_section *s, const char *key, float def, float *out, rd_error *err)
{
    const dn_kv *kv = find(c, s, key);
    *out = def;
    if (!kv)
        return RD_OK;
    char *end;
    errno = 0;
    float v = strtof(kv->val, &end);
    if (end == kv->val || *end || errno || !isfinite(v))
        return rd_errorf(err, RD_E_PARSE, "%s:%d: %s=%s: not a number", c->path, kv->line, key, kv->val);
    *out = v;
    return RD_OK;
}

rd_status dn_ints(const dn_cfg *c, const dn_section *s, const char *key, int64_t *out, int max, int *n, rd_error *err)
{
    const dn_kv *kv = find(c, s, key);
    *n = 0;
    if (!kv)
        return RD_OK;
    for (const char *p = kv->val; *p;) {
        if (*n == max)
            return rd_errorf(err, RD_E_LIMIT, "%s:%d: %s lists more than %d values", c->path, kv->line, key, max);
        rd_status st = parse_int(c, kv, p, -1000000000, 1000000000, &out[*n], err);
        if (st != RD_OK)
            return st;
        (*n)++;
        const char *comma = strchr(p, ',');
        if (!comma)
            break;
        p = comma + 1;
    }
    return RD_OK;
}

bool dn_looks_like_cfg(const void *buf, size_t len)
{
    const char *p = buf, *end = p + len;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
            p++;
        if (p < end && (*p == '#' || *p == ';')) {
            while (p < end && *p != '\n')
                p++;
            continue;
        }
        break;
    }
    size_t rest = (size_t)(end - p);
    return (rest >= 5 && memcmp(p, "[net]", 5) == 0) || (rest >= 9 && memcmp(p, "[network]", 9) == 0);
}

/*
 * snapshot.c: the snapshot folder's text files: one value per line (np.genfromtxt reads them), in the
 * 6/8/9-digit %g form of snapshot_format.c, written through a temporary name; RKNN-style file stems;
 * map_name_to_file.txt (syntax in docs/formats.md: name TAB golden TAB simulator TAB runtime, '-' for none,
 * backslash escapes).
 */
#include "rknn_diag/reports.h"
#include "snapshot_format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rd_snapshot_file_stem(const char *tensor, char *buf, size_t len)
{
    if (len == 0)
        return;
    size_t o = 0;
    for (const char *p = tensor; *p && o + 1 < len; p++) {
        unsigned char ch = (unsigned char)*p;
        bool safe = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                    ch == '-' || ch == '.' || ch >= 0x80;
        buf[o++] = safe ? (char)ch : '_';
    }
    buf[o] = '\0';
    if ((o == 0 || strcmp(buf, ".") == 0 || strcmp(buf, "..") == 0) && o + 2 <= len) { /* never a path of its own */
        memmove(buf + 1, buf, o + 1);
        buf[0] = '_';
    }
}

rd_status rd_snapshot_txt_save(const char *path, const float *v, int64_t n, rd_error *err)
{
    enum { CHUNK = 1 << 16 }; /* text handed to fwrite at once */
    char *text = malloc(CHUNK + REP_SNAPSHOT_VALUE_MAX + 1);
    if (!text)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", path);
    rd_atomic_file *af;
    rd_status st = rd_atomic_file_open(path, NULL, &af, err);
    if (st != RD_OK) {
        free(text);
        return st;
    }
    FILE *f = rd_atomic_file_stream(af);
    size_t used = 0;
    for (int64_t i = 0; i < n; i++) {
        used += (size_t)rep_snapshot_format_f32(v[i], text + used);
        text[used++] = '\n';
        if (used >= CHUNK) {
            if (fwrite(text, 1, used, f) != used)
                break;
            used = 0;
        }
    }
    if (used && !ferror(f))
        fwrite(text, 1, used, f);
    free(text);
    return rd_atomic_file_commit(af, err);
}

rd_status rd_snapshot_txt_load(const char *path, float **out_v, int64_t *out_n, rd_error *err)
{
    return rd_snapshot_txt_load_in(NULL, path, out_v, out_n, err);
}

rd_status rd_snapshot_txt_load_in(const char *dir, const char *path, float **out_v, int64_t *out_n, rd_error *err)
{
    *out_v = NULL;
    *out_n = 0;
    char *text;
    size_t len;
    rd_status st = rd_file_read_all(dir, path, RD_MAX_SNAPSHOT_TXT_BYTES, &text, &len, err);
    if (st != RD_OK)
        return st;
    size_t cap = 1024, n = 0;
    float *v = malloc(cap * sizeof *v);
    size_t lineno = 0;
    char *p = text, *end = text + len;
    while (v && p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl ? nl : end;
        lineno++;
        *le = '\0';
        char *q = p;
        while (*q == ' ' || *q == '\t' || *q == '\r')
            q++;
        if (*q && *q != '#') { /* genfromtxt skips blank lines and comments */
            char *num_end = NULL;
            errno = 0;
            double d = strtod(q, &num_end);
            while (num_end && (*num_end == ' ' || *num_end == '\t' || *num_end == '\r'))
                num_end++;
            if (num_end == q || !num_end || *num_end != '\0') {
                st = rd_errorf(err, RD_E_PARSE, "%s:%zu: '%.40s' is not one number", path, lineno, q);
                break;
            }
            if (n == cap) {
                float *g = cap < ((size_t)1 << 40) ? realloc(v, cap * 2 * sizeof *v) : NULL;
                if (!g) {
                    st = rd_errorf(err, RD_E_NOMEM, "%s: out of memory at line %zu", path, lineno);
                    break;
                }
                v = g;
                cap *= 2;
            }
            v[n++] = (float)d;
        }
        p = le + 1;
    }
    free(text);
    if (!v)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", path);
    if (st != RD_OK) {
        free(v);
        return st;
    }
    *out_v = v;
    *out_n = (int64_t)n;
    return RD_OK;
}

/* ---- map_name_to_file.txt ---- */

rd_status rd_name_map_add(rd_name_map *m, const char *name, const char *golden, const char *simulator,
                          const char *runtime, rd_error *err)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        rd_name_map_entry *g = realloc(m->entries, cap * sizeof *g);
        if (!g)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        m->entries = g;
        m->cap = cap;
    }
    rd_name_map_entry *e = &m->entries[m->n];
    memset(e, 0, sizeof *e);
    const char *src[4] = {name, golden, simulator, runtime};
    char **dst[4] = {&e->name, &e->golden, &e->simulator, &e->runtime};
    for (int i = 0; i < 4; i++) {
        if (src[i] && !(*dst[i] = strdup(src[i]))) {
            for (int k = 0; k < i; k++)
                free(*dst[k]);
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        }
    }
    m->n++;
    return RD_OK;
}

void rd_name_map_fini(rd_name_map *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->entries[i].name);
        free(m->entries[i].golden);
        free(m->entries[i].simulator);
        free(m->entries[i].runtime);
    }
    free(m->entries);
    memset(m, 0, sizeof *m);
}

/* A field: '-' alone means none; "\-" is a literal '-'; backslash escapes \\ \t \n \r. */
static void put_field(FILE *f, const char *s)
{
    if (!s) {
        fputc('-', f);
        return;
    }
    if (strcmp(s, "-") == 0) {
        fputs("\\-", f);
        return;
    }
    for (; *s; s++) {
        switch (*s) {
        case '\\':
            fputs("\\\\", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

rd_status rd_name_map_save(const rd_name_map *m, const char *path, rd_error *err)
{
    rd_atomic_file *af;
    rd_status st = rd_atomic_file_open(path, NULL, &af, err);
    if (st != RD_OK)
        return st;
    FILE *f = rd_atomic_file_stream(af);
    fputs("# rknn-diag map_name_to_file v1: tensor<TAB>golden<TAB>simulator<TAB>runtime ('-' = none)\n", f);
    for (size_t i = 0; i < m->n; i++) {
        const rd_name_map_entry *e = &m->entries[i];
        put_field(f, e->name);
        fputc('\t', f);
        put_field(f, e->golden);
        fputc('\t', f);
        put_field(f, e->simulator);
        fputc('\t', f);
        put_field(f, e->runtime);
        fputc('\n', f);
    }
    return rd_atomic_file_commit(af, err);
}

/* Unescapes s[0..n) into a new string; NULL for the field "-". *bad is set on a bad escape. */
static char *get_field(const char *s, size_t n, bool *bad, bool *oom)
{
    if (n == 1 && s[0] == '-')
        return NULL;
    char *o = malloc(n + 1);
    if (!o) {
        *oom = true;
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            o[k++] = s[i];
            continue;
        }
        if (++i >= n) {
            *bad = true;
            break;
        }
        switch (s[i]) {
        case '\\':
            o[k++] = '\\';
            break;
        case 't':
            o[k++] = '\t';
            break;
        case 'n':
            o[k++] = '\n';
            break;
        case 'r':
            o[k++] = '\r';
            break;
        case '-':
            o[k++] = '-';
            break;
        default:
            *bad = true;
        }
    }
    o[k] = '\0';
    if (memchr(s, '\0', n))
        *bad = true;
    return o;
}

rd_status rd_name_map_parse(const char *text, size_t len, const char *name, rd_name_map *out, rd_error *err)
{
    size_t lineno = 0;
    const char *p = text, *end = text + len;
    rd_status st = RD_OK;
    while (p < end && st == RD_OK) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        lineno++;
        size_t n = (size_t)(le - p);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (n > 0 && p[0] != '#') {
            const char *f[4];
            size_t fl[4];
            int nf = 0;
            const char *a = p;
            for (size_t i = 0; i <= n && nf < 5; i++) {
                if (i == n || p[i] == '\t') {
                    if (nf < 4) {
                        f[nf] = a;
                        fl[nf] = (size_t)(p + i - a);
                    }
                    nf++;
                    a = p + i + 1;
                }
            }
            if (nf != 4) {
                st = rd_errorf(err, RD_E_PARSE, "%s:%zu: expected 4 tab-separated fields, found %d", name, lineno, nf);
                break;
            }
            bool bad = false, oom = false;
            char *v[4];
            for (int i = 0; i < 4; i++)
                v[i] = get_field(f[i], fl[i], &bad, &oom);
            if (!v[0] && !oom)
                bad = true;
            if (oom)
                st = rd_errorf(err, RD_E_NOMEM, "%s:%zu: out of memory", name, lineno);
            else if (bad)
                st = rd_errorf(err, RD_E_PARSE, "%s:%zu: bad escape, NUL byte or missing tensor name", name, lineno);
            else
                st = rd_name_map_add(out, v[0], v[1], v[2], v[3], err);
            for (int i = 0; i < 4; i++)
                free(v[i]);
        }
        p = le + 1;
    }
    if (st != RD_OK)
        rd_name_map_fini(out);
    return st;
}

rd_status rd_name_map_load(const char *path, rd_name_map *out, rd_error *err)
{
    char *text;
    size_t len;
    rd_status st = rd_file_read_all(NULL, path, RD_MAX_RKNN_TXT_BYTES, &text, &len, err);
    if (st != RD_OK)
        return st;
    st = rd_name_map_parse(text, len, path, out, err);
    free(text);
    return st;
}

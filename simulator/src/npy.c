/*
 * npy.c: numpy .npy files, read and written without numpy.
 *
 * Layout (numpy's format.py): the magic "\x93NUMPY", a major and minor version byte, the header
 * length (2 bytes little-endian for 1.0, 4 bytes for 2.0 and 3.0), then a Python dict literal,
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }
 * padded with spaces and a '\n', then the raw data. 1.0 and 2.0 headers are latin-1, 3.0 headers
 * are utf-8: non-ASCII bytes only ever appear inside strings (field names of structured dtypes,
 * which we refuse as unsupported).
 *
 * The dict is read by a small parser of our own that accepts exactly the three keys in any order,
 * the spacing and trailing commas numpy writes, and nothing that needs a Python evaluator. Every
 * step is bounded by the header length and every size is checked against the data actually present
 * and against RD_MAX_TENSOR_BYTES before allocating. Byte offsets in messages are offsets in the
 * file, as `xxd` shows them. Big-endian data is swapped to little-endian and Fortran order is
 * transposed to C order on load; bool data is normalised to 0/1 bytes. The data must fill the rest of the
 * file exactly: np.load ignores bytes after it, but no writer puts any there, and a huge (sparse) file must
 * not pass for a small tensor. Files are read header first: every check is made before the data is
 * read, and the data is read once, into the tensor's own buffer (peak memory: the tensor).
 *
 * The writer produces what numpy.save produces byte for byte: version 1.0 (2.0 when the header
 * would not fit), C order, the header padded so that the data starts at a multiple of 64 bytes,
 * including the 21-digit growth space numpy reserves after the dict.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64         /* numpy's ARRAY_ALIGN: the data starts at a multiple of this */
#define NPY_GROWTH_DIGITS 21 /* numpy's GROWTH_AXIS_MAX_DIGITS: room to grow shape[0] in place */
#define NPY_DESCR_MAX 64     /* longest descr string kept (longer ones are unsupported anyway) */
#define NPY_NEST_MAX 32      /* deepest bracket nesting skipped inside a structured descr */
/* header room a file may have on top of RD_MAX_TENSOR_BYTES of data */
#define NPY_FILE_SLACK ((uint64_t)64 << 20)
/* longest header a file may have (numpy writes a few hundred bytes; its own reader stops at 10,000) */
#define NPY_HEADER_MAX (1 << 20)

/* A read position inside the header dict. */
typedef struct hdr_cursor {
    const uint8_t *p; /* the whole file image */
    size_t pos;       /* current offset in the file */
    size_t end;       /* one past the last header byte */
    const char *name; /* file name for messages */
    rd_error *err;
} hdr_cursor;

/* What the dict said. */
typedef struct npy_header {
    char descr[NPY_DESCR_MAX]; /* the descr string when it is one */
    bool descr_truncated;      /* longer than NPY_DESCR_MAX - 1 */
    bool structured;           /* descr was a list of fields */
    bool fortran;
    int rank;
    int64_t dims[RD_MAX_RANK];
    bool have_descr, have_fortran, have_shape;
} npy_header;

/* The dtypes .npy can carry for us: numpy kind letter and size. */
typedef struct npy_kind {
    char kind;
    int size;
    rd_dtype dtype;
} npy_kind;

static const npy_kind npy_kinds[] = {
    {'f', 2, RD_DT_F16}, {'f', 4, RD_DT_F32}, {'f', 8, RD_DT_F64}, {'i', 1, RD_DT_I8},
    {'i', 2, RD_DT_I16}, {'i', 4, RD_DT_I32}, {'i', 8, RD_DT_I64}, {'u', 1, RD_DT_U8},
    {'u', 2, RD_DT_U16}, {'u', 4, RD_DT_U32}, {'u', 8, RD_DT_U64}, {'b', 1, RD_DT_BOOL},
};

/* ---------------------------------------------------------------------------------------------------
 * Header dict parser.
 */

/* "name: header byte N: <what>" at the cursor's position. */
__attribute__((format(printf, 3, 4))) static rd_status hdr_fail(const hdr_cursor *c, rd_status code, const char *fmt,
                                                                ...)
{
    char what[RD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rd_errorf(c->err, code, "%s: header byte %zu: %s", c->name, c->pos, what);
}

/* The next byte, or -1 at the end of the header. */
static int peek(const hdr_cursor *c)
{
    return c->pos < c->end ? c->p[c->pos] : -1;
}

/* Describes a byte for messages: "'x'", "byte 0x93" or "the end of the header". */
static const char *describe(int ch, char *buf, size_t len)
{
    if (ch < 0)
        snprintf(buf, len, "the end of the header");
    else if (ch >= 0x20 && ch < 0x7f)
        snprintf(buf, len, "'%c'", ch);
    else if (ch >= 0x80)
        snprintf(buf, len, "non-ASCII byte 0x%02x", (unsigned)ch);
    else
        snprintf(buf, len, "byte 0x%02x", (unsigned)ch);
    return buf;
}

/* Skips the whitespace Python allows between tokens inside brackets. */
static void skip_ws(hdr_cursor *c)
{
    int ch;
    while ((ch = peek(c)) == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f')
        c->pos++;
}

/* Consumes ch or fails naming what was expected and why. */
static rd_status expect(hdr_cursor *c, char ch, const char *why)
{
    skip_ws(c);
    int got = peek(c);
    if (got == ch) {
        c->pos++;
        return RD_OK;
    }
    char d[32];
    return hdr_fail(c, RD_E_PARSE, "expected '%c' %s, found %s", ch, why, describe(got, d, sizeof d));
}

/* Fails on a byte no header may hold outside a string (control or non-ASCII). */
static rd_status check_plain_byte(hdr_cursor *c)
{
    int ch = peek(c);
    if (ch >= 0x80)
        return hdr_fail(c, RD_E_PARSE, "non-ASCII byte 0x%02x outside a string", (unsigned)ch);
    return RD_OK;
}

/*
 * Reads a quoted string ('...' or "...") into out (truncated to cap-1 bytes, *truncated set).
 * Escapes are kept as written: no supported descr or key has one. Non-ASCII bytes (latin-1
 * in 1.0/2.0, utf-8 in 3.0) can only be field names of structured dtypes, which are refused later,
 * so they pass here.
 */
static rd_status parse_string(hdr_cursor *c, char *out, size_t cap, bool *truncated)
{
    skip_ws(c);
    size_t start = c->pos;
    int q = peek(c);
    if (q != '\'' && q != '"') {
        char d[32];
        return hdr_fail(c, RD_E_PARSE, "expected a quoted string, found %s", describe(q, d, sizeof d));
    }
    c->pos++;
    size_t n = 0;
    *truncated = false;
    for (;;) {
        int ch = peek(c);
        if (ch < 0 || ch == '\n') {
            c->pos = start;
            return hdr_fail(c, RD_E_PARSE, "unterminated string");
        }
        if (ch < 0x20)
            return hdr_fail(c, RD_E_PARSE, "control byte 0x%02x in a string", (unsigned)ch);
        c->pos++;
        if (ch == q)
            break;
        if (n + 1 < cap)
            out[n++] = (char)ch;
        else
            *truncated = true;
        if (ch == '\\' && peek(c) >= 0x20) { /* keep the escaped byte, so \' does not end it */
            if (n + 1 < cap)
                out[n++] = (char)peek(c);
            else
                *truncated = true;
            c->pos++;
        }
    }
    if (cap)
        out[n] = '\0';
    return RD_OK;
}

/* Skips a bracketed value ([...], (...) or {...}, nested) such as a structured descr. */
static rd_status skip_bracketed(hdr_cursor *c)
{
    char closers[NPY_NEST_MAX];
    int depth = 0;
    size_t start = c->pos;
    do {
        int ch = peek(c);
        if (ch < 0) {
            c->pos = start;
            return hdr_fail(c, RD_E_PARSE, "unterminated bracket");
        }
        if (ch == '\'' || ch == '"') {
            char tmp[1];
            bool trunc;
            rd_status st = parse_string(c, tmp, sizeof tmp, &trunc);
            if (st != RD_OK)
                return st;
            continue;
        }
        rd_status st = check_plain_byte(c);
        if (st != RD_OK)
            return st;
        if (ch == '[' || ch == '(' || ch == '{') {
            if (depth == NPY_NEST_MAX)
                return hdr_fail(c, RD_E_PARSE, "brackets nested deeper than %d", NPY_NEST_MAX);
            closers[depth++] = ch == '[' ? ']' : ch == '(' ? ')' : '}';
        } else if (ch == ']' || ch == ')' || ch == '}') {
            if (depth == 0 || closers[depth - 1] != ch)
                return hdr_fail(c, RD_E_PARSE, "unbalanced '%c'", ch);
            depth--;
        }
        c->pos++;
    } while (depth > 0);
    return RD_OK;
}

/* Reads the descr value: a dtype string, or a list for structured dtypes (skipped, unsupported). */
static rd_status parse_descr(hdr_cursor *c, npy_header *h)
{
    skip_ws(c);
    int ch = peek(c);
    if (ch == '[') {
        h->structured = true;
        return skip_bracketed(c);
    }
    if (ch != '\'' && ch != '"') {
        char d[32];
        return hdr_fail(c, RD_E_PARSE, "'descr' must be a string, found %s", describe(ch, d, sizeof d));
    }
    return parse_string(c, h->descr, sizeof h->descr, &h->descr_truncated);
}

/* Reads True or False. */
static rd_status parse_fortran(hdr_cursor *c, npy_header *h)
{
    skip_ws(c);
    size_t left = c->end - c->pos;
    const char *s = (const char *)c->p + c->pos;
    if (left >= 4 && memcmp(s, "True", 4) == 0) {
        h->fortran = true;
        c->pos += 4;
    } else if (left >= 5 && memcmp(s, "False", 5) == 0) {
        h->fortran = false;
        c->pos += 5;
    } else {
        char d[32];
        return hdr_fail(c, RD_E_PARSE, "'fortran_order' must be True or False, found %s",
                        describe(peek(c), d, sizeof d));
    }
    int next = peek(c);
    if ((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || next == '_' || (next >= '0' && next <= '9'))
        return hdr_fail(c, RD_E_PARSE, "'fortran_order' must be True or False");
    return RD_OK;
}

/* Reads one dimension: a non-negative decimal integer (Python 2's 'L' suffix allowed). */
static rd_status parse_dim(hdr_cursor *c, int64_t *out)
{
    skip_ws(c);
    size_t start = c->pos;
    bool neg = false;
    if (peek(c) == '-') {
        neg = true;
        c->pos++;
    }
    int ch = peek(c);
    if (ch < '0' || ch > '9') {
        char d[32];
        c->pos = start;
        return hdr_fail(c, RD_E_PARSE, "expected a dimension in 'shape', found %s", describe(peek(c), d, sizeof d));
    }
    int64_t v = 0;
    bool overflow = false;
    while ((ch = peek(c)) >= '0' && ch <= '9') {
        if (!overflow && (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, ch - '0', &v)))
            overflow = true;
        c->pos++;
    }
    if (peek(c) == 'L' || peek(c) == 'l')
        c->pos++;
    size_t stop = c->pos;
    c->pos = start;
    if (neg && (v || overflow)) /* "-0" is just 0 to Python */
        return hdr_fail(c, RD_E_PARSE, "negative dimension %.*s in 'shape'", (int)(stop - start),
                        (const char *)c->p + start);
    if (overflow)
        return hdr_fail(c, RD_E_PARSE, "dimension %.*s in 'shape' does not fit in 64 bits", (int)(stop - start),
                        (const char *)c->p + start);
    c->pos = stop;
    *out = v;
    return RD_OK;
}

/* Reads the shape tuple: (), (3,), (2, 3) or (2, 3,), as Python writes tuples. */
static rd_status parse_shape(hdr_cursor *c, npy_header *h)
{
    rd_status st = expect(c, '(', "to start the 'shape' tuple");
    if (st != RD_OK)
        return st;
    h->rank = 0;
    skip_ws(c);
    if (peek(c) == ')') {
        c->pos++;
        return RD_OK;
    }
    for (;;) {
        if (h->rank == RD_MAX_RANK)
            return hdr_fail(c, RD_E_LIMIT, "'shape' has more than %d dimensions", RD_MAX_RANK);
        st = parse_dim(c, &h->dims[h->rank]);
        if (st != RD_OK)
            return st;
        h->rank++;
        skip_ws(c);
        int ch = peek(c);
        if (ch == ')') {
            if (h->rank == 1)
                return hdr_fail(c, RD_E_PARSE, "'shape' (n) is not a tuple: a 1-d shape is written (n,)");
            c->pos++;
            return RD_OK;
        }
        st = expect(c, ',', "or ')' after a dimension in 'shape'");
        if (st != RD_OK)
            return st;
        skip_ws(c);
        if (peek(c) == ')') {
            c->pos++;
            return RD_OK;
        }
    }
}

/* Reads one "'key': value" pair into h. */
static rd_status parse_entry(hdr_cursor *c, npy_header *h)
{
    char key[32];
    bool trunc;
    skip_ws(c);
    size_t key_pos = c->pos;
    rd_status st = parse_string(c, key, sizeof key, &trunc);
    if (st != RD_OK)
        return st;
    bool *seen;
    if (!trunc && strcmp(key, "descr") == 0)
        seen = &h->have_descr;
    else if (!trunc && strcmp(key, "fortran_order") == 0)
        seen = &h->have_fortran;
    else if (!trunc && strcmp(key, "shape") == 0)
        seen = &h->have_shape;
    else {
        c->pos = key_pos;
        return hdr_fail(c, RD_E_PARSE,
                        "unexpected key '%s%s' (an .npy header has 'descr', "
                        "'fortran_order' and 'shape')",
                        key, trunc ? "..." : "");
    }
    if (*seen) {
        c->pos = key_pos;
        return hdr_fail(c, RD_E_PARSE, "duplicate key '%s'", key);
    }
    *seen = true;
    char why[64];
    snprintf(why, sizeof why, "after key '%s'", key);
    st = expect(c, ':', why);
    if (st != RD_OK)
        return st;
    if (seen == &h->have_descr)
        return parse_descr(c, h);
    if (seen == &h->have_fortran)
        return parse_fortran(c, h);
    return parse_shape(c, h);
}

/* Parses the whole dict between c->pos and c->end. */
static rd_status parse_dict(hdr_cursor *c, npy_header *h)
{
    memset(h, 0, sizeof *h);
    size_t dict_pos = c->pos;
    rd_status st = expect(c, '{', "to start the header dict");
    if (st != RD_OK)
        return st;
    skip_ws(c);
    if (peek(c) != '}') {
        for (;;) {
            st = parse_entry(c, h);
            if (st != RD_OK)
                return st;
            skip_ws(c);
            if (peek(c) == '}')
                break;
            st = expect(c, ',', "or '}' after a value");
            if (st != RD_OK)
                return st;
            skip_ws(c);
            if (peek(c) == '}')
                break;
        }
    }
    c->pos++; /* the '}' */
    skip_ws(c);
    if (c->pos < c->end) {
        char d[32];
        return hdr_fail(c, RD_E_PARSE, "unexpected %s after the header dict", describe(peek(c), d, sizeof d));
    }
    const char *missing = !h->have_descr     ? "descr"
                          : !h->have_fortran ? "fortran_order"
                          : !h->have_shape   ? "shape"
                                             : NULL;
    if (missing) {
        c->pos = dict_pos;
        return hdr_fail(c, RD_E_PARSE, "the header dict has no '%s' key", missing);
    }
    return RD_OK;
}

/* Maps a descr string to a dtype; *swap when the data is big-endian and wider than a byte. */
static bool descr_dtype(const char *descr, rd_dtype *out, bool *swap)
{
    const char *s = descr;
    char order = '=';
    if (*s == '<' || *s == '>' || *s == '|' || *s == '=')
        order = *s++;
    char kind = *s++;
    if (kind == '\0' || s[0] < '1' || s[0] > '8' || s[1] != '\0')
        return false;
    int size = s[0] - '0';
    for (size_t i = 0; i < sizeof npy_kinds / sizeof npy_kinds[0]; i++) {
        if (npy_kinds[i].kind == kind && npy_kinds[i].size == size) {
            *out = npy_kinds[i].dtype;
            *swap = order == '>' && size > 1;
            return true;
        }
    }
    return false;
}

/* ---------------------------------------------------------------------------------------------------
 * Data conversion.
 */

/* Reverses the bytes of each of n elements of the given size (2, 4 or 8). */
static void byteswap(uint8_t *d, size_t n, size_t size)
{
    for (size_t i = 0; i < n; i++, d += size) {
        for (size_t a = 0, b = size - 1; a < b; a++, b--) {
            uint8_t t = d[a];
            d[a] = d[b];
            d[b] = t;
        }
    }
}

/* Copies Fortran-ordered src into C-ordered dst: walks dst in order, tracking the source offset. */
static void fortran_to_c(uint8_t *dst, const uint8_t *src, int rank, const int64_t *dims, size_t n, size_t size)
{
    size_t fstride[RD_MAX_RANK];
    size_t idx[RD_MAX_RANK] = {0};
    size_t s = 1;
    for (int k = 0; k < rank; k++) { /* the first axis varies fastest in Fortran order */
        fstride[k] = s;
        s *= (size_t)dims[k];
    }
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(dst + i * size, src + off * size, size);
        for (int k = rank - 1; k >= 0; k--) {
            off += fstride[k];
            if (++idx[k] < (size_t)dims[k])
                break;
            off -= fstride[k] * (size_t)dims[k];
            idx[k] = 0;
        }
    }
}

/* ---------------------------------------------------------------------------------------------------
 * Reading: the header first, checked against the file's size (and what the caller expects) before any
 * allocation; then the data once, straight into the tensor's own buffer.
 */

static uint32_t read_le(const uint8_t *p, int n)
{
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* What a header says about the data that follows it. */
typedef struct npy_layout {
    rd_dtype dtype;
    bool swap;    /* big-endian data wider than a byte */
    bool fortran; /* Fortran order with rank > 1: transposed on load */
    int rank;
    int64_t dims[RD_MAX_RANK];
    size_t data_off; /* file offset of the first data byte */
    size_t bytes;    /* data bytes the shape needs */
} npy_layout;

/* Checks the magic and version in p (the first bytes of a file of file_len bytes); *prefix is the length of
   what comes before the header dict (magic, version, header length). */
static rd_status npy_prefix(const uint8_t *p, uint64_t file_len, const char *name, size_t *prefix, rd_error *err)
{
    if (file_len < NPY_MAGIC_LEN || memcmp(p, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return rd_errorf(err, RD_E_PARSE, "%s: not an .npy file: bad magic at byte 0 (expected \\x93NUMPY)", name);
    if (file_len < NPY_MAGIC_LEN + 2)
        return rd_errorf(err, RD_E_PARSE, "%s: truncated at byte %llu: no format version", name,
                         (unsigned long long)file_len);
    unsigned major = p[6], minor = p[7];
    if (major < 1 || major > 3 || minor != 0)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: byte 6: unsupported .npy format version %u.%u (known: 1.0, 2.0, 3.0)", name, major,
                         minor);
    size_t len_size = major == 1 ? 2 : 4;
    *prefix = NPY_MAGIC_LEN + 2 + len_size;
    if (file_len < *prefix)
        return rd_errorf(err, RD_E_PARSE, "%s: truncated at byte %llu: the header length needs %zu bytes at byte 8",
                         name, (unsigned long long)file_len, len_size);
    return RD_OK;
}

/*
 * Parses the header in p (the file's first bytes, at least up to the end of the header) of a file of
 * file_len bytes: the dtype and shape must be ones we hold, and the data must fill the rest of the file
 * exactly (a shorter file is truncated; a longer one carries bytes no writer puts there, and a huge sparse
 * file must not pass for a small tensor).
 */
static rd_status npy_read_header(const uint8_t *p, uint64_t file_len, const char *name, npy_layout *h, rd_error *err)
{
    memset(h, 0, sizeof *h);
    size_t prefix;
    rd_status st = npy_prefix(p, file_len, name, &prefix, err);
    if (st != RD_OK)
        return st;
    size_t hlen = read_le(p + 8, prefix == 10 ? 2 : 4);
    if (hlen > file_len - prefix)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: byte 8: header length %zu runs past the end of the file (%llu bytes after byte %zu)",
                         name, hlen, (unsigned long long)(file_len - prefix), prefix);
    h->data_off = prefix + hlen;

    hdr_cursor c = {.p = p, .pos = prefix, .end = h->data_off, .name = name, .err = err};
    npy_header dict;
    st = parse_dict(&c, &dict);
    if (st != RD_OK)
        return st;
    if (dict.structured)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: unsupported structured dtype (descr is a list of fields)", name);
    if (dict.descr_truncated || !descr_dtype(dict.descr, &h->dtype, &h->swap))
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: unsupported dtype '%s%s' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, either byte "
                         "order)",
                         name, dict.descr, dict.descr_truncated ? "..." : "");
    h->fortran = dict.fortran && dict.rank > 1;
    h->rank = dict.rank;
    memcpy(h->dims, dict.dims, sizeof h->dims);
    st = rd_shape_bytes(h->dtype, h->rank, h->dims, &h->bytes, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s: header 'shape'", name);
    uint64_t avail = file_len - h->data_off;
    if (avail < h->bytes)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: truncated data: %s shape needs %zu bytes after the header at byte %zu, the file has %llu",
                         name, rd_dtype_name(h->dtype), h->bytes, h->data_off, (unsigned long long)avail);
    if (avail > h->bytes)
        return rd_errorf(
            err, RD_E_PARSE,
            "%s: %llu bytes after the data: the %s shape in the header needs %zu bytes after byte %zu, the "
            "file has %llu (a damaged file, or a header that understates its data)",
            name, (unsigned long long)(avail - h->bytes), rd_dtype_name(h->dtype), h->bytes, h->data_off,
            (unsigned long long)avail);
    return RD_OK;
}

/* "1x3x?x?" for an expected shape (-1: any). */
static const char *want_shape_str(const rd_npy_expect *w, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (w->rank == 0)
        snprintf(buf, len, "scalar");
    for (int d = 0; d < w->rank && used < len; d++) {
        int k = w->dims[d] < 0 ? snprintf(buf + used, len - used, "%s?", d ? "x" : "")
                               : snprintf(buf + used, len - used, "%s%lld", d ? "x" : "", (long long)w->dims[d]);
        if (k > 0)
            used += (size_t)k;
    }
    return buf;
}

/* The caller's expectation (may be NULL) against the header. */
static rd_status npy_check_expect(const npy_layout *h, const rd_npy_expect *w, const char *name, rd_error *err)
{
    if (!w)
        return RD_OK;
    const char *what = w->what ? w->what : "the caller";
    if (w->dtype != RD_DT_UNDEFINED && h->dtype != w->dtype)
        return rd_errorf(err, RD_E_INVAL, "%s: the header's dtype is %s, %s needs %s", name, rd_dtype_name(h->dtype),
                         what, rd_dtype_name(w->dtype));
    bool ok = w->rank < 0 || w->rank == h->rank;
    for (int d = 0; ok && w->rank > 0 && d < w->rank; d++)
        ok = w->dims[d] < 0 || w->dims[d] == h->dims[d];
    char got[RD_MAX_RANK * 21 + 8], want[RD_MAX_RANK * 21 + 8];
    rd_tensor shape = {.dtype = h->dtype, .rank = h->rank};
    memcpy(shape.dims, h->dims, sizeof shape.dims);
    if (!ok)
        return rd_errorf(err, RD_E_INVAL, "%s: the header's shape is %s, %s must have shape %s", name,
                         rd_shape_str(&shape, got, sizeof got), what, want_shape_str(w, want, sizeof want));
    int64_t numel = rd_tensor_numel(&shape);
    if (w->numel > 0 && numel != w->numel)
        return rd_errorf(err, RD_E_INVAL, "%s: the header's shape is %s (%lld elements), %s has %lld", name,
                         rd_shape_str(&shape, got, sizeof got), (long long)numel, what, (long long)w->numel);
    return RD_OK;
}

/* Byte order and bool normalisation of n elements in place. */
static void npy_fix_data(uint8_t *d, const npy_layout *h, size_t n)
{
    size_t size = rd_dtype_get(h->dtype)->size;
    if (h->swap)
        byteswap(d, n, size);
    if (h->dtype == RD_DT_BOOL)
        for (size_t i = 0; i < n; i++)
            d[i] = d[i] != 0;
}

/* A tensor for the header's shape, filled from src (C or Fortran order). */
static rd_status npy_fill(const npy_layout *h, const uint8_t *src, const char *name, rd_tensor *out, rd_error *err)
{
    rd_status st = rd_tensor_alloc(out, h->dtype, h->rank, h->dims, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", name);
    size_t size = rd_dtype_get(h->dtype)->size, n = h->bytes / size;
    if (!n)
        return RD_OK;
    if (h->fortran)
        fortran_to_c(out->data, src, h->rank, h->dims, n, size);
    else
        memcpy(out->data, src, h->bytes);
    npy_fix_data(out->data, h, n);
    return RD_OK;
}

rd_status rd_npy_parse(const void *buf, size_t len, const char *name, rd_tensor *out, rd_error *err)
{
    if (!name)
        name = "<npy>";
    if (!out || (!buf && len))
        return rd_errorf(err, RD_E_INVAL, "%s: rd_npy_parse needs a buffer and an output tensor", name);
    memset(out, 0, sizeof *out);
    out->dtype = RD_DT_F32;
    npy_layout h;
    rd_status st = npy_read_header(buf ? buf : "", len, name, &h, err);
    if (st != RD_OK)
        return st;
    return npy_fill(&h, (const uint8_t *)buf + h.data_off, name, out, err);
}

/* Reads exactly n bytes at offset off of fd into buf. */
static rd_status read_at(int fd, void *buf, size_t n, uint64_t off, const char *path, rd_error *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return rd_errorf(err, RD_E_IO, "%s: read failed at byte %llu: %s", path, (unsigned long long)(off + got),
                             r < 0 ? strerror(errno) : "the file shrank while reading");
        got += (size_t)r;
    }
    return RD_OK;
}

/*
 * Loads the .npy open as fd (size bytes): the prefix and the header first (a header above NPY_HEADER_MAX is
 * refused: numpy writes a few hundred bytes), every check, then the data read once into the tensor (C
 * order) or through one buffer of the data's size (Fortran order, which numpy writes only when asked).
 */
static rd_status npy_load_fd(int fd, uint64_t size, const char *path, const rd_npy_expect *want, rd_tensor *out,
                             rd_error *err)
{
    uint8_t first[12] = {0};
    rd_status st = read_at(fd, first, size < sizeof first ? (size_t)size : sizeof first, 0, path, err);
    size_t prefix = 0;
    if (st == RD_OK)
        st = npy_prefix(first, size, path, &prefix, err);
    if (st != RD_OK)
        return st;
    size_t hlen = read_le(first + 8, prefix == 10 ? 2 : 4);
    if (hlen <= size - prefix && hlen > NPY_HEADER_MAX) /* (past the end: npy_read_header says so) */
        return rd_errorf(err, RD_E_LIMIT, "%s: byte 8: a header of %zu bytes is above the %d-byte limit", path, hlen,
                         NPY_HEADER_MAX);
    uint64_t head_len = prefix + hlen < size ? prefix + hlen : size;
    uint8_t *head = malloc((size_t)head_len + 1);
    if (!head)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory for the header", path);
    npy_layout h;
    st = read_at(fd, head, (size_t)head_len, 0, path, err);
    if (st == RD_OK)
        st = npy_read_header(head, size, path, &h, err);
    free(head);
    if (st == RD_OK)
        st = npy_check_expect(&h, want, path, err);
    if (st != RD_OK)
        return st;
    if (h.fortran) {
        uint8_t *src = malloc(h.bytes);
        if (!src)
            return rd_errorf(err, RD_E_NOMEM, "%s: cannot allocate %zu bytes to read it", path, h.bytes);
        st = read_at(fd, src, h.bytes, h.data_off, path, err);
        if (st == RD_OK)
            st = npy_fill(&h, src, path, out, err);
        free(src);
        return st;
    }
    st = rd_tensor_alloc(out, h.dtype, h.rank, h.dims, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", path);
    if (h.bytes)
        st = read_at(fd, out->data, h.bytes, h.data_off, path, err);
    if (st != RD_OK) {
        rd_tensor_fini(out);
        return st;
    }
    npy_fix_data(out->data, &h, h.bytes / rd_dtype_get(h.dtype)->size);
    return RD_OK;
}

rd_status rd_npy_load_expect(const char *path, const rd_npy_expect *want, rd_tensor *out, rd_error *err)
{
    if (!path || !out)
        return rd_errorf(err, RD_E_INVAL, "rd_npy_load needs a path and an output tensor");
    memset(out, 0, sizeof *out);
    out->dtype = RD_DT_F32;
    int fd = -1;
    uint64_t size = 0;
    rd_status st = rd_file_open_read(path, 0, RD_MAX_TENSOR_BYTES + NPY_FILE_SLACK, &fd, &size, err);
    if (st != RD_OK)
        return st;
    st = npy_load_fd(fd, size, path, want, out, err);
    close(fd);
    return st;
}

rd_status rd_npy_load_within(const char *dir, const char *rel, const rd_npy_expect *want, rd_tensor *out, rd_error *err)
{
    if (!dir || !rel || !out)
        return rd_errorf(err, RD_E_INVAL, "rd_npy_load_within needs a folder, a path and an output tensor");
    memset(out, 0, sizeof *out);
    out->dtype = RD_DT_F32;
    int fd = -1;
    uint64_t size = 0;
    rd_status st = rd_file_open_within(dir, rel, RD_MAX_TENSOR_BYTES + NPY_FILE_SLACK, &fd, &size, err);
    if (st != RD_OK)
        return st;
    char name[4200];
    snprintf(name, sizeof name, "%s/%s", dir, rel);
    st = npy_load_fd(fd, size, name, want, out, err);
    close(fd);
    return st;
}

rd_status rd_npy_load(const char *path, rd_tensor *out, rd_error *err)
{
    return rd_npy_load_expect(path, NULL, out, err);
}

rd_status sim_input_file_load(const char *path, size_t max_other, const rd_npy_expect *want, bool *is_npy,
                              rd_tensor *npy, char **other, size_t *other_len, rd_error *err)
{
    *is_npy = false;
    *other = NULL;
    *other_len = 0;
    memset(npy, 0, sizeof *npy);
    int fd = -1;
    uint64_t size = 0;
    rd_status st = rd_file_open_read(path, 0, UINT64_MAX, &fd, &size, err);
    if (st != RD_OK)
        return st;
    uint8_t magic[NPY_MAGIC_LEN] = {0};
    if (size >= NPY_MAGIC_LEN)
        st = read_at(fd, magic, NPY_MAGIC_LEN, 0, path, err);
    *is_npy = st == RD_OK && memcmp(magic, NPY_MAGIC, NPY_MAGIC_LEN) == 0;
    if (st == RD_OK && *is_npy) {
        st = size > RD_MAX_TENSOR_BYTES + NPY_FILE_SLACK
                 ? rd_errorf(err, RD_E_LIMIT, "%s: file of %llu bytes exceeds the %llu-byte tensor limit", path,
                             (unsigned long long)size, (unsigned long long)RD_MAX_TENSOR_BYTES)
                 : npy_load_fd(fd, size, path, want, npy, err);
    } else if (st == RD_OK && !sim_image_signature(magic, size < NPY_MAGIC_LEN ? (size_t)size : NPY_MAGIC_LEN)) {
        rd_tensor none; /* neither an .npy nor an image: refused on the bytes read, with the decoder's message */
        st = rd_image_parse(magic, size < NPY_MAGIC_LEN ? (size_t)size : NPY_MAGIC_LEN, path, 0, &none, err);
    } else if (st == RD_OK && size > max_other) {
        st = rd_errorf(err, RD_E_LIMIT, "%s: %llu bytes is above the limit of %zu bytes for this kind of file", path,
                       (unsigned long long)size, max_other);
    } else if (st == RD_OK) {
        *other = malloc((size_t)size + 1);
        if (!*other)
            st = rd_errorf(err, RD_E_NOMEM, "%s: cannot allocate %llu bytes", path, (unsigned long long)size + 1);
        else if ((st = read_at(fd, *other, (size_t)size, 0, path, err)) == RD_OK) {
            (*other)[size] = '\0';
            *other_len = (size_t)size;
        } else {
            free(*other);
            *other = NULL;
        }
    }
    close(fd);
    return st;
}

/* ---------------------------------------------------------------------------------------------------
 * Writing.
 */

/* Appends formatted text to buf at *used (bounded; callers size buf for the worst case). */
__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t cap, size_t *used, const char *fmt, ...)
{
    if (*used >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *used, cap - *used, fmt, ap);
    va_end(ap);
    if (w > 0)
        *used += (size_t)w < cap - *used ? (size_t)w : cap - *used - 1;
}

/* The dict as numpy's _write_array_header writes it: sorted keys, repr values, growth spaces. */
static size_t format_dict(const rd_tensor *t, const char *descr, char *buf, size_t cap)
{
    size_t used = 0;
    append(buf, cap, &used, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < t->rank; i++)
        append(buf, cap, &used, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
    append(buf, cap, &used, "%s), }", t->rank == 1 ? "," : "");
    if (t->rank > 0) {
        char first[32];
        int digits = snprintf(first, sizeof first, "%lld", (long long)t->dims[0]);
        for (int i = digits; i < NPY_GROWTH_DIGITS; i++)
            append(buf, cap, &used, " ");
    }
    return used;
}

rd_status rd_npy_write(const rd_tensor *t, void **out_buf, size_t *out_len, rd_error *err)
{
    if (!t || !out_buf || !out_len)
        return rd_errorf(err, RD_E_INVAL, "rd_npy_write needs a tensor and output pointers");
    *out_buf = NULL;
    *out_len = 0;
    const rd_dtype_info *info = rd_dtype_get(t->dtype);
    if (!info->supported || !info->npy)
        return rd_errorf(err, RD_E_UNSUPPORTED, "cannot write %s as .npy: numpy has no such dtype", info->name);
    size_t bytes;
    rd_status st = rd_shape_bytes(t->dtype, t->rank, t->dims, &bytes, err);
    if (st != RD_OK)
        return st;
    if (bytes && !t->data)
        return rd_errorf(err, RD_E_INVAL, "cannot write a %zu-byte tensor with no data", bytes);

    char dict[512]; /* worst case: 8 dims of 20 characters plus the fixed text, well under this */
    size_t dlen = format_dict(t, info->npy, dict, sizeof dict);
    size_t hlen = dlen + 1; /* the final '\n' */
    size_t len_size = 2;
    size_t pad = NPY_ALIGN - (NPY_MAGIC_LEN + 2 + len_size + hlen) % NPY_ALIGN;
    if (hlen + pad > 0xffff) { /* numpy falls back to 2.0 only when 1.0's length cannot hold it */
        len_size = 4;
        pad = NPY_ALIGN - (NPY_MAGIC_LEN + 2 + len_size + hlen) % NPY_ALIGN;
    }
    size_t header = NPY_MAGIC_LEN + 2 + len_size + hlen + pad;
    size_t total;
    if (__builtin_add_overflow(header, bytes, &total))
        return rd_errorf(err, RD_E_LIMIT, "an .npy of %zu data bytes does not fit in memory", bytes);
    uint8_t *b = malloc(total);
    if (!b)
        return rd_errorf(err, RD_E_NOMEM, "cannot allocate %zu bytes for an .npy image", total);
    memcpy(b, NPY_MAGIC, NPY_MAGIC_LEN);
    b[6] = len_size == 2 ? 1 : 2;
    b[7] = 0;
    uint32_t field = (uint32_t)(hlen + pad);
    for (size_t i = 0; i < len_size; i++)
        b[8 + i] = (uint8_t)(field >> (8 * i));
    size_t pos = NPY_MAGIC_LEN + 2 + len_size;
    memcpy(b + pos, dict, dlen);
    pos += dlen;
    memset(b + pos, ' ', pad);
    pos += pad;
    b[pos++] = '\n';
    if (bytes) {
        memcpy(b + pos, t->data, bytes);
        if (t->dtype == RD_DT_BOOL)
            for (size_t i = 0; i < bytes; i++)
                b[pos + i] = b[pos + i] != 0;
    }
    *out_buf = b;
    *out_len = total;
    return RD_OK;
}

rd_status rd_npy_save(const char *path, const rd_tensor *t, rd_error *err)
{
    if (!path)
        return rd_errorf(err, RD_E_INVAL, "rd_npy_save needs a path");
    void *img;
    size_t len;
    rd_status st = rd_npy_write(t, &img, &len, err);
    return sim_save_written(st, path, img, len, true, err);
}

/*
 * perf_log.c: reading the RKNN runtime's per-layer performance table out of a log (perf_log.h).
 *
 * Cells before Time(us) are single words (shapes have no spaces, "\" marks an empty shape), so a row's
 * n-th word is the n-th header column there; cells after it may be blank (MacUsage) or hold spaces
 * ("0.0%/0.0%/0.0% - Up:0.0%"), which is why FullName is taken as the last word. Time(us) is first looked
 * for at the header's character position (exact), else by word index.
 */
#include "array_grow.h"
#include "perf_log.h"
#include "rknn_diag/rknn_model.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_COLS 64
#define MAX_WORDS 256

typedef struct word {
    size_t start, len;
} word;

typedef struct header {
    int line;
    int n_cols;
    size_t col_start[MAX_COLS];
    int c_op, c_dtype, c_target, c_time; /* column indices, -1 when absent */
} header;

void an_perf_log_init(an_perf_log *log)
{
    memset(log, 0, sizeof *log);
}

void an_perf_log_fini(an_perf_log *log)
{
    for (size_t i = 0; i < log->n_rows; i++)
        free(log->rows[i].full_name);
    free(log->rows);
    memset(log, 0, sizeof *log);
}

/*
 * Length of the log prefix: "D RKNN: [05:07:06.566] ", logcat's "... D RKNN    : ", then blanks. Offsets
 * of the header and of its rows are both taken after it, so alignment survives any prefix.
 */
static size_t prefix_len(const char *s, size_t n)
{
    size_t i = 0;
    for (size_t j = 0; j <= 64 && j + 4 <= n; j++) {
        if (memcmp(s + j, "RKNN", 4) != 0)
            continue;
        size_t k = j + 4;
        while (k < n && s[k] == ' ')
            k++;
        if (k < n && s[k] == ':') {
            i = k + 1;
            break;
        }
    }
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i < n && s[i] == '[') {
        size_t lim = n - i < 48 ? n - i : 48;
        const char *close = memchr(s + i, ']', lim);
        if (close)
            i = (size_t)(close - s) + 1;
    }
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

/* Splits s at blanks: up to max words kept in w; returns the count of all words; *last is the last one. */
static int split_words(const char *s, size_t n, word *w, int max, word *last)
{
    int count = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == n)
            break;
        size_t b = i;
        while (i < n && s[i] != ' ' && s[i] != '\t')
            i++;
        word x = {b, i - b};
        if (count < max)
            w[count] = x;
        *last = x;
        count++;
    }
    return count;
}

static bool word_is(const char *s, word w, const char *text)
{
    return w.len == strlen(text) && memcmp(s + w.start, text, w.len) == 0;
}

/* Only '-', '=', '>' and blanks (table rules, rknn_run's "---> "), or nothing. */
static bool is_rule(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr("-=> \t", s[i]))
            return false;
    return true;
}

/* Second words of the two-word column names of older runtimes: "DDR Cycles", "Task Number", ... */
static bool second_word(const char *s, word w)
{
    return word_is(s, w, "Cycles") || word_is(s, w, "Number") || word_is(s, w, "Size");
}

/* Reads a header line (after the prefix): false when s is not one. */
static bool parse_header(const char *s, size_t n, header *h)
{
    word w[MAX_WORDS], last = {0, 0};
    int nw = split_words(s, n, w, MAX_WORDS, &last);
    if (nw < 3 || nw > MAX_WORDS || !word_is(s, w[0], "ID") || !word_is(s, last, "FullName"))
        return false;
    bool has_op = false;
    h->n_cols = 0;
    h->c_op = h->c_dtype = h->c_target = h->c_time = -1;
    for (int i = 0; i < nw && h->n_cols < MAX_COLS; i++) {
        int c = h->n_cols++;
        h->col_start[c] = w[i].start;
        if (word_is(s, w[i], "OpType"))
            h->c_op = c, has_op = true;
        else if (word_is(s, w[i], "DataType"))
            h->c_dtype = c;
        else if (word_is(s, w[i], "Target"))
            h->c_target = c;
        else if (word_is(s, w[i], "Time(us)"))
            h->c_time = c;
        if (i + 1 < nw && second_word(s, w[i + 1]) && !word_is(s, w[i], "Time(us)"))
            i++; /* one column named by two words */
    }
    return has_op;
}

static bool parse_long(const char *s, word w, long *out)
{
    char buf[32];
    if (w.len == 0 || w.len >= sizeof buf)
        return false;
    memcpy(buf, s + w.start, w.len);
    buf[w.len] = '\0';
    char *end = NULL;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (errno || end != buf + w.len || buf[0] == '-' || buf[0] == '+')
        return false;
    *out = v;
    return true;
}

static bool parse_us(const char *s, word w, double *out)
{
    char buf[40];
    if (w.len == 0 || w.len >= sizeof buf || !(s[w.start] >= '0' && s[w.start] <= '9'))
        return false;
    memcpy(buf, s + w.start, w.len);
    buf[w.len] = '\0';
    char *end = NULL;
    double v = strtod(buf, &end);
    if (end != buf + w.len || !isfinite(v) || v < 0 || v > 1e12)
        return false;
    *out = v;
    return true;
}

static void copy_word(const char *s, word w, char *out, size_t cap)
{
    size_t n = w.len < cap - 1 ? w.len : cap - 1;
    memcpy(out, s + w.start, n);
    out[n] = '\0';
}

static an_perf_prec prec_of(const char *dtype)
{
    static const char *const int8_like[] = {"INT8", "UINT8", "INT4", "UINT4"};
    for (size_t i = 0; i < sizeof int8_like / sizeof int8_like[0]; i++)
        if (strcasecmp(dtype, int8_like[i]) == 0)
            return AN_PERF_INT8;
    if (strcasecmp(dtype, "FLOAT16") == 0 || strcasecmp(dtype, "FP16") == 0)
        return AN_PERF_FLOAT16;
    return AN_PERF_OTHER;
}

/* A data row of table h: false (nothing said) when s is not one (its first word is not a number). */
static rd_status parse_row(const char *s, size_t n, const header *h, int lineno, const char *what, an_perf_row *r,
                           bool *is_row, rd_error *err)
{
    word w[MAX_WORDS], last = {0, 0};
    int nw = split_words(s, n, w, MAX_WORDS, &last);
    *is_row = nw > 0 && parse_long(s, w[0], &r->id);
    if (!*is_row)
        return RD_OK;
    /* Time(us): the word starting at the header's position, else the word of its column index */
    int t = -1;
    double us = 0;
    for (int i = 1; i < nw && i < MAX_WORDS && t < 0; i++)
        if (w[i].start == h->col_start[h->c_time] && parse_us(s, w[i], &us))
            t = i;
    if (t < 0 && h->c_time < nw && h->c_time < MAX_WORDS && parse_us(s, w[h->c_time], &us))
        t = h->c_time;
    if (t < 0) {
        if (h->c_time >= nw)
            return rd_errorf(err, RD_E_PARSE, "%s:%d: table row with %d fields, the header (line %d) has %d columns",
                             what, lineno, nw, h->line, h->n_cols);
        char shown[40];
        copy_word(s, w[h->c_time < MAX_WORDS ? h->c_time : 0], shown, sizeof shown);
        return rd_errorf(err, RD_E_PARSE, "%s:%d: Time(us) '%s' is not a number of microseconds", what, lineno, shown);
    }
    if (nw - 1 <= t || h->c_dtype >= t || h->c_op >= t || h->c_target >= t)
        return rd_errorf(err, RD_E_PARSE, "%s:%d: table row without FullName after Time(us) (header at line %d)", what,
                         lineno, h->line);
    r->us = us;
    r->line = lineno;
    copy_word(s, w[h->c_op], r->op_type, sizeof r->op_type);
    copy_word(s, w[h->c_dtype], r->data_type, sizeof r->data_type);
    r->prec = prec_of(r->data_type);
    r->on_npu = h->c_target < 0 || strncasecmp(s + w[h->c_target].start, "NPU", 3) == 0;
    /* a row aligned with the header whose last word starts before the FullName column has a blank
       FullName (seen on some Conv rows of build logs) */
    bool aligned = w[t].start == h->col_start[h->c_time];
    size_t name_len = aligned && last.start < h->col_start[h->n_cols - 1] ? 0 : last.len;
    r->full_name = malloc(name_len + 1);
    if (!r->full_name)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    memcpy(r->full_name, s + last.start, name_len);
    r->full_name[name_len] = '\0';
    return RD_OK;
}

static rd_status push_row(an_perf_log *log, const an_perf_row *r, rd_error *err)
{
    rd_status st = an_array_grow(&log->rows, &log->cap, log->n_rows, sizeof *log->rows, 64, err);
    if (st != RD_OK)
        return st;
    log->rows[log->n_rows++] = *r;
    return RD_OK;
}

/* Ends the table whose rows start at first: kept when it has a non-zero time, else dropped as untimed. */
static void end_table(an_perf_log *log, size_t first, int header_line)
{
    bool timed = false;
    for (size_t i = first; i < log->n_rows; i++)
        timed = timed || log->rows[i].us > 0;
    if (timed) {
        log->n_tables++;
        return;
    }
    for (size_t i = first; i < log->n_rows; i++)
        free(log->rows[i].full_name);
    log->n_rows = first;
    if (log->n_untimed++ == 0)
        log->first_untimed_line = header_line;
}

bool an_perf_log_detect(const char *text, size_t len)
{
    char *buf = malloc(AN_PERF_LOG_MAX_LINE + 1);
    if (!buf)
        return false;
    bool found = false;
    for (size_t pos = 0; pos < len && !found;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - text) - pos : len - pos;
        if (n <= AN_PERF_LOG_MAX_LINE) {
            size_t k = rd_rknn_log_strip_escapes(text + pos, n, buf);
            size_t p = prefix_len(buf, k);
            header h;
            found = parse_header(buf + p, k - p, &h);
        }
        pos += n + 1;
    }
    free(buf);
    return found;
}

rd_status an_perf_log_parse(const char *text, size_t len, const char *what, an_perf_log *log, rd_error *err)
{
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        int line = 1;
        for (const char *q = text; q < nul; q++)
            line += *q == '\n';
        return rd_errorf(err, RD_E_PARSE,
                         "%s:%d: binary data (a NUL byte at offset %zu): expected the board's "
                         "RKNN_LOG_LEVEL=4 log as text",
                         what, line, (size_t)(nul - text));
    }
    if (len > AN_PERF_LOG_MAX_BYTES)
        return rd_errorf(err, RD_E_LIMIT, "%s: %zu bytes, more than the %zu a latency log may have", what, len,
                         AN_PERF_LOG_MAX_BYTES);
    char *buf = malloc(AN_PERF_LOG_MAX_LINE + 1);
    if (!buf)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_status st = RD_OK;
    header h;
    memset(&h, 0, sizeof h);
    bool in_table = false, rows_seen = false;
    size_t first = 0;
    int lineno = 0;
    for (size_t pos = 0; pos < len && st == RD_OK;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - text) - pos : len - pos;
        const char *raw = text + pos;
        pos += n + 1;
        lineno++;
        if (n > AN_PERF_LOG_MAX_LINE) {
            if (in_table)
                st = rd_errorf(err, RD_E_PARSE, "%s:%d: a line of %zu bytes inside the table (at most %d)", what,
                               lineno, n, AN_PERF_LOG_MAX_LINE);
            continue; /* outside a table: not ours */
        }
        size_t k = rd_rknn_log_strip_escapes(raw, n, buf);
        size_t p = prefix_len(buf, k);
        const char *s = buf + p;
        size_t sn = k - p;
        header next;
        if (parse_header(s, sn, &next)) {
            if (in_table)
                end_table(log, first, h.line);
            if (next.c_dtype < 0) {
                st = rd_errorf(err, RD_E_PARSE, "%s:%d: table header without a DataType column", what, lineno);
                break;
            }
            h = next;
            h.line = lineno;
            in_table = true;
            rows_seen = false;
            first = log->n_rows;
            if (h.c_time < 0) { /* the build-time table: no times to read */
                end_table(log, first, lineno);
                in_table = false;
            }
            continue;
        }
        if (!in_table)
            continue;
        if (is_rule(s, sn)) {
            if (rows_seen) {
                end_table(log, first, h.line);
                in_table = false;
            }
            continue;
        }
        an_perf_row r;
        memset(&r, 0, sizeof r);
        bool is_row = false;
        st = parse_row(s, sn, &h, lineno, what, &r, &is_row, err);
        if (st == RD_OK && !is_row) {
            end_table(log, first, h.line); /* a summary or another message: the table is over */
            in_table = false;
            continue;
        }
        r.table = log->n_tables;
        if (st == RD_OK)
            st = push_row(log, &r, err);
        if (st != RD_OK)
            free(r.full_name);
        rows_seen = true;
    }
    if (st == RD_OK && in_table)
        end_table(log, first, h.line);
    free(buf);
    if (st == RD_OK && log->n_tables == 0) {
        if (log->n_untimed)
            st = rd_errorf(err, RD_E_PARSE,
                           "%s:%d: the layer table there has no times (no Time(us) column, or all 0: "
                           "the toolkit's build-time table?); give the log of a board run with RKNN_LOG_LEVEL=4",
                           what, log->first_untimed_line);
        else
            st = rd_errorf(err, RD_E_PARSE,
                           "%s: no layer table (a header line 'ID OpType DataType Target ... "
                           "Time(us) ... FullName')",
                           what);
    }
    return st;
}

const char *an_perf_node_name(const char *full_name)
{
    const char *colon = strchr(full_name, ':');
    if (!colon || colon == full_name)
        return full_name;
    for (const char *q = full_name; q < colon; q++)
        if (!((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_'))
            return full_name; /* not an op type: the colon belongs to the name */
    return colon[1] ? colon + 1 : full_name;
}

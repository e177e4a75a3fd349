/*
 * log_table.c: the per-layer tables of build and board logs (section 2 of ../shared/docs/rknn-compiler.md)
 * and the "Operator Time Consuming Ranking Table".
 *
 * A layer row is recognised by its first six cells, which are single words in every layout seen:
 * ID (a number), OpType (an identifier), DataType (INT8, UINT8, FLOAT16, ...), Target (CPU, NPU, GPU),
 * InputShape and OutputShape ("(1,3,224,224),(32,3,3,3),(32)", "\" for none, ",..." when cut). So rows
 * are read with or without a header (public excerpts often lack it). With a header, Time(us) is the cell
 * at its column index (two-word names such as "DDR Cycles" count as one column). FullName is the last
 * word when it is not a number and either holds ':' ("Conv:Conv_0"; not the "Up:0.0%" of a WorkLoad cell)
 * or starts at the header's FullName column (rows whose FullName is blank end before it).
 *
 * Blank lines and "..." (the table was elided) keep a table open; any other line ends it, as does a rule
 * of dashes after its rows.
 */
#include "log_internal.h"

#include <math.h>

#define MAX_WORDS 96

enum { RK_CPU, RK_GPU, RK_NPU, RK_TOTAL, RK_RATIO, RK_COLS };

struct lg_tables {
    rd_rknn_log *log;
    bool open;   /* a layer table takes rows */
    bool header; /* ... that came with a header */
    int header_line;
    size_t time_col;   /* column index of Time(us), SIZE_MAX when absent */
    size_t name_start; /* position of FullName in the header */
    bool workload;     /* the header has WorkLoad: a board's table */
    bool rows_seen;
    bool rank_open;
    int rank_cols[RK_COLS];
    size_t n_rank_cols;
};

lg_tables *lg_tables_create(rd_rknn_log *log, rd_error *err)
{
    lg_tables *t = rk_alloc(&log->arena, sizeof *t, "tables", err);
    if (t)
        t->log = log;
    return t;
}

static bool word_is(const char *s, lg_word w, const char *text)
{
    return w.len == strlen(text) && memcmp(s + w.start, text, w.len) == 0;
}

static bool all_of(const char *s, lg_word w, const char *set)
{
    for (size_t i = 0; i < w.len; i++)
        if (!strchr(set, s[w.start + i]))
            return false;
    return w.len > 0;
}

#define UPPER "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define IDENT "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

static bool is_dtype(const char *s, lg_word w)
{
    static const char *const known[] = {"INT8",    "UINT8",    "INT4",  "UINT4",  "INT16",   "UINT16",
                                        "INT32",   "UINT32",   "INT64", "UINT64", "FLOAT16", "FLOAT",
                                        "FLOAT32", "BFLOAT16", "FP16",  "FP32",   "BOOL",    "BOOL8"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (word_is(s, w, known[i]))
            return true;
    return false;
}

static bool is_shape_cell(const char *s, lg_word w)
{
    return word_is(s, w, "\\") || (w.len >= 2 && s[w.start] == '(');
}

static bool parse_number(const char *s, lg_word w, double *out)
{
    char buf[48];
    if (w.len == 0 || w.len >= sizeof buf)
        return false;
    memcpy(buf, s + w.start, w.len);
    size_t n = w.len;
    if (buf[n - 1] == '%')
        n--;
    buf[n] = '\0';
    if (n == 0 || !(buf[0] == '-' || buf[0] == '.' || (buf[0] >= '0' && buf[0] <= '9')))
        return false;
    char *end;
    double v = strtod(buf, &end);
    if (end != buf + n || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* "(1,3,224,224),(32,3,3,3),(32)" into l; what does not parse is left out (the text is kept). */
static void parse_shapes(const char *s, size_t n, rd_rknn_shape_list *l)
{
    size_t i = 0;
    while (i < n && s[i] == '(' && l->n < 8) {
        size_t rank = 0;
        i++;
        while (i < n && s[i] != ')') {
            char *end;
            char num[24];
            size_t k = strspn(s + i, "-0123456789");
            if (k == 0 || k >= sizeof num || rank == RD_RKNN_MAX_RANK)
                return;
            memcpy(num, s + i, k);
            num[k] = '\0';
            l->dims[l->n][rank++] = strtoll(num, &end, 10);
            i += k;
            if (i < n && s[i] == ',')
                i++;
        }
        if (i >= n)
            return;
        l->rank[l->n++] = rank;
        i++; /* ')' */
        if (i < n && s[i] == ',')
            i++;
    }
    if (i + 3 <= n && memcmp(s + i, "...", 3) == 0)
        l->truncated = true;
    else if (i < n && s[i] == '(')
        l->truncated = true; /* more than 8 shapes */
}

static rd_status end_table(lg_tables *t, rd_error *err)
{
    if (!t->open)
        return RD_OK;
    t->open = false;
    rd_rknn_log *log = t->log;
    rd_rknn_layer_table *tab = (rd_rknn_layer_table *)log->tables.items + log->tables.n - 1;
    tab->n_rows = log->rows.n - tab->first_row;
    const rd_rknn_layer_row *rows = tab->n_rows ? (const rd_rknn_layer_row *)log->rows.items + tab->first_row : NULL;
    if (t->workload)
        tab->kind = RD_RKNN_TABLE_RUNTIME;
    else if (tab->n_rows && (rows[0].id == 0 || tab->kind == RD_RKNN_TABLE_BUILD))
        tab->kind = RD_RKNN_TABLE_BUILD;
    else if (tab->n_rows && rows[0].id == 1)
        tab->kind = RD_RKNN_TABLE_RUNTIME;
    rk_op_sample *samples = rk_alloc_array(&log->arena, tab->n_rows, sizeof *samples, "table summary", err);
    if (!samples)
        return err->code;
    for (size_t i = 0; i < tab->n_rows; i++) {
        const rd_rknn_layer_row *r = &rows[i];
        rd_rknn_target target = strcmp(r->target, "NPU") == 0   ? RD_RKNN_TARGET_NPU
                                : strcmp(r->target, "CPU") == 0 ? RD_RKNN_TARGET_CPU
                                                                : RD_RKNN_TARGET_OTHER;
        bool f16 = strcmp(r->data_type, "FLOAT16") == 0 || strcmp(r->data_type, "FP16") == 0;
        bool i8 = strcmp(r->data_type, "INT8") == 0 || strcmp(r->data_type, "UINT8") == 0;
        samples[i] = (rk_op_sample){r->op_type, target, f16, i8};
    }
    rd_rknn_op_count *ops;
    rd_status st = rk_count_ops(&log->arena, samples, tab->n_rows, &ops, &tab->n_ops, err);
    tab->ops = ops;
    return st;
}

static rd_status open_table(lg_tables *t, int header_line, bool rknn, rd_error *err)
{
    rd_rknn_layer_table *tab = rk_vec_push(&t->log->arena, &t->log->tables, LG_MAX_ENTRIES, "layer tables", err);
    if (!tab)
        return err->code;
    tab->header_line = header_line;
    tab->first_row = t->log->rows.n;
    tab->kind = rknn ? RD_RKNN_TABLE_BUILD : RD_RKNN_TABLE_UNKNOWN;
    t->open = true;
    t->rows_seen = false;
    return RD_OK;
}

/* Second words of the two-word column names of older layouts: "DDR Cycles", "Task Number", ... */
static bool second_word(const char *s, lg_word w)
{
    return word_is(s, w, "Cycles") || word_is(s, w, "Number") || word_is(s, w, "Size");
}

static rd_status layer_header(lg_tables *t, const lg_line *l, const lg_word *w, size_t nw, rd_error *err)
{
    rd_status st = end_table(t, err);
    if (st != RD_OK || (st = open_table(t, l->line, l->rknn, err)) != RD_OK)
        return st;
    t->header = true;
    t->header_line = l->line;
    t->time_col = SIZE_MAX;
    t->workload = false;
    t->name_start = word_is(l->s, w[nw - 1], "FullName") ? w[nw - 1].start : SIZE_MAX;
    size_t col = 0;
    for (size_t i = 0; i < nw; i++, col++) {
        if (word_is(l->s, w[i], "Time(us)"))
            t->time_col = col;
        if (w[i].len >= 8 && memcmp(l->s + w[i].start, "WorkLoad", 8) == 0)
            t->workload = true;
        if (i + 1 < nw && second_word(l->s, w[i + 1]) && !word_is(l->s, w[i], "Time(us)"))
            i++;
    }
    return RD_OK;
}

/* A layer row: *is_row false when the line is not one. */
static rd_status layer_row(lg_tables *t, const lg_line *l, const lg_word *w, size_t nw, bool *is_row, rd_error *err)
{
    const char *s = l->s;
    *is_row = nw >= 6 && w[0].len <= 9 && all_of(s, w[0], "0123456789") && all_of(s, w[1], IDENT) &&
              !(s[w[1].start] >= '0' && s[w[1].start] <= '9') && is_dtype(s, w[2]) && w[3].len <= 4 &&
              all_of(s, w[3], UPPER) && is_shape_cell(s, w[4]) && is_shape_cell(s, w[5]);
    if (!*is_row)
        return RD_OK;
    rd_rknn_log *log = t->log;
    if (!t->open) {
        rd_status st = open_table(t, 0, l->rknn, err);
        if (st != RD_OK)
            return st;
        t->header = false;
        t->workload = false;
    }
    rd_rknn_layer_row *r = rk_vec_push(&log->arena, &log->rows, LG_MAX_ENTRIES, "layer rows", err);
    if (!r)
        return err->code;
    r->line = l->line;
    r->table = log->tables.n - 1;
    r->id = strtol(s + w[0].start, NULL, 10);
    const char **cells[] = {&r->op_type, &r->data_type, &r->target, &r->input_shape.text, &r->output_shape.text};
    for (size_t k = 0; k < 5; k++)
        if (!(*cells[k] = rk_strndup(&log->arena, s + w[k + 1].start, w[k + 1].len, err)))
            return err->code;
    parse_shapes(r->input_shape.text, w[4].len, &r->input_shape);
    parse_shapes(r->output_shape.text, w[5].len, &r->output_shape);
    if (t->header && t->time_col != SIZE_MAX && t->time_col < nw)
        r->has_time = parse_number(s, w[t->time_col], &r->time_us);
    lg_word last = w[nw - 1];
    double num;
    bool has_colon = memchr(s + last.start, ':', last.len) && s[last.start + last.len - 1] != '%'; /* not "Up:0%" */
    bool aligned = t->header && t->name_start != SIZE_MAX && last.start + 1 >= t->name_start;
    bool name = nw > 6 && !parse_number(s, last, &num) && !word_is(s, last, "\\") && (has_colon || aligned);
    r->full_name = rk_strndup(&log->arena, s + last.start, name ? last.len : 0, err);
    if (!r->full_name)
        return err->code;
    if (r->id > 0 && !l->rknn && (memmem(s, l->len, "%/", 2) != NULL))
        t->workload = true; /* "100.0%/0.0%/0.0%": the board's WorkLoad column */
    t->rows_seen = true;
    return RD_OK;
}

static void rank_header(lg_tables *t, const lg_line *l, const lg_word *w, size_t nw)
{
    t->rank_open = true;
    t->n_rank_cols = 0;
    for (size_t i = 1; i < nw && t->n_rank_cols < RK_COLS; i++) {
        const char *x = l->s + w[i].start;
        int c = strncmp(x, "CPU", 3) == 0         ? RK_CPU
                : strncmp(x, "GPU", 3) == 0       ? RK_GPU
                : strncmp(x, "NPU", 3) == 0       ? RK_NPU
                : strncmp(x, "Total", 5) == 0     ? RK_TOTAL
                : memmem(x, w[i].len, "Ratio", 5) ? RK_RATIO
                                                  : -1;
        if (c >= 0)
            t->rank_cols[t->n_rank_cols++] = c;
    }
}

static rd_status rank_row(lg_tables *t, const lg_line *l, const lg_word *w, size_t nw, bool *is_row, rd_error *err)
{
    const char *s = l->s;
    double v[RK_COLS];
    *is_row = nw == 2 + t->n_rank_cols && all_of(s, w[0], IDENT) && all_of(s, w[1], "0123456789") && w[1].len <= 9;
    for (size_t i = 0; *is_row && i < t->n_rank_cols; i++)
        *is_row = parse_number(s, w[2 + i], &v[i]);
    if (!*is_row)
        return RD_OK;
    rd_rknn_rank_row *r = rk_vec_push(&t->log->arena, &t->log->rank_rows, LG_MAX_ENTRIES, "ranking rows", err);
    if (!r || !(r->op_type = rk_strndup(&t->log->arena, s + w[0].start, w[0].len, err)))
        return err->code;
    r->line = l->line;
    r->calls = strtol(s + w[1].start, NULL, 10);
    double *cols[RK_COLS] = {&r->cpu_us, &r->gpu_us, &r->npu_us, &r->total_us, &r->ratio_pct};
    for (int c = 0; c < RK_COLS; c++)
        *cols[c] = -1;
    for (size_t i = 0; i < t->n_rank_cols; i++)
        *cols[t->rank_cols[i]] = v[i];
    return RD_OK;
}

static bool is_rule(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr("-= \t", s[i]))
            return false;
    return n > 0;
}

rd_status lg_tables_line(lg_tables *t, const lg_line *l, bool *used, rd_error *err)
{
    lg_word w[MAX_WORDS];
    size_t nw = lg_words(l->s, l->len, w, MAX_WORDS);
    *used = false;
    if (nw == 0)
        return RD_OK;
    const char *s = l->s;
    if (nw >= 4 && word_is(s, w[0], "ID") && word_is(s, w[1], "OpType")) {
        *used = true;
        t->rank_open = false;
        return layer_header(t, l, w, nw, err);
    }
    if (nw >= 3 && word_is(s, w[0], "OpType") && (word_is(s, w[1], "CallNumber") || word_is(s, w[1], "Call"))) {
        *used = true;
        rank_header(t, l, w, nw);
        return end_table(t, err);
    }
    rd_status st;
    if (t->rank_open) {
        if ((st = rank_row(t, l, w, nw, used, err)) != RD_OK || *used)
            return st;
        if (is_rule(s, l->len)) {
            *used = true;
            return RD_OK;
        }
        t->rank_open = false;
    }
    if ((st = layer_row(t, l, w, nw, used, err)) != RD_OK || *used)
        return st;
    if (!t->open)
        return RD_OK;
    if (nw == 1 && word_is(s, w[0], "...")) {
        ((rd_rknn_layer_table *)t->log->tables.items)[t->log->tables.n - 1].elided = true;
        *used = true;
        return RD_OK;
    }
    if (is_rule(s, l->len) && !t->rows_seen) { /* the rule under a header */
        *used = true;
        return RD_OK;
    }
    return end_table(t, err);
}

rd_status lg_tables_finish(lg_tables *t, rd_error *err)
{
    return end_table(t, err);
}

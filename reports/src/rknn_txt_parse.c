/*
 * rknn_txt_parse.c: reads RKNN-Toolkit2's error_analysis.txt (2.x and legacy 1.5 layouts) back into an
 * rd_result. W comes from the header lines (excerpts may elide the widest label); cells are found by
 * following the writer's geometry, so nan and negative cosines (which shift the rest of the row) and blank
 * cells both parse. Accepted quirks are listed in reports.h and docs/formats.md; anything else is
 * RD_E_PARSE naming the file and line.
 */
#include "rknn_diag/reports.h"
#include "rknn_txt_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct line_cursor {
    const char *text;
    size_t len, pos;
    size_t lineno; /* 1-based number of the line last returned */
    bool last_had_newline;
} line_cursor;

/* Next line without its end ("\n" or "\r\n"); false at the end of the text. */
static bool next_line(line_cursor *c, const char **s, size_t *n)
{
    if (c->pos >= c->len)
        return false;
    const char *start = c->text + c->pos;
    const char *nl = memchr(start, '\n', c->len - c->pos);
    size_t l = nl ? (size_t)(nl - start) : c->len - c->pos;
    c->pos += l + (nl ? 1 : 0);
    c->last_had_newline = nl != NULL;
    if (l > 0 && start[l - 1] == '\r')
        l--;
    *s = start;
    *n = l;
    c->lineno++;
    return true;
}

static size_t rstrip_len(const char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return n;
}

/* Index of needle in s[0..n), or -1. */
static long find(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(s + i, needle, k) == 0)
            return (long)i;
    return -1;
}

/* A line of dots ("...", "....") or of U+2026 ellipses: an excerpt's elision. */
static bool is_elision(const char *s, size_t n)
{
    if (n == 0)
        return false;
    size_t i = 0;
    while (i < n) {
        if (s[i] == '.')
            i++;
        else if (i + 3 <= n && memcmp(s + i, "\xE2\x80\xA6", 3) == 0)
            i += 3;
        else
            return false;
    }
    return true;
}

/* Byte offset of the first `cps` code points of s[0..n) (n when shorter). */
static size_t cp_offset(const char *s, size_t n, size_t cps)
{
    size_t seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (seen == cps)
                return i;
            seen++;
        }
    }
    return n;
}

static bool parse_number(const char *s, size_t n, double *out)
{
    char buf[48];
    if (n == 0 || n >= sizeof buf)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789.+-eEnaif", s[i]))
            return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end = NULL;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + n)
        return false;
    *out = v;
    return true;
}

/*
 * A six-character cell whose exponent the cut took part of, completed into full: the missing digits get the
 * smallest magnitude Python writes there, whose repr gives back the same six characters ("5.01e-" and
 * "5.1e-0" -> e-05, "3.2e-8" -> e-80, "1.5e+" and "1.5e+1" -> e+16, "1.5e+2" -> e+20). A whole "e+DD"
 * below 16 is cut too: Python writes no such exponent ("2e+14" is "200000000000000.0"), so "-2e+14" is
 * -2e+140. ("-2e-14" is a whole exponent Python does write.) false: no exponent was cut.
 */
static bool cut_exponent_completed(const char *s, size_t n, char *full, size_t full_len)
{
    const char *e = n == REP_EUC_CHARS ? memchr(s, 'e', n) : NULL;
    if (!e)
        return false;
    const size_t rest = (size_t)(s + n - e - 1); /* after the 'e': Python writes a sign and 2+ digits */
    const bool signed_exp = rest && (e[1] == '-' || e[1] == '+');
    const bool digit2 = rest >= 2 && e[2] >= '0' && e[2] <= '9';
    if (rest == 0 || (signed_exp && (rest == 1 || (rest == 2 && digit2)))) {
        const char sign = rest ? e[1] : '-';
        const int digit = rest == 2 ? e[2] - '0' : 0;
        const int exp10 = sign == '+' ? (digit >= 2 ? digit * 10 : 16) : (digit >= 1 ? digit * 10 : 5);
        snprintf(full, full_len, "%.*se%c%02d", (int)(e - s), s, sign, exp10);
        return true;
    }
    if (rest == 3 && e[1] == '+' && digit2 && e[3] >= '0' && e[3] <= '9' && (e[2] - '0') * 10 + (e[3] - '0') < 16) {
        snprintf(full, full_len, "%.*s0", (int)n, s);
        return true;
    }
    return false;
}

/*
 * The euc text is str(float(x))[:6]: a six-character fixed-point text was probably cut, so the value is
 * taken at the middle of the cut interval ("0.0500" -> 0.05005, "-0.000" -> -0.0005: away from zero on
 * either side, -0.0 included), whose repr starts with the same six characters: written back, it prints the
 * same cell.
 */
static bool parse_euc(const char *s, size_t n, double *out)
{
    char full[REP_EUC_CHARS + 8];
    if (cut_exponent_completed(s, n, full, sizeof full))
        return parse_number(full, strlen(full), out);
    if (!parse_number(s, n, out))
        return false;
    const char *dot = memchr(s, '.', n);
    if (n == REP_EUC_CHARS && dot && !memchr(s, 'e', n) && isfinite(*out)) {
        int decimals = (int)(n - (size_t)(dot - s) - 1);
        *out += copysign(0.5 * pow(10.0, -decimals), *out);
    }
    return true;
}

typedef struct parse_ctx {
    const char *name;
    size_t lineno;
    rd_error *err;
} parse_ctx;

static rd_status fail(const parse_ctx *p, const char *fmt, const char *what, size_t what_len)
{
    char shown[96];
    size_t k = what_len < 80 ? what_len : 80;
    memcpy(shown, what, k);
    shown[k] = '\0';
    for (size_t i = 0; i < k; i++)
        if ((unsigned char)shown[i] < 0x20)
            shown[i] = '?';
    char msg[256];
    snprintf(msg, sizeof msg, fmt, shown);
    return rd_errorf(p->err, RD_E_PARSE, "%s:%zu: %s", p->name, p->lineno, msg);
}

/* End (one past the closing quote) of the quoted text starting at s[0] == '"', or 0 when it is not closed. */
static size_t quoted_end(const char *s, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return 0;
}

/*
 * A label part as written by rd_rknn_label: quoted and escaped when it held what a text table cannot (our
 * writer: controls, invalid UTF-8, a leading quote, a trailing blank, ']' in an op type), else as it is.
 * Quoted text that does not read back (RKNN's own file with a name that merely starts with a quote) is
 * taken as it is. *out is malloc'ed.
 */
static rd_status label_part(const parse_ctx *p, const char *s, size_t n, char **out)
{
    *out = NULL;
    if (n >= 2 && s[0] == '"' && quoted_end(s, n) == n) {
        rd_error ignored;
        if (rd_text_unescape(s + 1, n - 2, out, NULL, &ignored) == RD_OK)
            return RD_OK;
    }
    if (!(*out = strndup(s, n)))
        return rd_errorf(p->err, RD_E_NOMEM, "%s:%zu: out of memory", p->name, p->lineno);
    return RD_OK;
}

/* "[OpType] name" into a new layer (either part may be quoted: label_part). */
static rd_status add_labelled_layer(const parse_ctx *p, rd_result *out, const char *s, size_t n,
                                    rd_layer_result **layer)
{
    if (n < 4 || s[0] != '[')
        return fail(p, "row label '%s' is not '[OpType] name'", s, n);
    if (memchr(s, '\0', n))
        return fail(p, "row label '%s' contains a NUL byte", s, n);
    const char *close = NULL;
    if (s[1] == '"') { /* a quoted op type: its ']' is the one after the closing quote */
        size_t q = quoted_end(s + 1, n - 1);
        close = q && q + 1 < n && s[1 + q] == ']' ? s + 1 + q : NULL;
    }
    if (!close)
        close = memchr(s, ']', n);
    if (!close || close == s + 1 || (size_t)(close - s) + 2 >= n + 1 || close[1] != ' ')
        return fail(p, "row label '%s' is not '[OpType] name'", s, n);
    size_t op_len = (size_t)(close - s) - 1;
    const char *nm = close + 2;
    size_t nm_len = n - (size_t)(nm - s);
    if (nm_len == 0)
        return fail(p, "row label '%s' has no tensor name", s, n);
    char *op = NULL, *name = NULL;
    rd_status st = label_part(p, s + 1, op_len, &op);
    if (st == RD_OK)
        st = label_part(p, nm, nm_len, &name);
    if (st == RD_OK)
        st = rd_result_add_layer(out, name, op, layer, p->err);
    free(op);
    free(name);
    return st;
}

static void set_cell(rd_layer_result *l, int c, double cos, double euc)
{
    rd_metrics m;
    rd_metrics_unknown(&m);
    m.cos = cos;
    m.euc = euc;
    rd_metric_group_single(&l->groups[c], &m);
}

/* Cells of a 2.x row from byte `off` (where the label field of W characters ends). */
static rd_status parse_cells_2x(const parse_ctx *p, rd_layer_result *l, const char *s, size_t n, size_t off,
                                int n_cells)
{
    size_t expected = off, scan = off;
    int cell = 0;
    for (;;) {
        size_t q = scan;
        while (q < n && s[q] == ' ')
            q++;
        if (q >= n)
            break;
        while (cell < n_cells && q >= expected + REP_CELL_WIDTH) { /* a blank cell */
            expected += REP_CELL_WIDTH + (cell % 2 == 1 ? 4 : 0);
            cell++;
        }
        if (cell >= n_cells)
            return fail(p, "more cells than the header announces, at '%s'", s + q, n - q);
        size_t a = q;
        while (q < n && s[q] != ' ')
            q++;
        double cos, euc;
        if (!parse_number(s + a, q - a, &cos) || fabs(cos) > 1.00001)
            return fail(p, "cosine '%s' is not a number in [-1, 1]", s + a, q - a);
        if (q + 3 > n || memcmp(s + q, " | ", 3) != 0)
            return fail(p, "cell '%s' is not 'cos | euc' (truncated?)", s + a, n - a);
        size_t b = q + 3;
        q = b;
        while (q < n && s[q] != ' ')
            q++;
        if (!parse_euc(s + b, q - b, &euc))
            return fail(p, "euc '%s' is not a number", s + b, q - b);
        set_cell(l, cell, cos, euc);
        size_t width = q - b > REP_EUC_WIDTH ? q - b : REP_EUC_WIDTH;
        expected = b + width + (cell % 2 == 1 ? 4 : 0);
        scan = q;
        cell++;
    }
    return RD_OK;
}

static rd_status parse_cells_legacy(const parse_ctx *p, rd_layer_result *l, const char *s, size_t n, size_t off)
{
    int cell = 0;
    size_t q = off;
    for (;;) {
        while (q < n && s[q] == ' ')
            q++;
        if (q >= n)
            return RD_OK;
        if (cell >= 2)
            return fail(p, "more than two cosines in a legacy row, at '%s'", s + q, n - q);
        size_t a = q;
        while (q < n && s[q] != ' ')
            q++;
        double cos;
        if (!parse_number(s + a, q - a, &cos) || fabs(cos) > 1.00001)
            return fail(p, "cosine '%s' is not a number in [-1, 1]", s + a, q - a);
        set_cell(l, cell, cos, NAN);
        cell++;
    }
}

static rd_status parse_header(parse_ctx *p, line_cursor *c, const char *s, size_t n, rd_rknn_txt_info *info)
{
    n = rstrip_len(s, n);
    if (n < 10 || memcmp(s, "layer_name", 10) != 0)
        return fail(p, "expected the header line 'layer_name ... simulator_error', found '%s'", s, n);
    long sim = find(s, n, "simulator_error");
    if (sim < 0)
        return fail(p, "header line '%s' has no 'simulator_error' column", s, n);
    bool runtime = find(s, n, "runtime_error") >= 0;
    const char *s2, *s3;
    size_t n2, n3;
    p->lineno++;
    if (!next_line(c, &s2, &n2))
        return fail(p, "file ends inside the header%s", "", 0);
    p->lineno = c->lineno;
    long ent = find(s2, n2, "entire");
    if (ent < 0)
        return fail(p, "second header line '%s' has no 'entire' column", s2, n2);
    if (!next_line(c, &s3, &n3))
        return rd_errorf(p->err, RD_E_PARSE, "%s:%zu: file ends inside the header", p->name, c->lineno + 1);
    p->lineno = c->lineno;
    size_t r3 = rstrip_len(s3, n3);
    bool legacy = r3 > 0 && s3[0] == '-';
    int width;
    if (legacy) {
        width = (int)ent - 1;
        if (sim != width + 2)
            return rd_errorf(p->err, RD_E_PARSE,
                             "%s:%zu: header columns disagree (simulator_error at %ld, entire at %ld)", p->name,
                             c->lineno - 2, sim, ent);
    } else {
        width = (int)ent - 5;
        if (sim != width + 9 || find(s3, n3, "cos") < 0 || find(s3, n3, "euc") < 0)
            return rd_errorf(p->err, RD_E_PARSE,
                             "%s:%zu: header lines are not RKNN's (simulator_error at %ld, entire at %ld, "
                             "third line without 'cos'/'euc')",
                             p->name, c->lineno, sim, ent);
        if (!next_line(c, &s3, &n3))
            return rd_errorf(p->err, RD_E_PARSE, "%s:%zu: file ends before the dash rule", p->name, c->lineno + 1);
        p->lineno = c->lineno;
        r3 = rstrip_len(s3, n3);
    }
    if (width < 10)
        return rd_errorf(p->err, RD_E_PARSE, "%s:%zu: label width %d from the header is too small", p->name, c->lineno,
                         width);
    for (size_t i = 0; i < r3; i++)
        if (s3[i] != '-')
            return fail(p, "expected the dash rule, found '%s'", s3, n3);
    if (r3 == 0)
        return fail(p, "expected the dash rule, found an empty line%s", "", 0);
    info->layout = legacy ? RD_RKNN_LAYOUT_LEGACY_15 : RD_RKNN_LAYOUT_2X;
    info->label_width = width;
    info->n_groups = legacy ? 2 : runtime ? 4 : 2;
    return RD_OK;
}

rd_status rd_rknn_txt_parse_ex(const char *text, size_t len, const char *name, rd_result *out,
                               rd_rknn_txt_info *info_out, rd_error *err)
{
    rd_rknn_txt_info info = {0};
    parse_ctx p = {.name = name ? name : "error_analysis.txt", .err = err};
    line_cursor c = {.text = text, .len = len};
    const char *s;
    size_t n;
    rd_status st = RD_OK;
    rd_result_init(out);

    /* comment block and blank lines before the header */
    bool found = false;
    while (next_line(&c, &s, &n)) {
        p.lineno = c.lineno;
        size_t r = rstrip_len(s, n);
        if (r == 0)
            continue;
        if (s[0] == '#') {
            info.has_comments = true;
            continue;
        }
        found = true;
        break;
    }
    if (!found)
        return rd_errorf(err, RD_E_PARSE, "%s:%zu: no 'layer_name' header (empty or truncated file)", p.name,
                         c.lineno + 1);
    if ((st = parse_header(&p, &c, s, n, &info)) != RD_OK)
        goto fail;

    while (next_line(&c, &s, &n)) {
        p.lineno = c.lineno;
        size_t r = rstrip_len(s, n);
        if (r == 0)
            continue;
        if (is_elision(s, r)) {
            info.n_elisions++;
            continue;
        }
        size_t off = cp_offset(s, r, (size_t)info.label_width);
        size_t lab = rstrip_len(s, off);
        if (off < r && s[off - 1] != ' ')
            st = fail(&p, "row label '%s' runs into the cells (longer than the header's width)", s, r);
        rd_layer_result *l = NULL;
        if (st == RD_OK)
            st = add_labelled_layer(&p, out, s, lab, &l);
        if (st == RD_OK && off >= r) {
            if (c.pos >= c.len && !c.last_had_newline && n < (size_t)info.label_width)
                st = fail(&p, "last row '%s' is cut short (truncated file)", s, r);
            else
                st = rd_result_set_string(&l->fused_into, "", err); /* a blank row: fused away */
        } else if (st == RD_OK) {
            if (info.layout == RD_RKNN_LAYOUT_LEGACY_15)
                st = parse_cells_legacy(&p, l, s, r, off);
            else
                st = parse_cells_2x(&p, l, s, r, off, info.n_groups);
        }
        if (st != RD_OK)
            goto fail;
    }
    if (out->n_layers == 0) {
        st = rd_errorf(err, RD_E_PARSE, "%s:%zu: no layer rows after the header (truncated file?)", p.name,
                       c.lineno + 1);
        goto fail;
    }
    out->has_runtime = info.n_groups == 4;
    out->n_samples = 1;
    if ((st = rd_result_set_string(&out->tool,
                                   info.layout == RD_RKNN_LAYOUT_LEGACY_15 ? "RKNN-Toolkit2 1.5 (imported)"
                                                                           : "RKNN-Toolkit2 2.x (imported)",
                                   err)) != RD_OK)
        goto fail;
    if (info_out)
        *info_out = info;
    return RD_OK;
fail:
    rd_result_fini(out);
    return st;
}

rd_status rd_rknn_txt_parse(const char *text, size_t len, const char *name, rd_result *out, rd_error *err)
{
    return rd_rknn_txt_parse_ex(text, len, name, out, NULL, err);
}

rd_status rd_rknn_txt_load(const char *path, rd_result *out, rd_rknn_txt_info *info, rd_error *err)
{
    char *text;
    size_t len;
    rd_result_init(out);
    rd_status st = rd_file_read_all(NULL, path, RD_MAX_RKNN_TXT_BYTES, &text, &len, err);
    if (st != RD_OK)
        return st;
    st = rd_rknn_txt_parse_ex(text, len, path, out, info, err);
    free(text);
    return st;
}

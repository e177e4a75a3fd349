/*
 * rknn_txt_write.c: error_analysis.txt as RKNN-Toolkit2 2.x writes it (and the legacy 1.5 layout), byte for
 * byte: header comments, W = longest label + 5, cells f"{cos:.5f} | {str(float(euc))[:6]:<10}", trailing
 * spaces kept, blank rows for fused tensors. Geometry in docs/formats.md and rknn-formats.md section 3.
 */
#include "rknn_diag/reports.h"
#include "rknn_txt_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const rep_comments_sim[3] = {
    "# simulator_error: calculate the output error of each layer of the simulator (compared to the 'golden' value).",
    "#              entire: output error of each layer between 'golden' and 'simulator', these errors will accumulate "
    "layer by layer.",
    "#              single: single-layer output error between 'golden' and 'simulator', can better reflect the "
    "single-layer accuracy of the simulator.",
};
const char *const rep_comments_runtime[3] = {
    "# runtime_error: calculate the output error of each layer of the runtime.",
    "#              entire: output error of each layer between 'golden' and 'runtime', these errors will accumulate "
    "layer by layer.",
    "#              single_sim: single-layer output error between 'simulator' and 'runtime', can better reflect the "
    "single-layer accuracy of runtime.",
};
const char *const rep_comments_legacy[4] = {
    "# simulator_error: calculate the simulator errors.",
    "#              entire: errors between 'golden' and 'simulator'.",
    "#              single: single layer errors. (compare to 'entire', the input of each layer is come from "
    "'golden')!",
    "# ('nan' means that tensor are 'all zeros', or 'all equal', or 'large values', etc)",
};
const char *const rep_header_2x[3][2] = {
    {"         simulator_error                    ", "         runtime_error                      "},
    {"     entire              single             ", "     entire           single_sim            "},
    {"  cos      euc        cos      euc          ", "  cos      euc        cos      euc          "},
};
const char *const rep_header_legacy[2] = {"  simulator_error        ", " entire    single        "};

size_t rep_utf8_len(const char *s, size_t bytes)
{
    size_t n = 0;
    for (size_t i = 0; i < bytes; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            n++;
    return n;
}

bool rep_label_needs_quotes(const char *s, bool is_op)
{
    size_t n = strlen(s);
    if (n == 0 || s[0] == '"' || rd_text_needs_escape(s, n, RD_ESC_DISPLAY))
        return true;
    if (is_op)
        return strchr(s, ']') != NULL;          /* it would end the [OpType] early */
    return s[n - 1] == ' ' || s[n - 1] == '\t'; /* the reader strips trailing blanks */
}

/* Appends s to buf at *used as it is (cut to len). */
static void put_raw(char *buf, size_t len, size_t *used, const char *s)
{
    if (*used + 1 >= len)
        return;
    int w = snprintf(buf + *used, len - *used, "%s", s);
    *used += w < 0 ? 0 : (size_t)w < len - *used ? (size_t)w : len - *used - 1;
}

/* Appends s to buf at *used, as it is or quoted and escaped (always closed, even when cut to len). */
static void put_label_part(char *buf, size_t len, size_t *used, const char *s, bool is_op)
{
    if (!rep_label_needs_quotes(s, is_op)) {
        put_raw(buf, len, used, s);
        return;
    }
    if (*used + 3 > len) /* no room for "" */
        return;
    buf[(*used)++] = '"';
    size_t room = len - *used - 1; /* keep one byte for the closing quote */
    size_t n = rd_text_escape(s, strlen(s), RD_ESC_QUOTED, buf + *used, room);
    *used += n < room ? n : strlen(buf + *used);
    buf[(*used)++] = '"';
    buf[*used] = '\0';
}

void rd_rknn_label(const rd_layer_result *l, char *buf, size_t len)
{
    if (len == 0)
        return;
    size_t used = 0;
    buf[0] = '\0';
    put_raw(buf, len, &used, "[");
    put_label_part(buf, len, &used, l->op_type && l->op_type[0] ? l->op_type : "Unknown", true);
    put_raw(buf, len, &used, "] ");
    put_label_part(buf, len, &used, l->name ? l->name : "", false);
}

/* Python's f"{x:.{prec}f}": like printf except that NaN is "nan" whatever its sign bit. */
static void py_fixed(double x, int prec, char *buf, size_t len)
{
    if (isnan(x))
        snprintf(buf, len, "nan");
    else if (isinf(x))
        snprintf(buf, len, x < 0 ? "-inf" : "inf");
    else
        snprintf(buf, len, "%.*f", prec, x);
}

static void pad(FILE *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fputc(' ', f);
}

/* The label left-justified to W code points (Python's ljust never truncates). */
static void put_label(FILE *f, const char *label, int width)
{
    fputs(label, f);
    size_t n = rep_utf8_len(label, strlen(label));
    if (n < (size_t)width)
        pad(f, (size_t)width - n);
}

static void put_cell_2x(FILE *f, const rd_metric_group *g)
{
    char cos[64], euc[64];
    py_fixed(g->mean.cos, 5, cos, sizeof cos);
    rd_py_float_repr(g->mean.euc, euc, sizeof euc);
    euc[REP_EUC_CHARS] = '\0'; /* [:6]: repr is ASCII */
    fprintf(f, "%s | %-*s", cos, REP_EUC_WIDTH, euc);
}

static void put_row_2x(FILE *f, const rd_layer_result *l, int width, int n_colgroups)
{
    char label[4096];
    rd_rknn_label(l, label, sizeof label);
    put_label(f, label, width);
    int last = -1; /* last cell present */
    for (int c = 0; c < 2 * n_colgroups; c++)
        if (l->groups[c].present)
            last = c;
    int end = last < 0 ? 0 : (last / 2 + 1) * 2; /* cells up to the end of the last column group used */
    for (int c = 0; c < end; c++) {
        if (l->groups[c].present)
            put_cell_2x(f, &l->groups[c]);
        else
            pad(f, REP_CELL_WIDTH);
        if (c % 2 == 1)
            pad(f, 4);
    }
    fputc('\n', f);
}

static void put_row_legacy(FILE *f, const rd_layer_result *l, int width)
{
    char label[4096], cos[64];
    rd_rknn_label(l, label, sizeof label);
    put_label(f, label, width);
    const rd_metric_group *g = l->groups;
    if (g[RD_GROUP_SIM_ENTIRE].present || g[RD_GROUP_SIM_SINGLE].present) {
        for (int c = 0; c < 2; c++) {
            if (g[c].present) {
                py_fixed(g[c].mean.cos, 6, cos, sizeof cos);
                fprintf(f, "%s  ", cos);
            } else {
                pad(f, 10);
            }
        }
        pad(f, REP_LEGACY_GROUP_WIDTH - 20);
    }
    fputc('\n', f);
}

static void put_rule(FILE *f, int n)
{
    for (int i = 0; i < n; i++)
        fputc('-', f);
    fputc('\n', f);
}

rd_status rd_rknn_txt_write(const rd_result *r, const rd_rknn_txt_opts *opts, FILE *f, rd_error *err)
{
    rd_rknn_txt_opts o = {0};
    if (opts)
        o = *opts;
    int width = 0;
    for (size_t i = 0; i < r->n_layers; i++) {
        char label[4096];
        rd_rknn_label(&r->layers[i], label, sizeof label);
        size_t n = rep_utf8_len(label, strlen(label));
        if (n > (size_t)width)
            width = n > 4000 ? 4000 : (int)n;
    }
    width += 5;
    if (o.label_width > width)
        width = o.label_width;

    if (o.layout == RD_RKNN_LAYOUT_LEGACY_15) {
        if (!o.no_comments) {
            for (int i = 0; i < 4; i++)
                fprintf(f, "%s\n", rep_comments_legacy[i]);
            fputc('\n', f);
        }
        put_label(f, "layer_name", width);
        fprintf(f, "%s\n", rep_header_legacy[0]);
        pad(f, (size_t)width);
        fprintf(f, "%s\n", rep_header_legacy[1]);
        put_rule(f, width + REP_LEGACY_GROUP_WIDTH);
        for (size_t i = 0; i < r->n_layers; i++)
            put_row_legacy(f, &r->layers[i], width);
    } else {
        int ng = r->has_runtime ? 2 : 1;
        if (!o.no_comments) {
            for (int i = 0; i < 3; i++)
                fprintf(f, "%s\n", rep_comments_sim[i]);
            for (int i = 0; r->has_runtime && i < 3; i++)
                fprintf(f, "%s\n", rep_comments_runtime[i]);
            fputc('\n', f);
        }
        for (int line = 0; line < 3; line++) {
            if (line == 0)
                put_label(f, "layer_name", width);
            else
                pad(f, (size_t)width);
            for (int g = 0; g < ng; g++)
                fputs(rep_header_2x[line][g], f);
            fputc('\n', f);
        }
        put_rule(f, width + 40 * ng);
        for (size_t i = 0; i < r->n_layers; i++)
            put_row_2x(f, &r->layers[i], width, ng);
    }
    if (ferror(f))
        return rd_errorf(err, RD_E_IO, "error_analysis.txt: write failed: %s", strerror(errno));
    return RD_OK;
}

rd_status rd_rknn_txt_save(const rd_result *r, const rd_rknn_txt_opts *opts, const char *path, rd_error *err)
{
    rd_atomic_file *f;
    rd_status st = rd_atomic_file_open(path, NULL, &f, err);
    if (st != RD_OK)
        return st;
    st = rd_rknn_txt_write(r, opts, rd_atomic_file_stream(f), err);
    if (st != RD_OK) {
        rd_atomic_file_abort(f);
        if (err && strncmp(err->msg, "error_analysis.txt:", 19) == 0)
            rd_error_prefix(err, "%s", path);
        return st;
    }
    return rd_atomic_file_commit(f, err);
}

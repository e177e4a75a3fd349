/*
 * latency_table.c: `hybrid search --latency-table FILE` (repeatable): the float16 cost of each candidate
 * in milliseconds, from CSVs (tensor,milliseconds_int8,milliseconds_float16) and from the board's
 * RKNN_LOG_LEVEL=4 logs (perf_log.h), told apart by content. docs/hybrid.md says how rows map to tensors
 * and when a cost is estimated.
 */
#include "term_text.h"
#include "hybrid.h"
#include "perf_log.h"
#include "quant_setup.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { P8, P16 }; /* the two sides of a candidate's cost */

/* What the sources say of one candidate: milliseconds summed over sources, and the source count. */
typedef struct lat_acc {
    double ms[2];
    int n[2];
} lat_acc;

/* Per log: microseconds summed within a run, the runs that timed it (runs are averaged). */
typedef struct run_acc {
    double us[2];
    int last_table[2];
    int n_tables[2];
} run_acc;

static long find_cand(const an_hyb_cand *cands, size_t n, const char *name)
{
    for (size_t k = 0; name && k < n; k++)
        if (strcmp(cands[k].name, name) == 0)
            return (long)k;
    return -1;
}

/* ---- CSV ------------------------------------------------------------------------------------------ */

/* One CSV field: trims blanks; returns the next field's start or NULL at the end of the line. */
static char *csv_field(char *p, char **field)
{
    while (*p == ' ' || *p == '\t')
        p++;
    char *comma = strchr(p, ',');
    char *end = comma ? comma : p + strlen(p);
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    *end = '\0';
    *field = p;
    return comma ? comma + 1 : NULL;
}

static bool parse_ms(const char *text, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!end || end == text || *end || !isfinite(v) || v < 0)
        return false;
    *out = v;
    return true;
}

static rd_status load_csv(const char *path, char *text, const rd_sim *s, const an_hyb_cand *cands, size_t n,
                          lat_acc *acc, FILE *errs, rd_error *err)
{
    int lineno = 0;
    size_t rows = 0;
    for (char *line = text; line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *next = nl ? nl + 1 : NULL;
        lineno++;
        char *name, *a = NULL, *b = NULL, *extra = NULL;
        char *p = csv_field(line, &name);
        line = next;
        if (!*name || name[0] == '#')
            continue;
        if (!p)
            return rd_errorf(err, RD_E_PARSE,
                             "%s:%d: expected 'tensor,milliseconds_int8,milliseconds_float16' (a "
                             "CSV) or the board's RKNN_LOG_LEVEL=4 log with its 'ID OpType ... FullName' table",
                             path, lineno);
        p = csv_field(p, &a);
        p = p ? csv_field(p, &b) : NULL;
        if (p)
            csv_field(p, &extra);
        double ms8, ms16;
        if (!b || (extra && *extra) || !parse_ms(a, &ms8) || !parse_ms(b, &ms16)) {
            if (rows == 0 && lineno == 1)
                continue; /* a header line */
            return rd_errorf(err, RD_E_PARSE,
                             "%s:%d: expected 'tensor,milliseconds_int8,milliseconds_float16' with "
                             "two non-negative numbers",
                             path, lineno);
        }
        const char *ours = an_quant_match_name(s, name);
        if (!ours)
            return rd_errorf(err, RD_E_NOTFOUND, "%s:%d: tensor '%s' is not in the model (the table does not match it)",
                             path, lineno, name);
        rows++;
        long k = find_cand(cands, n, ours);
        if (k < 0) {
            if (errs)
                fprintf(errs, "note: %s:%d: '%s' is not an int8 candidate (fused, float or an input): ignored\n", path,
                        lineno, RD_TEXT_SHOWN(name));
            continue;
        }
        acc[k].ms[P8] += ms8;
        acc[k].n[P8]++;
        acc[k].ms[P16] += ms16;
        acc[k].n[P16]++;
    }
    if (rows == 0)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: no rows (expected 'tensor,milliseconds_int8,milliseconds_float16', or "
                         "the board's RKNN_LOG_LEVEL=4 log)",
                         path);
    return RD_OK;
}

/* ---- board log ------------------------------------------------------------------------------------ */

/* The value a FullName's node part names: a node's first output, else a tensor; -1 when neither. */
static int named_value(const rd_sim *s, const char *name)
{
    const rd_model *m = rd_sim_model(s);
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        if (ni.n_outputs > 0 && strcmp(ni.name, name) == 0)
            return ni.outputs[0];
    }
    const char *t = an_quant_match_name(s, name);
    return t ? rd_model_find_value(m, t) : -1;
}

typedef enum row_fate {
    FATE_MATCHED,
    FATE_MATCHED_BASE,
    FATE_NOT_CAND,
    FATE_IO,
    FATE_CONVERT,
    FATE_DTYPE,
    FATE_NO_NAME,
    FATE_UNKNOWN
} row_fate;

static const char *fate_text(row_fate f)
{
    switch (f) {
    case FATE_IO:
        return "input/output operator";
    case FATE_CONVERT:
        return "conversion the runtime inserted";
    case FATE_DTYPE:
        return "neither int8 nor float16";
    case FATE_NO_NAME:
        return "blank FullName";
    case FATE_UNKNOWN:
        return "no such node or tensor: compiler-made?";
    case FATE_NOT_CAND:
        return "not an int8 candidate";
    default:
        return "matched";
    }
}

/* Which candidate a row times (*cand, -1 for none) and why. */
static row_fate classify(const rd_sim *s, const an_perf_row *r, const an_hyb_cand *cands, size_t n, long *cand)
{
    *cand = -1;
    if (strcmp(r->op_type, "InputOperator") == 0 || strcmp(r->op_type, "OutputOperator") == 0)
        return FATE_IO;
    if (strncmp(r->op_type, "exDataConvert", 13) == 0)
        return FATE_CONVERT;
    if (r->prec == AN_PERF_OTHER)
        return FATE_DTYPE;
    if (!r->full_name[0])
        return FATE_NO_NAME;
    const char *node = an_perf_node_name(r->full_name);
    row_fate fate = FATE_MATCHED;
    int v = named_value(s, node);
    const char *hash = strchr(node, '#');
    if (v < 0 && hash && hash > node && (size_t)(hash - node) < 1024) {
        /* "MatMul#2", "Conv_3#1_ConvAdd": a piece the compiler cut out of that node */
        char base[1024];
        memcpy(base, node, (size_t)(hash - node));
        base[hash - node] = '\0';
        v = named_value(s, base);
        fate = FATE_MATCHED_BASE;
    }
    if (v < 0)
        return FATE_UNKNOWN;
    rd_value_info vi;
    rd_model_value(rd_sim_model(s), (size_t)an_hyb_holder(s, v), &vi);
    *cand = find_cand(cands, n, vi.name);
    return *cand < 0 ? FATE_NOT_CAND : fate;
}

static rd_status load_log(const char *path, const char *text, size_t len, const rd_sim *s, const an_hyb_cand *cands,
                          size_t n, lat_acc *acc, FILE *errs, rd_error *err)
{
    an_perf_log log;
    an_perf_log_init(&log);
    run_acc *ra = calloc(n + 1, sizeof *ra);
    rd_status st = ra ? an_perf_log_parse(text, len, path, &log, err) : rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t count[FATE_UNKNOWN + 1] = {0}, times[2] = {0}, listed = 0;
    char ignored[640] = "";
    for (size_t i = 0; st == RD_OK && i < log.n_rows; i++) {
        const an_perf_row *r = &log.rows[i];
        long k;
        row_fate f = classify(s, r, cands, n, &k);
        count[f]++;
        if (f != FATE_MATCHED && f != FATE_MATCHED_BASE && f != FATE_NOT_CAND && listed < 8) {
            size_t used = strlen(ignored);
            snprintf(ignored + used, sizeof ignored - used, "%s%.60s (line %d: %s)", listed ? ", " : "",
                     r->full_name[0] ? r->full_name : r->op_type, r->line, fate_text(f));
            listed++;
        }
        if (k < 0)
            continue;
        int p = r->prec == AN_PERF_INT8 ? P8 : P16;
        times[p]++;
        ra[k].us[p] += r->us;
        if (ra[k].n_tables[p] == 0 || ra[k].last_table[p] != r->table) {
            ra[k].n_tables[p]++;
            ra[k].last_table[p] = r->table;
        }
    }
    size_t matched = count[FATE_MATCHED] + count[FATE_MATCHED_BASE] + count[FATE_NOT_CAND];
    size_t n_ignored = log.n_rows - matched;
    if (st == RD_OK && matched == 0)
        st = rd_errorf(err, RD_E_NOTFOUND,
                       "%s: none of the %zu layer rows names a node or tensor of the model "
                       "(the log of another model?): %s",
                       path, log.n_rows, ignored);
    if (st == RD_OK && errs) {
        fprintf(errs,
                "latency: %s: board log, %d run%s, %zu rows matched (%zu int8 and %zu float16 times of "
                "candidates",
                path, log.n_tables, log.n_tables == 1 ? "" : "s (times averaged)", matched, times[P8], times[P16]);
        if (count[FATE_MATCHED_BASE])
            fprintf(errs, "; %zu through the node before '#'", count[FATE_MATCHED_BASE]);
        if (count[FATE_NOT_CAND])
            fprintf(errs, "; %zu of layers that are not candidates", count[FATE_NOT_CAND]);
        fprintf(errs, "), %zu ignored%s%s%s\n", n_ignored, n_ignored ? ": " : "", RD_TEXT_SHOWN(ignored),
                n_ignored > listed ? ", ..." : "");
        if (log.n_untimed)
            fprintf(errs, "latency: %s:%d: a layer table without times (build-time) skipped\n", path,
                    log.first_untimed_line);
    }
    for (size_t k = 0; st == RD_OK && k < n; k++)
        for (int p = 0; p < 2; p++)
            if (ra[k].n_tables[p]) {
                acc[k].ms[p] += ra[k].us[p] / ra[k].n_tables[p] / 1000.0;
                acc[k].n[p]++;
            }
    free(ra);
    an_perf_log_fini(&log);
    return st;
}

/* ---- merging ---------------------------------------------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* "a, b, c, ..." of the candidates flagged, at most 6 names. */
static void name_list(const an_hyb_cand *cands, size_t n, const bool *flag, char *out, size_t cap)
{
    out[0] = '\0';
    size_t shown = 0, total = 0;
    for (size_t k = 0; k < n; k++) {
        if (!flag[k])
            continue;
        if (shown < 6) {
            size_t used = strlen(out);
            snprintf(out + used, cap - used, "%s%.60s", shown ? ", " : "", cands[k].name);
            shown++;
        }
        total++;
    }
    if (total > shown) {
        size_t used = strlen(out);
        snprintf(out + used, cap - used, ", ... (%zu in all)", total);
    }
}

/*
 * Costs from the merged sources: float16 - int8 milliseconds. A candidate timed one way only gets the
 * other time from the median float16/int8 ratio of those timed both ways (flagged as estimated); with
 * no such candidate it is an error naming the build whose log is missing.
 */
static rd_status settle(const char *const *paths, size_t n_paths, const lat_acc *acc, an_hyb_cand *cands, size_t n,
                        FILE *errs, rd_error *err)
{
    double *ratios = calloc(n + 1, sizeof *ratios);
    bool *only8 = calloc(n + 1, sizeof *only8), *only16 = calloc(n + 1, sizeof *only16),
         *none = calloc(n + 1, sizeof *none);
    rd_status st = ratios && only8 && only16 && none ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t n_ratio = 0, n8 = 0, n16 = 0, n_none = 0;
    for (size_t k = 0; st == RD_OK && k < n; k++) {
        bool h8 = acc[k].n[P8] > 0, h16 = acc[k].n[P16] > 0;
        double ms8 = h8 ? acc[k].ms[P8] / acc[k].n[P8] : 0, ms16 = h16 ? acc[k].ms[P16] / acc[k].n[P16] : 0;
        cands[k].cost = ms16 - ms8;
        cands[k].cost_estimated = false;
        if (h8 && h16 && ms8 > 0)
            ratios[n_ratio++] = ms16 / ms8;
        only8[k] = h8 && !h16 && cands[k].allowed;
        only16[k] = h16 && !h8 && cands[k].allowed;
        none[k] = !h8 && !h16 && cands[k].allowed;
        if (!h8 || !h16)
            cands[k].cost = 0;
        n8 += only8[k];
        n16 += only16[k];
        n_none += none[k];
    }
    char names[600], sources[300] = "";
    for (size_t i = 0; i < n_paths; i++) {
        size_t used = strlen(sources);
        snprintf(sources + used, sizeof sources - used, "%s%s", i ? ", " : "", paths[i]);
    }
    if (st == RD_OK && (n8 || n16) && n_ratio == 0) {
        name_list(cands, n, n8 ? only8 : only16, names, sizeof names);
        st = rd_errorf(err, RD_E_PARSE,
                       "%s: %zu candidates have %s times but no %s time (%s), and no layer is timed "
                       "both ways to estimate from: run the %s build of the model on the board with RKNN_LOG_LEVEL=4 "
                       "and pass its log too (--latency-table again)",
                       sources, n8 ? n8 : n16, n8 ? "int8" : "float16", n8 ? "float16" : "int8", names,
                       n8 ? "float16 (do_quantization=False)" : "int8");
    }
    if (st == RD_OK && (n8 || n16)) {
        qsort(ratios, n_ratio, sizeof *ratios, by_value);
        double ratio = n_ratio % 2 ? ratios[n_ratio / 2] : 0.5 * (ratios[n_ratio / 2 - 1] + ratios[n_ratio / 2]);
        for (size_t k = 0; k < n; k++) {
            double ms8 = acc[k].n[P8] ? acc[k].ms[P8] / acc[k].n[P8] : 0;
            double ms16 = acc[k].n[P16] ? acc[k].ms[P16] / acc[k].n[P16] : 0;
            if (only8[k])
                cands[k].cost = ms8 * (ratio - 1.0);
            else if (only16[k])
                cands[k].cost = ratio > 0 ? ms16 * (1.0 - 1.0 / ratio) : 0;
            cands[k].cost_estimated = only8[k] || only16[k];
        }
        for (size_t k = 0; k < n; k++)
            only8[k] = only8[k] || only16[k];
        name_list(cands, n, only8, names, sizeof names);
        if (errs)
            fprintf(errs,
                    "latency: estimated cost of %zu candidates timed one way only (%s): the other time is the "
                    "median float16/int8 ratio %.3g of the %zu layers timed both ways\n",
                    n8 + n16, RD_TEXT_SHOWN(names), ratio, n_ratio);
    }
    if (st == RD_OK && n_none && errs) {
        name_list(cands, n, none, names, sizeof names);
        fprintf(errs,
                "warning: %zu candidates have no time in %s (%s): their float16 cost counts as 0 ms (fused into "
                "another layer by the runtime?)\n",
                n_none, sources, RD_TEXT_SHOWN(names));
    }
    free(ratios);
    free(only8);
    free(only16);
    free(none);
    return st;
}

rd_status an_hyb_latency_load(const char *const *paths, size_t n_paths, const rd_sim *s, an_hyb_cand *cands, size_t n,
                              FILE *errs, rd_error *err)
{
    lat_acc *acc = calloc(n + 1, sizeof *acc);
    if (!acc)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_status st = RD_OK;
    for (size_t i = 0; i < n_paths && st == RD_OK; i++) {
        char *text = NULL;
        size_t len = 0;
        st = rd_file_read_all(NULL, paths[i], AN_PERF_LOG_MAX_BYTES, &text, &len, err);
        if (st != RD_OK)
            break;
        const char *nul = memchr(text, '\0', len);
        if (nul)
            st = rd_errorf(err, RD_E_PARSE,
                           "%s: binary data (a NUL byte at offset %zu): expected a CSV or the board's "
                           "RKNN_LOG_LEVEL=4 log",
                           paths[i], (size_t)(nul - text));
        else if (an_perf_log_detect(text, len))
            st = load_log(paths[i], text, len, s, cands, n, acc, errs, err);
        else
            st = load_csv(paths[i], text, s, cands, n, acc, errs, err);
        free(text);
    }
    if (st == RD_OK)
        st = settle(paths, n_paths, acc, cands, n, errs, err);
    free(acc);
    return st;
}

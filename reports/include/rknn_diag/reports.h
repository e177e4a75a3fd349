/*
 * rknn_diag/reports.h: what people read. Builds and frees the result model (rknn_diag/result.h), writes
 * and reads RKNN-Toolkit2's error_analysis.txt, writes the snapshot text files, report.json and
 * report.html.
 *
 *     rd_result r;
 *     rd_result_init(&r);
 *     rd_layer_result *l;
 *     rd_result_add_layer(&r, "conv1", "Conv", &l, &err);
 *     l->groups[RD_GROUP_SIM_ENTIRE] = ...;           (filled by the analyzer)
 *     rd_rknn_txt_save(&r, NULL, "snapshot/error_analysis.txt", &err);
 *     rd_result_fini(&r);
 *
 * Every function that can fail returns rd_status and fills err (NULL allowed) with a sentence naming the
 * file and line. Strings passed in are copied; the rd_result owns everything it points to.
 */
#ifndef RKNN_DIAG_REPORTS_H
#define RKNN_DIAG_REPORTS_H

#include "rknn_diag/result.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------
 * Result lifecycle (rtext)
 */

/** Sets r to an empty result (no layers, no findings, n_samples 0). */
void rd_result_init(rd_result *r);

/** Frees everything r owns and leaves it empty (as after rd_result_init). NULL is allowed. */
void rd_result_fini(rd_result *r);

/**
 * Appends a layer named name with op type op_type (both copied; op_type may be NULL). Its groups start
 * absent, metrics NaN. *out_layer (may be NULL) points at the new layer, valid until the next append.
 */
rd_status rd_result_add_layer(rd_result *r, const char *name, const char *op_type, rd_layer_result **out_layer,
                              rd_error *err);

/** Appends a copy of f (its strings are copied; NULL strings stay NULL). */
rd_status rd_result_add_finding(rd_result *r, const rd_finding *f, rd_error *err);

/** Sets config key to value (both copied), replacing an earlier value of the same key. */
rd_status rd_result_set_config(rd_result *r, const char *key, const char *value, rd_error *err);
/** Appends a fidelity item (rd_fidelity_item; detail may be NULL). */
rd_status rd_result_add_fidelity(rd_result *r, const char *decision, const char *source, const char *detail,
                                 rd_error *err);

/** Replaces *dst by a copy of value (NULL clears it). For r->tool, r->model, layer->precision, ... */
rd_status rd_result_set_string(char **dst, const char *value, rd_error *err);

/** Index of the layer named name, or -1. Linear search. */
long rd_result_find_layer(const rd_result *r, const char *name);

/** A metrics struct with every value unknown: NaN metrics, counts 0, RD_DEG_NONE. */
void rd_metrics_unknown(rd_metrics *m);

/** Fills g as present with one sample: mean = *m, cos_min = cos_p5 = m->cos, worst sample 0. */
void rd_metric_group_single(rd_metric_group *g, const rd_metrics *m);

/** Stable lower-case name of a degenerate class ("none", "both_zero", ...). Never NULL. */
const char *rd_degenerate_name(rd_degenerate d);

/* ---------------------------------------------------------------------------------------------------
 * error_analysis.txt (RKNN-Toolkit2 2.x and the legacy 1.5 layout; docs/formats.md)
 */

typedef enum rd_rknn_layout {
    RD_RKNN_LAYOUT_2X = 0,    /* 2.x: "cos | euc" cells, 5 decimals, 44-character groups */
    RD_RKNN_LAYOUT_LEGACY_15, /* 1.5.x: cosine only, 6 decimals, 25-character groups, simulator only */
} rd_rknn_layout;

typedef struct rd_rknn_txt_opts {
    rd_rknn_layout layout;
    bool no_comments; /* omit the '#' comment block and its blank line (excerpts in RKNN's READMEs) */
    int label_width;  /* W: 0 for the toolkit's own (longest label + 5); larger to match an excerpt */
} rd_rknn_txt_opts;

/** What the parser saw beyond the numbers: enough to write the same file back. */
typedef struct rd_rknn_txt_info {
    rd_rknn_layout layout;
    bool has_comments; /* a '#' comment block preceded the header */
    int label_width;   /* W, from the header lines */
    int n_groups;      /* 2 (simulator) or 4 (with runtime) column pairs in the 2.x layout */
    size_t n_elisions; /* "..." lines skipped (excerpts) */
} rd_rknn_txt_info;

/** Label of a layer as RKNN prints it: "[OpType] name" (op type "Unknown" when NULL). buf always NUL-ended. */
void rd_rknn_label(const rd_layer_result *l, char *buf, size_t len);

/**
 * Writes r as error_analysis.txt to f. opts NULL: the 2.x layout with comments and the toolkit's width.
 * The runtime groups are written when r->has_runtime. Layers with no group present are blank rows.
 * RD_E_IO when f reports a write error.
 */
rd_status rd_rknn_txt_write(const rd_result *r, const rd_rknn_txt_opts *opts, FILE *f, rd_error *err);

/** rd_rknn_txt_write to path, through rd_atomic_file (no half-written file under path on failure). */
rd_status rd_rknn_txt_save(const rd_result *r, const rd_rknn_txt_opts *opts, const char *path, rd_error *err);

/**
 * Parses an error_analysis.txt image (either layout) into out (which must be freshly initialised; on failure
 * it is left empty). name is used in messages ("file:line: ..."). info may be NULL. Accepted quirks
 * (docs/formats.md): missing comment block, "..."/"...."/"…" elision lines and blank lines between rows,
 * any trailing whitespace (including none) on any line, CRLF line ends, no final newline, nan/inf/negative
 * cosines. RD_E_PARSE for anything else, naming the line.
 */
rd_status rd_rknn_txt_parse(const char *text, size_t len, const char *name, rd_result *out, rd_error *err);
rd_status rd_rknn_txt_parse_ex(const char *text, size_t len, const char *name, rd_result *out, rd_rknn_txt_info *info,
                               rd_error *err);

/** Reads and parses a file (at most RD_MAX_RKNN_TXT_BYTES). */
#define RD_MAX_RKNN_TXT_BYTES ((size_t)64 << 20)
rd_status rd_rknn_txt_load(const char *path, rd_result *out, rd_rknn_txt_info *info, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Python number formatting (what the toolkit's f-strings print)
 */

/** Python's repr(float(v)): shortest round-trip digits, "1.0", "1e-05", "1e+16", "nan", "-inf". Returns buf. */
const char *rd_py_float_repr(double v, char *buf, size_t len);

/** The same rules with the shortest digits that read back to the same float32 (snapshot text files). */
const char *rd_float32_repr(float v, char *buf, size_t len);

/* ---------------------------------------------------------------------------------------------------
 * Snapshot text files (docs/formats.md)
 */

/** RKNN-style file stem of a tensor: '/', '\\', ':' and other unsafe characters become '_'. */
void rd_snapshot_file_stem(const char *tensor, char *buf, size_t len);

/**
 * The stems of one snapshot folder, unique (snapshot_names.c, docs/formats.md). A tensor gets its
 * RKNN-style stem, cut to RD_SNAPSHOT_STEM_MAX bytes at a character boundary, unless another tensor of the
 * set has it already (compared ignoring ASCII case, so the folder survives a copy to a case-insensitive file
 * system); then the first free of "stem~2", "stem~3", ... '~' never occurs in a plain stem, so a suffixed
 * stem is never another tensor's own. Give each tensor once (in graph order, so the stems are the same on
 * every run). map_name_to_file.txt is how a reader goes back from a file to its tensor.
 */
#define RD_SNAPSHOT_STEM_MAX 200
typedef struct rd_stem_set rd_stem_set;
rd_status rd_stem_set_create(rd_stem_set **out, rd_error *err);
/** The stem of tensor into buf (len > RD_SNAPSHOT_STEM_MAX + 16). RD_E_NOMEM, or RD_E_LIMIT past 1e6 clashes. */
rd_status rd_stem_set_take(rd_stem_set *s, const char *tensor, char *buf, size_t len, rd_error *err);
void rd_stem_set_destroy(rd_stem_set *s);

/** Writes n values, one per line (%g at 6, 8 or 9 digits: docs/formats.md), through rd_atomic_file. */
rd_status rd_snapshot_txt_save(const char *path, const float *v, int64_t n, rd_error *err);

/** Reads a one-value-per-line text file (np.savetxt or ours); *out_v is malloc'ed, caller frees. */
#define RD_MAX_SNAPSHOT_TXT_BYTES ((size_t)2 << 30)
rd_status rd_snapshot_txt_load(const char *path, float **out_v, int64_t *out_n, rd_error *err);
/** The same for path inside folder dir, confined to it as rd_file_open_within (paths read from a map). */
rd_status rd_snapshot_txt_load_in(const char *dir, const char *path, float **out_v, int64_t *out_n, rd_error *err);

/** One line of map_name_to_file.txt: a tensor and its files (NULL: none). */
typedef struct rd_name_map_entry {
    char *name;
    char *golden;
    char *simulator;
    char *runtime;
} rd_name_map_entry;

typedef struct rd_name_map {
    rd_name_map_entry *entries;
    size_t n, cap;
} rd_name_map;

/** Appends an entry (strings copied; NULL files allowed). */
rd_status rd_name_map_add(rd_name_map *m, const char *name, const char *golden, const char *simulator,
                          const char *runtime, rd_error *err);
void rd_name_map_fini(rd_name_map *m);
/** Writes the map (docs/formats.md syntax) through rd_atomic_file. */
rd_status rd_name_map_save(const rd_name_map *m, const char *path, rd_error *err);
/** Parses the map; out must be zeroed. RD_E_PARSE naming the line on malformed input. */
rd_status rd_name_map_parse(const char *text, size_t len, const char *name, rd_name_map *out, rd_error *err);
rd_status rd_name_map_load(const char *path, rd_name_map *out, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * report.json and report.html (rhtml: report_json.c, report_json_read.c, report_html.c). The JSON schema is
 * docs/report-schema.md.
 */

/** Version written in "schema_version"; readers refuse any other. */
#define RD_REPORT_SCHEMA_VERSION 1

/** Colour thresholds of report.html: cos below ERROR is red, below WARN amber, else green. */
#define RD_REPORT_COS_WARN 0.99
#define RD_REPORT_COS_ERROR 0.98

/** Serialises r as report.json text into a new malloc'ed NUL-terminated buffer (caller frees). */
rd_status rd_report_json_write(const rd_result *r, char **out_text, size_t *out_len, rd_error *err);

/** The "sweep" member of report.json alone (r->sweep, with tensor names from r->layers), as a new malloc'ed
    NUL-terminated JSON object (caller frees); "null" when r has no sweep. */
rd_status rd_report_json_sweep_write(const rd_result *r, char **out_text, size_t *out_len, rd_error *err);

/** Writes r to path as report.json (atomically). RD_E_IO names the path on failure. */
rd_status rd_report_json_save(const rd_result *r, const char *path, rd_error *err);

/**
 * Parses report.json text (len bytes; need not be NUL-terminated) into out, which the caller later
 * frees with rd_result_fini. name is used in messages. On failure out is left empty and err says
 * "name: $.layers[3].groups.simulator_single.cos: expected ..." (the JSON path of the bad value), or
 * the line and column of a syntax error. RD_E_PARSE for malformed text, RD_E_UNSUPPORTED for another
 * schema_version, RD_E_NOMEM.
 */
rd_status rd_report_json_parse(const char *text, size_t len, const char *name, rd_result *out, rd_error *err);

/** Reads report.json from path (at most RD_REPORT_JSON_MAX_BYTES) as rd_report_json_parse does. */
rd_status rd_report_json_load(const char *path, rd_result *out, rd_error *err);
#define RD_REPORT_JSON_MAX_BYTES ((size_t)256 << 20)

/** Stable names of the enums as they appear in report.json ("simulator_single", "both_zero", ...). */
const char *rd_group_name(rd_group_id g);
const char *rd_severity_name(rd_severity s);
const char *rd_finding_kind_name(rd_finding_kind k);

/**
 * Writes report.html: one self-contained page (inline CSS, JS and PNG charts as data: URIs, no
 * network) with the summary, findings, the sortable and filterable layer table, charts and histograms.
 * Opening it with "#selftest" makes the page test itself and write the results into <pre id=selftest>.
 */
rd_status rd_report_html_save(const rd_result *r, const char *path, rd_error *err);

/** The same page into a new malloc'ed NUL-terminated buffer (caller frees). */
rd_status rd_report_html_write(const rd_result *r, char **out_html, size_t *out_len, rd_error *err);

#ifdef __cplusplus
}
#endif
#endif

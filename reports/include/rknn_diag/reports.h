/*
 * rknn_diag/reports.h: the reports library of rknn-diag. It writes what people read from an rd_result
 * (rknn_diag/result.h): RKNN's error_analysis.txt, report.json and report.html, and reads them back.
 *
 *     rd_error err;
 *     if (rd_report_json_save(&result, "snapshot/report.json", &err) != RD_OK ||
 *         rd_report_html_save(&result, "snapshot/report.html", &err) != RD_OK)
 *         fprintf(stderr, "%s\n", err.msg);
 *
 * Conventions as in simulator.h: functions that can fail return rd_status and fill the rd_error given
 * last (which may be NULL); nothing prints, aborts or exits. Files are written through a temporary
 * name and renamed, so an interrupted run leaves no half-written file under the final name.
 */
#ifndef RKNN_DIAG_REPORTS_H
#define RKNN_DIAG_REPORTS_H

#include "rknn_diag/result.h"
#include "rknn_diag/simulator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------
 * Result lifecycle (rtext; declared here until its branch is merged)
 */

/** Sets r to an empty result (no layers, no findings, n_samples 0). */
void rd_result_init(rd_result *r);

/** Frees everything r owns and leaves it empty (as after rd_result_init). NULL is allowed. */
void rd_result_fini(rd_result *r);

/** Stable lower-case name of a degenerate class ("none", "both_zero", ...). Never NULL. */
const char *rd_degenerate_name(rd_degenerate d);

/* ---------------------------------------------------------------------------------------------------
 * report.json and report.html (report_json.c, report_json_read.c, report_html.c). The JSON schema is
 * docs/report-schema.md.
 */

/** Version written in "schema_version"; readers refuse any other. */
#define RD_REPORT_SCHEMA_VERSION 1

/** Colour thresholds of report.html: cos below ERROR is red, below WARN amber, else green. */
#define RD_REPORT_COS_WARN 0.99
#define RD_REPORT_COS_ERROR 0.98

/** Serialises r as report.json text into a new malloc'ed NUL-terminated buffer (caller frees). */
rd_status rd_report_json_write(const rd_result *r, char **out_text, size_t *out_len, rd_error *err);

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

/*
 * report_json.h: the cJSON tree of a result, shared by the JSON writer and the HTML page (which embeds
 * the same data for its scripts).
 */
#ifndef RD_REPORT_JSON_H
#define RD_REPORT_JSON_H

#include "rknn_diag/reports.h"

#include <cjson/cJSON.h>

/** Builds the report.json tree of r (caller frees with cJSON_Delete). */
rd_status rep_json_tree(const rd_result *r, cJSON **out, rd_error *err);

#endif

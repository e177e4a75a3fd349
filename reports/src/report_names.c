/*
 * report_names.c: the stable strings of the result enums (the degenerate classes are in result.c), as report.json and
 * report.html spell them (docs/report-schema.md). Changing one breaks readers of schema_version 1.
 */
#include "rknn_diag/reports.h"

static const char *const group_names[RD_GROUP_COUNT] = {
    [RD_GROUP_SIM_ENTIRE] = "simulator_entire",
    [RD_GROUP_SIM_SINGLE] = "simulator_single",
    [RD_GROUP_RT_ENTIRE] = "runtime_entire",
    [RD_GROUP_RT_SINGLE_SIM] = "runtime_single_sim",
};

static const char *const severity_names[] = {
    [RD_SEV_INFO] = "info", [RD_SEV_WARNING] = "warning", [RD_SEV_ERROR] = "error"};

static const char *const kind_names[RD_FIND_COUNT] = {
    [RD_FIND_FP16_OVERFLOW] = "fp16_overflow",
    [RD_FIND_LOSSY_LAYER] = "lossy_layer",
    [RD_FIND_ENTIRE_JUMP] = "entire_jump",
    [RD_FIND_CONFIG] = "config",
    [RD_FIND_RUNTIME_DEPARTURE] = "runtime_departure",
    [RD_FIND_INPUT_MISMATCH] = "input_mismatch",
    [RD_FIND_OUTPUT_MISMATCH] = "output_mismatch",
    [RD_FIND_NONFINITE] = "nonfinite",
    [RD_FIND_ERROR_BLOCK] = "error_block",
    [RD_FIND_OTHER] = "other",
};

#define NAME_OR(table, i, fallback) \
    (((unsigned)(i) < sizeof table / sizeof table[0] && table[i]) ? table[i] : (fallback))

const char *rd_group_name(rd_group_id g)
{
    return NAME_OR(group_names, g, "unknown");
}
const char *rd_severity_name(rd_severity s)
{
    return NAME_OR(severity_names, s, "unknown");
}
const char *rd_finding_kind_name(rd_finding_kind k)
{
    return NAME_OR(kind_names, k, "other");
}

/*
 * fuzz_report_json.c: libFuzzer target for report.json (rd_report_json_parse) with a write-then-read
 * oracle: whatever parses is written, read back and written again to the same bytes (so every value
 * the reader accepts survives the writer: NaN and infinities as strings, doubles exactly). A failed
 * parse must carry its status in err and a message starting with the file name, and leave the result
 * empty. A second oracle checks rd_json_well_formed against cJSON itself: a text it calls well formed must
 * be one cJSON parses (else a reader would report a syntax error as running out of memory). Any violation
 * traps. Inputs are capped at 256 KiB.
 */
#include "fuzz_input.h"
#include "rknn_diag/reports.h"
#include "rknn_diag/simulator.h"

#include <cjson/cJSON.h>

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT ((size_t)256 << 10)
#define FUZZ_NAME "fuzz.report.json"

/* Checks rd_json_well_formed against cJSON on the same bytes, then parses; a refusal leaves the result empty. */
static rd_status parse_report(const char *buf, size_t size, const char *name, void *out, rd_error *err)
{
    if (rd_json_well_formed(buf, size, CJSON_NESTING_LIMIT)) {
        cJSON *j = cJSON_ParseWithLengthOpts(buf, size, NULL, false);
        if (!j)
            __builtin_trap();
        cJSON_Delete(j);
    }
    rd_result *r = out;
    rd_status st = rd_report_json_parse(buf, size, name, r, err);
    return fuzz_refused_empty(st, !(r->n_layers || r->layers || r->findings || r->config));
}

static void check_report(void *parsed)
{
    rd_result *r = parsed;
    rd_error err;
    char *t1 = NULL, *t2 = NULL;
    size_t n1, n2;
    if (rd_report_json_write(r, &t1, &n1, &err) != RD_OK)
        __builtin_trap();
    rd_result back;
    if (rd_report_json_parse(t1, n1, FUZZ_NAME, &back, &err) != RD_OK)
        __builtin_trap();
    if (back.n_layers != r->n_layers || back.n_findings != r->n_findings || back.n_config != r->n_config)
        __builtin_trap();
    if (rd_report_json_write(&back, &t2, &n2, &err) != RD_OK || n1 != n2 || memcmp(t1, t2, n1) != 0)
        __builtin_trap();
    /* the HTML writer must accept anything the reader accepts */
    char *html = NULL;
    size_t nh;
    if (rd_report_html_write(&back, &html, &nh, &err) != RD_OK)
        __builtin_trap();
    free(html);
    free(t1);
    free(t2);
    rd_result_fini(&back);
    rd_result_fini(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd_result r;
    return fuzz_parse_input(data, size, FUZZ_MAX_INPUT, FUZZ_NAME, parse_report, check_report, &r);
}

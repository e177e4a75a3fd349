/*
 * fuzz_perf_log.c: libFuzzer target for the board's per-layer table read from a log
 * (analyzer/hybrid/perf_log.c: an_perf_log_detect, an_perf_log_parse, an_perf_node_name).
 *
 * The input is the log (at most 1 MiB). Oracles (trap on failure):
 *  - a refusal is RD_E_PARSE (or RD_E_LIMIT) with a message, and leaves no rows (the caller gets nothing);
 *  - what parses has at least one timed table, every row a finite time >= 0, a line inside the input, a
 *    table index below the table count, and a FullName without blanks;
 *  - a log that parses was detected as one.
 */
#include "perf_log.h"

#include <math.h>
#include <string.h>

#define FUZZ_MAX_INPUT (1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT)
        return 0;
    const char *text = (const char *)data;
    bool detected = an_perf_log_detect(text, size);
    an_perf_log log;
    an_perf_log_init(&log);
    rd_error err;
    rd_error_clear(&err);
    rd_status st = an_perf_log_parse(text, size, "fuzz.log", &log, &err);
    if (st != RD_OK) {
        if ((st != RD_E_PARSE && st != RD_E_LIMIT && st != RD_E_NOMEM) || err.code != st || !err.msg[0])
            __builtin_trap();
        an_perf_log_fini(&log);
        return 0;
    }
    if (log.n_tables < 1 || log.n_rows == 0 || !detected)
        __builtin_trap();
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += text[i] == '\n';
    for (size_t i = 0; i < log.n_rows; i++) {
        const an_perf_row *r = &log.rows[i];
        if (!isfinite(r->us) || r->us < 0 || r->line < 1 || (size_t)r->line > lines || r->table < 0 ||
            r->table >= log.n_tables || !r->full_name || strpbrk(r->full_name, " \t\n"))
            __builtin_trap();
        const char *node = an_perf_node_name(r->full_name);
        if (!node || node < r->full_name || node > r->full_name + strlen(r->full_name))
            __builtin_trap();
    }
    an_perf_log_fini(&log);
    return 0;
}

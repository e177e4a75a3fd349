/*
 * fuzz_eval_partial.c: libFuzzer target for the partial.json files that `rknn-diag merge` reads from
 * shards (an_eval_partial_parse, then the task's report from its records, as merge computes it). Oracle:
 * a parse failure names the file; an accepted partial gives a report or a clean error, never a crash.
 * Inputs capped at 256 KiB.
 */
#include "eval_task.h"
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT ((size_t)256 << 10)
#define FUZZ_NAME "fuzz/partial.json"

/* out is a cJSON *, which a refusal leaves NULL. */
static rd_status parse_partial(const char *buf, size_t size, const char *name, void *out, rd_error *err)
{
    cJSON **p = out;
    rd_status st = an_eval_partial_parse(buf, size, name, p, err);
    return fuzz_refused_empty(st, !*p);
}

static void check_partial(void *parsed)
{
    cJSON *p = *(cJSON **)parsed;
    rd_error err;
    const an_eval_task *task = an_eval_task_find(an_json_str(p, "task"));
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(p, "records");
    size_t n = (size_t)cJSON_GetArraySize(arr);
    cJSON **recs = calloc(n + 1, sizeof *recs);
    cJSON *report = cJSON_CreateObject();
    if (!task || !recs || !report)
        __builtin_trap();
    size_t i = 0;
    cJSON *r;
    cJSON_ArrayForEach(r, arr) recs[i++] = r;
    cJSON_AddItemToObject(report, "model", cJSON_CreateString("m"));
    cJSON_AddItemToObject(report, "columns", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(p, "columns"), true));
    cJSON_AddNumberToObject(report, "samples", (double)n);
    if (task->report(p, recs, n, 5, report, &err) == RD_OK) {
        static FILE *null_out;
        if (!null_out)
            null_out = fopen("/dev/null", "w");
        if (null_out)
            task->print(null_out, report, 5);
    }
    cJSON_Delete(report);
    free(recs);
    cJSON_Delete(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *p = NULL;
    return fuzz_parse_input(data, size, FUZZ_MAX_INPUT, FUZZ_NAME, parse_partial, check_partial, &p);
}

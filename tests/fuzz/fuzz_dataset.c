/*
 * fuzz_dataset.c: libFuzzer target for dataset.txt lists (rd_dataset_parse, no file system access).
 * The first input byte picks the expected input count (0 = from the first line). On success every
 * sample must have exactly n_inputs non-empty paths under the base folder; failures must name the
 * list. Inputs are capped at 256 KiB.
 */
#include "fuzz_input.h"
#include "rknn_diag/simulator.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT ((size_t)256 << 10)
#define FUZZ_NAME "fuzz/dataset.txt"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t n_inputs = data[0] % 4;
    char *buf = fuzz_copy(data + 1, size - 1, FUZZ_MAX_INPUT - 1);
    if (!buf)
        return 0;
    rd_dataset ds;
    rd_error err;
    rd_error_clear(&err);
    rd_status st = rd_dataset_parse(buf, size - 1, FUZZ_NAME, "base", n_inputs, false, &ds, &err);
    free(buf);
    if (st != RD_OK) {
        if (!fuzz_refusal_names(st, &err, FUZZ_NAME) || ds.n_samples != 0)
            __builtin_trap();
        rd_dataset_fini(&ds);
        return 0;
    }
    if (ds.n_samples == 0 || ds.n_inputs == 0 || (n_inputs && ds.n_inputs != n_inputs))
        __builtin_trap();
    for (size_t s = 0; s < ds.n_samples; s++)
        for (size_t i = 0; i < ds.n_inputs; i++) {
            const char *p = rd_dataset_path(&ds, s, i);
            if (!p || !p[0] || (p[0] != '/' && strncmp(p, "base/", 5) != 0))
                __builtin_trap();
        }
    rd_dataset_fini(&ds);
    return 0;
}

/*
 * fuzz_accuracy_partial.c: libFuzzer target for the partial.json files of `accuracy --shard` that
 * `rknn-diag merge` reads (an_acc_partial_parse with its layers, then written back with
 * an_acc_partial_text and parsed again). Oracle: a failure names the file and leaves the header empty; an
 * accepted partial has a consistent header, reads back to the same header and writes the same text twice.
 * Inputs capped at 256 KiB.
 */
#include "accuracy_partial.h"
#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT ((size_t)256 << 10)
#define FUZZ_NAME "fuzz/partial.json"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = fuzz_copy(data, size, FUZZ_MAX_INPUT);
    an_acc_parts *p = NULL;
    rd_error err;
    rd_error_clear(&err);
    if (!buf || an_acc_parts_create(&p, &err) != RD_OK) {
        free(buf);
        return 0;
    }
    an_acc_header h;
    rd_status st = an_acc_partial_parse(buf, size, FUZZ_NAME, &h, p, &err);
    free(buf);
    if (st != RD_OK) {
        if (!fuzz_refusal_names(st, &err, FUZZ_NAME) || h.argv || h.model)
            __builtin_trap();
        an_acc_parts_destroy(p);
        return 0;
    }
    if (h.lo > h.hi || h.hi > h.total || h.dump_sample < 0 || (size_t)h.dump_sample >= h.total || h.argc < 1 ||
        h.shard_k < 0 || h.shard_k >= h.shard_n || !h.model)
        __builtin_trap();
    /* written back and read again: the same header and the same text (the layers are kept exactly) */
    char *text = NULL, *again = NULL;
    size_t len = 0, len2 = 0;
    an_acc_parts *q = NULL;
    an_acc_header h2;
    memset(&h2, 0, sizeof h2);
    if (an_acc_partial_text(p, &h, &text, &len, &err) == RD_OK && an_acc_parts_create(&q, &err) == RD_OK) {
        if (an_acc_partial_parse(text, len, FUZZ_NAME, &h2, q, &err) != RD_OK || strcmp(h2.run_hash, h.run_hash) != 0 ||
            h2.total != h.total || h2.lo != h.lo || h2.hi != h.hi || h2.argc != h.argc)
            __builtin_trap();
        if (an_acc_partial_text(q, &h2, &again, &len2, &err) == RD_OK && (len2 != len || memcmp(text, again, len) != 0))
            __builtin_trap();
    }
    free(text);
    free(again);
    an_acc_header_fini(&h2);
    an_acc_parts_destroy(q);
    an_acc_header_fini(&h);
    an_acc_parts_destroy(p);
    return 0;
}

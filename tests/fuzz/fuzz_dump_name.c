/*
 * fuzz_dump_name.c: libFuzzer target for board dump file names (an_dump_name_parse), with a
 * format-then-parse oracle.
 *
 * The input is a file name (cut at the first NUL, capped at 4 KiB). Whatever parses must format back
 * (an_dump_name_format) and parse again to the same fields; whatever fails must fail with RD_E_PARSE
 * and a message. Any violation traps, so the fuzzer reports it like a crash.
 */
#include "dumps.h"
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT 4096

static bool same_name(const an_dump_name *a, const an_dump_name *b)
{
    if (a->index != b->index || a->rank != b->rank || a->dtype != b->dtype || a->is_txt != b->is_txt ||
        strcmp(a->op_type, b->op_type) != 0 || strcmp(a->name, b->name) != 0)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = fuzz_copy_str(data, size, FUZZ_MAX_INPUT);
    if (!name)
        return 0;

    an_dump_name d;
    rd_error err;
    rd_error_clear(&err);
    rd_status st = an_dump_name_parse(name, &d, &err);
    free(name);
    if (st != RD_OK) {
        if (st != RD_E_PARSE || err.code != st || err.msg[0] == '\0')
            __builtin_trap();
        return 0;
    }
    char buf[2048];
    int n = an_dump_name_format(&d, buf, sizeof buf);
    if (n < 0 || (size_t)n >= sizeof buf)
        __builtin_trap(); /* everything parsed can be written */
    an_dump_name back;
    if (an_dump_name_parse(buf, &back, &err) != RD_OK || !same_name(&d, &back))
        __builtin_trap();
    char buf2[2048];
    if (an_dump_name_format(&back, buf2, sizeof buf2) != n || strcmp(buf, buf2) != 0)
        __builtin_trap();
    return 0;
}

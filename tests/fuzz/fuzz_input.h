/*
 * fuzz_input.h: what the targets of the parsers that take a buffer and a length share: the input copied
 * to memory of its exact size (no NUL after it, so that a read past the end hits ASan's redzone), the
 * oracle every refusal must pass, and the two together as the start of a target (fuzz_parse_input).
 */
#ifndef RD_FUZZ_INPUT_H
#define RD_FUZZ_INPUT_H

#include "rknn_diag/simulator.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/** A copy of data[0..size) in a block of exactly size bytes (one for an empty input); NULL, the input to skip,
    when size exceeds max or memory runs out. */
static inline void *fuzz_copy(const uint8_t *data, size_t size, size_t max)
{
    if (size > max)
        return NULL;
    char *buf = malloc(size ? size : 1);
    if (buf)
        memcpy(buf, data, size);
    return buf;
}

/** fuzz_copy for a target that needs at least min bytes (a leading control byte, say): NULL, the input to skip,
    also when size is below min. */
static inline void *fuzz_copy_at_least(const uint8_t *data, size_t size, size_t min, size_t max)
{
    return size < min ? NULL : fuzz_copy(data, size, max);
}

/** data[0..size) as a C string: the same bytes and a NUL after them (a NUL inside ends the string early), in a
    block of exactly size + 1 bytes; NULL, the input to skip, when size exceeds max or memory runs out. */
static inline char *fuzz_copy_str(const uint8_t *data, size_t size, size_t max)
{
    if (size > max)
        return NULL;
    char *s = malloc(size + 1);
    if (s) {
        if (size)
            memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

/** A well-formed refusal: the parser returned a known status, the one it put in err, with a message that
    starts with the name it was given for the file. */
static inline bool fuzz_refusal_names(rd_status st, const rd_error *err, const char *name)
{
    return st < RD_STATUS_COUNT && st == err->code && strncmp(err->msg, name, strlen(name)) == 0;
}

/** A parser of buf[0..size) under the file name name into out, the target's result, as fuzz_parse_input calls
    it: each target wraps its parser in one, which also checks what a refusal must leave in out. */
typedef rd_status (*fuzz_parse_fn)(const char *buf, size_t size, const char *name, void *out, rd_error *err);

/** A target's oracle of what parsed; it frees out. */
typedef void (*fuzz_check_fn)(void *out);

/** The whole of a target of a buffer parser: parses a copy of the input (fuzz_copy, inputs over max bytes
    skipped) with parse, then frees the copy; a refusal must pass fuzz_refusal_names, else it traps; what
    parses goes to check. Returns 0, as LLVMFuzzerTestOneInput does. */
static inline int fuzz_parse_input(const uint8_t *data, size_t size, size_t max, const char *name, fuzz_parse_fn parse,
                                   fuzz_check_fn check, void *out)
{
    char *buf = fuzz_copy(data, size, max);
    if (!buf)
        return 0;
    rd_error err;
    rd_error_clear(&err);
    rd_status st = parse(buf, size, name, out, &err);
    free(buf);
    if (st != RD_OK && !fuzz_refusal_names(st, &err, name))
        __builtin_trap();
    if (st == RD_OK)
        check(out);
    return 0;
}

/** For a parse_fn: traps when st is a refusal that did not leave the result empty (empty false); returns st. */
static inline rd_status fuzz_refused_empty(rd_status st, bool empty)
{
    if (st != RD_OK && !empty)
        __builtin_trap();
    return st;
}

#endif

/*
 * fuzz_input.h: what the targets of the parsers that take a buffer and a length share: the input copied
 * to memory of its exact size (no NUL after it, so that a read past the end hits ASan's redzone), and the
 * oracle every refusal must pass.
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

/** A well-formed refusal: the parser returned the status it put in err, with a message that starts with the
    name it was given for the file. */
static inline bool fuzz_refusal_names(rd_status st, const rd_error *err, const char *name)
{
    return st == err->code && strncmp(err->msg, name, strlen(name)) == 0;
}

#endif

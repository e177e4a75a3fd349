/*
 * fuzz_frontend.h: what the model frontend targets share (fuzz_darknet, fuzz_caffe_*, fuzz_tf): the oracle of a
 * conversion, and the conversion and its check as one call.
 */
#ifndef RD_FUZZ_FRONTEND_H
#define RD_FUZZ_FRONTEND_H

#include "fuzz_input.h"
#include "rknn_diag/frontends.h"

#include <stdlib.h>
#include <string.h>

/**
 * After a conversion: a refusal must be an input error (parse, unsupported, limit, out of memory) with no ONNX
 * and a message naming model or other (the second file, NULL: none); accepted ONNX bytes must load, or fail
 * naming model. Traps otherwise; frees onnx.
 */
static inline void fuzz_frontend_check(rd_status st, void *onnx, size_t len, const rd_error *err, const char *model,
                                       const char *other)
{
    if (st != RD_OK) {
        if ((st != RD_E_PARSE && st != RD_E_UNSUPPORTED && st != RD_E_LIMIT && st != RD_E_NOMEM) || onnx ||
            (!strstr(err->msg, model) && (!other || !strstr(err->msg, other))))
            __builtin_trap();
        return;
    }
    rd_model *m = NULL;
    rd_error lerr = {0};
    st = rd_model_load_mem(onnx, len, model, "/nonexistent-rknn-diag-fuzz", NULL, &m, &lerr);
    if (st != RD_OK && st != RD_E_NOMEM && st != RD_E_LIMIT && !strstr(lerr.msg, model))
        __builtin_trap();
    rd_model_destroy(m);
    free(onnx);
}

/** Bytes a target passes to its conversion besides the input (the second file of a model). */
typedef struct fuzz_bytes {
    const uint8_t *p;
    size_t n;
} fuzz_bytes;

/** A frontend's conversion of buf[0..size) to ONNX bytes; user: what else the target passes (a second file). */
typedef rd_status (*fuzz_to_onnx_fn)(const uint8_t *buf, size_t size, const void *user, void **onnx, size_t *len,
                                     rd_error *err);

/** Converts buf with to_onnx and checks the outcome with fuzz_frontend_check (model, other: as there). */
static inline void fuzz_frontend_run(fuzz_to_onnx_fn to_onnx, const uint8_t *buf, size_t size, const void *user,
                                     const char *model, const char *other)
{
    void *onnx = NULL;
    size_t len = 0;
    rd_error err = {0};
    rd_status st = to_onnx(buf, size, user, &onnx, &len, &err);
    fuzz_frontend_check(st, onnx, len, &err, model, other);
}

/** fuzz_frontend_run on an exact-size copy of the input (fuzz_copy: skipped over max bytes). Returns 0. */
static inline int fuzz_frontend_input(const uint8_t *data, size_t size, size_t max, fuzz_to_onnx_fn to_onnx,
                                      const void *user, const char *model, const char *other)
{
    uint8_t *copy = fuzz_copy(data, size, max);
    if (copy)
        fuzz_frontend_run(to_onnx, copy, size, user, model, other);
    free(copy);
    return 0;
}

#endif

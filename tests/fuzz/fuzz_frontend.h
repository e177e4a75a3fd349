/*
 * fuzz_frontend.h: the oracle the model frontend targets share (fuzz_darknet, fuzz_caffe_*, fuzz_tf).
 */
#ifndef RD_FUZZ_FRONTEND_H
#define RD_FUZZ_FRONTEND_H

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

#endif

/*
 * fuzz_tflite.c: .tflite bytes through the TFLite frontend (rd_tflite_to_onnx: the FlatBuffer reader, the schema
 * checks, the float32 and the model-precision translations) and the ONNX it writes through rd_model_load_mem
 * (operator binding, shape inference, folding). Inputs are capped at 1 MiB.
 *
 * Oracles (trap on failure): a refusal is RD_E_PARSE, RD_E_UNSUPPORTED, RD_E_LIMIT or RD_E_NOMEM with a message
 * naming the file; an accepted model yields ONNX bytes, and loading them either succeeds or fails with a
 * message naming the file (never a crash).
 * Seeds: tests/fuzz/corpus/tflite/, written by tests/fuzz/gen_corpus_tflite.c.
 */
#include "fuzz_input.h"
#include "rknn_diag/frontends.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_TFLITE_MAX_INPUT ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(rd_status st, const rd_error *err)
{
    if (st != RD_E_PARSE && st != RD_E_UNSUPPORTED && st != RD_E_LIMIT && st != RD_E_NOMEM && st != RD_E_INVAL)
        __builtin_trap();
    if (!strstr(err->msg, "fuzz.tflite"))
        __builtin_trap();
}

static void one(const uint8_t *copy, size_t size, bool model_precision)
{
    rd_frontend_options fo = {.model_precision = model_precision};
    void *onnx = NULL;
    size_t len = 0;
    rd_error err = {0};
    rd_frontend_info info;
    rd_status st = rd_tflite_to_onnx(copy, size, "fuzz.tflite", &fo, &onnx, &len, &info, &err);
    if (st != RD_OK) {
        check_refusal(st, &err);
        if (onnx)
            __builtin_trap();
        return;
    }
    if (!onnx || !len || info.format != RD_FORMAT_TFLITE)
        __builtin_trap();
    rd_model *m = NULL;
    const rd_load_options lo = {.allow_unsupported_ops = false};
    st = rd_model_load_mem(onnx, len, "fuzz.tflite", "/nonexistent-rknn-diag-fuzz", &lo, &m, &err);
    if (st != RD_OK && !strstr(err.msg, "fuzz.tflite") && st != RD_E_NOMEM && st != RD_E_LIMIT)
        __builtin_trap();
    rd_model_destroy(m);
    free(onnx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = fuzz_copy(data, size, FUZZ_TFLITE_MAX_INPUT);
    if (!copy)
        return 0;
    one(copy, size, false);
    one(copy, size, true);
    free(copy);
    return 0;
}

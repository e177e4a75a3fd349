/*
 * fuzz_darknet.c: a Darknet .cfg and .weights through the Darknet frontend (rd_darknet_to_onnx: the .cfg reader,
 * the shape walk, the .weights header and floats) and the ONNX it writes through rd_model_load_mem. The input is
 * one file: a little-endian uint32 length N, N bytes of .cfg, then the .weights. Inputs are capped at 1 MiB.
 *
 * Oracles (trap on failure): a refusal has a status a user sees as an input error and a message naming one of
 * the two files; an accepted model yields ONNX bytes that load or fail with a message naming the .cfg.
 * Seeds: tests/fuzz/corpus/darknet/, written by tests/fuzz/gen_corpus_darknet.c.
 */
#include "fuzz_frontend.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_DARKNET_MAX_INPUT ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The .cfg in buf with the .weights user points to. */
static rd_status darknet_to_onnx(const uint8_t *cfg, size_t size, const void *user, void **onnx, size_t *len,
                                 rd_error *err)
{
    const fuzz_bytes *w = user;
    return rd_darknet_to_onnx(cfg, size, "fuzz.cfg", w->p, w->n, "fuzz.weights", onnx, len, NULL, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4 || size > FUZZ_DARKNET_MAX_INPUT)
        return 0;
    uint32_t n;
    memcpy(&n, data, 4);
    if (n > size - 4)
        return 0;
    /* exact-size copies, so reads past either end are caught */
    char *cfg = malloc(n ? n : 1);
    size_t wlen = size - 4 - n;
    uint8_t *w = malloc(wlen ? wlen : 1);
    if (!cfg || !w) {
        free(cfg);
        free(w);
        return 0;
    }
    memcpy(cfg, data + 4, n);
    if (wlen)
        memcpy(w, data + 4 + n, wlen);
    const fuzz_bytes weights = {w, wlen};
    fuzz_frontend_run(darknet_to_onnx, (const uint8_t *)cfg, n, &weights, "fuzz.cfg", "fuzz.weights");
    free(cfg);
    free(w);
    return 0;
}

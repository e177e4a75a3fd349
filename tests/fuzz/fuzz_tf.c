/*
 * fuzz_tf.c: frozen TensorFlow GraphDef bytes through the TensorFlow frontend (rd_tf_to_onnx: protobuf-c under
 * the loader's memory budget, name resolution, the node order and its cycle check, constants, attributes, every
 * op's translation) and the ONNX it writes through rd_model_load_mem. Inputs are capped at 1 MiB.
 *
 * Oracles (trap on failure): a refusal is an input error (parse, unsupported, limit, out of memory) with a
 * message naming the file; an accepted graph yields ONNX bytes that load or fail naming the file.
 * Seeds: tests/fuzz/corpus/tf/, written by tests/fuzz/gen_corpus_tf.c.
 */
#include "fuzz_frontend.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_TF_MAX_INPUT ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_TF_MAX_INPUT)
        return 0;
    uint8_t *copy = malloc(size ? size : 1); /* an exact-size copy: reads past the end are caught */
    if (!copy)
        return 0;
    if (size)
        memcpy(copy, data, size);
    void *onnx = NULL;
    size_t len = 0;
    rd_error err = {0};
    rd_status st = rd_tf_to_onnx(copy, size, "fuzz.pb", NULL, &onnx, &len, NULL, &err);
    fuzz_frontend_check(st, onnx, len, &err, "fuzz.pb", NULL);
    free(copy);
    return 0;
}

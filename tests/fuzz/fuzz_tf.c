/*
 * fuzz_tf.c: frozen TensorFlow GraphDef bytes through the TensorFlow frontend (rd_tf_to_onnx: protobuf-c under
 * the loader's memory budget, name resolution, the node order and its cycle check, constants, attributes, every
 * op's translation) and the ONNX it writes through rd_model_load_mem. Inputs are capped at 1 MiB.
 *
 * Each input is converted twice: whole, then cut at fixed inputs and outputs (names of the seeds' nodes: the cut,
 * the walk from the outputs, "node:K" references; an unknown name is a usage error, RD_E_INVAL).
 *
 * Oracles (trap on failure): a refusal is an input error (parse, unsupported, limit, out of memory) with a
 * message naming the file; an accepted graph yields ONNX bytes that load or fail naming the file.
 * Seeds: tests/fuzz/corpus/tf/, written by tests/fuzz/gen_corpus_tf.c.
 */
#include "fuzz_frontend.h"
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_TF_MAX_INPUT ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = fuzz_copy(data, size, FUZZ_TF_MAX_INPUT);
    if (!copy)
        return 0;
    void *onnx = NULL;
    size_t len = 0;
    rd_error err = {0};
    rd_status st = rd_tf_to_onnx(copy, size, "fuzz.pb", NULL, &onnx, &len, NULL, &err);
    fuzz_frontend_check(st, onnx, len, &err, "fuzz.pb", NULL);
    static const char *const inputs[] = {"r", "bn/Relu6:0"}, *const outputs[] = {"mul", "split:2", "probs"};
    rd_frontend_options fo = {.inputs = inputs, .n_inputs = 2, .outputs = outputs, .n_outputs = 3};
    onnx = NULL;
    st = rd_tf_to_onnx(copy, size, "fuzz.pb", &fo, &onnx, &len, NULL, &err);
    if (st == RD_E_INVAL && !onnx && strstr(err.msg, "fuzz.pb"))
        st = RD_E_PARSE; /* a name the graph does not have: the caller's mistake, named */
    fuzz_frontend_check(st, onnx, len, &err, "fuzz.pb", NULL);
    free(copy);
    return 0;
}

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

#include <stdlib.h>
#include <string.h>

#define FUZZ_TF_MAX_INPUT ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* rd_tf_to_onnx with the options user points to (NULL: the whole graph). With options, a name the graph does not
   have is the caller's mistake (RD_E_INVAL): named, it counts as a refusal of the input. */
static rd_status tf_to_onnx(const uint8_t *buf, size_t size, const void *user, void **onnx, size_t *len, rd_error *err)
{
    rd_status st = rd_tf_to_onnx(buf, size, "fuzz.pb", user, onnx, len, NULL, err);
    if (user && st == RD_E_INVAL && !*onnx && strstr(err->msg, "fuzz.pb"))
        st = RD_E_PARSE;
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_frontend_input(data, size, FUZZ_TF_MAX_INPUT, tf_to_onnx, NULL, "fuzz.pb", NULL);
    static const char *const inputs[] = {"r", "bn/Relu6:0"}, *const outputs[] = {"mul", "split:2", "probs"};
    const rd_frontend_options fo = {.inputs = inputs, .n_inputs = 2, .outputs = outputs, .n_outputs = 3};
    return fuzz_frontend_input(data, size, FUZZ_TF_MAX_INPUT, tf_to_onnx, &fo, "fuzz.pb", NULL);
}

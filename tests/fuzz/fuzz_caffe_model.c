/*
 * fuzz_caffe_model.c: .caffemodel bytes (a protobuf NetParameter) through the Caffe frontend with the .prototxt
 * of the test net (tests/unit/frontends/caffe_synth.c): the protobuf-c decoding under the loader's memory budget,
 * the matching of layers by name, every blob's shape (BlobShape or the legacy 4-D fields), size and values
 * against what the .prototxt needs; the ONNX written goes through rd_model_load_mem. Inputs capped at 1 MiB.
 *
 * Oracles (trap on failure): a refusal is an input error with a message naming one of the two files; an
 * accepted model yields ONNX bytes that load or fail naming the file.
 * Seeds: tests/fuzz/corpus/caffe_model/, written by tests/fuzz/gen_corpus_caffe.c.
 */
#include "caffe_synth.h"
#include "fuzz_frontend.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_CAFFE_MAX_INPUT ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The test net's .prototxt with the input as its .caffemodel. */
static rd_status caffemodel_to_onnx(const uint8_t *w, size_t size, const void *user, void **onnx, size_t *len,
                                    rd_error *err)
{
    (void)user;
    return rd_caffe_to_onnx(csy_net, strlen(csy_net), "fuzz.prototxt", w, size, "fuzz.caffemodel", onnx, len, NULL,
                            err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_frontend_input(data, size, FUZZ_CAFFE_MAX_INPUT, caffemodel_to_onnx, NULL, "fuzz.prototxt",
                               "fuzz.caffemodel");
}

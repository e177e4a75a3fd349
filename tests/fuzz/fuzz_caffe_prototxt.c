/*
 * fuzz_caffe_prototxt.c: .prototxt text through the Caffe frontend (rd_caffe_to_onnx: the protobuf text
 * parser of frontends/src/caffe_text.c, then the layer lowering) with the weights of the test net
 * (tests/unit/frontends/caffe_synth.c: conv1, bn1, scale1, deconv1, prelu1, ip1), so mutated nets reach the
 * weighted layers too; the ONNX it writes goes through rd_model_load_mem. Inputs are capped at 1 MiB.
 *
 * Oracles (trap on failure): a refusal is an input error (parse, unsupported, limit, out of memory) with a
 * message naming one of the two files; an accepted net yields ONNX bytes that load or fail naming the file.
 * Seeds: tests/fuzz/corpus/caffe_prototxt/, written by tests/fuzz/gen_corpus_caffe.c.
 */
#include "caffe_synth.h"
#include "fuzz_frontend.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_CAFFE_MAX_INPUT ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as the .prototxt, with the test net's .caffemodel. */
static rd_status prototxt_to_onnx(const uint8_t *text, size_t size, const void *user, void **onnx, size_t *len,
                                  rd_error *err)
{
    (void)user;
    size_t wlen = 0;
    uint8_t *w = csy_net_weights(&wlen);
    rd_status st = w ? rd_caffe_to_onnx(text, size, "fuzz.prototxt", w, wlen, "fuzz.caffemodel", onnx, len, NULL, err)
                     : rd_errorf(err, RD_E_NOMEM, "fuzz.caffemodel: no memory for the test net's weights");
    free(w);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_frontend_input(data, size, FUZZ_CAFFE_MAX_INPUT, prototxt_to_onnx, NULL, "fuzz.prototxt",
                               "fuzz.caffemodel");
}

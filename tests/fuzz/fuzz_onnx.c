/*
 * fuzz_onnx.c: ONNX model bytes through rd_model_load_mem (protobuf unpack, loader, graph pass), and
 * the same bytes as a TensorProto (test_data_set_*.pb). Inputs are capped at 1 MiB: the loader's
 * budget is proportional to the input, and bigger inputs only slow the fuzzer down.
 *
 * External data is looked up in a folder that does not exist, so runs never depend on the files
 * beside the fuzzer.
 */
#include "fuzz_input.h"
#include "rknn_diag/simulator.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_ONNX_MAX_INPUT ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = fuzz_copy(data, size, FUZZ_ONNX_MAX_INPUT);
    if (!copy)
        return 0;

    rd_error err;
    rd_model *m = NULL;
    const rd_load_options opt = {.allow_unsupported_ops = true};
    if (rd_model_load_mem(copy, size, "fuzz.onnx", "/nonexistent-rknn-diag-fuzz", &opt, &m, &err) == RD_OK) {
        /* walk what the accessors expose */
        for (size_t i = 0; i < rd_model_value_count(m); i++) {
            rd_value_info vi;
            rd_model_value(m, i, &vi);
            (void)rd_model_constant(m, i);
        }
        for (size_t i = 0; i < rd_model_node_count(m); i++) {
            rd_node_info ni;
            rd_model_node(m, i, &ni);
        }
        rd_model_destroy(m);
    }

    rd_tensor t;
    char *name = NULL;
    if (rd_tensorproto_parse(copy, size, "fuzz.pb", &t, &name, &err) == RD_OK) {
        rd_tensor_fini(&t);
        free(name);
    }
    free(copy);
    return 0;
}

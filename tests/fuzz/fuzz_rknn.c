/*
 * fuzz_rknn.c: .rknn model bytes through rd_rknn_parse (header, FlatBuffer, nodes, parameter unions,
 * attribute blobs, the dict string, the JSON sections), then every accessor a caller uses. Inputs are
 * capped at 1 MiB and the reader's limits lowered, so a run stays small.
 *
 * Oracles (trap on failure):
 *  - a refusal is RD_E_PARSE, RD_E_UNSUPPORTED, RD_E_LIMIT or RD_E_NOMEM with a message, and no model;
 *  - a model: node inputs and outputs are tensor indices of their graph; per-op-type totals add up to
 *    the node count; rd_rknn_find_tensor finds every tensor's name, lowest index first; blobs and packed
 *    weights are read within bounds (RD_OK or a named error).
 * Seeds: tests/fuzz/corpus/rknn/, written by tests/fuzz/gen_corpus_rknn.c.
 */
#include "fuzz_input.h"
#include "rknn_diag/rknn_model.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_RKNN_MAX_INPUT ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_graph(const rd_rknn_model *m, const rd_rknn_graph *g)
{
    size_t total = 0;
    for (size_t i = 0; i < g->n_ops; i++)
        total += g->ops[i].total;
    if (total != g->n_nodes)
        __builtin_trap();
    for (size_t i = 0; i < g->n_nodes; i++) {
        const rd_rknn_node *n = &g->nodes[i];
        if (!n->op_type || !n->name)
            __builtin_trap();
        for (size_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] < 0 || (size_t)n->inputs[k] >= g->n_tensors)
                __builtin_trap();
        for (size_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] < 0 || (size_t)n->outputs[k] >= g->n_tensors)
                __builtin_trap();
        (void)rd_rknn_node_dtype(g, n);
    }
    for (size_t i = 0; i < g->n_tensors; i++) {
        const rd_rknn_tensor *t = &g->tensors[i];
        const rd_rknn_tensor *f = rd_rknn_find_tensor(g, t->name);
        if (!f || strcmp(f->name, t->name) != 0 || f->index > t->index)
            __builtin_trap();
        const uint8_t *blob;
        size_t len;
        rd_status st = rd_rknn_tensor_data(m, t, &blob, &len, NULL);
        if ((t->blob >= 0) != (st == RD_OK))
            __builtin_trap();
        if (t->layout == RD_RKNN_LAYOUT_CONV_WEIGHT && st == RD_OK && len <= ((size_t)1 << 20)) {
            size_t cap = 2 * len + 64;
            uint8_t *w = malloc(cap);
            int32_t *pad = t->rank == 4 && t->shape[0] > 0 && t->shape[0] <= (1 << 16)
                               ? malloc((size_t)t->shape[0] * sizeof *pad)
                               : NULL;
            if (w)
                (void)rd_rknn_unpack_conv_weight(m, t, w, cap, pad, NULL);
            free(w);
            free(pad);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = fuzz_copy(data, size, FUZZ_RKNN_MAX_INPUT);
    if (!copy)
        return 0;
    rd_rknn_limits lim;
    rd_rknn_limits_default(&lim);
    lim.max_tensors = lim.max_nodes = 4096;
    lim.max_vector = 4096;
    lim.max_text_bytes = 1 << 20;
    lim.max_decoded_bytes = (size_t)32 << 20;
    lim.max_depth = 32;
    rd_rknn_model *m = NULL;
    rd_error err;
    rd_status st = rd_rknn_parse(copy, size, "fuzz.rknn", &lim, &m, &err);
    (void)rd_rknn_detect(copy, size);
    free(copy);
    if (st != RD_OK) {
        if ((st != RD_E_PARSE && st != RD_E_UNSUPPORTED && st != RD_E_LIMIT && st != RD_E_NOMEM) || m ||
            err.code != st || !err.msg[0])
            __builtin_trap();
        return 0;
    }
    const rd_rknn_info *in = rd_rknn_info_get(m);
    if (!in->format || !in->target_platform || !in->toolkit_version || !in->compiler_version)
        __builtin_trap();
    for (size_t i = 0; i < rd_rknn_graph_count(m); i++)
        check_graph(m, rd_rknn_graph_at(m, i));
    for (size_t i = 0; i < rd_rknn_warning_count(m); i++)
        if (!rd_rknn_warning(m, i)[0])
            __builtin_trap();
    rd_rknn_destroy(m);
    return 0;
}

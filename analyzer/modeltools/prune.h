/*
 * prune.h: lossless channel pruning (RKNN's model_pruning): output channels of Conv and Gemm that are
 * identically zero, and the input channels that read them, removed wherever that changes no result.
 * The rules are in docs/prune.md.
 */
#ifndef RD_AN_PRUNE_H
#define RD_AN_PRUNE_H

#include <rknn_diag/simulator.h>
#include <stdio.h>

/* What pruning would remove: the new constants and the savings. */
typedef struct an_prune_plan {
    size_t n_channels; /* Conv/Gemm output channels removed */
    size_t n_replace;
    char **names;                               /* constants rewritten (n_replace) */
    rd_tensor *tensors;                         /* their new data */
    int64_t weight_bytes, weight_bytes_removed; /* constants of the model (initializers and Constant nodes) */
    int64_t macs, macs_removed;
} an_prune_plan;

/** Finds what can be pruned in m (n_channels 0: nothing) and measures the savings on the pruned model. */
rd_status an_prune_analyze(const rd_model *m, an_prune_plan *out, rd_error *err);

/** The pruned model as ONNX (rd_onnx_model_write's bytes when the plan removes nothing). */
rd_status an_prune_write(const rd_model *m, const an_prune_plan *p, void **out_buf, size_t *out_len, rd_error *err);

void an_prune_plan_fini(an_prune_plan *p);

/** Units of the summary: MB are 2^20 bytes of constants, GFLOPs 2 x MACs / 1e9. */
double an_prune_mb(int64_t bytes);
double an_prune_gflops(int64_t macs);

/** The guide's summary: "Weight: -1.12145 MB (-6.9%)" and "GFLOPs: -0.15563 (-13.4%)". */
void an_prune_print_summary(FILE *out, const an_prune_plan *p);

#endif

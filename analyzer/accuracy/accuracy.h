/*
 * accuracy.h: the accuracy analysis (RKNN's accuracy_analysis): golden, simulator entire and single
 * per layer, over one or more samples, into the result model and the snapshot folder.
 */
#ifndef RD_AN_ACCURACY_H
#define RD_AN_ACCURACY_H

#include "rknn_diag/reports.h"
#include "rknn_diag/result.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>

struct an_group_acc;
/**
 * Called once per row after every sample is folded and before the groups are finished (accuracy --shard,
 * merge; accuracy_partial.h): layer is the row's index in the result, groups its RD_GROUP_COUNT
 * accumulators, to read (a shard records them) or to add other samples to (a merge adds the shards').
 */
typedef rd_status (*an_acc_rows_fn)(void *user, const rd_result *r, size_t layer, struct an_group_acc *groups,
                                    rd_error *err);

typedef struct an_accuracy_opts {
    const char *output_dir; /* snapshot folder; NULL writes no files */
    int dump_sample;        /* sample whose tensors go to golden/ and simulator/ */
    bool no_txt;            /* skip the per-tensor text files (the .npy files stay) */
    bool txt_inline;        /* write them on the analysis thread, not on a writer thread (same files) */
    double warn_cos;        /* single cosine below this warns (0.99) */
    double error_cos;       /* below this is an error (0.98) */
    size_t worst_layers;    /* layers keeping channel cosines and histograms (6) */
    FILE *progress;         /* may be NULL */
    bool progress_tty;
    /* the board (runtime_error group): its tensor per optimised-graph value for the dump sample, NULL: none */
    rd_runtime_fn runtime;
    void *runtime_user;
    /* sharding (docs/sharding.md): the id of the first sample given (dump_sample is an id too), and the
       hook seeing each row's accumulators; the groups are then folded in sample-id order */
    int sample_base;
    an_acc_rows_fn rows;
    void *rows_user;
} an_accuracy_opts;

/** What the runtime findings need beyond the table, one per result layer (an_accuracy_run fills it). */
typedef struct an_layer_runtime {
    bool dumped;           /* the board dumped this layer */
    double inputs_cos;     /* lowest cosine of the layer's inputs, board against simulator entire (NaN: none) */
    char worst_input[256]; /* the input it belongs to */
    double off_grid;       /* share of the board's values off the layer's int8 grid (NaN: not an int8 layer) */
} an_layer_runtime;

/**
 * Analyses n_samples samples (sample k is inputs[k * n_inputs ...], float32 graph tensors) with the
 * calibrated simulation s; fills out (initialised by the caller) with one layer per tensor of the
 * optimised graph in execution order, inputs first, blank rows for tensors fused away.
 */
rd_status an_accuracy_run(rd_sim *s, const rd_tensor *inputs, size_t n_inputs, size_t n_samples,
                          const an_accuracy_opts *o, rd_result *out, rd_error *err);

/**
 * an_accuracy_run with the board's facts: with o->runtime, the dump sample runs with the board's tensors,
 * fills RD_GROUP_RT_ENTIRE and RD_GROUP_RT_SINGLE_SIM for every layer the board dumped, sets
 * out->has_runtime, writes the board's tensors to the snapshot's runtime/ folder, and (rt_out non-NULL)
 * returns a malloc'ed array of out->n_layers an_layer_runtime.
 */
rd_status an_accuracy_run_rt(rd_sim *s, const rd_tensor *inputs, size_t n_inputs, size_t n_samples,
                             const an_accuracy_opts *o, rd_result *out, an_layer_runtime **rt_out, rd_error *err);

/** Adds one finding to r (the texts are copied): what every finding rule of findings*.c ends with. */
rd_status an_finding_add(rd_result *r, rd_finding_kind kind, rd_severity sev, const char *layer, double score,
                         const char *title, const char *evidence, const char *advice, rd_error *err);

/** Adds the findings (FP16 overflow, lossy layers, entire jump, configuration) to r, most important first. */
rd_status an_findings_add(rd_result *r, const an_accuracy_opts *o, rd_error *err);

/**
 * an_findings_add with the board: the first layer departing from the simulator although its inputs agree
 * (RD_FIND_RUNTIME_DEPARTURE), and lossy layers told apart as quantization (simulator and board) or
 * runtime (board only). rt may be NULL (then as an_findings_add).
 */
rd_status an_findings_add_rt(rd_result *r, const an_accuracy_opts *o, const an_layer_runtime *rt, rd_error *err);

/**
 * an_findings_add_rt with what the simulation s knows (s may be NULL): float16 constants and weights
 * beyond 65504 (RD_FIND_FP16_OVERFLOW naming the constant, the node reading it and its max |value|), which
 * also tell the cause of NaN/Inf downstream.
 */
rd_status an_findings_add_sim(rd_result *r, const an_accuracy_opts *o, const an_layer_runtime *rt, const rd_sim *s,
                              rd_error *err);

/**
 * The numeric findings alone (findings_numeric.c): float16 constants beyond 65504 (with s), and NaN/Inf in
 * the golden, simulator or board tensors (RD_FIND_NONFINITE: the first tensor in execution order, the
 * counts, the likely cause). Unsorted.
 */
rd_status an_findings_numeric(rd_result *r, const rd_sim *s, rd_error *err);

#endif

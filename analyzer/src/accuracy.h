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

typedef struct an_accuracy_opts {
    const char *output_dir;     /* snapshot folder; NULL writes no files */
    int dump_sample;            /* sample whose tensors go to golden/ and simulator/ */
    bool no_txt;                /* skip the per-tensor text files (the .npy files stay) */
    double warn_cos;            /* single cosine below this warns (0.99) */
    double error_cos;           /* below this is an error (0.98) */
    size_t worst_layers;        /* layers keeping channel cosines and histograms (6) */
    FILE *progress;             /* may be NULL */
    bool progress_tty;
} an_accuracy_opts;

/**
 * Analyses n_samples samples (sample k is inputs[k * n_inputs ...], float32 graph tensors) with the
 * calibrated simulation s; fills out (initialised by the caller) with one layer per tensor of the
 * optimised graph in execution order, inputs first, blank rows for tensors fused away.
 */
rd_status an_accuracy_run(rd_sim *s, const rd_tensor *inputs, size_t n_inputs, size_t n_samples,
                          const an_accuracy_opts *o, rd_result *out, rd_error *err);

/** Adds the findings (FP16 overflow, lossy layers, entire jump, configuration) to r, most important first. */
rd_status an_findings_add(rd_result *r, const an_accuracy_opts *o, rd_error *err);

#endif

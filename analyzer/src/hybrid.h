/*
 * hybrid.h: hybrid-quantization triage (`rknn-diag hybrid`): which int8 tensors to keep in float16.
 * Candidates come from the accuracy analysis; every set of float16 tensors is judged by running the
 * simulation with it and comparing the model outputs with the FP32 golden (docs/hybrid.md).
 */
#ifndef RD_AN_HYBRID_H
#define RD_AN_HYBRID_H

#include "rknn_diag/result.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>

/** Accuracy of the model outputs: the minimum over every output and every analysed sample. */
typedef struct an_hyb_score {
    double cos;       /* effective cosine (docs/metrics.md); NaN counts as -1 */
    double sqnr_db;
} an_hyb_score;

/** Default memory for prefix reuse over all samples (docs/hybrid.md; --reuse-mb). */
#define AN_HYB_REUSE_DEFAULT_MB 512

/** What the measurements share: the samples, their golden outputs (computed once) and the simulation. */
typedef struct an_hyb_ctx {
    rd_sim *s;                  /* calibrated once; candidates are switched to float16 and back */
    const rd_tensor *inputs;    /* n_samples * n_in, sample-major */
    size_t n_in, n_samples, n_out;
    rd_tensor *golden;          /* n_samples * n_out FP32 outputs of the original model */
    int threads;                /* samples measured at once (sharing the simulation's pool: a run that finds it
                                   busy computes on its own thread) */
    size_t n_runs;              /* simulator runs so far */
    double run_seconds;         /* wall time spent in them */
    size_t reuse_bytes;         /* activations kept for prefix reuse, all samples together (0: full runs);
                                   set before the first measurement */
    rd_sim_prefix **prefix;     /* per sample: the baseline's recording (an_hyb_keep), made on first use */
} an_hyb_ctx;

/** Nodes the measurements computed, and what full runs would have (prefix reuse: docs/hybrid.md). */
typedef struct an_hyb_reuse {
    uint64_t nodes_computed, nodes_full;
    size_t bytes;               /* recordings held now */
} an_hyb_reuse;

rd_status an_hyb_init(an_hyb_ctx *c, rd_model *m, rd_sim *s, const rd_tensor *inputs, size_t n_samples,
                      int threads, rd_error *err);
void an_hyb_fini(an_hyb_ctx *c);

/**
 * Runs every sample with the tensors names[0..n-1] in float16 (int8 again afterwards). Each run starts at
 * the first node whose configuration differs from the baseline's (the first measurement's, or the one
 * last kept with an_hyb_keep); the scores are those of full runs, bit for bit. Up to `threads` samples
 * run at once.
 */
rd_status an_hyb_measure(an_hyb_ctx *c, const char *const *names, size_t n, an_hyb_score *out, rd_error *err);

/** The set of the last an_hyb_measure becomes the baseline later measurements resume from (no run). */
void an_hyb_keep(an_hyb_ctx *c);

void an_hyb_reuse_get(const an_hyb_ctx *c, an_hyb_reuse *out);

/** One int8 tensor that could go to float16, with the evidence. */
typedef struct an_hyb_cand {
    const char *name;           /* the tensor (owned by the rd_result it came from) */
    const char *op_type;
    int position;               /* row in the accuracy table */
    double single_cos, entire_cos, single_sqnr, entire_sqnr; /* minimum / mean over the samples */
    double saturated;           /* share of values clamped at -128/127 */
    double w_outlier;           /* max|w| of the worst channel / the median channel's; NaN: no weight */
    double macs;                /* MACs of the nodes computing it (fused ones included) */
    double cost;                /* cost of keeping it in float16 (MACs or added milliseconds) */
    bool cost_estimated;        /* latency tables timed it one way only: cost from the others' ratio */
    double alone_cos;           /* output cosine with it alone in float16; NaN: not measured */
    double alone_sqnr;
    bool allowed;               /* false: excluded (reason says why) */
    char reason[200];
} an_hyb_cand;

/**
 * The candidates of r (rows of int8 materialised tensors, graph inputs excluded), with their weights'
 * channel outliers and MACs, in table order.
 */
rd_status an_hyb_candidates(rd_sim *s, const rd_result *r, an_hyb_cand **out, size_t *n, rd_error *err);

/**
 * Ranks the allowed candidates: the top `measure` by single error are measured alone in float16 and come
 * first by output gain; the others follow by single error. order receives candidate indices (n entries,
 * excluded ones last).
 */
rd_status an_hyb_rank(an_hyb_ctx *c, an_hyb_cand *cands, size_t n, size_t measure, size_t *order, rd_error *err);

/**
 * Costs (added milliseconds) from latency tables, merged: CSVs and the board's RKNN_LOG_LEVEL=4 logs, told
 * apart by content (latency_table.c, docs/hybrid.md). A CSV row naming an unknown tensor fails; log rows
 * that name nothing of the model are ignored and counted (the log must match something). Notes go to
 * errs (may be NULL).
 */
rd_status an_hyb_latency_load(const char *const *paths, size_t n_paths, const rd_sim *s, an_hyb_cand *cands, size_t n,
                              FILE *errs, rd_error *err);

#endif

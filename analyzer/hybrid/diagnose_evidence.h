/*
 * diagnose_evidence.h: evidence for `hybrid diagnose` that does not come from the output cosine
 * (docs/hybrid.md): how well the preprocessed inputs fit the first BatchNormalization's running
 * statistics, how much of the analysed activations the calibrated ranges clip, how far weight
 * channels spread.
 */
#ifndef RD_AN_DIAGNOSE_EVIDENCE_H
#define RD_AN_DIAGNOSE_EVIDENCE_H

#include "rknn_diag/result.h"
#include "rknn_diag/simulator.h"

/** The first Conv reading a graph input directly whose output only feeds a BatchNormalization. */
typedef struct an_diag_bn_site {
    int conv_out;            /* value index of the Conv output (original model) */
    const char *conv_name;   /* that value's name (owned by the model) */
    const float *mean, *var; /* the BatchNormalization's running statistics, n_ch entries */
    float epsilon;
    int64_t n_ch;
} an_diag_bn_site;

/** Finds the site for graph input `input`; false when the model has none (no check possible). */
bool an_diag_bn_find(const rd_model *m, size_t input, an_diag_bn_site *out);

/**
 * How far the Conv outputs of the n samples x (sample-major, every graph input) are from the
 * statistics the model was trained with: per channel the KL divergence of N(observed mean, observed
 * variance) from N(running_mean, running_var), in nats; *fit receives the median over channels.
 * Runs the model only up to the Conv.
 */
rd_status an_diag_bn_fit(rd_model *m, const an_diag_bn_site *site, const rd_tensor *x, size_t n_samples, double *fit,
                         rd_error *err);

/**
 * The same over every BatchNormalization of the model whose statistics are float constants: the
 * mean over those layers of their median channel KL (*n_layers of them). One full float32 run per
 * sample.
 */
rd_status an_diag_bn_fit_all(rd_model *m, const rd_tensor *x, size_t n_samples, double *fit, size_t *n_layers,
                             rd_error *err);

/** What the calibrated int8 ranges of s do to the analysed samples, from s's own int8 runs. */
typedef struct an_diag_clip {
    double share;       /* values clipped (beyond the int8 range) / all int8 activation values */
    double worst_share; /* the same for the worst tensor */
    char worst[128];    /* its name */
} an_diag_clip;

rd_status an_diag_clip_measure(rd_sim *s, const rd_tensor *x, size_t n_samples, size_t n_in, int threads,
                               an_diag_clip *out, rd_error *err);

/** Median over int8 activations of log2(width of s's range / width of ref's range) into *out: + s wider, -
 * narrower (NaN: no tensor to compare). RD_E_NOMEM when memory runs out. */
rd_status an_diag_range_log2_ratio(const rd_sim *s, const rd_sim *ref, double *out, rd_error *err);

/** Weight channel spread of s's per-channel int8 layers: max over layers of max_c max|w_c| /
 * median_c max|w_c|. */
typedef struct an_diag_wspread {
    double worst;    /* NaN when no layer has 2 channels or more */
    char layer[128]; /* the node with that spread */
    size_t n_over;   /* layers whose spread exceeds AN_DIAG_WSPREAD_HIGH */
    size_t n_layers;
} an_diag_wspread;

/* A channel whose range is 16x the median one keeps 4 bits less under one scale per tensor. */
#define AN_DIAG_WSPREAD_HIGH 16.0

/** Measured on the float weights of s's optimised graph (BatchNormalization folded, as they are
 * quantized). RD_E_NOMEM when memory runs out (a layer whose weights cannot be read is left out). */
rd_status an_diag_weight_spread(rd_sim *s, an_diag_wspread *out, rd_error *err);

#endif

/*
 * rknn_diag/result.h: the result model of an accuracy analysis, plain data shared by the analyzer
 * (which fills it) and the reports library (which writes error_analysis.txt, report.json and
 * report.html from it, and reads RKNN-Toolkit2's error_analysis.txt back into it).
 *
 * Ownership: every pointer in these structs is owned by the rd_result that contains it and freed by
 * rd_result_fini (reports/). Strings are NUL-terminated UTF-8 as they came from the model.
 */
#ifndef RKNN_DIAG_RESULT_H
#define RKNN_DIAG_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Why a comparison has no ordinary cosine (docs/metrics.md). */
typedef enum rd_degenerate {
    RD_DEG_NONE = 0,  /* ordinary tensors */
    RD_DEG_BOTH_ZERO, /* both all zero: identical; cos stays NaN as RKNN prints it, ranks as 1 (an_cos_effective) */
    RD_DEG_REF_ZERO,  /* the reference is all zero, the tested tensor is not */
    RD_DEG_TEST_ZERO, /* the tested tensor is all zero, the reference is not */
    RD_DEG_CONSTANT,  /* both constant (non-zero): cosine carries no shape information */
    RD_DEG_NONFINITE, /* NaN or Inf in either tensor */
    RD_DEG_SHAPE,     /* element counts differ: not comparable */
} rd_degenerate;

/** The metrics of one comparison (a reference r against a tested tensor t), in double precision. */
typedef struct rd_metrics {
    double cos;     /* RKNN: sum(r*t) / sqrt(sum(r*r) * sum(t*t)), scipy-clipped; NaN when undefined (see degenerate) */
    double euc;     /* RKNN: sqrt(sum((r-t)^2)) */
    double euc_rel; /* euc / sqrt(sum(r*r)) */
    double sqnr_db; /* 10 log10(sum(r^2) / sum((r-t)^2)); +inf when identical */
    double max_abs; /* max |r - t| */
    double mean_abs;        /* mean |r - t| */
    double gain, offset;    /* least-squares fit t ~ gain * r + offset */
    double sqnr_affine_db;  /* SQNR of t against gain*r+offset: what is left after a gain/offset error */
    double err_steps;       /* RMS(r - t) / scale of the tested tensor's int8 parameters; NaN if none */
    double saturated_share; /* share of values at qmin/qmax (int8 layers), 0 otherwise */
    double zero_share;      /* share of non-zero reference values that became exactly 0 */
    int64_t fp16_overflow;  /* values that overflowed float16 in this layer */
    double fp16_max_abs;    /* largest magnitude before float16 rounding */
    int64_t count;          /* elements compared */
    rd_degenerate degenerate;
    int64_t nan, inf;         /* NaN and +-Inf values in the tested tensor (maximum over samples) */
    int64_t ref_nan, ref_inf; /* the same in the reference */
} rd_metrics;

/** One column group cell (entire, single, ...) of a layer, over the analysed samples. */
typedef struct rd_metric_group {
    bool present;     /* false: a blank cell (fused tensor, or no board dump) */
    rd_metrics mean;  /* each metric averaged over the samples (the sample itself when only one) */
    double cos_min;   /* smallest cosine over the samples */
    double cos_p5;    /* 5th percentile of the cosine (nearest rank) */
    int worst_sample; /* index of the sample with the smallest cosine */
    int n_samples;
} rd_metric_group;

/** Cosine per output channel (axis 1), kept for the worst layers only. */
typedef struct rd_channel_cos {
    double *cos; /* n entries */
    size_t n;
} rd_channel_cos;

/** A value histogram of golden against tested values, kept for the worst layers only. */
typedef struct rd_histogram {
    double lo, hi; /* range of the bins */
    size_t n_bins;
    uint64_t *golden; /* n_bins counts */
    uint64_t *tested; /* n_bins counts */
} rd_histogram;

typedef enum rd_group_id {
    RD_GROUP_SIM_ENTIRE = 0,
    RD_GROUP_SIM_SINGLE,
    RD_GROUP_RT_ENTIRE,     /* runtime_error.entire: golden against the board */
    RD_GROUP_RT_SINGLE_SIM, /* runtime_error.single_sim: simulator layer on the board's inputs */
    RD_GROUP_COUNT
} rd_group_id;

typedef struct rd_layer_result {
    char *name;       /* tensor name as RKNN prints it */
    char *op_type;    /* the label's op type, as RKNN's accuracy_analysis prints it: "Input", "exDataConvert",
                         "Conv" (also a Gemm or a GlobalAveragePool), "Clip", "exSwish", "exSoftmax13", ... */
    char *npu_op;     /* the NPU op of the fused group computing the tensor ("ConvExSwish", "ConvAdd"), as
                         the board's layer table and dumps name it; NULL when unknown (inputs, snapshots) */
    char *fused_into; /* non-NULL for a tensor fused away (a blank row) */
    char *precision;  /* "int8", "float16", "float32" */
    int rank;
    int64_t dims[8];
    rd_metric_group groups[RD_GROUP_COUNT];
    rd_channel_cos channels; /* may be empty */
    rd_histogram hist;       /* may be empty (n_bins 0) */
} rd_layer_result;

typedef enum rd_severity { RD_SEV_INFO = 0, RD_SEV_WARNING, RD_SEV_ERROR } rd_severity;

typedef enum rd_finding_kind {
    RD_FIND_FP16_OVERFLOW = 0, /* values above 65504 in float16 */
    RD_FIND_LOSSY_LAYER,       /* a layer whose single cosine is low: the error it adds itself */
    RD_FIND_ENTIRE_JUMP,       /* the layer where the accumulated error jumps */
    RD_FIND_CONFIG,            /* entire drop with no single drop: likely configuration */
    RD_FIND_RUNTIME_DEPARTURE, /* the board departs from the simulator although its inputs agree */
    RD_FIND_INPUT_MISMATCH,    /* the application's input differs from the simulator's */
    RD_FIND_OUTPUT_MISMATCH,   /* the application read an output with the wrong dtype or scale */
    RD_FIND_NONFINITE,         /* NaN or Inf in an analysed tensor: the first one, the count, the likely cause */
    RD_FIND_ERROR_BLOCK,       /* the output error builds up in a block of layers (a float16 sweep shows it) */
    RD_FIND_OTHER,
    RD_FIND_COUNT
} rd_finding_kind;

typedef struct rd_finding {
    rd_finding_kind kind;
    rd_severity severity;
    char *layer;    /* tensor name, or NULL for model-wide findings */
    char *title;    /* one line: "FP16 overflow in 'amplified'" */
    char *evidence; /* the numbers behind it: "max |x| 90812 > 65504, 1234 values" */
    char *advice;   /* what to do: "keep it in float32, rescale the layer, ..." (may be NULL) */
    double score;   /* ranking key within its kind (larger first) */
} rd_finding;

/** One configuration entry shown in reports: "dtype" = "w8a8", ... */
typedef struct rd_config_item {
    char *key;
    char *value;
} rd_config_item;

/** Where one kind of decision of the simulation came from, in a run that simulated a built model
    (--rknn, --rknn-build-log): "fusion groups" from "the .rknn", "activation scales" from "calibration", ... */
typedef struct rd_fidelity_item {
    char *decision;
    char *source;
    char *detail; /* the counts and what they cover; may be "" */
} rd_fidelity_item;
/**
 * One point of a float16 sweep (accuracy --sweep, hybrid sweep; docs/hybrid.md): the output accuracy with
 * float16 on the first k int8 tensors in execution order (prefix) and on the others (suffix).
 */
typedef struct rd_sweep_point {
    int k;     /* 0..n_candidates */
    int layer; /* row in layers of candidate k (the first of the suffix); -1 at k = n_candidates */
    double prefix_cos, prefix_sqnr_db; /* float16 on candidates 0..k-1 */
    double prefix_mac_share;           /* their share of the int8 tensors' MACs, 0..1 */
    double suffix_cos, suffix_sqnr_db; /* float16 on candidates k..n-1 */
    double suffix_mac_share;
} rd_sweep_point;

/** A float16 sweep: n_candidates 0 means none was made. */
typedef struct rd_sweep {
    int n_candidates;       /* int8 tensors that can go to float16, in execution order */
    char *objective;        /* how the outputs make one cosine: "min-cos-over-outputs", "cos", "sqnr" */
    rd_sweep_point *points; /* k ascending, first k = 0, last k = n_candidates */
    size_t n_points;
    /* the block the output error builds up in: the fewest consecutive candidates [block_start, block_end)
       whose float16 lifts the outputs through 3/4 of what float16 everywhere gains; block_end 0: none */
    int block_start, block_end;
    int block_first_layer, block_last_layer; /* their rows in layers */
    double block_cos, block_sqnr_db, block_mac_share;
} rd_sweep;

typedef struct rd_result {
    char *tool;          /* "rknn-diag 0.1.0" or "RKNN-Toolkit2 (imported)" */
    char *model;         /* model path or name */
    char *custom_string; /* model_config.yml's configs.custom_string, NULL when none */
    rd_config_item *config;
    size_t n_config;
    int n_samples;
    bool has_runtime;        /* runtime groups present */
    rd_layer_result *layers; /* in execution order of the optimised graph, inputs first */
    size_t n_layers;
    rd_finding *findings; /* most important first */
    size_t n_findings;
    rd_fidelity_item *fidelity; /* empty unless the run simulated a built model */
    size_t n_fidelity;
    rd_sweep sweep; /* the float16 sweep, when one was made */
} rd_result;

#ifdef __cplusplus
}
#endif
#endif

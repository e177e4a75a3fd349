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

/** How the outputs of one sample make one cosine and one SQNR (--objective, docs/hybrid.md). */
typedef enum an_hyb_objective {
    AN_HYB_OBJ_MIN_COS = 0, /* min-cos-over-outputs: the lowest cosine (and SQNR) over the outputs (default) */
    AN_HYB_OBJ_COS,         /* cos: every output together as one vector, cosine the target */
    AN_HYB_OBJ_SQNR,        /* sqnr: every output together as one vector, SQNR the target */
} an_hyb_objective;

/** Which sample a target holds for (--over). */
typedef enum an_hyb_over { AN_HYB_OVER_WORST = 0, AN_HYB_OVER_MEAN } an_hyb_over;

const char *an_hyb_objective_name(an_hyb_objective o); /* "min-cos-over-outputs", "cos", "sqnr" */

/**
 * Accuracy of the model outputs against the golden, per the objective: the worst sample's and the mean
 * over the samples. cos is the effective cosine (docs/metrics.md); NaN counts as -1.
 */
typedef struct an_hyb_score {
    double cos;                 /* worst sample */
    double sqnr_db;             /* worst sample */
    double cos_mean, sqnr_mean; /* mean over the samples */
    double score;               /* the --score-cmd number over every sample (higher is better); NaN without */
} an_hyb_score;

/** What a search must reach; NaN fields are not required. */
typedef struct an_hyb_target {
    double cos, sqnr_db, score;
    an_hyb_over over; /* cos and SQNR: the worst sample (default) or the mean */
} an_hyb_target;

/** The score's cosine and SQNR the target looks at (worst or mean). */
double an_hyb_cos_of(const an_hyb_target *t, const an_hyb_score *s);
double an_hyb_sqnr_of(const an_hyb_target *t, const an_hyb_score *s);
/** Every required part of the target is reached. */
bool an_hyb_meets(const an_hyb_target *t, const an_hyb_score *s);
/** How far from the target, normalised (0 when met): a search keeps what lowers it. */
double an_hyb_deficit(const an_hyb_target *t, const an_hyb_score *s);

/** The external scorer (hybrid_score.c, --score-cmd): gives each measured set one number. */
typedef struct an_hyb_scorer an_hyb_scorer;

typedef struct an_hyb_scorer_opts {
    const char *cmd;       /* the scorer (score_cmd.h): {outputs} (or an appended argument) is the candidate's folder */
    double timeout_s;      /* --score-timeout */
    const char *work_dir;  /* the candidates' folders go here (emptied first) */
    const rd_model *model; /* its outputs' names */
    const rd_tensor *golden; /* n_samples * outputs, written once to work_dir/golden */
    size_t n_samples, n_in;
    const char *const *inputs; /* n_samples * n_in input files for index.json (NULL or NULL entries: unknown) */
    FILE *errs;                /* the scorer's stderr goes here (NULL: discarded) */
} an_hyb_scorer_opts;

rd_status an_hyb_scorer_create(const an_hyb_scorer_opts *o, an_hyb_scorer **out, rd_error *err);
void an_hyb_scorer_destroy(an_hyb_scorer *sc);
/** A new candidate folder for the set names[0..n-1] (removed again on failure). */
rd_status an_hyb_scorer_begin(an_hyb_scorer *sc, const char *const *names, size_t n, rd_error *err);
/** Removes the begun candidate's folder: its measurement failed before the scorer ran. */
void an_hyb_scorer_abandon(an_hyb_scorer *sc);
/** Writes one sample's outputs (thread-safe across samples). */
rd_status an_hyb_scorer_put(an_hyb_scorer *sc, size_t sample, const rd_tensor *outs, size_t n_out, rd_error *err);
/**
 * Writes index.json, runs the command (an_score_cmd_run) and reads its number. Errors name the candidate and
 * the command's last output: RD_E_TIMEOUT (killed after the timeout), RD_E_INVAL (non-zero exit or a signal),
 * RD_E_PARSE (no number), RD_E_LIMIT (too much output); the folder is then kept, otherwise removed (RD_E_NOMEM:
 * removed, the error as it came).
 */
rd_status an_hyb_scorer_finish(an_hyb_scorer *sc, double *score, rd_error *err);
/** Commands run so far and the wall time they took. */
void an_hyb_scorer_stats(const an_hyb_scorer *sc, size_t *calls, double *seconds);

/** Default memory for prefix reuse over all samples (docs/hybrid.md; --reuse-mb). */
#define AN_HYB_REUSE_DEFAULT_MB 512

/** What the measurements share: the samples, their golden outputs (computed once) and the simulation. */
typedef struct an_hyb_ctx {
    rd_sim *s;               /* calibrated once; candidates are switched to float16 and back */
    const rd_tensor *inputs; /* n_samples * n_in, sample-major */
    size_t n_in, n_samples, n_out;
    rd_tensor *golden;          /* n_samples * n_out FP32 outputs of the original model */
    int threads;                /* samples measured at once (sharing the simulation's pool: a run that finds it
                                   busy computes on its own thread) */
    size_t n_runs;              /* simulator runs so far */
    double run_seconds;         /* wall time spent in them */
    size_t reuse_bytes;         /* activations kept for prefix reuse, all samples together (0: full runs);
                                   set before the first measurement */
    rd_sim_prefix **prefix;     /* per sample: the baseline's recording (an_hyb_keep), made on first use */
    an_hyb_objective objective; /* how the outputs make one cosine (default: the lowest over the outputs) */
    an_hyb_scorer *scorer;      /* NULL, or every measurement's outputs go to it (--score-cmd) */
} an_hyb_ctx;

/** Nodes the measurements computed, and what full runs would have (prefix reuse: docs/hybrid.md). */
typedef struct an_hyb_reuse {
    uint64_t nodes_computed, nodes_full;
    size_t bytes; /* recordings held now */
} an_hyb_reuse;

rd_status an_hyb_init(an_hyb_ctx *c, rd_model *m, rd_sim *s, const rd_tensor *inputs, size_t n_samples, int threads,
                      rd_error *err);
void an_hyb_fini(an_hyb_ctx *c);

/**
 * Runs every sample with the tensors names[0..n-1] in float16 (int8 again afterwards). Each run starts at
 * the first node whose configuration differs from the baseline's (the first measurement's, or the one
 * last kept with an_hyb_keep); the scores are those of full runs, bit for bit. Up to `threads` samples
 * run at once. With a scorer, the outputs of every sample are handed to it and its number is out->score
 * (a scorer failure is the measurement's: RD_E_IO, RD_E_TIMEOUT or RD_E_PARSE naming the set).
 */
rd_status an_hyb_measure(an_hyb_ctx *c, const char *const *names, size_t n, an_hyb_score *out, rd_error *err);

/** The set of the last an_hyb_measure becomes the baseline later measurements resume from (no run). */
void an_hyb_keep(an_hyb_ctx *c);

void an_hyb_reuse_get(const an_hyb_ctx *c, an_hyb_reuse *out);

/** One int8 tensor that could go to float16, with the evidence. */
typedef struct an_hyb_cand {
    const char *name; /* the tensor (owned by the rd_result it came from) */
    const char *op_type;
    int position;                                            /* row in the accuracy table */
    double single_cos, entire_cos, single_sqnr, entire_sqnr; /* minimum / mean over the samples */
    double saturated;                                        /* share of values clamped at -128/127 */
    double w_outlier;    /* max|w| of the worst channel / the median channel's; NaN: no weight */
    double macs;         /* MACs of the nodes computing it (fused ones included) */
    double cost;         /* cost of keeping it in float16 (MACs or added milliseconds) */
    bool cost_estimated; /* latency tables timed it one way only: cost from the others' ratio */
    double alone_cos;    /* output cosine with it alone in float16; NaN: not measured */
    double alone_sqnr;
    an_hyb_score alone; /* the whole score of that measurement (alone_cos is alone.cos) */
    bool allowed;       /* false: excluded (reason says why) */
    char reason[200];
} an_hyb_cand;

/** The value a tensor's data is held in: itself, or the group the passes fused it into (v: a value index). */
int an_hyb_holder(const rd_sim *s, int v);

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

/** Default points of a sweep (--sweep-points; 0 measures every k). */
#define AN_HYB_SWEEP_POINTS_DEFAULT 65

typedef struct an_hyb_sweep_opts {
    size_t max_points; /* k values measured, spread evenly (0: every k) */
    FILE *progress;    /* may be NULL */
} an_hyb_sweep_opts;

/**
 * The float16 sweep over cands[0..n-1] (in execution order): for each k of the grid, the outputs with float16
 * on cands[0..k) and on cands[k..n), and the block (hybrid_sweep.c, docs/hybrid.md). out is overwritten (its
 * arrays are malloc'ed: rd_result_fini frees them when it is a result's sweep).
 */
rd_status an_hyb_sweep(an_hyb_ctx *c, const an_hyb_cand *cands, size_t n, const an_hyb_sweep_opts *o, rd_sweep *out,
                       rd_error *err);

/**
 * Costs (added milliseconds) from latency tables, merged: CSVs and the board's RKNN_LOG_LEVEL=4 logs, told
 * apart by content (latency_table.c, docs/hybrid.md). A CSV row naming an unknown tensor fails; log rows
 * that name nothing of the model are ignored and counted (the log must match something). Notes go to
 * errs (may be NULL).
 */
rd_status an_hyb_latency_load(const char *const *paths, size_t n_paths, const rd_sim *s, an_hyb_cand *cands, size_t n,
                              FILE *errs, rd_error *err);

/* ---- the search (hybrid_search.c) ---- */

/** One measurement of the search, as it is printed and kept in search.json. */
typedef struct an_hyb_step {
    const char *phase; /* "int8", "fp16", "single", "prefix", "start", "suffix", "end", "cut", "drop",
                          "merge", "add" (docs/hybrid.md) */
    char what[240];    /* the tensor, or the window "first .. last" */
    size_t n_float;
    double cost;
    an_hyb_score score;
    bool meets;
    bool kept;   /* the set became the search's current one */
    bool cached; /* measured before: the score comes from the cache, no run */
} an_hyb_step;

typedef void (*an_hyb_step_fn)(void *user, const an_hyb_step *step);

typedef struct an_hyb_search_opts {
    an_hyb_target target;
    size_t max_float;       /* --max-float */
    an_hyb_step_fn on_step; /* every measurement (may be NULL) */
    void *user;
} an_hyb_search_opts;

typedef struct an_hyb_search_result {
    size_t *set; /* candidate indices (into cands), in table order; malloc'ed */
    size_t n;
    an_hyb_score score;  /* of the set */
    an_hyb_score full;   /* every allowed candidate in float16 */
    bool unreachable;    /* float16 everywhere misses the target: set empty */
    bool reached;        /* the set meets the target (false: --max-float stopped it) */
    size_t measurements; /* sets measured (simulator runs of every sample each) */
    size_t cached;       /* sets asked again and answered from the cache */
} an_hyb_search_result;

/**
 * The block search over the allowed candidates: singles that help by themselves, windows in execution order
 * by bisection (prefix, then its start; suffix, then its end), removal of what the target does not need (in
 * chunks, then one by one, costliest first), merging of windows split by gaps that cost nothing, and greedy
 * addition under --max-float. Whenever float16 on every allowed candidate meets the target and --max-float
 * does not bind, the result meets it. order: an_hyb_rank's; base: all-int8.
 */
rd_status an_hyb_search(an_hyb_ctx *c, const an_hyb_cand *cands, size_t n_cands, const size_t *order,
                        const an_hyb_score *base, const an_hyb_search_opts *o, an_hyb_search_result *out,
                        rd_error *err);
void an_hyb_search_result_fini(an_hyb_search_result *r);

#endif

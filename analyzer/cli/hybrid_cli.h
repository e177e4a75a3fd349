/*
 * hybrid_cli.h: what the `rknn-diag hybrid` command files share: the parsed arguments, the prepared model,
 * simulation and samples, and the subcommands implemented outside cmd_hybrid.c (hybrid_cli_search.c:
 * search; hybrid_cli_sweep.c: sweep).
 */
#ifndef RD_AN_HYBRID_CLI_H
#define RD_AN_HYBRID_CLI_H

#include "cmd_spec.h"
#include "hybrid.h"
#include "quant_setup.h"

typedef enum sub_kind { SUB_SUGGEST, SUB_SEARCH, SUB_SWEEP, SUB_DIAGNOSE, SUB_VERIFY } sub_kind;

typedef struct hyb_args {
    sub_kind sub;
    const char *model_path;
    long measure, top, max_float, reuse_mb, sweep_points;
    bool json;
    double target_cos, target_sqnr, target_score; /* NaN: not given */
    an_hyb_objective objective;
    an_hyb_over over;
    const char *latency, *out_path, *rknn_cfg, *runtime_dumps; /* latency: the first table, if any */
    const char *latency_paths[16];
    size_t n_latency;
    an_cmd_args cmd;
} hyb_args;

typedef struct hyb_run {
    rd_model *m;
    rd_sim *s;
    rd_tensor *samples;
    size_t n_samples, n_in;
    rd_result result;
    an_hyb_ctx hc;
    bool hc_ready;
    an_hyb_cand *cands;
    size_t n_cands;
    size_t *order;
} hyb_run;

/** Seconds on a monotonic clock. */
double an_hyb_now(void);

/** hybrid search: the block search, its path and result, the cfg and the reports in OUT's folder. */
int an_hyb_cli_search(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, const an_hyb_score *base, double t0, rd_error *err);

/** hybrid diagnose: the diagnosis as text (or --json) and its exit code. */
int an_hyb_cli_diagnose(an_cmd_ctx *ctx, hyb_args *a);

/** hybrid sweep: the float16 sweep as a table (or --json) and the block it finds. */
int an_hyb_cli_sweep(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, rd_error *err);

/** The allowed candidates, in table order, copied into a new array (*n of them). */
rd_status an_hyb_allowed(const hyb_run *r, an_hyb_cand **out, size_t *n, rd_error *err);

#endif

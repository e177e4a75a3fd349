/*
 * run_bench.h: `rknn-diag run --bench N` (cmd_run.c): N observed inferences after a warm-up, their median,
 * and where the time went, per op type.
 */
#ifndef RD_AN_RUN_BENCH_H
#define RD_AN_RUN_BENCH_H

#include "cmd_spec.h"

/* What is timed: the float32 reference (sim NULL) or a simulation of m, every tensor given to observer. */
typedef struct an_bench_target {
    rd_model *m;
    rd_sim *sim; /* NULL: the float32 reference */
    const rd_tensor *inputs;
    size_t n_in;
    rd_observer_fn observer; /* what a real run does with each tensor (cmd_run.c: its statistics) */
    void *observer_user;
    rd_pool *pool;
    const char *model_path; /* named in the JSON */
    bool json;              /* print the figures as one JSON object instead of text */
} an_bench_target;

/* Times n runs and prints the median line and the table per op type (or their JSON) on ctx->out; returns the
   exit code. */
int an_run_bench(an_cmd_ctx *ctx, const an_bench_target *t, long n);

#endif

/*
 * accuracy_runtime.h: the board side of `rknn-diag accuracy` (--target/--run, --runtime-dumps): the
 * dump folder loaded and mapped, the board's tensors handed to the analysis, the application's input
 * and output checked, the board's files written into the snapshot's runtime/ folder.
 */
#ifndef RD_AN_ACCURACY_RUNTIME_H
#define RD_AN_ACCURACY_RUNTIME_H

#include "board_session.h"
#include "dumps.h"
#include "quant_setup.h"
#include "rknn_diag/result.h"

#define AN_MAX_APP_OUTPUTS 16

typedef struct an_runtime {
    an_dump_set *dumps;
    rd_sim *sim;
    const an_quant_opts *q;
    size_t n_in;
    rd_tensor *norm_inputs;     /* per graph input: the InputOperator dump after mean/std (fallback) */
    bool *norm_tried;
} an_runtime;

/** Writes input<i>.npy (raw: before mean/std, uint8 when the data is 8-bit) and input<i>_preprocessed.npy. */
rd_status an_runtime_write_inputs(const an_quant_opts *q, const rd_model *m, const char *const *paths,
                                  const rd_tensor *preprocessed, const char *dir, rd_error *err);

/** The raw input (float32 in the graph's layout, before mean/std and RGB2BGR) of graph input i. */
rd_status an_runtime_raw_input(const an_quant_opts *q, const rd_model *m, size_t i, const char *path, rd_tensor *out,
                               rd_error *err);

/** Loads the dump folder dir for s; RD_E_NOTFOUND/RD_E_PARSE when nothing can be compared. */
rd_status an_runtime_open(an_runtime *rt, const char *dir, const rd_platform_info *plat, rd_sim *s,
                          const an_quant_opts *q, rd_error *err);

/** An rd_runtime_fn over an an_runtime: the dump's tensor, or for a graph input its normalised InputOperator. */
const rd_tensor *an_runtime_tensor(void *user, int value);

/**
 * The application checks: each graph input's InputOperator dump against the raw input (paths: the
 * analysed sample's files), each --app-outputs file against the OutputOperator dump (or the simulator's
 * output). Adds findings to r; notes go to log.
 */
rd_status an_runtime_checks(an_runtime *rt, const char *const *paths, const rd_tensor *inputs,
                            const char *const *app_outputs, size_t n_app_outputs, rd_result *r, FILE *log,
                            rd_error *err);

/** Writes the mapping report to path. */
rd_status an_runtime_report(const an_runtime *rt, const char *path, rd_error *err);

void an_runtime_close(an_runtime *rt);

#endif

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
#include "runtime_io.h"
#include "rknn_diag/result.h"

#define AN_MAX_APP_OUTPUTS 16

typedef struct an_runtime {
    an_dump_set *dumps;
    rd_sim *sim;
    const an_quant_opts *q;
    an_app_api api; /* --app-api: which side of the normalisation InputOperator dumps hold */
    size_t n_in;
    rd_tensor *fed;            /* per graph input: what the board fed its first layer (float32; data NULL: unknown) */
    an_input_verdict *verdict; /* per graph input: the input check */
    char **why;                /* per graph input: its explanation (NULL when the input was not checked) */
} an_runtime;

/** Writes input<i>.npy (raw: before mean/std, uint8 when the data is 8-bit) and input<i>_preprocessed.npy. */
rd_status an_runtime_write_inputs(const an_quant_opts *q, const rd_model *m, const char *const *paths,
                                  const rd_tensor *preprocessed, const char *dir, rd_error *err);

/** The raw input (float32 in the graph's layout, before mean/std and RGB2BGR) of graph input i. */
rd_status an_runtime_raw_input(const an_quant_opts *q, const rd_model *m, size_t i, const char *path, rd_tensor *out,
                               rd_error *err);

/**
 * Loads the dump folder dir for s and checks the application's input: each graph input's InputOperator
 * dump, read by the input-dump rule of api (docs/runtime.md), against the analysed sample (paths: its
 * files; inputs: the same prepared as the simulator reads them). Decides what the board fed its first
 * layer (an_runtime_tensor's answer for graph inputs). Notes go to log. RD_E_NOTFOUND/RD_E_PARSE when
 * nothing can be compared.
 */
rd_status an_runtime_open(an_runtime *rt, const char *dir, const rd_platform_info *plat, rd_sim *s,
                          const an_quant_opts *q, an_app_api api, const char *const *paths, const rd_tensor *inputs,
                          FILE *log, rd_error *err);

/** An rd_runtime_fn over an an_runtime: the dump's tensor, or for a graph input what the board fed the model. */
const rd_tensor *an_runtime_tensor(void *user, int value);

/**
 * The application checks as findings: the input check of an_runtime_open for each graph input, and each
 * --app-outputs file against the OutputOperator dump (or the simulator's output for inputs).
 */
rd_status an_runtime_checks(an_runtime *rt, const rd_tensor *inputs, const char *const *app_outputs,
                            size_t n_app_outputs, rd_result *r, rd_error *err);

/** Writes the mapping report to path. */
rd_status an_runtime_report(const an_runtime *rt, const char *path, rd_error *err);

void an_runtime_close(an_runtime *rt);

#endif

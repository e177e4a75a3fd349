/*
 * score_cmd.h: external scorer commands (`eval --score-cmd`, `hybrid search --score-cmd`), one contract
 * for every command that takes one (docs/score-cmd.md):
 *
 *   1. rknn-diag writes the model's outputs of every sample into a folder: one .npy per graph output per
 *      sample, "s<sample, 6 digits>_o<output>.npy" (the tensor exactly as the graph produced it), and
 *      index.json listing them: {"format": "rknn-diag-outputs/1", "precision": "int8", "outputs": [names...],
 *      "samples": [{"sample": K, "input": "first input file", "inputs": [every input file or null],
 *      "files": ["s000000_o0.npy", ...], "shapes": [[1, 1000], ...]}]} plus what the command adds
 *      (hybrid search: "candidate", "float16", "reference").
 *   2. It runs the command through /bin/sh with the folder as its argument ($1, or where {outputs} stands in
 *      the command; also $RD_OUTPUTS and its alias $RKNN_DIAG_OUTPUTS), stdin empty, stderr passed through,
 *      in its own process group, killed (the whole group) when it outruns the timeout.
 *   3. The command prints one number (higher is better) as the last non-empty line of stdout and exits 0.
 *      Anything else (no number, trailing text, NaN, a non-zero status, a signal, the timeout, more than
 *      AN_SCORE_MAX_STDOUT bytes) is an error naming the command, what it did and its last output.
 */
#ifndef RD_AN_SCORE_CMD_H
#define RD_AN_SCORE_CMD_H

#include "rknn_diag/simulator.h"

#include <cjson/cJSON.h>
#include <stdio.h>

#define AN_SCORE_MAX_STDOUT ((size_t)64 << 10) /* what a scorer may print on stdout */
#define AN_SCORE_DEFAULT_TIMEOUT 600.0         /* seconds (--score-timeout) */

/**
 * Runs cmd on folder dir and reads its score. timeout_s > 0 bounds the run (the process group gets SIGTERM,
 * then SIGKILL 2 s later). stderr of the command goes to errs (NULL: discarded). RD_E_IO when it cannot
 * start, RD_E_TIMEOUT past the timeout, RD_E_PARSE for output that is not one number, RD_E_INVAL for a
 * non-zero exit status or a signal.
 */
rd_status an_score_cmd_run(const char *cmd, const char *dir, double timeout_s, FILE *errs, double *out, rd_error *err);

/** Parses a scorer's stdout (len bytes): the last non-empty line must be one finite number. */
rd_status an_score_parse_output(const char *buf, size_t len, const char *cmd, double *out, rd_error *err);

/** The outputs folder of step 1, written sample by sample (each .npy atomically, index.json last). */
typedef struct an_outputs_dir an_outputs_dir;

/** Starts a folder (created if missing; files it writes replace older ones). names: the graph outputs. */
rd_status an_outputs_dir_create(const char *dir, const char *precision, const char *const *names, size_t n_outputs,
                                an_outputs_dir **out, rd_error *err);
/** Adds key: value (taken over, even on failure) to index.json's top level. */
rd_status an_outputs_dir_note(an_outputs_dir *d, const char *key, cJSON *value, rd_error *err);
/**
 * Writes the outputs of one sample (inputs: its n_inputs input files for index.json, NULL entries unknown).
 * Thread-safe for different samples; index.json lists them in sample order whatever the order of the calls.
 */
rd_status an_outputs_dir_add(an_outputs_dir *d, size_t sample, const char *const *inputs, size_t n_inputs,
                             const rd_tensor *outs, rd_error *err);
/** Writes index.json (atomically; once all samples are in). */
rd_status an_outputs_dir_finish(an_outputs_dir *d, rd_error *err);
void an_outputs_dir_destroy(an_outputs_dir *d);

#endif

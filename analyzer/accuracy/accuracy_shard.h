/*
 * accuracy_shard.h: what `accuracy --shard K/N` and its merge need beyond the partial file
 * (accuracy_partial.h): the run's hash, the shard's samples, the command line kept in the partial.
 */
#ifndef RD_AN_ACCURACY_SHARD_H
#define RD_AN_ACCURACY_SHARD_H

#include "accuracy_partial.h"
#include "quant_setup.h"

/**
 * SHA-256 (hex) of what decides a shard's numbers: the partial's format, the rknn-diag version, the command
 * line less -o/--output-dir, --shard and -q/--quiet, and the bytes of the model, the -c configuration, the
 * --cfg file, --rknn and --rknn-build-log, the dataset list and every file it names (the calibration set).
 */
rd_status an_acc_run_hash(const an_quant_opts *q, const char *model_path, int argc, char **argv, char *hex,
                          rd_error *err);
/** SHA-256 (hex) of the run hash and the shard's place: k, n and its sample range. */
rd_status an_acc_shard_hash(const char *run_hex, int k, int n, size_t lo, size_t hi, char *hex, rd_error *err);

/** argv less -o/--output-dir DIR, --shard K/N and -q/--quiet (copies, in out->argv/argc). */
rd_status an_acc_keep_argv(int argc, char **argv, an_acc_header *out, rd_error *err);

/**
 * The samples of a run of --samples `wanted` lines of q's dataset: *total (warning on errs when the list is
 * shorter), and samples [lo, hi) of them as graph tensors (out: (hi - lo) * inputs tensors).
 */
rd_status an_acc_dataset_total(const an_quant_opts *q, const rd_model *m, size_t wanted, FILE *errs, size_t *total,
                               rd_error *err);
rd_status an_acc_load_range(const an_quant_opts *q, const rd_model *m, size_t lo, size_t hi, FILE *errs,
                            rd_tensor **out, rd_error *err);

#endif

/*
 * built.h: the simulation taking a built model's decisions instead of its own (`--rknn MODEL.rknn`,
 * `--rknn-build-log FILE`, docs/rknn-model.md "Simulating what the toolkit built").
 *
 * From a .rknn: which ONNX tensors are materialised (fusion groups read from the nodes and their input and
 * output names), each one's precision (int8, float16 islands with their exDataConvert, int16), scale and
 * zero point, the weights' codes and per-channel parameters, mean/std from `attrs`. From a build log: the
 * groups and precisions of its layer table (FullName, OpType, DataType) and its float16 tensors; scales
 * then come from calibration. Either is first checked against the ONNX model and the platform (another
 * model, another platform, another toolkit version: RD_E_PARSE naming what differs, exit 3).
 *
 * Lifetime: an_built_load when the model is known (an_quant_finish), an_built_apply on each simulation
 * built from it (before calibration), an_built_reapply after calibration, then the report and the
 * fidelity notes. Value indices are those of the simulation's optimised graph.
 */
#ifndef RD_AN_BUILT_H
#define RD_AN_BUILT_H

#include "rknn_diag/result.h"
#include "rknn_diag/rknn_model.h"
#include "rknn_diag/simulator.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct an_built an_built;

/** What the command line gave besides the files (to check the files against). */
typedef struct an_built_request {
    const char *rknn_path;    /* --rknn, or NULL */
    const char *log_path;     /* --rknn-build-log, or NULL */
    const char *model_path;   /* the ONNX model (messages) */
    const char *platform;     /* --platform / --target / target_platform, or NULL */
    bool mean_std_from_flags; /* --mean/--std given on the command line (else from -c, if any) */
    bool dtype_given;         /* --dtype or quantized_dtype given */
} an_built_request;

/**
 * Loads the .rknn and/or the build log and checks them against m (inputs, outputs and every stored tensor:
 * names and shapes), the platform and each other (toolkit version, target). Fills cfg's mean/std from the
 * .rknn's attrs when none were given and its dtype when not given; refuses differing ones (RD_E_USAGE when
 * they came from flags: exit 2; RD_E_PARSE from -c: exit 3). RD_E_PARSE / RD_E_UNSUPPORTED for files
 * that are not this model's or cannot be read (exit 3). *out is freed with an_built_destroy.
 */
rd_status an_built_load(const an_built_request *req, const rd_model *m, rd_rknn_config *cfg, an_built **out,
                        rd_error *err);
void an_built_destroy(an_built *b);

/**
 * Replaces s's fusion groups, precisions, int8/int16 parameters and weight quantization with the built
 * model's (s fresh from rd_sim_create at optimization level 3). *n_uncovered receives the number of
 * materialised tensors the files give no parameters for (calibration supplies them; with a build log, all
 * of them). RD_E_PARSE for a .rknn whose graph or weights contradict the model (another model).
 */
rd_status an_built_apply(an_built *b, rd_sim *s, size_t *n_uncovered, rd_error *err);

/** The .rknn's parameters again after calibration (which sets every tensor's). */
rd_status an_built_reapply(an_built *b, rd_sim *s, rd_error *err);

/** One line saying where the decisions came from, for stderr: "rknn: ... (mapping: rknn_mapping.txt)". */
void an_built_summary(const an_built *b, FILE *f);

/** Writes the mapping report (each .rknn node or log row to ONNX tensors, unmatched ones and why) of the
    last an_built_apply, on s (the simulation it was applied to), to path (written whole or not at all). */
rd_status an_built_report_save(const an_built *b, const rd_sim *s, const char *path, rd_error *err);

/** Adds the fidelity notes (which decisions came from the built model, which from our passes) to r. */
rd_status an_built_fidelity(const an_built *b, rd_result *r, rd_error *err);

/**
 * The precision the built model holds a tensor (a name of the optimised graph) in, and whether that is
 * known: hybrid verify's evidence. *via_f16: computed in float16 before an exDataConvert. *why gets the
 * source ("node #3 ConvAdd 'Conv:Conv_0'", "log line 55: Meet hybrid type", ...).
 */
bool an_built_precision(const an_built *b, const char *tensor, rd_prec *out, bool *via_f16, const char **why);

/** The file the decisions came from (the .rknn when both were given). */
const char *an_built_path(const an_built *b);
/** True when a .rknn was given (not only a build log). */
bool an_built_has_rknn(const an_built *b);
/** The platform the files were built for ("" when they do not say). */
const char *an_built_platform(const an_built *b);

#endif

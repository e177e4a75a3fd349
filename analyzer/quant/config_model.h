/*
 * config_model.h: the model as a -c model_config.yml describes it, one loader for every command that takes
 * -c (docs/config.md, "What each command does with the keys"): the model file (the command line's, else
 * models.model_file_path), cut at subgraphs.inputs/outputs, its input shapes fixed by
 * subgraphs.input_size_list or one set of configs.dynamic_input (--input-shape wins over both), pruned
 * losslessly first when configs.model_pruning is true, and the quantization options finished against it.
 * The config's notes (keys without effect, unknown keys) are printed once.
 */
#ifndef RD_AN_CONFIG_MODEL_H
#define RD_AN_CONFIG_MODEL_H

#include "quant_setup.h"
#include "rknn_diag/frontends.h"

typedef struct an_model_request {
    const char *command;          /* "accuracy", "quantize", ...: named in messages */
    const char *path;             /* the model named on the command line; NULL: models.model_file_path */
    const rd_input_shape *shapes; /* --input-shape: wins over input_size_list (by input name) */
    size_t n_shapes;
    const char *dynamic_refusal; /* NULL: the command runs once per dynamic_input set and dynamic_set picks
                                    it; else why the command takes one shape only (dynamic_input refused) */
    size_t dynamic_set;
    FILE *errs;                 /* notes and the pruning summary; may be NULL */
    bool model_precision;       /* a quantized TFLite model as its own integer arithmetic (--precision model) */
    rd_frontend_info *info;     /* receives the format read (may be NULL) */
    bool model_only;            /* inspect, prune, onnx-edit: the model alone, cut at --graph-inputs/--graph-outputs
                                   (an_quant_apply_cut); no -c, no quantization options finished, no thread pool */
    bool allow_unsupported_ops; /* inspect: load a model whose ops the reference cannot run, to list them */
} an_model_request;

/**
 * Loads the model req describes into *out, applying q's model_config.yml (loaded here if not yet), and
 * finishes q against it (an_quant_finish; with req->model_only the cut flags only). The one loader of every
 * command that takes a model. RD_E_UNSUPPORTED for a dynamic_input the command refuses, RD_E_PARSE naming the
 * file and line for a subgraphs/input_size_list that does not fit the model, RD_E_NOTFOUND or RD_E_INVAL (exit 3)
 * naming a --graph-inputs/--graph-outputs tensor the model does not have, RD_E_USAGE for command-line conflicts
 * (no model, --input-shape with dynamic_input).
 */
rd_status an_model_load_configured(an_quant_opts *q, const an_model_request *req, rd_model **out, rd_error *err);

/** Number of configs.dynamic_input shape sets of q's config (0: none); call after an_quant_finish. */
size_t an_dynamic_sets(const an_quant_opts *q);

/**
 * For the commands that run once per dynamic_input set: reads q's config (an_quant_finish without the
 * model) into *n_sets (0: no sets, one run). Returns AN_GO to go on, or the exit code of the error it printed.
 */
int an_dynamic_prepare(an_cmd_ctx *ctx, an_quant_opts *q, size_t *n_sets);

/** "1x3x224x224" (and "+" between inputs) of dynamic_input set k, for headings and folder names. */
void an_dynamic_set_name(const an_quant_opts *q, size_t k, char *buf, size_t len);

#endif

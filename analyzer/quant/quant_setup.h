/*
 * quant_setup.h: the quantization options shared by run --precision, quantize, eval, export-qdq and
 * accuracy: RKNN's model config (-c) and the same settings as flags, and building a calibrated
 * simulation from them.
 */
#ifndef RD_AN_QUANT_SETUP_H
#define RD_AN_QUANT_SETUP_H

#include "built.h"
#include "cli_internal.h"

/* Option ids of the shared quantization options (commands keep their own ids below 100). */
enum {
    AN_QOPT_CONFIG = 100,
    AN_QOPT_DTYPE,
    AN_QOPT_METHOD,
    AN_QOPT_ALGORITHM,
    AN_QOPT_MEAN,
    AN_QOPT_STD,
    AN_QOPT_RGB2BGR,
    AN_QOPT_DATASET,
    AN_QOPT_PLATFORM,
    AN_QOPT_OPT_LEVEL,
    AN_QOPT_LAYOUT,
    AN_QOPT_CFG,
    AN_QOPT_MAX_IMAGE_PIXELS,
    AN_QOPT_RKNN,
    AN_QOPT_RKNN_LOG,
    AN_QOPT_THREADS,
    AN_QOPT_GRAPH_INPUTS,
    AN_QOPT_GRAPH_OUTPUTS,
};

/* The option table entries, to put in a command's an_optspec array. */
#define AN_QUANT_OPTSPECS                                                                                          \
    {AN_QOPT_CONFIG, "config", 'c', "FILE",                                                                        \
     "RKNN rknn_convert model config (model_config.yml; subgraphs, "                                               \
     "input_size_list, dynamic_input, model_pruning apply: docs/config.md)"},                                      \
        {AN_QOPT_DTYPE, "dtype", 0, "T", "w8a8 (default when quantizing), float16, w8a16, w4a16, w16a16i, ..."},   \
        {AN_QOPT_METHOD, "method", 0, "M", "weights per output channel (channel, default) or per tensor (layer)"}, \
        {AN_QOPT_ALGORITHM, "algorithm", 0, "A", "calibration: normal (default), kl_divergence, mmse"},            \
        {AN_QOPT_MEAN, "mean", 0, "V,V,V", "mean_values of one input (repeat per input)"},                         \
        {AN_QOPT_STD, "std", 0, "V,V,V", "std_values of one input (repeat per input)"},                            \
        {AN_QOPT_RGB2BGR, "rgb2bgr", 0, NULL, "quant_img_RGB2BGR: swap R and B of images before mean/std"},        \
        {AN_QOPT_DATASET, "dataset", 0, "FILE", "calibration list (dataset.txt: one sample per line)"},            \
        {AN_QOPT_PLATFORM, "platform", 0, "CHIP", "target_platform: rk3566, rk3588, rv1106, ..."},                 \
        {AN_QOPT_OPT_LEVEL, "optimization-level", 0, "N", "compiler fusion rules 0..3 (default 3)"},               \
        {AN_QOPT_LAYOUT, "input-layout", 0, "L", ".npy inputs are nhwc (default, as RKNN) or nchw"},               \
        {AN_QOPT_CFG, "cfg", 0, "FILE", "import a .quantization.cfg (parameters and custom_quantize_layers)"},     \
        {AN_QOPT_MAX_IMAGE_PIXELS, "max-image-pixels", 0, "N",                                                     \
         "refuse larger images (default 67108864 = 8192x8192; N, 120M or WxH)"},                                   \
        AN_THREADS_OPTSPEC

/* --threads alone, for commands that run a model without the quantization options (convert). */
#define AN_THREADS_OPTSPEC                                                      \
    {                                                                           \
        AN_QOPT_THREADS, "threads", 0, "N",                                     \
            "threads for the kernels (default: the CPUs this process may use; " \
            "results are bit-identical for any N)"                              \
    }

/* The built-model options (accuracy, run, quantize, hybrid): the simulation takes its decisions from them. */
#define AN_BUILT_OPTSPECS                                                  \
    {AN_QOPT_RKNN, "rknn", 0, "MODEL.rknn",                                \
     "simulate what RKNN-Toolkit2 built from this model: its fused ops, "  \
     "precisions, scales, weights and mean/std (docs/rknn-model.md)"},     \
    {                                                                      \
        AN_QOPT_RKNN_LOG, "rknn-build-log", 0, "FILE",                     \
            "the same from a verbose build log or a board's layer table: " \
            "fused ops and precisions; scales by calibration"              \
    }

typedef struct an_quant_opts {
    rd_rknn_config cfg;      /* -c file, then flags on top */
    const char *config_path; /* -c */
    bool config_loaded;      /* -c read (an_quant_finish reads it once) */
    bool notes_shown;        /* its notes printed (an_model_load_configured) */
    bool dtype_given;
    const char *platform;
    const char *qcfg_path;
    rd_input_layout layout;
    const char *flag_threads; /* --threads as given (NULL: rd_cpu_count()) */
    rd_pool *pool;            /* the kernels' threads, made once by an_quant_pool (owned; freed by fini) */
    /* flags given before -c would be overwritten by loading it: keep them until an_quant_finish */
    const char *flag_dtype, *flag_method, *flag_algorithm, *flag_dataset;
    const char *flag_mean[RD_MAX_MODEL_INPUTS], *flag_std[RD_MAX_MODEL_INPUTS];
    size_t n_flag_mean, n_flag_std;
    bool flag_rgb2bgr;
    int flag_opt_level;          /* -1 when not given */
    const char *flag_max_pixels; /* --max-image-pixels as given */
    const char *flag_layout;     /* --input-layout as given */
    const char *flag_cut[2];     /* --graph-inputs, --graph-outputs as given (comma lists): subgraphs on top */
    uint64_t max_image_pixels;   /* its value (0: RD_DEFAULT_IMAGE_PIXELS) */
    const char *rknn_path;       /* --rknn */
    const char *rknn_log_path;   /* --rknn-build-log */
    const char *model_path;      /* the model as the command names it (messages of the built-model checks) */
    an_built *built;             /* loaded by an_quant_finish with the model; applied by an_quant_build_sim */
    char built_platform[32];     /* the platform the built model names, when it set `platform` (it outlives
                                    `built`: an_quant_finish may run again) */
    bool graph_nhwc;             /* the model's 4-D inputs are NHWC (a TFLite model: an_model_load_configured sets
                                    it): images and .npy files are prepared as for NCHW, then transposed */
} an_quant_opts;

void an_quant_opts_init(an_quant_opts *q);
void an_quant_opts_fini(an_quant_opts *q);

/** Takes an option of AN_QUANT_OPTSPECS, the cut group (--graph-inputs/--graph-outputs: cmd_spec.c) or
    AN_BUILT_OPTSPECS; returns true if id was one (false: not ours). */
bool an_quant_take(an_quant_opts *q, int id, const char *value);

/**
 * --graph-inputs / --graph-outputs over the config's subgraphs (an_quant_finish does it with the other flags; the
 * commands that take the model alone, an_model_request.model_only, only this). RD_E_USAGE for an empty name.
 */
rd_status an_quant_apply_cut(an_quant_opts *q, rd_error *err);

/** True when --rknn or --rknn-build-log was given: the command simulates the built model. */
bool an_quant_wants_built(const an_quant_opts *q);

/**
 * The command's thread pool (--threads N, default rd_cpu_count()), made on the first call and kept in q->pool:
 * one pool per command, handed to every run and simulation. RD_E_USAGE for a bad --threads (exit 2).
 */
rd_status an_quant_pool(an_quant_opts *q, rd_pool **out, rd_error *err);

/**
 * Loads -c, applies the flags over it and checks everything against the model (if given) and the
 * platform, and makes the thread pool (an_quant_pool). With the model, loads --rknn / --rknn-build-log and
 * checks them against it (built.h), taking mean/std and the dtype from the .rknn. RD_E_USAGE for bad flag values
 * (exit 2), file errors as they come (exit 3).
 */
rd_status an_quant_finish(an_quant_opts *q, const rd_model *m, rd_error *err);

/** The simulator precision a dtype means (float16 -> FP16, w8a8 -> INT8, w16a16i/w8a16/w16a16i_dfp -> INT16);
    refuses w4a16 (RD_E_UNSUPPORTED). */
rd_status an_quant_precision(const an_quant_opts *q, rd_prec *out, rd_error *err);

/**
 * Builds the simulation the options describe: passes, imported parameters and custom layers (--cfg), the
 * built model's decisions (--rknn, --rknn-build-log: they win over --cfg), and for INT8 calibration on the
 * dataset (or, without one, on the fallback inputs with a warning) of what nothing else gave parameters.
 * The simulation runs on q->pool (when made) and calibrates as many samples at once as it has threads.
 * progress reports calibration on errs.
 */
rd_status an_quant_build_sim(const an_quant_opts *q, const rd_model *m, const rd_tensor *fallback_inputs, FILE *errs,
                             bool color, rd_sim **out, rd_error *err);

/** The same, calibrating on n_samples samples from a sample function (IDX images) instead of --dataset. */
rd_status an_quant_build_sim_from(const an_quant_opts *q, const rd_model *m, const rd_tensor *fallback_inputs,
                                  rd_sample_fn samples, void *samples_user, size_t n_samples, FILE *errs, bool color,
                                  rd_sim **out, rd_error *err);

/**
 * The built model's decisions on m without parameters or calibration (q->built loaded by an_quant_finish):
 * its groups and precisions, for questions that need no numbers (hybrid verify --rknn). Not runnable where
 * the files give no scales. RD_E_INVAL without a built model.
 */
rd_status an_quant_built_graph(const an_quant_opts *q, const rd_model *m, rd_sim **out, rd_error *err);

/**
 * The samples analysed (accuracy, hybrid): one file per model input given (a sample of n_inputs files), or the
 * first max_samples lines of the dataset; prepared as RKNN reads them into *out (n_samples * input count
 * tensors, sample-major; the caller finalises them and frees the array). RD_E_USAGE when neither is given.
 */
rd_status an_quant_load_samples(const an_quant_opts *q, const rd_model *m, const char *const *inputs, size_t n_inputs,
                                size_t max_samples, FILE *errs, rd_tensor **out, size_t *n_samples, rd_error *err);

/** Prepares input i of a model from a file as RKNN reads it (images, NHWC .npy, mean/std). */
rd_status an_quant_prepare_input(const an_quant_opts *q, const rd_model *m, size_t input, const char *path, FILE *errs,
                                 rd_tensor *out, rd_error *err);
/** an_quant_prepare_input for input `input` of dataset sample `sample`: a list marked layout=graph (written
 *  by onnx-edit --dataset) holds graph tensors, read as --input-layout nchw whatever q says. */
rd_status an_quant_prepare_sample(const an_quant_opts *q, const rd_model *m, const rd_dataset *ds, size_t sample,
                                  size_t input, FILE *errs, rd_tensor *out, rd_error *err);

/**
 * The tensor of s's optimised graph a cfg key names: the exact name, the name without ':0', or a name
 * whose RKNN-sanitised form ('/' -> '_') is the key (with or without ':0'). NULL when none.
 */
const char *an_quant_match_name(const rd_sim *s, const char *key);

/**
 * After a run with a built model (q->built): the summary line on errs, the mapping report in dir (NULL: not
 * written; the summary says how to get it) and the fidelity notes in r (may be NULL). Nothing without one.
 */
rd_status an_quant_built_outputs(const an_quant_opts *q, const rd_sim *s, const char *dir, FILE *errs, rd_result *r,
                                 rd_error *err);

/** True when value is the weight of an int8 integer layer of s; *n_scale (may be NULL) its scale count. */
bool an_quant_is_weight(rd_sim *s, int value, int *n_scale);

#endif

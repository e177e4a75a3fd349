/*
 * eval_task.h: what `eval` (cmd_eval.c, eval_run.c) and `merge` (cmd_merge.c) share with the tasks
 * (eval_classify.c, eval_detect.c, eval_segment.c, eval_score.c).
 *
 * A run evaluates the samples of its shard at every column (fp32, fp16, the integer dtype, each --hybrid
 * cfg); for each sample the task turns the columns' outputs into one JSON record (labels and predictions,
 * boxes, per-class pixel counts). The records, with a header naming the model, the inputs' hashes and the
 * shard, are partial.json (docs/sharding.md). Every report, of one process or of merged shards, is
 * computed by the task from parsed records in sample order, so both are the same bit for bit.
 */
#ifndef RD_AN_EVAL_TASK_H
#define RD_AN_EVAL_TASK_H

#include "cli_internal.h"
#include "det_decode.h"
#include "quant_setup.h"

#include <cjson/cJSON.h>

#define AN_EVAL_MAX_COLS 8
#define AN_EVAL_PARTIAL_FORMAT "rknn-diag-eval-partial/1"
#define AN_EVAL_MAX_PARTIAL_BYTES ((uint64_t)2 << 30)

/** The task options of eval (cmd_eval.c parses them). */
typedef struct an_eval_opts {
    const char *task;   /* "classify" (default), "detect", "segment", "score" */
    const char *labels; /* classify: one class per line */
    const char *idx_images, *idx_labels;
    const char *annotations; /* detect: COCO instances JSON */
    const char *yolo_labels; /* detect: folder of YOLO txt files */
    const char *decoder;     /* detect: decoder name */
    an_det_opts det;
    bool no_fp16;          /* --no-fp16: no fp16 column */
    bool letterbox;        /* detect: keep the aspect ratio, pad with 114 (Ultralytics) */
    double show_score;     /* detect: score of a shown box, for the per-image F1 (0.25) */
    const char *masks;     /* segment: folder of PNG label masks */
    int ignore_index;      /* segment: mask value not scored (255) */
    const char *score_cmd; /* score: the scorer */
    double score_timeout;
    const char *hybrid_cfgs[AN_EVAL_MAX_COLS];
    size_t n_hybrid;
    long limit, calib, show;
    long shard_k, shard_n; /* --shard K/N (0/1: the whole set) */
    const char *out_dir;   /* -o: partial.json, report.json, outputs/ */
    bool json;
    int argc; /* the command line, hashed into run_hash (less -o, --shard, ...) */
    char **argv;
} an_eval_opts;

/** One column: a name and its simulation (NULL for the fp32 reference). */
typedef struct an_eval_col {
    char name[64];
    rd_sim *sim;
} an_eval_col;

/** Where a sample's pixels went: model input = original * scale + pad (per axis). */
typedef struct an_eval_geom {
    int64_t orig_w, orig_h; /* 0 when unknown (a .npy input) */
    double sx, sy, pad_x, pad_y;
} an_eval_geom;

typedef struct an_eval_task an_eval_task;

/** A running evaluation. */
typedef struct an_eval_ctx {
    const an_eval_opts *o;
    const an_quant_opts *q;
    const char *model_path;
    rd_model *m;
    const an_eval_task *task;
    rd_dataset ds;        /* --dataset (not for IDX) */
    rd_tensor idx_images; /* IDX */
    size_t n;             /* samples evaluated (after --limit) */
    an_eval_col cols[AN_EVAL_MAX_COLS];
    size_t n_cols;
    size_t n_outputs;
    const char *output_names[64];
    int in_w, in_h;       /* input 0's width and height (rank 4 NCHW), else 0 */
    void *state;          /* the task's */
    rd_run_buffers *kept; /* memory from one sample's runs to the next (while the samples run) */
    FILE *errs;
    bool color;
} an_eval_ctx;

/** A task: its hooks for a run, and its report from records. */
struct an_eval_task {
    const char *name;
    /** Loads the ground truth for ctx->n samples (c->state). */
    rd_status (*open)(an_eval_ctx *c, rd_error *err);
    /** Sample k as graph inputs (and its geometry); NULL: as RKNN reads the dataset line. */
    rd_status (*input)(an_eval_ctx *c, size_t k, rd_tensor *in, an_eval_geom *g, rd_error *err);
    /** The record of sample k from outs[col][output]. */
    rd_status (*sample)(an_eval_ctx *c, size_t k, const an_eval_geom *g, rd_tensor *const *outs, cJSON *rec,
                        rd_error *err);
    /** Adds the task's header members to partial.json (categories, classes). May be NULL. */
    rd_status (*header)(an_eval_ctx *c, cJSON *partial, rd_error *err);
    /** Called once after the last sample of a run (score: runs the scorer). May be NULL. */
    rd_status (*finish)(an_eval_ctx *c, cJSON *partial, rd_error *err);
    void (*close)(an_eval_ctx *c);
    /** The report (members added to report) from a partial.json's header and its records in sample order;
        show: how many of the samples that change most it lists (--show). */
    rd_status (*report)(const cJSON *partial, cJSON *const *recs, size_t n, size_t show, cJSON *report, rd_error *err);
    /** The report as text. */
    void (*print)(FILE *out, const cJSON *report, size_t show);
};

extern const an_eval_task an_eval_classify, an_eval_detect, an_eval_segment, an_eval_score;

/* The detection report (eval_detect_report.c). */
rd_status an_eval_detect_report(const cJSON *partial, cJSON *const *recs, size_t n, size_t show, cJSON *report,
                                rd_error *err);
void an_eval_detect_print(FILE *out, const cJSON *report, size_t show);

/** The task called name, or NULL. */
const an_eval_task *an_eval_task_find(const char *name);

/* ---- exact numbers in JSON: cJSON prints a double with 15 digits when that reads back within an ulp;
   records need the exact value, so they carry "%.17g" text that strtod reads back to the same bits. */
cJSON *an_json_exact(double v);
rd_status an_json_add_exact(cJSON *o, const char *key, double v, rd_error *err);

/** The string member k of o, or "" when it is absent or not a string. */
const char *an_json_str(const cJSON *o, const char *k);

/** The column names of a partial or report ("columns": [...]); at most AN_EVAL_MAX_COLS. */
size_t an_eval_columns(const cJSON *doc, const char **names);

/** Prints the report's model path (and dynamic_input set) as names from outside (escaped). */
void an_eval_print_model(FILE *out, const cJSON *report);

/** Prints a float with the given decimals, or "-" for a negative (undefined) value. */
void an_eval_print_metric(FILE *out, int width, double v);

/** A figure of the metrics table: the metric's key in a column's "metrics", its width; a drop is signed
    and "-" on the reference (first) column's row. */
typedef struct an_eval_figure {
    const char *key;
    int width;
    bool drop;
} an_eval_figure;

/** The rows of the metrics table of report r: each column's name, then its figures figs[0..n). */
void an_eval_print_metric_rows(FILE *out, const cJSON *r, const an_eval_figure *figs, size_t n);

/* ---- runs and merges (eval_run.c, eval_partial.c) ---------------------------------------------------- */

/** Sample k of the dataset as RKNN reads its line (images resized, mean/std); g zeroed. */
rd_status an_eval_default_input(an_eval_ctx *c, size_t k, rd_tensor *in, an_eval_geom *g, rd_error *err);

/** The file beside sample k's image in folder dir: dir/<image name without extension><ext>. */
void an_eval_sibling_path(const an_eval_ctx *c, size_t k, const char *dir, const char *ext, char *buf, size_t len);

/** The number member k of o, or -1 when it is absent or not a number. */
double an_json_num(const cJSON *o, const char *k);

/** Sample k as graph inputs: the task's input hook, or the dataset line as RKNN reads it. */
rd_status an_eval_input(an_eval_ctx *c, size_t k, rd_tensor *in, an_eval_geom *g, rd_error *err);

/** Evaluates the shard of c: records, partial.json, report. Returns an exit code (0 ok; errors printed). */
int an_eval_execute(an_cmd_ctx *ctx, an_eval_ctx *c, const char *dynamic_name, const char *json_sep);

/**
 * The header of partial.json for a run: format, task, model, dynamic_input, columns, hashes, shard.
 * run_hash covers the model, --cfg/--hybrid files, the options that change results, the dataset list, the
 * ground truth files and the calibration samples; shard_hash the shard's own inputs.
 */
rd_status an_eval_partial_header(an_eval_ctx *c, const char *dynamic_name, cJSON **out, rd_error *err);

/**
 * Reads partial.json files (or folders holding one) into one merged partial with every record (sorted by
 * sample): same format, task, run_hash and shard count; every shard exactly once; no sample twice;
 * all samples present. RD_E_PARSE naming the file for the rest.
 */
rd_status an_eval_partials_merge(const char *const *paths, size_t n, cJSON **out, rd_error *err);

/** Parses a partial.json held in buf (name for messages): header members and record sample indexes checked. */
rd_status an_eval_partial_parse(const char *buf, size_t len, const char *name, cJSON **out, rd_error *err);

/** Reads one partial.json (a path or a folder holding one). */
rd_status an_eval_partial_load(const char *path, cJSON **out, rd_error *err);

/**
 * The report of a partial holding all its records (a one-shard run or a merge): task->report, then
 * report.json in out_dir when given, then printed (text or JSON) to out. Returns an exit code.
 */
int an_eval_report(an_cmd_ctx *ctx, const cJSON *partial, const char *out_dir, bool json, const char *json_sep,
                   size_t show);

#endif

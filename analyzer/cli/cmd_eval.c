/*
 * cmd_eval.c: `rknn-diag eval MODEL`: task metrics of the model at fp32 (the reference), fp16, the integer
 * dtype and each --hybrid cfg side by side: top-1/top-5 of a classifier (default), COCO mAP of a detector
 * (--task detect), mIoU of a segmenter (--task segment), or an outside scorer's number (--score-cmd);
 * --shard K/N evaluates one part of the dataset into partial.json for `rknn-diag merge` (docs/sharding.md).
 * This file parses the command line and sets up the columns; eval_run.c runs them.
 */
#include "accuracy_partial.h"
#include "cmd_spec.h"
#include "config_model.h"
#include "eval_task.h"
#include "quant_setup.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_LABELS = 1,
    OPT_IDX_IMAGES,
    OPT_IDX_LABELS,
    OPT_LIMIT,
    OPT_CALIB,
    OPT_JSON,
    OPT_SHOW,
    OPT_TASK,
    OPT_ANNOT,
    OPT_YOLO,
    OPT_DECODER,
    OPT_CLASSES,
    OPT_ANCHORS,
    OPT_STRIDES,
    OPT_SCORE_THR,
    OPT_NMS,
    OPT_MAX_DET,
    OPT_LETTERBOX,
    OPT_DEC_OPT,
    OPT_SHOW_SCORE,
    OPT_MASKS,
    OPT_IGNORE,
    OPT_HYBRID,
    OPT_NO_FP16,
};

static const an_optspec eval_opts[] = {
    {OPT_TASK, "task", 0, "T", "classify (default), detect, segment (--score-cmd: any other)"},
    {OPT_LABELS, "labels", 0, "FILE", "classify with --dataset: one integer class per line, in the dataset's order"},
    {OPT_IDX_IMAGES, "idx-images", 0, "FILE",
     "classify: IDX image file (MNIST's format, .gz allowed) instead of --dataset"},
    {OPT_IDX_LABELS, "idx-labels", 0, "FILE", "classify: IDX label file matching --idx-images"},
    {OPT_ANNOT, "annotations", 0, "FILE", "detect: COCO instances JSON (images matched by file_name)"},
    {OPT_YOLO, "yolo-labels", 0, "DIR", "detect: YOLO txt labels, DIR/<image name>.txt (needs --classes)"},
    {OPT_DECODER, "decoder", 0, "NAME", "detect: yolov5, yolov7, yolov8 (= yolo11), yolox, ssd (docs/detection.md)"},
    {OPT_CLASSES, "classes", 0, "N", "detect: class count (checked against the outputs)"},
    {OPT_ANCHORS, "anchors", 0, "W,H,...", "detect: anchor sizes in input pixels, level by level (yolov5/v7)"},
    {OPT_STRIDES, "strides", 0, "S,S,...", "detect: strides of the output levels (default: input / grid size)"},
    {OPT_SCORE_THR, "score-threshold", 0, "X", "detect: drop boxes scoring below X before NMS (default 0.001)"},
    {OPT_NMS, "nms-iou", 0, "X", "detect: NMS IoU threshold (default 0.65)"},
    {OPT_MAX_DET, "max-det", 0, "N", "detect: boxes kept per image (default 300)"},
    {OPT_LETTERBOX, "letterbox", 0, NULL, "detect, segment: keep the aspect ratio and pad with 114 (Ultralytics)"},
    {OPT_DEC_OPT, "decoder-opt", 0, "K=V", "detect: reg_max, sigmoid, decoded, background, box, normalized, agnostic"},
    {OPT_SHOW_SCORE, "show-score", 0, "X", "detect: score of a kept box for the per-image F1 (default 0.25)"},
    {OPT_MASKS, "masks", 0, "DIR", "segment: label masks DIR/<image name>.png (one channel of class indices)"},
    {OPT_IGNORE, "ignore-index", 0, "N", "segment: mask value left out (default 255)"},
    {OPT_HYBRID, "hybrid", 0, "FILE", "add a column: a hybrid .quantization.cfg (repeat for more)"},
    {OPT_NO_FP16, "no-fp16", 0, NULL, "leave out the fp16 column (fp32 and the integer columns only)"},
    {OPT_LIMIT, "limit", 0, "N", "evaluate the first N samples only"},
    {OPT_CALIB, "calib", 0, "N", "calibrate the integer columns on the first N samples (default: all; IDX: 100)"},
    {OPT_SHOW, "show", 0, "N", "list the first N samples that change most (default 10)"},
    {OPT_JSON, "json", 0, NULL, "print the report as JSON"},
};

typedef struct eval_args {
    const char *model_path;
    an_eval_opts o;
    an_cmd_args cmd;
    char dynamic_name[256];
} eval_args;

/* In the order of eval_opts. */
static const an_optset eval_sets[] = {
    AN_SET(OPT_LABELS, AN_SET_STR, eval_args, o.labels),
    AN_SET(OPT_IDX_IMAGES, AN_SET_STR, eval_args, o.idx_images),
    AN_SET(OPT_IDX_LABELS, AN_SET_STR, eval_args, o.idx_labels),
    AN_SET(OPT_ANNOT, AN_SET_STR, eval_args, o.annotations),
    AN_SET(OPT_YOLO, AN_SET_STR, eval_args, o.yolo_labels),
    AN_SET_INT_RANGE(OPT_CLASSES, eval_args, o.det.n_classes, 1, 100000),
    AN_SET_INT_RANGE(OPT_MAX_DET, eval_args, o.det.max_det, 1, 100000),
    AN_SET(OPT_LETTERBOX, AN_SET_FLAG, eval_args, o.letterbox),
    AN_SET(OPT_MASKS, AN_SET_STR, eval_args, o.masks),
    AN_SET_INT_RANGE(OPT_IGNORE, eval_args, o.ignore_index, 0, 255),
    AN_SET(OPT_NO_FP16, AN_SET_FLAG, eval_args, o.no_fp16),
    AN_SET_RANGE(OPT_LIMIT, eval_args, o.limit, 1, 100000000),
    AN_SET_RANGE(OPT_CALIB, eval_args, o.calib, 1, 1000000),
    AN_SET_RANGE(OPT_SHOW, eval_args, o.show, 0, 100000),
    AN_SET(OPT_JSON, AN_SET_FLAG, eval_args, o.json),
};

static bool parse_double(const char *text, double min, double max, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v) || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* "a,b,c" into at most max floats (> 0). */
static int parse_list(const char *text, float *out, int max)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end = NULL;
        errno = 0;
        double v = strtod(p, &end);
        if (errno || end == p || !isfinite(v) || v <= 0 || n == max)
            return -1;
        out[n++] = (float)v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        p = end;
    }
    return n;
}

static int take_option(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    eval_args *a = user;
    an_eval_opts *o = &a->o;
    double d;
    rd_error err = {0};
    switch (id) {
    case OPT_TASK:
        if (strcmp(v, "score") != 0 && an_eval_task_find(v))
            o->task = v;
        else
            return an_usage(ctx, "--task %s: expected classify, detect or segment (other tasks: --score-cmd)", v);
        break;
    case OPT_DECODER:
        if (!an_decoder_find(v))
            return an_usage(ctx, "--decoder %s: expected yolov5, yolov7, yolov8, yolo11, yolox or ssd", v);
        o->decoder = v;
        break;
    case OPT_ANCHORS: {
        int k = parse_list(v, o->det.anchors, 2 * AN_DET_MAX_ANCHORS);
        if (k <= 0 || k % 2)
            return an_usage(ctx, "--anchors %s: expected W,H pairs of positive numbers (at most %d pairs)", v,
                            AN_DET_MAX_ANCHORS);
        o->det.n_anchors = k / 2;
        break;
    }
    case OPT_STRIDES: {
        float s[AN_DET_MAX_LEVELS];
        int k = parse_list(v, s, AN_DET_MAX_LEVELS);
        for (int i = 0; i < k; i++)
            if (s[i] != floorf(s[i]) || s[i] > 4096)
                k = -1;
        if (k <= 0)
            return an_usage(ctx, "--strides %s: expected up to %d positive integers", v, AN_DET_MAX_LEVELS);
        for (int i = 0; i < k; i++)
            o->det.strides[i] = (int)s[i];
        o->det.n_strides = k;
        break;
    }
    case OPT_SCORE_THR:
    case OPT_NMS:
    case OPT_SHOW_SCORE:
        if (!parse_double(v, 0, 1, &d))
            return an_usage(ctx, "%s %s: expected a number in 0..1",
                            id == OPT_NMS         ? "--nms-iou"
                            : id == OPT_SCORE_THR ? "--score-threshold"
                                                  : "--show-score",
                            v);
        if (id == OPT_NMS)
            o->det.nms_iou = (float)d;
        else if (id == OPT_SCORE_THR)
            o->det.score_threshold = (float)d;
        else
            o->show_score = d;
        break;
    case OPT_DEC_OPT:
        if (an_det_opts_set(&o->det, v, &err) != RD_OK)
            return an_usage(ctx, "%s", err.msg);
        break;
    case OPT_HYBRID:
        if (o->n_hybrid + 3 > AN_EVAL_MAX_COLS)
            return an_usage(ctx, "at most %d --hybrid columns", AN_EVAL_MAX_COLS - 3);
        o->hybrid_cfgs[o->n_hybrid++] = v;
        break;
    }
    return AN_GO;
}

static const char *const ABOUT =
    "Task metrics at fp32 (the reference), fp16 and int8 (the simulators) side by side, with the drop and\n"
    "the samples that change most; --dtype w16a16i, w8a16, w4a16 or w16a16i_dfp replaces the int8 column,\n"
    "each --hybrid cfg adds one. Tasks: classify (top-1/top-5 of output 0, with --labels or IDX files),\n"
    "detect (COCO mAP@.5:.95 and mAP@.5 as pycocotools computes them, per-class AP; --decoder, and\n"
    "--annotations or --yolo-labels), segment (mIoU, pixel accuracy; --masks), or any other through\n"
    "--score-cmd. Samples are read as RKNN reads them (mean/std, ...); the integer columns are calibrated\n"
    "on the first --calib samples. --shard K/N -o DIR evaluates one part for `rknn-diag merge`; a shard\n"
    "already finished with the same inputs is skipped. docs/detection.md, docs/sharding.md.";

static int check_args(an_cmd_ctx *ctx, eval_args *a)
{
    an_eval_opts *o = &a->o;
    if (!a->model_path && !a->cmd.q.config_path)
        return an_usage(ctx, "missing MODEL.onnx");
    if (o->score_cmd)
        o->task = "score";
    const bool idx = o->idx_images || o->idx_labels;
    if (idx && (strcmp(o->task, "classify") != 0))
        return an_usage(ctx, "IDX files are for --task classify");
    if (idx && (!o->idx_images || !o->idx_labels))
        return an_usage(ctx, "give both --idx-images and --idx-labels");
    if (idx && a->cmd.q.flag_dataset)
        return an_usage(ctx, "give either --dataset with --labels or the IDX files, not both");
    if (!idx && !a->cmd.q.flag_dataset && !a->cmd.q.config_path)
        return an_usage(ctx, "give --dataset FILE (or --idx-images F --idx-labels F for a classifier)");
    if (strcmp(o->task, "classify") == 0 && !idx && !o->labels)
        return an_usage(ctx, "--dataset needs --labels FILE (one integer class per line), or another --task");
    if (strcmp(o->task, "detect") == 0) {
        if (!o->decoder)
            return an_usage(ctx, "--task detect needs --decoder NAME (yolov5, yolov7, yolov8, yolox, ssd)");
        if (!o->annotations == !o->yolo_labels)
            return an_usage(ctx, "--task detect needs one of --annotations FILE.json or --yolo-labels DIR");
        if (o->yolo_labels && !o->det.n_classes)
            return an_usage(ctx, "--yolo-labels needs --classes N");
    }
    if (strcmp(o->task, "segment") == 0 && !o->masks)
        return an_usage(ctx, "--task segment needs --masks DIR");
    if (strcmp(o->task, "score") == 0 && !o->out_dir)
        return an_usage(ctx, "--score-cmd needs -o DIR (the outputs folder the scorer reads is DIR/outputs/<column>)");
    if (strcmp(o->task, "score") == 0 && o->shard_n > 1)
        return an_usage(ctx, "--score-cmd scores the whole set at once: it does not take --shard (docs/score-cmd.md)");
    if (o->shard_n > 1 && !o->out_dir)
        return an_usage(ctx, "--shard needs -o DIR (the shard's partial.json)");
    return AN_GO;
}

static void print_decoders(FILE *f)
{
    fprintf(f, "decoders:\n");
    for (size_t i = 0; i < an_decoder_count(); i++)
        fprintf(f, "  %-8s %s\n", an_decoder_get(i)->name, an_decoder_get(i)->layouts);
}

/* The parsed arguments into the evaluation's options, checked. */
static int finish_args(an_cmd_ctx *ctx, eval_args *a)
{
    a->o.argc = ctx->argc; /* the command line, for the shards' run identity */
    a->o.argv = ctx->argv;
    a->model_path = a->cmd.model;
    a->o.out_dir = a->cmd.output;
    a->o.score_cmd = a->cmd.score_cmd;
    a->o.score_timeout = a->cmd.score_timeout;
    if (a->cmd.shard_n) {
        a->o.shard_k = a->cmd.shard_k;
        a->o.shard_n = a->cmd.shard_n;
    }
    return check_args(ctx, a);
}

/* Calibration sample k: the task's input (letterbox, IDX, ...). */
static rd_status calib_sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    an_eval_geom g;
    return an_eval_input(user, k, inputs, &g, err);
}

static void col_name(const char *path, char *out, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    static const char *const exts[] = {".quantization.cfg", ".cfg"};
    for (size_t i = 0; i < 2; i++) {
        size_t e = strlen(exts[i]);
        if (n > e && strcmp(base + n - e, exts[i]) == 0) {
            n -= e;
            break;
        }
    }
    if (n >= len)
        n = len - 1;
    for (size_t i = 0; i < n; i++) /* a column name is a JSON key and a folder name */
        out[i] = base[i] == '/' || base[i] == '\\' || base[i] == '.' || (unsigned char)base[i] < 32 ? '_' : base[i];
    out[n] = '\0';
}

/* Model, columns, dataset and task of one evaluation (set: the dynamic_input set). */
static rd_status setup(an_cmd_ctx *ctx, eval_args *a, size_t set, an_eval_ctx *c, rd_error *err)
{
    an_eval_opts *o = &a->o;
    c->o = o;
    c->q = &a->cmd.q;
    c->errs = ctx->errs;
    c->color = ctx->color;
    c->task = an_eval_task_find(o->task);
    const bool dtype_given = a->cmd.q.flag_dtype != NULL;
    an_model_request req = an_cmd_model_request(ctx, &a->cmd, NULL);
    req.dynamic_set = set;
    rd_status st = an_model_load_configured(&a->cmd.q, &req, &c->m, err);
    if (st != RD_OK)
        return st;
    c->model_path = a->model_path ? a->model_path : a->cmd.q.cfg.model_file_path;
    /* fp16 is always evaluated; the dtype picks the integer column (w8a8 unless an integer dtype is given) */
    const rd_qdtype dt = a->cmd.q.cfg.dtype;
    if (dt == RD_QDT_FLOAT16 || dt == RD_QDT_FLOAT32) {
        if (dtype_given)
            return rd_errorf(err, RD_E_USAGE,
                             "eval compares fp32, fp16 and one integer dtype: --dtype must be w8a8, "
                             "w16a16i, w8a16, w4a16 or w16a16i_dfp (got %s)",
                             rd_qdtype_name(dt));
        a->cmd.q.cfg.dtype = RD_QDT_W8A8;
        a->cmd.q.cfg.quantize = true;
    }
    if (!o->idx_images && !a->cmd.q.cfg.dataset)
        return rd_errorf(err, RD_E_USAGE, "give --dataset FILE (or a -c config naming one)");
    c->n_outputs = rd_model_output_count(c->m);
    if (c->n_outputs > sizeof c->output_names / sizeof c->output_names[0])
        return rd_errorf(err, RD_E_UNSUPPORTED, "the model has %zu outputs: eval takes at most 64", c->n_outputs);
    for (size_t i = 0; i < c->n_outputs; i++) {
        rd_value_info vi;
        rd_model_value(c->m, (size_t)rd_model_output(c->m, i), &vi);
        c->output_names[i] = vi.name;
    }
    rd_value_info in0;
    rd_model_value(c->m, (size_t)rd_model_input(c->m, 0), &in0);
    if (in0.rank == 4) {
        c->in_h = (int)(in0.dims[2] > 0 ? in0.dims[2] : 0);
        c->in_w = (int)(in0.dims[3] > 0 ? in0.dims[3] : 0);
    }
    /* the samples */
    if (o->idx_images) {
        if (rd_model_input_count(c->m) != 1)
            return rd_errorf(err, RD_E_INVAL, "IDX images feed a model with one input (this one has %zu)",
                             rd_model_input_count(c->m));
        if ((st = rd_idx_load(o->idx_images, &c->idx_images, err)) != RD_OK)
            return st;
        if (c->idx_images.dtype != RD_DT_U8 || c->idx_images.rank < 2)
            return rd_errorf(err, RD_E_PARSE, "%s: expected uint8 images [N, H, W]", o->idx_images);
        c->n = (size_t)c->idx_images.dims[0];
    } else {
        if ((st = rd_dataset_load(a->cmd.q.cfg.dataset, rd_model_input_count(c->m), &c->ds, err)) != RD_OK)
            return st;
        c->n = c->ds.n_samples;
    }
    const size_t n_all = c->n;
    if (o->limit && (size_t)o->limit < c->n)
        c->n = (size_t)o->limit;
    /* the ground truth of all samples (checked before any simulation runs) */
    if ((st = c->task->open(c, err)) != RD_OK)
        return st;
    /* the columns */
    snprintf(c->cols[0].name, sizeof c->cols[0].name, "fp32");
    c->n_cols = 1;
    if (!o->no_fp16) {
        snprintf(c->cols[1].name, sizeof c->cols[1].name, "fp16");
        rd_sim_options so = {.precision = RD_PREC_FP16, .optimization_level = a->cmd.q.cfg.optimization_level};
        if ((st = rd_sim_create(c->m, &so, &c->cols[c->n_cols].sim, err)) != RD_OK)
            return st;
        rd_sim_set_pool(c->cols[c->n_cols++].sim, a->cmd.q.pool);
    }
    an_eval_col *int_col = &c->cols[c->n_cols];
    snprintf(int_col->name, sizeof int_col->name, "%s",
             a->cmd.q.cfg.dtype == RD_QDT_W8A8 ? "int8" : rd_qdtype_name(a->cmd.q.cfg.dtype));
    size_t n_calib = o->idx_images ? 100 : n_all;
    if (o->calib > 0)
        n_calib = (size_t)o->calib;
    if (n_calib > n_all)
        n_calib = n_all;
    st = an_quant_build_sim_from(&a->cmd.q, c->m, NULL, calib_sample, c, n_calib, ctx->errs, ctx->color, &int_col->sim,
                                 err);
    if (st == RD_OK)
        c->n_cols++;
    for (size_t h = 0; h < o->n_hybrid && st == RD_OK; h++) {
        an_quant_opts hq = a->cmd.q; /* the same options with this cfg */
        hq.qcfg_path = o->hybrid_cfgs[h];
        an_eval_col *col = &c->cols[c->n_cols];
        col_name(o->hybrid_cfgs[h], col->name, sizeof col->name);
        for (size_t j = 0; j < c->n_cols; j++)
            if (strcmp(c->cols[j].name, col->name) == 0)
                snprintf(col->name + strlen(col->name) / 2, sizeof col->name / 2, "_%zu", h + 1);
        st = an_quant_build_sim_from(&hq, c->m, NULL, calib_sample, c, n_calib, ctx->errs, ctx->color, &col->sim, err);
        if (st == RD_OK)
            c->n_cols++;
        else
            rd_error_prefix(err, "--hybrid %s", o->hybrid_cfgs[h]);
    }
    return st;
}

static void teardown(an_eval_ctx *c)
{
    if (c->task && c->task->close)
        c->task->close(c);
    for (size_t j = 0; j < AN_EVAL_MAX_COLS; j++)
        rd_sim_destroy(c->cols[j].sim);
    rd_dataset_fini(&c->ds);
    rd_tensor_fini(&c->idx_images);
    rd_model_destroy(c->m);
}

static int eval_once(an_cmd_ctx *ctx, eval_args *a, size_t set, const char *json_sep)
{
    an_eval_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return an_fail_nomem(ctx, "the evaluation");
    rd_error err = {0};
    int rc;
    rd_status st = setup(ctx, a, set, c, &err);
    if (st != RD_OK) /* RD_E_USAGE exits 2, everything about the inputs 3 */
        rc = an_fail(ctx, &err);
    else
        rc = an_eval_execute(ctx, c, a->dynamic_name, json_sep);
    teardown(c);
    free(c);
    return rc;
}

static const eval_args eval_defaults = {
    .o = {.task = "classify",
          .show = 10,
          .shard_n = 1,
          .show_score = 0.25,
          .ignore_index = 255,
          .det = AN_DET_OPTS_DEFAULTS},
};

static int eval_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    eval_args *a = args;
    int rc = finish_args(ctx, a);
    size_t n_sets = 0;
    if (rc == AN_GO && (rc = an_dynamic_prepare(ctx, &cmd->q, &n_sets)) == AN_GO) {
        /* dynamic_input: one evaluation per shape set (with --json, an array of them) */
        if (n_sets && a->o.out_dir)
            rc = an_usage(ctx, "-o with a dynamic_input config: run one shape set at a time (--input-shape)");
        else
            rc = AN_EXIT_OK;
        for (size_t k = 0; rc == AN_EXIT_OK && k < (n_sets ? n_sets : 1); k++) {
            if (n_sets)
                an_dynamic_set_name(&cmd->q, k, a->dynamic_name, sizeof a->dynamic_name);
            if (n_sets && !a->o.json && k)
                fputc('\n', ctx->out);
            rc = eval_once(ctx, a, k, !n_sets ? NULL : k ? "," : "[");
        }
        if (n_sets && a->o.json && rc == AN_EXIT_OK)
            fputs("]\n", ctx->out);
    }
    return rc;
}

const an_cmd_spec an_cmd_eval = {
    .usage = "rknn-diag eval MODEL.onnx --dataset FILE [--task T ...] [quant options]",
    .about = ABOUT,
    AN_SPEC_OPTS(eval_opts),
    AN_SPEC_SETS(eval_sets),
    .output = {0, "output", 'o', "DIR",
               "write partial.json and report.json in DIR (and outputs/<column>/ for --score-cmd, which needs it)"},
    .groups = AN_OG_QUANT | AN_OG_SHARD | AN_OG_SCORE,
    .model = "MODEL.onnx",
    .model_optional = true, /* -c may name it: check_args */
    .more_help = print_decoders,
    AN_SPEC_ARGS_CMD(eval_args, cmd, &eval_defaults),
    .take = take_option,
    .main = eval_main,
};

/*
 * det_decode.h: from a detector's output tensors to boxes. One decoder per output layout that Rockchip's
 * model zoo and its users deploy (YOLOv5/v7 with anchors and objectness, YOLOv8/v11 anchor-free with DFL
 * or plain boxes, YOLOX decoded or raw, SSD-style boxes + scores), each a row of one table
 * (det_decode.c), then one non-maximum suppression for all. Adding a decoder: docs/detection.md.
 */
#ifndef RD_AN_DET_DECODE_H
#define RD_AN_DET_DECODE_H

#include "rknn_diag/simulator.h"

#include <stdbool.h>

#define AN_DET_MAX_ANCHORS 64       /* anchor (w, h) pairs over all levels */
#define AN_DET_MAX_LEVELS 8         /* feature levels (strides) */
#define AN_DET_MAX_CANDIDATES 30000 /* boxes above the score threshold kept for NMS (highest scores) */

/** Decoder options (--anchors, --strides, --classes, --score-threshold, --nms-iou, --max-det, --decoder-opt). */
typedef struct an_det_opts {
    int n_classes;                         /* 0: from the outputs' shapes */
    float score_threshold;                 /* boxes below are dropped before NMS (default 0.001, as COCO evaluation) */
    float nms_iou;                         /* suppress a box overlapping a kept one of its class above this (0.65) */
    int max_det;                           /* boxes kept per image after NMS, highest scores (300) */
    bool agnostic;                         /* NMS across classes */
    float anchors[2 * AN_DET_MAX_ANCHORS]; /* w, h pairs in input pixels, level by level (stride order) */
    int n_anchors;                         /* pairs; 0: the decoder's default */
    int strides[AN_DET_MAX_LEVELS];
    int n_strides; /* 0: input size / feature size */
    /* --decoder-opt KEY=VALUE */
    int reg_max;    /* yolov8 DFL bins (16) */
    int sigmoid;    /* -1: decoder's default; 1: outputs are logits, apply the sigmoid; 0: not */
    int decoded;    /* yolox single output: 1 boxes in pixels, 0 raw grid offsets (default) */
    int background; /* ssd: index of the background score column (default 0), -1: none */
    int box_order;  /* ssd: 0 x0 y0 x1 y1 (default), 1 y0 x0 y1 x1, 2 cx cy w h */
    int normalized; /* ssd: 1 boxes in 0..1 of the input (default), 0 in input pixels */
} an_det_opts;

/** Defaults as above, as an initialiser (a command's default arguments). */
#define AN_DET_OPTS_DEFAULTS                                                                                       \
    {                                                                                                              \
        .score_threshold = 0.001f, .nms_iou = 0.65f, .max_det = 300, .reg_max = 16, .sigmoid = -1, .normalized = 1 \
    }

/** Defaults as above. */
void an_det_opts_init(an_det_opts *o);

/** Takes one --decoder-opt KEY=VALUE; RD_E_INVAL naming the key and what it accepts. */
rd_status an_det_opts_set(an_det_opts *o, const char *kv, rd_error *err);

/** A decoded box, in pixels of the model input (before undoing the letterbox or resize). */
typedef struct an_det_box {
    float x0, y0, x1, y1;
    float score;
    int cls; /* 0-based class of the model */
} an_det_box;

/** A growing list of boxes (bounded by AN_DET_MAX_CANDIDATES during decoding). */
typedef struct an_det_list {
    an_det_box *v;
    size_t n, cap;
    size_t dropped; /* candidates over AN_DET_MAX_CANDIDATES that lost to higher scores */
} an_det_list;

void an_det_list_fini(an_det_list *l);
/** Adds a candidate; past AN_DET_MAX_CANDIDATES the lowest score is replaced (bounded memory). */
rd_status an_det_list_add(an_det_list *l, const an_det_box *b, rd_error *err);

/** What a decoder sees: the model's outputs and input size. */
typedef struct an_det_frame {
    const rd_tensor *outs;    /* float32 outputs in graph order */
    const char *const *names; /* their graph names, for messages */
    size_t n_outs;
    int in_w, in_h; /* the model input's width and height */
} an_det_frame;

typedef struct an_decoder {
    const char *name;
    const char *layouts; /* the output layouts it accepts, for --help and messages */
    /** Appends the candidates above o->score_threshold (before NMS). RD_E_INVAL naming the output and
        dimension that does not fit. */
    rd_status (*decode)(const an_det_opts *o, const an_det_frame *f, an_det_list *out, rd_error *err);
} an_decoder;

/** The decoder called name, or NULL. */
const an_decoder *an_decoder_find(const char *name);
/** The table, for --help. */
size_t an_decoder_count(void);
const an_decoder *an_decoder_get(size_t i);

/**
 * Decodes, then per class (every class with o->agnostic) keeps boxes in descending score order and drops
 * any whose IoU with a kept one exceeds o->nms_iou; then the o->max_det best. Ties keep the order of
 * the candidates, so the result is deterministic.
 */
rd_status an_det_run(const an_decoder *d, const an_det_opts *o, const an_det_frame *f, an_det_list *out, rd_error *err);

/* Shared by the decoders (det_decode_*.c). */
float an_det_sigmoid(float x);
/** Output i as [A, B, C...] after dropping leading 1s, at most rank `max_rank`; NULL-safe for messages. */
int an_det_squeeze(const rd_tensor *t, int64_t *dims, int max_rank);

extern const an_decoder an_decoder_yolov5, an_decoder_yolov7, an_decoder_yolov8, an_decoder_yolox, an_decoder_ssd;

#endif

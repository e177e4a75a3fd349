/*
 * det_metrics.h: the COCO detection protocol (pycocotools' COCOeval, iouType "bbox", useCats 1, area
 * range "all"), computed the way pycocotools computes it so that the figures agree to the last digit:
 * ten IoU thresholds 0.50:0.05:0.95 (numpy.linspace values), 101 recall points, at most 100 detections
 * per image and category (highest scores, stable order on ties), crowd ground truths matched but
 * ignored, the precision envelope, and categories without ground truth left out of the mean.
 * docs/detection.md states the protocol and its worked examples.
 */
#ifndef RD_AN_DET_METRICS_H
#define RD_AN_DET_METRICS_H

#include "rknn_diag/simulator.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AN_COCO_IOU_THRESHOLDS 10
#define AN_COCO_RECALL_POINTS 101
#define AN_COCO_MAX_DETS 100 /* per image and category, as COCOeval's maxDets[-1] */

/** An axis-aligned box in pixels of the original image: top-left corner, width and height (COCO's bbox). */
typedef struct an_box {
    double x, y, w, h;
} an_box;

/** A ground-truth object. */
typedef struct an_gt {
    int64_t image; /* the image id (COCO's image_id, or the sample index for YOLO labels) */
    int category;  /* the category id (COCO's category_id, or the class index) */
    an_box box;
    double area; /* COCO's "area" (the box area when absent); used for the area range only */
    bool crowd;  /* iscrowd: matched but ignored */
} an_gt;

/** A detection. */
typedef struct an_det {
    int64_t image;
    int category;
    an_box box;
    double score;
} an_det;

/** Everything one evaluation looks at. Arrays are the caller's; order does not matter. */
typedef struct an_coco_input {
    const int64_t *images; /* the evaluated image ids (others' objects are ignored) */
    size_t n_images;
    const int *categories; /* the category ids (COCO: every category of the file) */
    size_t n_categories;
    const an_gt *gts;
    size_t n_gts;
    const an_det *dets;
    size_t n_dets;
} an_coco_input;

/** The figures. ap* are -1 where undefined (a category without ground truth; every category without). */
typedef struct an_coco_result {
    double map;    /* AP@[.50:.95], area all, 100 detections */
    double map50;  /* AP@.50 */
    double map75;  /* AP@.75 */
    double mar100; /* AR@[.50:.95] with 100 detections */
    size_t n_categories;
    int *categories; /* sorted category ids, n_categories */
    double *ap;      /* per category (same order): AP@[.50:.95] */
    double *ap50;    /* per category: AP@.50 */
    size_t *n_gt;    /* per category: ground truths that count (not crowd) */
} an_coco_result;

/** IoU of a detection box d with a ground-truth box g, as pycocotools' bbIou (crowd: over d's area). */
double an_box_iou(const an_box *d, const an_box *g, bool crowd);

/** The ten thresholds, numpy.linspace(0.5, 0.95, 10) to the bit. */
double an_coco_iou_threshold(int t);

/**
 * Runs the protocol. out is filled on success (an_coco_result_fini frees it). RD_E_NOMEM, or RD_E_INVAL
 * for a non-finite box or score or a negative width or height (naming the image and category).
 */
rd_status an_coco_evaluate(const an_coco_input *in, an_coco_result *out, rd_error *err);

void an_coco_result_fini(an_coco_result *r);

#endif

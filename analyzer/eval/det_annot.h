/*
 * det_annot.h: ground truth for detection evaluation, from outside files: COCO's instances JSON
 * (images, categories, annotations with bbox [x, y, w, h] in pixels) and YOLO's txt labels (one file per
 * image, "class cx cy w h" normalised to the image). Both parsers are bounded (file size, object counts)
 * and check what a wrong file looks like: boxes outside their image, unknown classes or images,
 * duplicate ids, non-numbers (docs/detection.md, "Ground truth").
 */
#ifndef RD_AN_DET_ANNOT_H
#define RD_AN_DET_ANNOT_H

#include "det_metrics.h"

#define AN_ANNOT_MAX_BYTES ((uint64_t)1 << 30)       /* a COCO JSON file (train2017's is 450 MB) */
#define AN_YOLO_LABEL_MAX_BYTES ((uint64_t)16 << 20) /* one YOLO txt file */
#define AN_ANNOT_MAX_OBJECTS ((size_t)1 << 24)       /* objects in one file */
#define AN_ANNOT_BOX_SLACK 1.0                       /* pixels a COCO box may pass its image's border by */
#define AN_YOLO_BOX_SLACK 1e-3                       /* the same for normalised YOLO coordinates */

typedef struct an_annot_image {
    int64_t id;
    char *file_name; /* as in the file (COCO's file_name) */
    int64_t width, height;
} an_annot_image;

typedef struct an_annot_category {
    int id;
    char *name;
} an_annot_category;

/** A parsed COCO file (or the categories of YOLO labels). Owned; an_annot_fini frees it. */
typedef struct an_annot {
    an_annot_image *images;
    size_t n_images;
    an_annot_category *categories; /* sorted by id */
    size_t n_categories;
    an_gt *gts;
    size_t n_gts;
} an_annot;

/**
 * Parses COCO instances JSON held in buf (len bytes; name for messages). RD_E_PARSE with the path of the
 * offending member ("annotations[12].bbox") for malformed content, wrong types, duplicate ids, unknown
 * image or category ids, a box outside its image by more than AN_ANNOT_BOX_SLACK pixels; RD_E_LIMIT
 * past AN_ANNOT_MAX_OBJECTS. out is empty after a failure.
 */
rd_status an_coco_annot_parse(const char *buf, size_t len, const char *name, an_annot *out, rd_error *err);

/** Reads and parses a COCO file (at most AN_ANNOT_MAX_BYTES). */
rd_status an_coco_annot_load(const char *path, an_annot *out, rd_error *err);

/** The image of a COCO file a dataset path refers to: file_name equal to the path's last component(s). */
const an_annot_image *an_annot_find_image(const an_annot *a, const char *path);

void an_annot_fini(an_annot *a);

/**
 * Parses one YOLO label file (buf, len, name for messages) of an image of img_w x img_h pixels with
 * n_classes classes: one object per line "class cx cy w h", normalised, blank lines allowed. Appends the
 * boxes in pixels (image id `image`, category = class) to *gts (realloc'ed; *n_gts grows). RD_E_PARSE
 * naming the line for a wrong field count, a non-number, a class outside 0..n_classes-1, a box outside
 * the image by more than AN_YOLO_BOX_SLACK; RD_E_LIMIT past AN_ANNOT_MAX_OBJECTS.
 */
rd_status an_yolo_labels_parse(const char *buf, size_t len, const char *name, int64_t img_w, int64_t img_h,
                               int n_classes, int64_t image, an_gt **gts, size_t *n_gts, rd_error *err);

#endif

/*
 * eval_detect.c: `eval --task detect`: each column's outputs decoded (--decoder), boxes mapped back to the
 * original image, recorded with the image's ground truth; the report is the COCO protocol per column
 * (mAP@.5:.95, mAP@.5, per-class AP), the drop against fp32, and the images whose F1 at IoU 0.5 (boxes
 * scoring at least --show-score) falls most. Model class i is the i-th category of the annotations in id
 * order (COCO's 80 classes map to its 91 ids this way); YOLO labels use the class index as the id.
 */
#include "det_annot.h"
#include "eval_image.h"
#include "eval_task.h"
#include "json_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct detect_state {
    const an_decoder *dec;
    an_annot annot;               /* COCO file, or the categories 0..classes-1 for YOLO labels */
    const an_annot_image **image; /* per sample: its COCO image (NULL for YOLO) */
    size_t *gt_first, *gt_count;  /* COCO: per sample, its ground truths in gt_sorted */
    an_gt *gt_sorted;
} detect_state;

static int cmp_gt_image(const void *a, const void *b)
{
    const an_gt *x = a, *y = b;
    return (x->image > y->image) - (x->image < y->image);
}

/* YOLO's label file of an image: DIR/<image name without extension>.txt */
static void yolo_label_path(const an_eval_ctx *c, size_t k, char *buf, size_t len)
{
    an_eval_sibling_path(c, k, c->o->yolo_labels, ".txt", buf, len);
}

static rd_status detect_open(an_eval_ctx *c, rd_error *err)
{
    const an_eval_opts *o = c->o;
    detect_state *s = calloc(1, sizeof *s);
    if (!s)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    c->state = s;
    s->dec = an_decoder_find(o->decoder);
    s->image = calloc(c->n + 1, sizeof *s->image);
    s->gt_first = calloc(c->n + 1, sizeof *s->gt_first);
    s->gt_count = calloc(c->n + 1, sizeof *s->gt_count);
    if (!s->image || !s->gt_first || !s->gt_count)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (o->yolo_labels) {
        s->annot.categories = calloc((size_t)o->det.n_classes + 1, sizeof *s->annot.categories);
        if (!s->annot.categories)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        for (int i = 0; i < o->det.n_classes; i++) {
            char name[32];
            snprintf(name, sizeof name, "class%d", i);
            s->annot.categories[i].id = i;
            s->annot.categories[i].name = strdup(name);
            if (!s->annot.categories[i].name)
                return rd_errorf(err, RD_E_NOMEM, "out of memory");
            s->annot.n_categories = (size_t)i + 1;
        }
        /* every image has its label file (an image without objects has an empty one) */
        for (size_t k = 0; k < c->n; k++) {
            char path[4200];
            yolo_label_path(c, k, path, sizeof path);
            int fd;
            rd_status st = rd_file_open_read(path, 0, AN_YOLO_LABEL_MAX_BYTES, &fd, NULL, err);
            if (st != RD_OK)
                return rd_error_prefix(err,
                                       "%s line %d (%s): its YOLO label file (an image without objects needs an "
                                       "empty one)",
                                       c->ds.path, c->ds.lines[k], rd_dataset_path(&c->ds, k, 0));
            close(fd);
        }
        return RD_OK;
    }
    rd_status st = an_coco_annot_load(o->annotations, &s->annot, err);
    if (st != RD_OK)
        return st;
    for (size_t k = 0; k < c->n; k++) {
        const char *p = rd_dataset_path(&c->ds, k, 0);
        s->image[k] = an_annot_find_image(&s->annot, p);
        if (!s->image[k])
            return rd_errorf(err, RD_E_PARSE, "%s line %d: %s is not among the images of %s (no file_name matches)",
                             c->ds.path, c->ds.lines[k], p, o->annotations);
        for (size_t j = 0; j < k; j++)
            if (s->image[j] == s->image[k])
                return rd_errorf(err, RD_E_PARSE, "%s lines %d and %d are the same image of %s (%s)", c->ds.path,
                                 c->ds.lines[j], c->ds.lines[k], o->annotations, s->image[k]->file_name);
    }
    if (o->det.n_classes && (size_t)o->det.n_classes > s->annot.n_categories)
        return rd_errorf(err, RD_E_PARSE,
                         "--classes %d but %s has %zu categories: model class i is the i-th "
                         "category in id order",
                         o->det.n_classes, o->annotations, s->annot.n_categories);
    /* ground truths grouped by image */
    s->gt_sorted = malloc((s->annot.n_gts + 1) * sizeof *s->gt_sorted);
    if (!s->gt_sorted)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    memcpy(s->gt_sorted, s->annot.gts, s->annot.n_gts * sizeof *s->gt_sorted);
    /* by image, keeping the file's order within an image (binary insertion after equal keys: stable) */
    size_t n = s->annot.n_gts;
    for (size_t i = 1; i < n; i++) {
        an_gt t = s->gt_sorted[i];
        if (cmp_gt_image(&s->gt_sorted[i - 1], &t) <= 0)
            continue;
        size_t lo = 0, hi = i;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (cmp_gt_image(&s->gt_sorted[mid], &t) <= 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        memmove(&s->gt_sorted[lo + 1], &s->gt_sorted[lo], (i - lo) * sizeof t);
        s->gt_sorted[lo] = t;
    }
    for (size_t k = 0; k < c->n; k++) {
        an_gt key = {.image = s->image[k]->id};
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (s->gt_sorted[mid].image < key.image)
                lo = mid + 1;
            else
                hi = mid;
        }
        s->gt_first[k] = lo;
        while (lo < n && s->gt_sorted[lo].image == key.image)
            lo++;
        s->gt_count[k] = lo - s->gt_first[k];
    }
    return RD_OK;
}

static void detect_close(an_eval_ctx *c)
{
    detect_state *s = c->state;
    if (!s)
        return;
    an_annot_fini(&s->annot);
    free(s->image);
    free(s->gt_first);
    free(s->gt_count);
    free(s->gt_sorted);
    free(s);
    c->state = NULL;
}

static rd_status detect_input(an_eval_ctx *c, size_t k, rd_tensor *in, an_eval_geom *g, rd_error *err)
{
    rd_status st = an_eval_image_input(c, k, c->o->letterbox, in, g, err);
    const detect_state *s = c->state;
    if (st == RD_OK && !g->orig_w) {
        if (!s->image[k]) {
            rd_tensor_fini(&in[0]);
            return rd_errorf(err, RD_E_INVAL,
                             "%s line %d: a .npy sample has no image size; YOLO labels need the image "
                             "(or use COCO annotations, whose width and height are taken)",
                             c->ds.path, c->ds.lines[k]);
        }
        g->orig_w = s->image[k]->width;
        g->orig_h = s->image[k]->height;
        g->sx = (double)c->in_w / (double)g->orig_w;
        g->sy = (double)c->in_h / (double)g->orig_h;
    }
    return st;
}

static cJSON *box_row(int cat, const an_box *b, double last1, double last2, bool two, bool *ok)
{
    cJSON *a = cJSON_CreateArray();
    an_json_push(a, cJSON_CreateNumber(cat), ok);
    an_json_push(a, an_json_exact(b->x), ok);
    an_json_push(a, an_json_exact(b->y), ok);
    an_json_push(a, an_json_exact(b->w), ok);
    an_json_push(a, an_json_exact(b->h), ok);
    an_json_push(a, an_json_exact(last1), ok);
    if (two)
        an_json_push(a, cJSON_CreateNumber(last2), ok);
    return a;
}

static rd_status detect_sample(an_eval_ctx *c, size_t k, const an_eval_geom *g, rd_tensor *const *outs, cJSON *rec,
                               rd_error *err)
{
    detect_state *s = c->state;
    rd_status st = RD_OK;
    bool ok = true;
    /* ground truth */
    an_gt *yolo = NULL;
    size_t n_yolo = 0;
    const an_gt *gts = s->gt_sorted ? s->gt_sorted + s->gt_first[k] : NULL;
    size_t n_gts = s->gt_sorted ? s->gt_count[k] : 0;
    if (c->o->yolo_labels) {
        char path[4200];
        yolo_label_path(c, k, path, sizeof path);
        char *buf = NULL;
        size_t len = 0;
        st = rd_file_read_all(NULL, path, AN_YOLO_LABEL_MAX_BYTES, &buf, &len, err);
        if (st == RD_OK)
            st = an_yolo_labels_parse(buf, len, path, g->orig_w, g->orig_h, c->o->det.n_classes, (int64_t)k, &yolo,
                                      &n_yolo, err);
        free(buf);
        gts = yolo;
        n_gts = n_yolo;
    }
    an_json_add_num(rec, "image", s->image[k] ? (double)s->image[k]->id : (double)k, &ok);
    cJSON *gt = an_json_add_array(rec, "gt", &ok);
    for (size_t i = 0; st == RD_OK && i < n_gts; i++)
        an_json_push(gt, box_row(gts[i].category, &gts[i].box, gts[i].area, gts[i].crowd, true, &ok), &ok);
    free(yolo);
    cJSON *dets = an_json_add_array(rec, "det", &ok);
    an_det_frame f = {.names = c->output_names, .n_outs = c->n_outputs, .in_w = c->in_w, .in_h = c->in_h};
    const double W = (double)g->orig_w, H = (double)g->orig_h;
    for (size_t j = 0; j < c->n_cols && st == RD_OK; j++) {
        f.outs = outs[j];
        an_det_list l;
        st = an_det_run(s->dec, &c->o->det, &f, &l, err);
        if (st != RD_OK)
            return rd_error_prefix(err, "sample %zu (%s, %s)", k, rd_dataset_path(&c->ds, k, 0), c->cols[j].name);
        cJSON *col = an_json_push_array(dets, &ok);
        for (size_t i = 0; i < l.n && st == RD_OK; i++) {
            const an_det_box *b = &l.v[i];
            if (b->cls < 0 || (size_t)b->cls >= s->annot.n_categories) {
                st = rd_errorf(err, RD_E_INVAL,
                               "sample %zu (%s): the decoder gave class %d but the ground truth has %zu "
                               "categories (--classes N to check the outputs)",
                               k, c->cols[j].name, b->cls, s->annot.n_categories);
                break;
            }
            /* back to the original image (Ultralytics' scale_boxes), clipped to it */
            double x0 = fmin(fmax(((double)b->x0 - g->pad_x) / g->sx, 0), W);
            double y0 = fmin(fmax(((double)b->y0 - g->pad_y) / g->sy, 0), H);
            double x1 = fmin(fmax(((double)b->x1 - g->pad_x) / g->sx, 0), W);
            double y1 = fmin(fmax(((double)b->y1 - g->pad_y) / g->sy, 0), H);
            an_box box = {x0, y0, x1 - x0, y1 - y0};
            an_json_push(col, box_row(s->annot.categories[b->cls].id, &box, b->score, 0, false, &ok), &ok);
        }
        an_det_list_fini(&l);
    }
    return st == RD_OK ? an_json_status(ok, "the sample's record", err) : st;
}

static rd_status detect_header(an_eval_ctx *c, cJSON *p, rd_error *err)
{
    const detect_state *s = c->state;
    bool ok = true;
    cJSON *cats = an_json_add_array(p, "categories", &ok);
    for (size_t i = 0; i < s->annot.n_categories; i++) {
        cJSON *o = an_json_push_object(cats, &ok);
        an_json_add_num(o, "id", s->annot.categories[i].id, &ok);
        an_json_add_str(o, "name", s->annot.categories[i].name, &ok);
    }
    an_json_add_str(p, "decoder", s->dec->name, &ok);
    an_json_add_str(p, "ground_truth", c->o->annotations ? c->o->annotations : c->o->yolo_labels, &ok);
    if (!ok || an_json_add_exact(p, "show_score", c->o->show_score, err) != RD_OK)
        return rd_errorf(err, RD_E_NOMEM, "out of memory (the partial's header)");
    return RD_OK;
}

const an_eval_task an_eval_detect = {
    .name = "detect",
    .open = detect_open,
    .input = detect_input,
    .sample = detect_sample,
    .header = detect_header,
    .close = detect_close,
    .report = an_eval_detect_report,
    .print = an_eval_detect_print,
};

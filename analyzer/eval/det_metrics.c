/*
 * det_metrics.c: pycocotools' COCOeval for boxes, transcribed step by step (evaluateImg, accumulate,
 * summarize) so that every figure agrees with it bit for bit: the same stable sorts (numpy's mergesort),
 * the same greedy matching (a detection takes the best still-free ground truth above the threshold,
 * crowds may be taken again, an ignored ground truth never displaces a real one), the same float
 * arithmetic for precision (tp / (tp + fp + eps)) and the same searchsorted over 101 recall points.
 * Workload: one call per evaluation; memory is O(detections + ground truths) plus one category's
 * detections at a time.
 */
#include "det_metrics.h"
#include "ranked.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AREA_MAX 1e10 /* COCOeval's areaRng "all": [0, 1e5 ** 2] */

double an_coco_iou_threshold(int t)
{
    /* numpy.linspace(.5, 0.95, 10): y = arange(10) * step + start, last value set to stop */
    if (t >= AN_COCO_IOU_THRESHOLDS - 1)
        return 0.95;
    const double step = (0.95 - 0.5) / 9.0;
    double y = (double)t * step;
    return y + 0.5;
}

static double recall_point(int r)
{
    if (r >= AN_COCO_RECALL_POINTS - 1)
        return 1.0;
    const double step = 1.0 / 100.0;
    return (double)r * step;
}

double an_box_iou(const an_box *d, const an_box *g, bool crowd)
{
    /* maskApi.c bbIou */
    double w = fmin(d->x + d->w, g->x + g->w) - fmax(d->x, g->x);
    if (w <= 0)
        return 0;
    double h = fmin(d->y + d->h, g->y + g->h) - fmax(d->y, g->y);
    if (h <= 0)
        return 0;
    double i = w * h;
    double da = d->w * d->h;
    double u = crowd ? da : da + g->w * g->h - i;
    return i / u;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* An object reference: category index, image index, position in the caller's array (the stable key). */
typedef struct ref {
    size_t k, img, pos;
} ref;

static int cmp_ref(const void *a, const void *b)
{
    const ref *x = a, *y = b;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    if (x->img != y->img)
        return x->img < y->img ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* A detection of one category as accumulate() sees it: score and sequence (sorted stably by an_ranked_cmp),
   flags. */
typedef struct acc_det {
    an_ranked order;  /* first: key the score, pos the sequence */
    uint16_t matched; /* bit t: dtm != 0 at threshold t */
    uint16_t ignored; /* bit t: dtIg at threshold t */
} acc_det;

static bool box_ok(const an_box *b)
{
    return isfinite(b->x) && isfinite(b->y) && isfinite(b->w) && isfinite(b->h) && b->w >= 0 && b->h >= 0;
}

typedef struct work {
    const an_coco_input *in;
    int *cats;
    size_t n_cats;
    int64_t *imgs;
    size_t n_imgs;
    ref *gref, *dref;
    size_t n_gref, n_dref;
    /* per image scratch */
    const an_gt **g; /* this image's ground truths, non-ignored first */
    bool *g_ign;
    an_ranked *d;  /* this image's detections by score: (score, position) */
    double *ious;  /* D x G */
    bool *g_taken; /* G, per threshold */
    /* per category */
    acc_det *acc;
    size_t n_acc, cap_acc;
} work;

static rd_status grow_acc(work *w, size_t need, rd_error *err)
{
    if (need <= w->cap_acc)
        return RD_OK;
    size_t cap = w->cap_acc ? w->cap_acc : 256;
    while (cap < need)
        cap *= 2;
    acc_det *p = realloc(w->acc, cap * sizeof *p);
    if (!p)
        return rd_errorf(err, RD_E_NOMEM, "out of memory (%zu detections of one category)", cap);
    w->acc = p;
    w->cap_acc = cap;
    return RD_OK;
}

/* evaluateImg for one image and category: gts[0..G), dets[0..D) refs; appends to w->acc; adds the
   non-ignored ground truths to *npig. */
static rd_status eval_image(work *w, const ref *gs, size_t G, const ref *ds, size_t D, size_t *seq, size_t *npig,
                            rd_error *err)
{
    const an_coco_input *in = w->in;
    /* ground truths: stable sort by _ignore (non-ignored first) */
    size_t ng = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < G; i++) {
            const an_gt *g = &in->gts[gs[i].pos];
            bool ign = g->crowd || g->area < 0 || g->area > AREA_MAX;
            if (ign == (pass == 1)) {
                w->g[ng] = g;
                w->g_ign[ng++] = ign;
                *npig += !ign;
            }
        }
    if (D == 0) /* nothing to match (and the detection arrays may not exist yet) */
        return RD_OK;
    for (size_t i = 0; i < D; i++) {
        w->d[i] = (an_ranked){in->dets[ds[i].pos].score, ds[i].pos};
    }
    qsort(w->d, D, sizeof *w->d, an_ranked_cmp);
    if (D > AN_COCO_MAX_DETS)
        D = AN_COCO_MAX_DETS;
    for (size_t i = 0; i < D; i++)
        for (size_t j = 0; j < G; j++)
            w->ious[i * G + j] = an_box_iou(&in->dets[w->d[i].pos].box, &w->g[j]->box, w->g[j]->crowd);
    rd_status st = grow_acc(w, w->n_acc + D, err);
    if (st != RD_OK)
        return st;
    acc_det *out = &w->acc[w->n_acc];
    for (size_t i = 0; i < D; i++) {
        out[i].order = (an_ranked){w->d[i].key, (*seq)++};
        out[i].matched = 0;
        out[i].ignored = 0;
    }
    for (int t = 0; t < AN_COCO_IOU_THRESHOLDS; t++) {
        memset(w->g_taken, 0, G * sizeof *w->g_taken);
        const double thr = an_coco_iou_threshold(t);
        for (size_t i = 0; i < D && G; i++) {
            double iou = fmin(thr, 1 - 1e-10);
            long m = -1;
            for (size_t j = 0; j < G; j++) {
                if (w->g_taken[j] && !w->g[j]->crowd)
                    continue;
                if (m > -1 && !w->g_ign[m] && w->g_ign[j])
                    break;
                if (w->ious[i * G + j] < iou)
                    continue;
                iou = w->ious[i * G + j];
                m = (long)j;
            }
            if (m == -1)
                continue;
            out[i].matched |= (uint16_t)(1u << t);
            if (w->g_ign[m])
                out[i].ignored |= (uint16_t)(1u << t);
            w->g_taken[m] = true;
        }
        for (size_t i = 0; i < D; i++) {
            const an_box *b = &in->dets[w->d[i].pos].box;
            double area = b->w * b->h;
            if (!(out[i].matched & (1u << t)) && (area < 0 || area > AREA_MAX))
                out[i].ignored |= (uint16_t)(1u << t);
        }
    }
    w->n_acc += D;
    return RD_OK;
}

/* accumulate() for one category: precision at the 101 recall points per threshold, mean over them. */
static void accumulate(work *w, size_t npig, double *ap_t /* [T] or -1 */, double *rec_t)
{
    for (int t = 0; t < AN_COCO_IOU_THRESHOLDS; t++)
        ap_t[t] = rec_t[t] = -1;
    if (npig == 0)
        return;
    if (w->n_acc) /* ground truth without any detection: nothing to rank (and no array) */
        qsort(w->acc, w->n_acc, sizeof *w->acc, an_ranked_cmp);
    const double eps = DBL_EPSILON; /* np.spacing(1) */
    const size_t nd = w->n_acc;
    /* precision envelope per threshold; pr[] holds the running values */
    double *pr = w->ious; /* reused: at least nd doubles are guaranteed by the caller */
    double *rc = pr + nd;
    for (int t = 0; t < AN_COCO_IOU_THRESHOLDS; t++) {
        double tp = 0, fp = 0;
        size_t n = 0;
        for (size_t i = 0; i < nd; i++) {
            const acc_det *a = &w->acc[i];
            bool ign = a->ignored & (1u << t);
            bool m = a->matched & (1u << t);
            tp += m && !ign;
            fp += !m && !ign;
            rc[n] = tp / (double)npig;
            pr[n] = tp / (fp + tp + eps);
            n++;
        }
        rec_t[t] = n ? rc[n - 1] : 0;
        for (size_t i = n; i-- > 1;)
            if (pr[i] > pr[i - 1])
                pr[i - 1] = pr[i];
        double sum = 0;
        size_t pi = 0;
        for (int r = 0; r < AN_COCO_RECALL_POINTS; r++) {
            double want = recall_point(r);
            while (pi < n && rc[pi] < want) /* searchsorted(rc, recThrs, side='left') */
                pi++;
            if (pi >= n)
                break; /* the rest stay 0 (pycocotools' try/except) */
            sum += pr[pi];
        }
        ap_t[t] = sum; /* the sum of precision[t, :, k]; the means are taken in an_coco_evaluate */
    }
}

rd_status an_coco_evaluate(const an_coco_input *in, an_coco_result *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < in->n_gts; i++)
        if (!box_ok(&in->gts[i].box) || !isfinite(in->gts[i].area))
            return rd_errorf(err, RD_E_INVAL,
                             "ground truth %zu (image %lld, category %d): box [%g, %g, %g, %g] is not "
                             "finite with a non-negative size",
                             i, (long long)in->gts[i].image, in->gts[i].category, in->gts[i].box.x, in->gts[i].box.y,
                             in->gts[i].box.w, in->gts[i].box.h);
    for (size_t i = 0; i < in->n_dets; i++)
        if (!box_ok(&in->dets[i].box) || !isfinite(in->dets[i].score))
            return rd_errorf(err, RD_E_INVAL,
                             "detection %zu (image %lld, category %d): box [%g, %g, %g, %g] score %g: "
                             "expected finite values and a non-negative size",
                             i, (long long)in->dets[i].image, in->dets[i].category, in->dets[i].box.x,
                             in->dets[i].box.y, in->dets[i].box.w, in->dets[i].box.h, in->dets[i].score);
    work w;
    memset(&w, 0, sizeof w);
    w.in = in;
    rd_status st = RD_OK;
    w.cats = malloc((in->n_categories + 1) * sizeof *w.cats);
    w.imgs = malloc((in->n_images + 1) * sizeof *w.imgs);
    w.gref = malloc((in->n_gts + 1) * sizeof *w.gref);
    w.dref = malloc((in->n_dets + 1) * sizeof *w.dref);
    if (!w.cats || !w.imgs || !w.gref || !w.dref) {
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        goto out;
    }
    /* unique sorted categories and images */
    if (in->n_categories)
        memcpy(w.cats, in->categories, in->n_categories * sizeof *w.cats);
    qsort(w.cats, in->n_categories, sizeof *w.cats, cmp_int);
    for (size_t i = 0; i < in->n_categories; i++)
        if (w.n_cats == 0 || w.cats[w.n_cats - 1] != w.cats[i])
            w.cats[w.n_cats++] = w.cats[i];
    if (in->n_images)
        memcpy(w.imgs, in->images, in->n_images * sizeof *w.imgs);
    qsort(w.imgs, in->n_images, sizeof *w.imgs, cmp_i64);
    for (size_t i = 0; i < in->n_images; i++)
        if (w.n_imgs == 0 || w.imgs[w.n_imgs - 1] != w.imgs[i])
            w.imgs[w.n_imgs++] = w.imgs[i];
    /* references to the objects of evaluated images and categories, grouped by (category, image) */
    size_t max_g = 0, max_d = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t n = pass ? in->n_dets : in->n_gts, *cnt = pass ? &w.n_dref : &w.n_gref;
        ref *r = pass ? w.dref : w.gref;
        for (size_t i = 0; i < n; i++) {
            int c = pass ? in->dets[i].category : in->gts[i].category;
            int64_t im = pass ? in->dets[i].image : in->gts[i].image;
            const int *kp = bsearch(&c, w.cats, w.n_cats, sizeof *w.cats, cmp_int);
            const int64_t *ip = bsearch(&im, w.imgs, w.n_imgs, sizeof *w.imgs, cmp_i64);
            if (!kp || !ip)
                continue;
            r[(*cnt)++] = (ref){.k = (size_t)(kp - w.cats), .img = (size_t)(ip - w.imgs), .pos = i};
        }
        qsort(r, *cnt, sizeof *r, cmp_ref);
        /* largest group, for the scratch buffers */
        size_t *mx = pass ? &max_d : &max_g;
        for (size_t i = 0, j; i < *cnt; i = j) {
            for (j = i; j < *cnt && r[j].k == r[i].k && r[j].img == r[i].img; j++)
                ;
            if (j - i > *mx)
                *mx = j - i;
        }
    }
    out->n_categories = w.n_cats;
    out->categories = malloc((w.n_cats + 1) * sizeof *out->categories);
    out->ap = malloc((w.n_cats + 1) * sizeof *out->ap);
    out->ap50 = malloc((w.n_cats + 1) * sizeof *out->ap50);
    out->n_gt = calloc(w.n_cats + 1, sizeof *out->n_gt);
    size_t dcap = max_d < AN_COCO_MAX_DETS ? max_d : AN_COCO_MAX_DETS;
    /* ious: D x G per image, and reused by accumulate for 2 * (detections of a category) doubles */
    size_t n_iou = dcap * max_g, n_cat_dets = 0;
    for (size_t i = 0, j; i < w.n_dref; i = j) { /* detections kept per category, at most 100 per image */
        size_t kept = 0;
        for (j = i; j < w.n_dref && w.dref[j].k == w.dref[i].k; j++)
            ;
        for (size_t a = i, b; a < j; a = b) {
            for (b = a; b < j && w.dref[b].img == w.dref[a].img; b++)
                ;
            kept += b - a < AN_COCO_MAX_DETS ? b - a : AN_COCO_MAX_DETS;
        }
        if (kept > n_cat_dets)
            n_cat_dets = kept;
    }
    if (2 * n_cat_dets > n_iou)
        n_iou = 2 * n_cat_dets;
    w.g = malloc((max_g + 1) * sizeof *w.g);
    w.g_ign = malloc((max_g + 1) * sizeof *w.g_ign);
    w.g_taken = malloc((max_g + 1) * sizeof *w.g_taken);
    w.d = malloc((max_d + 1) * sizeof *w.d);
    w.ious = malloc((n_iou + 1) * sizeof *w.ious);
    if (!out->categories || !out->ap || !out->ap50 || !out->n_gt || !w.g || !w.g_ign || !w.g_taken || !w.d || !w.ious) {
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        goto out;
    }
    /* Each precision point is pycocotools' value bit for bit; the means add them sequentially where numpy's
       mean sums pairwise, so a mean may differ from pycocotools' in the last bits (relative 1e-15):
       docs/detection.md. Merged shards add the same points in the same order: identical to one run. */
    double sum_all = 0, sum_50 = 0, sum_75 = 0, sum_rec = 0;
    size_t n_valid = 0;
    size_t gi = 0, di = 0;
    for (size_t k = 0; k < w.n_cats; k++) {
        out->categories[k] = w.cats[k];
        w.n_acc = 0;
        size_t npig = 0, seq = 0;
        while ((gi < w.n_gref && w.gref[gi].k == k) || (di < w.n_dref && w.dref[di].k == k)) {
            size_t img_g = gi < w.n_gref && w.gref[gi].k == k ? w.gref[gi].img : SIZE_MAX;
            size_t img_d = di < w.n_dref && w.dref[di].k == k ? w.dref[di].img : SIZE_MAX;
            size_t img = img_g < img_d ? img_g : img_d;
            size_t g0 = gi, d0 = di;
            while (gi < w.n_gref && w.gref[gi].k == k && w.gref[gi].img == img)
                gi++;
            while (di < w.n_dref && w.dref[di].k == k && w.dref[di].img == img)
                di++;
            st = eval_image(&w, &w.gref[g0], gi - g0, &w.dref[d0], di - d0, &seq, &npig, err);
            if (st != RD_OK)
                goto out;
        }
        out->n_gt[k] = npig;
        double ap_t[AN_COCO_IOU_THRESHOLDS], rec_t[AN_COCO_IOU_THRESHOLDS];
        accumulate(&w, npig, ap_t, rec_t);
        if (npig == 0) {
            out->ap[k] = out->ap50[k] = -1;
            continue;
        }
        double s = 0;
        for (int t = 0; t < AN_COCO_IOU_THRESHOLDS; t++)
            s += ap_t[t];
        out->ap[k] = s / (AN_COCO_IOU_THRESHOLDS * AN_COCO_RECALL_POINTS);
        out->ap50[k] = ap_t[0] / AN_COCO_RECALL_POINTS;
        sum_all += s;
        sum_50 += ap_t[0];
        sum_75 += ap_t[5];
        for (int t = 0; t < AN_COCO_IOU_THRESHOLDS; t++)
            sum_rec += rec_t[t];
        n_valid++;
    }
    if (n_valid) {
        out->map = sum_all / (double)(n_valid * AN_COCO_IOU_THRESHOLDS * AN_COCO_RECALL_POINTS);
        out->map50 = sum_50 / (double)(n_valid * AN_COCO_RECALL_POINTS);
        out->map75 = sum_75 / (double)(n_valid * AN_COCO_RECALL_POINTS);
        out->mar100 = sum_rec / (double)(n_valid * AN_COCO_IOU_THRESHOLDS);
    } else {
        out->map = out->map50 = out->map75 = out->mar100 = -1;
    }
out:
    free(w.cats);
    free(w.imgs);
    free(w.gref);
    free(w.dref);
    free(w.g);
    free(w.g_ign);
    free(w.g_taken);
    free(w.d);
    free(w.ious);
    free(w.acc);
    if (st != RD_OK)
        an_coco_result_fini(out);
    return st;
}

void an_coco_result_fini(an_coco_result *r)
{
    free(r->categories);
    free(r->ap);
    free(r->ap50);
    free(r->n_gt);
    memset(r, 0, sizeof *r);
}

/* test_det_metrics.c: the COCO protocol on hand-made cases whose answers follow from its definition. */
#include "det_metrics.h"
#include "rd_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* precision is tp / (tp + fp + eps) as in pycocotools: a perfect AP is 1 - 2.2e-16, not 1 */
#define TOL 1e-12

static an_gt gt(int64_t img, int cat, double x, double y, double w, double h)
{
    return (an_gt){.image = img, .category = cat, .box = {x, y, w, h}, .area = w * h};
}

static an_det det(int64_t img, int cat, double x, double y, double w, double h, double score)
{
    return (an_det){.image = img, .category = cat, .box = {x, y, w, h}, .score = score};
}

static an_coco_result run(const int64_t *imgs, size_t ni, const int *cats, size_t nc, const an_gt *g, size_t ng,
                          const an_det *d, size_t nd)
{
    an_coco_input in = {imgs, ni, cats, nc, g, ng, d, nd};
    an_coco_result r;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(an_coco_evaluate(&in, &r, &err), RD_OK);
    return r;
}

static void test_iou_and_thresholds(void)
{
    an_box a = {0, 0, 10, 10}, b = {2, 0, 10, 10}, c = {20, 20, 5, 5};
    CU_ASSERT_DOUBLE_EQUAL(an_box_iou(&a, &a, false), 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(an_box_iou(&b, &a, false), 80.0 / 120.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(an_box_iou(&c, &a, false), 0.0, 0);
    /* a crowd region: intersection over the detection's own area */
    an_box big = {0, 0, 100, 100};
    CU_ASSERT_DOUBLE_EQUAL(an_box_iou(&a, &big, true), 1.0, 0);
    /* numpy.linspace(.5, .95, 10) */
    CU_ASSERT_DOUBLE_EQUAL(an_coco_iou_threshold(0), 0.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(an_coco_iou_threshold(9), 0.95, 0);
    CU_ASSERT_EQUAL(an_coco_iou_threshold(3), 0.65); /* 3 * 0.049999999999999996 + 0.5 */
}

/* Every object found exactly: AP 1 at every threshold, for every category. */
static void test_perfect(void)
{
    const int64_t imgs[] = {1, 2};
    const int cats[] = {3, 7};
    const an_gt g[] = {gt(1, 3, 10, 10, 50, 40), gt(1, 7, 100, 5, 20, 20), gt(2, 3, 0, 0, 30, 30)};
    const an_det d[] = {det(1, 3, 10, 10, 50, 40, 0.9), det(1, 7, 100, 5, 20, 20, 0.8), det(2, 3, 0, 0, 30, 30, 0.7)};
    an_coco_result r = run(imgs, 2, cats, 2, g, 3, d, 3);
    CU_ASSERT_DOUBLE_EQUAL(r.map, 1.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.map50, 1.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.map75, 1.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.mar100, 1.0, TOL);
    CU_ASSERT_EQUAL(r.n_categories, 2);
    CU_ASSERT_EQUAL(r.categories[0], 3);
    CU_ASSERT_DOUBLE_EQUAL(r.ap[1], 1.0, TOL);
    CU_ASSERT_EQUAL(r.n_gt[0], 2);
    an_coco_result_fini(&r);
}

/* A box shifted by 2 of 10 pixels: IoU 80/120 = 0.667 passes the thresholds 0.50..0.65 (4 of 10). */
static void test_shifted_box(void)
{
    const int64_t imgs[] = {1};
    const int cats[] = {1};
    const an_gt g[] = {gt(1, 1, 0, 0, 10, 10)};
    const an_det d[] = {det(1, 1, 2, 0, 10, 10, 0.5)};
    an_coco_result r = run(imgs, 1, cats, 1, g, 1, d, 1);
    CU_ASSERT_DOUBLE_EQUAL(r.map, 0.4, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.map50, 1.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.map75, 0.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.mar100, 0.4, TOL);
    an_coco_result_fini(&r);
}

/* Duplicates. A lower-scored copy costs nothing (it comes after full recall); a higher-scored worse box
   takes the object at low thresholds, and at 0.70+ it is a false positive ahead of the true one:
   precision 1/2 at every recall point there. */
static void test_duplicates(void)
{
    const int64_t imgs[] = {1};
    const int cats[] = {1};
    const an_gt g[] = {gt(1, 1, 0, 0, 10, 10)};
    const an_det same[] = {det(1, 1, 0, 0, 10, 10, 0.9), det(1, 1, 0, 0, 10, 10, 0.8)};
    an_coco_result r = run(imgs, 1, cats, 1, g, 1, same, 2);
    CU_ASSERT_DOUBLE_EQUAL(r.map, 1.0, TOL);
    an_coco_result_fini(&r);
    const an_det worse_first[] = {det(1, 1, 2, 0, 10, 10, 0.9), det(1, 1, 0, 0, 10, 10, 0.8)};
    r = run(imgs, 1, cats, 1, g, 1, worse_first, 2);
    CU_ASSERT_DOUBLE_EQUAL(r.map, (4 * 1.0 + 6 * 0.5) / 10, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.map50, 1.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.map75, 0.5, TOL);
    an_coco_result_fini(&r);
}

/* A class with objects and no detection scores 0 and counts in the mean; a class with detections but
   no objects is left out (-1); half the objects found: precision 1 up to recall 0.50, i.e. 51 of the 101
   points. */
static void test_missed_class_and_half_recall(void)
{
    const int64_t imgs[] = {1, 2};
    const int cats[] = {1, 2, 5};
    const an_gt g[] = {gt(1, 1, 0, 0, 10, 10), gt(2, 2, 0, 0, 10, 10)};
    const an_det d[] = {det(1, 1, 0, 0, 10, 10, 0.9), det(2, 5, 40, 40, 10, 10, 0.9)};
    an_coco_result r = run(imgs, 2, cats, 3, g, 2, d, 2);
    CU_ASSERT_DOUBLE_EQUAL(r.ap[0], 1.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.ap[1], 0.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.ap[2], -1.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.map, 0.5, TOL);
    an_coco_result_fini(&r);

    const an_gt two[] = {gt(1, 1, 0, 0, 10, 10), gt(1, 1, 50, 50, 10, 10)};
    r = run(imgs, 1, cats, 1, two, 2, d, 1);
    CU_ASSERT_DOUBLE_EQUAL(r.map, 51.0 / 101.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.mar100, 0.5, TOL);
    an_coco_result_fini(&r);

    /* objects and no detection at all (nothing to rank: fuzz_eval_partial's UBSan report, qsort of NULL) */
    r = run(imgs, 2, cats, 2, g, 2, NULL, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.ap[0], 0.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.ap[1], 0.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(r.map, 0.0, TOL);
    an_coco_result_fini(&r);
}

/* A detection inside a crowd region is matched to it and ignored: not a false positive. */
static void test_crowd(void)
{
    const int64_t imgs[] = {1};
    const int cats[] = {1};
    an_gt g[] = {gt(1, 1, 0, 0, 10, 10), gt(1, 1, 100, 100, 200, 200)};
    const an_det d[] = {det(1, 1, 120, 120, 20, 20, 0.95), det(1, 1, 0, 0, 10, 10, 0.9)};
    an_coco_result r = run(imgs, 1, cats, 1, g, 2, d, 2);
    CU_ASSERT_EQUAL(r.n_gt[0], 2);
    /* without the crowd flag: an FP first, then recall 1/2 at precision 1/2 (51 points of 0.5) */
    CU_ASSERT_DOUBLE_EQUAL(r.map50, 25.5 / 101, TOL);
    an_coco_result_fini(&r);
    g[1].crowd = true;
    r = run(imgs, 1, cats, 1, g, 2, d, 2);
    CU_ASSERT_EQUAL(r.n_gt[0], 1);
    CU_ASSERT_DOUBLE_EQUAL(r.map, 1.0, TOL);
    an_coco_result_fini(&r);
}

/* At most 100 detections per image and category, the highest scores: a true box ranked 101st is cut. */
static void test_max_dets(void)
{
    const int64_t imgs[] = {1};
    const int cats[] = {1};
    const an_gt g[] = {gt(1, 1, 0, 0, 10, 10)};
    an_det d[101];
    for (int i = 0; i < 100; i++)
        d[i] = det(1, 1, 500 + i, 500, 10, 10, 0.9 - i * 0.001);
    d[100] = det(1, 1, 0, 0, 10, 10, 0.01);
    an_coco_result r = run(imgs, 1, cats, 1, g, 1, d, 101);
    CU_ASSERT_DOUBLE_EQUAL(r.map, 0.0, TOL);
    an_coco_result_fini(&r);
    d[100].score = 0.95; /* now it is first */
    r = run(imgs, 1, cats, 1, g, 1, d, 101);
    CU_ASSERT_DOUBLE_EQUAL(r.map, 1.0, TOL);
    an_coco_result_fini(&r);
}

/* Objects of images outside the evaluated set are not looked at; bad numbers are refused. */
static void test_subset_and_refusals(void)
{
    const int64_t imgs[] = {1};
    const int cats[] = {1};
    const an_gt g[] = {gt(1, 1, 0, 0, 10, 10), gt(9, 1, 0, 0, 10, 10)};
    const an_det d[] = {det(1, 1, 0, 0, 10, 10, 0.9)};
    an_coco_result r = run(imgs, 1, cats, 1, g, 2, d, 1);
    CU_ASSERT_DOUBLE_EQUAL(r.map, 1.0, TOL);
    an_coco_result_fini(&r);
    an_det bad = det(1, 1, 0, 0, NAN, 10, 0.9);
    an_coco_input in = {imgs, 1, cats, 1, g, 1, &bad, 1};
    rd_error err = {0};
    CU_ASSERT_EQUAL(an_coco_evaluate(&in, &r, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "detection 0 (image 1, category 1)"));
    an_gt neg = gt(1, 1, 0, 0, -1, 10);
    in = (an_coco_input){imgs, 1, cats, 1, &neg, 1, d, 1};
    CU_ASSERT_EQUAL(an_coco_evaluate(&in, &r, &err), RD_E_INVAL);
    /* nothing at all: undefined, -1 */
    in = (an_coco_input){imgs, 1, cats, 1, NULL, 0, NULL, 0};
    CU_ASSERT_EQUAL_FATAL(an_coco_evaluate(&in, &r, &err), RD_OK);
    CU_ASSERT_DOUBLE_EQUAL(r.map, -1.0, TOL);
    an_coco_result_fini(&r);
}

/* Boxes given as corners, in float32 as the published example holds them. */
static an_box corners(float x1, float y1, float x2, float y2)
{
    return (an_box){x1, y1, (float)(x2 - x1), (float)(y2 - y1)};
}

/*
 * A published worked example of the protocol: the four COCO images (ids 42, 73, 74, 133, boxes from the
 * COCO API's fake results) of torchmetrics' MeanAveragePrecision test (v0.6, tests/detection/test_map.py),
 * with the figures pycocotools' COCOeval printed for them, to three decimals: AP 0.706, AP50 0.901,
 * AP75 0.846, AR@100 0.716; per class 0.725, 0.800, 0.454, -1 (class 3: detections but no object), 0.650,
 * 0.900. Ours must round to the same figures.
 */
static void test_published_example(void)
{
    const int64_t imgs[] = {42, 73, 74, 133};
    const int cats[] = {0, 1, 2, 3, 4, 5};
    an_gt g[] = {
        {.image = 42, .category = 4, .box = corners(214.15f, 41.29f, 562.41f, 285.07f)},
        {.image = 73, .category = 2, .box = corners(13.00f, 22.75f, 548.98f, 632.42f)},
        {.image = 73, .category = 2, .box = corners(1.66f, 3.32f, 270.26f, 275.23f)},
        {.image = 74, .category = 4, .box = corners(61.87f, 276.25f, 358.29f, 379.43f)},
        {.image = 74, .category = 1, .box = corners(2.75f, 3.66f, 162.15f, 316.06f)},
        {.image = 74, .category = 0, .box = corners(295.55f, 93.96f, 313.97f, 152.79f)},
        {.image = 74, .category = 0, .box = corners(326.94f, 97.05f, 340.49f, 122.98f)},
        {.image = 74, .category = 0, .box = corners(356.62f, 95.47f, 372.33f, 147.55f)},
        {.image = 74, .category = 0, .box = corners(462.08f, 105.09f, 493.74f, 146.99f)},
        {.image = 74, .category = 0, .box = corners(277.11f, 103.84f, 292.44f, 150.72f)},
        {.image = 133, .category = 5, .box = corners(13.99f, 2.87f, 640.00f, 421.52f)},
    };
    for (size_t i = 0; i < sizeof g / sizeof *g; i++)
        g[i].area = g[i].box.w * g[i].box.h;
    const an_det d[] = {
        {.image = 42, .category = 4, .box = corners(258.15f, 41.29f, 606.41f, 285.07f), .score = 0.236f},
        {.image = 73, .category = 3, .box = corners(61.00f, 22.75f, 565.00f, 632.42f), .score = 0.318f},
        {.image = 73, .category = 2, .box = corners(12.66f, 3.32f, 281.26f, 275.23f), .score = 0.726f},
        {.image = 74, .category = 4, .box = corners(87.87f, 276.25f, 384.29f, 379.43f), .score = 0.546f},
        {.image = 74, .category = 1, .box = corners(0.00f, 3.66f, 142.15f, 316.06f), .score = 0.3f},
        {.image = 74, .category = 0, .box = corners(296.55f, 93.96f, 314.97f, 152.79f), .score = 0.407f},
        {.image = 74, .category = 0, .box = corners(328.94f, 97.05f, 342.49f, 122.98f), .score = 0.611f},
        {.image = 74, .category = 0, .box = corners(356.62f, 95.47f, 372.33f, 147.55f), .score = 0.335f},
        {.image = 74, .category = 0, .box = corners(464.08f, 105.09f, 495.74f, 146.99f), .score = 0.805f},
        {.image = 74, .category = 0, .box = corners(276.11f, 103.84f, 291.44f, 150.72f), .score = 0.953f},
        {.image = 133, .category = 5, .box = corners(0.00f, 2.87f, 601.00f, 421.52f), .score = 0.699f},
    };
    an_coco_result r = run(imgs, 4, cats, 6, g, sizeof g / sizeof *g, d, sizeof d / sizeof *d);
    const double published = 0.0005; /* three decimals */
    CU_ASSERT_DOUBLE_EQUAL(r.map, 0.706, published);
    CU_ASSERT_DOUBLE_EQUAL(r.map50, 0.901, published);
    CU_ASSERT_DOUBLE_EQUAL(r.map75, 0.846, published);
    CU_ASSERT_DOUBLE_EQUAL(r.mar100, 0.716, published);
    const double per_class[] = {0.725, 0.800, 0.454, -1.0, 0.650, 0.900};
    CU_ASSERT_EQUAL_FATAL(r.n_categories, 6);
    for (size_t c = 0; c < 6; c++)
        CU_ASSERT_DOUBLE_EQUAL(r.ap[c], per_class[c], published);
    an_coco_result_fini(&r);
}

RD_TEST_REGISTER(reg_det_metrics)
{
    RD_SUITE("det_metrics", {"IoU and thresholds", test_iou_and_thresholds}, {"perfect detections", test_perfect},
             {"shifted box", test_shifted_box}, {"duplicates", test_duplicates},
             {"missed class, half recall", test_missed_class_and_half_recall}, {"crowd", test_crowd},
             {"100 detections per image", test_max_dets}, {"subset and refusals", test_subset_and_refusals},
             {"published example (pycocotools figures)", test_published_example});
}

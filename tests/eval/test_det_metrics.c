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

RD_TEST_REGISTER(reg_det_metrics)
{
    RD_SUITE("det_metrics", {"IoU and thresholds", test_iou_and_thresholds}, {"perfect detections", test_perfect},
             {"shifted box", test_shifted_box}, {"duplicates", test_duplicates},
             {"missed class, half recall", test_missed_class_and_half_recall}, {"crowd", test_crowd},
             {"100 detections per image", test_max_dets}, {"subset and refusals", test_subset_and_refusals});
}

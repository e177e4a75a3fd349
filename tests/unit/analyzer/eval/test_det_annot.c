/* test_det_annot.c: COCO JSON and YOLO txt ground truth: what parses, and every malformed case with its message. */
#include "det_annot.h"
#include "rd_test.h"

#include <stdlib.h>
#include <string.h>

static rd_status coco(const char *text, an_annot *a, rd_error *err)
{
    return an_coco_annot_parse(text, strlen(text), "t.json", a, err);
}

static void test_coco_ok(void)
{
    const char *text =
        "{\"images\": [{\"id\": 9, \"file_name\": \"val/b.jpg\", \"width\": 100, \"height\": 50},"
        "{\"id\": 2, \"file_name\": \"b.jpg\", \"width\": 10, \"height\": 10}],"
        "\"categories\": [{\"id\": 5, \"name\": \"dog\"}, {\"id\": 1, \"name\": \"cat\"}],"
        "\"annotations\": [{\"image_id\": 9, \"category_id\": 5, \"bbox\": [10, 5, 20, 30], \"area\": 400},"
        "{\"image_id\": 2, \"category_id\": 1, \"bbox\": [-0.5, 0, 10.5, 10], \"iscrowd\": 1,"
        " \"segmentation\": {\"counts\": [1, 2]}}]}";
    an_annot a;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(coco(text, &a, &err), RD_OK);
    CU_ASSERT_EQUAL(a.n_images, 2);
    CU_ASSERT_EQUAL(a.images[0].id, 2); /* sorted by id */
    CU_ASSERT_EQUAL(a.categories[0].id, 1);
    CU_ASSERT_STRING_EQUAL(a.categories[1].name, "dog");
    CU_ASSERT_EQUAL(a.n_gts, 2);
    CU_ASSERT_DOUBLE_EQUAL(a.gts[0].area, 400, 0);
    CU_ASSERT(a.gts[1].crowd);
    CU_ASSERT_DOUBLE_EQUAL(a.gts[1].area, 105, 1e-12); /* no area: the box's */
    /* dataset paths find their image by the longest matching file_name */
    CU_ASSERT_EQUAL(an_annot_find_image(&a, "/data/coco/val/b.jpg")->id, 9);
    CU_ASSERT_EQUAL(an_annot_find_image(&a, "/data/other/b.jpg")->id, 2);
    CU_ASSERT_PTR_NULL(an_annot_find_image(&a, "/data/xb.jpg"));
    an_annot_fini(&a);
}

static void test_coco_malformed(void)
{
    static const struct {
        const char *text, *want;
        rd_status st;
    } cases[] = {
        {"", "not valid JSON", RD_E_PARSE},
        {"[1, 2]", "expected a JSON object", RD_E_PARSE},
        {"{\"categories\": [{\"id\": 1}], \"annotations\": []}", "\"images\" must be an array", RD_E_PARSE},
        {"{\"images\": [{\"id\": 1.5, \"file_name\": \"a\", \"width\": 1, \"height\": 1}]}", "images[0].id",
         RD_E_PARSE},
        {"{\"images\": [{\"id\": 1, \"file_name\": \"\", \"width\": 1, \"height\": 1}]}", "images[0].file_name",
         RD_E_PARSE},
        {"{\"images\": [{\"id\": 1, \"file_name\": \"a\", \"width\": 0, \"height\": 1}]}", "width and height",
         RD_E_PARSE},
        {"{\"images\": [{\"id\": 1, \"file_name\": \"a\", \"width\": 1, \"height\": 1}, {\"id\": 1, \"file_name\": "
         "\"b\", \"width\": 1, \"height\": 1}]}",
         "image id 1 appears twice", RD_E_PARSE},
        {"{\"images\": [], \"categories\": []}", "\"categories\" must be a non-empty array", RD_E_PARSE},
        {"{\"images\": [], \"categories\": [{\"id\": 1}, {\"id\": 1}], \"annotations\": []}",
         "category id 1 appears twice", RD_E_PARSE},
        {"{\"images\": [], \"categories\": [{\"id\": 1}]}", "\"annotations\" must be an array", RD_E_PARSE},
        {"{\"images\": [{\"id\": 1, \"file_name\": \"a\", \"width\": 9, \"height\": 9}], \"categories\": [{\"id\": "
         "1}], "
         "\"annotations\": [{\"image_id\": 1, \"category_id\": 1, \"bbox\": [1, 2, 3]}]}",
         "annotations[0].bbox: expected", RD_E_PARSE},
        {"{\"images\": [{\"id\": 1, \"file_name\": \"a\", \"width\": 9, \"height\": 9}], \"categories\": [{\"id\": "
         "1}], "
         "\"annotations\": [{\"image_id\": 1, \"category_id\": 1, \"bbox\": [1, 2, -3, 4]}]}",
         "width and height >= 0", RD_E_PARSE},
        {"{\"images\": [{\"id\": 1, \"file_name\": \"a\", \"width\": 9, \"height\": 9}], \"categories\": [{\"id\": "
         "1}], "
         "\"annotations\": [{\"image_id\": 2, \"category_id\": 1, \"bbox\": [1, 2, 3, 4]}]}",
         "annotations[0].image_id 2 is not in \"images\"", RD_E_PARSE},
        {"{\"images\": [{\"id\": 1, \"file_name\": \"a\", \"width\": 9, \"height\": 9}], \"categories\": [{\"id\": "
         "1}], "
         "\"annotations\": [{\"image_id\": 1, \"category_id\": 4, \"bbox\": [1, 2, 3, 4]}]}",
         "annotations[0].category_id 4 is not in \"categories\"", RD_E_PARSE},
        {"{\"images\": [{\"id\": 1, \"file_name\": \"a\", \"width\": 9, \"height\": 9}], \"categories\": [{\"id\": "
         "1}], "
         "\"annotations\": [{\"image_id\": 1, \"category_id\": 1, \"bbox\": [5, 5, 6, 4]}]}",
         "lies outside image 1 (a, 9x9)", RD_E_PARSE},
        {"{\"images\": [{\"id\": 1, \"file_name\": \"a\", \"width\": 9, \"height\": 9}], \"categories\": [{\"id\": "
         "1}], "
         "\"annotations\": [{\"image_id\": 1, \"category_id\": 1, \"bbox\": [1, 1, 2, 2], \"iscrowd\": 2}]}",
         "iscrowd: expected 0 or 1", RD_E_PARSE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        an_annot a;
        rd_error err = {0};
        rd_status st = coco(cases[i].text, &a, &err);
        CU_ASSERT_EQUAL(st, cases[i].st);
        if (!strstr(err.msg, cases[i].want))
            fprintf(stderr, "case %zu: %s\n", i, err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].want));
        CU_ASSERT_EQUAL(a.n_images, 0);
        CU_ASSERT_EQUAL(a.n_gts, 0);
    }
    /* a FIFO or a missing file: the file helpers' refusals */
    an_annot a;
    rd_error err = {0};
    CU_ASSERT_EQUAL(an_coco_annot_load("/nonexistent/instances.json", &a, &err), RD_E_NOTFOUND);
}

static void test_yolo(void)
{
    const char *ok = "0 0.5 0.5 0.5 0.25\n\n  2 0.25 0.75 0.1 0.1\r\n";
    an_gt *g = NULL;
    size_t n = 0;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(an_yolo_labels_parse(ok, strlen(ok), "a.txt", 200, 100, 3, 4, &g, &n, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_DOUBLE_EQUAL(g[0].box.x, 50, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(g[0].box.y, 37.5, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(g[0].box.w, 100, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(g[0].box.h, 25, 1e-9);
    CU_ASSERT_EQUAL(g[1].category, 2);
    CU_ASSERT_EQUAL(g[1].image, 4);
    free(g);
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"0 0.5 0.5 0.5\n", "a.txt:1: expected \"class cx cy w h\""},
        {"0 0.5 0.5 0.5 0.5 0.9\n", "a.txt:1: expected"},
        {"\n3 0.5 0.5 0.1 0.1\n", "a.txt:2: class 3 is not an integer in 0..2"},
        {"1.5 0.5 0.5 0.1 0.1\n", "class 1.5"},
        {"-1 0.5 0.5 0.1 0.1\n", "class -1"},
        {"0 0.9 0.5 0.4 0.1\n", "lies outside the image"},
        {"0 0.5 0.5 -0.1 0.1\n", "lies outside the image"},
        {"0 nan 0.5 0.1 0.1\n", "expected"},
        {"0 0.5x 0.5 0.1 0.1\n", "expected"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        g = NULL;
        n = 0;
        CU_ASSERT_EQUAL(an_yolo_labels_parse(bad[i].text, strlen(bad[i].text), "a.txt", 200, 100, 3, 0, &g, &n, &err),
                        RD_E_PARSE);
        if (!strstr(err.msg, bad[i].want))
            fprintf(stderr, "yolo case %zu: %s\n", i, err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].want));
        free(g);
    }
    /* a NUL byte and an over-long line */
    const char nul[] = "0 0.5\0 0.5 0.1 0.1\n";
    g = NULL;
    n = 0;
    CU_ASSERT_EQUAL(an_yolo_labels_parse(nul, sizeof nul - 1, "a.txt", 10, 10, 1, 0, &g, &n, &err), RD_E_PARSE);
    free(g);
    char *lng = malloc(5000);
    memset(lng, ' ', 4999);
    lng[4999] = '\n';
    g = NULL;
    CU_ASSERT_EQUAL(an_yolo_labels_parse(lng, 5000, "a.txt", 10, 10, 1, 0, &g, &n, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line longer than"));
    free(lng);
    free(g);
}

RD_TEST_REGISTER(reg_det_annot)
{
    RD_SUITE("det_annot", {"COCO: parse, image lookup", test_coco_ok}, {"COCO: malformed files", test_coco_malformed},
             {"YOLO txt", test_yolo});
}

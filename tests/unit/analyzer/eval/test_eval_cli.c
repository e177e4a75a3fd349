/* test_eval_cli.c: `eval --task detect` end to end on a model of our own writer, shards merged into the
   one-process report bit for bit, resume, and what merge and eval refuse (exit codes and messages). */
#include "cli_capture.h"
#include "det_model.h"
#include "rd_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_IMG 8

typedef struct fix {
    char *dir;
    char model[4200], ds[4200], annot[4200];
} fix;

/* A YOLOv8-style model (one output [1, 4+2, 8]) on 16x16 inputs whose boxes move with the image, eight
   .npy images, and COCO annotations (categories 1 and 2 for the model's classes 0 and 1). */
static void make_fixture(fix *f)
{
    f->dir = rd_test_tmpdir("eval_cli");
    snprintf(f->model, sizeof f->model, "%s/det.onnx", f->dir);
    snprintf(f->ds, sizeof f->ds, "%s/dataset.txt", f->dir);
    snprintf(f->annot, sizeof f->annot, "%s/instances.json", f->dir);
    float base[6 * 8] = {0};
    const float a[6] = {8, 8, 6, 6, 0.9f, 0.1f}, b[6] = {4, 12, 4, 4, 0.2f, 0.7f};
    for (int c = 0; c < 6; c++) {
        base[c * 8 + 2] = a[c];
        base[c * 8 + 5] = b[c];
    }
    det_out o = {"output0", 3, {1, 6, 8}, base, 0.01f};
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(det_model_write(f->model, 16, 16, &o, 1, &err), RD_OK);
    char list[4096] = "", json[8192];
    size_t used = (size_t)snprintf(json, sizeof json, "{\"images\": [");
    for (int i = 0; i < N_IMG; i++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/img%d.npy", f->dir, i);
        rd_tensor t;
        rd_tensor_alloc(&t, RD_DT_F32, 4, (const int64_t[]){1, 16, 16, 3}, &err);
        for (int64_t k = 0; k < rd_tensor_numel(&t); k++)
            ((float *)t.data)[k] = (float)(i * 7 % 50) + (float)(k % 3);
        CU_ASSERT_EQUAL_FATAL(rd_npy_save(path, &t, &err), RD_OK);
        rd_tensor_fini(&t);
        snprintf(list + strlen(list), sizeof list - strlen(list), "img%d.npy\n", i);
        used += (size_t)snprintf(json + used, sizeof json - used,
                                 "%s{\"id\": %d, \"file_name\": \"img%d.npy\", "
                                 "\"width\": 16, \"height\": 16}",
                                 i ? ", " : "", 100 + i, i);
    }
    used += (size_t)snprintf(json + used, sizeof json - used,
                             "], \"categories\": [{\"id\": 1, \"name\": \"a\"}, "
                             "{\"id\": 2, \"name\": \"b\"}], \"annotations\": [");
    for (int i = 0; i < N_IMG; i++) {
        /* object a everywhere; object b on even images only (odd ones: a false positive) */
        used += (size_t)snprintf(json + used, sizeof json - used,
                                 "%s{\"image_id\": %d, \"category_id\": 1, "
                                 "\"bbox\": [5, 5, 6, 6]}",
                                 i ? ", " : "", 100 + i);
        if (i % 2 == 0)
            used += (size_t)snprintf(json + used, sizeof json - used,
                                     ", {\"image_id\": %d, \"category_id\": 2, "
                                     "\"bbox\": [2, 10, 4, 4]}",
                                     100 + i);
    }
    snprintf(json + used, sizeof json - used, "]}\n");
    rd_test_write_text(f->ds, list);
    rd_test_write_text(f->annot, json);
}

static void fix_free(fix *f)
{
    free(f->dir);
}

#define EVAL_ARGS(f) \
    "eval", (f)->model, "--task", "detect", "--decoder", "yolov8", "--annotations", (f)->annot, "--dataset", (f)->ds

static char *read_text(const char *dir, const char *name)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = 0;
    return rd_test_read_file(path, &len);
}

static void test_detect_and_merge(void)
{
    fix f;
    make_fixture(&f);
    char one[4300], shard[4300], merged[4300];
    snprintf(one, sizeof one, "%s/one", f.dir);
    rd_cli_result r = rd_test_cli(EVAL_ARGS(&f), "-o", one, NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "8 images, 12 objects"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "mAP50-95"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "int8"));
    char *one_out = strdup(r.out);
    rd_test_cli_free(&r);
    char *one_report = read_text(one, "report.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(one_report);
    /* every object found with a false positive of class b on odd images: AP50 of a is 1, of b below 1 */
    CU_ASSERT_PTR_NOT_NULL(strstr(one_report, "\"objects\":\t12"));

    /* the same report from 1, 2 and 4 shards, bit for bit */
    const int counts[3] = {1, 2, 4};
    for (int c = 0; c < 3; c++) {
        const char *parts[4];
        char dirs[4][4300];
        for (int k = 0; k < counts[c]; k++) {
            char spec[32];
            snprintf(spec, sizeof spec, "%d/%d", k, counts[c]);
            snprintf(dirs[k], sizeof dirs[k], "%s/s%d_%d", f.dir, counts[c], k);
            parts[k] = dirs[k];
            r = rd_test_cli(EVAL_ARGS(&f), "--shard", spec, "-o", dirs[k], NULL);
            CU_ASSERT_EQUAL(r.code, 0);
            if (counts[c] > 1)
                CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "merge every shard"));
            rd_test_cli_free(&r);
        }
        snprintf(merged, sizeof merged, "%s/merged%d", f.dir, counts[c]);
        const char *args[8] = {parts[0], parts[1], parts[2], parts[3]};
        if (counts[c] == 1)
            r = rd_test_cli("merge", args[0], "-o", merged, NULL);
        else if (counts[c] == 2)
            r = rd_test_cli("merge", args[1], args[0], "-o", merged, NULL);
        else
            r = rd_test_cli("merge", args[2], args[0], args[3], args[1], "-o", merged, NULL);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_STRING_EQUAL(r.out, one_out);
        rd_test_cli_free(&r);
        char *rep = read_text(merged, "report.json");
        CU_ASSERT_PTR_NOT_NULL(rep);
        if (rep)
            CU_ASSERT_STRING_EQUAL(rep, one_report);
        free(rep);
    }

    /* resume: a finished shard with the same inputs is skipped, a changed input runs again */
    snprintf(shard, sizeof shard, "%s/s2_1", f.dir);
    r = rd_test_cli(EVAL_ARGS(&f), "--shard", "1/2", "-o", shard, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "skipped"));
    CU_ASSERT_PTR_NULL(strstr(r.errs, "evaluating"));
    rd_test_cli_free(&r);
    r = rd_test_cli(EVAL_ARGS(&f), "--shard", "1/2", "--nms-iou", "0.5", "-o", shard, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NULL(strstr(r.errs, "skipped"));
    rd_test_cli_free(&r);

    /* merge refuses: a missing shard, one given twice, shards of different runs (the rerun above) */
    char s0[4300];
    snprintf(s0, sizeof s0, "%s/s4_0", f.dir);
    rd_test_cli_says(3, "shard 1/4 is missing", "merge", s0, NULL);
    rd_test_cli_says(3, "shard 0/4 is given twice", "merge", s0, s0, NULL);
    snprintf(s0, sizeof s0, "%s/s2_0", f.dir);
    rd_test_cli_says(3, "shards of different runs", "merge", s0, shard, NULL);
    char bad[4300];
    snprintf(bad, sizeof bad, "%s/bad.json", f.dir);
    rd_test_write_text(bad, "{\"format\": \"something else\"}");
    rd_test_cli_says(3, "\"format\" is not", "merge", bad, NULL);
    rd_test_cli_says(2, NULL, "merge", NULL);
    free(one_out);
    free(one_report);
    fix_free(&f);
}

/* Annotations that do not match the images, a decoder that does not fit: exit 3, naming what. */
static void test_bad_input(void)
{
    fix f;
    make_fixture(&f);
    char annot[4300];
    snprintf(annot, sizeof annot, "%s/other.json", f.dir);
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"{\"images\": [{\"id\": 1, \"file_name\": \"img0.npy\", \"width\": 16, \"height\": 16}], \"categories\": "
         "[{\"id\": 1}], \"annotations\": []}",
         "img1.npy is not among the images"},
        {"{\"images\": [{\"id\": 1, \"file_name\": \"x.jpg\", \"width\": 16, \"height\": 16}], \"categories\": "
         "[{\"id\": 1}], \"annotations\": [{\"image_id\": 1, \"category_id\": 1, \"bbox\": [10, 10, 20, 5]}]}",
         "annotations[0].bbox [10, 10, 20, 5] lies outside image 1"},
        {"{\"images\": [], \"categories\": [{\"id\": 1}], \"annotations\": [{\"image_id\": 1, \"category_id\": 7, "
         "\"bbox\": [1, 1, 2, 2]}]}",
         "annotations[0].category_id 7 is not in \"categories\""},
        {"{\"images\": [", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rd_test_write_text(annot, cases[i].json);
        rd_cli_result r = rd_test_cli("eval", f.model, "--task", "detect", "--decoder", "yolov8", "--annotations",
                                      annot, "--dataset", f.ds, NULL);
        CU_ASSERT_EQUAL(r.code, 3);
        if (!strstr(r.errs, cases[i].want))
            fprintf(stderr, "case %zu: %s\n", i, r.errs);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, cases[i].want));
        rd_test_cli_free(&r);
    }
    /* the outputs are [1, 6, 8]: yolov5 wants 5 + classes, --classes 80 does not fit */
    rd_cli_result r = rd_test_cli(EVAL_ARGS(&f), "--classes", "80", NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "--classes 80 but"));
    rd_test_cli_free(&r);
    rd_test_cli_says(3, "1 outputs: expected two", "eval", f.model, "--task", "detect", "--decoder", "ssd",
                     "--annotations", f.annot, "--dataset", f.ds, NULL);
    /* usage */
    rd_test_cli_says(2, "needs --decoder", "eval", f.model, "--task", "detect", "--annotations", f.annot, "--dataset",
                     f.ds, NULL);
    rd_test_cli_says(2, NULL, EVAL_ARGS(&f), "--shard", "2/2", "-o", f.dir, NULL);
    rd_test_cli_says(2, "--shard needs -o", EVAL_ARGS(&f), "--shard", "0/2", NULL);
    fix_free(&f);
}

/* YOLO txt labels on PNG images: the same objects as a COCO file naming the same images, the same
   figures; a bad line and a missing label file are exit 3. */
static void test_yolo_labels(void)
{
    fix f;
    make_fixture(&f);
    char labels[4300], ds[4300], annot[4300], list[4096] = "";
    snprintf(labels, sizeof labels, "%s/labels", f.dir);
    snprintf(ds, sizeof ds, "%s/png.txt", f.dir);
    snprintf(annot, sizeof annot, "%s/png.json", f.dir);
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rd_dir_make(labels, 0, &err), RD_OK);
    char json[8192];
    size_t used = (size_t)snprintf(json, sizeof json, "{\"categories\": [{\"id\": 0}, {\"id\": 1}], \"images\": [");
    for (int i = 0; i < N_IMG; i++) {
        char path[4400];
        uint8_t px[256];
        memset(px, (i * 37) % 200, sizeof px);
        snprintf(path, sizeof path, "%s/img%d.png", f.dir, i);
        write_grey_png(path, px, 16, 16);
        snprintf(list + strlen(list), sizeof list - strlen(list), "img%d.png\n", i);
        snprintf(path, sizeof path, "%s/img%d.txt", labels, i);
        rd_test_write_text(path,
                           i % 2 == 0 ? "0 0.5 0.5 0.375 0.375\n1 0.25 0.75 0.25 0.25\n" : "0 0.5 0.5 0.375 0.375\n");
        used += (size_t)snprintf(json + used, sizeof json - used,
                                 "%s{\"id\": %d, \"file_name\": \"img%d.png\", "
                                 "\"width\": 16, \"height\": 16}",
                                 i ? ", " : "", i, i);
    }
    used += (size_t)snprintf(json + used, sizeof json - used, "], \"annotations\": [");
    for (int i = 0; i < N_IMG; i++) {
        used += (size_t)snprintf(json + used, sizeof json - used,
                                 "%s{\"image_id\": %d, \"category_id\": 0, "
                                 "\"bbox\": [5, 5, 6, 6]}",
                                 i ? ", " : "", i);
        if (i % 2 == 0)
            used += (size_t)snprintf(json + used, sizeof json - used,
                                     ", {\"image_id\": %d, \"category_id\": 1, "
                                     "\"bbox\": [2, 10, 4, 4]}",
                                     i);
    }
    snprintf(json + used, sizeof json - used, "]}\n");
    rd_test_write_text(ds, list);
    rd_test_write_text(annot, json);
    rd_cli_result a = rd_test_cli("eval", f.model, "--task", "detect", "--decoder", "yolov8", "--annotations", annot,
                                  "--dataset", ds, "--json", NULL);
    rd_cli_result b = rd_test_cli("eval", f.model, "--task", "detect", "--decoder", "yolov8", "--yolo-labels", labels,
                                  "--classes", "2", "--dataset", ds, "--json", NULL);
    CU_ASSERT_EQUAL(a.code, 0);
    CU_ASSERT_EQUAL(b.code, 0);
    const char *ma = strstr(a.out, "\"metrics\""), *mb = strstr(b.out, "\"metrics\"");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ma);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mb);
    const char *ea = strstr(ma, "\"per_class\""), *eb = strstr(mb, "\"per_class\"");
    CU_ASSERT_FATAL(ea && eb && ea - ma == eb - mb);
    CU_ASSERT_EQUAL(memcmp(ma, mb, (size_t)(ea - ma)), 0);
    rd_test_cli_free(&a);
    rd_test_cli_free(&b);
    char path[4400];
    snprintf(path, sizeof path, "%s/img3.txt", labels);
    rd_test_write_text(path, "0 0.5 0.5 1.5 0.2\n");
    b = rd_test_cli("eval", f.model, "--task", "detect", "--decoder", "yolov8", "--yolo-labels", labels, "--classes",
                    "2", "--dataset", ds, NULL);
    CU_ASSERT_EQUAL(b.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(b.errs, "img3.txt:1: box (cx 0.5, cy 0.5, w 1.5, h 0.2) lies outside the image"));
    rd_test_cli_free(&b);
    rd_test_write_text(path, "0 0.5 0.5 0.375 0.375\n");
    snprintf(path, sizeof path, "%s/img5.txt", labels);
    char moved[4400];
    snprintf(moved, sizeof moved, "%s/img5.txt", f.dir);
    CU_ASSERT_EQUAL(rename(path, moved), 0);
    b = rd_test_cli("eval", f.model, "--task", "detect", "--decoder", "yolov8", "--yolo-labels", labels, "--classes",
                    "2", "--dataset", ds, NULL);
    CU_ASSERT_EQUAL(b.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(b.errs, "its YOLO label file"));
    rd_test_cli_free(&b);
    fix_free(&f);
}

/* --hybrid adds a column named after the cfg (here the w8a8 parameters quantize writes, imported) */
static void test_hybrid_column(void)
{
    fix f;
    make_fixture(&f);
    char cfg[4300];
    snprintf(cfg, sizeof cfg, "%s/head.quantization.cfg", f.dir);
    rd_cli_result r = rd_test_cli("quantize", f.model, "--dataset", f.ds, "-o", cfg, NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    rd_test_cli_free(&r);
    r = rd_test_cli(EVAL_ARGS(&f), "--hybrid", cfg, "--json", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"columns\":\t[\"fp32\", \"fp16\", \"int8\", \"head\"]"));
    /* imported parameters equal to the int8 column's calibration: the same figures */
    rd_test_cli_free(&r);
    rd_test_cli_says(3, "--hybrid /nonexistent.cfg", EVAL_ARGS(&f), "--hybrid", "/nonexistent.cfg", NULL);
    fix_free(&f);
}

RD_TEST_REGISTER(reg_eval_cli)
{
    RD_SUITE("eval_cli", {"detect: one run, 1/2/4 shards merged, resume, merge refusals", test_detect_and_merge},
             {"detect: bad annotations and decoders", test_bad_input}, {"detect: YOLO labels", test_yolo_labels},
             {"--hybrid columns", test_hybrid_column});
}

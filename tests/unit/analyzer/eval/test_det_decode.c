/* test_det_decode.c: each decoder on a model of our own writer whose outputs hold known boxes, through
   the fp32 reference; then outputs that do not fit, named by output and dimension. */
#include "det_decode.h"
#include "det_model.h"
#include "rd_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define IN 32 /* input 32x32: levels of stride 8, 16, 32 are 4x4, 2x2, 1x1 */

typedef struct run_out {
    rd_tensor t[16];
    const char *names[16];
    size_t n;
} run_out;

/* Writes the model, runs it at fp32 on a zero image, keeps the outputs. */
static void run_model(const det_out *outs, int n, run_out *r)
{
    char *dir = rd_test_tmpdir("det_decode");
    char *path = rd_test_join(dir, "m.onnx");
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(det_model_write(path, IN, IN, outs, n, &err), RD_OK);
    rd_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(path, NULL, &m, &err), RD_OK);
    rd_tensor x;
    rd_tensor_alloc(&x, RD_DT_F32, 4, (const int64_t[]){1, 3, IN, IN}, &err);
    memset(x.data, 0, rd_tensor_nbytes(&x));
    r->n = (size_t)n;
    CU_ASSERT_EQUAL_FATAL(rd_model_run(m, &x, 1, NULL, r->t, r->n, &err), RD_OK);
    for (int i = 0; i < n; i++)
        r->names[i] = outs[i].name;
    rd_tensor_fini(&x);
    rd_model_destroy(m);
    free(path);
    free(dir);
}

static void run_free(run_out *r)
{
    for (size_t i = 0; i < r->n; i++)
        rd_tensor_fini(&r->t[i]);
}

static rd_status decode(const char *dec, const an_det_opts *o, run_out *r, an_det_list *l, rd_error *err)
{
    an_det_frame f = {.outs = r->t, .names = r->names, .n_outs = r->n, .in_w = IN, .in_h = IN};
    return an_det_run(an_decoder_find(dec), o, &f, l, err);
}

static void expect_box(const an_det_box *b, float x0, float y0, float x1, float y1, float score, int cls)
{
    CU_ASSERT_DOUBLE_EQUAL(b->x0, x0, 1e-4);
    CU_ASSERT_DOUBLE_EQUAL(b->y0, y0, 1e-4);
    CU_ASSERT_DOUBLE_EQUAL(b->x1, x1, 1e-4);
    CU_ASSERT_DOUBLE_EQUAL(b->y1, y1, 1e-4);
    CU_ASSERT_DOUBLE_EQUAL(b->score, score, 1e-5);
    CU_ASSERT_EQUAL(b->cls, cls);
}

/* Decodes with default options and expects exactly one box. */
static void expect_one(const char *dec, run_out *r, float x0, float y0, float x1, float y1, float score, int cls)
{
    an_det_opts opt;
    an_det_opts_init(&opt);
    an_det_list l;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode(dec, &opt, r, &l, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(l.n, 1);
    expect_box(&l.v[0], x0, y0, x1, y1, score, cls);
    an_det_list_fini(&l);
}

/* YOLOv5 decoded rows: one box, one below the threshold, one duplicate that NMS removes. */
static void test_yolov5_rows(void)
{
    const float rows[3 * 7] = {50, 40, 20, 10, 0.9f,    0.1f, 0.8f,  /* class 1, 0.72 */
                               10, 10, 4,  4,  0.0005f, 0.5f, 0.5f,  /* below 0.001 */
                               51, 40, 20, 10, 0.8f,    0.1f, 0.8f}; /* IoU 0.9 with the first: suppressed */
    det_out o = {"output0", 3, {1, 3, 7}, rows, 0};
    run_out r;
    run_model(&o, 1, &r);
    expect_one("yolov5", &r, 40, 35, 60, 45, 0.72f, 1);
    an_det_opts opt;
    an_det_opts_init(&opt);
    an_det_list l;
    rd_error err = {0};
    /* --classes that do not fit: named */
    opt.n_classes = 80;
    CU_ASSERT_EQUAL(decode("yolov5", &opt, &r, &l, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "output 0 ('output0') dimension 2 is 7: expected 5 + 80 classes"));
    run_free(&r);
}

/* YOLOv5 grid heads of the model zoo: three levels, anchors; one object at level 0, anchor 1, cell (1, 2). */
static void test_yolov5_grid(void)
{
    const int nc = 2, per = 5 + nc;
    float *l0 = calloc(3 * per * 16, sizeof *l0), *l1 = calloc(3 * per * 4, sizeof *l1),
          *l2 = calloc(3 * per, sizeof *l2);
    const int a = 1, cell = 2 * 4 + 1, hw = 16;
    float v[7] = {0.5f, 0.5f, 0.5f, 0.5f, 0.9f, 0.2f, 0.7f};
    for (int c = 0; c < per; c++)
        l0[(a * per + c) * hw + cell] = v[c];
    det_out o[3] = {{"p3", 4, {1, 3 * per, 4, 4}, l0, 0},
                    {"p4", 4, {1, 3 * per, 2, 2}, l1, 0},
                    {"p5", 4, {1, 3 * per, 1, 1}, l2, 0}};
    run_out r;
    run_model(o, 3, &r);
    an_det_opts opt;
    an_det_opts_init(&opt);
    an_det_list l;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode("yolov5", &opt, &r, &l, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(l.n, 1);
    /* xy = (2 * 0.5 - 0.5 + cell) * 8 = (12, 20); wh = (2 * 0.5)^2 * anchor (16, 30) */
    expect_box(&l.v[0], 4, 5, 20, 35, 0.63f, 1);
    an_det_list_fini(&l);
    /* anchors that do not split over the levels, and a wrong channel count */
    opt.n_anchors = 4;
    CU_ASSERT_EQUAL(decode("yolov5", &opt, &r, &l, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "4 anchor pairs do not split over 3 output levels"));
    opt.n_anchors = 0;
    opt.n_classes = 80;
    CU_ASSERT_EQUAL(decode("yolov5", &opt, &r, &l, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "output 0 ('p3') dimension 1 is 7: expected 5 + 80 classes"));
    run_free(&r);
    free(l0);
    free(l1);
    free(l2);
}

/* YOLOv8 single output [1, 4+nc, N]. */
static void test_yolov8_rows(void)
{
    float x[6 * 8] = {0}; /* 8 anchors: more anchors than channels, as 8400 against 84 */
    const float col[6] = {16, 16, 8, 4, 0.9f, 0.1f};
    for (int c = 0; c < 6; c++)
        x[c * 8 + 2] = col[c];
    det_out o = {"output0", 3, {1, 6, 8}, x, 0};
    run_out r;
    run_model(&o, 1, &r);
    expect_one("yolov8", &r, 12, 14, 20, 18, 0.9f, 0);
    run_free(&r);
}

/* YOLOv8 DFL heads of the model zoo: box [1, 64, H, W], class [1, nc, H, W], score sum [1, 1, H, W] per level. */
static void test_yolov8_dfl(void)
{
    const int nc = 2, sizes[3] = {4, 2, 1};
    float *box[3], *cls[3], *sum[3];
    det_out o[9];
    static const char *const names[9] = {"box0", "cls0", "sum0", "box1", "cls1", "sum1", "box2", "cls2", "sum2"};
    for (int k = 0; k < 3; k++) {
        int hw = sizes[k] * sizes[k];
        box[k] = calloc((size_t)(64 * hw), sizeof(float));
        cls[k] = calloc((size_t)(nc * hw), sizeof(float));
        sum[k] = calloc((size_t)hw, sizeof(float));
        o[3 * k] = (det_out){names[3 * k], 4, {1, 64, sizes[k], sizes[k]}, box[k], 0};
        o[3 * k + 1] = (det_out){names[3 * k + 1], 4, {1, nc, sizes[k], sizes[k]}, cls[k], 0};
        o[3 * k + 2] = (det_out){names[3 * k + 2], 4, {1, 1, sizes[k], sizes[k]}, sum[k], 0};
    }
    /* level 1 (stride 16), cell (x 1, y 0): distances left 1, top 1, right 2, bottom 1 as one-hot bins */
    const int cell = 1, hw = 4, dist[4] = {1, 1, 2, 1};
    for (int s = 0; s < 4; s++)
        box[1][(s * 16 + dist[s]) * hw + cell] = 100;
    cls[1][0 * hw + cell] = 0.2f;
    cls[1][1 * hw + cell] = 0.8f;
    run_out r;
    run_model(o, 9, &r);
    an_det_opts opt;
    an_det_opts_init(&opt);
    an_det_list l;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode("yolov8", &opt, &r, &l, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(l.n, 1);
    /* centre (1.5, 0.5) cells: x0 = (1.5 - 1) * 16, y0 = (0.5 - 1) * 16, x1 = (1.5 + 2) * 16, y1 = (0.5 + 1) * 16 */
    expect_box(&l.v[0], 8, -8, 56, 24, 0.8f, 1);
    an_det_list_fini(&l);
    opt.reg_max = 8;
    CU_ASSERT_EQUAL(decode("yolov8", &opt, &r, &l, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "dimension 1 is 64: a box output has 4 (distances) or 4 x reg_max = 32"));
    run_free(&r);
    for (int k = 0; k < 3; k++) {
        free(box[k]);
        free(cls[k]);
        free(sum[k]);
    }
}

/* YOLOX: the official raw single output [1, 21, 5+nc] (grids 4x4 + 2x2 + 1x1), and the model zoo's heads. */
static void test_yolox(void)
{
    float rows[21 * 7] = {0};
    const float v[7] = {0.5f, 0.25f, logf(2), 0, 0.8f, 0.5f, 0.9f};
    memcpy(&rows[(16 + 3) * 7], v, sizeof v); /* level 1 (stride 16), cell 3 = (1, 1) */
    det_out o = {"output", 3, {1, 21, 7}, rows, 0};
    run_out r;
    run_model(&o, 1, &r);
    /* cx = (0.5 + 1) * 16 = 24, cy = (0.25 + 1) * 16 = 20, w = 2 * 16, h = 16 */
    expect_one("yolox", &r, 8, 12, 40, 28, 0.72f, 1);
    run_free(&r);

    float h0[7 * 16] = {0}, h1[7 * 4] = {0}, h2[7] = {0};
    for (int c = 0; c < 7; c++)
        h1[c * 4 + 3] = v[c];
    det_out heads[3] = {{"h0", 4, {1, 7, 4, 4}, h0, 0}, {"h1", 4, {1, 7, 2, 2}, h1, 0}, {"h2", 4, {1, 7, 1, 1}, h2, 0}};
    run_model(heads, 3, &r);
    expect_one("yolox", &r, 8, 12, 40, 28, 0.72f, 1);
    run_free(&r);
}

/* SSD-style: scores [1, N, 1+nc] then boxes [1, N, 4] in 0..1, as UltraFace. */
static void test_ssd(void)
{
    const float scores[2 * 2] = {0.1f, 0.9f, 0.999f, 0.001f};
    const float boxes[2 * 4] = {0.25f, 0.25f, 0.5f, 0.75f, 0, 0, 1, 1};
    det_out o[2] = {{"scores", 3, {1, 2, 2}, scores, 0}, {"boxes", 3, {1, 2, 4}, boxes, 0}};
    run_out r;
    run_model(o, 2, &r);
    an_det_opts opt;
    an_det_opts_init(&opt);
    an_det_list l;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode("ssd", &opt, &r, &l, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(l.n, 2);
    expect_box(&l.v[0], 8, 8, 16, 24, 0.9f, 0);
    an_det_list_fini(&l);
    opt.background = 5;
    CU_ASSERT_EQUAL(decode("ssd", &opt, &r, &l, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "output 0 ('scores') dimension 2 has 2 score columns"));
    run_free(&r);
    /* a model with one output is not SSD-style */
    det_out one = {"boxes", 3, {1, 2, 4}, boxes, 0};
    run_model(&one, 1, &r);
    an_det_opts_init(&opt);
    CU_ASSERT_EQUAL(decode("ssd", &opt, &r, &l, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "1 outputs: expected two"));
    run_free(&r);
}

static void test_options(void)
{
    an_det_opts o;
    an_det_opts_init(&o);
    rd_error err = {0};
    CU_ASSERT_EQUAL(an_det_opts_set(&o, "reg_max=8", &err), RD_OK);
    CU_ASSERT_EQUAL(o.reg_max, 8);
    CU_ASSERT_EQUAL(an_det_opts_set(&o, "background=none", &err), RD_OK);
    CU_ASSERT_EQUAL(o.background, -1);
    CU_ASSERT_EQUAL(an_det_opts_set(&o, "box=yxyx", &err), RD_OK);
    CU_ASSERT_EQUAL(an_det_opts_set(&o, "reg_max=0", &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(an_det_opts_set(&o, "colour=red", &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown key"));
    CU_ASSERT_EQUAL(an_det_opts_set(&o, "=1", &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(an_decoder_find("yolo11"));
    CU_ASSERT_PTR_NULL(an_decoder_find("yolov3"));
}

RD_TEST_REGISTER(reg_det_decode)
{
    RD_SUITE("det_decode", {"yolov5 rows, NMS", test_yolov5_rows}, {"yolov5 grid with anchors", test_yolov5_grid},
             {"yolov8 rows", test_yolov8_rows}, {"yolov8 DFL heads", test_yolov8_dfl},
             {"yolox raw and heads", test_yolox}, {"ssd", test_ssd}, {"options", test_options});
}

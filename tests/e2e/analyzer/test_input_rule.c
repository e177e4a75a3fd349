/*
 * test_input_rule.c: the input-dump rule end to end through the emulated board (issue 12, item 5). With
 * the normal API (rknn_inputs_set) the InputOperator dump holds the input after the model's mean/std,
 * with zero-copy (rknn_set_io_mem) the buffer before them. board-run plays an application of either API,
 * correct or with one mistake; `accuracy --app-api` reads the dump by the same rule: a correct
 * application gets no input finding, every mistake is named under both rules, no mistake is taken for a
 * runtime fault, and reading one API's dumps by the other's rule says which --app-api to give.
 */
#include "cli_capture.h"
#include "demo_model.h"
#include "rd_test.h"
#include "paths_in.h"
#include "text_check.h"
#include "tensor_dump.h"

#include "rknn_diag/adb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef RD_CLI_BINARY

/* The model normalises: (x - mean) / std, so the two sides of the normalisation differ. */
#define MEAN "12,24,36"
#define STD "255,255,255"

typedef struct rule_rig {
    char *dir;
    char root[4300], model[4400], cfg[4400], image[4300], floats[4300], connect[64];
    rd_board *board;
} rule_rig;

/* A smooth uint8 image (the demo input as bytes): values above 127 for int8-clamp, detail for wrong-size. */
static void write_image(const char *demo_npy, const char *path)
{
    rd_error err;
    rd_tensor f, u;
    CU_ASSERT_EQUAL_FATAL(rd_npy_load(demo_npy, &f, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&u, RD_DT_U8, f.rank, f.dims, &err), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(&f); i++) {
        float v = nearbyintf((((float *)f.data)[i] + 0.7f) * 110.0f);
        ((uint8_t *)u.data)[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    CU_ASSERT_EQUAL_FATAL(rd_npy_save(path, &u, &err), RD_OK);
    rd_tensor_fini(&f);
    rd_tensor_fini(&u);
}

static void rig_init(rule_rig *r)
{
    memset(r, 0, sizeof *r);
    r->dir = rd_test_tmpdir("input-rule");
    char userdata[4400], dataset[4300], home[4300], demo_input[4300];
    snprintf(r->root, sizeof r->root, "%s/board", r->dir);
    snprintf(userdata, sizeof userdata, "%s/userdata", r->root);
    snprintf(r->model, sizeof r->model, "%s/demo.onnx", userdata);
    snprintf(r->cfg, sizeof r->cfg, "%s/demo.quantization.cfg", userdata);
    rd_test_paths_in(r->dir, sizeof dataset, r->image, "bytes.npy", dataset, "dataset.txt", demo_input, "image.npy",
                     NULL);
    snprintf(r->floats, sizeof r->floats, "%s", demo_input);
    snprintf(home, sizeof home, "%s/home", r->dir);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_mkdirs(userdata, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(an_mkdirs(home, &err), RD_OK);
    setenv("HOME", home, 1);
    rd_cli_result o = rd_test_cli("demo", "-o", r->dir, "--quiet", NULL);
    CU_ASSERT_EQUAL_FATAL(o.code, 0);
    rd_test_cli_free(&o);
    CU_ASSERT_EQUAL_FATAL(an_demo_model_write(r->model, &err), RD_OK);
    o = rd_test_cli("quantize", r->model, "--dataset", dataset, "--input-layout", "nchw", "-o", r->cfg, NULL);
    CU_ASSERT_EQUAL_FATAL(o.code, 0);
    rd_test_cli_free(&o);
    write_image(demo_input, r->image);
    rd_board_options bo = {.port = 0, .root = r->root};
    CU_ASSERT_EQUAL_FATAL(rd_board_start(&bo, &r->board, &err), RD_OK);
    snprintf(r->connect, sizeof r->connect, "127.0.0.1:%d", rd_board_port(r->board));
}

static void rig_fini(rule_rig *r)
{
    rd_board_stop(r->board);
    free(r->dir);
}

/* The board runs an application of board_api (with `mistake`, NULL for none); the host reads its dumps by
   host_api's rule. quant: RKNN_DUMP_QUANT=1 (the dumps in the layers' own dtypes). */
static rd_cli_result run_on(rule_rig *r, const char *image, const char *tag, const char *board_api, const char *mistake,
                            const char *host_api, bool quant)
{
    char cmd[9000], snap[4400];
    snprintf(cmd, sizeof cmd,
             "%s'%s' board-run /userdata/demo.onnx --input {input0} --input-layout nchw --cfg "
             "/userdata/demo.quantization.cfg --target rk3566 --mean " MEAN " --std " STD " --app-api %s%s%s",
             quant ? "RKNN_DUMP_QUANT=1 " : "", RD_CLI_BINARY, board_api, mistake ? " --app-mistake " : "",
             mistake ? mistake : "");
    snprintf(snap, sizeof snap, "%s/snap-%s", r->dir, tag);
    rd_cli_result o = rd_test_cli("accuracy", r->model, "-i", image, "--input-layout", "nchw", "--cfg", r->cfg,
                                  "--mean", MEAN, "--std", STD, "--target", "rk3566", "--connect", r->connect, "--run",
                                  cmd, "--app-api", host_api, "-o", snap, "--quiet", NULL);
    if (o.code != 0)
        fprintf(stderr, "%s: exit %d\n%s\n%s", tag, o.code, o.out, o.errs);
    return o;
}

/* run_on the uint8 image */
static rd_cli_result run(rule_rig *r, const char *tag, const char *board_api, const char *mistake, const char *host_api,
                         bool quant)
{
    return run_on(r, r->image, tag, board_api, mistake, host_api, quant);
}

static const char *const apis[] = {"normal", "zero-copy"};

/* A correct application of either API: no input finding, no runtime finding. */
static void test_correct_applications(void)
{
    rule_rig r;
    rig_init(&r);
    for (int quant = 0; quant < 2; quant++)
        for (size_t k = 0; k < 2; k++) {
            char tag[64];
            snprintf(tag, sizeof tag, "ok-%s-%d", apis[k], quant);
            rd_cli_result o = run(&r, tag, apis[k], NULL, apis[k], quant);
            CU_ASSERT_EQUAL(o.code, 0);
            if (strstr(o.out, "The application's input") || strstr(o.out, "Runtime fault")) {
                fprintf(stderr, "%s: a correct application got a finding:\n%s\n", tag, o.out);
                CU_FAIL("finding for a correct application");
            }
            rd_test_cli_free(&o);
        }
    rig_fini(&r);
}

/* Every mistake is named under both rules, and never taken for a fault of the runtime. */
static void test_mistakes_named_under_both_rules(void)
{
    static const struct {
        const char *mistake, *name;
    } cases[] = {{"rgb-bgr", "RGB/BGR swapped"},
                 {"double-norm", "normalisation applied twice"},
                 {"no-norm", "normalisation not applied"},
                 {"nhwc-as-nchw", "wrong layout (NHWC read as NCHW)"},
                 {"int8-clamp", "uint8 data clamped into int8"},
                 {"wrong-size", "wrong size"}};
    rule_rig r;
    rig_init(&r);
    for (size_t k = 0; k < 2; k++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            char tag[64], title[128];
            snprintf(tag, sizeof tag, "%s-%s", cases[c].mistake, apis[k]);
            snprintf(title, sizeof title, "The application's input 'image': %s", cases[c].name);
            rd_cli_result o = run(&r, tag, apis[k], cases[c].mistake, apis[k], false);
            CU_ASSERT_EQUAL(o.code, 0);
            if (!strstr(o.out, title) || strstr(o.out, "Runtime fault")) {
                fprintf(stderr, "%s: expected '%s' and no runtime fault:\n%s\n", tag, title, o.out);
                CU_FAIL("mistake not named");
            }
            rd_test_cli_free(&o);
        }
    rig_fini(&r);
}

/* One API's dumps read by the other's rule: the finding says which --app-api fits. */
static void test_wrong_rule_says_which(void)
{
    rule_rig r;
    rig_init(&r);
    rd_cli_result o = run(&r, "normal-read-as-zc", "normal", NULL, "zero-copy", false);
    CU_ASSERT_EQUAL(o.code, 0);
    RD_ASSERT_HAS_TEXTS(o.out, "normalisation applied twice", "--app-api normal");
    rd_test_cli_free(&o);
    /* a zero-copy buffer of floats read as the normal API's dump: not normalised, or the other rule */
    o = run_on(&r, r.floats, "zc-read-as-normal", "zero-copy", NULL, "normal", false);
    CU_ASSERT_EQUAL(o.code, 0);
    RD_ASSERT_HAS_TEXTS(o.out, "normalisation not applied", "--app-api zero-copy");
    rd_test_cli_free(&o);
    /* a uint8 dump cannot hold a normalised input: read as the data before the normalisation (a runtime
       that folds mean/std into the first layer dumps it so under the normal API too), with a note */
    o = run(&r, "zc-bytes-read-as-normal", "zero-copy", NULL, "normal", false);
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NULL(strstr(o.out, "The application's input"));
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "folded mean/std into the first layer"));
    rd_test_cli_free(&o);
    /* usage */
    o = rd_test_cli("accuracy", r.model, "--app-api", "dma", NULL);
    CU_ASSERT_EQUAL(o.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "zero-copy"));
    rd_test_cli_free(&o);
    o = rd_test_cli("accuracy", r.model, "-i", r.image, "--app-api", "normal", NULL);
    CU_ASSERT_EQUAL(o.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "--runtime-dumps"));
    rd_test_cli_free(&o);
    rig_fini(&r);
}
#endif

RD_TEST_REGISTER(register_input_rule)
{
#ifdef RD_CLI_BINARY
    RD_SUITE("input_rule", {"correct normal and zero-copy applications", test_correct_applications},
             {"each mistake named under both rules", test_mistakes_named_under_both_rules},
             {"the other API's dumps name the rule to use", test_wrong_rule_says_which});
#endif
}

/* test_eval_segment.c: `eval --task segment` on a model of our own writer with a known class map: mIoU and
   pixel accuracy computed by hand, two shards merged to the same report, and a mask with a class the
   model does not have. */
#include "cli_capture.h"
#include "det_model.h"
#include "rd_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The model's 4x4 class map (each cell covers 4x4 pixels of the 16x16 input). */
static int pred_class(int cx, int cy)
{
    if (cx == 0 && cy == 0)
        return 0;
    return cx < 2 ? 1 : 2;
}

static void test_segment(void)
{
    char *dir = rd_test_tmpdir("eval_segment");
    char model[4200], ds[4200], masks[4200], out[4200], list[256] = "";
    snprintf(model, sizeof model, "%s/seg.onnx", dir);
    snprintf(ds, sizeof ds, "%s/dataset.txt", dir);
    snprintf(masks, sizeof masks, "%s/masks", dir);
    float logits[3 * 16];
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++)
                logits[(c * 4 + y) * 4 + x] = pred_class(x, y) == c ? 5.0f : 0.0f;
    det_out o = {"logits", 4, {1, 3, 4, 4}, logits, 0};
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(det_model_write(model, 16, 16, &o, 1, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_dir_make(masks, 0, &err), RD_OK);
    for (int i = 0; i < 2; i++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/img%d.npy", dir, i);
        rd_tensor t;
        rd_tensor_alloc(&t, RD_DT_F32, 4, (const int64_t[]){1, 16, 16, 3}, &err);
        for (int64_t k = 0; k < rd_tensor_numel(&t); k++)
            ((float *)t.data)[k] = (float)(k % 7);
        rd_npy_save(path, &t, &err);
        rd_tensor_fini(&t);
        snprintf(list + strlen(list), sizeof list - strlen(list), "img%d.npy\n", i);
        uint8_t px[256];
        for (int y = 0; y < 16; y++)
            for (int x = 0; x < 16; x++)
                px[y * 16 + x] = (uint8_t)(i == 1 && x < 4 && y < 4 ? 1 : pred_class(x / 4, y / 4));
        snprintf(path, sizeof path, "%s/img%d.png", masks, i);
        write_grey_png(path, px, 16, 16);
    }
    rd_test_write_text(ds, list);
    snprintf(out, sizeof out, "%s/one", dir);
    rd_cli_result r =
        rd_test_cli("eval", model, "--task", "segment", "--masks", masks, "--dataset", ds, "-o", out, "--json", NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    /* class 0: 16 / 32; class 1: 224 / 240; class 2: 256 / 256; pixel accuracy 496 / 512 */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"pixels\":\t512"));
    char want[128];
    snprintf(want, sizeof want, "\"miou\":\t%.17g", (0.5 + 224.0 / 240.0 + 1.0) / 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, want));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"pixel_accuracy\":\t0.96875"));
    char *one = strdup(r.out);
    rd_test_cli_free(&r);
    /* two shards merged: the same report */
    for (int k = 0; k < 2; k++) {
        char spec[8], sd[4300];
        snprintf(spec, sizeof spec, "%d/2", k);
        snprintf(sd, sizeof sd, "%s/s%d", dir, k);
        r = rd_test_cli("eval", model, "--task", "segment", "--masks", masks, "--dataset", ds, "--shard", spec, "-o",
                        sd, NULL);
        CU_ASSERT_EQUAL(r.code, 0);
        rd_test_cli_free(&r);
    }
    char s0[4300], s1[4300];
    snprintf(s0, sizeof s0, "%s/s0", dir);
    snprintf(s1, sizeof s1, "%s/s1", dir);
    r = rd_test_cli("merge", s1, s0, "--json", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_STRING_EQUAL(r.out, one);
    rd_test_cli_free(&r);
    free(one);
    /* a class the model does not have */
    uint8_t bad[256];
    memset(bad, 7, sizeof bad);
    char path[4300];
    snprintf(path, sizeof path, "%s/img0.png", masks);
    write_grey_png(path, bad, 16, 16);
    rd_test_cli_says(3, "img0.png: pixel (0, 0) is class 7 but output 0 has 3 classes", "eval", model, "--task",
                     "segment", "--masks", masks, "--dataset", ds, NULL);
    /* a missing mask, found before anything runs */
    snprintf(path, sizeof path, "%s/missing", dir);
    rd_test_cli_says(3, "its mask", "eval", model, "--task", "segment", "--masks", path, "--dataset", ds, NULL);
    free(dir);
}

RD_TEST_REGISTER(reg_eval_segment)
{
    RD_SUITE("eval_segment", {"mIoU, pixel accuracy, shards, bad masks", test_segment});
}

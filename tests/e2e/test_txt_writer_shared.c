/*
 * test_txt_writer_shared.c: the accuracy analysis of ultraface_rfb320 (int8, calibrated on its astronaut
 * input) writes the same snapshot, text files included, with the text written on the analysis thread and
 * on the writer thread, where the writer lags behind a real model's 180 tensors.
 */
#include "accuracy.h"
#include "rd_test.h"
#include "snapshot_compare.h"

#include <stdio.h>
#include <stdlib.h>

static rd_status one_sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    (void)k;
    return rd_tensor_clone(&inputs[0], user, err);
}

static void analyse(const char *dir, const char *name, bool inline_txt, rd_sim *s, const rd_tensor *input)
{
    char snap[4400];
    snprintf(snap, sizeof snap, "%s/%s", dir, name);
    an_accuracy_opts o = {
        .output_dir = snap, .warn_cos = 0.99, .error_cos = 0.98, .worst_layers = 6, .txt_inline = inline_txt};
    rd_result res;
    rd_result_init(&res);
    rd_error err;
    rd_status st = an_accuracy_run(s, input, 1, 1, &o, &res, &err);
    if (st != RD_OK)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL(st, RD_OK);
    rd_result_fini(&res);
}

static void test_ultraface_same_snapshot(void)
{
    const char *shared = rd_test_shared_dir();
    char *dir = rd_test_tmpdir("txtw-ultraface");
    char path[4400];
    rd_error err;
    rd_model *m = NULL;
    rd_tensor input;
    snprintf(path, sizeof path, "%s/models/ultraface_rfb320/model.onnx", shared);
    CU_ASSERT_EQUAL_FATAL(rd_model_load(path, NULL, &m, &err), RD_OK);
    snprintf(path, sizeof path, "%s/models/ultraface_rfb320/inputs/astronaut.npy", shared);
    CU_ASSERT_EQUAL_FATAL(rd_npy_load(path, &input, &err), RD_OK);
    rd_sim *s = NULL;
    rd_sim_options so = {.precision = RD_PREC_INT8, .optimization_level = 3};
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    rd_calib_options co = {.threads = 1};
    CU_ASSERT_EQUAL_FATAL(rd_calibrate(s, one_sample, &input, 1, &co, &err), RD_OK);
    analyse(dir, "inline", true, s, &input);
    analyse(dir, "thread", false, s, &input);
    char a[4400], b[4400];
    snprintf(a, sizeof a, "%s/inline", dir);
    snprintf(b, sizeof b, "%s/thread", dir);
    const char *const subs[] = {"", "golden", "simulator", NULL};
    long n = rd_test_snapshots_compare(a, b, subs);
    fprintf(stderr, "(%ld files identical) ", n);
    CU_ASSERT(n > 300);
    rd_sim_destroy(s);
    rd_model_destroy(m);
    rd_tensor_fini(&input);
    free(dir);
}

RD_TEST_REGISTER(register_txt_writer_shared)
{
    RD_SUITE("txt_writer_shared",
             {"ultraface_rfb320 snapshot with and without the thread", test_ultraface_same_snapshot});
}

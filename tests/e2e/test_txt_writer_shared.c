/*
 * test_txt_writer_shared.c: the accuracy analysis of ultraface_rfb320 (int8, calibrated on its astronaut
 * input) writes the same snapshot, text files included, with the text written on the analysis thread and
 * on the writer thread, where the writer lags behind a real model's 180 tensors.
 */
#include "rd_test.h"
#include "txt_writer_check.h"

#include <stdio.h>
#include <stdlib.h>

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
    long n = rd_test_txt_writer_snapshots(dir, m, &input);
    fprintf(stderr, "(%ld files identical) ", n);
    CU_ASSERT(n > 300);
    rd_model_destroy(m);
    rd_tensor_fini(&input);
    free(dir);
}

RD_TEST_REGISTER(register_txt_writer_shared)
{
    RD_SUITE("txt_writer_shared",
             {"ultraface_rfb320 snapshot with and without the thread", test_ultraface_same_snapshot});
}

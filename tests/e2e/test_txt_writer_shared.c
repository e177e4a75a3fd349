/*
 * test_txt_writer_shared.c: the accuracy analysis of ultraface_rfb320 (int8, calibrated on its astronaut
 * input) writes the same snapshot, text files included, with the text written on the analysis thread and
 * on the writer thread, where the writer lags behind a real model's 180 tensors.
 */
#include "rd_test.h"
#include "paths_in.h"
#include "txt_writer_check.h"

#include <stdio.h>
#include <stdlib.h>

static void test_ultraface_same_snapshot(void)
{
    const char *shared = rd_test_shared_dir();
    char *dir = rd_test_tmpdir("txtw-ultraface");
    char model[4400], input[4400];
    rd_test_paths_in(shared, sizeof model, model, "models/ultraface_rfb320/model.onnx", input,
                     "models/ultraface_rfb320/inputs/astronaut.npy", NULL);
    long n = rd_test_txt_writer_snapshot_files(dir, model, input);
    fprintf(stderr, "(%ld files identical) ", n);
    CU_ASSERT(n > 300);
    free(dir);
}

RD_TEST_REGISTER(register_txt_writer_shared)
{
    RD_SUITE("txt_writer_shared",
             {"ultraface_rfb320 snapshot with and without the thread", test_ultraface_same_snapshot});
}

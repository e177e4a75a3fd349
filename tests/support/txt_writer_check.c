/* txt_writer_check.c: the same snapshot whether the text files are written inline or on the writer thread. */
#include "txt_writer_check.h"

#include "accuracy.h"
#include "calibrated_sim.h"
#include "rd_test.h"
#include "snapshot_compare.h"

#include <stdio.h>

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

long rd_test_txt_writer_snapshots(const char *dir, rd_model *m, const rd_tensor *input)
{
    rd_sim *s = rd_test_int8_sim(m, input);
    analyse(dir, "inline", true, s, input);
    analyse(dir, "thread", false, s, input);
    char a[4400], b[4400];
    snprintf(a, sizeof a, "%s/inline", dir);
    snprintf(b, sizeof b, "%s/thread", dir);
    const char *const subs[] = {"", "golden", "simulator", NULL};
    long n = rd_test_snapshots_compare(a, b, subs);
    rd_sim_destroy(s);
    return n;
}

long rd_test_txt_writer_snapshot_files(const char *dir, const char *model_path, const char *input_path)
{
    rd_error err;
    rd_model *m = NULL;
    rd_tensor input;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(model_path, NULL, &m, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_npy_load(input_path, &input, &err), RD_OK);
    long n = rd_test_txt_writer_snapshots(dir, m, &input);
    rd_model_destroy(m);
    rd_tensor_fini(&input);
    return n;
}

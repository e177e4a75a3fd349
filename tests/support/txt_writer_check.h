/* txt_writer_check.h: the same snapshot whether the text files are written inline or on the writer thread. */
#ifndef RD_TEST_TXT_WRITER_CHECK_H
#define RD_TEST_TXT_WRITER_CHECK_H

#include "rknn_diag/simulator.h"

/**
 * Calibrates an int8 simulation of m on input (one sample), runs the accuracy analysis into dir/inline with the
 * text written on the analysis thread and into dir/thread with it on the writer thread (asserting both succeed),
 * and compares the two snapshots and their golden/ and simulator/ folders: rd_test_snapshots_compare's count of
 * identical files, -1 on a difference.
 */
long rd_test_txt_writer_snapshots(const char *dir, rd_model *m, const rd_tensor *input);

/** The same on the model at model_path and the .npy input at input_path (fatal failures when they cannot be read). */
long rd_test_txt_writer_snapshot_files(const char *dir, const char *model_path, const char *input_path);

#endif

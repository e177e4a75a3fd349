# Helpers shared by the suites (rd_add_test puts this folder on every test's include path): the CUnit runner,
# rd_test.h, models and results made by code (chain_model.c, sample_result.c, random_inits.h), the command line
# driven in-process (cli_capture.c) and checked for its exit code and texts (cli_expect.c, text_check.h), files
# named in a folder (paths_in.h, files_in.h, free_all.h), snapshot folders compared (snapshot_compare.c), the
# accuracy snapshot written with and without the text writer thread (txt_writer_check.c), float tensor measures
# (tensor_check.h), board latency tables, an int8 simulation calibrated on one input (calibrated_sim.h), mnist8
# evaluated (mnist8_eval.h, mnist8_eval_run.h).

# The scorer the hybrid tests give `hybrid search --score-cmd` (test_scorer.c): reads a candidate's folder as a
# user's script would and prints top-1 or the mean output cosine.
add_executable(rd_test_scorer ${CMAKE_CURRENT_LIST_DIR}/test_scorer.c)
target_link_libraries(rd_test_scorer PRIVATE rd::simulator PkgConfig::CJSON)

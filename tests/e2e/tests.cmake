# End-to-end checks: the rknn-diag binary and several modules together, mostly on the real models of
# ../shared (skipped without it, failed under CI). Subfolders: analyzer/ (test_analyzer, the command line),
# browser/ (report.html in Chromium), hostile/ (the hostile-input corpus), faultsim/ (allocation failures).
rd_add_test(test_real_models SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_real_models.c
  LIBS rd::simulator PkgConfig::CJSON LABELS "e2e;needs-shared")
rd_add_test(test_mnist SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_mnist.c LIBS rd::simulator LABELS "e2e;needs-shared")
rd_add_test(test_accuracy_models SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_accuracy_models.c
  LIBS rd::analyzer LABELS "e2e;needs-shared")
# quantize / export-qdq / eval on the shared models (the issue's mnist8 and QDQ checks); ~3 min under ASan
rd_add_test(test_qtools_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_qtools_shared.c
  ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c LIBS rd::analyzer PkgConfig::CJSON LABELS "e2e;needs-shared")
set_tests_properties(test_qtools_shared PROPERTIES TIMEOUT 900)
# hybrid diagnose names configuration mistakes made on purpose on ultraface and mnist8 (~2 min under ASan)
rd_add_test(test_diagnose_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_diagnose_shared.c
  ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c LIBS rd::analyzer LABELS "e2e;needs-shared")
set_tests_properties(test_diagnose_shared PROPERTIES TIMEOUT 900)
# the snapshot's text files on the writer thread and inline are the same files (ultraface_rfb320)
rd_add_test(test_txt_writer_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_txt_writer_shared.c
  ${PROJECT_SOURCE_DIR}/tests/support/snapshot_compare.c ${PROJECT_SOURCE_DIR}/tests/support/txt_writer_check.c LIBS rd::analyzer_internal LABELS "e2e;needs-shared")
# the int16 dtypes on ultraface_rfb320 and mnist8 (~1 min under ASan)
rd_add_test(test_int16_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_int16_shared.c
  ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c LIBS rd::analyzer PkgConfig::CJSON LABELS "e2e;needs-shared")
set_tests_properties(test_int16_shared PROPERTIES TIMEOUT 600)
# hybrid search on the shared models: mnist8 driven by a top-1 scorer (--score-cmd), ultraface_rfb320 and
# mobilenet_v2 at their strict targets (several minutes under ASan)
rd_add_test(test_hybrid_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hybrid_shared.c
  ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c LIBS rd::analyzer LABELS "e2e;needs-shared")
target_compile_definitions(test_hybrid_shared PRIVATE RD_TEST_SCORER="$<TARGET_FILE:rd_test_scorer>")
add_dependencies(test_hybrid_shared rd_test_scorer)
set_tests_properties(test_hybrid_shared PROPERTIES TIMEOUT 1800)
# convert (rknn_convert) end to end on the shared mobilenet_v2 (~2 min under ASan).
rd_add_test(test_convert SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_convert.c ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c
  ${PROJECT_SOURCE_DIR}/tests/support/cli_expect.c
  LIBS rd::analyzer LABELS "e2e;needs-shared")
set_tests_properties(test_convert PROPERTIES TIMEOUT 900)
# Detection on a real model: UltraFace (../shared/models) over the shared photos, against fixtures/shared_photos_faces.json.
rd_add_test(test_eval_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_eval_shared.c ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c
            LIBS rd::analyzer PkgConfig::CJSON LABELS "e2e;needs-shared")
# Prefix reuse (rd_sim_run_prefix) against full runs on ultraface_rfb320 (prefix_check.h is shared with the
# simulator's unit suite).
rd_add_test(test_sim_prefix_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sim_prefix_shared.c
  LIBS rd::simulator LABELS "e2e;needs-shared")
target_include_directories(test_sim_prefix_shared PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit/simulator)
# Bit-identity across thread counts: every tensor of the shared models at 1, 2, 3 and 8 threads, for the
# float32 reference and the float16, int8 and int16 simulators. Under ThreadSanitizer (RD_SANITIZE=thread,
# tools/test.sh) only the small models run: TSan is 5-15x slower.
if(RD_SANITIZE STREQUAL "thread")
  set(threads_shared_args threads_shared_small)
endif()
rd_add_test(test_threads_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_threads_shared.c
  LIBS rd_simulator_internal LABELS "e2e;needs-shared;tsan" ARGS ${threads_shared_args})
# `inspect --json` of ../shared's .rknn files against ../shared/tools/rknn_dump.py (the reference reader).
add_test(NAME rknn_dump_compare
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/run_compare.sh $<TARGET_FILE:rknn-diag> ${PROJECT_SOURCE_DIR}/../shared)
set_tests_properties(rknn_dump_compare PROPERTIES SKIP_RETURN_CODE 77 LABELS "e2e;needs-shared")
# --rknn / --rknn-build-log on multiple_input_demo: what the simulation materialises, the table, the refusals
rd_add_test(test_built_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_built_shared.c
  ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c ${PROJECT_SOURCE_DIR}/tests/support/cli_expect.c
  LIBS rd::analyzer_internal rd::rknn_model
  LABELS "e2e;needs-shared")
# The fake board proven against Debian's real adb client and server.
add_test(NAME e2e_adb_real COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e_real_adb.sh $<TARGET_FILE:rknn-diag>)
set_tests_properties(e2e_adb_real PROPERTIES LABELS e2e SKIP_RETURN_CODE 77 TIMEOUT 900)
# The README demo from clones under /tmp, /srv and a folder with a space (the board's path mapping).
add_test(NAME e2e_demo_paths COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e_demo_paths.sh ${PROJECT_SOURCE_DIR}
         $<TARGET_FILE:rknn-diag>)
set_tests_properties(e2e_demo_paths PROPERTIES LABELS e2e TIMEOUT 900)
# The sharding recipes on real engines: a single-node Slurm (tools/slurm-local.sh) and GNU parallel.
add_test(NAME e2e_shards COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e_shards.sh $<TARGET_FILE:rknn-diag> ${PROJECT_SOURCE_DIR})
set_tests_properties(e2e_shards PROPERTIES LABELS e2e SKIP_RETURN_CODE 77 TIMEOUT 900)
# accuracy --shard and merge on mnist8 equal the one-process snapshot byte for byte (docs/sharding.md)
rd_add_test(test_accuracy_shards_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_accuracy_shards_shared.c
  ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c ${CMAKE_CURRENT_LIST_DIR}/analyzer/shard_check.c
  LIBS rd::analyzer LABELS "e2e;needs-shared")
target_include_directories(test_accuracy_shards_shared PRIVATE ${CMAKE_CURRENT_LIST_DIR}/analyzer)

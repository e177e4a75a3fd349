# The .rknn and build-log readers on ../shared's real files (read in place, never copied): hand-checked
# facts, mutations of the real files in memory, packed weights against the ONNX weights, and the
# comparison with ../shared/tools/rknn_dump.py. Skipped when ../shared is absent, failed under CI.
rd_add_test(test_rknn_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rknn_shared.c ${CMAKE_CURRENT_LIST_DIR}/test_logs_shared.c
  LIBS rd::rknn_model rd::simulator
  LABELS unit needs-shared)
add_test(NAME rknn_dump_compare
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/run_compare.sh $<TARGET_FILE:rknn-diag> ${PROJECT_SOURCE_DIR}/../shared)
set_tests_properties(rknn_dump_compare PROPERTIES SKIP_RETURN_CODE 77 LABELS "e2e;needs-shared")
# --rknn / --rknn-build-log on multiple_input_demo: what the simulation materialises, the table, the refusals
rd_add_test(test_built_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_built_shared.c
  ${CMAKE_CURRENT_LIST_DIR}/../analyzer/cli_capture.c LIBS rd_analyzer_internal rd::rknn_model
  LABELS "e2e;needs-shared")

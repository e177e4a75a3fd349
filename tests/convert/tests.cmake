# convert (rknn_convert) end to end on the shared mobilenet_v2 (~2 min under ASan).
rd_add_test(test_convert SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_convert.c ${PROJECT_SOURCE_DIR}/tests/analyzer/cli_capture.c
  LIBS rd::analyzer LABELS "e2e;needs-shared")
target_include_directories(test_convert PRIVATE ${PROJECT_SOURCE_DIR}/tests/analyzer)
set_tests_properties(test_convert PROPERTIES TIMEOUT 900)

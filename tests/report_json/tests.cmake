# report.json writer and reader (rhtml): round trips of a realistic result and malformed files.
rd_add_test(test_report_json
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_report_json.c ${PROJECT_SOURCE_DIR}/tests/support/sample_result.c
  LIBS rd::reports LABELS unit)

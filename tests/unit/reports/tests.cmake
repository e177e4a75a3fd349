# The reports library: error_analysis.txt writer and parser (with RKNN's own samples), snapshot files,
# result lifecycle. Its own binary: it reads ../shared/rknn through rd_test_shared_dir(). The snapshot
# format tests reach reports/src/snapshot_format.h through rd_reports_internal.
add_library(rd_reports_internal INTERFACE)
target_include_directories(rd_reports_internal INTERFACE ${PROJECT_SOURCE_DIR}/reports/src)
target_link_libraries(rd_reports_internal INTERFACE rd::reports)

file(GLOB UNIT_REPORTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
rd_add_test(test_reports SOURCES ${UNIT_REPORTS} LIBS rd_reports_internal LABELS "unit;needs-shared")

# report.json writer and reader (rhtml): round trips of a realistic result and malformed files.
rd_add_test(test_report_json
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/report_json/test_report_json.c ${PROJECT_SOURCE_DIR}/tests/support/sample_result.c
  LIBS rd::reports LABELS unit)

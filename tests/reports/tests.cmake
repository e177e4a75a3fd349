# The reports library: error_analysis.txt writer and parser (with RKNN's own samples), snapshot files,
# result lifecycle. Its own binary: it reads ../shared/rknn through rd_test_shared_dir().
file(GLOB UNIT_REPORTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
rd_add_test(test_reports SOURCES ${UNIT_REPORTS} LIBS rd::reports LABELS "unit;needs-shared")

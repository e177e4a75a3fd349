# The command line, driven in-process.
file(GLOB UNIT_CLI CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
rd_add_test(test_analyzer SOURCES ${UNIT_CLI} LIBS rd::analyzer LABELS unit)
# test_metrics.c reaches the analyzer's internal metrics.h
target_include_directories(test_analyzer PRIVATE ${PROJECT_SOURCE_DIR}/analyzer/src)

# The command line, driven in-process.
file(GLOB UNIT_CLI CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
rd_add_test(test_analyzer SOURCES ${UNIT_CLI} LIBS rd::analyzer LABELS unit)

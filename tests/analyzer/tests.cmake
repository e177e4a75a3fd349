# The command line, driven in-process.
file(GLOB UNIT_CLI CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
rd_add_test(test_analyzer SOURCES ${UNIT_CLI} LIBS rd::analyzer LABELS unit)
# test_metrics.c reaches the analyzer's internal metrics.h
target_link_libraries(test_analyzer PRIVATE rd::analyzer_internal)

# test_board_run.c runs the built rknn-diag through the fake board's shell (which runs on this host)
target_compile_definitions(test_analyzer PRIVATE RD_CLI_BINARY="$<TARGET_FILE:rknn-diag>")
add_dependencies(test_analyzer rknn-diag)

# The scorer the hybrid tests give `hybrid search --score-cmd` (tests/support/test_scorer.c): reads a candidate's
# folder as a user's script would and prints top-1 or the mean output cosine.
add_executable(rd_test_scorer ${PROJECT_SOURCE_DIR}/tests/support/test_scorer.c)
target_link_libraries(rd_test_scorer PRIVATE rd::simulator PkgConfig::CJSON)
target_compile_definitions(test_analyzer PRIVATE RD_TEST_SCORER="$<TARGET_FILE:rd_test_scorer>")
target_link_libraries(test_analyzer PRIVATE PkgConfig::CJSON)
add_dependencies(test_analyzer rd_test_scorer)

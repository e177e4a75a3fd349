# The command line as users drive it: every command run in-process (rd_cli_run, tests/support/cli_capture.c)
# on models the tests write, and the built rknn-diag itself run through the fake board's shell
# (test_board_run.c). Labelled e2e for what it runs and unit as before (it needs nothing from ../shared);
# test_metrics.c and a few others reach the analyzer's internal headers through rd::analyzer_internal.
file(GLOB E2E_CLI CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
rd_add_test(test_analyzer SOURCES ${E2E_CLI} ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c
            ${PROJECT_SOURCE_DIR}/tests/support/cli_expect.c ${PROJECT_SOURCE_DIR}/tests/support/snapshot_compare.c
            ${PROJECT_SOURCE_DIR}/tests/support/txt_writer_check.c
            LIBS rd::analyzer_internal PkgConfig::CJSON LABELS "unit;e2e")
# test_board_run.c runs the built rknn-diag through the fake board's shell (which runs on this host)
target_compile_definitions(test_analyzer PRIVATE RD_CLI_BINARY="$<TARGET_FILE:rknn-diag>")
add_dependencies(test_analyzer rknn-diag)
# the hybrid tests give `hybrid search --score-cmd` the test scorer (tests/support/tests.cmake)
target_compile_definitions(test_analyzer PRIVATE RD_TEST_SCORER="$<TARGET_FILE:rd_test_scorer>")
add_dependencies(test_analyzer rd_test_scorer)

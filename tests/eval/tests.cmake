# Dataset-scale evaluation (issue 18): COCO metrics, annotation parsers, decoders, scorer commands, shards.
file(GLOB UNIT_EVAL CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
rd_add_test(test_eval SOURCES ${UNIT_EVAL} ${CMAKE_CURRENT_LIST_DIR}/det_model.c ${PROJECT_SOURCE_DIR}/tests/analyzer/cli_capture.c
            LIBS rd_analyzer_internal PkgConfig::CJSON LABELS unit)
target_include_directories(test_eval PRIVATE ${PROJECT_SOURCE_DIR}/tests/analyzer)

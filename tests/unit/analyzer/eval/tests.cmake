# Dataset-scale evaluation (issue 18): COCO metrics, annotation parsers, decoders, scorer commands, shards
# (the sharding recipes on real engines are tests/e2e/e2e_shards.sh).
file(GLOB UNIT_EVAL CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
rd_add_test(test_eval SOURCES ${UNIT_EVAL} ${CMAKE_CURRENT_LIST_DIR}/det_model.c ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c
            LIBS rd::analyzer_internal PkgConfig::CJSON PkgConfig::PNG LABELS unit)

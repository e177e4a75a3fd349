# Dataset-scale evaluation (issue 18): COCO metrics, annotation parsers, decoders, scorer commands, shards.
file(GLOB UNIT_EVAL CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
rd_add_test(test_eval SOURCES ${UNIT_EVAL} ${CMAKE_CURRENT_LIST_DIR}/det_model.c ${PROJECT_SOURCE_DIR}/tests/analyzer/cli_capture.c
            LIBS rd_analyzer_internal PkgConfig::CJSON PkgConfig::PNG LABELS unit)
target_include_directories(test_eval PRIVATE ${PROJECT_SOURCE_DIR}/tests/analyzer)

# The sharding recipes on real engines: a single-node Slurm (tools/slurm-local.sh) and GNU parallel.
add_test(NAME e2e_shards COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e_shards.sh $<TARGET_FILE:rknn-diag> ${PROJECT_SOURCE_DIR})
set_tests_properties(e2e_shards PROPERTIES LABELS e2e SKIP_RETURN_CODE 77 TIMEOUT 900)

# The FlatBuffer reader, the .rknn reader, the build-log reader and `inspect` on them, with files and logs
# made here (rknn_synth.c writes the .rknn files). tests/rknn_shared has the ones that read ../shared.
rd_add_test(test_rknn
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_flatbuf.c ${CMAKE_CURRENT_LIST_DIR}/test_pylit.c
          ${CMAKE_CURRENT_LIST_DIR}/test_rknn_model.c ${CMAKE_CURRENT_LIST_DIR}/test_rknn_bad.c
          ${CMAKE_CURRENT_LIST_DIR}/test_build_log.c ${CMAKE_CURRENT_LIST_DIR}/test_inspect_rknn.c
          ${CMAKE_CURRENT_LIST_DIR}/rknn_synth.c ${PROJECT_SOURCE_DIR}/tests/analyzer/cli_capture.c
  LIBS rd::rknn_model rd::flatbuf rd::analyzer PkgConfig::CJSON
  LABELS unit)
target_include_directories(test_rknn PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${PROJECT_SOURCE_DIR}/tests/analyzer)

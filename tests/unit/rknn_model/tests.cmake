# The FlatBuffer reader, the .rknn reader, the build-log reader and `inspect` on them, with files and logs
# made here (rknn_synth.c writes the .rknn files).
rd_add_test(test_rknn
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_flatbuf.c ${CMAKE_CURRENT_LIST_DIR}/test_pylit.c
          ${CMAKE_CURRENT_LIST_DIR}/test_rknn_model.c ${CMAKE_CURRENT_LIST_DIR}/test_rknn_bad.c
          ${CMAKE_CURRENT_LIST_DIR}/test_build_log.c ${CMAKE_CURRENT_LIST_DIR}/test_inspect_rknn.c
          ${CMAKE_CURRENT_LIST_DIR}/rknn_synth.c ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c
  LIBS rd::rknn_model rd::flatbuf rd::analyzer PkgConfig::CJSON
  LABELS unit)
target_include_directories(test_rknn PRIVATE ${CMAKE_CURRENT_LIST_DIR})

# The .rknn and build-log readers on ../shared's real files (read in place, never copied): hand-checked
# facts, mutations of the real files in memory, packed weights against the ONNX weights. Skipped when
# ../shared is absent, failed under CI. (The comparison with ../shared/tools/rknn_dump.py and `--rknn` on
# the shared models are end-to-end tests: tests/e2e.)
rd_add_test(test_rknn_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rknn_shared.c ${CMAKE_CURRENT_LIST_DIR}/test_logs_shared.c
  LIBS rd::rknn_model rd::simulator
  LABELS unit needs-shared)

# The model frontends (TFLite, ...): unit tests on models the tests write (tflite_synth.c), and the real
# TFLite models of ../shared/tflite read in place (skipped when ../shared is absent, failed under CI).
rd_add_test(test_frontends
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tflite.c ${CMAKE_CURRENT_LIST_DIR}/tflite_synth.c
          ${CMAKE_CURRENT_LIST_DIR}/test_frontends_cli.c ${PROJECT_SOURCE_DIR}/tests/analyzer/cli_capture.c
  LIBS rd::frontends rd::flatbuf rd::analyzer rd::simulator
  LABELS unit)
rd_add_test(test_frontends_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tflite_shared.c
  LIBS rd::frontends rd::simulator
  LABELS unit needs-shared)

# The compiler passes on the real models of ../shared: every optimization level still matches the
# ONNX Runtime golden outputs. Its own binary because it skips as a whole when ../shared is absent.
rd_add_test(test_passes_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_passes_shared.c
  LIBS rd::simulator PkgConfig::CJSON
  LABELS "unit;needs-shared")

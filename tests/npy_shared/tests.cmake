# Every .npy of the shared models (inputs and golden dumps) loads, matches its index.json and is
# rewritten byte for byte. Its own binary because it skips as a whole when ../shared is absent.
rd_add_test(test_npy_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_npy_shared.c
  LIBS rd::simulator PkgConfig::CJSON
  LABELS unit needs-shared)

# A board log mapped onto ../shared's ultraface_rfb320 (unnamed nodes, BatchNormalization folded). Its own
# binary because it skips as a whole when ../shared is absent.
rd_add_test(test_latency_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_latency_shared.c
  LIBS rd_analyzer_internal
  LABELS unit needs-shared)
target_include_directories(test_latency_shared PRIVATE ${PROJECT_SOURCE_DIR}/tests/analyzer)

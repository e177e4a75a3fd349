# Unit tests of the analyzer's folders that are binaries of their own (the command line driven as a whole
# is test_analyzer, tests/e2e/analyzer; the evaluation suite is eval/). They reach the internal headers
# (dumps.h, perf_log.h, ...) through rd::analyzer_internal (analyzer/CMakeLists.txt).

# The real librknnrt dump names of ../shared/rknn/dump_names.txt parse to the right fields. Its own
# binary because it skips as a whole when ../shared is absent.
rd_add_test(test_dumps_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_dumps_shared.c
  LIBS rd::analyzer_internal
  LABELS unit needs-shared)

# A board log mapped onto ../shared's ultraface_rfb320 (unnamed nodes, BatchNormalization folded). Its own
# binary because it skips as a whole when ../shared is absent.
rd_add_test(test_latency_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_latency_shared.c
  LIBS rd::analyzer_internal
  LABELS unit needs-shared)

# Graphs far larger than real models load and run in linear time (issue 16 item 5): a 100k-node chain
# through loading, the float32 run, the float16 simulation and the accuracy analysis, and the limits.
rd_add_test(test_graph_scale
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_graph_scale.c ${PROJECT_SOURCE_DIR}/tests/support/chain_model.c
  LIBS rd::analyzer_internal
  LABELS unit)

# The per-tensor statistics `run` prints (an_tensor_stats_compute): a large tensor summed in spans over the
# pool, the same bits for any thread count.
rd_add_test(test_tensor_stats
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tensor_stats.c
  LIBS rd::analyzer_internal
  LABELS unit)

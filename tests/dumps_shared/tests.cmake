# The real librknnrt dump names of ../shared/rknn/dump_names.txt parse to the right fields. Its own
# binary because it skips as a whole when ../shared is absent.
rd_add_test(test_dumps_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_dumps_shared.c
  LIBS rd_analyzer_internal
  LABELS unit needs-shared)

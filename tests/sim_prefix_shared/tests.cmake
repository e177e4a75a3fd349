# Prefix reuse (rd_sim_run_prefix) against full runs on ultraface_rfb320 (skipped without ../shared).
rd_add_test(test_sim_prefix_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sim_prefix_shared.c
  LIBS rd::simulator LABELS "e2e;needs-shared")
target_include_directories(test_sim_prefix_shared PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../unit/simulator)

# Graphs far larger than real models load and run in linear time (issue 16 item 5): a 100k-node chain
# through loading, the float32 run, the float16 simulation and the accuracy analysis, and the limits.
rd_add_test(test_graph_scale
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_graph_scale.c ${PROJECT_SOURCE_DIR}/tests/support/chain_model.c
  LIBS rd_analyzer_internal
  LABELS unit)

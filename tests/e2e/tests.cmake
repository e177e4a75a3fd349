# End-to-end checks on the real models of ../shared (skipped without it, failed under CI).
rd_add_test(test_real_models SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_real_models.c
  LIBS rd::simulator PkgConfig::CJSON LABELS "e2e;needs-shared")
rd_add_test(test_mnist SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_mnist.c LIBS rd::simulator LABELS "e2e;needs-shared")
rd_add_test(test_accuracy_models SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_accuracy_models.c
  LIBS rd::analyzer LABELS "e2e;needs-shared")
# quantize / export-qdq / eval on the shared models (the issue's mnist8 and QDQ checks); ~3 min under ASan
rd_add_test(test_qtools_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_qtools_shared.c
  LIBS rd::analyzer PkgConfig::CJSON LABELS "e2e;needs-shared")
set_tests_properties(test_qtools_shared PROPERTIES TIMEOUT 900)
# hybrid diagnose names configuration mistakes made on purpose on ultraface and mnist8 (~2 min under ASan)
rd_add_test(test_diagnose_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_diagnose_shared.c
  ${CMAKE_CURRENT_LIST_DIR}/../analyzer/cli_capture.c LIBS rd::analyzer LABELS "e2e;needs-shared")
set_tests_properties(test_diagnose_shared PROPERTIES TIMEOUT 900)
# the snapshot's text files on the writer thread and inline are the same files (ultraface_rfb320)
rd_add_test(test_txt_writer_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_txt_writer_shared.c
  ${CMAKE_CURRENT_LIST_DIR}/../analyzer/snapshot_compare.c LIBS rd_analyzer_internal LABELS "e2e;needs-shared")
target_include_directories(test_txt_writer_shared PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../analyzer)
# the int16 dtypes on ultraface_rfb320 and mnist8 (~1 min under ASan)
rd_add_test(test_int16_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_int16_shared.c
  LIBS rd::analyzer PkgConfig::CJSON LABELS "e2e;needs-shared")
set_tests_properties(test_int16_shared PROPERTIES TIMEOUT 600)
# hybrid search on the shared models: mnist8 driven by a top-1 scorer (--score-cmd), ultraface_rfb320 and
# mobilenet_v2 at their strict targets (several minutes under ASan)
rd_add_test(test_hybrid_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hybrid_shared.c
  ${CMAKE_CURRENT_LIST_DIR}/../analyzer/cli_capture.c LIBS rd::analyzer LABELS "e2e;needs-shared")
target_compile_definitions(test_hybrid_shared PRIVATE RD_TEST_SCORER="$<TARGET_FILE:rd_test_scorer>")
add_dependencies(test_hybrid_shared rd_test_scorer)
set_tests_properties(test_hybrid_shared PROPERTIES TIMEOUT 1800)
# accuracy --shard and merge on mnist8 equal the one-process snapshot byte for byte (docs/sharding.md)
rd_add_test(test_accuracy_shards_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_accuracy_shards_shared.c
  ${CMAKE_CURRENT_LIST_DIR}/../analyzer/cli_capture.c ${CMAKE_CURRENT_LIST_DIR}/../analyzer/shard_check.c
  LIBS rd::analyzer LABELS "e2e;needs-shared")

# End-to-end checks on the real models of ../shared (skipped without it, failed under CI).
rd_add_test(test_real_models SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_real_models.c
  LIBS rd::simulator PkgConfig::CJSON LABELS "e2e;needs-shared")
rd_add_test(test_mnist SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_mnist.c LIBS rd::simulator LABELS "e2e;needs-shared")
rd_add_test(test_accuracy_models SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_accuracy_models.c
  LIBS rd::analyzer LABELS "e2e;needs-shared")

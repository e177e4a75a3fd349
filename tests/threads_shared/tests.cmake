# Bit-identity across thread counts: every tensor of the shared models at 1, 2, 3 and 8 threads, for the
# float32 reference and the float16, int8 and int16 simulators (skipped without ../shared). Under
# ThreadSanitizer (RD_SANITIZE=thread, tools/test.sh) only the small models run: TSan is 5-15x slower.
if(RD_SANITIZE STREQUAL "thread")
  set(threads_shared_args threads_shared_small)
endif()
rd_add_test(test_threads_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_threads_shared.c
  LIBS rd::simulator LABELS "e2e;needs-shared;tsan" ARGS ${threads_shared_args})

# Exhaustive FP16 check: rd_f32_to_f16 against the CPU's F16C conversion on all 2^32 float patterns.
# dtype.c is compiled into the binary at -O2 so that 4.3 billion calls take seconds, not minutes; the
# sanitizers are left out of this one binary for the same reason (the loop touches no memory).
rd_add_test(test_fp16_exhaustive
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_f16c_exhaustive.c ${PROJECT_SOURCE_DIR}/simulator/src/dtype.c
  LABELS unit)
target_include_directories(test_fp16_exhaustive PRIVATE
  ${PROJECT_SOURCE_DIR}/simulator/include ${PROJECT_SOURCE_DIR}/simulator/src)
target_compile_options(test_fp16_exhaustive PRIVATE -O2 -fno-sanitize=all)
target_link_options(test_fp16_exhaustive PRIVATE -fno-sanitize=all)

# The simulator's unit suites: one binary of every test_*.c here; the ones that read ../shared are their own
# binaries (each skips as a whole when ../shared is absent). They reach the library's internals (internal.h,
# quant.h, kernels/, ops/) through rd_simulator_internal.
add_library(rd_simulator_internal INTERFACE)
target_include_directories(rd_simulator_internal INTERFACE ${PROJECT_SOURCE_DIR}/simulator/src)
target_link_libraries(rd_simulator_internal INTERFACE rd::simulator)

file(GLOB UNIT_SIM CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
list(FILTER UNIT_SIM EXCLUDE REGEX "_shared\\.c$")
rd_add_test(test_simulator SOURCES ${UNIT_SIM} LIBS rd_simulator_internal LABELS "unit;tsan")

# Every .npy of the shared models (inputs and golden dumps) loads, matches its index.json and is
# rewritten byte for byte.
rd_add_test(test_npy_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_npy_shared.c
  LIBS rd::simulator PkgConfig::CJSON
  LABELS unit needs-shared)

# The compiler passes on the real models of ../shared: every optimization level still matches the
# ONNX Runtime golden outputs.
rd_add_test(test_passes_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_passes_shared.c
  LIBS rd_simulator_internal PkgConfig::CJSON
  LABELS "unit;needs-shared")

# Exhaustive FP16 check: rd_f32_to_f16 against the CPU's F16C conversion on all 2^32 float patterns.
# dtype.c is compiled into the binary at -O2 so that 4.3 billion calls take seconds, not minutes; the
# sanitizers are left out of this one binary for the same reason (the loop touches no memory).
rd_add_test(test_fp16_exhaustive
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/fp16/test_f16c_exhaustive.c ${PROJECT_SOURCE_DIR}/simulator/src/dtype.c
  LABELS unit)
target_include_directories(test_fp16_exhaustive PRIVATE
  ${PROJECT_SOURCE_DIR}/simulator/include ${PROJECT_SOURCE_DIR}/simulator/src)
target_compile_options(test_fp16_exhaustive PRIVATE -O2 -fno-sanitize=all)
target_link_options(test_fp16_exhaustive PRIVATE -fno-sanitize=all)

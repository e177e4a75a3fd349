#!/usr/bin/env bash
# Builds rknn-diag with AddressSanitizer and UBSan and runs the whole test suite (CUnit under CTest), then
# builds the tests labelled tsan with ThreadSanitizer (RD_SANITIZE=thread) and runs them: the simulator's
# unit tests (kernels on a pool, calibration workers) and the thread-count bit-identity test on the small
# shared models (docs/internals/threads.md). RD_TSAN=0 skips the second configuration. First of all, every C
# file must match .clang-format (tools/check-format.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh --test
bash tools/check-format.sh
build=${RD_TEST_BUILD_DIR:-build-test}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DRD_SANITIZE=ON -DRD_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd "$build" && ctest --output-on-failure -j"$(nproc)" --timeout 1500)
if [ "${RD_TSAN:-1}" != 0 ]; then
    tsan=${RD_TSAN_BUILD_DIR:-build-tsan}
    cmake -S . -B "$tsan" -DCMAKE_BUILD_TYPE=Debug -DRD_SANITIZE=thread -DRD_WERROR=ON >/dev/null
    cmake --build "$tsan" -j"$(nproc)" --target test_simulator test_threads_shared
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
    (cd "$tsan" && ctest --output-on-failure -L tsan --timeout 1500)
fi

#!/usr/bin/env bash
# Builds rknn-diag with AddressSanitizer and UBSan and runs the whole test suite (CUnit under CTest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh --test
build=${RD_TEST_BUILD_DIR:-build-test}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DRD_SANITIZE=ON -DRD_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
ctest --output-on-failure -j"$(nproc)" --timeout 1500

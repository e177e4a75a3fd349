#!/usr/bin/env bash
# Builds rknn-diag (Release) and runs the main job on the built-in demo model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
build=${RD_DEMO_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRD_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target rknn-diag
exec "$build/analyzer/rknn-diag" demo "$@"

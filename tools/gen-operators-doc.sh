#!/usr/bin/env bash
# Regenerates docs/operators.md from the conformance driver (run after adding or fixing an operator).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-test}
cmake --build "$build" --target rd_conformance -j"$(nproc)" >/dev/null
"$build/tests/rd_conformance" -q --markdown docs/operators.md | tail -1

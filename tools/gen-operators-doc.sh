#!/usr/bin/env bash
# Regenerates docs/operators.md from the conformance driver (run after adding or fixing an operator).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-test}
cmake --build "$build" --target rd_conformance -j"$(nproc)" >/dev/null
# the same folders as the CTest conformance_onnx: Debian's three and the project's opset 18-21 fixtures
data=/usr/share/libonnx-testdata/data
"$build/tests/rd_conformance" -q --markdown docs/operators.md \
  --dir "$data/node" --dir "$data/pytorch-converted" --dir "$data/pytorch-operator" --dir fixtures/opset18_21 | tail -1

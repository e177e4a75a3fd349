#!/usr/bin/env bash
# Regenerates fixtures/opset18_21/ (docs/opset18_21.md): builds tests/conformance/gen_opset_fixtures, writes every
# case's model.onnx and inputs, runs ONNX Runtime on each and stores its outputs as the expected
# output_K.pb files.
#
# ONNX Runtime is needed only to regenerate: CI and `ctest` run the committed fixtures with no ORT at all.
# It is ort-golden (ONNX Runtime 1.30 for node, see ../shared/tools/ort); set ORT_GOLDEN to its script if it
# is not at /tmp/ort-golden/ort_golden.js.
#
#   tools/gen-opset-fixtures.sh [BUILD_DIR] [FILTER]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
filter=${2:-}
ort=${ORT_GOLDEN:-/tmp/ort-golden/ort_golden.js}
out=fixtures/opset18_21
scratch="$build/opset18_21-scratch"

[ -f "$ort" ] || { echo "gen-opset-fixtures: $ort not found (set ORT_GOLDEN)" >&2; exit 2; }
cmake --build "$build" --target gen_opset_fixtures >/dev/null
gen="$build/tests/gen_opset_fixtures"

rm -rf "$scratch"
if [ -z "$filter" ]; then rm -rf "$out"; fi
"$gen" "$out" "$scratch" ${filter:+"$filter"}

failed=0
for case_scratch in "$scratch"/*/; do
  name=$(basename "$case_scratch")
  mapfile -t args <"$case_scratch/ort_args.txt"
  if ! node "$ort" "$out/$name/model.onnx" "${args[@]}" --out "$case_scratch/ort" >"$case_scratch/ort.log" 2>&1; then
    echo "ONNX Runtime rejects $name: $(tail -1 "$case_scratch/ort.log")" >&2
    failed=1
    continue
  fi
  "$gen" --convert "$out/$name" "$case_scratch/ort" || failed=1
done
rm -rf "$scratch"
[ "$failed" = 0 ] || { echo "gen-opset-fixtures: some cases failed (see above)" >&2; exit 1; }
echo "gen-opset-fixtures: $(ls "$out" | wc -l) cases in $out"

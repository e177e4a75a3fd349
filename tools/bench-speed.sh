#!/usr/bin/env bash
# Side-by-side timings of docs/benchmarks.md (issue 14), all in one run: per model, the float32 reference and
# the float16 and int8 simulators (`run --bench N`, every layer observed) at 1 and 2 threads, an optional
# "before" binary (a build without --threads: one thread) and ONNX Runtime's optimised (--opt) and
# every-output (--all) runs at one thread. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for this script
# only, so OpenBLAS picks its own kernel (printed by --bench).
#
#   tools/bench-speed.sh NEW_RKNN_DIAG [BEFORE_RKNN_DIAG] [RUNS]
#
# Needs ../shared/models and ONNX Runtime's script (ORT_GOLDEN, default /tmp/ort-golden/ort_golden.js; set it
# up as ../shared/tools/ort/README.md says). Prints one line per measurement: model, what, median ms, GFLOP/s.
set -euo pipefail
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
new=${1:?usage: tools/bench-speed.sh NEW_RKNN_DIAG [BEFORE_RKNN_DIAG] [RUNS]}
old=${2:-}
runs=${3:-20}
shared=${RD_SHARED_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/shared}
ort=${ORT_GOLDEN:-/tmp/ort-golden/ort_golden.js}

# "model input_name input_file" per line
models="ultraface_rfb320 input astronaut.npy
mobilenet_v2 input chelsea.npy
super_resolution input set0.npy"

echo "# $(date -u '+%F %T UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $runs runs each"
bench() { # label binary args...: prints "label: median ms, GFLOP/s, OpenBLAS kernel"
    local label=$1
    shift
    local line
    line=$("$@" --bench "$runs" 2>/dev/null | grep '^median') || { echo "$label: failed"; return; }
    echo "$label: $(echo "$line" | sed -E 's/^median ([0-9.]+) ms.* ([0-9.]+) GFLOP\/s, OpenBLAS kernel ([^,]+).*/\1 ms, \2 GFLOP\/s, OpenBLAS \3/')"
}
while read -r model name file; do
    dir=$shared/models/$model
    in=$dir/inputs/$file
    for prec in fp32 fp16 int8; do
        for t in 1 2; do
            bench "$model $prec threads=$t" "$new" run "$dir/model.onnx" -i "$in" -p "$prec" --threads "$t"
        done
        if [ -n "$old" ]; then
            bench "$model $prec before (one thread)" "$old" run "$dir/model.onnx" -i "$in" -p "$prec"
        fi
    done
    for mode in --opt --all; do
        ms=$(node "$ort" "$dir/model.onnx" --input "$name=$in" --time "$runs" $mode 2>&1 |
            sed -nE 's/^ort_median_ms ([0-9.]+).*/\1 ms/p')
        echo "$model ORT $mode (one thread): ${ms:-failed}"
    done
done <<<"$models"

# wall time and peak RSS (/usr/bin/time) of whole commands: super_resolution's float32 run, and the accuracy
# analysis of ultraface_rfb320 (w8a8 calibrated on the analysed photo itself, no text files)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
timed() { # label command...: prints "label: wall s, peak RSS MB"
    local label=$1
    shift
    if /usr/bin/time -f '%e %M' -o "$out/time" "$@" >/dev/null 2>&1; then
        read -r wall kb <"$out/time"
        echo "$label: $wall s, peak RSS $((kb / 1024)) MB"
    else
        echo "$label: failed"
    fi
}
sr=$shared/models/super_resolution
uf=$shared/models/ultraface_rfb320
for t in 1 2; do
    timed "super_resolution run fp32 threads=$t" "$new" run "$sr/model.onnx" -i "$sr/inputs/set0.npy" -q --threads "$t"
done
[ -z "$old" ] || timed "super_resolution run fp32 before" "$old" run "$sr/model.onnx" -i "$sr/inputs/set0.npy" -q
acc=(accuracy "$uf/model.onnx" --inputs "$shared/images/astronaut.png" --mean 127,127,127 --std 128,128,128 --no-txt -q)
for t in 1 2; do
    timed "ultraface_rfb320 accuracy threads=$t" "$new" "${acc[@]}" -o "$out/acc$t" --threads "$t"
done
[ -z "$old" ] || timed "ultraface_rfb320 accuracy before" "$old" "${acc[@]}" -o "$out/acc0"

#!/usr/bin/env bash
# adb_pull.sh [RKNN_DIAG] [MB]: times pulling MB (default 200) of dump-like files from the fake board over
# loopback: Debian's `adb pull` (through its server) against `rknn-diag pull` (direct TCP and through the
# same adb server), side by side, best of 3 runs each; every pulled tree is checked with cmp.
# Build rknn-diag in Release first (cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release).
set -euo pipefail
BIN=$(readlink -f "${1:-build-rel/analyzer/rknn-diag}")
MB=${2:-200}
RUNS=${RUNS:-3}
command -v adb >/dev/null || { echo "needs Debian's adb (apt-get install adb)"; exit 1; }
work=$(mktemp -d /tmp/rd-bench-adb.XXXXXX)
export HOME=$work/home
mkdir -p "$HOME"
SP=$((20000 + RANDOM % 30000))
export ANDROID_ADB_SERVER_PORT=$SP
board=
cleanup() {
    timeout 10 adb -P "$SP" kill-server >/dev/null 2>&1 || true
    [ -n "$board" ] && kill "$board" 2>/dev/null && wait "$board" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# Dump-like files: per-layer float32 tensors of a ResNet-ish network, sizes from 16 KB to 6.4 MB.
d=$work/root/userdata/dumps
mkdir -p "$d"
total=0
i=0
sizes=(6422528 3211264 1605632 802816 401408 200704 100352 50176 16384)
while [ $total -lt $((MB * 1000000)) ]; do
    s=${sizes[$((i % ${#sizes[@]}))]}
    head -c "$s" /dev/urandom > "$d/$(printf %03d $i)_ConvRelu_layer${i}_shape_1_64_56_56_float.npy"
    total=$((total + s))
    i=$((i + 1))
done
echo "dumps: $i files, $total bytes"

"$BIN" board-emulate --port 0 --root "$work/root" --no-auth --quiet --duration 3600 > "$work/port" &
board=$!
for _ in $(seq 1 100); do grep -q listening "$work/port" 2>/dev/null && break; sleep 0.1; done
P=$(sed -n 's/^listening on 127.0.0.1://p' "$work/port")
S=127.0.0.1:$P
timeout 20 adb -P "$SP" start-server >/dev/null 2>&1
timeout 20 adb -P "$SP" connect "$S" >/dev/null
for _ in $(seq 1 50); do adb -P "$SP" devices | grep -q "^$S[[:space:]]*device" && break; sleep 0.2; done

best() { # label command...: best wall time of RUNS runs, tree checked each time
    local label=$1
    shift
    local bestt=
    for _ in $(seq 1 "$RUNS"); do
        rm -rf "$work/out"
        mkdir -p "$work/out"
        local t0 t1
        t0=$(date +%s.%N)
        "$@" >/dev/null 2>&1
        t1=$(date +%s.%N)
        (cd "$d" && find . -type f ! -exec cmp -s {} "$work/out/dumps"/{} \; -print | grep -q .) && { echo "$label: pulled tree differs"; exit 1; }
        local t
        t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
        if [ -z "$bestt" ] || awk -v a="$t" -v b="$bestt" 'BEGIN { exit !(a < b) }'; then bestt=$t; fi
    done
    printf '| %-44s | %8.2f s | %7.1f MB/s |\n' "$label" "$bestt" "$(awk -v n="$total" -v t="$bestt" 'BEGIN { print n / 1e6 / t }')"
}

echo "| client | best of $RUNS | rate |"
echo "|---|---|---|"
best "adb pull (Debian adb 29, through its server)" timeout 600 adb -P "$SP" -s "$S" pull /userdata/dumps "$work/out"
best "rknn-diag pull --connect (direct TCP)" timeout 600 "$BIN" pull --connect "$S" /userdata/dumps "$work/out"
best "rknn-diag pull --server (same adb server)" timeout 600 "$BIN" pull --server --serial "$S" /userdata/dumps "$work/out"

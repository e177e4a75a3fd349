#!/usr/bin/env bash
# e2e_shards.sh RKNN_DIAG SOURCE_DIR: the recipes of docs/sharding.md on real engines. A one-process
# `eval -o one` is the reference; then
#   1. Slurm: a private single-node cluster (tools/slurm-local.sh: munged, slurmctld, slurmd as root),
#      `sbatch --array=0-3` running `eval --shard $SLURM_ARRAY_TASK_ID/4`, and `merge` as a job depending on
#      the array (afterok); its report.json must equal the one-process report byte for byte;
#   2. GNU parallel: the same four shards with `parallel -j2`, merged, equal again; and four shards of
#      `accuracy --samples 16` merged into a snapshot equal to the one-process snapshot, file for file.
# A part whose engine is not installed or cannot start here skips with the reason (exit 77 when nothing
# ran); with CI set, both must run and pass. Every wait is bounded; the daemons are stopped at exit.
set -u
BIN=$(readlink -f "$1")
SRC=$(readlink -f "$2")
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
work=$(mktemp -d /tmp/rd-e2e-shards.XXXXXX)
failures=0
ran=0
skipped=()
cleanup() {
    bash "$SRC/tools/slurm-local.sh" stop "$work/slurm" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
skip() {
    echo "SKIP: $*"
    skipped+=("$*")
}

# the data: the demo classifier and its 16 samples, a label per sample
"$BIN" demo -q -o "$work/demo" >/dev/null || { echo "FAIL: rknn-diag demo"; exit 1; }
for i in $(seq 0 15); do echo $((i % 10)); done >"$work/demo/labels.txt"
eval_args=(eval "$work/demo/demo.onnx" --dataset "$work/demo/dataset.txt" --labels "$work/demo/labels.txt"
    --input-layout nchw)
"$BIN" "${eval_args[@]}" -o "$work/one" >"$work/one.txt" 2>"$work/one.err" || { cat "$work/one.err"; exit 1; }

compare() { # compare NAME DIR: DIR/report.json against the one-process report
    if cmp -s "$work/one/report.json" "$2/report.json"; then
        echo "ok: $1: the merged report.json equals the one-process report byte for byte"
    else
        fail "$1: merged report differs"
        diff "$work/one/report.json" "$2/report.json" | head -20
    fi
}

# ---- Slurm ----------------------------------------------------------------------------------------
slurm() {
    PATH=$PATH:/usr/sbin:/sbin
    if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
        skip "Slurm: slurm-wlm or munge is not installed (bash tools/setup.sh installs them)"
        return
    fi
    local env
    if ! env=$(bash "$SRC/tools/slurm-local.sh" start "$work/slurm" 2>"$work/slurm-start.err"); then
        cat "$work/slurm-start.err"
        skip "Slurm: the single-node cluster did not start here (see above)"
        return
    fi
    eval "$env"
    ran=$((ran + 1))
    mkdir -p "$work/slurm-out"
    local q=""
    for a in "${eval_args[@]}"; do q+=" $(printf '%q' "$a")"; done
    local array merge
    array=$(cd "$work" && timeout 30 sbatch --parsable --array=0-3 -c 1 --mem=500 -J rd-eval \
        -o "$work/slurm-out/eval-%a.log" \
        --wrap "$(printf '%q' "$BIN")$q --shard \$SLURM_ARRAY_TASK_ID/4 -o $work/slurm-out/shard-\$SLURM_ARRAY_TASK_ID")
    if [ -z "$array" ]; then fail "Slurm: sbatch of the array refused"; return; fi
    merge=$(cd "$work" && timeout 30 sbatch --parsable --dependency=afterok:"$array" -c 1 --mem=500 -J rd-merge \
        -o "$work/slurm-out/merge.log" \
        --wrap "$(printf '%q' "$BIN") merge $work/slurm-out/shard-0 $work/slurm-out/shard-1 $work/slurm-out/shard-2 $work/slurm-out/shard-3 -o $work/slurm-out/merged")
    if [ -z "$merge" ]; then fail "Slurm: sbatch of the merge job refused"; return; fi
    echo "Slurm: array job $array (4 tasks), merge job $merge after it"
    # bounded wait (300 s) for both to leave the queue
    for _ in $(seq 1 600); do
        [ -z "$(timeout 5 squeue -h -j "$array,$merge" 2>/dev/null)" ] && break
        sleep 0.5
    done
    local states
    states=$(timeout 5 scontrol -o show job "$array" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort | uniq -c | tr '\n' ' ')
    echo "Slurm: array tasks: $states; merge: $(timeout 5 scontrol -o show job "$merge" | grep -o 'JobState=[A-Z_]*')"
    if ! timeout 5 scontrol -o show job "$merge" | grep -q 'JobState=COMPLETED'; then
        fail "Slurm: the merge job did not complete"
        tail -n 20 "$work"/slurm-out/*.log 2>/dev/null
        return
    fi
    compare "Slurm" "$work/slurm-out/merged"
}

# ---- GNU parallel ---------------------------------------------------------------------------------
gnu_parallel() {
    if ! command -v parallel >/dev/null; then
        skip "GNU parallel: not installed (apt-get install parallel)"
        return
    fi
    ran=$((ran + 1))
    if ! timeout 300 parallel --will-cite --halt now,fail=1 -j2 "$BIN" "${eval_args[@]}" --shard {}/4 \
        -o "$work/par/shard-{}" ::: 0 1 2 3 >"$work/par.log" 2>&1; then
        fail "GNU parallel: a shard failed"
        tail -n 20 "$work/par.log"
        return
    fi
    "$BIN" merge "$work"/par/shard-* -o "$work/par/merged" >"$work/par-merge.txt" 2>&1 || { fail "GNU parallel: merge"; return; }
    compare "GNU parallel" "$work/par/merged"
    if ! cmp -s "$work/one.txt" "$work/par-merge.txt"; then fail "GNU parallel: merge printed another report"; fi
}

# ---- GNU parallel, accuracy --shard ---------------------------------------------------------------
gnu_parallel_accuracy() {
    command -v parallel >/dev/null || return # reported by gnu_parallel
    local acc_args=(accuracy "$work/demo/demo.onnx" --dataset "$work/demo/dataset.txt" --input-layout nchw
        --samples 16 --dump-sample 5 -q)
    if ! "$BIN" "${acc_args[@]}" -o "$work/acc-one" >"$work/acc-one.txt" 2>"$work/acc-one.err"; then
        fail "accuracy: the one-process run"
        tail -n 20 "$work/acc-one.err"
        return
    fi
    if ! timeout 300 parallel --will-cite --halt now,fail=1 -j2 "$BIN" "${acc_args[@]}" --shard {}/4 \
        -o "$work/acc-par/shard-{}" ::: 0 1 2 3 >"$work/acc-par.log" 2>&1; then
        fail "GNU parallel: an accuracy shard failed"
        tail -n 20 "$work/acc-par.log"
        return
    fi
    if ! "$BIN" merge "$work"/acc-par/shard-* -o "$work/acc-par/merged" >"$work/acc-merge.txt" 2>&1; then
        fail "GNU parallel: accuracy merge"
        tail -n 20 "$work/acc-merge.txt"
        return
    fi
    if diff -r "$work/acc-one" "$work/acc-par/merged" >"$work/acc-diff.txt"; then
        echo "ok: GNU parallel: the merged accuracy snapshot equals the one-process snapshot file for file"
    else
        fail "GNU parallel: the merged accuracy snapshot differs"
        head -n 20 "$work/acc-diff.txt"
    fi
}

slurm
gnu_parallel
gnu_parallel_accuracy
if [ -n "${CI:-}" ] && [ "${#skipped[@]}" -gt 0 ]; then
    echo "FAIL: CI is set, so every engine must run: ${skipped[*]}"
    exit 1
fi
if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
[ "$ran" -eq 0 ] && exit 77
echo "shard recipes: $ran engine(s) ran, all merged reports equal the one-process report"
exit 0

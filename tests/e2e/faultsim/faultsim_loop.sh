#!/usr/bin/env bash
# faultsim_loop.sh: runs one rknn-diag command on the demo model once per allocation it makes, failing
# that allocation (docs/internals/faultsim.md; curl's torture tests, SQLite's faultsim).
#
#   faultsim_loop.sh FAULTSIM_BINARY WORKDIR [--sites] [--stride S] [--only N] -- [PREP ARGS... @THEN@]...
#                    COMMAND ARGS...
#
# In ARGS, @DEMO@ is a folder holding the demo model (demo.onnx), its input (image.npy) and a 2-sample
# calibration list (dataset2.txt), written by `rknn-diag demo -q`, and two class labels for that list
# (labels2.txt, for eval) and an empty folder dumps/ (for a board-run's dumps); @OUT@ is the output folder.
# Each PREP command (the words before an @THEN@) runs once, without failures, after the demo is written:
# it makes what COMMAND reads (say two `run -o @DEMO@/a` folders for `compare`). A PREP's leading NAME=VALUE
# words are its environment (RKNN_LOG_LEVEL=5 board-run ... writes a board's dumps).
# A reference run counts the allocations (RD_FAULTSIM_COUNT) and keeps its outputs. Then, for every
# N chosen, the command runs again with RD_FAULTSIM_FAIL=N. N is every allocation (1, 2, ... total)
# by default; --stride S takes every Sth (S, 2S, ...); --sites adds the first allocation of each
# distinct call site (the three callers above the allocating function, RD_FAULTSIM_TRACE=2), so that
# a stride still fails every allocating line once. Each run must:
#   - exit 3 with an "error:" line that says memory (or resources, for a thread) ran out, or
#     absorb the failure (a documented fallback: a worker thread that cannot start) and exit 0 with
#     stdout, the warning and note lines of stderr and every output file identical to the reference;
#   - print no sanitizer report (a leak, a bad access, undefined behaviour) and not crash or hang;
#   - leave nothing half-written: every file in the output folder is byte-identical to the
#     reference's file of that name (files not written yet may be missing); no temporary file.
# Files and stdout are compared with each run's output folder read as @OUT@ (a report names the cfg written
# beside it); durations on stdout ("0.4 s") are masked.
# --only N runs just that N (with RD_FAULTSIM_TRACE=1: the failed call's stack), to debug one.
# Ends with one line per failing N and a summary; exit 0 when every N passed.
set -uo pipefail

bin=$1 work=$2
shift 2
stride=1 sites=0 only=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
    --stride) stride=$2; shift 2 ;;
    --sites) sites=1; shift ;;
    --only) only=$2; shift 2 ;;
    *) echo "faultsim_loop: unknown option $1" >&2; exit 2 ;;
    esac
done
[ "${1:-}" = -- ] || { echo "usage: faultsim_loop.sh BINARY WORKDIR [--sites] [--stride S] [--only N] -- ARGS..." >&2; exit 2; }
shift
preps=() # the PREP commands, each its words joined by the unit separator (0x1f)
template=()
for a in "$@"; do
    if [ "$a" = @THEN@ ]; then
        preps+=("$(printf '%s\x1f' "${template[@]}")")
        template=()
    else
        template+=("$a")
    fi
done
[ ${#template[@]} -gt 0 ] || { echo "faultsim_loop: no command after the last @THEN@" >&2; exit 2; }

# Sanitizer reports end the run with their own exit codes, and are also recognised by their text.
export ASAN_OPTIONS="detect_leaks=1:exitcode=23:abort_on_error=0:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="exitcode=23:${LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=24:${UBSAN_OPTIONS:-}"
export OPENBLAS_NUM_THREADS=1 NO_COLOR=1
unset RD_FAULTSIM_FAIL RD_FAULTSIM_COUNT RD_FAULTSIM_TRACE
time_bound=${RD_FAULTSIM_TIMEOUT:-120} # seconds one run may take

rm -rf "$work"
mkdir -p "$work"
demo=$work/demo
"$bin" demo -q -o "$demo" >/dev/null || { echo "faultsim_loop: rknn-diag demo -q failed" >&2; exit 1; }
head -n 2 "$demo/dataset.txt" >"$demo/dataset2.txt"
printf '0\n1\n' >"$demo/labels2.txt"
mkdir -p "$demo/dumps"
for p in "${preps[@]}"; do
    IFS=$'\x1f' read -r -a words <<<"${p%$'\x1f'}"
    assigns=()
    while [ ${#words[@]} -gt 0 ] && [[ ${words[0]} =~ ^[A-Z_][A-Z0-9_]*= ]]; do
        assigns+=("${words[0]}")
        words=("${words[@]:1}")
    done
    for i in "${!words[@]}"; do
        words[i]=${words[i]//@DEMO@/$demo}
    done
    env "${assigns[@]}" "$bin" "${words[@]}" >"$work/prep.log" 2>&1 || {
        echo "faultsim_loop: the preparation rknn-diag ${words[*]} failed:" >&2
        tail -n 20 "$work/prep.log" >&2
        exit 1
    }
done

# The command with @DEMO@ and @OUT@ filled in, into the array cmd.
make_cmd() {
    cmd=()
    local a
    for a in "${template[@]}"; do
        a=${a//@DEMO@/$demo}
        cmd+=("${a//@OUT@/$1}")
    done
}

ref=$work/ref
make_cmd "$ref"
RD_FAULTSIM_COUNT=1 RD_FAULTSIM_TRACE=$((sites * 2)) timeout -k 5 "$time_bound" "$bin" "${cmd[@]}" \
    >"$work/ref.stdout" 2>"$work/ref.stderr"
rc=$?
total=$(sed -n 's/^rknn-diag faultsim: \([0-9]*\) allocations$/\1/p' "$work/ref.stderr" | tail -n 1)
if [ $rc -ne 0 ] || [ -z "$total" ]; then
    echo "faultsim_loop: the reference run (no failure) exited $rc:" >&2
    grep -v '^rknn-diag faultsim site ' "$work/ref.stderr" | tail -n 20 >&2
    exit 1
fi
# The N to fail, one a line: every Sth, plus the first of each site.
{
    seq "$stride" "$stride" "$total"
    [ "$sites" = 1 ] && awk '$1 == "rknn-diag" && $3 == "site" && !seen[$5 " " $6 " " $7 " " $8]++ { print $4 }' \
        "$work/ref.stderr"
} | sort -n -u >"$work/plan"
n_sites=$(awk '$1 == "rknn-diag" && $3 == "site" && !seen[$5 " " $6 " " $7 " " $8]++' "$work/ref.stderr" | wc -l)
# stdout names the output folder: compared with @OUT@ in its place; so are the warnings on stderr (a
# warning lost to a failed allocation is a failure swallowed, like a missing line of stdout)
# (and durations, "0.4 s", are masked: the search's timing line varies from run to run)
clean_stdout() { sed -E -e "s|$2|@OUT@|g" -e 's/[0-9]+\.[0-9]+ ?s\b/#.# s/g' "$1"; }
clean_stdout "$work/ref.stdout" "$ref" >"$work/ref.stdout.clean"
warnings() { { grep -E '^(warning|note)' "$1" || true; } | sed "s|$2|@OUT@|g"; } # none is not a failure
warnings "$work/ref.stderr" "$ref" >"$work/ref.warnings"

# A file of the run's output folder $1 is the reference's file of that name (folder $2), each folder's own path
# read as @OUT@ (a report names the cfg written beside it). Prints the files that differ or are extra.
differing_files() {
    local f rel
    (cd "$1" && find . -type f) | while read -r f; do
        rel=${f#./}
        if [ ! -f "$2/$rel" ]; then
            echo "only in the failed run: $rel"
        elif ! cmp -s "$1/$rel" "$2/$rel" &&
            ! cmp -s <(sed "s|$1|@OUT@|g" "$1/$rel") <(sed "s|$2|@OUT@|g" "$2/$rel"); then
            echo "$rel differs"
        fi
    done
}
# The output folders hold the same files (or neither exists: a command that writes none, like --json on stdout).
same_folders() {
    { [ ! -e "$1" ] && [ ! -e "$2" ]; } ||
        { [ -d "$1" ] && [ -d "$2" ] && [ -z "$(differing_files "$1" "$2")" ] && [ -z "$(differing_files "$2" "$1")" ]; }
}

# One failing run; prints why it is wrong, returns 1 then. Sets absorbed=1 for a clean exit 0.
check_one() {
    local n=$1 out=$work/out
    rm -rf "$out"
    make_cmd "$out"
    RD_FAULTSIM_FAIL=$n timeout -k 5 "$time_bound" "$bin" "${cmd[@]}" </dev/null >"$work/stdout" 2>"$work/stderr"
    local rc=$? why=
    absorbed=0
    if grep -qE 'Sanitizer|runtime error:' "$work/stderr"; then
        why="sanitizer report"
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        why="no result within ${time_bound}s"
    elif [ $rc -eq 3 ]; then
        grep -E 'error:' "$work/stderr" | grep -qiE 'memory|allocat|resource' ||
            why="exit 3 without an error saying memory (or a resource) ran out"
    elif [ $rc -eq 0 ]; then
        if ! clean_stdout "$work/stdout" "$out" | cmp -s - "$work/ref.stdout.clean" || ! same_folders "$out" "$ref" ||
            ! warnings "$work/stderr" "$out" | cmp -s - "$work/ref.warnings"; then
            why="exit 0 with output different from the reference run (a failure swallowed)"
        else
            absorbed=1
        fi
    else
        why="exit $rc (expected 3)"
    fi
    if [ -z "$why" ] && [ -e "$out" ]; then
        # Files present must be whole: identical to the reference's; none extra (temporary files).
        local bad
        bad=$(differing_files "$out" "$ref")
        [ -z "$bad" ] || why="half-written output: $(echo "$bad" | head -n 3 | tr '\n' ';')"
    fi
    [ -z "$why" ] && return 0
    echo "FAIL N=$n: $why"
    sed 's/^/    /' "$work/stderr" | grep -v '^    rknn-diag faultsim: ' | tail -n 25
    echo "    again: RD_FAULTSIM_FAIL=$n RD_FAULTSIM_TRACE=1 $bin ${cmd[*]}"
    return 1
}

if [ -n "$only" ]; then
    export RD_FAULTSIM_TRACE=1
    check_one "$only"
    rc=$?
    cat "$work/stderr"
    exit $rc
fi

start=$SECONDS
failed=0 ran=0 absorbed_total=0
while read -r n; do
    ran=$((ran + 1))
    if ! check_one "$n"; then
        failed=$((failed + 1))
        [ $failed -ge 20 ] && { echo "faultsim_loop: stopping after 20 failures"; break; }
    fi
    absorbed_total=$((absorbed_total + absorbed))
done <"$work/plan"
what="every allocation"
[ "$stride" != 1 ] && what="every ${stride}th allocation"
[ "$sites" = 1 ] && what="$what and the first of each of $n_sites call sites"
echo "faultsim_loop: ${template[*]}: $total allocations; failed $what: ran $ran in" \
    "$((SECONDS - start)) s: $((ran - failed - absorbed_total)) exit 3, $absorbed_total absorbed (exit 0," \
    "same output), $failed wrong"
[ $failed -eq 0 ] || exit 1
rm -rf "$work"

#!/usr/bin/env bash
# fuzz-campaign.sh: runs every libFuzzer target of tests/fuzz/ for a set time, one after the other, and
# keeps what it found as seeds (docs/internals/fuzzing.md, "A libFuzzer campaign").
#
#   tools/fuzz-campaign.sh SECONDS_PER_TARGET [--build-dir DIR] [--out DIR] [--only NAME[,NAME...]]
#                          [--no-keep] [--jobs N]
#
# Needs clang (Debian's clang ships libFuzzer). Configures and builds DIR (default build-fuzz) with
# -DRD_FUZZ=ON (ASan + UBSan + coverage), then for each target fuzz_NAME:
#   - runs it for SECONDS_PER_TARGET seconds (nice, one worker unless --jobs), on a working corpus
#     OUT/corpus/NAME seeded from tests/fuzz/corpus/NAME, with tests/fuzz/NAME.dict (or fuzz_NAME.dict)
#     when there is one; crash, leak, timeout and oom inputs go to OUT/artifacts/NAME-*;
#   - records its figures from libFuzzer's last status line: executions, exec/s, coverage (cov: edges),
#     features (ft:), corpus units, and the artifacts written;
#   - unless --no-keep: merges the working corpus into a copy of the committed one (-merge=1, so only
#     inputs that add coverage are kept) and copies those into tests/fuzz/corpus/NAME/ as
#     campaign_<sha1-prefix>, and every artifact as regression_campaign_<kind>_<sha1-prefix>, so that the
#     CTest replays (replay_NAME) run them from then on. Review them (git status) before committing: a
#     crash input stays failing in CI until the parser is fixed.
# Writes OUT/summary.tsv (one line per target) and prints it as the rows of the campaign log table of
# docs/internals/fuzzing.md. Exit 0 when no target produced an artifact, 1 otherwise, 2 on usage.
set -uo pipefail

usage() {
    sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
[ $# -ge 1 ] || usage
case $1 in -h | --help) usage ;; esac
secs=$1
shift
[[ $secs =~ ^[0-9]+$ ]] && [ "$secs" -gt 0 ] || { echo "fuzz-campaign: SECONDS_PER_TARGET must be a positive integer" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build-fuzz out=$src/build-fuzz/campaign only= keep=1 jobs=1
while [ $# -gt 0 ]; do
    case $1 in
    --build-dir) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --only) only=,$2,; shift 2 ;;
    --no-keep) keep=0; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "fuzz-campaign: unknown option $1" >&2; usage ;;
    esac
done
build=$(realpath -m "$build") out=$(realpath -m "$out")
command -v clang >/dev/null || { echo "fuzz-campaign: needs clang (apt-get install clang)" >&2; exit 2; }

targets=()
for f in "$src"/tests/fuzz/fuzz_*.c; do
    name=$(basename "$f" .c)
    name=${name#fuzz_}
    [ -z "$only" ] || [[ $only == *",$name,"* ]] || continue
    targets+=("$name")
done
[ ${#targets[@]} -gt 0 ] || { echo "fuzz-campaign: no target matches --only" >&2; exit 2; }

echo "fuzz-campaign: building ${#targets[@]} targets in $build"
CC=clang cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRD_FUZZ=ON >"$build.configure.log" 2>&1 ||
    { echo "fuzz-campaign: cmake failed, see $build.configure.log" >&2; exit 1; }
nice cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}" >"$build.build.log" 2>&1 ||
    { echo "fuzz-campaign: build failed, see $build.build.log" >&2; exit 1; }

mkdir -p "$out/artifacts"
summary=$out/summary.tsv
printf 'target\tseconds\texecs\texec_per_s\tcov\tft\tcorpus\tartifacts\tnew_seeds\n' >"$summary"
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
any_artifact=0
for name in "${targets[@]}"; do
    bin=$(find "$build" -name "fuzz_$name" -type f -perm -u+x | head -n 1)
    [ -n "$bin" ] || { echo "fuzz-campaign: fuzz_$name was not built" >&2; exit 1; }
    seeds=$src/tests/fuzz/corpus/$name work=$out/corpus/$name log=$out/$name.log
    mkdir -p "$work"
    dict=()
    for d in "$src/tests/fuzz/$name.dict" "$src/tests/fuzz/fuzz_$name.dict"; do
        [ -f "$d" ] && dict=(-dict="$d")
    done
    seed_dirs=()
    [ -d "$seeds" ] && seed_dirs=("$seeds")
    before=$(ls "$out/artifacts" | grep -c "^$name-")
    echo "fuzz-campaign: fuzz_$name for ${secs}s"
    # -max_total_time bounds the campaign; -timeout a single input (a hang is an artifact)
    parallel=() # several workers: libFuzzer's fork mode, whose workers log to fuzz-N.log in the current folder
    [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
    (cd "$out" && nice "$bin" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2560 -print_final_stats=1 \
        "${parallel[@]}" "${dict[@]}" -artifact_prefix="$out/artifacts/$name-" "$work" "${seed_dirs[@]}") \
        >"$log" 2>&1
    # the figures of the last status line ("#N DONE cov: C ft: F corp: U/..." or the last pulse)
    status=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -n 1)
    execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$status")
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$status")
    rate=$(sed -n 's/^stat::average_exec_per_sec:[[:space:]]*\([0-9]*\)/\1/p' "$log" | tail -n 1)
    arts=$(ls "$out/artifacts" | grep -c "^$name-")
    arts=$((arts - before))
    [ $arts -eq 0 ] || any_artifact=1
    new=0
    if [ $keep = 1 ]; then
        base=$out/merge/$name
        rm -rf "$base" && mkdir -p "$base"
        [ -d "$seeds" ] && cp "$seeds"/* "$base"/ 2>/dev/null
        ls "$base" | sort >"$out/merge/$name.before"
        nice "$bin" -merge=1 "${dict[@]}" "$base" "$work" >"$out/$name.merge.log" 2>&1
        mkdir -p "$seeds"
        for f in $(ls "$base" | sort | comm -13 "$out/merge/$name.before" -); do
            cp "$base/$f" "$seeds/campaign_$(sha1sum "$base/$f" | cut -c1-12)"
            new=$((new + 1))
        done
        for f in $(ls "$out/artifacts" | grep "^$name-"); do
            kind=${f#"$name-"}
            kind=${kind%%-*}
            cp "$out/artifacts/$f" "$seeds/regression_campaign_${kind}_$(sha1sum "$out/artifacts/$f" | cut -c1-12)"
        done
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$secs" "${execs:-?}" "${rate:-?}" "${cov:-?}" \
        "${ft:-?}" "${corp:-?}" "$arts" "$new" >>"$summary"
    [ -n "$status" ] || echo "fuzz-campaign: fuzz_$name printed no status line, see $log" >&2
done

echo
echo "fuzz-campaign: $summary (clang $(clang -dumpversion), ASan+UBSan, ${jobs} niced worker(s) per target)"
column -t -s $'\t' "$summary"
[ $any_artifact = 0 ] || { echo "fuzz-campaign: artifacts in $out/artifacts (see each target's log)"; exit 1; }

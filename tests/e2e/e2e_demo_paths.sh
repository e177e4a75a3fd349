#!/usr/bin/env bash
# e2e_demo_paths.sh SOURCE_DIR RKNN_DIAG: the README demo from clones in other places (issue 17):
# under /tmp, under /srv, and in a folder whose name has a space. The emulated board's shell runs
# the clone's own rknn-diag binary by its absolute path, so the board must map only its own paths
# (never /tmp/... or /srv/... of the host, never split a path at a space). Each clone holds the
# project's tracked files and the built binary at build/analyzer/rknn-diag; the demo runs as
# tools/demo.sh runs it (cd into the clone, `build/analyzer/rknn-diag demo`), with a private HOME.
set -u
SRC=$(readlink -f "$1")
BIN=$(readlink -f "$2")
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
work=$(mktemp -d /tmp/rd-e2e-demo.XXXXXX)
export HOME=$work/home
mkdir -p "$HOME"
failures=0
made=("$work")
cleanup() { for d in "${made[@]}"; do rm -rf "$d"; done; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

clone_to() { # dir: the tracked files (or, outside a git checkout, tools/ and README.md) + the binary
    local dst=$1
    mkdir -p "$dst/build/analyzer"
    if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
        (cd "$SRC" && git ls-files -z | xargs -0 cp -P --parents -t "$dst") || return 1
    else
        cp -r "$SRC/tools" "$SRC/README.md" "$dst/" || return 1
    fi
    cp "$BIN" "$dst/build/analyzer/rknn-diag"
}

run_demo() { # label clone
    local label=$1 clone=$2
    if ! clone_to "$clone"; then
        fail "$label: cannot copy the project to $clone"
        return
    fi
    local t0=$SECONDS
    (cd "$clone" && timeout 300 build/analyzer/rknn-diag demo >"$work/out.txt" 2>"$work/err.txt")
    local rc=$?
    if [ "$rc" = 0 ] && grep -q "the board departs from the simulator at 'relu6_out'" "$work/out.txt" &&
        [ -s "$clone/rknn-diag-demo/snapshot_rk3566/report.html" ] &&
        [ -n "$(ls "$clone/rknn-diag-demo/snapshot_rk3566/runtime/board_dumps")" ]; then
        ok "$label: demo from $clone ($((SECONDS - t0)) s)"
    else
        fail "$label: demo from $clone: rc=$rc; $(tail -5 "$work/err.txt")"
    fi
}

run_demo "under /tmp" "$work/clone"
spaced=$(mktemp -d "/tmp/rd e2e demo.XXXXXX")
made+=("$spaced")
run_demo "path with a space" "$spaced/my clone"
if srv=$(mktemp -d /srv/rd-e2e-demo.XXXXXX 2>/dev/null); then
    made+=("$srv")
    run_demo "under /srv" "$srv/clone"
else
    echo "SKIP: cannot create a folder under /srv (not root?)"
    [ -n "${CI:-}" ] && fail "under /srv: cannot create a folder there in CI"
fi
echo "$failures failure(s)"
[ "$failures" = 0 ]

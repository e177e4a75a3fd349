#!/usr/bin/env bash
# e2e_real_adb.sh RKNN_DIAG: the fake board proven against Debian's real adb client and server.
# For auth on/off x protocol 0x01000001/0x01000000 x payload 4 KiB/1 MiB: `adb connect`, `adb pull`,
# `adb shell` (exit status), then our client through that adb server (--server) and over TCP directly
# (--connect); every pulled tree is compared file by file with cmp. Then the faults, through the server
# and directly. A private adb server port and HOME keep the user's server and key untouched; every wait
# is bounded and everything started here is stopped at exit (adb kill-server, board PIDs).
set -u
BIN=$(readlink -f "$1")
if ! command -v adb >/dev/null; then
    echo "SKIP: Debian's adb is not installed (apt-get install adb)"
    [ -n "${CI:-}" ] && exit 1
    exit 77
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
work=$(mktemp -d /tmp/rd-e2e-adb.XXXXXX)
export HOME=$work/home
mkdir -p "$HOME"
unset ANDROID_SERIAL ADB_VENDOR_KEYS
failures=0
board_pids=()
servers=()

free_port() { # a port nobody listens on, away from 5037 and 5555..5585
    local p
    for _ in $(seq 1 50); do
        p=$((20000 + RANDOM % 30000))
        (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }
    done
    echo 29871
}

cleanup() {
    for s in "${servers[@]}"; do timeout 10 adb -P "$s" kill-server >/dev/null 2>&1; done
    for p in "${board_pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${board_pids[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

make_tree() { # root: dump-like files of edge-case sizes
    local d=$1/userdata/dumps
    mkdir -p "$d/sub/deeper"
    local i=0
    for size in 0 1 512 4096 65535 65536 65537 1048579 3211392; do
        head -c $size /dev/urandom > "$d/$(printf %03d $i)_ConvRelu_t${i}_shape_1_${size}_float.npy"
        i=$((i + 1))
    done
    head -c 777 /dev/urandom > "$d/name with spaces.txt"
    head -c 4128 /dev/urandom > "$d/sub/deeper/010_OutputOperator_out_shape_1_1000_float.npy"
    head -c 100 /dev/urandom > "$d/sub/011_x.txt"
}

same_tree() { # src dst: same file list, each file identical (cmp)
    local src=$1 dst=$2
    [ -d "$dst" ] || return 1
    [ "$(cd "$src" && find . | sort)" = "$(cd "$dst" && find . | sort)" ] || return 1
    local bad
    bad=$(cd "$src" && find . -type f ! -exec cmp -s {} "$dst"/{} \; -print)
    [ -z "$bad" ]
}

start_board() { # root args... ; sets BOARD_PORT and BOARD_PID
    local root=$1
    shift
    local log=$work/board.$RANDOM.log
    "$BIN" board-emulate --port 0 --root "$root" --duration 600 "$@" > "$log.port" 2> "$log" &
    BOARD_PID=$!
    board_pids+=("$BOARD_PID")
    BOARD_PORT=
    for _ in $(seq 1 100); do
        BOARD_PORT=$(sed -n 's/^listening on 127.0.0.1://p' "$log.port" 2>/dev/null)
        [ -n "$BOARD_PORT" ] && return 0
        sleep 0.1
    done
    fail "board-emulate $* did not start: $(cat "$log")"
    return 1
}

stop_board() {
    kill "$BOARD_PID" 2>/dev/null
    wait "$BOARD_PID" 2>/dev/null
}

wait_device() { # server serial: until `adb devices` says device (auth needs the "user" to accept)
    local sp=$1 serial=$2
    for _ in $(seq 1 100); do
        timeout 10 adb -P "$sp" devices 2>/dev/null | grep -q "^$serial[[:space:]]*device$" && return 0
        timeout 10 adb -P "$sp" connect "$serial" >/dev/null 2>&1
        sleep 0.2
    done
    return 1
}

ROOT=$work/root
make_tree "$ROOT"
SRC=$ROOT/userdata/dumps
SP=$(free_port)
export ANDROID_ADB_SERVER_PORT=$SP
servers+=("$SP")
timeout 30 adb -P "$SP" start-server >/dev/null 2>&1 || fail "adb -P $SP start-server"

n=0
for auth in "" "--no-auth"; do
    for ver in "" "--v1"; do
        for payload in 4096 1048576; do
            n=$((n + 1))
            name="config $n (auth ${auth:-on}${ver:+, v1}, payload $payload)"
            start_board "$ROOT" $auth $ver --max-payload $payload || continue
            S=127.0.0.1:$BOARD_PORT
            timeout 20 adb -P "$SP" connect "$S" >/dev/null 2>&1
            if ! wait_device "$SP" "$S"; then
                fail "$name: adb never saw $S as a device"
                stop_board
                continue
            fi
            out=$work/out$n
            mkdir -p "$out/adb" "$out/srv" "$out/tcp"
            if timeout 120 adb -P "$SP" -s "$S" pull /userdata/dumps "$out/adb" >/dev/null 2>&1 && same_tree "$SRC" "$out/adb/dumps"; then
                ok "$name: adb pull"
            else
                fail "$name: adb pull"
            fi
            got=$(timeout 30 adb -P "$SP" -s "$S" shell 'echo out; echo err >&2; exit 3' 2>/dev/null)
            rc=$?
            [ "$rc" = 3 ] && [ "$got" = out ] && ok "$name: adb shell exit 3" || fail "$name: adb shell rc=$rc out=$got"
            if timeout 120 "$BIN" pull --server --serial "$S" /userdata/dumps "$out/srv" 2>/dev/null && same_tree "$SRC" "$out/srv/dumps"; then
                ok "$name: rknn-diag pull --server"
            else
                fail "$name: rknn-diag pull --server"
            fi
            timeout 30 "$BIN" shell --server --serial "$S" 'exit 4' 2>/dev/null
            rc=$?
            [ "$rc" = 4 ] && ok "$name: rknn-diag shell --server exit 4" || fail "$name: rknn-diag shell --server rc=$rc"
            if timeout 120 "$BIN" pull --connect "$S" /userdata/dumps "$out/tcp" 2>/dev/null && same_tree "$SRC" "$out/tcp/dumps"; then
                ok "$name: rknn-diag pull --connect (adb's own key)"
            else
                fail "$name: rknn-diag pull --connect"
            fi
            timeout 10 adb -P "$SP" disconnect "$S" >/dev/null 2>&1
            stop_board
        done
    done
done

# An old board: no stat_v2/ls_v2/shell_v2, so adb and we use STAT, LIST and shell: (no exit status).
start_board "$ROOT" --no-auth --v1 --features cmd --max-payload 4096 && {
    S=127.0.0.1:$BOARD_PORT
    timeout 20 adb -P "$SP" connect "$S" >/dev/null 2>&1
    if wait_device "$SP" "$S"; then
        out=$work/old
        mkdir -p "$out/adb" "$out/srv" "$out/tcp"
        timeout 120 adb -P "$SP" -s "$S" pull /userdata/dumps "$out/adb" >/dev/null 2>&1 && same_tree "$SRC" "$out/adb/dumps" && ok "old board: adb pull (LIST v1)" || fail "old board: adb pull"
        timeout 120 "$BIN" pull --server --serial "$S" /userdata/dumps "$out/srv" 2>/dev/null && same_tree "$SRC" "$out/srv/dumps" && ok "old board: rknn-diag pull --server" || fail "old board: rknn-diag pull --server"
        timeout 120 "$BIN" pull --connect "$S" /userdata/dumps "$out/tcp" 2>/dev/null && same_tree "$SRC" "$out/tcp/dumps" && ok "old board: rknn-diag pull --connect" || fail "old board: rknn-diag pull --connect"
        got=$(timeout 30 "$BIN" shell --connect "$S" 'echo hello; exit 3' 2>/dev/null)
        rc=$?
        [ "$got" = hello ] && [ "$rc" = 0 ] && ok "old board: shell: fallback" || fail "old board: shell fallback rc=$rc out=$got"
        timeout 10 adb -P "$SP" disconnect "$S" >/dev/null 2>&1
    else
        fail "old board: adb never saw it"
    fi
    stop_board
}

# The board accepts only the keys it was given (by default this user's adbkey.pub, which the adb
# server above created): a stranger's key is refused, as adbd refuses it with nobody at the board.
HOME2=$work/home2
mkdir -p "$HOME2"
ACCEPTED_KEY=$HOME/.android/adbkey
start_board "$ROOT" && {
    S=127.0.0.1:$BOARD_PORT
    t0=$SECONDS
    HOME=$HOME2 timeout 30 "$BIN" pull --connect "$S" --timeout 2 /userdata/dumps/002_ConvRelu_t2_shape_1_512_float.npy "$work/k.npy" 2>"$work/key.log"
    rc=$?
    [ "$rc" = 3 ] && grep -q "accept it on the board" "$work/key.log" && ok "a stranger's key is refused: rc 3, accept-it message" || fail "stranger key: rc=$rc $(cat "$work/key.log")"
    [ $((SECONDS - t0)) -le 15 ] || fail "stranger key: took $((SECONDS - t0)) s"
    [ ! -e "$work/k.npy" ] || fail "stranger key: a file was pulled"
    mode=$(stat -c %a "$HOME2/.android/adbkey" 2>/dev/null)
    [ "$mode" = 600 ] && ok "adbkey created with mode 600" || fail "adbkey mode '$mode'"
    [ -s "$HOME2/.android/adbkey.pub" ] && ok "adbkey.pub created" || fail "no adbkey.pub"
    grep -q PRIVATE "$work/key.log" && fail "private key material in the log"
    # the real adb with a stranger's key: refused, shown as unauthorized
    SP3=$(free_port)
    servers+=("$SP3")
    HOME=$HOME2 timeout 30 adb -P "$SP3" start-server >/dev/null 2>&1
    HOME=$HOME2 timeout 20 adb -P "$SP3" connect "$S" >/dev/null 2>&1
    sleep 1
    HOME=$HOME2 timeout 10 adb -P "$SP3" devices | grep -q "^$S[[:space:]]*unauthorized" && ok "adb with a stranger's key: unauthorized" || fail "adb stranger: $(HOME=$HOME2 timeout 10 adb -P "$SP3" devices 2>&1)"
    timeout 10 adb -P "$SP3" kill-server >/dev/null 2>&1
    # ... and it falls back to the next key as adb does: ADB_VENDOR_KEYS holding an accepted key gets in
    SP4=$(free_port)
    servers+=("$SP4")
    HOME=$HOME2 ADB_VENDOR_KEYS=$ACCEPTED_KEY timeout 30 adb -P "$SP4" start-server >/dev/null 2>&1
    msg=$(HOME=$HOME2 timeout 20 adb -P "$SP4" connect "$S" 2>&1)
    HOME=$HOME2 wait_device "$SP4" "$S" && ok "adb falls back to a vendor key the board accepts ($msg)" || fail "adb vendor key: $msg"
    timeout 10 adb -P "$SP4" kill-server >/dev/null 2>&1
    HOME=$HOME2 ADB_VENDOR_KEYS=$ACCEPTED_KEY timeout 30 "$BIN" pull --connect "$S" --timeout 5 /userdata/dumps/002_ConvRelu_t2_shape_1_512_float.npy "$work/k2.npy" 2>"$work/key2.log" && cmp -s "$work/k2.npy" "$SRC/002_ConvRelu_t2_shape_1_512_float.npy" && ok "our client falls back to a vendor key too" || fail "our client with a vendor key: $(cat "$work/key2.log")"
    stop_board
}
# A key we create is accepted by the real adb: a board given it with --adb-keys lets adb in with it.
start_board "$ROOT" --adb-keys "$HOME2/.android/adbkey.pub" && {
    S=127.0.0.1:$BOARD_PORT
    SP2=$(free_port)
    servers+=("$SP2")
    HOME=$HOME2 timeout 30 adb -P "$SP2" start-server >/dev/null 2>&1
    msg=$(HOME=$HOME2 timeout 20 adb -P "$SP2" connect "$S" 2>&1)
    case "$msg" in
        "connected to"*) ok "adb signs with the key rknn-diag generated (board given it with --adb-keys)" ;;
        *) fail "adb with our key: $msg" ;;
    esac
    timeout 10 adb -P "$SP2" kill-server >/dev/null 2>&1
    timeout 30 "$BIN" pull --connect "$S" --timeout 2 /userdata/dumps/002_ConvRelu_t2_shape_1_512_float.npy "$work/k3.npy" 2>/dev/null
    [ $? = 3 ] && ok "--adb-keys replaces the default key" || fail "--adb-keys: this user's key still got in"
    stop_board
}

# Faults, through the real adb server (our client in --server mode) and directly over TCP.
fault_case() { # label want_rc message_part mode fault_args...
    local label=$1 want=$2 part=$3 mode=$4
    shift 4
    start_board "$ROOT" --no-auth "$@" || return
    local S=127.0.0.1:$BOARD_PORT dst=$work/f$RANDOM
    mkdir -p "$dst"
    local sel=(--connect "$S")
    if [ "$mode" = server ]; then
        timeout 20 adb -P "$SP" connect "$S" >/dev/null 2>&1
        wait_device "$SP" "$S" || fail "$label: adb never saw the board"
        sel=(--server --serial "$S")
    fi
    local t0=$SECONDS
    timeout 60 "$BIN" pull "${sel[@]}" --timeout 3 /userdata/dumps "$dst" 2>"$dst.err"
    local rc=$?
    local msg
    msg=$(tail -1 "$dst.err")
    if [ "$rc" = "$want" ] && grep -q -- "$part" "$dst.err"; then ok "$label ($mode): rc $rc"; else fail "$label ($mode): rc=$rc want $want, '$msg'"; fi
    [ $((SECONDS - t0)) -le 20 ] || fail "$label: took $((SECONDS - t0)) s"
    [ -z "$(find "$dst" -name '*.part' -o -name '.*.tmp')" ] || fail "$label: a temporary file left behind"
    if [ -d "$dst/dumps" ]; then
        bad=$(cd "$dst/dumps" && find . -type f ! -exec cmp -s {} "$SRC"/{} \; -print)
        [ -z "$bad" ] || fail "$label: partial file under its final name: $bad"
    fi
    [ ! -e "$work/x" ] && [ ! -e "$dst/x" ] && [ ! -e "$dst/abs" ] || fail "$label: wrote outside the destination"
    [ "$mode" = server ] && timeout 10 adb -P "$SP" disconnect "$S" >/dev/null 2>&1
    stop_board
}
for mode in server tcp; do
    fault_case "drop after 1.5 MB" 3 "error" $mode --fault drop:1500000
    fault_case "stall at RECV" 3 "error" $mode --fault stall
    fault_case "FAIL on first RECV (retried)" 0 "files pulled" $mode --fault recv-fail:1
    fault_case "FAIL on every RECV" 3 "Permission denied" $mode --fault recv-fail:100
    fault_case "LIST entry ../../x" 3 "outside the destination" $mode --fault evil-name:../../x
    fault_case "LIST entry a/b" 3 "outside the destination" $mode --fault evil-name:a/b
    fault_case "LIST entry /abs" 3 "outside the destination" $mode --fault evil-name:/abs
    fault_case "file larger than announced" 3 "more than the" $mode --fault grow
done
fault_case "corrupt header" 3 "corrupt packet" tcp --fault corrupt:4
fault_case "oversized packet" 3 "oversized packet" tcp --fault oversize:4
fault_case "tiny payload limit" 0 "files pulled" tcp --fault tiny
# unauthorized key: a clear message within the timeout
start_board "$ROOT" --fault unauthorized && {
    t0=$SECONDS
    timeout 60 "$BIN" pull --connect 127.0.0.1:$BOARD_PORT --timeout 2 /userdata/dumps "$work/u" 2>"$work/u.err"
    rc=$?
    [ "$rc" = 3 ] && grep -q "accept it on the board" "$work/u.err" && ok "unauthorized key: rc 3, message" || fail "unauthorized: rc=$rc $(cat "$work/u.err")"
    [ $((SECONDS - t0)) -le 15 ] || fail "unauthorized: took too long"
    # through the adb server: `devices` shows the state, pull says what to do
    S=127.0.0.1:$BOARD_PORT
    timeout 20 adb -P "$SP" connect "$S" >/dev/null 2>&1
    sleep 1
    timeout 30 "$BIN" devices --server | grep -q "^$S  *unauthorized" && ok "devices shows unauthorized" || fail "devices: $(timeout 30 "$BIN" devices --server 2>&1)"
    timeout 30 "$BIN" devices --server --json | grep -q '"state":[[:space:]]*"unauthorized"' && ok "devices --json" || fail "devices --json"
    timeout 60 "$BIN" pull --server --serial "$S" --timeout 2 /userdata/dumps "$work/u2" 2>"$work/u2.err"
    rc=$?
    [ "$rc" = 3 ] && grep -q "unauthorized" "$work/u2.err" && ok "unauthorized via the server: rc 3, message" || fail "unauthorized via server: rc=$rc $(cat "$work/u2.err")"
    timeout 10 adb -P "$SP" disconnect "$S" >/dev/null 2>&1
    stop_board
}
# missing dump folder: the usual fix in the message
EMPTY=$work/emptyroot
mkdir -p "$EMPTY"
start_board "$EMPTY" --no-auth && {
    (cd "$work" && timeout 30 "$BIN" pull --connect 127.0.0.1:$BOARD_PORT 2>"$work/m.err")
    rc=$?
    [ "$rc" = 3 ] && grep -q "mkdir -p /userdata/dumps && chmod 777 /userdata/dumps" "$work/m.err" && ok "missing /userdata/dumps: the fix is in the message" || fail "missing dumps: rc=$rc $(cat "$work/m.err")"
    stop_board
}

echo "$failures failure(s)"
[ "$failures" = 0 ]

#!/usr/bin/env bash
# hostile.sh: the hostile-input corpus (docs/security.md, "How the guarantees are tested").
#
#   hostile.sh RKNN_DIAG SOURCE_DIR [--print]
#
# For every kind of input rknn-diag reads, a valid seed (tests/e2e/hostile/seeds/, the fuzz corpora, or a
# file the binary writes itself: the demo model, its input, a calibration list, a .quantization.cfg, a
# snapshot, a dump folder) is turned at test time, in a new temporary folder, into variants:
#   intact      the seed itself (the command must succeed: the variants below are refused for what
#               they are, not because the command line is wrong)
#   link        a symbolic link to the seed
#   fifo        a named pipe with no writer (must be refused at once, not waited on)
#   unreadable  mode 000 (run as nobody through setpriv when the test runs as root, who reads anything)
#   huge        a sparse file one byte over the cap of that kind of input (nothing is read), or a small
#               file whose header claims a huge size
#   truncated   the seed's first half and one byte
#   empty       zero bytes
#   folder      a folder where the file should be
# Each (kind, variant) has its expected exit code and a fragment of the expected message (in stderr,
# stdout or a file the command wrote: a board dump refused is named in runtime/mapping.txt) in
# tests/e2e/hostile/expected.tsv; every run must also finish within 30 s and print no sanitizer report.
# A (kind, variant) missing from the table fails the test: a new kind of input needs its expectations.
# --print shows what each case gives (exit code and last stderr line) instead of checking, to write
# the table.
set -uo pipefail

bin=$1 src=$2 mode=${3:-check}
table=$src/tests/e2e/hostile/expected.tsv
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=23:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=24:${UBSAN_OPTIONS:-}"
export NO_COLOR=1 OPENBLAS_NUM_THREADS=1

work=$(mktemp -d "${TMPDIR:-/tmp}/rd-hostile.XXXXXX") || exit 1
chmod 755 "$work"
demo=$work/demo
"$bin" demo -q -o "$demo" >/dev/null 2>&1 || { echo "hostile: rknn-diag demo -q failed" >&2; exit 1; }
# Calibration list with absolute paths, so that it can be read from any folder.
head -n 2 "$demo/dataset.txt" | sed "s|^|$demo/|" >"$demo/dataset2.txt"
"$bin" quantize "$demo/demo.onnx" --dataset "$demo/dataset2.txt" --input-layout nchw -o "$demo/demo.cfg" \
    >/dev/null 2>&1 || { echo "hostile: rknn-diag quantize failed" >&2; exit 1; }
"$bin" accuracy "$demo/demo.onnx" --inputs "$demo/image.npy" --input-layout nchw --dtype float16 \
    -o "$demo/snapshot" -q >/dev/null 2>&1 || { echo "hostile: rknn-diag accuracy failed" >&2; exit 1; }
"$bin" run "$demo/demo.onnx" --input "$demo/image.npy" -o "$demo/dump" -q >/dev/null 2>&1 ||
    { echo "hostile: rknn-diag run failed" >&2; exit 1; }
# A board's dump folder, as the emulated board's application writes it (docs/board.md).
mkdir "$demo/board_dumps"
RKNN_LOG_LEVEL=6 "$bin" board-run "$demo/demo.onnx" --input "$demo/image.npy" --input-layout nchw --cfg "$demo/demo.cfg" \
    --target rk3566 --dump-dir "$demo/board_dumps" >/dev/null 2>&1 || { echo "hostile: rknn-diag board-run failed" >&2; exit 1; }

# Runs as nobody only what needs it; everything else as the caller.
as_nobody=()
if [ "$(id -u)" = 0 ]; then
    command -v setpriv >/dev/null || { echo "hostile: running as root needs setpriv (util-linux)" >&2; exit 1; }
    as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
    # nobody must reach the binary: a build tree under /root is closed to it, so use a copy then
    if ! "${as_nobody[@]}" "$bin" --help >/dev/null 2>&1; then
        cp "$bin" "$work/rknn-diag" && chmod 755 "$work/rknn-diag" && bin=$work/rknn-diag
    fi
fi

# make_variants KIND SEED CAP_BYTES [CLAIM_FILE] [COMPANION]: writes $work/KIND/<variant>/NAME (NAME = the
# seed's file name, so that inputs found by name inside a folder keep it) for every variant, with an intact
# copy of COMPANION beside it (a Darknet .cfg's .weights).
make_variants() {
    local kind=$1 seed=$2 cap=$3 claim=${4:-} companion=${5:-} name v
    name=$(basename "$seed")
    for v in intact link fifo unreadable huge truncated empty folder; do
        mkdir -p "$work/$kind/$v"
        chmod 777 "$work/$kind/$v"
        [ -z "$companion" ] || cp "$companion" "$work/$kind/$v/"
    done
    cp "$seed" "$work/$kind/intact/$name"
    ln -s "$seed" "$work/$kind/link/$name"
    mkfifo "$work/$kind/fifo/$name"
    cp "$seed" "$work/$kind/unreadable/$name"
    chmod 000 "$work/$kind/unreadable/$name"
    if [ -n "$claim" ]; then
        cp "$claim" "$work/$kind/huge/$name"
    else
        truncate -s $((cap + 1)) "$work/$kind/huge/$name"
    fi
    head -c $(($(stat -c %s "$seed") / 2 + 1)) "$seed" >"$work/$kind/truncated/$name"
    : >"$work/$kind/empty/$name"
    mkdir "$work/$kind/folder/$name"
}

# Folder inputs (a snapshot, a dump folder): the variant is the folder with one file inside replaced.
# make_folder_variants KIND FOLDER FILE CAP_BYTES
make_folder_variants() {
    local kind=$1 folder=$2 file=$3 cap=$4 v
    mkdir -p "$work/$kind"
    for v in intact link fifo unreadable huge truncated empty folder; do
        cp -r "$folder" "$work/$kind/$v"
        chmod -R a+rwX "$work/$kind/$v"
    done
    local seed=$folder/$file
    rm "$work/$kind/link/$file" && ln -s "$seed" "$work/$kind/link/$file"
    rm "$work/$kind/fifo/$file" && mkfifo "$work/$kind/fifo/$file"
    chmod 000 "$work/$kind/unreadable/$file"
    truncate -s $((cap + 1)) "$work/$kind/huge/$file"
    head -c $(($(stat -c %s "$seed") / 2 + 1)) "$seed" >"$work/$kind/truncated/$file"
    : >"$work/$kind/empty/$file"
    rm "$work/$kind/folder/$file" && mkdir "$work/$kind/folder/$file"
}

GiB=$((1 << 30)) MiB=$((1 << 20))
corpus=$src/tests/fuzz/corpus seeds=$src/tests/e2e/hostile/seeds
make_variants onnx "$demo/demo.onnx" $((4 * GiB))
make_variants rknn "$corpus/rknn/demo_v6.rknn" $((4 * GiB))
make_variants tflite "$corpus/tflite/zoo_float.tflite" $((4 * GiB))
make_variants darknet "$seeds/tiny.cfg" $((4 * GiB)) "" "$seeds/tiny.weights"
make_variants build_log "$corpus/rknn_build_log/build_log.log" $((256 * MiB))
make_variants npy "$demo/image.npy" $((4 * GiB)) "$corpus/npy/regression_16_long_header_claim.npy"
make_variants yaml "$seeds/model_config.yml" $MiB
make_variants image "$seeds/image_32x32.png" $GiB "$seeds/image_claims_16000x16000.png"
make_variants dataset "$demo/dataset2.txt" $((64 * MiB))
make_variants qcfg "$demo/demo.cfg" $((256 * MiB))
make_variants report_json "$demo/snapshot/report.json" $((256 * MiB))
make_variants coco_json "$seeds/coco_32x32.json" $GiB
printf '%s\n' "$seeds/image_32x32.png" >"$demo/images.txt"
make_folder_variants snapshot "$demo/snapshot" error_analysis.txt $((64 * MiB))
make_folder_variants dump_index "$demo/dump" index.json $((64 * MiB))
make_folder_variants dump_npy "$demo/dump" 0.npy $((4 * GiB))
make_folder_variants board_dump "$demo/board_dumps" 001_ConvRelu_relu1_out_shape_1_8_32_32_float.npy $((4 * GiB))

# The command of a kind, with F the variant (file or folder) and O an output folder.
command_of() {
    local kind=$1 F=$2 O=$3
    case $kind in
    onnx | rknn | tflite | darknet) cmd=(inspect "$F") ;;
    build_log) cmd=(inspect --build-log "$F") ;;
    npy) cmd=(run "$demo/demo.onnx" --input "$F") ;;
    yaml) cmd=(run "$demo/demo.onnx" -c "$F" --input "$demo/image.npy") ;;
    image) cmd=(accuracy "$demo/demo.onnx" --inputs "$F" -o "$O" -q) ;;
    dataset) cmd=(accuracy "$demo/demo.onnx" --dataset "$F" --input-layout nchw -o "$O" -q) ;;
    qcfg) cmd=(run "$demo/demo.onnx" --input "$demo/image.npy" --precision int8 --cfg "$F" -q) ;;
    report_json) cmd=(compare "$demo/snapshot/report.json" "$F") ;;
    coco_json) cmd=(eval "$demo/demo.onnx" --task detect --decoder yolov5 --annotations "$F" --dataset "$demo/images.txt") ;;
    snapshot) cmd=(report --from-rknn "$F" -o "$O") ;;
    dump_index | dump_npy) cmd=(compare "$demo/dump" "$F") ;;
    board_dump) cmd=(accuracy "$demo/demo.onnx" --inputs "$demo/image.npy" --input-layout nchw --cfg "$demo/demo.cfg"
                     --target rk3566 --runtime-dumps "$F" -o "$O") ;;
    esac
}

failed=0 ran=0
for kind in onnx rknn tflite darknet build_log npy yaml image dataset qcfg report_json coco_json snapshot dump_index dump_npy \
    board_dump; do
    for v in intact link fifo unreadable huge truncated empty folder; do
        target=$work/$kind/$v
        case $kind in
        snapshot | dump_* | board_dump) ;;
        *) target=$(ls -d "$target"/* | grep -v '\.weights$') ;;
        esac
        out=$work/out-$kind-$v
        mkdir -p "$out" && chmod 777 "$out"
        command_of "$kind" "$target" "$out/o"
        runner=()
        [ "$v" = unreadable ] && runner=("${as_nobody[@]}")
        timeout -k 5 30 "${runner[@]}" "$bin" "${cmd[@]}" </dev/null >"$out.stdout" 2>"$out.stderr"
        rc=$?
        ran=$((ran + 1))
        last=$(grep -v '^\(calibrating\|analysing\|warning\)' "$out.stderr" | tail -n 1)
        if [ "$mode" = --print ]; then
            printf '%s\t%s\t%s\t%s\n' "$kind" "$v" "$rc" "${last//$work/WORK}"
            continue
        fi
        expect=$(awk -F'\t' -v k="$kind" -v v="$v" '$1 == k && $2 == v { print $3 "\t" $4 }' "$table")
        why=
        if [ -z "$expect" ]; then
            why="no expectation in tests/e2e/hostile/expected.tsv"
        elif grep -qE 'Sanitizer|runtime error:' "$out.stderr"; then
            why="sanitizer report"
        elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
            why="no result within 30 s"
        elif [ "$rc" != "${expect%%$'\t'*}" ]; then
            why="exit $rc, expected ${expect%%$'\t'*}"
        elif ! grep -rqF -- "${expect#*$'\t'}" "$out.stderr" "$out.stdout" "$out"; then
            why="the output does not say '${expect#*$'\t'}'"
        fi
        if [ -n "$why" ]; then
            failed=$((failed + 1))
            echo "FAIL $kind/$v: $why"
            echo "    $bin ${cmd[*]}"
            sed 's/^/    /' "$out.stderr" | tail -n 8
        fi
    done
done
[ "$mode" = --print ] && { echo "hostile: the variants and outputs are in $work"; exit 0; }
echo "hostile: $ran cases, $failed failed"
[ $failed -eq 0 ] || { echo "hostile: the variants and outputs are kept in $work"; exit 1; }
chmod -R u+rwX "$work" 2>/dev/null
rm -rf "$work"

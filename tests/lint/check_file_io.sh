#!/usr/bin/env bash
# check_file_io.sh CC SOURCE_DIR: fails when a source of simulator/, reports/, analyzer/, adb_bridge/, rknn_model/
# or flatbuf/ opens, creates, renames or removes a file other than through the helpers of simulator/src/fs_*.c
# (rd_file_open_read, rd_file_open_within, rd_file_read_all, rd_atomic_file, rd_dir_make, rd_dir_remove_tree; docs/security.md).
# Those helpers refuse FIFOs, never follow a planted link, never share a temporary file and never leave a
# partial file under a final name; a direct fopen/open/rename/unlink/mkdir brings those bugs back.
# Comments are stripped first (GCC's preprocessor with -fpreprocessed), so prose may name the calls.
set -euo pipefail
cc=${1:?usage: check_file_io.sh CC SOURCE_DIR}
src=${2:?usage: check_file_io.sh CC SOURCE_DIR}
cd "$src"
# comment stripping needs GCC's -fpreprocessed (clang has none); build-essential always brings gcc
if ! "$cc" -fpreprocessed -E -P -x c /dev/null >/dev/null 2>&1; then
  cc=gcc
fi

# Files allowed to make these calls, each with why. Test code (tests/) is not scanned at all.
allowed=(
  simulator/src/fs_read.c    # the helpers themselves
  simulator/src/fs_write.c
  simulator/src/fs_dir.c
  # the emulated board is a device, not an output folder: its file service resolves paths inside its root
  # with openat2(RESOLVE_IN_ROOT) (links inside it followed, none out; docs/board.md, Security)
  adb_bridge/src/board_fs.c
  # ... and its shell commands are confined by system calls in a forked child, where only system calls may
  # run (the /proc maps of a user namespace, a probe file in the root, /dev/null as stdin)
  adb_bridge/src/board_sandbox.c
  adb_bridge/src/board_shell.c
)

calls='fopen|freopen|open|openat|open64|creat|rename|renameat|renameat2|link|linkat|symlink|symlinkat|unlink|unlinkat'
calls+='|remove|rmdir|mkdir|mkdirat|mkstemp|mkostemp|mkstemps|mkdtemp|tmpfile|tmpnam|tempnam|gzopen|png_init_io'
calls+='|jpeg_stdio_src|jpeg_stdio_dest|truncate'
pattern="(^|[^A-Za-z0-9_>.])($calls)[[:space:]]*\\("

is_allowed() {
  local f
  for f in "${allowed[@]}"; do [ "$f" = "$1" ] && return 0; done
  return 1
}

bad=0
checked=0
while IFS= read -r -d '' file; do
  checked=$((checked + 1))
  is_allowed "$file" && continue
  # -fpreprocessed: comments go, nothing is expanded or included; -P: no line markers
  if ! stripped=$("$cc" -fpreprocessed -dD -E -P -x c "$file" 2>/dev/null); then
    echo "check_file_io: cannot read $file through $cc" >&2
    bad=1
    continue
  fi
  hits=$(printf '%s\n' "$stripped" | grep -nE "$pattern" || true)
  if [ -n "$hits" ]; then
    while IFS= read -r hit; do
      code=${hit#*:}
      code=${code#"${code%%[![:space:]]*}"}
      line=$(grep -nF -- "$code" "$file" | head -1 | cut -d: -f1)
      echo "$file:${line:-?}: $code" >&2
    done <<<"$hits"
    bad=1
  fi
done < <(find simulator reports analyzer adb_bridge rknn_model flatbuf -name '*.c' -print0 | sort -z)

if [ "$checked" -lt 20 ]; then
  echo "check_file_io: only $checked sources found under $src: wrong folder?" >&2
  exit 1
fi
if [ "$bad" -ne 0 ]; then
  cat >&2 <<'MSG'
check_file_io: the calls above open, create, rename or remove files directly. Use the helpers of
simulator/include/rknn_diag/simulator.h ("Files"): rd_file_open_read / rd_file_fopen_read / rd_file_read_all
for outside files (FIFOs and devices refused, size capped), rd_file_open_within for paths read from data,
rd_atomic_file / rd_file_write_atomic for every file written, rd_dir_make and rd_dir_remove_tree for folders.
See docs/security.md.
MSG
  exit 1
fi
echo "check_file_io: $checked sources, no direct file calls outside the helpers"

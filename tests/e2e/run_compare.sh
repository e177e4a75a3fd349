#!/bin/sh
# run_compare.sh RKNN_DIAG SHARED_DIR: compare_rknn_dump.py when python3 is there; a skip (77) without it,
# a failure when CI is set (tools/setup.sh installs python3).
shared="${RD_SHARED_DIR:-$2}"
if ! command -v python3 >/dev/null 2>&1; then
  if [ -n "${CI:-}" ]; then
    echo "FAIL: python3 is needed to compare with rknn_dump.py (CI is set, so a skip is a failure)"
    exit 1
  fi
  echo "SKIP: python3 is not installed"
  exit 77
fi
exec python3 "$(dirname "$0")/compare_rknn_dump.py" "$1" "$shared"

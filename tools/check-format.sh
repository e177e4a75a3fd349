#!/usr/bin/env bash
# Fails when a C file of the project differs from what clang-format (Debian bookworm's 14) makes of it
# with .clang-format. Fix with: git ls-files -z '*.c' '*.h' | xargs -0 clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
    echo "check-format: clang-format is not installed (bash tools/setup.sh --test installs it)" >&2
    exit 1
fi
git ls-files -z '*.c' '*.h' | xargs -0 clang-format --dry-run --Werror
echo "check-format: every C file matches .clang-format"

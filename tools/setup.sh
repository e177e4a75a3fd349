#!/usr/bin/env bash
# Installs what rknn-diag needs to build and test on Debian bookworm (idempotent; run as root).
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang libclang-rt-14-dev
      libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata
      libcjson-dev libpng-dev libjpeg62-turbo-dev libyaml-dev libusb-1.0-0-dev libssl-dev
      libopenblas-dev libcunit1-dev zlib1g-dev adb umockdev python3 darknet python3-torch
      slurm-wlm munge parallel)
if [ "${1:-}" = "--test" ]; then
  pkgs+=(chromium clang-format)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

#!/usr/bin/env bash
# Install what Quill needs to build and test on Debian 12, if missing.
# Safe to run repeatedly: it only calls apt-get when a package is absent.
set -euo pipefail
PKGS="cmake ninja-build gcc llvm-19-dev llvm-19-tools clang-19 libclang-rt-19-dev graphviz
      libprotobuf-c-dev protobuf-c-compiler libonnx-dev libjansson-dev
      libonnx-testdata python3-onnx python3-numpy python3-torch python3-torchvision
      python3-sklearn python3-venv python3-flatbuffers python3-pyarmnn
      python3-pil fonts-dejavu-core fonts-liberation2
      python3 pkg-config
      qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "setup: installing$missing"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q $missing
fi

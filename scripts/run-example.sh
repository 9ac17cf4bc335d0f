#!/usr/bin/env bash
# The README's run command: install dependencies, build, then quantize the
# bundled example (examples/digits: a small CNN trained on scikit-learn's
# 8x8 digits, exported from PyTorch) for two backends and print float vs
# int8 accuracy on its 360 test images.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
build="${QUILL_BUILD_DIR:-$root/build}"
ex="$root/examples/digits"
out="$build/example"
mkdir -p "$out"

echo "== quill quantize $ex/model.onnx --backend tflite-int8 --calib $ex/calib -o $out/digits-tflite-int8.qir"
"$build/quill" quantize "$ex/model.onnx" --backend tflite-int8 \
  --calib "$ex/calib" -o "$out/digits-tflite-int8.qir" --time
echo
echo "== float vs int8 accuracy (examples/digits/accuracy.py)"
/usr/bin/python3 "$ex/accuracy.py" "$build/quill" \
  --backends tflite-int8,x86-vnni --out "$out"

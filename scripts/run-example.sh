#!/usr/bin/env bash
# The README's run command: install dependencies, build, then on the bundled
# example (examples/digits: a small CNN trained on scikit-learn's 8x8
# digits, exported from PyTorch): quantize it for two backends and print
# float vs int8 accuracy on its 360 test images; compile it to a native
# int8 object + header, link a C program and run it; compile it to a TFLite
# int8 FlatBuffer and run it in the TFLite interpreter.
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

echo
echo "== quill compile: native int8 object + header (LLVM, host CPU), linked into examples/llvm/main.c"
"$build/quill" compile "$ex/model.onnx" --backend x86-vnni --calib "$ex/calib" \
  -o "$out/digits.o" --name digits
cc -O2 -I"$out" "$root/examples/llvm/main.c" "$out/digits.o" -o "$out/digits_demo" -lm
"$out/digits_demo" "$ex/test_x.npy" "$ex/test_y.npy"

echo
echo "== quill compile: TFLite int8 FlatBuffer, run in the TFLite interpreter"
"$build/quill" compile "$ex/model.onnx" --backend tflite-int8 --calib "$ex/calib" \
  -o "$out/digits.tflite"
PY=$("$root/scripts/pyenv.sh")
"$PY" "$ex/tflite_accuracy.py" "$out/digits.tflite" "$ex/test_x.npy" "$ex/test_y.npy"

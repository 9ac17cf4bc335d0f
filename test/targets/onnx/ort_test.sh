#!/usr/bin/env bash
# ctest `targets.onnx-ort`: run models exported by quill-translate in
# onnxruntime (the venv from scripts/pyenv.sh) and compare their outputs.
#
#   ort_test.sh SOURCE_DIR BUILD_DIR
#
# 1. examples/digits/model.onnx (float): import, export, run both on the
#    360 test images: max |diff| <= 1e-5
# 2. examples/digits/model.ort-qdq.onnx (onnxruntime's QDQ quantization):
#    import, export, run both: outputs bit-equal
# 3. hand-written quantized graphs (Inputs/make_quant_graphs.py: reference
#    QDQ form, qconv2d, qmatmul, fake_quant, requantize, pooling on
#    quantized storage): export, run, equal to the numpy reference outputs
# 4. graphs the reference kernels can run (Inputs/float_ops.qir and the
#    quantized graphs without integer ops or `activation`): onnxruntime's
#    outputs vs Quill's own (onnx-ref-run) on random inputs
# 5. Inputs/quant_ops.qir (every quantization op): loads and runs, the
#    optimized and unoptimized onnxruntime runs agree
# 6. ONNX's node tests that Quill imports: export, run, compare with the
#    test data
# Exits 77 (ctest: skipped) only when the venv cannot be set up because
# PyPI is unreachable; any other setup problem fails the test.
set -uo pipefail
src="$1"
build="$2"
tool="$build/quill-translate"
out="$build/test/targets/onnx/ort"
here="$src/test/targets/onnx"
SYSPY=/usr/bin/python3

if ! PY=$("$src/scripts/pyenv.sh"); then
  if ! "$SYSPY" -c "import urllib.request as u; u.urlopen('https://pypi.org/simple/onnxruntime/', timeout=15)" >/dev/null 2>&1; then
    echo "SKIP: scripts/pyenv.sh failed and pip cannot reach PyPI, so onnxruntime cannot be installed"
    exit 77
  fi
  echo "FAIL: scripts/pyenv.sh failed although PyPI is reachable"
  exit 1
fi
rm -rf "$out"
mkdir -p "$out"
fail=0
step() { echo "== $*"; }
check() { "$@" || fail=1; }

step "digits float model: import -> export -> onnxruntime, vs the original"
check "$tool" --import-onnx "$src/examples/digits/model.onnx" \
  --export-onnx "$out/digits.onnx"
check "$PY" "$here/ort_check.py" compare "$src/examples/digits/model.onnx" \
  "$out/digits.onnx" --input "input=$src/examples/digits/test_x.npy" \
  --atol 1e-5

step "digits QDQ model (onnxruntime-quantized): import -> export -> onnxruntime"
check "$tool" --import-onnx "$src/examples/digits/model.ort-qdq.onnx" \
  --export-onnx "$out/digits-qdq.onnx"
check "$PY" "$here/ort_check.py" compare \
  "$src/examples/digits/model.ort-qdq.onnx" "$out/digits-qdq.onnx" \
  --input "input=$src/examples/digits/test_x.npy" --exact

step "hand-written quantized graphs vs the numpy reference"
check "$PY" "$here/Inputs/make_quant_graphs.py" "$out/quant" >/dev/null
for qir in "$out"/quant/*.qir; do
  base="${qir%.qir}"
  check "$tool" "$qir" --export-onnx "$base.onnx"
  ins=() exps=()
  for f in "$base".in*.npy; do ins+=(--input "$f"); done
  for f in "$base".out*.npy; do exps+=(--expect "$f"); done
  check "$PY" "$here/ort_check.py" expect "$base.onnx" "${ins[@]}" "${exps[@]}"
done

step "onnxruntime vs Quill's reference kernels (onnx-ref-run), random inputs"
refcheck() { # QIR ATOL
  local qir="$1" atol="$2" name
  name="$(basename "${1%.qir}")"
  local dir="$out/ref/$name"
  mkdir -p "$dir/in"
  check "$tool" "$qir" --export-onnx "$dir/$name.onnx" || return
  check "$PY" "$here/ort_check.py" random-inputs "$dir/$name.onnx" "$dir/in"
  local ins=() exps=()
  for f in "$dir"/in/input_*.pb; do ins+=("$f"); done
  check "$build/onnx-ref-run" "$qir" "$dir" "${ins[@]}" || return
  for f in "$dir"/output_*.pb; do exps+=(--expect "$f"); done
  check "$PY" "$here/ort_check.py" expect "$dir/$name.onnx" \
    $(printf -- '--input %s ' "${ins[@]}") "${exps[@]}" --atol "$atol"
}
refcheck "$here/Inputs/float_ops.qir" 1e-5
for n in qdq_add fake_quant; do refcheck "$out/quant/$n.qir" 0; done

step "every quantization op: loads and runs in onnxruntime"
check "$tool" "$here/Inputs/quant_ops.qir" --export-onnx "$out/quant_ops.onnx" \
  2>/dev/null
check "$PY" "$here/ort_check.py" run "$out/quant_ops.onnx"

step "ONNX node tests: import -> export -> onnxruntime vs the test data"
check "$PY" "$here/ort_check.py" nodetests "$tool" \
  /usr/share/libonnx-testdata/data/node "$out/node" >"$out/nodetests.log"
grep -v '^SKIP' "$out/nodetests.log"
echo "(skipped tests are listed in $out/nodetests.log)"

if [ "$fail" = 0 ]; then echo "targets.onnx-ort: all checks passed"; else echo "targets.onnx-ort: FAILED"; fi
exit "$fail"

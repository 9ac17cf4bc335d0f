#!/bin/sh
# ctest examples.digits-compare-ort: Quill's quantized digits models are at
# least as accurate as onnxruntime's quantize_static (QDQ, per-channel,
# MinMax) on the same model and calibration data
# (examples/digits/compare_ort.py --check). The venv with onnxruntime comes
# from scripts/pyenv.sh; if it cannot be made (no PyPI), the test is
# skipped (exit 77), loudly.
#   run_compare_ort.sh QUILL_EXECUTABLE
here="$(cd "$(dirname "$0")" && pwd)"
py="$("$here/../../scripts/pyenv.sh")" || {
  echo "SKIP: onnxruntime unavailable (scripts/pyenv.sh failed)"
  exit 77
}
exec "$py" "$here/../../examples/digits/compare_ort.py" "$1" --check

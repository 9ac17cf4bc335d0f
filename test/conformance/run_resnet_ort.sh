#!/bin/sh
# ctest conformance.resnet-ort: `quill run` vs onnxruntime on a small
# ResNet-style model (test/conformance/resnet_vs_ort.py). The venv with
# onnxruntime comes from scripts/pyenv.sh; if it cannot be made (no PyPI),
# the test is skipped (exit 77), loudly.
#   run_resnet_ort.sh QUILL_EXECUTABLE
here="$(cd "$(dirname "$0")" && pwd)"
py="$("$here/../../scripts/pyenv.sh")" || {
  echo "SKIP: onnxruntime unavailable (scripts/pyenv.sh failed)"
  exit 77
}
exec "$py" "$here/resnet_vs_ort.py" --quill "$1" --model small

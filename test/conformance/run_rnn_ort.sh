#!/bin/sh
# ctest conformance.rnn-ort: PyTorch LSTM and GRU models (exported by Debian's
# python3-torch) through `quill run` vs onnxruntime, `quill compile` and
# `quill quantize` (test/conformance/rnn_vs_ort.py). The venv with
# onnxruntime comes from scripts/pyenv.sh; if it cannot be made (no PyPI) or
# torch is missing, the test is skipped (exit 77), loudly.
#   run_rnn_ort.sh QUILL_EXECUTABLE
here="$(cd "$(dirname "$0")" && pwd)"
py="$("$here/../../scripts/pyenv.sh")" || {
  echo "SKIP: onnxruntime unavailable (scripts/pyenv.sh failed)"
  exit 77
}
exec "$py" "$here/rnn_vs_ort.py" --quill "$1"

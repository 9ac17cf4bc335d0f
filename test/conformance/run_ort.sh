#!/bin/sh
# ctest conformance.*-ort: run a check against onnxruntime
# (test/conformance/SCRIPT) with the venv's Python. The venv comes from
# scripts/pyenv.sh; if it cannot be made (no PyPI), the test is skipped
# (exit 77), loudly.
#   run_ort.sh SCRIPT QUILL_EXECUTABLE [SCRIPT's options]
here="$(cd "$(dirname "$0")" && pwd)"
script="$1"
shift
py="$("$here/../../scripts/pyenv.sh")" || {
  echo "SKIP: onnxruntime unavailable (scripts/pyenv.sh failed)"
  exit 77
}
exec "$py" "$here/$script" --quill "$@"

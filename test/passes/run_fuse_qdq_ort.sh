#!/bin/sh
# ctest passes.fuse-qdq-ort: fuse-qdq on onnxruntime's QDQ digits model,
# compared with onnxruntime (test/passes/fuse_qdq_ort.py). The venv with
# onnxruntime comes from scripts/pyenv.sh; if it cannot be made (no PyPI),
# the test is skipped (exit 77), loudly.
#   run_fuse_qdq_ort.sh QUILL_TRANSLATE QUILL_OPT QUILL
here="$(cd "$(dirname "$0")" && pwd)"
py="$("$here/../../scripts/pyenv.sh")" || {
  echo "SKIP: onnxruntime unavailable (scripts/pyenv.sh failed)"
  exit 77
}
exec "$py" "$here/fuse_qdq_ort.py" --quill-translate "$1" --quill-opt "$2" \
  --quill "$3"

#!/usr/bin/env bash
# Set up (once) and print the Python that the cross-runtime checks use: a
# venv in build/venv (or $QUILL_VENV) that sees Debian's python3-onnx and
# python3-numpy (--system-site-packages) and adds onnxruntime from PyPI.
#
#   py="$(scripts/pyenv.sh)" && "$py" test/conformance/resnet_vs_ort.py
#
# Idempotent: pip runs only when onnxruntime is not importable yet. The
# pinned onnxruntime works with Debian 12's numpy 1.24. Exit status 1 (and
# nothing on stdout) if the venv cannot be made, e.g. without network.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${QUILL_VENV:-$root/build/venv}"
ORT_VERSION=1.19.2
if ! "$venv/bin/python" -c "import onnxruntime, onnx, numpy" >/dev/null 2>&1; then
  {
    [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
    # "numpy<1.25" is met by Debian's numpy 1.24, so pip keeps it (onnx 1.12 needs it)
    "$venv/bin/pip" install -q --disable-pip-version-check \
      "onnxruntime==$ORT_VERSION" "numpy<1.25"
  } >&2 || exit 1
  "$venv/bin/python" -c "import onnxruntime, onnx, numpy" >&2 || exit 1
fi
echo "$venv/bin/python"

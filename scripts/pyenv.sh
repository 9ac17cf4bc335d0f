#!/usr/bin/env bash
# Python environment for the example scripts and tests that need
# onnxruntime (the digits evaluation, the onnxruntime quantizer baseline,
# the ONNX exporter's checks) or the TFLite interpreter (the TFLite
# exporter's checks).
#
# Creates build/venv (or $QUILL_VENV) with --system-site-packages, so that
# Debian's python3-numpy, python3-torch and python3-sklearn stay visible,
# and pip-installs into it, only when missing:
#   - onnxruntime (the runtime and its quantization tools);
#   - onnx >= 1.13 when Debian's onnx (1.12) is too old for
#     onnxruntime.quantization, which imports onnx.reference. The venv's onnx
#     then shadows Debian's inside the venv only; the C build and the tests
#     run with /usr/bin/python3 keep Debian's;
#   - tflite-runtime (the TFLite interpreter) and tflite (readers generated
#     by flatc from TFLite's schema.fbs).
# Idempotent: a second run installs nothing. Everything it prints goes to
# stderr except the last line, the venv's python path, so scripts can write
#
#   PY=$(scripts/pyenv.sh)
#   "$PY" examples/digits/ort_baseline.py
#
# onnxruntime 1.19.2 is the newest release that still supports numpy 1.x
# (Debian 12 has numpy 1.24) on Python 3.11; onnx 1.16.2 is the onnx it was
# released against. tflite-runtime 2.14.0 is the last tflite-runtime wheel
# for Python 3.11 (ai-edge-litert, its successor, needs numpy 2); tflite
# 2.18.0 reads schema version 3 like it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${QUILL_VENV:-$root/build/venv}"
ORT_VERSION="${QUILL_ORT_VERSION:-1.19.2}"
ONNX_VERSION="${QUILL_ONNX_VERSION:-1.16.2}"
TFLITE_RUNTIME_VERSION="${QUILL_TFLITE_RUNTIME_VERSION:-2.14.0}"
TFLITE_VERSION="${QUILL_TFLITE_VERSION:-2.18.0}"
SYSPY=/usr/bin/python3
# Every install is held to numpy 1.x: tflite-runtime 2.14 and Debian's
# torch are built against it, and a dependency that pulls numpy 2 into the
# venv would shadow Debian's numpy there and break them.
export PIP_CONSTRAINT="$venv.constraints.txt"

# Tests that need the venv may start together (ctest -j): one creates and
# fills it while the others wait on this lock.
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if [ ! -x "$venv/bin/python" ]; then
  echo "pyenv: creating $venv" >&2
  mkdir -p "$(dirname "$venv")"
  "$SYSPY" -m venv --system-site-packages "$venv" >&2
fi
py="$venv/bin/python"
echo "numpy<2" > "$PIP_CONSTRAINT"
if ! "$py" -c "import onnxruntime" >/dev/null 2>&1; then
  echo "pyenv: installing onnxruntime==$ORT_VERSION" >&2
  "$py" -m pip install --disable-pip-version-check -q \
    "onnxruntime==$ORT_VERSION" >&2
fi
if ! "$py" -c "import onnx.reference" >/dev/null 2>&1; then
  echo "pyenv: installing onnx==$ONNX_VERSION (onnx.reference is missing)" >&2
  "$py" -m pip install --disable-pip-version-check -q \
    "onnx==$ONNX_VERSION" >&2
fi
if ! "$py" -c "import tflite_runtime.interpreter, tflite" >/dev/null 2>&1; then
  echo "pyenv: installing tflite-runtime==$TFLITE_RUNTIME_VERSION tflite==$TFLITE_VERSION" >&2
  "$py" -m pip install --disable-pip-version-check -q \
    "tflite-runtime==$TFLITE_RUNTIME_VERSION" "tflite==$TFLITE_VERSION" >&2
fi
# Check that the environment works with Debian's numpy.
"$py" -c "import numpy, onnx, onnxruntime, onnxruntime.quantization" >&2
"$py" -c "import tflite_runtime.interpreter, tflite" >&2
echo "$py"

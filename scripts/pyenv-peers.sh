#!/usr/bin/env bash
# Python environment of the peers benchmark (bench/peers.py): the newest
# onnxruntime and OpenVINO + NNCF, which need numpy 2 and so cannot live in
# build/venv (held to Debian's numpy 1.x for tflite-runtime and torch).
#
# Creates build/venv-peers (or $QUILL_PEERS_VENV) from pyenv's python3 (or
# $QUILL_PEERS_PYTHON; Debian's python3 when there is no pyenv), without
# the system site packages, and pip-installs into it, only when missing:
#   - numpy 2 and onnx (the benchmark reads models and counts MACs);
#   - onnxruntime (the runtime and its static quantizer);
#   - openvino and nncf (nncf.quantize on the ONNX model).
# Idempotent, under a lock (two benchmark runs may start together), and,
# like scripts/pyenv.sh, everything it prints goes to stderr except the
# last line, the venv's python path:
#
#   PPY=$(scripts/pyenv-peers.sh)
#   "$PPY" bench/peers.py --quick
#
# The versions are the newest checked to install and run together here
# (2026-11); override them with QUILL_PEERS_ORT, QUILL_PEERS_OPENVINO,
# QUILL_PEERS_NNCF. Never committed: it lives in the build tree.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${QUILL_PEERS_VENV:-$root/build/venv-peers}"
ORT="${QUILL_PEERS_ORT:-1.31.1}"
OPENVINO="${QUILL_PEERS_OPENVINO:-2026.4.1}"
NNCF="${QUILL_PEERS_NNCF:-}"
pick_python() {
  if [ -n "${QUILL_PEERS_PYTHON:-}" ]; then
    echo "$QUILL_PEERS_PYTHON"
  elif command -v pyenv >/dev/null 2>&1 && pyenv which python3 >/dev/null 2>&1; then
    pyenv which python3
  else
    echo /usr/bin/python3
  fi
}

mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if [ ! -x "$venv/bin/python" ]; then
  base="$(pick_python)"
  echo "pyenv-peers: creating $venv from $base" >&2
  "$base" -m venv "$venv" >&2
fi
py="$venv/bin/python"
pipi() {
  "$py" -m pip install --disable-pip-version-check -q "$@" >&2
}
if ! "$py" -c "import numpy, onnx; assert int(numpy.__version__.split('.')[0]) >= 2" >/dev/null 2>&1; then
  echo "pyenv-peers: installing numpy>=2 onnx" >&2
  pipi "numpy>=2" onnx
fi
if ! "$py" -c "import onnxruntime.quantization" >/dev/null 2>&1; then
  echo "pyenv-peers: installing onnxruntime==$ORT" >&2
  pipi "onnxruntime==$ORT"
fi
if ! "$py" -c "import openvino, nncf" >/dev/null 2>&1; then
  echo "pyenv-peers: installing openvino==$OPENVINO nncf${NNCF:+==$NNCF}" >&2
  pipi "openvino==$OPENVINO" "nncf${NNCF:+==$NNCF}"
fi
"$py" -c "import numpy, onnx, onnxruntime.quantization, openvino, nncf" >&2
echo "$py"

#!/bin/sh
# ctest conformance.qat-imports: models from quantization-aware training
# tools (test/conformance/qat_imports.py). Brevitas and what its ONNX
# exporters need are installed with pip into BUILD/qat-pkgs (--no-deps,
# beside Debian's python3-torch and numpy 1); skipped (77) when they cannot
# be installed because PyPI is unreachable or torch is missing.
#   run_qat_imports.sh QUILL_EXECUTABLE BUILD_DIR
here="$(cd "$(dirname "$0")" && pwd)"
quill="$1"
pkgs="$2/qat-pkgs"
py=/usr/bin/python3
if ! "$py" -c "import torch" 2>/dev/null; then
  echo "SKIP: python3-torch is not installed (scripts/setup.sh installs it)"
  exit 77
fi
if ! PYTHONPATH="$pkgs" "$py" -c "import brevitas, onnxoptimizer, onnx" 2>/dev/null; then
  rm -rf "$pkgs"
  # pinned, no dependencies: numpy and torch stay Debian's
  if ! "$py" -m pip install -q --disable-pip-version-check --no-deps \
      --target "$pkgs" brevitas==0.13.4 dependencies==2.0.1 unfoldNd==0.2.3 \
      onnx==1.16.2 onnxoptimizer==0.4.2 protobuf==4.25.5 2>&1 | grep -v "as the 'root' user"; then
    :
  fi
  if ! PYTHONPATH="$pkgs" "$py" -c "import brevitas, onnxoptimizer, onnx" 2>/dev/null; then
    if ! "$py" -c "import urllib.request as u; u.urlopen('https://pypi.org/simple/brevitas/', timeout=15)" >/dev/null 2>&1; then
      echo "SKIP: brevitas cannot be installed (PyPI unreachable)"
      exit 77
    fi
    echo "FAIL: brevitas could not be installed although PyPI is reachable"
    exit 1
  fi
fi
PYTHONPATH="$pkgs" exec "$py" "$here/qat_imports.py" --quill "$quill"

#!/usr/bin/env bash
# ctest `models.zoo-quick` (label zoo): a fast subset of the model zoo
# through every target, strict (test/models/zoo.py --strict: every import,
# quantization, LLVM compile and TFLite export works; the LLVM target is
# bit-exact with the interpreter; TFLite's reference kernels within 1 LSB).
#
#   zoo_test.sh SOURCE_DIR BUILD_DIR
#
# The subset: torchvision's mobilenet_v3_small, shufflenet_v2_x1_0 (slice,
# split) and regnet_x_400mf (grouped conv) at 64x64, the TransformerEncoder
# (d 256, seq 64: identities, LayerNorm, GELU-free attention), and the
# pretrained PP-OCR mobile v2 text-direction classifier from PyPI. The
# whole zoo at full size is `test/models/run.sh` (docs/model-zoo.md).
# Exits 77 (skipped) when PyPI is unreachable or torch is missing.
set -uo pipefail
src="$1"
build="$2"
out="$build/test/models/zoo-quick"
SYSPY=/usr/bin/python3
if ! PY=$("$src/scripts/pyenv.sh"); then
  echo "SKIP: scripts/pyenv.sh failed (PyPI unreachable?)"
  exit 77
fi
if ! "$SYSPY" -c "import torch, torchvision, PIL" 2>/dev/null; then
  echo "SKIP: python3-torch/torchvision/pil missing (scripts/setup.sh installs them)"
  exit 77
fi
mkdir -p "$out"
models="mobilenet_v3_small shufflenet_v2_x1_0 regnet_x_400mf transformer"
"$SYSPY" "$src/test/models/export_torch.py" "$out" --size 64 $models || exit 1
"$SYSPY" "$src/test/models/ppocr.py" "$out" --pip "$PY" ppocr_cls || exit 1
# The encoder's 3-D FULLY_CONNECTEDs (nn.Linear on [64, 1, 256]) are
# written 2-D between RESHAPEs: TFLite's reference per-channel kernel got
# them wrong (targets/tflite/ops_nn.c, fc-3d.test).
"$PY" "$src/test/models/zoo.py" "$build" "$out" --samples 2 --strict \
  --models "${models// /,},ppocr_cls" \
  --json "$out/zoo.json"

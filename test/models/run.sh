#!/usr/bin/env bash
# The whole model zoo at full size through every target; writes the table
# of docs/model-zoo.md (between test/models/zoo.py's markers).
#
#   test/models/run.sh [ZOODIR] [zoo.py options, e.g. --models resnet18]
#
# ZOODIR (default build/zoo) caches the exported and fetched models; delete
# it to re-export. Needs a built tree (scripts/build.sh) and Debian's
# python3-torch/torchvision/pil (scripts/setup.sh). About an hour on a
# quiet 2-core machine.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${QUILL_BUILD_DIR:-$root/build}"
zoo="${1:-$build/zoo}"
shift || true
PY=$("$root/scripts/pyenv.sh")
torch_models="resnet18 mobilenet_v2 mobilenet_v3_small efficientnet_b0
  shufflenet_v2_x1_0 squeezenet1_1 googlenet densenet121 regnet_x_400mf
  mnasnet1_0 convnext_tiny vit_b_16 transformer crnn"
missing=""
for m in $torch_models; do
  [ -f "$zoo/$m/model.onnx" ] || missing="$missing $m"
done
if [ -n "$missing" ]; then
  # shellcheck disable=SC2086 # one word per model
  /usr/bin/python3 "$root/test/models/export_torch.py" "$zoo" $missing
fi
[ -f "$zoo/ppocr_rec/model.onnx" ] ||
  /usr/bin/python3 "$root/test/models/ppocr.py" "$zoo" --pip "$PY"
"$PY" "$root/test/models/zoo.py" "$build" "$zoo" --json "$zoo/zoo.json" \
  --md "$root/docs/model-zoo.md" "$@"

#!/usr/bin/env bash
# accuracy_all.sh - every measured table of docs/accuracy.md's accuracy
# toolkit from one run on one tree: the digits model with each pass and
# narrower weights, the zoo with and without the passes on three backends
# and against the peers' quantizers, and PP-OCRv4 recognition's character
# accuracy for Quill's variants and every peer quantizer that installs.
#
#   bench/accuracy_all.sh ZOO WORK [MD]
#
# ZOO: the zoo directory test/models/run.sh made (NAME/model.onnx,
# calib/, eval/); WORK: a scratch directory (the OCR lines and models, the
# runs' JSON rows and logs); MD: the page the tables go into (default
# docs/accuracy.md; each between its script's markers, the prose around
# them untouched). build/quill must be built from this tree.
#
# Two streams run side by side (the machine has two cores), each a
# sequence of processes, each logging to WORK/*.log:
#   zoo:  bench/zoo_variants.py on 14 zoo models: each backend (x86-vnni,
#         pt-int8, power2) plain, with --equalize, --bias-correction and
#         both, plus tflite-int8, onnxruntime's quantize_static and NNCF;
#         then AdaRound (100 iterations) alone and with both passes on the
#         six smallest models; convnext_tiny with the shipped configs and
#         the peers only.
#   ocr:  bench/accuracy.py on the digits model; bench/ocr_accuracy.py for
#         Quill's rows (shipped configs, minmax activations, each pass,
#         16-bit activations), then the peers: onnxruntime and OpenVINO +
#         NNCF (default, MIXED) in the peers' venv, AIMET-ONNX and AMD Quark
#         in a venv of their own (WORK/venv-acc, made with pip when
#         missing; their rows say so if they do not install), NNCF's
#         accuracy control last (about an hour of CPU).
# Then the tables. The CPU seconds in them are CPU time (user + sys), so
# the other stream's load does not change them much; SQNR and accuracy do
# not depend on it at all. QUILL_ACC_SKIP_AA=1 leaves NNCF's accuracy
# control out (its row then says "not run").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -ge 2 ] || { echo "usage: $0 ZOO WORK [MD]" >&2; exit 2; }
zoo="$(cd "$1" && pwd)"
mkdir -p "$2"
work="$(cd "$2" && pwd)"
md="${3:-$root/docs/accuracy.md}"
quill="$root/build/quill"
[ -x "$quill" ] || { echo "$0: build $quill first (scripts/build.sh)" >&2; exit 2; }
PY="$("$root/scripts/pyenv.sh")"
PPY="$("$root/scripts/pyenv-peers.sh")"
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# Quill variants of the OCR table: configs with minmax activations.
for b in x86-vnni tflite-int8; do
  /usr/bin/python3 - "$root/backends/$b.json" "$work/$b-minmax.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["name"] += "-minmax"
c["description"] += "; minmax activation ranges"
c["activation"]["observer"] = "minmax"
json.dump(c, open(sys.argv[2], "w"), indent=1)
EOF
done

MODELS=ppocr_cls,transformer,crnn,squeezenet1_1,mobilenet_v3_small,shufflenet_v2_x1_0,mobilenet_v2,mnasnet1_0,regnet_x_400mf,efficientnet_b0,googlenet,resnet18,densenet121,ppocr_rec
SMALL=ppocr_cls,transformer,crnn,squeezenet1_1,mobilenet_v3_small,shufflenet_v2_x1_0

zoo_stream() {
  rm -f "$work/passes.jsonl" "$work/adaround.jsonl" "$work/big.jsonl"
  log "zoo: passes"
  "$PPY" "$root/bench/zoo_variants.py" "$quill" "$zoo" "$work/passes.jsonl" "$MODELS" \
    vnni=x86-vnni "vnni+cle=x86-vnni --equalize" \
    "vnni+bc=x86-vnni --bias-correction" \
    "vnni+cle+bc=x86-vnni --equalize --bias-correction" \
    pt=pt-int8 "pt+cle=pt-int8 --equalize" "pt+bc=pt-int8 --bias-correction" \
    "pt+cle+bc=pt-int8 --equalize --bias-correction" \
    p2=power2 "p2+cle=power2 --equalize" "p2+bc=power2 --bias-correction" \
    "p2+cle+bc=power2 --equalize --bias-correction" \
    tfl=tflite-int8 ort=ort nncf=nncf --samples 16 > "$work/zoo-passes.log" 2>&1
  log "zoo: adaround"
  "$PPY" "$root/bench/zoo_variants.py" "$quill" "$zoo" "$work/adaround.jsonl" "$SMALL" \
    "vnni+ar=x86-vnni --adaround-iters 100" \
    "vnni+cle+bc+ar=x86-vnni --equalize --bias-correction --adaround-iters 100" \
    "pt+ar=pt-int8 --adaround-iters 100" \
    "pt+cle+bc+ar=pt-int8 --equalize --bias-correction --adaround-iters 100" \
    "p2+ar=power2 --adaround-iters 100" \
    "p2+cle+bc+ar=power2 --equalize --bias-correction --adaround-iters 100" \
    --samples 16 > "$work/zoo-adaround.log" 2>&1
  log "zoo: convnext_tiny"
  "$PPY" "$root/bench/zoo_variants.py" "$quill" "$zoo" "$work/big.jsonl" convnext_tiny \
    vnni=x86-vnni tfl=tflite-int8 ort=ort nncf=nncf --samples 16 > "$work/zoo-big.log" 2>&1
  log "zoo: done"
}

acc_venv() {
  local v="$work/venv-acc"
  if [ ! -x "$v/bin/python" ] || ! "$v/bin/python" -c "import aimet_onnx, quark" 2>/dev/null; then
    log "ocr: pip install aimet-onnx amd-quark into $v"
    python3 -m venv "$v" && "$v/bin/pip" install -q aimet-onnx amd-quark >&2 || return 1
  fi
  echo "$v/bin/python"
}

ocr_stream() {
  local o=(--build "$root/build" --work "$work/ocr")
  log "ocr: digits"
  /usr/bin/python3 "$root/bench/accuracy.py" "$quill" --out "$work/digits" \
    --models digits --write "$md" > "$work/digits.log" 2>&1
  log "ocr: Quill"
  "$PY" "$root/bench/ocr_accuracy.py" "${o[@]}" --peers '' --json "$work/ocr-quill.json" \
    --quill-backends x86-vnni,tflite-int8 \
    --quill "$work/x86-vnni-minmax.json" --quill "$work/tflite-int8-minmax.json" \
    --quill "x86-vnni --equalize" --quill "x86-vnni --bias-correction" \
    --quill "x86-vnni --adaround-iters 200" \
    --quill "x86-vnni --equalize --bias-correction --adaround-iters 200" \
    --quill "tflite-int8 --bias-correction" --quill "tflite-int8 --adaround-iters 200" \
    --quill tflite-int16x8 > "$work/ocr-quill.log" 2>&1
  log "ocr: onnxruntime, OpenVINO"
  "$PPY" "$root/bench/ocr_accuracy.py" "${o[@]}" --quill-backends '' \
    --peers ort,openvino,openvino-mixed --json "$work/ocr-peers.json" > "$work/ocr-peers.log" 2>&1
  local apy
  if apy="$(acc_venv 2>>"$work/ocr-acc.log")"; then
    log "ocr: AIMET, Quark"
    "$apy" "$root/bench/ocr_accuracy.py" "${o[@]}" --quill-backends '' \
      --peers aimet,aimet-tfe,quark --json "$work/ocr-acc.json" >> "$work/ocr-acc.log" 2>&1 || true
  fi
  if [ "${QUILL_ACC_SKIP_AA:-0}" != 1 ]; then
    log "ocr: NNCF accuracy control"
    "$PPY" "$root/bench/ocr_accuracy.py" "${o[@]}" --quill-backends '' \
      --peers openvino-aa --json "$work/ocr-aa.json" > "$work/ocr-aa.log" 2>&1 || true
  fi
  log "ocr: done"
}

zoo_stream & zpid=$!
ocr_stream & opid=$!
zst=0; ost=0
wait $zpid || zst=$?
wait $opid || ost=$?

log "tables"
"$PPY" "$root/bench/zoo_variants.py" --table "$work/passes.jsonl,$work/adaround.jsonl" \
  --group x86-vnni=vnni,vnni+cle,vnni+bc,vnni+cle+bc,vnni+ar,vnni+cle+bc+ar,ort \
  --group pt-int8=pt,pt+cle,pt+bc,pt+cle+bc,pt+ar,pt+cle+bc+ar,ort \
  --group power2=p2,p2+cle,p2+bc,p2+cle+bc,p2+ar,p2+cle+bc+ar,ort \
  --md "$md" --marker passes
"$PPY" "$root/bench/zoo_variants.py" --table "$work/passes.jsonl,$work/big.jsonl" \
  --group peers=ort,vnni,tfl,nncf --md "$md" --marker table
tables=""
for f in ocr-quill ocr-peers ocr-acc ocr-aa; do
  [ -f "$work/$f.json" ] && tables="$tables${tables:+,}$work/$f.json"
done
"$PY" "$root/bench/ocr_accuracy.py" --tables "$tables" --md "$md"
[ $zst = 0 ] && [ $ost = 0 ] || { echo "$0: a stream failed (zoo $zst, ocr $ost): see $work/*.log" >&2; exit 1; }
log "done"

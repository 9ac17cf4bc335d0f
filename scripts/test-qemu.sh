#!/usr/bin/env bash
# The instruction paths on CPUs this machine is not: code from `quill
# compile` for another CPU runs under qemu-user and must equal the
# reference interpreter bit for bit.
#
#   x86-avx2       --mcpu haswell --isa avx2        qemu-x86_64 -cpu Haswell
#   x86-portable   --mcpu haswell --isa portable    qemu-x86_64 -cpu Haswell
#   a64-a55        --target aarch64-linux-gnu --mcpu cortex-a55 --isa portable
#                                                   qemu-aarch64 -cpu cortex-a76
#   a64-n1-dotprod --target aarch64-linux-gnu --mcpu neoverse-n1 --mattr +dotprod
#                  (the neon-dot path: sdot)        qemu-aarch64 -cpu neoverse-n1
#   a64-v1-i8mm    --target aarch64-linux-gnu --mcpu neoverse-v1
#                  (the neon-i8mm path: smmla)      qemu-aarch64 -cpu max
#
# QEMU's Haswell has no AVX-512, so a stray EVEX instruction stops the
# program with SIGILL (checked here too: the avx512-vnni object must die);
# likewise QEMU's Neoverse-N1 has no i8mm (the neon-i8mm object must die
# there). QEMU 7.2 has no Cortex-A55 or Neoverse-V1 model: its A76 (v8.2 +
# dotprod, a superset of the A55) and `max` (v8.6+ with i8mm) run that
# code. AArch64 programs are linked -static with aarch64-linux-gnu-gcc.
# QUILL_QEMU_CONFIGS="a64-v1-i8mm ..." runs only the named configurations.
#
# For every configuration:
#  - the digits model (examples/digits, quantized for x86-vnni), linked
#    into examples/llvm/main.c: its accuracy on the 360 test images, and
#    the logits of five images equal to `quill run`'s;
#  - graphs written with random inputs and the reference's outputs by the
#    unit tests' --write mode: test_llvm_qrandom's randomized one-op graphs
#    (caseNNN: qconv2d, qmatmul, qadd/qmul, qmatmul of two activations; QUILL_QEMU_CASES per op,
#    default 12) and big.qir, and test_llvm_ops's bit-exact cases (opsNNN:
#    every other lowering), each linked into
#    test/targets/llvm/qemu/run_npy.c, every output byte equal to the
#    reference's; every 7th graph and big.qir are compiled with --threads 2
#    and linked with the shipped quill_rt.c (big.qir must call the pool);
#  - two models of the zoo (mobilenet_v3_small, regnet_x_400mf at 64x64,
#    exported by test/models/export_torch.py, quantized for x86-vnni) on a
#    held-out sample, through the same driver, every output byte equal to
#    `quill run`'s;
#  - x86 objects contain no zmm register (no AVX-512 anywhere, run or not);
#    the avx2 object of big.qir uses vpmaddubsw (its small weights), the
#    random graphs' vpmaddwd; the neon-dot object of big.qir uses sdot,
#    the neon-i8mm one smmla, the portable AArch64 one neither.
#
#   scripts/test-qemu.sh              # installs qemu-user and the AArch64
#                                     # cross toolchain with apt-get, builds
#   scripts/test-qemu.sh --no-install # ctest's targets.llvm-qemu: exit 77
#                                     # (skipped) when a tool is missing
#
# QUILL_BUILD_DIR (default build/) holds the build; the work goes to
# $QUILL_BUILD_DIR/qemu (or $QUILL_QEMU_WORK). QUILL_QEMU_SEED changes the
# random cases.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${QUILL_BUILD_DIR:-$root/build}"
install=1
[ "${1:-}" = "--no-install" ] && install=0

tools="qemu-x86_64 qemu-aarch64 aarch64-linux-gnu-gcc"
missing=""
for t in $tools; do command -v "$t" >/dev/null || missing="$missing $t"; done
if [ -n "$missing" ]; then
  if [ $install = 0 ]; then
    echo "test-qemu: skipped, not installed:$missing (scripts/test-qemu.sh installs them)"
    exit 77
  fi
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "test-qemu: installing qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
    qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
fi
if [ $install = 1 ]; then
  QUILL_BUILD_DIR="$build" "$root/scripts/build.sh"
fi

quill="$build/quill"
objdump=/usr/lib/llvm-19/bin/llvm-objdump
nm=/usr/lib/llvm-19/bin/llvm-nm
ex="$root/examples/digits"
driver="$root/test/targets/llvm/qemu/run_npy.c"
work="${QUILL_QEMU_WORK:-$build/qemu}"
rm -rf "$work" && mkdir -p "$work"
cd "$work"
t0=$(date +%s)

# ---- the inputs and the reference outputs (once, on this machine) ----------
QUILL_LLVM_RANDOM_CASES="${QUILL_QEMU_CASES:-12}" \
QUILL_LLVM_RANDOM_SEED="${QUILL_QEMU_SEED:-0}" \
  "$build/test/test_llvm_qrandom" --write cases
"$build/test/test_llvm_ops" --write cases
# two models of the zoo (test/models/export_torch.py at 64x64: depthwise,
# hard-swish and squeeze-excite; grouped convs), quantized for x86-vnni,
# on one held-out sample: zoo_NAME.qir with its input and `quill run`'s
# output. Skipped without Debian's python3-torch.
zoo_models="mobilenet_v3_small regnet_x_400mf"
if /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  # shellcheck disable=SC2086 # one word per model
  /usr/bin/python3 "$root/test/models/export_torch.py" zoo --size 64 \
    $zoo_models >zoo.log 2>&1 || { cat zoo.log; exit 1; }
  for m in $zoo_models; do
    "$quill" quantize "zoo/$m/model.onnx" --backend x86-vnni \
      --calib "zoo/$m/calib" -o "cases/zoo_$m.qir"
    cp "zoo/$m/eval/e0.npy" "cases/zoo_$m.in0.npy"
    "$quill" run "cases/zoo_$m.qir" --input "cases/zoo_$m.in0.npy" \
      --output "cases/zoo_$m.ref0.npy" >/dev/null
  done
else
  echo "test-qemu: no python3-torch: the zoo models are not run (scripts/setup.sh installs it)"
fi
cases=$(cd cases && ls -- *.qir | sed 's/\.qir$//')
"$quill" quantize "$ex/model.onnx" --backend x86-vnni --calib "$ex/calib" \
  --max-samples 32 -o digits_int.qir
# five test images, one file each for `quill run` and one file of all five
# (with their labels) for the demo's --dump I (an index into that file)
images="0 7 100 200 359"
/usr/bin/python3 -c "
import numpy as np
x, y = np.load('$ex/test_x.npy'), np.load('$ex/test_y.npy')
pick = [int(i) for i in '$images'.split()]
for k, i in enumerate(pick):
    np.save('x%d.npy' % k, x[i:i + 1])
np.save('x5.npy', x[pick]); np.save('y5.npy', y[pick])
"
for k in 0 1 2 3 4; do
  "$quill" run digits_int.qir --input x$k.npy --output r$k.npy >/dev/null
done
# the accuracy over all 360 images of the same model compiled for this
# machine (bit-exact with `quill run`: ctest example.llvm-digits)
mkdir -p native
"$quill" compile digits_int.qir -o native/digits.o --name digits
cc -O2 -Inative "$root/examples/llvm/main.c" native/digits.o -o native/digits -lm
native_acc=$(native/digits "$ex/test_x.npy" "$ex/test_y.npy")
echo "== native ($(uname -m), this CPU): digits $native_acc"

fail=0
ncheck=0
note() { echo "  $*"; }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# run_config NAME "COMPILE FLAGS" CC "RUNNER" X86
run_config() {
  local name=$1 flags=$2 cc=$3 runner=$4 x86=$5
  local d="$work/$name"
  mkdir -p "$d"
  echo "== $name: quill compile $flags; $cc; $runner"
  # digits in examples/llvm/main.c
  # shellcheck disable=SC2086
  "$quill" compile digits_int.qir -o "$d/digits.o" --name digits $flags &&
    $cc -O2 -I"$d" "$root/examples/llvm/main.c" "$d/digits.o" -o "$d/digits" -lm ||
    { bad "$name: digits does not compile or link"; return; }
  local acc
  acc=$($runner "$d/digits" "$ex/test_x.npy" "$ex/test_y.npy" 2>/dev/null) ||
    { bad "$name: digits demo failed (status $?)"; return; }
  note "digits: $acc"
  ncheck=$((ncheck + 1))
  [ "${acc%%,*}" = "${native_acc%%,*}" ] ||
    bad "$name: digits ${acc%%,*}, natively compiled for this machine ${native_acc%%,*}"
  local k=-1
  for i in $images; do
    k=$((k + 1))
    ncheck=$((ncheck + 1))
    $runner "$d/digits" x5.npy y5.npy --dump $k "$d/c$k.npy" >/dev/null 2>&1 ||
      { bad "$name: digits --dump (image $i)"; continue; }
    # the 10 f32 logits after each file's own header
    cmp -s <(tail -c 40 "$d/c$k.npy") <(tail -c 40 "r$k.npy") ||
      bad "$name: digits image $i: logits differ from quill run"
  done
  # the unit tests' graphs
  local nok=0 npool=0
  for c in $cases; do
    local n threads=1 rt=""
    n=${c//[!0-9]/}
    if [ "$c" = big ] || [ $((10#${n:-0} % 7)) = 0 ]; then
      threads=2
      rt="$d/$c/quill_rt.c -lpthread"
    fi
    mkdir -p "$d/$c"
    ncheck=$((ncheck + 1))
    # shellcheck disable=SC2086
    if ! "$quill" compile cases/$c.qir -o "$d/$c/model.o" --name model \
         --threads $threads $flags; then
      bad "$name/$c: quill compile failed"
      continue
    fi
    # (to files, not `| grep -q`: with pipefail, grep's early exit would
    # fail the pipeline)
    "$nm" "$d/$c/model.o" >"$d/$c/nm.txt"
    "$objdump" -d "$d/$c/model.o" >"$d/$c/model.s"
    if [ "$threads" = 2 ] && grep -q 'U quill_rt_parallel_for' "$d/$c/nm.txt"; then
      npool=$((npool + 1))
    elif [ "$c" = big ]; then
      bad "$name/big: compiled with --threads 2 but never calls the pool"
    fi
    if [ "$x86" = 1 ] && grep -q zmm "$d/$c/model.s"; then
      bad "$name/$c: AVX-512 (zmm) instructions in code for a Haswell"
    fi
    # big.qir's weights cannot saturate 16 bits: the avx2 path's u8 kernel
    if [ "$name" = x86-avx2 ] && [ "$c" = big ] &&
       ! grep -q vpmaddubsw "$d/$c/model.s"; then
      bad "$name/big: no vpmaddubsw (the avx2 path's u8 kernel is not tested)"
    fi
    # the Arm paths' instructions (big.qir: 8-bit weights, 16 channels)
    if [ "$c" = big ]; then
      case $name in
        a64-a55) ! grep -qE 'sdot|smmla' "$d/$c/model.s" ||
                   bad "$name/big: sdot/smmla in code for the portable path" ;;
        a64-n1-dotprod) grep -q sdot "$d/$c/model.s" ||
                   bad "$name/big: no sdot (the neon-dot kernel is not tested)" ;;
        a64-v1-i8mm) grep -q smmla "$d/$c/model.s" ||
                   bad "$name/big: no smmla (the neon-i8mm kernel is not tested)" ;;
      esac
    fi
    # shellcheck disable=SC2086
    $cc -O2 -I"$d/$c" "$driver" "$d/$c/model.o" $rt -o "$d/$c/run" -lm ||
      { bad "$name/$c: does not link"; continue; }
    # shellcheck disable=SC2046
    if $runner "$d/$c/run" $(ls cases/$c.in*.npy 2>/dev/null | sort -V) -- \
         $(ls cases/$c.ref*.npy | sort -V) >"$d/$c/log" 2>&1; then
      nok=$((nok + 1))
    else
      bad "$name/$c (threads $threads): $(grep -v 'TCG doesn' "$d/$c/log" | head -3)"
      echo "    case: cases/$c.qir; compile: quill compile $flags --threads $threads"
    fi
  done
  note "graphs: $nok of $(echo "$cases" | wc -w) equal the reference bit for bit ($npool threaded through the pool)"
}

# Two configurations at a time (CI machines have 2 cores), each into its
# own log; a log's FAIL lines are its failures.
x86run="qemu-x86_64 -cpu Haswell"
a64cc="aarch64-linux-gnu-gcc -static"
configs=(
  "x86-avx2|--mcpu haswell --isa avx2|cc|$x86run|1"
  "x86-portable|--mcpu haswell --isa portable|cc|$x86run|1"
  "a64-a55|--target aarch64-linux-gnu --mcpu cortex-a55 --isa portable|$a64cc|qemu-aarch64 -cpu cortex-a76|0"
  "a64-n1-dotprod|--target aarch64-linux-gnu --mcpu neoverse-n1 --mattr +dotprod|$a64cc|qemu-aarch64 -cpu neoverse-n1|0"
  "a64-v1-i8mm|--target aarch64-linux-gnu --mcpu neoverse-v1|$a64cc|qemu-aarch64 -cpu max|0"
)
if [ -n "${QUILL_QEMU_CONFIGS:-}" ]; then
  keep=()
  for cfg in "${configs[@]}"; do
    case " $QUILL_QEMU_CONFIGS " in *" ${cfg%%|*} "*) keep+=("$cfg") ;; esac
  done
  configs=("${keep[@]}")
fi
jobs_max=${QUILL_QEMU_JOBS:-2}
for cfg in "${configs[@]}"; do
  IFS='|' read -r name flags cc runner x86 <<<"$cfg"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  ( fail=0 ncheck=0
    run_config "$name" "$flags" "$cc" "$runner" "$x86"
    echo "checks $ncheck" ) >"$name.log" 2>&1 &
done
wait
for cfg in "${configs[@]}"; do
  name=${cfg%%|*}
  grep -v "TCG doesn't support" "$name.log" | grep -v '^checks ' || true
  n=$(sed -n 's/^checks //p' "$name.log")
  [ -n "$n" ] || bad "$name: stopped before its end (see $work/$name.log)"
  ncheck=$((ncheck + ${n:-0}))
  fail=$((fail + $(grep -c '^FAIL' "$name.log" || true)))
done

# The controls: AVX-512 code must not run on QEMU's Haswell, nor i8mm code
# on its Neoverse-N1, else the runs above prove nothing about stray
# instructions of a newer path.
# control NAME "COMPILE FLAGS" CC "RUNNER"
control() {
  local name=$1 flags=$2 cc=$3 runner=$4
  echo "== control: $name code under $runner must stop"
  mkdir -p "control/$name"
  # shellcheck disable=SC2086
  "$quill" compile cases/big.qir -o "control/$name/model.o" --name model $flags
  $cc -O2 -I"control/$name" "$driver" "control/$name/model.o" \
    -o "control/$name/run" -lm
  set +e
  # (in a subshell, so that bash's own "Illegal instruction" goes to the
  # log; no core file)
  ( ulimit -c 0
    $runner "control/$name/run" cases/big.in0.npy -- cases/big.ref0.npy
    exit $? ) >"control/$name.log" 2>&1
  local st=$?
  set -e
  if [ $st = 132 ] || grep -q "Illegal instruction" "control/$name.log"; then
    note "$name object: SIGILL, as it must"
  else
    bad "$name object ran under $runner (status $st): the runs above prove nothing"
  fi
}
control avx512-vnni "--mcpu znver4 --isa avx512-vnni" cc "$x86run"
control neon-i8mm "--target aarch64-linux-gnu --mcpu neoverse-v1 --isa neon-i8mm" \
  "$a64cc" "qemu-aarch64 -cpu neoverse-n1"

echo "test-qemu: $ncheck checks, $fail failures, $(( $(date +%s) - t0 )) s"
[ $fail = 0 ]

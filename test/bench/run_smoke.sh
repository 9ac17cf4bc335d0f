#!/bin/sh
# ctest bench.smoke: bench/run.py --quick (two small workloads, 3 samples,
# one thread) runs every engine end to end, so the committed benchmark
# script cannot rot between the runs that fill docs/benchmarks.md. It
# checks that the script works, not how fast anything is. Skipped (77)
# when the onnxruntime venv cannot be made.
#   run_smoke.sh BUILD_DIR
here="$(cd "$(dirname "$0")" && pwd)"
py="$("$here/../../scripts/pyenv.sh")" || {
  echo "SKIP: onnxruntime unavailable (scripts/pyenv.sh failed)"
  exit 77
}
exec "$py" "$here/../../bench/run.py" --quick --threads 1 --build "$1"

#!/usr/bin/env bash
# The README's run command: install dependencies, build, and run the bundled
# example through a pass pipeline, showing the IR before and after.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
build="${QUILL_BUILD_DIR:-$root/build}"
ex="$root/examples/residual_block.qir"
echo "== input: $ex"
cat "$ex"
echo
echo "== quill-opt --pass-pipeline='canonicalize,constant-fold,cse,dce' --pass-statistics"
"$build/quill-opt" "$ex" --pass-pipeline='canonicalize,constant-fold,cse,dce' --pass-statistics

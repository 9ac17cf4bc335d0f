#!/usr/bin/env bash
# The README's test command: install dependencies, build, run every test
# (C unit tests and the lit suite) through ctest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh" "$@"
build="${QUILL_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j"$(nproc)"

#!/usr/bin/env bash
# Configure and build Quill into build/ (or $QUILL_BUILD_DIR).
# Extra arguments go to cmake's configure step (e.g. -DQUILL_SANITIZE=ON).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
build="${QUILL_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -G Ninja "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"

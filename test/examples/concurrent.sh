#!/bin/sh
# ctest example.concurrent-callers: the concurrency contract of compiled
# models (test/examples/Inputs/concurrent/callers.c). A model compiled with
# --threads 2 is called from 4 threads at once, each with its own scratch,
# and every output must equal a lone caller's; once built plainly (many
# calls) and once under ThreadSanitizer (clang-19 -fsanitize=thread; any
# report fails the test).
#
#   concurrent.sh QUILL SOURCE_DIR WORK_DIR
set -eu
quill=$1 src=$2 work=$3
here="$src/test/examples/Inputs/concurrent"
rm -rf "$work" && mkdir -p "$work"
cd "$work"
"$quill" compile "$here/chain.qir" -o model.o --name model --threads 2
test -f model.h && test -f quill_rt.c
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I. "$here/callers.c" model.o \
  quill_rt.c -o callers -lpthread
./callers 4 400
clang-19 -O1 -g -std=c11 -D_POSIX_C_SOURCE=200809L -fsanitize=thread -I. \
  "$here/callers.c" model.o quill_rt.c -o callers-tsan -lpthread
TSAN_OPTIONS="halt_on_error=1 exitcode=66" ./callers-tsan 4 60
echo "example.concurrent-callers: concurrent callers equal a lone caller, TSan clean"

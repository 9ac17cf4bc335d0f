/*
 * fuzz_tflite.c - libFuzzer target for the TFLite reader: the
 * bounds-checked FlatBuffers reader (targets/tflite/flatbuf.c) as walked by
 * quill_tflite_dump (targets/tflite/dump.c), what `quill-translate
 * --dump-tflite` runs.
 *
 * Each input is dumped to /dev/null in a fresh context whose diagnostic
 * handler discards everything. A rejected buffer must come with an error
 * diagnostic, else the target traps. The input is copied into a buffer of
 * exactly its size (libFuzzer's is already), so any read past its end is
 * caught by ASan; offsets and vector lengths out of range are the reader's
 * business to refuse.
 *
 *   cmake -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang-19 -DQUILL_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz-tflite
 *   ./build-fuzz/fuzz-tflite -max_total_time=60 fuzz/corpus/tflite
 */
#include <stdint.h>
#include <stdio.h>

#include "targets/tflite/tflite_export.h"
#include "fuzz/fuzz.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  devnull = fopen("/dev/null", "w");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!devnull)
    return 0;
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx)
    return 0;
  quill_diag_set_handler(ctx, fuzz_silent, NULL);
  if (quill_tflite_dump(ctx, data, size, devnull) != QUILL_OK &&
      quill_diag_error_count(ctx) == 0)
    __builtin_trap(); /* rejected without a diagnostic */
  quill_context_destroy(ctx);
  return 0;
}

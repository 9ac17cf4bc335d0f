/*
 * fuzz_npy.c - libFuzzer target for the .npy reader (frontends/npy/).
 *
 * Each input is decoded with quill_npy_read_buffer in a fresh context whose
 * diagnostic handler discards everything. A failure must come with an
 * error diagnostic (or be an allocation failure). A decoded tensor is
 * written back with quill_npy_write_buffer and read again: the type and
 * the data bytes must survive the round trip, else the target traps. The
 * input buffer is passed as is, so any read past its end is caught by ASan.
 *
 *   cmake -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang-19 -DQUILL_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz-npy
 *   ./build-fuzz/fuzz-npy -max_total_time=60 fuzz/corpus/npy
 */
#include <stdint.h>
#include <string.h>

#include "frontends/npy/npy.h"
#include "fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx)
    return 0;
  quill_diag_set_handler(ctx, fuzz_silent, NULL);
  quill_tensor t;
  quill_status st = quill_npy_read_buffer(ctx, data, size, "fuzz.npy", &t);
  if (st != QUILL_OK) {
    if (st != QUILL_ERR_NOMEM && quill_diag_error_count(ctx) == 0)
      __builtin_trap(); /* failure without a diagnostic */
    if (t.type || t.data || t.size)
      __builtin_trap(); /* failure must leave the tensor zeroed */
    quill_context_destroy(ctx);
    return 0;
  }
  void *buf;
  size_t len;
  if (quill_npy_write_buffer(ctx, &t, NULL, &buf, &len) == QUILL_OK) {
    quill_tensor back;
    if (quill_npy_read_buffer(ctx, buf, len, "fuzz2.npy", &back) != QUILL_OK)
      __builtin_trap(); /* written image does not read back */
    if (back.type != t.type || back.size != t.size ||
        (t.size && memcmp(back.data, t.data, t.size) != 0))
      __builtin_trap(); /* round trip changed the tensor */
    quill_tensor_free(ctx, &back);
    quill_free(ctx, buf, len);
  }
  quill_tensor_free(ctx, &t);
  quill_context_destroy(ctx);
  return 0;
}

/*
 * fuzz_tensor.c - libFuzzer target for the ONNX TensorProto (.pb) reader
 * (frontends/onnx/tensor_file.c: quill_onnx_tensor_read_buffer, what
 * `quill run --input x.pb` and the conformance tests use).
 *
 * Each input is decoded in a fresh context whose diagnostic handler
 * discards everything. A failure must come with an error diagnostic (or be
 * an allocation failure) and leave the tensor zeroed, else the target
 * traps. A decoded tensor must be consistent: a static type whose byte
 * size is the tensor's size, and every byte readable (summed, so ASan sees
 * a short buffer). External data is looked up in a directory that does
 * not exist, so the fuzzer never reads real files.
 *
 *   cmake -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang-19 -DQUILL_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz-tensor
 *   ./build-fuzz/fuzz-tensor -max_total_time=60 fuzz/corpus/tensor
 */
#include <stdint.h>

#include "frontends/onnx/tensor_file.h"
#include "fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx)
    return 0;
  quill_diag_set_handler(ctx, fuzz_silent, NULL);
  quill_tensor t;
  const char *name = NULL;
  quill_status st = quill_onnx_tensor_read_buffer(
      ctx, data, size, "fuzz.pb", "/nonexistent-quill-fuzz-dir", &t, &name);
  if (st != QUILL_OK) {
    if (st != QUILL_ERR_NOMEM && quill_diag_error_count(ctx) == 0)
      __builtin_trap(); /* failure without a diagnostic */
    if (t.type || t.data || t.size)
      __builtin_trap(); /* failure must leave the tensor zeroed */
    quill_context_destroy(ctx);
    return 0;
  }
  if (!t.type || !name)
    __builtin_trap();
  int64_t n = quill_type_num_elements(t.type);
  if (n < 0 || (uint64_t)n * quill_type_elem_bytes(t.type) != t.size)
    __builtin_trap(); /* the type and the data disagree */
  unsigned sum = 0;
  for (size_t i = 0; i < t.size; i++)
    sum += ((const unsigned char *)t.data)[i];
  (void)sum;
  quill_onnx_tensor_free(ctx, &t);
  quill_context_destroy(ctx);
  return 0;
}

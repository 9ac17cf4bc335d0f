/*
 * fuzz_onnx.c - libFuzzer target for the ONNX importer.
 *
 * Each input is imported as an ONNX model (protobuf bytes) in a fresh
 * context whose diagnostic handler discards everything. A failed import
 * must have emitted an error (else trap); a successful one must verify and
 * print. External data is looked up in a directory that does not exist, so
 * the fuzzer never reads real files. ASan/UBSan catch memory errors and
 * leaks.
 *
 *   cmake -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang-19 -DQUILL_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz-onnx
 *   ./build-fuzz/fuzz-onnx -max_total_time=60 fuzz/corpus/onnx
 *
 * .ci/run seeds it with fuzz/corpus/onnx (small models of each op family,
 * the quantized ops and legacy opsets) plus every model of ONNX's node
 * tests from libonnx-testdata.
 */
#include <stdint.h>
#include <stdlib.h>

#include "frontends/onnx/onnx.h"
#include "fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx)
    return 0;
  quill_diag_set_handler(ctx, fuzz_silent, NULL);
  quill_onnx_options opts = {.base_dir = "/nonexistent-quill-fuzz-dir"};
  quill_module *m = quill_onnx_import_buffer(ctx, data, size, "fuzz.onnx",
                                             &opts);
  if (!m) {
    if (quill_diag_error_count(ctx) == 0)
      __builtin_trap(); /* failure without a diagnostic */
  } else {
    if (quill_verify_module(m) != QUILL_OK)
      __builtin_trap(); /* the importer returned invalid IR */
    quill_strbuf sb;
    quill_strbuf_init(&sb, ctx);
    quill_print_module(m, &sb, NULL);
    quill_strbuf_free(&sb);
    quill_module_destroy(m);
  }
  quill_context_destroy(ctx);
  return 0;
}

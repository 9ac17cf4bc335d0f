/*
 * fuzz_pipeline.c - libFuzzer target for `--pass-pipeline` text
 * (passes/pass_manager.c: quill_pass_manager_parse_pipeline and the pass
 * option parser).
 *
 * Each input, NUL-terminated, is parsed as a pipeline in a fresh context
 * whose diagnostic handler discards everything. A rejected pipeline must
 * come with an error diagnostic, else the target traps. An accepted one is
 * run on a small fixed module (conv + relu, a constant product, a common
 * subexpression and a dead op) so the options reach the passes; a run
 * that succeeds must leave a module that verifies. Pipelines that could name a file (a '/', "json", or a data=
 * option) are parsed but not run: the fuzzer never reads real files.
 *
 *   cmake -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang-19 -DQUILL_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz-pipeline
 *   ./build-fuzz/fuzz-pipeline -max_total_time=60 fuzz/corpus/pipeline
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/pass.h"
#include "fuzz/fuzz.h"

static const char module_text[] =
    "func @main(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>, "
    "%b: tensor<4xf32>) -> tensor<1x4x2x2xf32> {\n"
    "  %0 = conv2d %x, %w, %b : tensor<1x4x2x2xf32> loc(\"conv1\")\n"
    "  %1 = relu %0 : tensor<1x4x2x2xf32> loc(\"relu1\")\n"
    "  %c = constant {value = dense<2.0> : tensor<1x4x2x2xf32>} : "
    "tensor<1x4x2x2xf32>\n"
    "  %d = mul %c, %c : tensor<1x4x2x2xf32>\n"
    "  %e = add %1, %d : tensor<1x4x2x2xf32>\n"
    "  %f = add %1, %d : tensor<1x4x2x2xf32>\n"
    "  %g = sigmoid %f : tensor<1x4x2x2xf32>\n"
    "  return %e\n"
    "}\n";

/* True if the text could make a pass read a file. */
static bool names_a_file(const char *s) {
  return strchr(s, '/') || strstr(s, "json") || strstr(s, "data");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_pass_manager *pm = ctx ? quill_pass_manager_create(ctx) : NULL;
  if (!pm)
    goto done;
  quill_diag_set_handler(ctx, fuzz_silent, NULL);
  quill_status st = quill_pass_manager_parse_pipeline(pm, text);
  if (st != QUILL_OK) {
    if (st != QUILL_ERR_NOMEM && quill_diag_error_count(ctx) == 0)
      __builtin_trap(); /* rejected without a diagnostic */
    goto done;
  }
  if (names_a_file(text))
    goto done;
  quill_module *m =
      quill_parse_module(ctx, module_text, sizeof module_text - 1, "f.qir", 0);
  if (!m)
    __builtin_trap(); /* the fixed module must parse */
  if (quill_pass_manager_run(pm, m) == QUILL_OK &&
      quill_verify_module(m) != QUILL_OK)
    __builtin_trap(); /* a pipeline that succeeded left invalid IR */
  quill_module_destroy(m);
done:
  quill_pass_manager_destroy(pm);
  quill_context_destroy(ctx);
  free(text);
  return 0;
}

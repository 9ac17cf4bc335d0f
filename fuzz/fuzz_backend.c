/*
 * fuzz_backend.c - libFuzzer target for the backend-config JSON loader
 * (backends/: quill_backend_parse, parsing and validation).
 *
 * Each input is parsed as a backend config in a fresh context whose
 * diagnostic handler discards everything. A rejected config must come
 * with an error diagnostic (or be an allocation failure), else the target
 * traps. An accepted one is printed (quill_backend_print, which walks
 * every field) and its queries are asked for every opcode, so a config
 * that validates but holds out-of-range values is caught by ASan/UBSan.
 * The input buffer is passed as is (not NUL-terminated).
 *
 *   cmake -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang-19 -DQUILL_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz-backend
 *   ./build-fuzz/fuzz-backend -max_total_time=60 fuzz/corpus/backend
 */
#include <stdint.h>
#include <stdio.h>

#include "backends/backend.h"
#include "fuzz/fuzz.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  devnull = fopen("/dev/null", "w");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx)
    return 0;
  quill_diag_set_handler(ctx, fuzz_silent, NULL);
  const quill_backend *b =
      quill_backend_parse(ctx, (const char *)data, size, "fuzz.json");
  if (!b) {
    if (quill_diag_error_count(ctx) == 0)
      __builtin_trap(); /* rejected without a diagnostic */
    quill_context_destroy(ctx);
    return 0;
  }
  if (devnull)
    quill_backend_print(b, devnull);
  unsigned n = 0;
  for (int op = 0; op < QUILL_OP_COUNT; op++) {
    n += quill_backend_quantizes(b, (quill_opcode)op);
    n += quill_backend_keeps_float(b, (quill_opcode)op);
    n += quill_backend_shares_params(b, (quill_opcode)op);
    for (int op2 = 0; op2 < QUILL_OP_COUNT; op2 += 7)
      n += quill_backend_fuses(b, (quill_opcode)op, (quill_opcode)op2);
  }
  for (unsigned i = 0; i < quill_backend_num_fusions(b); i++) {
    const quill_fusion *f = quill_backend_fusion(b, i);
    if (!f || f->len == 0 || f->len > QUILL_BACKEND_MAX_FUSION_LEN)
      __builtin_trap(); /* a validated fusion out of range */
    for (unsigned k = 0; k < f->len; k++)
      if ((int)f->ops[k] < 0 || (int)f->ops[k] >= QUILL_OP_COUNT)
        __builtin_trap();
  }
  /* The scheme arithmetic on a few ranges must give a finite positive
   * scale and a zero point inside [qmin, qmax]. */
  static const double ranges[][2] = {{-1, 1}, {0, 6}, {-3e-38, 2e-38},
                                     {0, 0}, {-1e30, 1e30}};
  const quill_quant_scheme *sc[2] = {quill_backend_activation(b),
                                     quill_backend_weight(b)};
  for (int k = 0; k < 2; k++)
    for (size_t r = 0; sc[k] && r < sizeof ranges / sizeof ranges[0]; r++) {
      double scale;
      int64_t zp;
      bool degenerate;
      if (quill_quant_params_from_range(sc[k], ranges[r][0], ranges[r][1],
                                        &scale, &zp, &degenerate) != QUILL_OK)
        __builtin_trap(); /* finite ranges are always accepted */
      if (!(scale > 0) || scale > 1e300 || zp < sc[k]->qmin ||
          zp > sc[k]->qmax)
        __builtin_trap();
    }
  (void)n;
  quill_context_destroy(ctx);
  return 0;
}

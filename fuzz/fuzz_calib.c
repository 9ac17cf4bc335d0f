/*
 * fuzz_calib.c - libFuzzer target for calibration list files (the .txt
 * files `quill quantize --calib` and `calibrate{data=...}` read:
 * passes/calib_data.c, quill_calib_list_parse).
 *
 * The first byte of an input picks the graph the list is for (even: one
 * input `x`; odd: two inputs `x` and `y`; the seeds use '0' and '1'); the
 * rest is the list text, parsed in a fresh context whose diagnostic
 * handler discards everything.
 * Only the parser runs: no sample file is read. A rejected list must come
 * with an error diagnostic, else the target traps; an accepted one must
 * have at least one row and a non-empty path for every input of every
 * row, absolute (the base directory is).
 *
 *   cmake -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang-19 -DQUILL_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz-calib
 *   ./build-fuzz/fuzz-calib -max_total_time=60 fuzz/corpus/calib
 */
#include <stdint.h>

#include "ir/ir.h"
#include "passes/calib_list.h"
#include "fuzz/fuzz.h"

static const char module_text[] =
    "func @one(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {\n"
    "  return %x\n"
    "}\n"
    "func @two(%x: tensor<1x4xf32>, %y: tensor<2xi8>) -> tensor<1x4xf32> {\n"
    "  return %x\n"
    "}\n";

static const char base[] = "/nonexistent-quill-fuzz-dir/";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx)
    return 0;
  quill_diag_set_handler(ctx, fuzz_silent, NULL);
  quill_module *m =
      quill_parse_module(ctx, module_text, sizeof module_text - 1, "f.qir", 0);
  if (!m)
    __builtin_trap(); /* the fixed module must parse */
  quill_calib_dataset *ds =
      quill_calib_dataset_create(ctx, quill_module_graph(m, data[0] & 1));
  if (!ds)
    __builtin_trap();
  quill_calib_list l;
  quill_status st = quill_calib_list_parse(
      ds, (const char *)data + 1, size - 1, "fuzz.txt", base, 0, &l);
  if (st != QUILL_OK) {
    if (st != QUILL_ERR_NOMEM && quill_diag_error_count(ctx) == 0)
      __builtin_trap(); /* rejected without a diagnostic */
    if (l.num_rows || l.paths || l.lines)
      __builtin_trap(); /* failure must leave the list zeroed */
  } else {
    unsigned n = quill_calib_dataset_num_inputs(ds);
    if (l.num_rows == 0 || l.num_inputs != n)
      __builtin_trap();
    for (size_t r = 0; r < l.num_rows; r++)
      for (unsigned i = 0; i < n; i++) {
        const char *p = l.paths[r * n + i];
        /* relative paths are joined to the (absolute) base */
        if (!p || p[0] != '/')
          __builtin_trap(); /* a missing or unjoined path */
      }
    quill_calib_list_free(ctx, &l);
  }
  quill_calib_dataset_destroy(ds);
  quill_module_destroy(m);
  quill_context_destroy(ctx);
  return 0;
}

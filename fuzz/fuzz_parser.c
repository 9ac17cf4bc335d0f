/*
 * fuzz_parser.c - libFuzzer target for the textual IR parser.
 *
 * Each input is parsed as a .qir module in a fresh context whose diagnostic
 * handler discards everything. If it parses, the module is verified, printed,
 * reparsed and printed again, and the two texts must be identical (print ->
 * parse -> print is a fixed point); a mismatch or a parse failure of printed
 * text is a bug, reported by trapping. The input buffer is passed as is (not
 * NUL-terminated), so any read past its end is caught by ASan.
 *
 *   cmake -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang-19 -DQUILL_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz-parser
 *   ./build-fuzz/fuzz-parser -max_total_time=60 fuzz/corpus/parser
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "fuzz/fuzz.h"

/* Print m into a malloc'd string (NULL on allocation failure). */
static char *print(const quill_module *m, size_t *len) {
  quill_strbuf sb;
  quill_print_options opts = {true};
  quill_strbuf_init(&sb, quill_module_context(m));
  quill_print_module(m, &sb, &opts);
  char *s = NULL;
  if (!quill_strbuf_failed(&sb)) {
    *len = sb.len;
    s = malloc(sb.len + 1);
    if (s)
      memcpy(s, quill_strbuf_str(&sb), sb.len + 1);
  }
  quill_strbuf_free(&sb);
  return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx)
    return 0;
  quill_diag_set_handler(ctx, fuzz_silent, NULL);
  quill_module *m =
      quill_parse_module(ctx, (const char *)data, size, "fuzz.qir", 0);
  if (!m) {
    if (quill_diag_error_count(ctx) == 0)
      __builtin_trap(); /* failure without a diagnostic */
    quill_context_destroy(ctx);
    return 0;
  }
  (void)quill_verify_module(m);
  size_t n1 = 0, n2 = 0;
  char *t1 = print(m, &n1);
  if (t1) {
    unsigned errs = quill_diag_error_count(ctx);
    quill_module *m2 = quill_parse_module(ctx, t1, n1, "fuzz2.qir", 0);
    if (!m2 || quill_diag_error_count(ctx) != errs)
      __builtin_trap(); /* printed text does not parse */
    char *t2 = print(m2, &n2);
    if (t2 && (n1 != n2 || memcmp(t1, t2, n1) != 0))
      __builtin_trap(); /* print -> parse -> print is not a fixed point */
    free(t2);
    quill_module_destroy(m2);
    free(t1);
  }
  quill_module_destroy(m);
  quill_context_destroy(ctx);
  return 0;
}

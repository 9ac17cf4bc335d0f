/*
 * opt.h - quill-opt's helpers: splitting input, and checking
 * diagnostics against expected-* comments.
 */
#ifndef QUILL_TOOLS_OPT_H
#define QUILL_TOOLS_OPT_H

#include "ir/ir.h"

/* One `// -----` separated piece of the input. */
typedef struct opt_chunk {
  const char *text;     /* points into the input buffer */
  size_t len;
  uint32_t line_offset; /* lines of the input before this chunk */
} opt_chunk;

/* Split the input (or not: one chunk). *out is malloc'd (NULL on failure);
 * returns the number of chunks. */
size_t opt_split_input(const char *text, size_t len, bool split,
                       opt_chunk **out);

/* --verify-diagnostics: collects every diagnostic emitted on the context
 * and, per chunk, matches them against the chunk's expected-* comments. */
typedef struct opt_diag_collector opt_diag_collector;
opt_diag_collector *opt_diag_collector_create(quill_context *ctx);
void opt_diag_collector_destroy(opt_diag_collector *dc);
/* Match the diagnostics collected since the last call against the
 * expectations in the chunk; print mismatches to stderr (as
 * `file:line: error: expected error "..." was not produced` or
 * `file:line:col: error: unexpected error: ...`). QUILL_OK if all matched. */
quill_status opt_diag_collector_check(opt_diag_collector *dc,
                                      const char *file, const char *text,
                                      size_t len, uint32_t line_offset);

#endif /* QUILL_TOOLS_OPT_H */

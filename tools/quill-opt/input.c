/*
 * input.c - quill-opt input handling: split the input (read by
 * quill_read_file, ir/readfile.h) at `// -----` lines (--split-input-file)
 * keeping whole-file line numbers.
 *
 * A separator is a line whose first non-blank characters are `// -----`.
 * Chunk i starts on the line after separator i-1, so its line_offset is the
 * number of input lines before it; the parser adds that to every line it
 * reports, and diagnostics point into the original file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/quill-opt/opt.h"

/* Is the line starting at p (ending at end) a chunk separator? */
static bool is_separator(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  static const char sep[] = "// -----";
  size_t n = sizeof sep - 1;
  return (size_t)(end - p) >= n && memcmp(p, sep, n) == 0;
}

size_t opt_split_input(const char *text, size_t len, bool split,
                       opt_chunk **out) {
  size_t cap = 8, n = 0;
  opt_chunk *chunks = malloc(cap * sizeof *chunks);
  *out = NULL;
  if (!chunks)
    return 0;
  const char *start = text, *p = text, *end = text + len;
  uint32_t line = 0, start_line = 0;
  while (split && p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    const char *next = eol ? eol + 1 : end;
    if (is_separator(p, eol ? eol : end)) {
      if (n == cap) {
        opt_chunk *nc = realloc(chunks, 2 * cap * sizeof *chunks);
        if (!nc) {
          free(chunks);
          return 0;
        }
        chunks = nc;
        cap *= 2;
      }
      chunks[n++] = (opt_chunk){start, (size_t)(p - start), start_line};
      start = next;
      start_line = line + 1;
    }
    line++;
    p = next;
  }
  if (n == cap) {
    opt_chunk *nc = realloc(chunks, (cap + 1) * sizeof *chunks);
    if (!nc) {
      free(chunks);
      return 0;
    }
    chunks = nc;
  }
  chunks[n++] = (opt_chunk){start, (size_t)(end - start), start_line};
  *out = chunks;
  return n;
}

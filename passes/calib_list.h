/*
 * calib_list.h - the parser of calibration list files (passes/calib_data.c),
 * apart from the loading: what `quill_calib_dataset_load` does with a .txt
 * path is read the file, quill_calib_list_parse() its text, then read the
 * .npy files of each row. Parsing alone reads no file, so the parser can be
 * tested and fuzzed on text in memory (fuzz/fuzz_calib.c). Private to the
 * library (not a public header).
 *
 * The format (docs in passes/calib_data.h): one sample per line, either
 * `FILE.npy` (one-input graphs) or `NAME=FILE.npy ...` for every input in
 * any order; blank lines and lines starting with '#' are skipped.
 */
#ifndef QUILL_PASSES_CALIB_LIST_H
#define QUILL_PASSES_CALIB_LIST_H

#include "passes/calib_data.h"

/* A parsed list file: num_rows sample lines, each the num_inputs file
 * paths of that line in graph input order (relative paths joined to the
 * base directory), paths[row * num_inputs + input]; lines[row] is the
 * line number. Free with quill_calib_list_free(). */
typedef struct quill_calib_list {
  size_t num_rows, cap_rows;
  unsigned num_inputs;
  char **paths;
  unsigned *lines;
} quill_calib_list;

/* Parse the text of a list file (len bytes, need not be NUL-terminated)
 * for the inputs of ds without reading any sample. `name` locates the
 * diagnostics (name:line:1); `base_dir` is prefixed to relative paths (""
 * for none); parsing stops after max_rows sample lines (0: no limit).
 * Errors (an unknown input name, an input given twice or not at all, a
 * NUL byte, no sample line) are diagnostics plus QUILL_ERR_INVALID, or
 * QUILL_ERR_NOMEM; *out is then zeroed. Nothing is added to ds. */
quill_status quill_calib_list_parse(quill_calib_dataset *ds, const char *text,
                                    size_t len, const char *name,
                                    const char *base_dir, size_t max_rows,
                                    quill_calib_list *out);
/* Free the paths of a parsed list and zero it (no-op on a zeroed list). */
void quill_calib_list_free(quill_context *ctx, quill_calib_list *l);

#endif /* QUILL_PASSES_CALIB_LIST_H */

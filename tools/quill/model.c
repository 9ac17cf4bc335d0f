/*
 * model.c - load the model a quill subcommand works on.
 *
 *   *.qir      textual IR: read, parse (ir/parser.h), verify
 *   otherwise  an ONNX protobuf: frontends/onnx (which verifies)
 *
 * and pick the graph to run (--entry NAME, else the module's first).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/quill/quill.h"

bool quill_tool_is_qir(const char *path) {
  size_t n = strlen(path);
  return n >= 4 && !strcmp(path + n - 4, ".qir");
}

/* Read a whole text file with malloc (tool-side memory). */
static char *read_text(quill_context *ctx, const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    quill_error(ctx, quill_loc_file(ctx, path, 0, 0), "cannot open file: %s",
                strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0)
      break;
  }
  bool err = ferror(f);
  fclose(f);
  if (!buf || err) {
    quill_error(ctx, quill_loc_file(ctx, path, 0, 0), "cannot read file%s",
                buf ? "" : ": out of memory");
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

quill_module *quill_tool_load_model(quill_context *ctx, const char *path,
                                    const quill_onnx_options *onnx_opts) {
  if (!quill_tool_is_qir(path))
    return quill_onnx_import_file(ctx, path, onnx_opts);
  size_t len = 0;
  char *text = read_text(ctx, path, &len);
  if (!text)
    return NULL;
  quill_module *m = quill_parse_module(ctx, text, len, path, 0);
  free(text);
  if (m && quill_verify_module(m) != QUILL_OK) {
    quill_module_destroy(m);
    m = NULL;
  }
  return m;
}

quill_graph *quill_tool_entry_graph(quill_context *ctx, quill_module *m,
                                    const char *path, const char *entry) {
  quill_loc loc = quill_loc_file(ctx, path, 0, 0);
  if (entry) {
    quill_graph *g = quill_module_find_graph(m, entry);
    if (!g)
      quill_error(ctx, loc, "no function named '%s' in the model", entry);
    return g;
  }
  if (quill_module_num_graphs(m) == 0) {
    quill_error(ctx, loc, "the model has no function to run");
    return NULL;
  }
  return quill_module_graph(m, 0);
}

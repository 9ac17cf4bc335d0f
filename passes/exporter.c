/*
 * exporter.c - running a registered exporter (passes/plugin.h):
 *
 *   quill_exporter_run(ctx, m, "acme-qparams", "out.json")
 *     find the exporter     else "unknown exporter 'x' (registered: ...)"
 *     verify the module     (an exporter may assume verified IR)
 *     open PATH ("-": stdout), exporter->write(ctx, m, f), close
 *     on any failure remove PATH, so a failed export leaves no file
 *
 * The exporters themselves are registered by the application or by
 * plugins (registry in passes/plugin.c).
 */
#include <stdio.h>
#include <string.h>

#include "passes/plugin.h"

static quill_status unknown(quill_context *ctx, const char *name) {
  quill_strbuf known;
  quill_strbuf_init(&known, ctx);
  for (unsigned i = 0; i < quill_exporter_num_registered(ctx); ++i)
    quill_strbuf_printf(&known, "%s'%s'", i ? ", " : "",
                        quill_exporter_registered(ctx, i)->name);
  quill_status st = quill_error(
      ctx, quill_loc_unknown(),
      "unknown exporter '%s' (registered: %s; exporters come from plugins: "
      "--load-pass-plugin)",
      name ? name : "", known.len ? quill_strbuf_str(&known) : "none");
  quill_strbuf_free(&known);
  return st;
}

quill_status quill_exporter_run(quill_context *ctx, const quill_module *m,
                                const char *name, const char *path) {
  const quill_exporter *e = quill_exporter_find(ctx, name);
  if (!e)
    return unknown(ctx, name);
  if (!path || !*path)
    return quill_error(ctx, quill_loc_unknown(),
                       "exporter '%s': no output file", e->name);
  quill_status st = quill_verify_module(m);
  if (st)
    return st;
  bool to_stdout = strcmp(path, "-") == 0;
  quill_loc loc = quill_loc_file(ctx, path, 0, 0);
  FILE *f = to_stdout ? stdout : fopen(path, "wb");
  if (!f) {
    quill_error(ctx, loc, "cannot open output file");
    return QUILL_ERR_IO;
  }
  unsigned errors = quill_diag_error_count(ctx);
  st = e->write(ctx, m, f);
  if (!st && st != QUILL_ERR_NOMEM && ferror(f))
    st = QUILL_ERR_IO;
  if (to_stdout) {
    if (fflush(f) != 0 && !st)
      st = QUILL_ERR_IO;
  } else if (fclose(f) != 0 && !st) {
    st = QUILL_ERR_IO;
  }
  if (st == QUILL_ERR_IO)
    quill_error(ctx, loc, "cannot write file");
  else if (st && st != QUILL_ERR_NOMEM &&
           quill_diag_error_count(ctx) == errors)
    quill_error(ctx, loc, "exporter '%s' failed", e->name);
  if (st && !to_stdout)
    remove(path);
  return st;
}

/*
 * exporter.c - running a registered exporter (passes/plugin.h):
 *
 *   quill_exporter_run(ctx, m, "acme-qparams", "out.json")
 *     find the exporter     else "unknown exporter 'x' (registered: ...)"
 *     verify the module     (an exporter may assume verified IR)
 *     exporter->write(ctx, m, f) through quill_write_file_stream: a
 *     temporary file renamed over PATH ("-": stdout) when complete, so a
 *     failed export leaves no file and an old PATH untouched
 *
 * The exporters themselves are registered by the application or by
 * plugins (registry in passes/plugin.c).
 */
#include <stdio.h>
#include <string.h>

#include "ir/writefile.h"
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

typedef struct export_call {
  const quill_exporter *e;
  const quill_module *m;
  unsigned errors; /* the context's error count before the exporter ran */
  const char *path;
} export_call;

/* The exporter's write, with a diagnostic when it failed without one. */
static quill_status write_export(quill_context *ctx, FILE *f, void *arg) {
  const export_call *c = arg;
  quill_status st = c->e->write(ctx, c->m, f);
  if (st && st != QUILL_ERR_NOMEM && quill_diag_error_count(ctx) == c->errors)
    quill_error(ctx, quill_loc_file(ctx, c->path, 0, 0),
                "exporter '%s' failed", c->e->name);
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
  export_call call = {e, m, quill_diag_error_count(ctx), path};
  return quill_write_file_stream(ctx, path, write_export, &call);
}

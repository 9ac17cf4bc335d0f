/*
 * model.c - load the model a quill subcommand works on (quill_model_load
 * of the C API):
 *
 *   *.qir      textual IR: read, parse (ir/parser.h), verify
 *   otherwise  an ONNX protobuf: frontends/onnx (which verifies)
 *
 * pick the graph to run (--entry NAME, else the module's first), and load
 * the pass plugins of --load-pass-plugin.
 */
#include <string.h>

#include "quill/quill.h"
#include "tools/quill/quill.h"

bool quill_tool_is_qir(const char *path) {
  size_t n = strlen(path);
  return n >= 4 && !strcmp(path + n - 4, ".qir");
}

quill_module *quill_tool_load_model(quill_context *ctx, const char *path,
                                    const quill_onnx_options *onnx_opts) {
  quill_model_options o = {QUILL_MODEL_AUTO, onnx_opts};
  return quill_model_load(ctx, path, &o);
}

quill_status quill_tool_load_plugins(quill_context *ctx,
                                     const char *const *paths, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    quill_status st = quill_plugin_load(ctx, paths[i]);
    if (st)
      return st;
  }
  return QUILL_OK;
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

quill_status quill_tool_run_pipeline(quill_context *ctx, quill_module *m,
                                     const char *pipeline, bool statistics) {
  quill_pass_manager *pm = quill_pass_manager_create(ctx);
  if (!pm)
    return QUILL_ERR_NOMEM;
  quill_pass_manager_options o;
  memset(&o, 0, sizeof o);
  o.verify_each = true;
  o.statistics = statistics;
  quill_pass_manager_set_options(pm, &o);
  quill_status st = quill_pass_manager_parse_pipeline(pm, pipeline);
  if (!st)
    st = quill_pass_manager_run(pm, m);
  if (statistics)
    quill_pass_manager_report(pm);
  quill_pass_manager_destroy(pm);
  return st;
}

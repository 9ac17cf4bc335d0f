/*
 * model.c - the one-call entry points for models: load (ONNX or textual
 * IR, from a file or memory), pick the entry graph, run it; and the
 * library version.
 *
 *   quill_model_load(ctx, "m.onnx", NULL)  --ONNX import (verifies)-->
 *   quill_model_load(ctx, "m.qir", NULL)   --read, parse, verify-->   module
 *   quill_run(m, NULL, in, n, out, n)      --quill_module_entry-->
 *                                          --quill_ref_run--> outputs
 *
 * Files are read through the context's allocator. The ONNX importer reads
 * its own files (it resolves external data next to the model).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ir/readfile.h"
#include "quill/quill.h"
#include "targets/llvm/llvm_target.h"

#define STR_(x) #x
#define STR(x) STR_(x)

const char *quill_version(void) {
  return STR(QUILL_VERSION_MAJOR) "." STR(QUILL_VERSION_MINOR) "." STR(
      QUILL_VERSION_PATCH);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = s ? strlen(s) : 0, k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static quill_model_format pick_format(const quill_model_options *o,
                                      const char *name) {
  quill_model_format f = o ? o->format : QUILL_MODEL_AUTO;
  if (f == QUILL_MODEL_AUTO)
    f = ends_with(name, ".qir") ? QUILL_MODEL_QIR : QUILL_MODEL_ONNX;
  return f;
}

/* Parse and verify textual IR. */
static quill_module *load_qir(quill_context *ctx, const char *text,
                              size_t len, const char *name) {
  quill_module *m = quill_parse_module(ctx, text, len, name, 0);
  if (m && quill_verify_module(m) != QUILL_OK) {
    quill_module_destroy(m);
    m = NULL;
  }
  return m;
}

/* Read a whole file through the context (ir/readfile.h); *cap gets the
 * allocation size. NULL after a diagnostic located at the path. */
static char *read_file(quill_context *ctx, const char *path, size_t *len,
                       size_t *cap) {
  char *buf;
  bool opened;
  int err = quill_read_file(ctx, path, 0, &buf, len, cap, &opened);
  if (err && !opened)
    quill_error(ctx, quill_loc_file(ctx, path, 0, 0), "cannot open file: %s",
                quill_read_strerror(err, 0));
  else if (err)
    quill_error(ctx, quill_loc_file(ctx, path, 0, 0), "cannot read file: %s",
                err == ENOMEM ? "out of memory" : quill_read_strerror(err, 0));
  return buf;
}

quill_module *quill_model_load(quill_context *ctx, const char *path,
                               const quill_model_options *opts) {
  if (!path) {
    quill_error(ctx, quill_loc_unknown(), "no model path given");
    return NULL;
  }
  if (pick_format(opts, path) == QUILL_MODEL_ONNX)
    return quill_onnx_import_file(ctx, path, opts ? opts->onnx : NULL);
  size_t len = 0, cap = 0;
  char *text = read_file(ctx, path, &len, &cap);
  if (!text)
    return NULL;
  quill_module *m = load_qir(ctx, text, len, path);
  quill_free(ctx, text, cap);
  return m;
}

quill_module *quill_model_load_buffer(quill_context *ctx, const void *data,
                                      size_t len, const char *name,
                                      const quill_model_options *opts) {
  const char *shown = name ? name : "<buffer>";
  if (!data && len) {
    quill_error(ctx, quill_loc_file(ctx, shown, 0, 0), "no model data");
    return NULL;
  }
  if (pick_format(opts, name) == QUILL_MODEL_ONNX)
    return quill_onnx_import_buffer(ctx, data, len, shown,
                                    opts ? opts->onnx : NULL);
  return load_qir(ctx, data, len, shown);
}

quill_graph *quill_module_entry(const quill_module *m, const char *name) {
  quill_context *ctx = quill_module_context(m);
  if (name) {
    quill_graph *g = quill_module_find_graph(m, name);
    if (!g)
      quill_error(ctx, quill_loc_unknown(),
                  "no function named '%s' in the module", name);
    return g;
  }
  if (quill_module_num_graphs(m) == 0) {
    quill_error(ctx, quill_loc_unknown(), "the module has no function");
    return NULL;
  }
  return quill_module_graph(m, 0);
}

quill_status quill_run(quill_module *m, const quill_run_options *opts,
                       const quill_tensor *inputs, unsigned n_in,
                       quill_tensor *outputs, unsigned n_out) {
  quill_context *ctx = quill_module_context(m);
  const char *target = opts && opts->target ? opts->target : "reference";
  if (strcmp(target, "reference") != 0 && strcmp(target, "llvm") != 0) {
    quill_error(ctx, quill_loc_unknown(),
                "target '%s' cannot run models (targets that run: "
                "reference, llvm)",
                target);
    return QUILL_ERR_UNSUPPORTED;
  }
  quill_graph *g = quill_module_entry(m, opts ? opts->entry : NULL);
  if (!g)
    return QUILL_ERR_INVALID;
  if (!strcmp(target, "reference"))
    return quill_ref_run(ctx, g, inputs, n_in, outputs, n_out);
  /* "llvm": compiled for the host in process (LLJIT), then run */
  quill_llvm_jit *j = NULL;
  quill_status st = quill_llvm_jit_create(ctx, g, NULL, &j);
  if (!st)
    st = quill_llvm_jit_run(j, inputs, n_in, outputs, n_out);
  if (j)
    quill_llvm_jit_destroy(j);
  return st;
}

/*
 * compile.c - the one-call entry points that turn a module into something
 * to ship: ONNX (targets/onnx), object code (the LLVM target) and TFLite
 * FlatBuffers (the TFLite target).
 *
 * Which targets this library has is one table (targets[] below). The LLVM
 * target is developed on its own branch: until it is merged, its entry
 * points are stubs that report
 *
 *   error: target 'llvm' is not built into this library
 *
 * and return QUILL_ERR_UNSUPPORTED (marked PENDING in include/quill/
 * compile.h). Wiring one in means: set `available` in its row and replace
 * the stub bodies with calls into targets/<name>/.
 */
#include <string.h>

#include "quill/quill.h"
#include "targets/tflite/tflite_export.h"

static const struct {
  const char *name;
  bool available;
} targets[] = {
    {"reference", true}, /* targets/reference: the interpreter */
    {"onnx", true},      /* targets/onnx: ONNX export */
    {"llvm", false},     /* PENDING: targets/llvm (branch llvm) */
    {"tflite", true},    /* targets/tflite: TFLite FlatBuffers */
};

bool quill_target_available(const char *name) {
  for (size_t i = 0; name && i < sizeof targets / sizeof targets[0]; ++i)
    if (strcmp(targets[i].name, name) == 0)
      return targets[i].available;
  return false;
}

void quill_compile_options_init(quill_compile_options *o) {
  memset(o, 0, sizeof *o);
  o->opt_level = 3;
  o->threads = 1;
}

/* The error of a stub entry point: QUILL_ERR_UNSUPPORTED after a
 * diagnostic. Clears the out-parameters. */
static quill_status not_built(quill_module *m, const char *target,
                              void **data, size_t *len) {
  if (data)
    *data = NULL;
  if (len)
    *len = 0;
  quill_error(quill_module_context(m), quill_loc_unknown(),
              "target '%s' is not built into this library", target);
  return QUILL_ERR_UNSUPPORTED;
}

static quill_onnx_export_options onnx_options(const quill_compile_options *o) {
  quill_onnx_export_options eo;
  memset(&eo, 0, sizeof eo);
  if (o) {
    eo.opset = o->onnx_opset;
    eo.omit_value_info = o->onnx_omit_value_info;
  }
  return eo;
}

quill_status quill_export_onnx(quill_module *m,
                               const quill_compile_options *opts,
                               void **data, size_t *len) {
  *data = NULL;
  *len = 0;
  quill_graph *g = quill_module_entry(m, opts ? opts->entry : NULL);
  if (!g)
    return QUILL_ERR_INVALID;
  quill_onnx_export_options eo = onnx_options(opts);
  return quill_onnx_export_buffer(quill_module_context(m), g, &eo, data, len);
}

quill_status quill_export_onnx_file(quill_module *m,
                                    const quill_compile_options *opts,
                                    const char *path) {
  quill_graph *g = quill_module_entry(m, opts ? opts->entry : NULL);
  if (!g)
    return QUILL_ERR_INVALID;
  quill_onnx_export_options eo = onnx_options(opts);
  return quill_onnx_export_file(quill_module_context(m), g, path, &eo);
}

/* ---- PENDING: the LLVM target ------------------------------------------- */

quill_status quill_compile_object(quill_module *m,
                                  const quill_compile_options *opts,
                                  void **data, size_t *len) {
  (void)opts;
  return not_built(m, "llvm", data, len);
}

quill_status quill_compile_object_file(quill_module *m,
                                       const quill_compile_options *opts,
                                       const char *path) {
  (void)opts;
  (void)path;
  return not_built(m, "llvm", NULL, NULL);
}

quill_status quill_compile_header_file(quill_module *m,
                                       const quill_compile_options *opts,
                                       const char *path) {
  (void)opts;
  (void)path;
  return not_built(m, "llvm", NULL, NULL);
}

/* ---- the TFLite target -------------------------------------------------- */

static quill_tflite_export_options
tflite_options(const quill_compile_options *o) {
  quill_tflite_export_options to;
  memset(&to, 0, sizeof to);
  if (o)
    to.allow_custom_ops = o->allow_custom_ops;
  return to;
}

quill_status quill_compile_tflite(quill_module *m,
                                  const quill_compile_options *opts,
                                  void **data, size_t *len) {
  *data = NULL;
  *len = 0;
  quill_graph *g = quill_module_entry(m, opts ? opts->entry : NULL);
  if (!g)
    return QUILL_ERR_INVALID;
  quill_tflite_export_options to = tflite_options(opts);
  return quill_tflite_export_buffer(quill_module_context(m), g, &to, data,
                                    len);
}

quill_status quill_compile_tflite_file(quill_module *m,
                                       const quill_compile_options *opts,
                                       const char *path) {
  quill_graph *g = quill_module_entry(m, opts ? opts->entry : NULL);
  if (!g)
    return QUILL_ERR_INVALID;
  quill_tflite_export_options to = tflite_options(opts);
  return quill_tflite_export_file(quill_module_context(m), g, path, &to);
}

/*
 * compile.c - the one-call entry points that turn a module into something
 * to ship: ONNX (targets/onnx), object code (the LLVM target) and TFLite
 * FlatBuffers (the TFLite target).
 *
 * Which targets this library has is one table (targets[] below); a target
 * that is not built in reports "target 'X' is not built into this library"
 * (QUILL_ERR_UNSUPPORTED).
 *
 * Object code goes through targets/llvm: quill_llvm_compile, then
 * quill_llvm_emit_file / _header. The in-memory variant emits to a
 * temporary file and reads it back (the LLVM target writes files
 * atomically; one code path).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/readfile.h"
#include "quill/quill.h"
#include "targets/llvm/llvm_target.h"
#include "targets/tflite/tflite_export.h"

static const struct {
  const char *name;
  bool available;
} targets[] = {
    {"reference", true}, /* targets/reference: the interpreter */
    {"onnx", true},      /* targets/onnx: ONNX export */
    {"llvm", true},      /* targets/llvm: object code, headers, JIT */
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

/* ---- the LLVM target ------------------------------------------------------ */

/* opts -> the LLVM target's options; false after a diagnostic for a bad
 * isa name. */
static bool llvm_options(quill_context *ctx, const quill_compile_options *o,
                         quill_llvm_options *lo) {
  quill_llvm_options_init(lo);
  if (!o)
    return true;
  lo->triple = o->triple;
  lo->cpu = o->cpu;
  lo->features = o->features;
  lo->opt_level = o->opt_level;
  lo->threads = o->threads ? o->threads : 1;
  if (o->name)
    lo->name = o->name;
  if (o->isa && !quill_llvm_isa_parse(o->isa, &lo->isa)) {
    quill_error(ctx, quill_loc_unknown(),
                "unknown isa '%s' (auto, portable, avx2, avx-vnni, "
                "avx512-vnni, amx, neon-dot, neon-i8mm)",
                o->isa);
    return false;
  }
  return true;
}

/* Compile the entry graph of m, after adapting its IO to opts->io (on the
 * module itself, as `quill compile --io` does). */
static quill_status llvm_compile(quill_module *m,
                                 const quill_compile_options *opts,
                                 quill_llvm_compiled **out) {
  quill_context *ctx = quill_module_context(m);
  *out = NULL;
  quill_graph *g = quill_module_entry(m, opts ? opts->entry : NULL);
  if (!g)
    return QUILL_ERR_INVALID;
  quill_llvm_io io = QUILL_LLVM_IO_MODEL;
  const char *ios = opts ? opts->io : NULL;
  if (ios && !strcmp(ios, "int8"))
    io = QUILL_LLVM_IO_INT8;
  else if (ios && !strcmp(ios, "float"))
    io = QUILL_LLVM_IO_FLOAT;
  else if (ios && strcmp(ios, "model"))
    return quill_error(ctx, quill_loc_unknown(),
                       "unknown io mode '%s' (model, int8, float)", ios);
  quill_llvm_options lo;
  if (!llvm_options(ctx, opts, &lo))
    return QUILL_ERR_INVALID;
  quill_status st = quill_llvm_adapt_io(ctx, g, io);
  return st ? st : quill_llvm_compile(ctx, g, &lo, out);
}

static quill_llvm_emit llvm_emit_kind(const quill_compile_options *opts) {
  quill_compile_emit e = opts ? opts->emit : QUILL_EMIT_OBJECT;
  return e == QUILL_EMIT_ASM       ? QUILL_LLVM_EMIT_ASM
         : e == QUILL_EMIT_LLVM_IR ? QUILL_LLVM_EMIT_IR
                                   : QUILL_LLVM_EMIT_OBJ;
}

quill_status quill_compile_object_file(quill_module *m,
                                       const quill_compile_options *opts,
                                       const char *path) {
  quill_llvm_compiled *c;
  quill_status st = llvm_compile(m, opts, &c);
  if (!st)
    st = quill_llvm_emit_file(quill_module_context(m), c, llvm_emit_kind(opts),
                              path);
  quill_llvm_compiled_destroy(c);
  return st;
}

quill_status quill_compile_object(quill_module *m,
                                  const quill_compile_options *opts,
                                  void **data, size_t *len) {
  quill_context *ctx = quill_module_context(m);
  *data = NULL;
  *len = 0;
  const char *dir = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/quill-object-XXXXXX",
           dir && *dir ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0)
    return quill_error(ctx, quill_loc_unknown(),
                       "cannot create a temporary file in '%s'",
                       dir && *dir ? dir : "/tmp");
  close(fd);
  quill_status st = quill_compile_object_file(m, opts, path);
  char *buf = NULL;
  size_t n = 0, cap = 0;
  bool opened;
  int err = st ? 0 : quill_read_file(ctx, path, 0, &buf, &n, &cap, &opened);
  if (err == ENOMEM)
    st = QUILL_ERR_NOMEM;
  else if (err || (!st && n == 0))
    st = quill_error(ctx, quill_loc_file(ctx, path, 0, 0),
                     "cannot read the compiled object back: %s",
                     err ? quill_read_strerror(err, 0) : "empty file");
  if (!st) {
    /* the caller frees *len bytes: give back the NUL and the slack */
    char *fit = quill_realloc(ctx, buf, cap, n);
    if (fit) {
      *data = fit;
      *len = n;
    } else {
      st = QUILL_ERR_NOMEM;
    }
  }
  if (st && buf)
    quill_free(ctx, buf, cap);
  unlink(path);
  return st;
}

quill_status quill_compile_header_file(quill_module *m,
                                       const quill_compile_options *opts,
                                       const char *path) {
  quill_llvm_compiled *c;
  quill_status st = llvm_compile(m, opts, &c);
  if (!st)
    st = quill_llvm_emit_header(quill_module_context(m), c, path);
  quill_llvm_compiled_destroy(c);
  return st;
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

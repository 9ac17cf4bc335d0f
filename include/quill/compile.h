/*
 * quill/compile.h - turning a module into something to ship: an ONNX
 * model (targets/onnx/onnx_export.h, float or QDQ), object code from the
 * LLVM target, or a TFLite FlatBuffer; each in memory or to a file.
 *
 * quill_target_available() tells which targets are built into the library
 * (all four in a normal build); an absent one fails with
 * QUILL_ERR_UNSUPPORTED and "target 'X' is not built into this library".
 *
 * Buffers returned in *data are allocated through the context's allocator:
 * release them with quill_free(ctx, *data, *len). On failure *data is NULL
 * and *len 0.
 */
#ifndef QUILL_API_COMPILE_H
#define QUILL_API_COMPILE_H

#include "ir.h"
#include "targets/onnx/onnx_export.h"
#include "targets/tflite/tflite_export.h"

QUILL_BEGIN_DECLS

/* What quill_compile_object emits. */
typedef enum quill_compile_emit {
  QUILL_EMIT_OBJECT = 0, /* an ELF/COFF/Mach-O object file */
  QUILL_EMIT_ASM,        /* assembly text */
  QUILL_EMIT_LLVM_IR,    /* textual LLVM IR */
} quill_compile_emit;

typedef struct quill_compile_options {
  /* The graph to compile (quill_module_entry): NULL compiles the first. */
  const char *entry;

  /* ---- object code (target "llvm") ---- */
  const char *triple;   /* NULL: the host's */
  const char *cpu;      /* NULL: the host CPU for the host triple, else
                           "generic" */
  const char *features; /* "+avx2,-avx512f"; NULL: the host's features for
                           the host triple, else none */
  unsigned opt_level;   /* 0..3 (default 3) */
  unsigned threads;     /* 1: single-threaded code (default) */
  const char *name;     /* prefix of the generated entry points, a C
                           identifier: NAME_run(...) (NULL: "model") */
  const char *isa;      /* integer kernel path: NULL or "auto", "portable",
                           "avx2", "avx-vnni", "avx512-vnni", "amx",
                           "neon-dot", "neon-i8mm" */
  const char *io;       /* NULL or "model": the graph's own IO types;
                           "int8": quantized IO; "float": float IO */
  quill_compile_emit emit; /* default QUILL_EMIT_OBJECT */

  /* ---- TFLite FlatBuffer (target "tflite") ---- */
  bool allow_custom_ops; /* ops without a builtin become CUSTOM ops */

  /* ---- ONNX (target "onnx") ---- */
  int64_t onnx_opset;        /* 0: the lowest that fits (13..17) */
  bool onnx_omit_value_info; /* no value_info for intermediate values */
} quill_compile_options;

/* Set the defaults above (opt_level 3, threads 1, the rest 0/NULL). */
void quill_compile_options_init(quill_compile_options *o);

/* True if the named target ("reference", "onnx", "llvm", "tflite") is
 * built into this library. Never emits diagnostics. */
bool quill_target_available(const char *name);

/* ---- ONNX --------------------------------------------------------------- */

/* Export the entry graph of m (opts may be NULL) as an ONNX model: float
 * graphs as plain ONNX, the reference quantized form as QDQ (see
 * targets/onnx/onnx_export.h for the mapping and the errors). In memory:
 * *data, *len as described at the top. */
quill_status quill_export_onnx(quill_module *m,
                               const quill_compile_options *opts,
                               void **data, size_t *len);
/* The same, written to `path` (QUILL_ERR_IO with a diagnostic if it
 * cannot be written). */
quill_status quill_export_onnx_file(quill_module *m,
                                    const quill_compile_options *opts,
                                    const char *path);

/* ---- object code (target "llvm") ------------------------------------------ */

/* Compile the entry graph of m to object code (or assembly, or LLVM IR:
 * opts->emit) for the target machine in opts, into memory. The generated
 * code exports NAME_run(inputs..., outputs..., scratch) and
 * NAME_run_argv(void **); quill_compile_header_file writes the matching C
 * header. Errors: an op the target cannot lower (QUILL_ERR_UNSUPPORTED, at
 * the op), a bad triple/cpu/features/isa/name/io (QUILL_ERR_INVALID).
 * opts->io other than "model" rewrites the entry graph's signature in
 * place (as `quill compile --io`). The object is written to a temporary
 * file (in $TMPDIR or /tmp) and read back. */
quill_status quill_compile_object(quill_module *m,
                                  const quill_compile_options *opts,
                                  void **data, size_t *len);
/* The same, written to `path` (atomically: nothing is left on failure). */
quill_status quill_compile_object_file(quill_module *m,
                                       const quill_compile_options *opts,
                                       const char *path);
/* Write the C header for the object code quill_compile_object produces
 * with the same options: entry points, each input's and output's shape,
 * element type and quantization, the scratch size. */
quill_status quill_compile_header_file(quill_module *m,
                                       const quill_compile_options *opts,
                                       const char *path);

/* ---- TFLite (target "tflite") ------------------------------------------- */

/* Write the entry graph of m as a TFLite FlatBuffer (schema 3: int8
 * integer graphs or QDQ graphs with NHWC layout, float graphs; see
 * targets/tflite/tflite_export.h), into memory. Errors: an op TFLite
 * cannot express or a break of the int8 spec (at the op), a model over
 * 2 GB (QUILL_ERR_UNSUPPORTED). */
quill_status quill_compile_tflite(quill_module *m,
                                  const quill_compile_options *opts,
                                  void **data, size_t *len);
/* The same, written to `path` (nothing is written on failure;
 * QUILL_ERR_IO with a diagnostic if it cannot be written). */
quill_status quill_compile_tflite_file(quill_module *m,
                                       const quill_compile_options *opts,
                                       const char *path);

QUILL_END_DECLS

#endif /* QUILL_API_COMPILE_H */

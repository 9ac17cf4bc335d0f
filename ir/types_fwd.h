/*
 * types_fwd.h - the opaque handles every part of Quill passes around.
 *
 * All IR objects are opaque: struct bodies live in ir/ *_impl.h and only
 * ir/ *.c sees them. Everything else goes through accessors. The pointer is
 * kept visible (no LLVM-style Ref typedefs) so `const quill_op *` works.
 *
 * Ownership in one picture:
 *
 *   quill_context ──owns──> uniqued types, attributes, identifiers,
 *        │                  source buffers, diagnostic handler, allocator
 *        └── quill_module ──owns──> quill_graph ──arena──> ops, values, uses
 */
#ifndef QUILL_IR_TYPES_FWD_H
#define QUILL_IR_TYPES_FWD_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* Every public header (the ones installed under <prefix>/include/quill/,
 * listed in include/quill/public-headers.txt) wraps its declarations in
 * QUILL_BEGIN_DECLS / QUILL_END_DECLS. The library is compiled with
 * -fvisibility=hidden, so exactly the functions and data declared between
 * these markers are exported from libquill.so; everything else (file-local
 * helpers, the private *_impl.h headers, kernels) stays internal. For C++
 * callers the markers also give C linkage. */
#ifdef __cplusplus
#define QUILL_BEGIN_DECLS                                                     \
  _Pragma("GCC visibility push(default)") extern "C" {
#define QUILL_END_DECLS                                                       \
  }                                                                           \
  _Pragma("GCC visibility pop")
#else
#define QUILL_BEGIN_DECLS _Pragma("GCC visibility push(default)")
#define QUILL_END_DECLS _Pragma("GCC visibility pop")
#endif

typedef struct quill_context quill_context;
typedef struct quill_module quill_module;
typedef struct quill_graph quill_graph;
typedef struct quill_op quill_op;
typedef struct quill_value quill_value;
typedef struct quill_type quill_type;
typedef struct quill_attr quill_attr;
typedef struct quill_strbuf quill_strbuf;
/* A host tensor (its body: targets/reference/ref.h). Declared here because
 * custom op evaluators (ir/custom_op.h) take tensors. */
typedef struct quill_tensor quill_tensor;

/* An interned identifier: two equal strings from one context are the same
 * pointer, so comparing identifiers is comparing pointers. */
typedef const char *quill_ident;

/* Status codes. QUILL_OK is 0; every failure is non-zero and, unless stated
 * otherwise, a diagnostic has already been emitted through the context. */
typedef enum quill_status {
  QUILL_OK = 0,
  QUILL_ERR_INVALID,     /* bad input: syntax, verifier, unsupported feature */
  QUILL_ERR_NOMEM,       /* the allocator returned NULL */
  QUILL_ERR_IO,          /* a file could not be read or written */
  QUILL_ERR_UNSUPPORTED, /* valid input that this component cannot handle */
  QUILL_ERR_INTERNAL,    /* a bug in Quill */
} quill_status;

/* Where an op (or a diagnostic) comes from: a position in a text file, or
 * the name of an imported node (ONNX node name). `file` and `name` are
 * interned in the context (or NULL). A zero loc (all NULL/0) is "unknown". */
typedef struct quill_loc {
  quill_ident file; /* source file name, or NULL */
  uint32_t line;    /* 1-based; 0 if unknown */
  uint32_t col;     /* 1-based; 0 if unknown */
  quill_ident name; /* imported node name, or NULL */
} quill_loc;

#endif /* QUILL_IR_TYPES_FWD_H */

/*
 * cg_compiled.h - private to targets/llvm: the compiled-model object shared
 * by codegen.c (which fills it), emit.c (files, header) and jit.c.
 */
#ifndef QUILL_TARGETS_LLVM_CG_COMPILED_H
#define QUILL_TARGETS_LLVM_CG_COMPILED_H

#include <assert.h>

#include "targets/llvm/cg.h"

struct quill_llvm_compiled {
  quill_context *ctx;
  LLVMContextRef lc;
  bool owns_lc;          /* AOT owns its LLVMContext; the JIT's belongs to
                            its thread-safe context */
  LLVMModuleRef mod;     /* NULL once handed to the JIT */
  LLVMTargetMachineRef tm;
  cg_target tgt;
  size_t scratch_size;
  unsigned n_in, n_out;
  char *name;            /* entry prefix (quill_strdup) */
  char *header;          /* the C header text (quill_strdup) */
};

/* Compile g into a module in `lc` (NULL: a new context owned by the
 * result). `jit` selects the JIT's thread-pool calling convention. */
quill_status cg_compile(quill_context *ctx, const quill_graph *g,
                        const quill_llvm_options *opts, LLVMContextRef lc,
                        bool jit, quill_llvm_compiled **out);
/* Generate the C header text into r->header (emit.c). */
quill_status cg_header_text(cg *c, quill_llvm_compiled *r);

#endif /* QUILL_TARGETS_LLVM_CG_COMPILED_H */

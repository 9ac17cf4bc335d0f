/*
 * quill/run.h - running models: host tensors, the reference interpreter
 * (targets/reference/ref.h) and quill_run, which picks the graph and the
 * execution target.
 */
#ifndef QUILL_API_RUN_H
#define QUILL_API_RUN_H

#include "ir.h"
#include "targets/reference/ref.h"

QUILL_BEGIN_DECLS

typedef struct quill_run_options {
  /* The graph to run (quill_module_entry): NULL runs the first. */
  const char *entry;
  /* Who runs it: NULL or "reference" (the reference interpreter), or
   * "llvm" (compiled for the host in process by the LLVM target's JIT,
   * then run; bit-exact with the interpreter on integer ops). */
  const char *target;
} quill_run_options;

/* Run a graph of module m. `inputs` holds one tensor per graph argument,
 * in order, each of exactly the argument's type (only read). On success
 * `outputs` (n_out == number of graph results) gets one new tensor per
 * result, allocated through the context: free them with
 * quill_ref_tensors_free(ctx, outputs, n_out). opts may be NULL.
 * Errors (diagnostics emitted, outputs left zeroed): a wrong input count
 * or type (QUILL_ERR_INVALID, naming the argument), an op the target
 * cannot run (QUILL_ERR_UNSUPPORTED, at the op), a kernel failure at run
 * time (QUILL_ERR_INVALID), an unknown target (QUILL_ERR_UNSUPPORTED),
 * QUILL_ERR_NOMEM. */
quill_status quill_run(quill_module *m, const quill_run_options *opts,
                       const quill_tensor *inputs, unsigned n_in,
                       quill_tensor *outputs, unsigned n_out);

QUILL_END_DECLS

#endif /* QUILL_API_RUN_H */

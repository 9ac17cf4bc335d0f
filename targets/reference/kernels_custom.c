/*
 * kernels_custom.c - the reference kernel of `custom` ops: the evaluator
 * registered for the op's `name` (ir/custom_op.h), usually by the plugin
 * that also produces those ops.
 *
 *   custom {name = "acme.conv_add_relu"} --quill_custom_op_find(ctx, name)-->
 *     kind->eval(ctx, op, inputs, outputs)
 *
 * The support check (run on every op before a graph runs) fails for a name
 * with no registered kind or a kind without an evaluator, so `quill run`
 * reports the op before anything is computed. The evaluator's own failures
 * are its diagnostics; a failure status without one gets a generic error
 * here, so that a run never fails silently.
 */
#include "targets/reference/kernels.h"

const char *quill_ref_supports_custom(const quill_op *op) {
  const char *name = quill_op_custom_name(op);
  const quill_custom_op *k =
      name ? quill_custom_op_find(quill_op_context(op), name) : NULL;
  if (!k)
    return "no custom op of this name is registered: load the plugin that "
           "defines it";
  if (!k->eval)
    return "its registered kind has no reference evaluator";
  return NULL;
}

QUILL_REF_KERNEL(quill_ref_kernel_custom) {
  const char *why = quill_ref_supports_custom(op);
  if (why)
    return quill_ref_op_error(ctx, op, why);
  const quill_custom_op *k = quill_custom_op_find(ctx, quill_op_custom_name(op));
  unsigned errors = quill_diag_error_count(ctx);
  quill_status st = k->eval(ctx, op, in, out);
  if (st && st != QUILL_ERR_NOMEM && quill_diag_error_count(ctx) == errors)
    quill_error(ctx, quill_op_loc(op),
                "custom op '%s': its evaluator failed without a diagnostic",
                k->name);
  return st;
}

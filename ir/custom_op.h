/*
 * custom_op.h - the `custom` op and the kinds of custom ops registered at
 * run time.
 *
 * Quill's opcodes are static (ir/ops.def feeds opcode-indexed tables in
 * every pass and target), so a plugin cannot add an opcode. It adds a
 * *kind* of the one generic opcode instead:
 *
 *   %y = custom %x, %w, %b, %skip {name = "acme.conv_add_relu",
 *                                  strides = [1, 1], ...} : tensor<...>
 *
 * The op takes any operands, has at least one result and may carry any
 * attributes; its string attribute `name` ("vendor.op": two or more
 * segments of [A-Za-z0-9_] joined by '.') says what it is. The verifier
 * checks only that much, so IR with custom ops parses, prints, verifies and
 * moves through passes without knowing them. What a kind means is
 * registered per context:
 *
 *   static const quill_custom_op conv_add_relu = {
 *       .name = "acme.conv_add_relu",
 *       .summary = "qconv2d + qadd + relu as one int8 kernel",
 *       .verify = verify_car,   // optional: extra checks, after the generic
 *       .eval = eval_car,       // optional: the reference evaluator
 *   };
 *   quill_custom_op_register(ctx, &conv_add_relu);  // or from a plugin:
 *   quill_plugin_register_custom_op(reg, &conv_add_relu)  (passes/plugin.h)
 *
 * Then the verifier also runs `verify` on every custom op of that name and
 * the reference interpreter (`quill run`, calibration) runs `eval`; a
 * custom op whose kind is not registered (or has no evaluator) is reported
 * as not supported by the reference target. Custom ops are treated as pure:
 * `dce` erases unused ones and `cse` merges identical ones.
 * Other targets: TFLite writes a CUSTOM op with custom code NAME and no
 * options; ONNX a node of op type "op" in domain "vendor" (the part of the
 * name before the last '.') with the op's other attributes.
 *
 * The registry belongs to the context (nothing global); descriptors are
 * borrowed and must outlive it (usually static const, in the application
 * or in a plugin that stays loaded until the context is destroyed).
 */
#ifndef QUILL_IR_CUSTOM_OP_H
#define QUILL_IR_CUSTOM_OP_H

#include "graph.h"

QUILL_BEGIN_DECLS

/* The reference evaluator of a custom op kind: read `inputs` (one per
 * operand, typed as the operands) and fill `outputs` (one per result,
 * allocated and zeroed by the caller from the result types), as a
 * reference kernel does (targets/reference/ref.h, quill_ref_kernel_fn). On
 * failure emit an error at the op (quill_op_loc) and return its status. */
typedef quill_status (*quill_custom_eval_fn)(quill_context *ctx,
                                             const quill_op *op,
                                             const quill_tensor *inputs,
                                             quill_tensor *outputs);

typedef struct quill_custom_op {
  const char *name;    /* the `name` attribute it defines, "vendor.op" */
  const char *summary; /* one line, for --help and listings */
  /* Optional: checks after the generic ones (the name, the arity bounds
   * of ops.def). Emit errors at the op and return QUILL_ERR_INVALID. */
  quill_op_verify_fn verify;
  /* Optional: the reference evaluator. */
  quill_custom_eval_fn eval;
} quill_custom_op;

/* True if `name` is a valid custom op name: two or more non-empty
 * segments of [A-Za-z0-9_] separated by '.' ("acme.conv_add_relu"). */
bool quill_custom_op_name_valid(const char *name);

/* The `name` attribute of a custom op; NULL if op is not a custom op or
 * has no string `name`. Borrowed from the context. */
const char *quill_op_custom_name(const quill_op *op);

/* Register a custom op kind with the context. `op` is borrowed (it must
 * outlive the context). Its name must be valid and not yet registered;
 * otherwise an error diagnostic and QUILL_ERR_INVALID. QUILL_ERR_NOMEM on
 * allocation failure. */
quill_status quill_custom_op_register(quill_context *ctx,
                                      const quill_custom_op *op);

/* The kind registered under `name`, or NULL. */
const quill_custom_op *quill_custom_op_find(quill_context *ctx,
                                            const char *name);

/* The registered kinds in registration order; origin is the name of the
 * plugin that registered kind i, or NULL if the application did. */
unsigned quill_custom_op_num_registered(quill_context *ctx);
const quill_custom_op *quill_custom_op_registered(quill_context *ctx,
                                                  unsigned i);
const char *quill_custom_op_registered_origin(quill_context *ctx, unsigned i);

QUILL_END_DECLS

#endif /* QUILL_IR_CUSTOM_OP_H */

/*
 * op_verify_fused.c - the fused activation attributes that `fuse-activation`
 * puts on a float op (docs/quantization.md section 2):
 *
 *   %y = conv2d %x, %w, %b {activation = "relu"} : ...
 *   %y = add %a, %b {activation = "clip", activation_min = 0.0,
 *                    activation_max = 6.0} : ...
 *
 * Checked for every op by the generic verifier (ir/verifier.c) whenever one
 * of the three attributes is present, after the op's own verifier:
 *   - only ops that can be the head of a fusion take them (the table below,
 *     the same list the backend configs' fusions allow), with a float result;
 *   - `activation` is "relu" or "clip";
 *   - "clip" needs both bounds, non-NaN, min <= max; "relu" takes none.
 * The reference interpreter applies the activation after the op
 * (targets/reference/ref.c, quill_ref_eval_op).
 */
#include <math.h>

#include "ir/op_verify.h"

static const bool takes_activation[QUILL_OP_COUNT] = {
    [QUILL_OP_CONV2D] = true, [QUILL_OP_CONV_TRANSPOSE2D] = true,
    [QUILL_OP_GEMM] = true,   [QUILL_OP_MATMUL] = true,
    [QUILL_OP_ADD] = true,    [QUILL_OP_MUL] = true,
};

bool quill_vop_has_activation_attrs(const quill_op *op) {
  return quill_op_attr(op, "activation") ||
         quill_op_attr(op, "activation_min") ||
         quill_op_attr(op, "activation_max");
}

/* A bound: a float (or int) attribute that is not NaN. */
static quill_status bound(quill_context *ctx, const quill_op *op,
                          const char *name, double *out) {
  if (quill_vop_attr_float(ctx, op, name, NAN, out))
    return QUILL_ERR_INVALID;
  if (isnan(*out))
    return quill_vop_fail(ctx, op, "attribute '%s' must not be NaN", name);
  return QUILL_OK;
}

quill_status quill_vop_check_activation(quill_context *ctx,
                                        const quill_op *op) {
  if (!quill_vop_has_activation_attrs(op))
    return QUILL_OK;
  if (!takes_activation[quill_op_opcode(op)])
    return quill_vop_fail(ctx, op,
                          "does not take a fused activation (only conv2d, "
                          "conv_transpose2d, gemm, matmul, add and mul do)");
  for (unsigned i = 0; i < quill_op_num_results(op); i++)
    if (!quill_type_is_float(
            quill_type_elem(quill_value_type(quill_op_result(op, i)))))
      return quill_vop_fail(ctx, op,
                            "has a fused activation but a non-float result");
  static const char *const kinds[] = {"relu", "clip", NULL};
  const char *kind;
  if (quill_vop_attr_choice(ctx, op, "activation", NULL, kinds, &kind))
    return QUILL_ERR_INVALID;
  bool has_min = quill_op_attr(op, "activation_min") != NULL;
  bool has_max = quill_op_attr(op, "activation_max") != NULL;
  if (!kind || kind[0] != 'c') {
    if (has_min || has_max)
      return quill_vop_fail(ctx, op,
                            "attribute '%s' is only valid with activation = "
                            "\"clip\"",
                            has_min ? "activation_min" : "activation_max");
    return QUILL_OK;
  }
  if (!has_min || !has_max)
    return quill_vop_fail(ctx, op,
                          "activation \"clip\" needs attributes "
                          "'activation_min' and 'activation_max'");
  double lo, hi;
  if (bound(ctx, op, "activation_min", &lo) ||
      bound(ctx, op, "activation_max", &hi))
    return QUILL_ERR_INVALID;
  if (lo > hi)
    return quill_vop_fail(ctx, op,
                          "attribute 'activation_min' (%g) is greater than "
                          "'activation_max' (%g)",
                          lo, hi);
  return QUILL_OK;
}

/*
 * op_verify.h - helpers shared by the op-specific verifiers
 * (ir/op_verify.c, ir/op_verify_nn.c, ir/op_verify_data.c). Private to ir/.
 *
 * The verifiers run after the generic checks of ir/verifier.c, so they may
 * assume that operand and result counts are within the ops.def bounds and
 * that every operand and result has a tensor type.
 *
 * Every helper that can fail emits a diagnostic at the op's location,
 * prefixed "'mnemonic' op ", and returns QUILL_ERR_INVALID (QUILL_OK when
 * the check passed). Attribute readers fill in the ONNX default when the
 * attribute is absent.
 */
#ifndef QUILL_IR_OP_VERIFY_H
#define QUILL_IR_OP_VERIFY_H

#include "ir/ir.h"
#include "ir/shape.h"

/* Declarations of every verifier named in ops.def (the table in ir/ops.c
 * refers to them; they are not part of the public API). */
#define QUILL_OP(ID, mn, mino, maxo, nres, fl, ver)                           \
  quill_status ver(quill_context *ctx, const quill_op *op);
#include "ir/ops.def"
#undef QUILL_OP

/* Element type classes, for "which element types may this op take". */
enum {
  QUILL_EC_FLOAT = 1u << 0, /* f16 bf16 f32 f64 */
  QUILL_EC_SINT = 1u << 1,  /* iN */
  QUILL_EC_UINT = 1u << 2,  /* uN */
  QUILL_EC_BOOL = 1u << 3,
  QUILL_EC_QUANT = 1u << 4, /* !quant.uniform */
  QUILL_EC_INT = QUILL_EC_SINT | QUILL_EC_UINT,
  QUILL_EC_NUMERIC = QUILL_EC_FLOAT | QUILL_EC_INT | QUILL_EC_QUANT,
  QUILL_EC_ANY = QUILL_EC_NUMERIC | QUILL_EC_BOOL,
};

/* Emit "'mnemonic' op <message>" at the op's location; returns
 * QUILL_ERR_INVALID. */
quill_status quill_vop_fail(quill_context *ctx, const quill_op *op,
                            const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Same, for a message with two %s that get the printed types a and b (b
 * may be NULL and then prints as ""). */
quill_status quill_vop_fail_types(quill_context *ctx, const quill_op *op,
                                  const char *fmt, const quill_type *a,
                                  const quill_type *b);
/* lstm and qlstm's operand shapes x [seq, batch, in], w [4h, in], r [4h, h]
 * checked; *y = [seq, batch, h] (op_verify_nn.c). */
quill_status quill_vop_lstm_shape(quill_context *ctx, const quill_op *op,
                                  quill_shape *y);

quill_type *quill_vop_operand_type(const quill_op *op, unsigned i);
quill_type *quill_vop_result_type(const quill_op *op, unsigned i);
quill_type *quill_vop_operand_elem(const quill_op *op, unsigned i);
void quill_vop_operand_shape(const quill_op *op, unsigned i, quill_shape *s);

/* The class bit of an element type. */
unsigned quill_vop_elem_class(const quill_type *elem);
/* Check that operand i's element type is in `classes`; `what` describes the
 * expectation for the message ("a float", "an integer"). */
quill_status quill_vop_expect_operand_elem(quill_context *ctx,
                                           const quill_op *op, unsigned i,
                                           unsigned classes,
                                           const char *what);
/* Two element types are compatible if equal, or both quantized with the
 * same expressed type (quantization parameters may differ per value). */
bool quill_vop_elem_compatible(const quill_type *a, const quill_type *b);
/* Check that operand i's element type is compatible with `elem`. */
quill_status quill_vop_expect_operand_like(quill_context *ctx,
                                           const quill_op *op, unsigned i,
                                           const quill_type *elem);

/* Compare result i with the inferred shape and element type (elem NULL:
 * keep the result's own element type; compatible quant types pass).
 * Message: "'conv2d' op expects result type tensor<..>, got tensor<..>". */
quill_status quill_vop_expect_result(quill_context *ctx, const quill_op *op,
                                     unsigned i, const quill_shape *shape,
                                     quill_type *elem);
/* Report a failed shape helper: "'<op>' op <what>: <why>". */
quill_status quill_vop_shape_fail(quill_context *ctx, const quill_op *op,
                                  const char *what, quill_strbuf *why);
/* Per-axis quantized element types: axis < rank and one parameter per
 * element of that dim. `what` is "operand #0" or "result #0". */
quill_status quill_vop_check_quant_axis(quill_context *ctx,
                                        const quill_op *op, const char *what,
                                        const quill_type *tensor);

/* ---- integer ops (qconv2d, qmatmul) -------------------------------------- */

/* Operands 0 and 1 quantized (same storage signedness is not required),
 * optional operand 2 an i32 tensor. */
quill_status quill_vop_integer_operands(quill_context *ctx,
                                        const quill_op *op);
/* Result element quantized or i32; requantization attributes valid:
 * rounding one of the policies, multiplier/shift int lists of length 1 or
 * `channels`, both or neither, multiplier in [0, 2^31), shift in [-31, 62];
 * an i32 result takes no multiplier/shift (nor act_min/act_max). */
quill_status quill_vop_integer_result(quill_context *ctx, const quill_op *op,
                                      int64_t channels);

/* `rounding`: one of the policies of ir/quant.h (default half_even). */
quill_status quill_vop_rounding(quill_context *ctx, const quill_op *op);
/* `multiplier` (ints in [0, 2^31)) and `shift` (ints in [-31, 62]): both or
 * neither, equal lengths of n1 or n2 elements (n2 < 0: n1 only); *present
 * tells whether they are there. */
quill_status quill_vop_fixed_point(quill_context *ctx, const quill_op *op,
                                   int64_t n1, int64_t n2, bool *present);
/* Optional int attributes `act_min` / `act_max` (a fused activation in the
 * quantized domain): only with a quantized result `elem`, qmin <= act_min
 * <= act_max <= qmax. */
quill_status quill_vop_act_range(quill_context *ctx, const quill_op *op,
                                 const quill_type *elem);

/* ---- quantized data movement and pooling (ir/op_verify_q.c) -------------- */

/* For ops that move stored values (data movement, max pooling) or average
 * them (avgpool): if any of the first `n_data` operands or any result is
 * quantized, all of them must have the same per-tensor quantized element
 * type. QUILL_OK for float/integer ops. */
quill_status quill_vop_quant_passthrough(quill_context *ctx,
                                         const quill_op *op, unsigned n_data);
/* requantize's attributes: rounding, and fixed-point multiplier/shift (one
 * each) only between per-tensor types. */
quill_status quill_vop_requantize_attrs(quill_context *ctx,
                                        const quill_op *op);

/* ---- fused activations (ir/op_verify_fused.c) ------------------------------ */

/* True if op carries any of activation / activation_min / activation_max. */
bool quill_vop_has_activation_attrs(const quill_op *op);
/* Check those attributes (docs/quantization.md section 2); QUILL_OK when
 * absent. Run for every op by the generic verifier. */
quill_status quill_vop_check_activation(quill_context *ctx,
                                        const quill_op *op);

/* ---- attributes (absent -> default) ------------------------------------ */

quill_status quill_vop_attr_int(quill_context *ctx, const quill_op *op,
                                const char *name, int64_t dflt, int64_t *out);
/* An int attribute that must be 0 or 1 (ONNX's boolean ints); a bool
 * attribute is accepted too. */
quill_status quill_vop_attr_flag(quill_context *ctx, const quill_op *op,
                                 const char *name, bool dflt, bool *out);
/* A float attribute (an int is accepted and converted). */
quill_status quill_vop_attr_float(quill_context *ctx, const quill_op *op,
                                  const char *name, double dflt, double *out);
/* An int list; *len = -1 if absent (out untouched), else its length, which
 * must be <= max. */
quill_status quill_vop_attr_ints(quill_context *ctx, const quill_op *op,
                                 const char *name, int64_t *out, size_t max,
                                 int64_t *len);
/* A string that must be one of `choices` (NULL-terminated list). */
quill_status quill_vop_attr_choice(quill_context *ctx, const quill_op *op,
                                   const char *name, const char *dflt,
                                   const char *const *choices,
                                   const char **out);
/* Require an attribute to be present. */
quill_status quill_vop_attr_required(quill_context *ctx, const quill_op *op,
                                     const char *name);

#endif /* QUILL_IR_OP_VERIFY_H */

/*
 * op_verify_int.c - verifiers for the integer ops: the shared checks of
 * qconv2d/qmatmul operands and requantization attributes, scast and
 * dynamic_quantize. The attribute checks (rounding, multiplier/shift,
 * act_min/act_max) are shared with qadd, qmul, lut and requantize
 * (ir/op_verify_q.c).
 *
 * An integer op computes an i32 accumulator from quantized operands
 *
 *   acc = sum (q_x - zp_x) * (q_w - zp_w) + bias_i32
 *
 * and either returns it (i32 result) or requantizes it to the result's quant
 * type with the op's rounding policy:
 *
 *   q_y = clamp(zp_y + round(acc * s_x * s_w / s_y), qmin, qmax)
 *
 * where the real multiplier is applied in f32 (ONNX QLinear* semantics) or,
 * when {multiplier, shift} are present, in fixed point (multiplier * 2^-31 *
 * 2^shift, per tensor or per output channel).
 */
#include <string.h>

#include "ir/op_verify.h"

static const char *const roundings[] = {"half_even", "half_away", "half_up",
                                        "tflite", NULL};

quill_status quill_vop_integer_operands(quill_context *ctx,
                                        const quill_op *op) {
  if (quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_QUANT, "a quantized") ||
      quill_vop_expect_operand_elem(ctx, op, 1, QUILL_EC_QUANT, "a quantized"))
    return QUILL_ERR_INVALID;
  if (quill_type_quant_axis_of(quill_vop_operand_elem(op, 0)) >= 0)
    return quill_vop_fail(ctx, op, "operand #0 must be quantized per tensor");
  if (quill_op_num_operands(op) > 2 &&
      quill_type_kind_of(quill_vop_operand_elem(op, 2)) != QUILL_TYPE_I32)
    return quill_vop_fail_types(ctx, op, "bias (operand #2) must be i32, got "
                                         "%s%s",
                                quill_vop_operand_type(op, 2), NULL);
  return QUILL_OK;
}

/* Read an int list attribute for requantization; *len = -1 if absent. Its
 * length must be n1 or n2 (n2 < 0: only n1). */
static quill_status requant_list(quill_context *ctx, const quill_op *op,
                                 const char *name, int64_t n1, int64_t n2,
                                 int64_t lo, int64_t hi, int64_t *len) {
  const quill_attr *a = quill_op_attr(op, name);
  *len = -1;
  if (!a)
    return QUILL_OK;
  if (quill_attr_kind_of(a) != QUILL_ATTR_LIST)
    return quill_vop_fail(ctx, op, "attribute '%s' must be a list of ints",
                          name);
  size_t n = quill_attr_list_size(a);
  if ((int64_t)n != n1 && (n2 < 0 || (int64_t)n != n2)) {
    if (n2 < 0 || n2 == n1)
      return quill_vop_fail(ctx, op, "attribute '%s' must have %lld "
                                     "element%s, got %zu",
                            name, (long long)n1, n1 == 1 ? "" : "s", n);
    return quill_vop_fail(ctx, op, "attribute '%s' must have %lld or %lld "
                                   "elements, got %zu",
                          name, (long long)n1, (long long)n2, n);
  }
  for (size_t i = 0; i < n; i++) {
    const quill_attr *e = quill_attr_list_elem(a, i);
    if (quill_attr_kind_of(e) != QUILL_ATTR_INT)
      return quill_vop_fail(ctx, op, "attribute '%s' must be a list of ints",
                            name);
    int64_t v = quill_attr_int_value(e);
    if (v < lo || v > hi)
      return quill_vop_fail(ctx, op, "attribute '%s' element %zu (%lld) is "
                                     "out of range [%lld, %lld]",
                            name, i, (long long)v, (long long)lo,
                            (long long)hi);
  }
  *len = (int64_t)n;
  return QUILL_OK;
}

quill_status quill_vop_rounding(quill_context *ctx, const quill_op *op) {
  const char *rounding;
  return quill_vop_attr_choice(ctx, op, "rounding", "half_even", roundings,
                               &rounding);
}

quill_status quill_vop_fixed_point(quill_context *ctx, const quill_op *op,
                                   int64_t n1, int64_t n2, bool *present) {
  int64_t nm, ns;
  *present = false;
  if (requant_list(ctx, op, "multiplier", n1, n2, 0, INT64_C(0x7fffffff),
                   &nm) ||
      requant_list(ctx, op, "shift", n1, n2, -31, 62, &ns))
    return QUILL_ERR_INVALID;
  if ((nm < 0) != (ns < 0) || (nm >= 0 && nm != ns))
    return quill_vop_fail(ctx, op, "attributes 'multiplier' and 'shift' must "
                                   "be given together, with equal lengths");
  *present = nm >= 0;
  return QUILL_OK;
}

quill_status quill_vop_act_range(quill_context *ctx, const quill_op *op,
                                 const quill_type *elem) {
  int64_t lo, hi;
  bool has_lo = quill_op_attr(op, "act_min") != NULL;
  bool has_hi = quill_op_attr(op, "act_max") != NULL;
  if (!has_lo && !has_hi)
    return QUILL_OK;
  if (!quill_type_is_quant(elem))
    return quill_vop_fail(ctx, op, "'act_min'/'act_max' need a quantized "
                                   "result");
  int64_t qmin = quill_type_quant_qmin(elem), qmax = quill_type_quant_qmax(elem);
  if (quill_vop_attr_int(ctx, op, "act_min", qmin, &lo) ||
      quill_vop_attr_int(ctx, op, "act_max", qmax, &hi))
    return QUILL_ERR_INVALID;
  if (lo < qmin || lo > qmax || hi < qmin || hi > qmax || lo > hi)
    return quill_vop_fail(ctx, op, "'act_min' (%lld) and 'act_max' (%lld) "
                                   "must satisfy %lld <= act_min <= act_max "
                                   "<= %lld",
                          (long long)lo, (long long)hi, (long long)qmin,
                          (long long)qmax);
  return QUILL_OK;
}

quill_status quill_vop_integer_result(quill_context *ctx, const quill_op *op,
                                      int64_t channels) {
  quill_type *re = quill_type_elem(quill_vop_result_type(op, 0));
  bool acc = quill_type_kind_of(re) == QUILL_TYPE_I32;
  if (!acc && !quill_type_is_quant(re))
    return quill_vop_fail_types(ctx, op, "result must be quantized or i32 (the "
                                         "accumulator), got %s%s",
                                quill_vop_result_type(op, 0), NULL);
  if (!acc && quill_type_quant_axis_of(re) >= 0)
    return quill_vop_fail(ctx, op, "result must be quantized per tensor");
  bool fixed;
  if (quill_vop_rounding(ctx, op) ||
      quill_vop_fixed_point(ctx, op, 1, channels, &fixed))
    return QUILL_ERR_INVALID;
  if (acc && fixed)
    return quill_vop_fail(ctx, op, "an i32 (accumulator) result takes no "
                                   "'multiplier'/'shift'");
  static const char *const accs[] = {"i32", "i64", NULL};
  const char *width;
  if (quill_vop_attr_choice(ctx, op, "accumulator", "i32", accs, &width))
    return QUILL_ERR_INVALID;
  if (acc && strcmp(width, "i64") == 0)
    return quill_vop_fail(ctx, op, "an i32 (accumulator) result cannot hold "
                                   "an i64 accumulator");
  return quill_vop_act_range(ctx, op, re);
}

/* scast: integer tensor <-> quantized tensor with that storage type, same
 * shape; the stored bits do not change. */
quill_status quill_verify_scast(quill_context *ctx, const quill_op *op) {
  quill_type *in = quill_vop_operand_type(op, 0);
  quill_type *out = quill_vop_result_type(op, 0);
  quill_type *ie = quill_type_elem(in), *oe = quill_type_elem(out);
  quill_type *is = quill_type_is_quant(ie) ? quill_type_quant_storage(ie) : ie;
  quill_type *os = quill_type_is_quant(oe) ? quill_type_quant_storage(oe) : oe;
  if (!quill_type_is_integer(is) || is != os ||
      quill_type_is_quant(ie) == quill_type_is_quant(oe))
    return quill_vop_fail_types(ctx, op, "casts between an integer type and a "
                                         "quantized type of that storage, got "
                                         "%s -> %s",
                                in, out);
  quill_shape s;
  quill_shape_of(in, &s);
  if (quill_vop_expect_result(ctx, op, 0, &s, NULL))
    return QUILL_ERR_INVALID;
  if (quill_type_is_quant(oe) &&
      quill_vop_check_quant_axis(ctx, op, "result #0", out))
    return QUILL_ERR_INVALID;
  return QUILL_OK;
}

/* dynamic_quantize x -> (y u8 [shape of x], scale f32 [], zero point u8 []). */
quill_status quill_verify_dynamic_quantize(quill_context *ctx,
                                           const quill_op *op) {
  if (quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_FLOAT, "a float"))
    return QUILL_ERR_INVALID;
  quill_shape s, scalar;
  quill_shape_of(quill_vop_operand_type(op, 0), &s);
  quill_shape_set(&scalar, 0, NULL);
  quill_type *u8 = quill_type_scalar(ctx, QUILL_TYPE_U8);
  quill_type *f32 = quill_type_scalar(ctx, QUILL_TYPE_F32);
  if (quill_vop_expect_result(ctx, op, 0, &s, u8) ||
      quill_vop_expect_result(ctx, op, 1, &scalar, f32) ||
      quill_vop_expect_result(ctx, op, 2, &scalar, u8))
    return QUILL_ERR_INVALID;
  return QUILL_OK;
}

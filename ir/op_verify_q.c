/*
 * op_verify_q.c - verifiers for the quantized elementwise integer ops
 * (qadd, qmul, lut), the fixed-point form of requantize, and the rule that
 * lets data movement and pooling ops run on quantized tensors.
 *
 * The arithmetic these ops denote is docs/quantization.md section 3; the
 * verifiers check what that arithmetic needs to be well defined:
 *
 *   qadd %a, %b {multiplier = [m_a, m_b, m_y], shift = [s_a, s_b, s_y],
 *                left_shift = 20, rounding = "tflite", act_min = -128}
 *     a, b, result: per-tensor quantized, storage <= 16 bits, result shape
 *     = broadcast(a, b); (2^bits - 1) << left_shift must fit in int32
 *   qmul %a, %b {multiplier = [m], shift = [s], ...}      the same, 1 entry
 *   lut %x {table = dense<..> : tensor<256xi8>}
 *     x per-tensor quantized (<= 16 bits), result per-tensor quantized of
 *     x's shape, table: 2^bits(x) entries of the result's storage type,
 *     each within the result's [qmin, qmax]
 *   requantize %x {multiplier = [m], shift = [s]}     fixed point: x and
 *     the result per tensor
 *   qlayer_norm %x, %g, %b {axis, epsilon_q, shift, bias_shift}
 *     x per-tensor quantized (<= 16 bits), result per-tensor quantized of
 *     x's shape, g and b tensor<N x i32> (N = the row: dims [axis, rank),
 *     at most 16383), epsilon_q in [0, 2^60], shift in [0, 37],
 *     bias_shift in [0, 24 + shift] (the arithmetic: ir/qnorm.h)
 *   qlstm %x, %w, %r, %b {cell_shift = C}
 *     x [seq, batch, in], w [4h, in], r [4h, h] and the result [seq,
 *     batch, h] quantized per tensor with i8 storage, w and r with zero
 *     point 0, b tensor<4h x i32>, C in [-15, -9] (ir/qlstm.h)
 *
 * Data movement and pooling (quill_vop_quant_passthrough): a quantized
 * operand needs a result (and, for concat, other operands) of exactly the
 * same per-tensor quantized element type, since the ops move or average
 * stored values without requantizing.
 */
#include "ir/op_verify.h"
#include "ir/qlstm.h"
#include "ir/qnorm.h"
#include "ir/quant.h"

/* Operand i must be quantized per tensor with at most 16 storage bits. */
static quill_status q_operand(quill_context *ctx, const quill_op *op,
                              unsigned i) {
  if (quill_vop_expect_operand_elem(ctx, op, i, QUILL_EC_QUANT, "a quantized"))
    return QUILL_ERR_INVALID;
  quill_type *e = quill_vop_operand_elem(op, i);
  if (quill_type_quant_axis_of(e) >= 0)
    return quill_vop_fail(ctx, op, "operand #%u must be quantized per tensor",
                          i);
  if (quill_type_bit_width(quill_type_quant_storage(e)) > 16)
    return quill_vop_fail(ctx, op, "operand #%u storage must have at most 16 "
                                   "bits",
                          i);
  return QUILL_OK;
}

/* The result must be quantized per tensor. */
static quill_status q_result(quill_context *ctx, const quill_op *op) {
  quill_type *re = quill_type_elem(quill_vop_result_type(op, 0));
  if (!quill_type_is_quant(re))
    return quill_vop_fail_types(ctx, op, "result must be quantized, got %s%s",
                                quill_vop_result_type(op, 0), NULL);
  if (quill_type_quant_axis_of(re) >= 0)
    return quill_vop_fail(ctx, op, "result must be quantized per tensor");
  return QUILL_OK;
}

static unsigned storage_bits(const quill_type *qelem) {
  return quill_type_bit_width(quill_type_quant_storage(qelem));
}

/* qadd / qmul a b {rounding, multiplier, shift, [left_shift], act_min,
 * act_max} */
quill_status quill_verify_qbinary(quill_context *ctx, const quill_op *op) {
  bool add = quill_op_opcode(op) == QUILL_OP_QADD;
  if (q_operand(ctx, op, 0) || q_operand(ctx, op, 1) || q_result(ctx, op))
    return QUILL_ERR_INVALID;
  quill_shape a, b, out;
  quill_vop_operand_shape(op, 0, &a);
  quill_vop_operand_shape(op, 1, &b);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  bool ok = quill_shape_broadcast(&a, &b, &out, &why);
  quill_strbuf_free(&why);
  if (!ok)
    return quill_vop_fail_types(ctx, op,
                                "operands of types %s and %s are not "
                                "broadcast-compatible",
                                quill_vop_operand_type(op, 0),
                                quill_vop_operand_type(op, 1));
  if (quill_vop_expect_result(ctx, op, 0, &out, NULL))
    return QUILL_ERR_INVALID;
  bool fixed;
  quill_type *re = quill_type_elem(quill_vop_result_type(op, 0));
  if (quill_vop_rounding(ctx, op) ||
      quill_vop_fixed_point(ctx, op, add ? 3 : 1, -1, &fixed) ||
      quill_vop_act_range(ctx, op, re))
    return QUILL_ERR_INVALID;
  if (!add) {
    if (quill_op_attr(op, "left_shift"))
      return quill_vop_fail(ctx, op, "takes no 'left_shift'");
    return QUILL_OK;
  }
  unsigned bits = storage_bits(quill_vop_operand_elem(op, 0));
  unsigned bb = storage_bits(quill_vop_operand_elem(op, 1));
  bits = bb > bits ? bb : bits;
  int64_t ls;
  if (quill_vop_attr_int(ctx, op, "left_shift", quill_qadd_left_shift(bits),
                         &ls))
    return QUILL_ERR_INVALID;
  if (quill_op_attr(op, "left_shift") && !fixed)
    return quill_vop_fail(ctx, op, "'left_shift' needs 'multiplier' and "
                                   "'shift'");
  if (ls < 0 || (int64_t)bits + ls > 31)
    return quill_vop_fail(ctx, op, "'left_shift' (%lld) must be in [0, %u] "
                                   "for %u-bit operands",
                          (long long)ls, 31 - bits, bits);
  return QUILL_OK;
}

/* lut x {table} */
quill_status quill_verify_lut(quill_context *ctx, const quill_op *op) {
  if (q_operand(ctx, op, 0) || q_result(ctx, op))
    return QUILL_ERR_INVALID;
  quill_shape s;
  quill_vop_operand_shape(op, 0, &s);
  if (quill_vop_expect_result(ctx, op, 0, &s, NULL) ||
      quill_vop_attr_required(ctx, op, "table"))
    return QUILL_ERR_INVALID;
  const quill_attr *t = quill_op_attr(op, "table");
  quill_type *re = quill_type_elem(quill_vop_result_type(op, 0));
  quill_type *storage = quill_type_quant_storage(re);
  int64_t n = INT64_C(1) << storage_bits(quill_vop_operand_elem(op, 0));
  quill_type *tt = quill_attr_kind_of(t) == QUILL_ATTR_DENSE
                       ? quill_attr_dense_type(t)
                       : NULL;
  if (!tt || quill_type_rank(tt) != 1 || quill_type_dim(tt, 0) != n ||
      quill_type_elem(tt) != storage)
    return quill_vop_fail(ctx, op, "attribute 'table' must be a dense "
                                   "tensor<%lldx%s> (one entry of the "
                                   "result's storage type per operand "
                                   "value)",
                          (long long)n,
                          quill_type_scalar_name(quill_type_kind_of(storage)));
  int64_t qmin = quill_type_quant_qmin(re), qmax = quill_type_quant_qmax(re);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = quill_attr_dense_get_i64(t, (size_t)i);
    if (v < qmin || v > qmax)
      return quill_vop_fail(ctx, op, "table entry %lld (%lld) is outside the "
                                     "result range [%lld, %lld]",
                            (long long)i, (long long)v, (long long)qmin,
                            (long long)qmax);
  }
  return QUILL_OK;
}

/* qlayer_norm x g b {axis, epsilon_q, shift, bias_shift} */
quill_status quill_verify_qlayer_norm(quill_context *ctx, const quill_op *op) {
  if (q_operand(ctx, op, 0) || q_result(ctx, op))
    return QUILL_ERR_INVALID;
  quill_shape xs;
  quill_vop_operand_shape(op, 0, &xs);
  int64_t axis, eq, G, F;
  unsigned ax;
  if (quill_vop_expect_result(ctx, op, 0, &xs, NULL) ||
      quill_vop_attr_int(ctx, op, "axis", -1, &axis) ||
      quill_vop_attr_int(ctx, op, "epsilon_q", 0, &eq) ||
      quill_vop_attr_int(ctx, op, "shift", 0, &G) ||
      quill_vop_attr_int(ctx, op, "bias_shift", 0, &F))
    return QUILL_ERR_INVALID;
  if (!quill_shape_norm_axis(axis, xs.rank, &ax))
    return quill_vop_fail(ctx, op, "attribute 'axis' (%lld) is out of range "
                                   "for rank %u",
                          (long long)axis, xs.rank);
  int64_t n = 1;
  for (unsigned d = ax; d < xs.rank; d++)
    n = xs.dims[d] < 0 || n < 0 ? -1 : n * xs.dims[d];
  if (n < 1 || n > QUILL_QNORM_MAX_ROW)
    return quill_vop_fail(ctx, op, "the normalized row (dims [%u, %u)) must "
                                   "have 1 to %d static elements",
                          ax, xs.rank, QUILL_QNORM_MAX_ROW);
  for (unsigned i = 1; i < 3; i++) {
    quill_type *t = quill_vop_operand_type(op, i);
    if (quill_type_kind_of(quill_type_elem(t)) != QUILL_TYPE_I32 ||
        quill_type_rank(t) != 1 || quill_type_dim(t, 0) != n)
      return quill_vop_fail(ctx, op, "operand #%u must be tensor<%lldxi32> "
                                     "(one per row element)",
                            i, (long long)n);
  }
  if (eq < 0 || eq > QUILL_QNORM_MAX_EPS || G < 0 ||
      G > 61 - QUILL_QNORM_Z_BITS || F < 0 || F > QUILL_QNORM_Z_BITS + G)
    return quill_vop_fail(ctx, op, "'epsilon_q' must be in [0, 2^60], "
                                   "'shift' in [0, %d] and 'bias_shift' in "
                                   "[0, 24 + shift]",
                          61 - QUILL_QNORM_Z_BITS);
  return QUILL_OK;
}

/* Operand i (or the result, i < 0) is quantized per tensor with i8
 * storage (and zero point 0 if `symmetric`). */
static quill_status qlstm_i8(quill_context *ctx, const quill_op *op, int i,
                             bool symmetric) {
  quill_type *e = i < 0 ? quill_type_elem(quill_vop_result_type(op, 0))
                        : quill_vop_operand_elem(op, (unsigned)i);
  if (!quill_type_is_quant(e) || quill_type_quant_axis_of(e) >= 0 ||
      quill_type_kind_of(quill_type_quant_storage(e)) != QUILL_TYPE_I8 ||
      (symmetric && quill_type_quant_zero_points(e)[0] != 0)) {
    if (i < 0)
      return quill_vop_fail(ctx, op, "the result must be quantized per "
                                     "tensor with i8 storage");
    return quill_vop_fail(ctx, op, "operand #%d must be quantized per tensor "
                                   "with i8 storage%s",
                          i, symmetric ? " and zero point 0" : "");
  }
  return QUILL_OK;
}

/* qlstm x w r b {cell_shift}: TFLite's integer LSTM (ir/qlstm.h) */
quill_status quill_verify_qlstm(quill_context *ctx, const quill_op *op) {
  if (qlstm_i8(ctx, op, 0, false) || qlstm_i8(ctx, op, 1, true) ||
      qlstm_i8(ctx, op, 2, true) || qlstm_i8(ctx, op, -1, false))
    return QUILL_ERR_INVALID;
  quill_shape y;
  if (quill_vop_lstm_shape(ctx, op, &y))
    return QUILL_ERR_INVALID;
  int64_t h = y.dims[2];
  quill_type *bt = quill_vop_operand_type(op, 3);
  if (quill_type_kind_of(quill_type_elem(bt)) != QUILL_TYPE_I32 ||
      quill_type_rank(bt) != 1 || quill_type_dim(bt, 0) != 4 * h)
    return quill_vop_fail(ctx, op, "b must be tensor<%lldxi32> (the gate "
                                   "biases at s_x * s_w)",
                          (long long)(4 * h));
  int64_t c;
  if (quill_vop_attr_int(ctx, op, "cell_shift", -11, &c))
    return QUILL_ERR_INVALID;
  if (c < QUILL_QLSTM_CELL_MIN || c > QUILL_QLSTM_CELL_MAX)
    return quill_vop_fail(ctx, op, "'cell_shift' (%lld) must be in [-15, -9]",
                          (long long)c);
  return quill_vop_expect_result(ctx, op, 0, &y, NULL);
}

quill_status quill_vop_requantize_attrs(quill_context *ctx,
                                        const quill_op *op) {
  bool fixed;
  if (quill_vop_rounding(ctx, op) ||
      quill_vop_fixed_point(ctx, op, 1, -1, &fixed))
    return QUILL_ERR_INVALID;
  quill_type *re = quill_type_elem(quill_vop_result_type(op, 0));
  if (fixed && (quill_type_quant_axis_of(quill_vop_operand_elem(op, 0)) >= 0 ||
                quill_type_quant_axis_of(re) >= 0))
    return quill_vop_fail(ctx, op, "fixed-point requantization ('multiplier', "
                                   "'shift') needs per-tensor operand and "
                                   "result types");
  return QUILL_OK;
}

quill_status quill_vop_quant_passthrough(quill_context *ctx,
                                         const quill_op *op, unsigned n_data) {
  quill_type *q = NULL;
  unsigned nops = quill_op_num_operands(op), nres = quill_op_num_results(op);
  if (n_data > nops)
    n_data = nops;
  for (unsigned i = 0; i < n_data && !q; i++)
    if (quill_type_is_quant(quill_vop_operand_elem(op, i)))
      q = quill_vop_operand_elem(op, i);
  for (unsigned i = 0; i < nres && !q; i++)
    if (quill_type_is_quant(quill_type_elem(quill_vop_result_type(op, i))))
      q = quill_type_elem(quill_vop_result_type(op, i));
  if (!q)
    return QUILL_OK;
  for (unsigned i = 0; i < n_data; i++)
    if (quill_vop_operand_elem(op, i) != q)
      return quill_vop_fail_types(ctx, op,
                                  "quantized operands and results must have "
                                  "one quant type, got %s and %s",
                                  quill_vop_operand_type(op, i),
                                  quill_vop_result_type(op, 0));
  for (unsigned i = 0; i < nres; i++)
    if (quill_type_elem(quill_vop_result_type(op, i)) != q)
      return quill_vop_fail_types(ctx, op,
                                  "quantized operands and results must have "
                                  "one quant type, got %s and %s",
                                  quill_vop_operand_type(op, 0),
                                  quill_vop_result_type(op, i));
  if (quill_op_opcode(op) != QUILL_OP_IDENTITY &&
      quill_type_quant_axis_of(q) >= 0)
    return quill_vop_fail(ctx, op, "quantized operands must be quantized "
                                   "per tensor");
  return QUILL_OK;
}

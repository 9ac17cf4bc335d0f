/*
 * op_verify_data.c - verifiers for the data-movement ops: concat, split,
 * slice, pad, reshape, flatten, transpose, squeeze, unsqueeze, gather and
 * resize.
 *
 * These ops never change element values, so the result element type must
 * be the operand's (quantized types may only differ in their parameters).
 * Each verifier reads its ONNX attributes, lets the matching ir/shape.c
 * helper compute the result shape, and compares it with the declared one:
 *
 *   transpose %x {perm = [0, 2, 1]} : tensor<2x4x3xf32>
 *     perm a permutation of 0..r-1?  quill_shape_transpose(x) == result?
 *
 * Where the result type carries the information (reshape's shape, split's
 * sizes, resize's sizes), the check goes the other way: the declared
 * shapes must be consistent with the operand.
 *
 * Quantized tensors pass through with one per-tensor quant type for
 * operand and result (quill_vop_quant_passthrough): pad then pads the zero
 * point ('value' must be 0), resize only picks (mode nearest).
 */
#include "ir/op_verify.h"

#include <string.h>

/* Run a shape helper's verdict: on failure report "'op' op <what>: why". */
static quill_status shape_verdict(quill_context *ctx, const quill_op *op,
                                  bool ok, const char *what,
                                  quill_strbuf *why) {
  quill_status st = ok ? QUILL_OK : quill_vop_shape_fail(ctx, op, what, why);
  quill_strbuf_free(why);
  return st;
}

/* Result element type must match operand 0's; check the inferred shape.
 * Quantized data: one quant type throughout (concat: every operand). */
static quill_status same_elem_result(quill_context *ctx, const quill_op *op,
                                     unsigned i, const quill_shape *s) {
  if (quill_vop_expect_result(ctx, op, i, s, quill_vop_operand_elem(op, 0)))
    return QUILL_ERR_INVALID;
  unsigned n_data = quill_op_opcode(op) == QUILL_OP_CONCAT
                        ? quill_op_num_operands(op)
                        : 1;
  return quill_vop_quant_passthrough(ctx, op, n_data);
}

/* concat x... {axis} */
quill_status quill_verify_concat(quill_context *ctx, const quill_op *op) {
  unsigned n = quill_op_num_operands(op);
  int64_t axis;
  if (quill_vop_attr_required(ctx, op, "axis") ||
      quill_vop_attr_int(ctx, op, "axis", 0, &axis))
    return QUILL_ERR_INVALID;
  quill_type *e0 = quill_vop_operand_elem(op, 0);
  for (unsigned i = 1; i < n; i++)
    if (quill_vop_expect_operand_like(ctx, op, i, e0))
      return QUILL_ERR_INVALID;
  quill_shape *ins = quill_calloc(ctx, n, sizeof *ins);
  if (!ins)
    return QUILL_ERR_NOMEM;
  for (unsigned i = 0; i < n; i++)
    quill_vop_operand_shape(op, i, &ins[i]);
  quill_shape out;
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  bool ok = quill_shape_concat(n, ins, axis, &out, &why);
  quill_free(ctx, ins, n * sizeof *ins);
  if (shape_verdict(ctx, op, ok, "invalid operands", &why))
    return QUILL_ERR_INVALID;
  return same_elem_result(ctx, op, 0, &out);
}

/* split x {axis = 0, split}: result sizes along axis add up to the dim. */
quill_status quill_verify_split(quill_context *ctx, const quill_op *op) {
  unsigned n = quill_op_num_results(op);
  quill_shape in;
  quill_vop_operand_shape(op, 0, &in);
  int64_t axis;
  unsigned ax;
  if (quill_vop_attr_int(ctx, op, "axis", 0, &axis))
    return QUILL_ERR_INVALID;
  if (!quill_shape_norm_axis(axis, in.rank, &ax))
    return quill_vop_fail(ctx, op, "attribute 'axis' (%lld) is out of range "
                                   "for rank %u",
                          (long long)axis, in.rank);
  int64_t *sizes = quill_calloc(ctx, n, sizeof *sizes);
  quill_shape *outs = quill_calloc(ctx, n, sizeof *outs);
  if (!sizes || !outs) {
    quill_free(ctx, sizes, n * sizeof *sizes);
    quill_free(ctx, outs, n * sizeof *outs);
    return QUILL_ERR_NOMEM;
  }
  quill_status st = QUILL_OK;
  int64_t len;
  for (unsigned i = 0; i < n; i++) {
    quill_type *r = quill_vop_result_type(op, i);
    sizes[i] = quill_type_rank(r) == in.rank ? quill_type_dim(r, ax)
                                             : QUILL_DIM_DYNAMIC;
  }
  const quill_attr *split = quill_op_attr(op, "split");
  len = split ? quill_attr_get_ints(split, NULL, 0) : -1;
  if (split && len >= 0 && len != (int64_t)n)
    st = quill_vop_fail(ctx, op, "attribute 'split' has %lld sizes for %u "
                                 "results",
                        (long long)len, n);
  else if (quill_vop_attr_ints(ctx, op, "split", sizes, n, &len))
    st = QUILL_ERR_INVALID;
  if (!st) {
    quill_strbuf why;
    quill_strbuf_init(&why, ctx);
    bool ok = quill_shape_split(&in, axis, n, sizes, outs, &why);
    st = shape_verdict(ctx, op, ok, "invalid split", &why);
  }
  for (unsigned i = 0; !st && i < n; i++)
    if (same_elem_result(ctx, op, i, &outs[i]))
      st = QUILL_ERR_INVALID;
  quill_free(ctx, sizes, n * sizeof *sizes);
  quill_free(ctx, outs, n * sizeof *outs);
  return st;
}

/* slice x {starts, ends, axes, steps} */
quill_status quill_verify_slice(quill_context *ctx, const quill_op *op) {
  int64_t starts[QUILL_MAX_RANK], ends[QUILL_MAX_RANK], axes[QUILL_MAX_RANK],
      steps[QUILL_MAX_RANK], ns, ne, na, nst;
  if (quill_vop_attr_required(ctx, op, "starts") ||
      quill_vop_attr_required(ctx, op, "ends") ||
      quill_vop_attr_ints(ctx, op, "starts", starts, QUILL_MAX_RANK, &ns) ||
      quill_vop_attr_ints(ctx, op, "ends", ends, QUILL_MAX_RANK, &ne) ||
      quill_vop_attr_ints(ctx, op, "axes", axes, QUILL_MAX_RANK, &na) ||
      quill_vop_attr_ints(ctx, op, "steps", steps, QUILL_MAX_RANK, &nst))
    return QUILL_ERR_INVALID;
  if (ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
    return quill_vop_fail(ctx, op, "attributes 'starts', 'ends', 'axes' and "
                                   "'steps' must have the same length");
  quill_shape in, out;
  quill_vop_operand_shape(op, 0, &in);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  bool ok = quill_shape_slice(&in, (unsigned)ns, starts, ends,
                              na >= 0 ? axes : NULL, nst >= 0 ? steps : NULL,
                              &out, &why);
  if (shape_verdict(ctx, op, ok, "invalid slice", &why))
    return QUILL_ERR_INVALID;
  return same_elem_result(ctx, op, 0, &out);
}

static const char *const pad_modes[] = {"constant", "reflect", "edge", "wrap",
                                        NULL};

/* pad x {pads, mode = "constant", value = 0.0} */
quill_status quill_verify_pad(quill_context *ctx, const quill_op *op) {
  quill_shape in, out;
  quill_vop_operand_shape(op, 0, &in);
  int64_t pads[2 * QUILL_MAX_RANK], n;
  const char *mode;
  double value;
  if (quill_vop_attr_required(ctx, op, "pads") ||
      quill_vop_attr_ints(ctx, op, "pads", pads, 2 * QUILL_MAX_RANK, &n) ||
      quill_vop_attr_choice(ctx, op, "mode", "constant", pad_modes, &mode) ||
      quill_vop_attr_float(ctx, op, "value", 0.0, &value))
    return QUILL_ERR_INVALID;
  if (n != 2 * (int64_t)in.rank)
    return quill_vop_fail(ctx, op, "attribute 'pads' must have %u elements "
                                   "(2 * rank), got %lld",
                          2 * in.rank, (long long)n);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  bool ok = quill_shape_pad(&in, pads, &out, &why);
  if (shape_verdict(ctx, op, ok, "invalid attribute 'pads'", &why))
    return QUILL_ERR_INVALID;
  if (quill_type_is_quant(quill_vop_operand_elem(op, 0)) && value != 0.0)
    return quill_vop_fail(ctx, op, "a quantized operand pads with its zero "
                                   "point: 'value' must be 0");
  return same_elem_result(ctx, op, 0, &out);
}

/* reshape x : T  (same element count, same element type) */
quill_status quill_verify_reshape(quill_context *ctx, const quill_op *op) {
  quill_type *a = quill_vop_operand_type(op, 0), *r = quill_vop_result_type(op, 0);
  if (!quill_vop_elem_compatible(quill_type_elem(a), quill_type_elem(r)))
    return quill_vop_fail_types(ctx, op,
                                "result type %s must have the element type "
                                "of operand type %s",
                                r, a);
  int64_t na = quill_type_num_elements(a), nr = quill_type_num_elements(r);
  if (na >= 0 && nr >= 0 && na != nr) {
    quill_strbuf sa, sr;
    quill_strbuf_init(&sa, ctx);
    quill_strbuf_init(&sr, ctx);
    quill_type_print(a, &sa);
    quill_type_print(r, &sr);
    quill_vop_fail(ctx, op,
                   "cannot reshape %s (%lld elements) to %s (%lld elements)",
                   quill_strbuf_str(&sa), (long long)na, quill_strbuf_str(&sr),
                   (long long)nr);
    quill_strbuf_free(&sa);
    quill_strbuf_free(&sr);
    return QUILL_ERR_INVALID;
  }
  return quill_vop_quant_passthrough(ctx, op, 1);
}

/* flatten x {axis = 1} */
quill_status quill_verify_flatten(quill_context *ctx, const quill_op *op) {
  int64_t axis;
  if (quill_vop_attr_int(ctx, op, "axis", 1, &axis))
    return QUILL_ERR_INVALID;
  quill_shape in, out;
  quill_vop_operand_shape(op, 0, &in);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  bool ok = quill_shape_flatten(&in, axis, &out, &why);
  if (shape_verdict(ctx, op, ok, "invalid attribute 'axis'", &why))
    return QUILL_ERR_INVALID;
  return same_elem_result(ctx, op, 0, &out);
}

/* transpose x {perm = reversed dims} */
quill_status quill_verify_transpose(quill_context *ctx, const quill_op *op) {
  int64_t perm[QUILL_MAX_RANK], n;
  if (quill_vop_attr_ints(ctx, op, "perm", perm, QUILL_MAX_RANK, &n))
    return QUILL_ERR_INVALID;
  quill_shape in, out;
  quill_vop_operand_shape(op, 0, &in);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  bool ok = quill_shape_transpose(&in, n < 0 ? 0 : (unsigned)n,
                                  n < 0 ? NULL : perm, &out, &why);
  if (shape_verdict(ctx, op, ok, "invalid attribute 'perm'", &why))
    return QUILL_ERR_INVALID;
  return same_elem_result(ctx, op, 0, &out);
}

/* squeeze x {axes}  (no axes: drop every dim of size 1) */
quill_status quill_verify_squeeze(quill_context *ctx, const quill_op *op) {
  int64_t axes[QUILL_MAX_RANK], n;
  if (quill_vop_attr_ints(ctx, op, "axes", axes, QUILL_MAX_RANK, &n))
    return QUILL_ERR_INVALID;
  quill_shape in, out;
  quill_vop_operand_shape(op, 0, &in);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  bool ok = quill_shape_squeeze(&in, n < 0 ? 0 : (unsigned)n, axes, &out,
                                &why);
  if (shape_verdict(ctx, op, ok, "invalid attribute 'axes'", &why))
    return QUILL_ERR_INVALID;
  return same_elem_result(ctx, op, 0, &out);
}

/* unsqueeze x {axes} */
quill_status quill_verify_unsqueeze(quill_context *ctx, const quill_op *op) {
  int64_t axes[QUILL_MAX_RANK], n;
  if (quill_vop_attr_required(ctx, op, "axes") ||
      quill_vop_attr_ints(ctx, op, "axes", axes, QUILL_MAX_RANK, &n))
    return QUILL_ERR_INVALID;
  quill_shape in, out;
  quill_vop_operand_shape(op, 0, &in);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  bool ok = quill_shape_unsqueeze(&in, (unsigned)n, axes, &out, &why);
  if (shape_verdict(ctx, op, ok, "invalid attribute 'axes'", &why))
    return QUILL_ERR_INVALID;
  return same_elem_result(ctx, op, 0, &out);
}

/* gather data indices {axis = 0} */
quill_status quill_verify_gather(quill_context *ctx, const quill_op *op) {
  quill_type *ie = quill_vop_operand_elem(op, 1);
  quill_type_kind k = quill_type_kind_of(ie);
  if (k != QUILL_TYPE_I32 && k != QUILL_TYPE_I64)
    return quill_vop_fail_types(ctx, op,
                                "indices (operand #1) must be i32 or i64, "
                                "got %s%s",
                                quill_vop_operand_type(op, 1), NULL);
  int64_t axis;
  if (quill_vop_attr_int(ctx, op, "axis", 0, &axis))
    return QUILL_ERR_INVALID;
  quill_shape data, idx, out;
  quill_vop_operand_shape(op, 0, &data);
  quill_vop_operand_shape(op, 1, &idx);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  bool ok = quill_shape_gather(&data, &idx, axis, &out, &why);
  if (shape_verdict(ctx, op, ok, "invalid attribute 'axis'", &why))
    return QUILL_ERR_INVALID;
  return same_elem_result(ctx, op, 0, &out);
}

static const char *const resize_modes[] = {"nearest", "linear", "cubic",
                                           NULL};
static const char *const resize_coord_modes[] = {
    "half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
    "align_corners", "asymmetric",           "tf_crop_and_resize",
    "tf_half_pixel_for_nn", NULL};
static const char *const resize_nearest_modes[] = {
    "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};

/* resize x {mode, coordinate_transformation_mode, nearest_mode} : T
 * (sizes from the result type: same rank and element type). */
quill_status quill_verify_resize(quill_context *ctx, const quill_op *op) {
  const char *s, *mode = "nearest";
  quill_status st = QUILL_OK;
  if (quill_vop_attr_choice(ctx, op, "mode", "nearest", resize_modes, &mode) ||
      quill_vop_attr_choice(ctx, op, "coordinate_transformation_mode",
                            "half_pixel", resize_coord_modes, &s) ||
      quill_vop_attr_choice(ctx, op, "nearest_mode", "round_prefer_floor",
                            resize_nearest_modes, &s))
    st = QUILL_ERR_INVALID;
  quill_type *a = quill_vop_operand_type(op, 0), *r = quill_vop_result_type(op, 0);
  if (quill_type_rank(a) != quill_type_rank(r) ||
      !quill_vop_elem_compatible(quill_type_elem(a), quill_type_elem(r)))
    st = quill_vop_fail_types(ctx, op,
                              "result type %s must have the rank and element "
                              "type of operand type %s",
                              r, a);
  if (st)
    return st;
  if (quill_vop_quant_passthrough(ctx, op, 1))
    return QUILL_ERR_INVALID;
  if (quill_type_is_quant(quill_type_elem(a)) && strcmp(mode, "nearest") != 0)
    return quill_vop_fail(ctx, op, "resizes quantized tensors in mode "
                                   "'nearest' only");
  return QUILL_OK;
}

/*
 * lower_select.c - comparisons (equal, less, greater) and where, with
 * numpy broadcasting, on any non-quantized element type the reference
 * computes them for.
 *
 * Both are one cg_map each over the result's dims, every operand view
 * broadcast to them (cg_view_broadcast), so transposed, sliced and NHWC
 * operands are read in place through their strides.
 *
 *   equal/less/greater  out[i] = a[i'] OP b[i'] as a bool (0 or 1 byte).
 *                       The operands have one element type (the verifier
 *                       asks for it), compared as the reference does
 *                       (kernels_eltwise.c): f32 and f64 with ordered
 *                       compares (false when either side is NaN; an f32
 *                       compare equals the reference's compare of the
 *                       values widened to double), integers and bool
 *                       widened to i64 by their storage type (signed or
 *                       zero-extended, i4/u4 as the reference reads them,
 *                       bool as 0/1), u64 compared unsigned.
 *   where               out[i] = cond[i'] != 0 ? x[i''] : y[i'''], the
 *                       selected element moved as stored (floats of any
 *                       width, integers, quantized storage). cg_map stores
 *                       integers with cg_store_int: the values the
 *                       reference copies are kept (a bool or 4-bit byte is
 *                       stored in its canonical form).
 *
 * Not handled (the supports functions say so by name): quantized or
 * f16/bf16 comparison operands (the reference rejects quantized ones;
 * f16/bf16 would need half-precision conversions the JIT does not link).
 */
#include "targets/llvm/cg.h"

/* ---- supports ------------------------------------------------------------- */

static quill_type *operand_elem(const quill_op *op, unsigned i) {
  return quill_type_elem(quill_value_type(quill_op_operand(op, i)));
}

CG_SUPPORTS(cg_supports_compare) {
  for (unsigned i = 0; i < 2; i++) {
    quill_type *e = operand_elem(op, i);
    if (quill_type_is_quant(e))
      return "quantized operands";
    quill_type_kind k = quill_type_kind_of(e);
    if (k == QUILL_TYPE_F16 || k == QUILL_TYPE_BF16)
      return "f16 or bf16 operands";
  }
  if (operand_elem(op, 0) != operand_elem(op, 1))
    return "operands of different element types";
  return NULL;
}

CG_SUPPORTS(cg_supports_where) {
  quill_type *ce = operand_elem(op, 0);
  if (quill_type_is_quant(ce) || quill_type_kind_of(ce) != QUILL_TYPE_BOOL)
    return "a non-bool condition";
  quill_type *re = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  if (operand_elem(op, 1) != re || operand_elem(op, 2) != re)
    return "values and result of different element types";
  return NULL;
}

/* ---- comparisons ---------------------------------------------------------- */

typedef struct cmpctx {
  quill_opcode opc;
  const quill_type *elem; /* both operands' element type */
} cmpctx;

static LLVMValueRef compare_fn(cg *c, void *ud, LLVMValueRef *in) {
  const cmpctx *k = ud;
  quill_type_kind kind = quill_type_kind_of(k->elem);
  LLVMValueRef r;
  if (kind == QUILL_TYPE_F32 || kind == QUILL_TYPE_F64) {
    /* ordered: false when either side is NaN, as the reference's
     * unordered result 2 */
    LLVMRealPredicate p = k->opc == QUILL_OP_EQUAL  ? LLVMRealOEQ
                          : k->opc == QUILL_OP_LESS ? LLVMRealOLT
                                                    : LLVMRealOGT;
    r = LLVMBuildFCmp(c->b, p, in[0], in[1], "");
  } else {
    bool u = kind == QUILL_TYPE_U64;
    LLVMIntPredicate p = k->opc == QUILL_OP_EQUAL  ? LLVMIntEQ
                         : k->opc == QUILL_OP_LESS ? (u ? LLVMIntULT
                                                        : LLVMIntSLT)
                                                   : (u ? LLVMIntUGT
                                                        : LLVMIntSGT);
    LLVMValueRef a = cg_widen_int(c, k->elem, in[0], c->t_i64);
    LLVMValueRef b = cg_widen_int(c, k->elem, in[1], c->t_i64);
    r = LLVMBuildICmp(c->b, p, a, b, "");
  }
  return LLVMBuildZExt(c->b, r, c->t_i8, "");
}

CG_LOWER(cg_lower_compare) {
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view ins[2];
  for (unsigned i = 0; i < 2; i++) {
    cg_view v = cg_value_view(c, quill_op_operand(op, i));
    ins[i] = cg_view_broadcast(&v, y.rank, y.dims);
  }
  cmpctx k = {quill_op_opcode(op), ins[0].elem};
  if (quill_type_is_quant(k.elem) || ins[1].elem != k.elem)
    return cg_op_error(c, "'%s' needs two non-quantized operands of one "
                          "element type", quill_op_name(op));
  cg_map(c, quill_op_name(op), &y, 2, ins, compare_fn, &k);
  return QUILL_OK;
}

/* ---- where ---------------------------------------------------------------- */

static LLVMValueRef where_fn(cg *c, void *ud, LLVMValueRef *in) {
  (void)ud;
  LLVMValueRef cond = in[0];
  LLVMValueRef take_x = LLVMBuildICmp(c->b, LLVMIntNE, cond,
                                      LLVMConstNull(LLVMTypeOf(cond)), "");
  return LLVMBuildSelect(c->b, take_x, in[1], in[2], "");
}

CG_LOWER(cg_lower_where) {
  cg_view y = cg_value_view(c, quill_op_result(op, 0));
  cg_view ins[3];
  for (unsigned i = 0; i < 3; i++) {
    cg_view v = cg_value_view(c, quill_op_operand(op, i));
    ins[i] = cg_view_broadcast(&v, y.rank, y.dims);
  }
  if (quill_type_kind_of(cg_storage(ins[0].elem)) != QUILL_TYPE_BOOL ||
      ins[1].elem != y.elem || ins[2].elem != y.elem)
    return cg_op_error(c, "'where' needs a bool condition and values of the "
                          "result's element type");
  cg_map(c, "where", &y, 3, ins, where_fn, NULL);
  return QUILL_OK;
}

/*
 * fuse_qdq.c - the quantize/dequantize pairs around a softmax or a
 * layer_norm, fused into that op's loop: no float tensor is written.
 *
 * After quantization an integer model keeps softmax and layer_norm in
 * float between a dequantize and a quantize:
 *
 *   %f = dequantize %q          (u8/i8 -> f32, per tensor)
 *   %g = softmax %f             (or layer_norm %f, %scale[, %bias])
 *   %h = quantize %g            (f32 -> u8/i8, per tensor)
 *
 * Lowered op by op, that is three stages and two f32 tensors written and
 * read back. Here:
 *
 *   input   the dequantize becomes a view (its cg_lowering.view is
 *           cg_view_dequantize): %f is %q's storage with %q's quantized
 *           element type, and the softmax / layer_norm loop dequantizes
 *           each element as it loads it (cg_load_f32_dq);
 *   output  the softmax / layer_norm stores each result element through
 *           the quantize's computation straight into %h's storage
 *           (cg_fused_quantize names the quantize; its own lowering then
 *           emits nothing, and memplan makes %h live from the producer
 *           on). %g keeps a scratch slot that nothing touches.
 *
 * Each element goes through exactly the dequantize and quantize
 * lowerings' operations (lower_quant.c's cg_dequantize_elem and
 * cg_quantize_elem, the same f32 values in the same order), so the
 * result is bit-exact with the unfused graph and with the interpreter.
 * Fused only when the float value has that one use (a float tensor that
 * something else reads, or that the graph returns, is still written),
 * the parameters are per tensor with an f32 expressed type, and the op
 * computes in f32.
 */
#include "targets/llvm/cg.h"

/* A per-tensor quant type of integer storage expressed in f32. */
static bool per_tensor_f32(const quill_type *e) {
  return quill_type_is_quant(e) && quill_type_quant_axis_of(e) < 0 &&
         quill_type_kind_of(quill_type_quant_expressed(e)) == QUILL_TYPE_F32;
}

static bool is_f32(const quill_value *v) {
  quill_type *e = quill_type_elem(quill_value_type(v));
  return !quill_type_is_quant(e) && quill_type_kind_of(e) == QUILL_TYPE_F32;
}

/* softmax and layer_norm on f32 (the ops whose loops fuse), with rows
 * short enough for a row buffer on the stack (the softmax's exponentials
 * before a quantized store, the layer_norm's dequantized input). */
static bool fusing_op(const quill_op *op) {
  quill_opcode k = quill_op_opcode(op);
  if ((k != QUILL_OP_SOFTMAX && k != QUILL_OP_LAYER_NORM) ||
      !is_f32(quill_op_operand(op, 0)) || !is_f32(quill_op_result(op, 0)))
    return false;
  const quill_type *t = quill_value_type(quill_op_operand(op, 0));
  unsigned r = quill_type_rank(t);
  int64_t a = quill_op_attr_int(op, "axis", -1);
  if (a < 0)
    a += r;
  if (a < 0 || a >= (int64_t)r)
    return false;
  /* the row: the axis (softmax), dims [axis, rank) (layer_norm) */
  unsigned end = k == QUILL_OP_SOFTMAX ? (unsigned)a + 1 : r;
  int64_t row = 1;
  for (unsigned d = (unsigned)a; d < end; d++) {
    if (quill_type_dim(t, d) < 0)
      return false;
    row *= quill_type_dim(t, d);
  }
  return row <= CG_FUSED_ROW_MAX;
}

/* The single user of v, or NULL (no use, several, or the return). */
static quill_op *only_user(const quill_value *v, unsigned *operand) {
  if (!quill_value_has_one_use(v))
    return NULL;
  quill_use *u = quill_value_first_use(v);
  quill_op *user = quill_use_user(u);
  if (quill_op_opcode(user) == QUILL_OP_RETURN)
    return NULL;
  if (operand)
    *operand = quill_use_operand_index(u);
  return user;
}

bool cg_view_dequantize(const quill_op *op, const cg_view *in, cg_view *out) {
  unsigned k;
  quill_op *user = only_user(quill_op_result(op, 0), &k);
  if (!user || k != 0 || !fusing_op(user) || in->slot < 0 ||
      !per_tensor_f32(in->elem) ||
      !is_f32(quill_op_result(op, 0)))
    return false;
  *out = *in;
  return true;
}

const quill_op *cg_fused_quantize(const quill_op *op) {
  if (!fusing_op(op))
    return NULL;
  quill_op *q = only_user(quill_op_result(op, 0), NULL);
  if (!q || quill_op_opcode(q) != QUILL_OP_QUANTIZE ||
      !per_tensor_f32(quill_type_elem(quill_value_type(quill_op_result(q, 0)))))
    return NULL;
  return q;
}

bool cg_quantize_is_fused(const quill_op *q) {
  const quill_op *p = quill_value_def(quill_op_operand(q, 0));
  return p && cg_fused_quantize(p) == q;
}

LLVMValueRef cg_load_f32_dq(cg *c, const cg_view *v, LLVMValueRef base,
                            LLVMValueRef off) {
  if (!quill_type_is_quant(v->elem))
    return cg_load(c, c->t_f32, cg_gep(c, c->t_f32, base, off), 4);
  LLVMTypeRef st = cg_elem_type(c, v->elem);
  LLVMValueRef raw = cg_load(c, st, cg_gep(c, st, base, off), 1);
  return cg_dequantize_elem(c, v->elem, raw);
}

quill_status cg_fused_out_init(cg *c, const quill_op *op, cg_fused_out *o) {
  o->q = cg_fused_quantize(op);
  if (!o->q)
    return QUILL_OK;
  o->view = cg_value_view(c, quill_op_result(o->q, 0));
  return cg_op_rounding(c, o->q, &o->r);
}

void cg_fused_store(cg *c, const cg_fused_out *o, LLVMValueRef v,
                    LLVMValueRef base, LLVMValueRef off) {
  if (!o->q) {
    cg_store(c, v, cg_gep(c, c->t_f32, base, off), 4);
    return;
  }
  LLVMValueRef q = cg_quantize_elem(c, o->view.elem, o->r, v);
  cg_store_int(c, o->view.elem, q,
               cg_gep(c, cg_elem_type(c, o->view.elem), base, off));
}

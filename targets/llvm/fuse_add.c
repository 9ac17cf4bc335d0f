/*
 * fuse_add.c - a residual add in its conv's epilogue: the conv's result
 * is never written, the epilogue adds the other operand and stores the
 * sum.
 *
 * ResNet's blocks end with
 *
 *   %y = qconv2d %x, %w, %b     (u8/i8, one user)
 *   %s = qadd %y, %skip         (float form, relu as act_min)
 *
 * Lowered op by op, the conv writes %y and a qadd stage reads %y and
 * %skip back and writes %s. Here the conv's dot kernel (conv_dot.c, or
 * conv_amx.c's epilogue) requantizes each accumulator vector to %y's value as
 * before, loads the matching vector of %skip, and runs the qadd's
 * float form on the pair (cg_qadd_vec: the qadd lowering's own f32
 * operations, lane by lane) before storing into %s's buffer:
 *
 *   acc -> requant (y, clamped as %y's storage) -> qadd(y, skip) -> %s
 *
 * so the bits are those of the two ops. When the conv takes another path
 * (depthwise, portable) or the views do not fit (channels of %skip
 * or %s not contiguous), the conv writes %y and the qadd is emitted right
 * after it as its own stage. Either way the qadd's own lowering emits
 * nothing, and the memory plan keeps %s live from the conv on (%y keeps a
 * scratch slot). The decision (cg_fused_qadd) is taken from the graph
 * alone, because the memory plan comes before the lowering: the qadd is
 * the conv result's one user (not the return), float form, 8-bit
 * operands and result, all shapes equal, and its other operand is
 * produced before the conv (a graph argument, or an op earlier in the
 * order), so it is ready when the conv runs.
 */
#include <string.h>

#include "targets/llvm/cg.h"

static bool eight_bit(const quill_value *v) {
  const quill_type *e = quill_type_elem(quill_value_type(v));
  return quill_type_is_quant(e) &&
         quill_type_bit_width(quill_type_quant_storage(e)) == 8;
}

static bool same_shape(const quill_value *a, const quill_value *b) {
  return quill_type_rank(quill_value_type(a)) == 4 &&
         cg_same_shape(quill_value_type(a), quill_value_type(b));
}

const quill_op *cg_fused_qadd(cg *c, const quill_op *conv) {
  if (quill_op_opcode(conv) != QUILL_OP_QCONV2D)
    return NULL;
  const quill_value *y = quill_op_result(conv, 0);
  if (!quill_value_has_one_use(y) || !eight_bit(y))
    return NULL;
  quill_use *u = quill_value_first_use(y);
  const quill_op *add = quill_use_user(u);
  if (quill_op_opcode(add) != QUILL_OP_QADD || !cg_qadd_vec_form(add))
    return NULL;
  unsigned k = quill_use_operand_index(u);
  const quill_value *other = quill_op_operand(add, 1 - k);
  const quill_value *s = quill_op_result(add, 0);
  if (other == y || !eight_bit(other) || !eight_bit(s) ||
      !same_shape(y, other) || !same_shape(y, s))
    return NULL;
  return cg_val(c, other)->def < cg_val(c, y)->def ? add : NULL;
}

bool cg_qadd_is_fused(cg *c, const quill_op *add) {
  for (unsigned i = 0; i < 2; i++) {
    const quill_op *p = quill_value_def(quill_op_operand(add, i));
    if (p && cg_fused_qadd(c, p) == add)
      return true;
  }
  return false;
}

bool cg_conv_add_init(cg *c, const quill_op *conv, cg_conv_add *fa) {
  memset(fa, 0, sizeof *fa);
  const quill_op *add = cg_fused_qadd(c, conv);
  if (!add)
    return false;
  const quill_value *y = quill_op_result(conv, 0);
  fa->conv_operand = quill_op_operand(add, 0) == y ? 0 : 1;
  fa->other = cg_value_view(c, quill_op_operand(add, 1 - fa->conv_operand));
  fa->y = cg_value_view(c, quill_op_result(add, 0));
  if (fa->other.strides[1] != 1 || fa->y.strides[1] != 1)
    return false;
  fa->add = add;
  fa->recip = cg_qadd_recip(add, &fa->inv_y);
  return true;
}

LLVMValueRef cg_conv_add_apply(cg *c, const cg_conv_add *fa, LLVMValueRef r,
                               LLVMValueRef o) {
  return fa->conv_operand == 0
             ? cg_qadd_vec(c, fa->add, fa->recip, fa->inv_y, r, o)
             : cg_qadd_vec(c, fa->add, fa->recip, fa->inv_y, o, r);
}

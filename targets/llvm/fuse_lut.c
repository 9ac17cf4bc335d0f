/*
 * fuse_lut.c - a float island of elementwise ops between a dequantize of
 * 8-bit values and a quantize, lowered as one table lookup.
 *
 * After quantization a model keeps some elementwise float math between
 * integer ops, e.g. attention's scaling of Q:
 *
 *   %f = dequantize %q          (8-bit, per tensor)
 *   %s = div %f, %c             (%c a constant of one element)
 *   %h = quantize %s            (8-bit, per tensor)
 *
 * Lowered op by op, that is three stages and two f32 tensors. Every value
 * of %h is a function of one byte of %q, so the quantize is lowered as
 *
 *   h = table[q - storage_min]           (one cg_map, 256-byte table)
 *
 * where the table is the chain run at compile time by the reference
 * kernels themselves (quill_ref_eval_op on the 256 possible bytes): the
 * result is bit-exact with the unfused graph and the interpreter by
 * construction. The dequantize and the ops between emit nothing
 * (cg_qlut_fused; codegen.c skips them) and memplan keeps %q live up to the
 * quantize.
 *
 * The chain: a dequantize of a per-tensor 8-bit value, then up to
 * QLUT_MAX elementwise ops on f32 (QUILL_OPF_ELEMENTWISE, f32 result of the
 * same shape) whose other operands are constants of one element, each
 * value used once (never returned), then a quantize to a per-tensor 8-bit
 * type. A dequantize whose one user is a softmax or layer_norm is
 * fuse_qdq.c's instead (those ops are not elementwise).
 *
 * cg_lut_table evaluates one op of an 8-bit operand the same way (a
 * requantize lowered as a table, lower_quant.c).
 */
#include <string.h>

#include "targets/llvm/cg.h"
#include "targets/reference/ref.h"

#define QLUT_MAX 8 /* float ops between the dequantize and the quantize */

static bool per_tensor8(const quill_type *e) {
  return quill_type_is_quant(e) && quill_type_quant_axis_of(e) < 0 &&
         quill_type_bit_width(quill_type_quant_storage(e)) == 8;
}

static bool is_f32(const quill_value *v) {
  quill_type *e = quill_type_elem(quill_value_type(v));
  return !quill_type_is_quant(e) && quill_type_kind_of(e) == QUILL_TYPE_F32;
}

/* The single user of v, or NULL (no use, several, or the return). */
static quill_op *only_user(const quill_value *v) {
  if (!quill_value_has_one_use(v))
    return NULL;
  quill_op *user = quill_use_user(quill_value_first_use(v));
  return quill_op_opcode(user) == QUILL_OP_RETURN ? NULL : user;
}

/* op's operand that is not a one-element constant (its chain input), or
 * NULL when there is not exactly one. */
static const quill_value *chain_operand(const quill_op *op) {
  const quill_value *in = NULL;
  for (unsigned i = 0; i < quill_op_num_operands(op); i++) {
    const quill_value *v = quill_op_operand(op, i);
    if (quill_value_constant(v) &&
        quill_type_num_elements(quill_value_type(v)) == 1 && is_f32(v))
      continue;
    if (in)
      return NULL;
    in = v;
  }
  return in;
}

/* ops[0] = the dequantize, ops[1..n-1] the float ops, for quantize q;
 * the count (0: no chain). */
static unsigned chain(const quill_op *q, const quill_op **ops) {
  if (quill_op_opcode(q) != QUILL_OP_QUANTIZE ||
      !per_tensor8(quill_type_elem(quill_value_type(quill_op_result(q, 0)))))
    return 0;
  const quill_value *v = quill_op_operand(q, 0);
  const quill_type *shape = quill_value_type(v);
  const quill_op *rev[QLUT_MAX + 1];
  unsigned n = 0;
  for (;;) {
    const quill_op *d = quill_value_def(v);
    if (!d || !is_f32(v) || only_user(v) == NULL ||
        !cg_same_shape(quill_value_type(v), shape) || n > QLUT_MAX)
      return 0;
    rev[n++] = d;
    if (quill_op_opcode(d) == QUILL_OP_DEQUANTIZE) {
      if (!per_tensor8(quill_type_elem(
              quill_value_type(quill_op_operand(d, 0)))) ||
          n < 2) /* a bare dequantize -> quantize is a requantize */
        return 0;
      break;
    }
    if (!quill_op_has_flag(d, QUILL_OPF_ELEMENTWISE) ||
        quill_op_num_results(d) != 1 || !(v = chain_operand(d)))
      return 0;
  }
  for (unsigned i = 0; i < n; i++)
    ops[i] = rev[n - 1 - i];
  return n;
}

const quill_op *cg_qlut_source(const quill_op *q) {
  const quill_op *ops[QLUT_MAX + 1];
  return chain(q, ops) ? ops[0] : NULL;
}

bool cg_qlut_fused(const quill_op *op) {
  quill_opcode k = quill_op_opcode(op);
  if (k != QUILL_OP_DEQUANTIZE && !quill_op_has_flag(op, QUILL_OPF_ELEMENTWISE))
    return false;
  const quill_op *cur = op;
  for (unsigned i = 0; i <= QLUT_MAX + 1; i++) {
    if (quill_op_num_results(cur) != 1)
      return false;
    const quill_op *u = only_user(quill_op_result(cur, 0));
    if (!u)
      return false;
    if (quill_op_opcode(u) == QUILL_OP_QUANTIZE) {
      const quill_op *ops[QLUT_MAX + 1];
      unsigned n = chain(u, ops);
      for (unsigned j = 0; j < n; j++)
        if (ops[j] == op)
          return true;
      return false;
    }
    cur = u;
  }
  return false;
}

/* A tensor of v's element type with dims 1 but the last, 256 (rank r). */
static quill_status grid(quill_context *ctx, const quill_value *v, unsigned r,
                         quill_tensor *t) {
  int64_t dims[QUILL_MAX_RANK];
  for (unsigned d = 0; d < r; d++)
    dims[d] = d + 1 == r ? 256 : 1;
  quill_type *ty =
      quill_type_tensor(ctx, quill_type_elem(quill_value_type(v)), r, dims);
  if (!ty)
    return QUILL_ERR_NOMEM;
  return quill_tensor_alloc(ctx, ty, t);
}

/* The chain from ops[0] (the dequantize) to q on the 256 input bytes. */
static quill_status eval(cg *c, const quill_op *q, const quill_op **ops,
                         unsigned n, unsigned char *tab) {
  quill_context *ctx = c->ctx;
  const quill_value *x = quill_op_operand(ops[0], 0);
  unsigned r = quill_type_rank(quill_value_type(x));
  if (r == 0)
    r = 1;
  int64_t lo = quill_type_int_min(
      quill_type_quant_storage(quill_type_elem(quill_value_type(x))));
  quill_tensor cur, nxt;
  quill_status st = grid(ctx, x, r, &cur);
  if (st)
    return st;
  for (int64_t i = 0; i < 256; i++)
    quill_tensor_set_i64(&cur, (size_t)i, lo + i);
  for (unsigned i = 0; i <= n && !st; i++) {
    const quill_op *op = i < n ? ops[i] : q;
    if ((st = grid(ctx, quill_op_result(op, 0), r, &nxt)))
      break;
    quill_tensor in[QUILL_REF_BCAST_MAX_INPUTS];
    unsigned nin = quill_op_num_operands(op);
    if (nin > QUILL_REF_BCAST_MAX_INPUTS) {
      quill_tensor_free(ctx, &nxt);
      st = cg_op_error(c, "internal: too many operands in a lut chain");
      break;
    }
    for (unsigned k = 0; k < nin; k++) {
      const quill_attr *a = quill_value_constant(quill_op_operand(op, k));
      in[k] = i > 0 && i < n && a ? quill_tensor_from_attr(a) : cur;
    }
    st = quill_ref_eval_op(ctx, op, in, &nxt);
    quill_tensor_free(ctx, &cur);
    cur = nxt;
  }
  for (size_t i = 0; !st && i < 256; i++)
    tab[i] = (unsigned char)quill_tensor_get_i64(&cur, i);
  quill_tensor_free(ctx, &cur);
  return st;
}

quill_status cg_qlut_emit(cg *c, const quill_op *q) {
  const quill_op *ops[QLUT_MAX + 1];
  unsigned n = chain(q, ops);
  if (!n)
    return cg_op_error(c, "internal: not a lut chain");
  unsigned char tab[256];
  quill_status st = eval(c, q, ops, n, tab);
  if (st)
    return st;
  cg_view x = cg_value_view(c, quill_op_operand(ops[0], 0));
  cg_view y = cg_value_view(c, quill_op_result(q, 0));
  cg_lut_map(c, "qlut", &y, &x, cg_const_global(c, "qlut", tab, sizeof tab));
  return c->status;
}

quill_status cg_lut_table(cg *c, const quill_op *op, unsigned char *tab) {
  const quill_op *ops[1] = {op};
  return eval(c, op, ops, 0, tab);
}

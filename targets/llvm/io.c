/*
 * io.c - quill_llvm_adapt_io: make a graph's signature quantized or float
 * as the user asks (`quill compile --io=int8|float`), by folding the
 * boundary quantize/dequantize ops in or out.
 *
 *   int8   %x: f32 -> quantize -> T   becomes   %x: T  (all uses of the
 *          input must be quantizes to one type T; they are erased)
 *          return dequantize(%q)      becomes   return %q
 *   float  %x: T (quantized)          becomes   %x: f32 -> quantize -> T
 *          return %q (quantized)      becomes   return dequantize(%q)
 *
 * Inputs and results that do not fit the pattern keep their types.
 */
#include <string.h>

#include "targets/llvm/cg.h"

static quill_type *float_of(quill_context *ctx, quill_type *t) {
  quill_type *e = quill_type_elem(t);
  return quill_type_with_elem(ctx, t, quill_type_quant_expressed(e));
}

/* The common quantize result type of all uses of v, or NULL. */
static quill_type *all_quantize(const quill_value *v) {
  quill_type *t = NULL;
  if (!quill_value_has_uses(v))
    return NULL;
  for (quill_use *u = quill_value_first_use(v); u; u = quill_use_next(u)) {
    quill_op *op = quill_use_user(u);
    if (quill_op_opcode(op) != QUILL_OP_QUANTIZE)
      return NULL;
    quill_type *r = quill_value_type(quill_op_result(op, 0));
    if (t && r != t)
      return NULL;
    t = r;
  }
  return t;
}

static quill_status to_int8(quill_context *ctx, quill_graph *g) {
  for (unsigned i = 0; i < quill_graph_num_args(g); i++) {
    quill_value *a = quill_graph_arg(g, i);
    if (!quill_type_is_float(quill_type_elem(quill_value_type(a))))
      continue;
    quill_type *t = all_quantize(a);
    if (!t)
      continue;
    quill_value_set_type(a, t);
    /* take the quantizes off the use list first: rewiring their users
     * adds uses of a */
    unsigned n = quill_value_num_uses(a), k = 0;
    quill_op **qs = quill_alloc(ctx, n * sizeof *qs);
    if (!qs)
      return QUILL_ERR_NOMEM;
    for (quill_use *u = quill_value_first_use(a); u; u = quill_use_next(u))
      qs[k++] = quill_use_user(u);
    for (k = 0; k < n; k++) {
      quill_value_replace_all_uses(quill_op_result(qs[k], 0), a);
      quill_op_erase(qs[k]);
    }
    quill_free(ctx, qs, n * sizeof *qs);
  }
  quill_op *ret = quill_graph_return(g);
  unsigned n = quill_op_num_operands(ret);
  quill_type *types[256];
  if (n > 256)
    return QUILL_OK;
  for (unsigned j = 0; j < n; j++) {
    quill_value *v = quill_op_operand(ret, j);
    quill_op *d = quill_value_def(v);
    if (d && quill_op_opcode(d) == QUILL_OP_DEQUANTIZE) {
      quill_op_set_operand(ret, j, quill_op_operand(d, 0));
      if (!quill_value_has_uses(quill_op_result(d, 0)))
        quill_op_erase(d);
    }
    types[j] = quill_value_type(quill_op_operand(ret, j));
  }
  return quill_graph_set_result_types(g, n, types);
}

static quill_status to_float(quill_context *ctx, quill_graph *g) {
  quill_op *first = quill_graph_first_op(g);
  for (unsigned i = 0; i < quill_graph_num_args(g); i++) {
    quill_value *a = quill_graph_arg(g, i);
    quill_type *t = quill_value_type(a);
    if (!quill_type_is_quant(quill_type_elem(t)))
      continue;
    quill_type *ft = float_of(ctx, t);
    if (!ft)
      return QUILL_ERR_NOMEM;
    quill_value_set_type(a, ft);
    quill_op *q = quill_op_create(g, QUILL_OP_QUANTIZE, 1, &a, 1, &t, 0, NULL,
                                  quill_graph_loc(g));
    if (!q)
      return QUILL_ERR_NOMEM;
    /* rewire the old uses (the new op is not attached yet: it has a use of
     * a too, so skip it) */
    quill_use *u = quill_value_first_use(a);
    while (u) {
      quill_use *nx = quill_use_next(u);
      if (quill_use_user(u) != q)
        quill_op_set_operand(quill_use_user(u), quill_use_operand_index(u),
                             quill_op_result(q, 0));
      u = nx;
    }
    quill_op_insert_before(first, q);
  }
  quill_op *ret = quill_graph_return(g);
  unsigned n = quill_op_num_operands(ret);
  quill_type *types[256];
  if (n > 256)
    return QUILL_OK;
  for (unsigned j = 0; j < n; j++) {
    quill_value *v = quill_op_operand(ret, j);
    quill_type *t = quill_value_type(v);
    if (quill_type_is_quant(quill_type_elem(t))) {
      quill_type *ft = float_of(ctx, t);
      if (!ft)
        return QUILL_ERR_NOMEM;
      quill_op *d = quill_op_create(g, QUILL_OP_DEQUANTIZE, 1, &v, 1, &ft, 0,
                                    NULL, quill_graph_loc(g));
      if (!d)
        return QUILL_ERR_NOMEM;
      quill_op_insert_before(ret, d);
      quill_op_set_operand(ret, j, quill_op_result(d, 0));
    }
    types[j] = quill_value_type(quill_op_operand(ret, j));
  }
  return quill_graph_set_result_types(g, n, types);
}

quill_status quill_llvm_adapt_io(quill_context *ctx, quill_graph *g,
                                 quill_llvm_io mode) {
  if (!quill_graph_return(g))
    return QUILL_OK;
  if (mode == QUILL_LLVM_IO_INT8)
    return to_int8(ctx, g);
  if (mode == QUILL_LLVM_IO_FLOAT)
    return to_float(ctx, g);
  return QUILL_OK;
}

/*
 * fold.c - the analysis before lowering: QDQ folding and aliases.
 *
 * A float op with an int8 TFLite kernel (tx_table[].int8) whose operands
 * all come from `dequantize` of int8 values (an int32 one for the bias
 * slot; constant bounds for clip) and whose result is used only by
 * `quantize` ops of one int8 type is written as the int8 builtin:
 *
 *   %a = dequantize %qa        ein[0] = %qa
 *   %w = dequantize %qw        ein[1] = %qw (constant int8 weights)
 *   %y = conv2d %a, %w    ==>  CONV_2D(qa, qw, bias) -> qy
 *   %qy = quantize %y          eout = %qy
 *
 * The folded op's effective operands and result (tx_ein / tx_eout) are
 * the quantized values; the quantize ops write nothing (a second quantize
 * of the same type aliases the first), and a dequantize whose every user
 * is folded writes nothing either. An `identity` that is not a graph
 * output aliases its operand.
 */
#include "targets/tflite/export_impl.h"

/* ---- analysis: QDQ folding and aliases --------------------------------------------------------- */

static bool is_return_use(const quill_value *v) {
  for (quill_use *u = quill_value_first_use(v); u; u = quill_use_next(u))
    if (quill_op_opcode(quill_use_user(u)) == QUILL_OP_RETURN)
      return true;
  return false;
}

/* The quantized value a dequantize feeding `v` reads, if v = dequantize(q)
 * with q of int8 or int32 storage. */
static const quill_value *dq_source(const quill_value *v) {
  quill_op *d = quill_value_def(v);
  if (!d || quill_op_opcode(d) != QUILL_OP_DEQUANTIZE)
    return NULL;
  quill_value *q = quill_op_operand(d, 0);
  quill_type *e = quill_type_elem(quill_value_type(q));
  if (!quill_type_is_quant(e))
    return NULL;
  quill_type_kind k = quill_type_kind_of(quill_type_quant_storage(e));
  return k == QUILL_TYPE_I8 || k == QUILL_TYPE_I32 ? q : NULL;
}

static void try_fold(tflite_exporter *ex, quill_op *op) {
  quill_opcode opc = quill_op_opcode(op);
  if (!tx_table[opc].int8 || quill_op_num_results(op) != 1)
    return;
  quill_value *r = quill_op_result(op, 0);
  if (!quill_type_is_float(quill_type_elem(quill_value_type(r))))
    return;
  unsigned n = quill_op_num_operands(op);
  const quill_value **ein = tx_alloc(ex, (n ? n : 1) * sizeof *ein);
  if (!ein)
    return;
  for (unsigned i = 0; i < n; i++) {
    quill_value *v = quill_op_operand(op, i);
    if (opc == QUILL_OP_CLIP && i > 0 && quill_value_constant(v)) {
      ein[i] = v; /* a constant float bound */
      continue;
    }
    ein[i] = dq_source(v);
    if (!ein[i])
      return;
    quill_type_kind k = quill_type_kind_of(
        quill_type_quant_storage(quill_type_elem(quill_value_type(ein[i]))));
    if (k == QUILL_TYPE_I32 && i != 2) /* only a bias may be int32 */
      return;
  }
  const quill_value *first = NULL;
  quill_type *qt = NULL;
  for (quill_use *u = quill_value_first_use(r); u; u = quill_use_next(u)) {
    quill_op *q = quill_use_user(u);
    if (quill_op_opcode(q) != QUILL_OP_QUANTIZE)
      return;
    quill_type *t = quill_value_type(quill_op_result(q, 0));
    quill_type *e = quill_type_elem(t);
    if (quill_type_kind_of(quill_type_quant_storage(e)) != QUILL_TYPE_I8 ||
        (qt && t != qt))
      return;
    qt = t;
    if (!first)
      first = quill_op_result(q, 0);
  }
  if (!first)
    return;
  tx_opinfo *oi = tx_op_info(ex, op);
  if (!oi)
    return;
  oi->folded = true;
  oi->ein = ein;
  oi->eout = first;
  for (quill_use *u = quill_value_first_use(r); u; u = quill_use_next(u)) {
    quill_op *q = quill_use_user(u);
    tx_opinfo *qi = tx_op_info(ex, q);
    if (qi)
      qi->skip = true;
    if (quill_op_result(q, 0) != first) {
      tx_vinfo *vi = tx_info(ex, quill_op_result(q, 0));
      if (vi)
        vi->alias = first;
    }
  }
}

void tx_fold_analyze(tflite_exporter *ex) {
  const quill_graph *g = ex->graph;
  for (unsigned i = 0; i < quill_graph_num_args(g); i++)
    tx_info(ex, quill_graph_arg(g, i));
  QUILL_GRAPH_FOREACH(g, op) {
    for (unsigned i = 0; i < quill_op_num_results(op); i++)
      tx_info(ex, quill_op_result(op, i));
    try_fold(ex, op);
  }
  QUILL_GRAPH_FOREACH(g, op) {
    quill_opcode opc = quill_op_opcode(op);
    if (opc == QUILL_OP_DEQUANTIZE) {
      /* Needed only by folded ops: nothing to write. */
      quill_value *r = quill_op_result(op, 0);
      bool needed = !quill_value_has_uses(r);
      for (quill_use *u = quill_value_first_use(r); u && !needed;
           u = quill_use_next(u)) {
        tx_opinfo *ui = tx_map_get(&ex->opinfo, quill_use_user(u));
        needed = !ui || !ui->folded;
      }
      if (!needed) {
        tx_opinfo *oi = tx_op_info(ex, op);
        if (oi)
          oi->skip = true;
      }
    } else if (opc == QUILL_OP_IDENTITY &&
               !is_return_use(quill_op_result(op, 0))) {
      tx_vinfo *vi = tx_info(ex, quill_op_result(op, 0));
      tx_opinfo *oi = tx_op_info(ex, op);
      if (vi && oi) {
        vi->alias = quill_op_operand(op, 0);
        oi->skip = true;
      }
    }
  }
}

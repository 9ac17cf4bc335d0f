/*
 * constant_fold.c - the `constant-fold` pass: evaluate ops whose operands
 * are all constants with the reference interpreter and replace their
 * results by constants.
 *
 * One forward sweep per graph, in program order, so chains fold in one run
 * (a folded result is a constant by the time its users are visited):
 *
 *   %a = constant {value = dense<[1.0, 2.0]> : tensor<2xf32>}
 *   %b = constant {value = dense<3.0> : tensor<f32>}
 *   %c = add %a, %b                       %c' = constant {value =
 *   %d = neg %c               ==>            dense<[-4.0, -5.0]> : ...}
 *   return %d                             return %c'
 *
 * An op folds when it is PURE, not itself a constant, every operand is
 * defined by a constant op, the reference target supports it
 * (quill_ref_op_supported: a kernel exists and accepts its element types),
 * every result type is statically shaped and holds at most `max-elements`
 * elements (option, default 1 << 20). The op is evaluated with
 * quill_ref_eval_op; each result becomes a new constant op (dense attr of
 * the result type, the op's location) inserted right before the op; the
 * op is erased. Operand constants that are left without uses by the fold
 * are erased too (so dce is not needed to clean up after this pass);
 * constants that were already unused are left alone.
 *
 * An evaluation error (integer division by zero, an out-of-range gather
 * index, ...) has already been reported at the op by the kernel; the pass
 * then fails. Statistic: "num-folded" (ops folded).
 */
#include "passes/pass.h"
#include "targets/reference/ref.h"

#define DEFAULT_MAX_ELEMENTS (INT64_C(1) << 20)

/* Why op cannot be folded (a static string for the debug channel), or
 * NULL if it can. */
static const char *why_not_foldable(const quill_op *op, int64_t max_elements) {
  if (!quill_op_has_flag(op, QUILL_OPF_PURE))
    return "not pure";
  if (quill_op_has_flag(op, QUILL_OPF_CONSTANT))
    return "already a constant";
  if (quill_op_num_results(op) == 0)
    return "no results";
  for (unsigned i = 0; i < quill_op_num_operands(op); i++)
    if (!quill_value_constant(quill_op_operand(op, i)))
      return "an operand is not a constant";
  for (unsigned i = 0; i < quill_op_num_results(op); i++) {
    quill_type *t = quill_value_type(quill_op_result(op, i));
    if (!t || !quill_type_is_tensor(t) || !quill_type_has_static_shape(t))
      return "a result shape is not static";
    int64_t n = quill_type_num_elements(t);
    if (n < 0 || n > max_elements)
      return "a result is larger than max-elements";
  }
  const char *why = NULL;
  if (!quill_ref_op_supported(op, &why))
    return why;
  return NULL;
}

/* Erase the constant defining v if it has no uses left. */
static void erase_if_dead_constant(quill_value *v) {
  quill_op *def = quill_value_def(v);
  if (def && quill_op_opcode(def) == QUILL_OP_CONSTANT &&
      !quill_value_has_uses(v) && quill_op_is_attached(def))
    quill_op_erase(def);
}

/* Evaluate op and replace it by constants. */
static quill_status fold_op(quill_pass_state *ps, quill_op *op) {
  quill_context *ctx = quill_pass_context(ps);
  quill_graph *g = quill_op_graph(op);
  unsigned nin = quill_op_num_operands(op), nout = quill_op_num_results(op);
  quill_status st = QUILL_ERR_NOMEM;
  quill_tensor *in = quill_calloc(ctx, nin ? nin : 1, sizeof *in);
  quill_tensor *out = quill_calloc(ctx, nout, sizeof *out);
  quill_value **operands = quill_calloc(ctx, nin ? nin : 1, sizeof *operands);
  const quill_attr **attrs = quill_calloc(ctx, nout, sizeof *attrs);
  quill_ident value_name = quill_ident_get(ctx, "value");
  bool outputs_live = false;
  if (!in || !out || !operands || !attrs || !value_name)
    goto done;
  for (unsigned i = 0; i < nin; i++) {
    operands[i] = quill_op_operand(op, i);
    in[i] = quill_tensor_from_attr(quill_value_constant(operands[i]));
  }
  st = quill_ref_outputs_alloc(ctx, op, out);
  if (st != QUILL_OK)
    goto done;
  outputs_live = true;
  st = quill_ref_eval_op(ctx, op, in, out);
  if (st != QUILL_OK)
    goto done;
  /* Build every attr before touching the IR, so failure leaves it intact. */
  st = QUILL_ERR_NOMEM;
  for (unsigned i = 0; i < nout; i++)
    if (!(attrs[i] = quill_tensor_to_attr(ctx, &out[i])))
      goto done;
  for (unsigned i = 0; i < nout; i++) {
    quill_value *res = quill_op_result(op, i);
    quill_type *t = quill_value_type(res);
    quill_named_attr na = {value_name, attrs[i]};
    quill_op *c = quill_op_create(g, QUILL_OP_CONSTANT, 0, NULL, 1, &t, 1, &na,
                                  quill_op_loc(op));
    if (!c)
      goto done; /* earlier results stay replaced: still correct IR */
    quill_op_insert_before(op, c);
    quill_value_replace_all_uses(res, quill_op_result(c, 0));
  }
  quill_op_erase(op);
  for (unsigned i = 0; i < nin; i++)
    erase_if_dead_constant(operands[i]);
  st = QUILL_OK;
done:
  for (unsigned i = 0; outputs_live && i < nout; i++)
    quill_tensor_free(ctx, &out[i]);
  quill_free(ctx, in, (nin ? nin : 1) * sizeof *in);
  quill_free(ctx, out, nout * sizeof *out);
  quill_free(ctx, operands, (nin ? nin : 1) * sizeof *operands);
  quill_free(ctx, attrs, nout * sizeof *attrs);
  return st;
}

static quill_status run(quill_pass_state *ps, quill_module *m) {
  quill_status st = QUILL_OK;
  int64_t max_elements =
      quill_pass_option_int(ps, "max-elements", DEFAULT_MAX_ELEMENTS, &st);
  if (st != QUILL_OK)
    return st;
  uint64_t folded = 0;
  for (unsigned gi = 0; gi < quill_module_num_graphs(m); gi++) {
    quill_graph *g = quill_module_graph(m, gi);
    QUILL_GRAPH_FOREACH_SAFE(g, op, next) {
      const char *why = why_not_foldable(op, max_elements);
      if (why) {
        if (quill_op_opcode(op) != QUILL_OP_CONSTANT &&
            quill_op_opcode(op) != QUILL_OP_RETURN)
          quill_pass_debug(ps, "not folding '%s': %s", quill_op_name(op), why);
        continue;
      }
      quill_pass_debug(ps, "folding '%s'", quill_op_name(op));
      st = fold_op(ps, op);
      if (st != QUILL_OK)
        return st;
      folded++;
    }
  }
  if (folded)
    quill_pass_stat_add(ps, "num-folded", folded);
  else
    quill_pass_mark_unchanged(ps);
  return QUILL_OK;
}

const quill_pass quill_pass_constant_fold = {
    .name = "constant-fold",
    .summary = "Evaluate ops whose operands are all constants",
    .run = run,
    .requires = 0,
    .establishes = QUILL_PROP_CONSTANTS_FOLDED,
    .preserves = 0,
    .options = "max-elements=N",
};

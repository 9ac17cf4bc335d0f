/*
 * fold_double_neg.c - an example pass plugin with a rewrite pattern:
 *
 *   %a = neg %x          ==>    (uses of %b become uses of %x; the
 *   %b = neg %a                  neg ops die and the driver erases them)
 *
 * It registers the pattern set "double-neg" (usable by the built-in pass
 * apply-patterns{sets=double-neg}) and the pass `fold-double-neg`, which
 * applies that set to every graph with the greedy driver and reports the
 * statistic num-folded. Built against the installed package, public API
 * only.
 */
#include <quill/plugin.h>

/* neg(neg(x)) -> x, when the types agree (they always do for a verified
 * neg, but a pattern checks before it commits). */
static quill_match_result match_double_neg(const quill_pattern *p,
                                           quill_rewriter *rw, quill_op *op) {
  (void)p;
  quill_op *inner = quill_value_def(quill_op_operand(op, 0));
  if (!inner || quill_op_opcode(inner) != QUILL_OP_NEG)
    return quill_rewriter_fail(rw, op, "operand is not a neg");
  quill_value *x = quill_op_operand(inner, 0);
  if (quill_value_type(x) != quill_value_type(quill_op_result(op, 0)))
    return quill_rewriter_fail(rw, op, "types differ");
  quill_rewriter_replace_op(rw, op, &x);
  return QUILL_MATCH_SUCCESS;
}

static const quill_pattern double_neg_patterns[] = {
    {"double-neg", QUILL_OP_NEG, 1, match_double_neg, NULL},
};

static quill_status fold_double_neg_run(quill_pass_state *ps,
                                        quill_module *m) {
  quill_context *ctx = quill_pass_context(ps);
  unsigned n = 0;
  const quill_pattern *pats = quill_patterns_find(ctx, "double-neg", &n);
  quill_pattern_set *set = quill_pattern_set_create(ctx);
  if (!set)
    return QUILL_ERR_NOMEM;
  quill_status st = QUILL_OK;
  for (unsigned i = 0; !st && i < n; ++i)
    st = quill_pattern_set_add(set, &pats[i]);
  quill_greedy_config cfg = {10, true, "fold-double-neg"};
  bool any = false;
  uint64_t total = 0;
  for (unsigned i = 0; !st && i < quill_module_num_graphs(m); ++i) {
    bool changed = false;
    uint64_t k = 0;
    st = quill_apply_patterns_greedily(quill_module_graph(m, i), set, &cfg,
                                       &changed, &k);
    any |= changed;
    total += k;
  }
  quill_pattern_set_destroy(set);
  quill_pass_stat_add(ps, "num-folded", total);
  if (!st && !any)
    quill_pass_mark_unchanged(ps);
  return st;
}

static const quill_pass fold_double_neg_pass = {
    .name = "fold-double-neg",
    .summary = "Rewrite neg(neg(x)) to x (pattern set 'double-neg')",
    .run = fold_double_neg_run,
    .requires = 0,
    .establishes = 0,
    .preserves = 0,
    .options = NULL,
};

QUILL_PLUGIN("fold-double-neg", "1.0") {
  quill_status st = quill_plugin_register_patterns(
      reg, "double-neg", double_neg_patterns,
      sizeof double_neg_patterns / sizeof double_neg_patterns[0]);
  if (!st)
    st = quill_plugin_register_pass(reg, &fold_double_neg_pass);
  return st;
}

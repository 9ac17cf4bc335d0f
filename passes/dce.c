/*
 * dce.c - dead code elimination: erase pure ops whose results are unused.
 *
 * One reverse walk per graph suffices: graphs are single blocks in SSA
 * order, so every user of an op comes after it. Walking from the return
 * upwards, an op is erased as soon as it has no uses left, which may in
 * turn free its operands' defining ops, visited later in the same walk:
 *
 *   %a = constant       <- 3rd: unused now, erased
 *   %b = relu %a        <- 2nd: unused now, erased
 *   %c = sigmoid %b     <- 1st: unused, erased
 *   return %x
 *
 * Ops without QUILL_OPF_PURE (fake_quant observers, return) are kept.
 * Statistic: num-erased. Establishes QUILL_PROP_NO_DEAD_OPS and preserves
 * everything else (removing unused ops cannot create foldable, common or
 * non-canonical ops).
 */
#include "passes/pass.h"

static bool is_dead(const quill_op *op) {
  if (!quill_op_has_flag(op, QUILL_OPF_PURE) ||
      quill_op_has_flag(op, QUILL_OPF_TERMINATOR))
    return false;
  for (unsigned i = 0; i < quill_op_num_results(op); ++i)
    if (quill_value_has_uses(quill_op_result(op, i)))
      return false;
  return true;
}

static uint64_t dce_graph(quill_pass_state *ps, quill_graph *g) {
  uint64_t erased = 0;
  quill_op *op = quill_graph_last_op(g);
  while (op) {
    quill_op *prev = quill_op_prev(op);
    if (is_dead(op)) {
      quill_pass_debug(ps, "erasing '%s' in @%s", quill_op_name(op),
                       quill_graph_name(g));
      quill_op_erase(op);
      ++erased;
    }
    op = prev;
  }
  return erased;
}

static quill_status dce_run(quill_pass_state *ps, quill_module *m) {
  uint64_t erased = 0;
  for (unsigned i = 0; i < quill_module_num_graphs(m); ++i)
    erased += dce_graph(ps, quill_module_graph(m, i));
  quill_pass_stat_add(ps, "num-erased", erased);
  if (!erased)
    quill_pass_mark_unchanged(ps);
  return QUILL_OK;
}

const quill_pass quill_pass_dce = {
    .name = "dce",
    .summary = "Erase pure ops whose results are unused",
    .run = dce_run,
    .requires = 0,
    .establishes = QUILL_PROP_NO_DEAD_OPS,
    .preserves = QUILL_PROP_ALL,
    .options = NULL,
};

/*
 * cse.c - common subexpression elimination for pure ops.
 *
 * Two ops are equal when they have the same opcode, the same operand values
 * in the same order, the same attributes (name and uniqued pointer, in
 * order) and the same result types. Since types and attributes are uniqued
 * in the context, all of these are pointer comparisons.
 *
 * One forward walk per graph with an open-addressing hash set of the pure
 * ops seen so far. Graphs are single blocks in SSA order, so an earlier
 * equal op dominates a later one, and the earlier op survives:
 *
 *   %0 = add %a, %b         keep (inserted into the table)
 *   %1 = add %a, %b         equal to %0: uses of %1 -> %0, erase %1
 *   %2 = add %b, %a         different (operand order is significant;
 *                           canonicalize only moves constants right)
 *
 * Statistic: num-cse'd. Establishes QUILL_PROP_NO_COMMON_SUBEXPR. Keeps
 * NO_DEAD_OPS (the survivor still uses the erased op's operands) and
 * CONSTANTS_FOLDED; CANONICAL is dropped since merging may expose patterns.
 */
#include <string.h>

#include "passes/pass.h"

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

static uint64_t op_hash(const quill_op *op) {
  uint64_t h = (uint64_t)quill_op_opcode(op) * 0x100000001b3ULL;
  unsigned n = quill_op_num_operands(op);
  h = mix(h, n);
  for (unsigned i = 0; i < n; ++i)
    h = mix(h, (uint64_t)(uintptr_t)quill_op_operand(op, i));
  unsigned na = quill_op_num_attrs(op);
  h = mix(h, na);
  for (unsigned i = 0; i < na; ++i) {
    quill_named_attr a = quill_op_attr_at(op, i);
    h = mix(h, (uint64_t)(uintptr_t)a.name);
    h = mix(h, (uint64_t)(uintptr_t)a.attr);
  }
  unsigned nr = quill_op_num_results(op);
  h = mix(h, nr);
  for (unsigned i = 0; i < nr; ++i)
    h = mix(h, (uint64_t)(uintptr_t)quill_value_type(quill_op_result(op, i)));
  return h;
}

static bool op_equal(const quill_op *a, const quill_op *b) {
  if (quill_op_opcode(a) != quill_op_opcode(b) ||
      quill_op_num_operands(a) != quill_op_num_operands(b) ||
      quill_op_num_attrs(a) != quill_op_num_attrs(b) ||
      quill_op_num_results(a) != quill_op_num_results(b))
    return false;
  for (unsigned i = 0; i < quill_op_num_operands(a); ++i)
    if (quill_op_operand(a, i) != quill_op_operand(b, i))
      return false;
  for (unsigned i = 0; i < quill_op_num_attrs(a); ++i) {
    quill_named_attr x = quill_op_attr_at(a, i), y = quill_op_attr_at(b, i);
    if (x.name != y.name || x.attr != y.attr)
      return false;
  }
  for (unsigned i = 0; i < quill_op_num_results(a); ++i)
    if (quill_value_type(quill_op_result(a, i)) !=
        quill_value_type(quill_op_result(b, i)))
      return false;
  return true;
}

typedef struct op_table {
  quill_context *ctx;
  quill_op **slots;
  size_t cap; /* a power of two, at least twice the number of entries */
} op_table;

/* Return the equal op already in the table, or insert op and return NULL. */
static quill_op *table_find_or_insert(op_table *t, quill_op *op) {
  size_t mask = t->cap - 1;
  for (size_t i = (size_t)op_hash(op) & mask;; i = (i + 1) & mask) {
    if (!t->slots[i]) {
      t->slots[i] = op;
      return NULL;
    }
    if (op_equal(t->slots[i], op))
      return t->slots[i];
  }
}

static bool cse_candidate(const quill_op *op) {
  return quill_op_has_flag(op, QUILL_OPF_PURE) &&
         !quill_op_has_flag(op, QUILL_OPF_TERMINATOR) &&
         quill_op_num_results(op) > 0;
}

static quill_status cse_graph(quill_pass_state *ps, quill_graph *g,
                              uint64_t *merged) {
  quill_context *ctx = quill_pass_context(ps);
  op_table t = {ctx, NULL, 16};
  while (t.cap < (size_t)quill_graph_num_ops(g) * 2)
    t.cap *= 2;
  t.slots = quill_calloc(ctx, t.cap, sizeof *t.slots);
  if (!t.slots)
    return QUILL_ERR_NOMEM;
  QUILL_GRAPH_FOREACH_SAFE(g, op, next) {
    if (!cse_candidate(op))
      continue;
    quill_op *prior = table_find_or_insert(&t, op);
    if (!prior)
      continue;
    quill_pass_debug(ps, "merging '%s' into an earlier equal op in @%s",
                     quill_op_name(op), quill_graph_name(g));
    for (unsigned i = 0; i < quill_op_num_results(op); ++i)
      quill_value_replace_all_uses(quill_op_result(op, i),
                                   quill_op_result(prior, i));
    quill_op_erase(op);
    ++*merged;
  }
  quill_free(ctx, t.slots, t.cap * sizeof *t.slots);
  return QUILL_OK;
}

static quill_status cse_run(quill_pass_state *ps, quill_module *m) {
  uint64_t merged = 0;
  for (unsigned i = 0; i < quill_module_num_graphs(m); ++i) {
    quill_status st = cse_graph(ps, quill_module_graph(m, i), &merged);
    if (st)
      return st;
  }
  quill_pass_stat_add(ps, "num-cse'd", merged);
  if (!merged)
    quill_pass_mark_unchanged(ps);
  return QUILL_OK;
}

const quill_pass quill_pass_cse = {
    .name = "cse",
    .summary = "Merge identical pure ops (common subexpression elimination)",
    .run = cse_run,
    .requires = 0,
    .establishes = QUILL_PROP_NO_COMMON_SUBEXPR,
    .preserves = QUILL_PROP_NO_DEAD_OPS | QUILL_PROP_CONSTANTS_FOLDED,
    .options = NULL,
};

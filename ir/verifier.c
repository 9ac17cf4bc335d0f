/*
 * verifier.c - the generic IR verifier.
 *
 * For every op, against its ops.def row (quill_op_infos):
 *   - operand count within [min, max] and result count (-1: at least one)
 *   - every operand and result has a (non-NULL) tensor type
 *   - every operand is a value of the same graph, defined before its use:
 *     a graph argument, or a result of an op earlier in the op list
 * and per graph:
 *   - exactly one terminator, and it is the last op
 *   - argument and result types are tensor types
 * and per module: graph names are unique. When an op passes its generic
 * checks, the op-specific verifier named in ops.def runs (ir/op_verify*.c);
 * that is where `return` is checked against the graph's result types. The
 * fused-activation attributes (`activation` ...) are checked for every op
 * (ir/op_verify_fused.c).
 *
 * Dominance in a single-block graph is "defined earlier in the list". The
 * verifier walks the list once, marking each op as seen in a bitmap indexed
 * by quill_op_id (per-graph, stable, dense enough):
 *
 *   %a = relu %x        seen = {relu}
 *   %b = add %a, %c     %c's defining op not seen yet -> use before def
 *
 * All errors are reported (the walk keeps going) as diagnostics located at
 * the op (or graph) location; the result is QUILL_ERR_INVALID if any was
 * found, QUILL_ERR_NOMEM if the bitmap could not be allocated.
 */
#include <string.h>

#include "ir/ir.h"
#include "ir/op_verify.h"

/* Worse of two statuses: NOMEM beats INVALID beats OK. */
static quill_status worst(quill_status a, quill_status b) {
  if (a == QUILL_ERR_NOMEM || b == QUILL_ERR_NOMEM)
    return QUILL_ERR_NOMEM;
  return a ? a : b;
}

/* "1 operand", "2 operands" */
static const char *plural(long n) { return n == 1 ? "" : "s"; }

static quill_status check_counts(quill_context *ctx, const quill_op *op,
                                 const quill_op_info *info) {
  quill_status st = QUILL_OK;
  unsigned n = quill_op_num_operands(op);
  const char *mn = info->mnemonic;
  quill_loc loc = quill_op_loc(op);
  if (info->max_operands < 0) {
    if ((long)n < info->min_operands)
      st = quill_error(ctx, loc, "'%s' op expects at least %d operand%s, got %u",
                       mn, info->min_operands, plural(info->min_operands), n);
  } else if (info->min_operands == info->max_operands) {
    if ((long)n != info->min_operands)
      st = quill_error(ctx, loc, "'%s' op expects %d operand%s, got %u", mn,
                       info->min_operands, plural(info->min_operands), n);
  } else if ((long)n < info->min_operands || (long)n > info->max_operands) {
    st = quill_error(ctx, loc, "'%s' op expects %d to %d operands, got %u", mn,
                     info->min_operands, info->max_operands, n);
  }
  unsigned r = quill_op_num_results(op);
  if (info->num_results < 0) {
    if (r < 1)
      st = quill_error(ctx, loc, "'%s' op expects at least 1 result, got 0",
                       mn);
  } else if ((long)r != info->num_results) {
    st = quill_error(ctx, loc, "'%s' op expects %d result%s, got %u", mn,
                     info->num_results, plural(info->num_results), r);
  }
  return st;
}

/* `what` #i of op must have a tensor type. */
static quill_status check_tensor(quill_context *ctx, const quill_op *op,
                                 const char *what, unsigned i,
                                 const quill_type *t) {
  if (!t)
    return quill_error(ctx, quill_op_loc(op), "'%s' op %s #%u has no type",
                       quill_op_name(op), what, i);
  if (quill_type_is_tensor(t))
    return QUILL_OK;
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_type_print(t, &sb);
  quill_error(ctx, quill_op_loc(op),
              "'%s' op %s #%u must have a tensor type, got %s",
              quill_op_name(op), what, i, quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return QUILL_ERR_INVALID;
}

static quill_status check_types(quill_context *ctx, const quill_op *op) {
  quill_status st = QUILL_OK;
  for (unsigned i = 0; i < quill_op_num_operands(op); i++) {
    quill_value *v = quill_op_operand(op, i);
    if (!v)
      st = quill_error(ctx, quill_op_loc(op), "'%s' op operand #%u is null",
                       quill_op_name(op), i);
    else if (check_tensor(ctx, op, "operand", i, quill_value_type(v)))
      st = QUILL_ERR_INVALID;
  }
  for (unsigned i = 0; i < quill_op_num_results(op); i++)
    if (check_tensor(ctx, op, "result", i,
                     quill_value_type(quill_op_result(op, i))))
      st = QUILL_ERR_INVALID;
  return st;
}

/* Which ops of the graph have been walked past (by quill_op_id). NULL
 * `seen` means "no dominance information": only the graph is checked. */
typedef struct seen_set {
  uint8_t *bits;
  uint32_t size; /* number of ids covered */
} seen_set;

static bool seen_has(const seen_set *s, uint32_t id) {
  return id < s->size && (s->bits[id / 8] >> (id % 8)) & 1;
}

static void seen_add(seen_set *s, uint32_t id) {
  if (id < s->size)
    s->bits[id / 8] |= (uint8_t)(1u << (id % 8));
}

/* Operands belong to the op's graph and (with `seen`) dominate the op. */
static quill_status check_operands(quill_context *ctx, const quill_op *op,
                                   const seen_set *seen) {
  quill_status st = QUILL_OK;
  const quill_graph *g = quill_op_graph(op);
  for (unsigned i = 0; i < quill_op_num_operands(op); i++) {
    quill_value *v = quill_op_operand(op, i);
    if (!v)
      continue; /* reported by check_types */
    if (quill_value_graph(v) != g) {
      st = quill_error(ctx, quill_op_loc(op),
                       "operand #%u of '%s' is defined in another graph", i,
                       quill_op_name(op));
      continue;
    }
    quill_op *def = quill_value_def(v);
    if (seen && def && !seen_has(seen, quill_op_id(def)))
      st = quill_error(ctx, quill_op_loc(op),
                       "operand #%u of '%s' is used before its definition", i,
                       quill_op_name(op));
  }
  return st;
}

/* Generic checks; then the op's own verifier if they passed. */
static quill_status verify_op(quill_context *ctx, const quill_op *op,
                              const seen_set *seen) {
  quill_opcode opc = quill_op_opcode(op);
  if ((unsigned)opc >= QUILL_OP_COUNT)
    return quill_error(ctx, quill_op_loc(op), "op has invalid opcode %u",
                       (unsigned)opc);
  const quill_op_info *info = quill_opcode_info(opc);
  quill_status st = check_counts(ctx, op, info);
  st = worst(st, check_types(ctx, op));
  st = worst(st, check_operands(ctx, op, seen));
  if (st)
    return st;
  if (info->verify && info->verify(ctx, op))
    st = QUILL_ERR_INVALID;
  /* fused activation attributes, whatever the op (ir/op_verify_fused.c) */
  if (quill_vop_check_activation(ctx, op))
    st = QUILL_ERR_INVALID;
  return st;
}

quill_status quill_verify_op(const quill_op *op) {
  return verify_op(quill_op_context(op), op, NULL);
}

/* Graph arguments and declared results must be tensors. */
static quill_status check_signature(quill_context *ctx, const quill_graph *g) {
  quill_status st = QUILL_OK;
  quill_loc loc = quill_graph_loc(g);
  for (unsigned i = 0; i < quill_graph_num_args(g); i++) {
    quill_type *t = quill_value_type(quill_graph_arg(g, i));
    if (!t || !quill_type_is_tensor(t))
      st = quill_error(ctx, loc, "graph @%s argument #%u must have a tensor "
                                 "type",
                       quill_graph_name(g), i);
  }
  for (unsigned i = 0; i < quill_graph_num_results(g); i++) {
    quill_type *t = quill_graph_result_type(g, i);
    if (!t || !quill_type_is_tensor(t))
      st = quill_error(ctx, loc, "graph @%s result #%u must have a tensor type",
                       quill_graph_name(g), i);
  }
  return st;
}

quill_status quill_verify_graph(const quill_graph *g) {
  quill_context *ctx = quill_graph_context(g);
  quill_status st = check_signature(ctx, g);

  uint32_t max_id = 0;
  QUILL_GRAPH_FOREACH(g, op) {
    if (quill_op_id(op) > max_id)
      max_id = quill_op_id(op);
  }
  seen_set seen = {NULL, max_id + 1};
  size_t nbytes = (size_t)max_id / 8 + 1;
  seen.bits = quill_calloc(ctx, nbytes, 1);
  if (!seen.bits)
    return QUILL_ERR_NOMEM;

  QUILL_GRAPH_FOREACH(g, op) {
    if (quill_op_has_flag(op, QUILL_OPF_TERMINATOR) && quill_op_next(op))
      st = worst(st, quill_error(ctx, quill_op_loc(op),
                                 "'%s' op must be the last op of graph @%s",
                                 quill_op_name(op), quill_graph_name(g)));
    st = worst(st, verify_op(ctx, op, &seen));
    seen_add(&seen, quill_op_id(op));
  }
  quill_free(ctx, seen.bits, nbytes);

  quill_op *last = quill_graph_last_op(g);
  if (!last || !quill_op_has_flag(last, QUILL_OPF_TERMINATOR))
    st = worst(st, quill_error(ctx, quill_graph_loc(g),
                               "graph @%s must end with a 'return' op",
                               quill_graph_name(g)));
  return st;
}

quill_status quill_verify_module(const quill_module *m) {
  quill_context *ctx = quill_module_context(m);
  quill_status st = QUILL_OK;
  unsigned n = quill_module_num_graphs(m);
  for (unsigned i = 0; i < n; i++) {
    const quill_graph *g = quill_module_graph(m, i);
    st = worst(st, quill_verify_graph(g));
    const char *name = quill_graph_name(g);
    for (unsigned j = 0; j < i; j++) {
      const quill_graph *prev = quill_module_graph(m, j);
      if (strcmp(quill_graph_name(prev), name) != 0)
        continue;
      st = worst(st, quill_error(ctx, quill_graph_loc(g),
                                 "redefinition of graph @%s", name));
      quill_diag_emit(ctx, quill_graph_loc(prev), QUILL_DIAG_NOTE,
                      "previous definition of @%s is here", name);
      break;
    }
  }
  return st;
}

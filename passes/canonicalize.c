/*
 * canonicalize.c - local simplifications run by the greedy pattern driver.
 *
 * Every pattern is a row in `patterns[]` below: a name, a root opcode, a
 * benefit and a match function, plus constant data where one function
 * serves several rows (the neutral element of add/sub/mul/div, for
 * instance). Each match function checks everything first, records why it
 * does not apply with quill_rewriter_fail(), and only then mutates through
 * the rewriter.
 *
 *   identity(x), reshape/flatten/squeeze/unsqueeze/cast/requantize to the
 *       operand's own type ............................... -> x
 *   pad(x) with every pad 0 (DenseNet's average pools) .. -> x
 *   add(x, 0) sub(x, 0) mul(x, 1) div(x, 1), splat constant, result type
 *       equal to x's type ............................... -> x
 *   commutative op(const, y), y not constant ............. -> op(y, const)
 *   transpose(transpose(x, p1), p2) ...................... -> transpose(x,
 *       p1[p2[i]]), or x when that is the identity
 *   transpose(x, identity perm) .......................... -> x
 *   reshape(reshape(x)) .................................. -> reshape(x)
 *   relu(relu(x)) ........................................ -> relu(x)
 *   quantize(dequantize(x)) to x's own quantized type .... -> x
 *
 * dequantize(quantize(x)) is deliberately absent: it rounds, so it is not
 * the identity. The pass takes `max-iterations=N` (default 10), reports the
 * statistic num-rewrites and logs failure reasons on the "canonicalize"
 * debug channel.
 */
#include "passes/pass.h"
#include "passes/canonicalize.h"

/* ---- helpers --------------------------------------------------------------- */

/* If v is a non-empty, non-quantized splat constant, store its value. */
static bool splat_value(const quill_value *v, double *out) {
  const quill_attr *a = quill_value_constant(v);
  if (!a || !quill_attr_dense_is_splat(a))
    return false;
  quill_type *t = quill_attr_dense_type(a);
  if (quill_type_num_elements(t) <= 0 ||
      quill_type_is_quant(quill_type_elem(t)))
    return false;
  *out = quill_attr_dense_get_f64(a, 0);
  return true;
}

static bool is_constant(const quill_value *v) {
  quill_op *d = quill_value_def(v);
  return d && quill_op_has_flag(d, QUILL_OPF_CONSTANT);
}

/* The def of operand i if it has opcode opc, else NULL. */
static quill_op *operand_def(const quill_op *op, unsigned i, quill_opcode opc) {
  if (i >= quill_op_num_operands(op))
    return NULL;
  quill_op *d = quill_value_def(quill_op_operand(op, i));
  return d && quill_op_opcode(d) == opc ? d : NULL;
}

static quill_type *result_type(const quill_op *op) {
  return quill_value_type(quill_op_result(op, 0));
}

/* Replace op's single result by v. */
static quill_match_result replace_with(quill_rewriter *rw, quill_op *op,
                                       quill_value *v) {
  quill_rewriter_replace_op(rw, op, &v);
  return QUILL_MATCH_SUCCESS;
}

/* The permutation of a transpose (ONNX default: reversed dims). Returns the
 * rank, or -1 if the perm is malformed. */
static int get_perm(const quill_op *op, int64_t *perm) {
  quill_type *t = quill_value_type(quill_op_operand(op, 0));
  if (!quill_type_is_tensor(t))
    return -1;
  int rank = (int)quill_type_rank(t);
  int64_t n = quill_op_attr_ints(op, "perm", perm, QUILL_MAX_RANK);
  if (n < 0) {
    for (int i = 0; i < rank; ++i)
      perm[i] = rank - 1 - i;
    return rank;
  }
  if (n != rank)
    return -1;
  for (int i = 0; i < rank; ++i)
    if (perm[i] < 0 || perm[i] >= rank)
      return -1;
  return rank;
}

static bool is_identity_perm(const int64_t *perm, int rank) {
  for (int i = 0; i < rank; ++i)
    if (perm[i] != i)
      return false;
  return true;
}

/* ---- patterns ---------------------------------------------------------------- */

/* op(x) whose result type equals x's type is x (identity, reshape, ...). */
static quill_match_result match_same_type_noop(const quill_pattern *p,
                                               quill_rewriter *rw,
                                               quill_op *op) {
  (void)p;
  quill_value *x = quill_op_operand(op, 0);
  if (quill_value_type(x) != result_type(op))
    return quill_rewriter_fail(rw, op, "result type differs from operand type");
  return replace_with(rw, op, x);
}

/* pad(x) with every pad 0 is x, whatever its mode and value. */
static quill_match_result match_pad_zero(const quill_pattern *p,
                                         quill_rewriter *rw, quill_op *op) {
  (void)p;
  int64_t pads[2 * QUILL_MAX_RANK];
  int64_t n = quill_op_attr_ints(op, "pads", pads, 2 * QUILL_MAX_RANK);
  quill_value *x = quill_op_operand(op, 0);
  if (n < 0 || n > 2 * QUILL_MAX_RANK)
    return quill_rewriter_fail(rw, op, "no readable pads");
  for (int64_t i = 0; i < n; i++)
    if (pads[i])
      return quill_rewriter_fail(rw, op, "pad %lld is %lld", (long long)i,
                                 (long long)pads[i]);
  if (quill_value_type(x) != result_type(op))
    return quill_rewriter_fail(rw, op, "result type differs from operand type");
  return replace_with(rw, op, x);
}

/* The neutral right operand of a binary op. */
typedef struct neutral_rhs {
  double value;
} neutral_rhs;
static const neutral_rhs zero_rhs = {0.0}, one_rhs = {1.0};

static quill_match_result match_neutral_rhs(const quill_pattern *p,
                                            quill_rewriter *rw, quill_op *op) {
  const neutral_rhs *n = p->data;
  double v;
  quill_value *x = quill_op_operand(op, 0);
  if (!splat_value(quill_op_operand(op, 1), &v))
    return quill_rewriter_fail(rw, op, "rhs is not a splat constant");
  if (v != n->value)
    return quill_rewriter_fail(rw, op, "rhs splat is %g, not %g", v, n->value);
  if (quill_value_type(x) != result_type(op))
    return quill_rewriter_fail(rw, op,
                               "result type differs from lhs type "
                               "(broadcast or element type change)");
  return replace_with(rw, op, x);
}

/* Commutative op(const, y) -> op(y, const): constants go right. */
static quill_match_result match_commute_constant(const quill_pattern *p,
                                                 quill_rewriter *rw,
                                                 quill_op *op) {
  (void)p;
  if (!quill_op_has_flag(op, QUILL_OPF_COMMUTATIVE) ||
      quill_op_num_operands(op) != 2)
    return QUILL_MATCH_FAILURE; /* not a commutative binary op: no log */
  quill_value *l = quill_op_operand(op, 0), *r = quill_op_operand(op, 1);
  if (!is_constant(l))
    return quill_rewriter_fail(rw, op, "lhs is not a constant");
  if (is_constant(r))
    return quill_rewriter_fail(rw, op, "both operands are constants");
  quill_rewriter_set_operand(rw, op, 0, r);
  quill_rewriter_set_operand(rw, op, 1, l);
  return QUILL_MATCH_SUCCESS;
}

/* transpose(transpose(x, p1), p2) = transpose(x, q), q[i] = p1[p2[i]]. */
static quill_match_result match_transpose_transpose(const quill_pattern *p,
                                                    quill_rewriter *rw,
                                                    quill_op *op) {
  (void)p;
  quill_op *inner = operand_def(op, 0, QUILL_OP_TRANSPOSE);
  if (!inner)
    return quill_rewriter_fail(rw, op, "operand is not a transpose");
  int64_t p1[QUILL_MAX_RANK], p2[QUILL_MAX_RANK], q[QUILL_MAX_RANK];
  int r1 = get_perm(inner, p1), r2 = get_perm(op, p2);
  if (r1 < 0 || r2 < 0 || r1 != r2)
    return quill_rewriter_fail(rw, op, "malformed permutation");
  for (int i = 0; i < r2; ++i)
    q[i] = p1[p2[i]];
  quill_value *x = quill_op_operand(inner, 0);
  if (is_identity_perm(q, r2)) {
    if (quill_value_type(x) != result_type(op))
      return quill_rewriter_fail(rw, op, "composed identity changes type");
    return replace_with(rw, op, x);
  }
  quill_context *ctx = quill_rewriter_context(rw);
  quill_named_attr a = {quill_ident_get(ctx, "perm"),
                        quill_attr_int_list(ctx, (size_t)r2, q)};
  if (!a.name || !a.attr)
    return quill_rewriter_fail(rw, op, "out of memory");
  quill_type *t = result_type(op);
  quill_op *nt = quill_rewriter_create_op(rw, QUILL_OP_TRANSPOSE, 1, &x, 1, &t,
                                          1, &a, quill_op_loc(op));
  if (!nt)
    return quill_rewriter_fail(rw, op, "out of memory");
  return replace_with(rw, op, quill_op_result(nt, 0));
}

static quill_match_result match_transpose_identity(const quill_pattern *p,
                                                   quill_rewriter *rw,
                                                   quill_op *op) {
  (void)p;
  int64_t perm[QUILL_MAX_RANK];
  int r = get_perm(op, perm);
  if (r < 0)
    return quill_rewriter_fail(rw, op, "malformed permutation");
  if (!is_identity_perm(perm, r))
    return quill_rewriter_fail(rw, op, "permutation is not the identity");
  quill_value *x = quill_op_operand(op, 0);
  if (quill_value_type(x) != result_type(op))
    return quill_rewriter_fail(rw, op, "result type differs from operand");
  return replace_with(rw, op, x);
}

/* reshape(reshape(x)) -> reshape(x): bypass the inner reshape. */
static quill_match_result match_reshape_reshape(const quill_pattern *p,
                                                quill_rewriter *rw,
                                                quill_op *op) {
  (void)p;
  quill_op *inner = operand_def(op, 0, QUILL_OP_RESHAPE);
  if (!inner)
    return quill_rewriter_fail(rw, op, "operand is not a reshape");
  quill_rewriter_set_operand(rw, op, 0, quill_op_operand(inner, 0));
  return QUILL_MATCH_SUCCESS;
}

/* relu(relu(x)) -> relu(x). */
static quill_match_result match_relu_relu(const quill_pattern *p,
                                          quill_rewriter *rw, quill_op *op) {
  (void)p;
  quill_op *inner = operand_def(op, 0, QUILL_OP_RELU);
  if (!inner)
    return quill_rewriter_fail(rw, op, "operand is not a relu");
  quill_value *v = quill_op_result(inner, 0);
  if (quill_value_type(v) != result_type(op))
    return quill_rewriter_fail(rw, op, "inner relu has another type");
  return replace_with(rw, op, v);
}

/* quantize(dequantize(x)) -> x when the quantize targets x's type. */
static quill_match_result match_quantize_dequantize(const quill_pattern *p,
                                                    quill_rewriter *rw,
                                                    quill_op *op) {
  (void)p;
  quill_op *dq = operand_def(op, 0, QUILL_OP_DEQUANTIZE);
  if (!dq)
    return quill_rewriter_fail(rw, op, "operand is not a dequantize");
  quill_value *x = quill_op_operand(dq, 0);
  if (quill_value_type(x) != result_type(op))
    return quill_rewriter_fail(rw, op,
                               "quantized types differ (requantization)");
  return replace_with(rw, op, x);
}

static const quill_pattern patterns[] = {
    {"identity-elim", QUILL_OP_IDENTITY, 1, match_same_type_noop, NULL},
    {"reshape-noop", QUILL_OP_RESHAPE, 2, match_same_type_noop, NULL},
    {"flatten-noop", QUILL_OP_FLATTEN, 1, match_same_type_noop, NULL},
    {"squeeze-noop", QUILL_OP_SQUEEZE, 1, match_same_type_noop, NULL},
    {"unsqueeze-noop", QUILL_OP_UNSQUEEZE, 1, match_same_type_noop, NULL},
    {"cast-noop", QUILL_OP_CAST, 1, match_same_type_noop, NULL},
    {"requantize-noop", QUILL_OP_REQUANTIZE, 1, match_same_type_noop, NULL},
    {"pad-zero", QUILL_OP_PAD, 1, match_pad_zero, NULL},
    {"add-zero", QUILL_OP_ADD, 1, match_neutral_rhs, &zero_rhs},
    {"sub-zero", QUILL_OP_SUB, 1, match_neutral_rhs, &zero_rhs},
    {"mul-one", QUILL_OP_MUL, 1, match_neutral_rhs, &one_rhs},
    {"div-one", QUILL_OP_DIV, 1, match_neutral_rhs, &one_rhs},
    {"commute-constant-right", -1, 2, match_commute_constant, NULL},
    {"transpose-transpose", QUILL_OP_TRANSPOSE, 2, match_transpose_transpose,
     NULL},
    {"transpose-identity", QUILL_OP_TRANSPOSE, 1, match_transpose_identity,
     NULL},
    {"reshape-reshape", QUILL_OP_RESHAPE, 1, match_reshape_reshape, NULL},
    {"relu-relu", QUILL_OP_RELU, 1, match_relu_relu, NULL},
    {"quantize-dequantize", QUILL_OP_QUANTIZE, 1, match_quantize_dequantize,
     NULL},
};

quill_status quill_populate_canonicalize_patterns(quill_pattern_set *set) {
  for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; ++i) {
    quill_status st = quill_pattern_set_add(set, &patterns[i]);
    if (st)
      return st;
  }
  return QUILL_OK;
}

/* ---- the pass ------------------------------------------------------------------ */

static quill_status canonicalize_run(quill_pass_state *ps, quill_module *m) {
  quill_context *ctx = quill_pass_context(ps);
  quill_status st = QUILL_OK;
  int64_t max_it = quill_pass_option_int(ps, "max-iterations", 10, &st);
  if (st)
    return st;
  if (max_it <= 0 || max_it > 1000000)
    return quill_error(ctx, quill_loc_unknown(),
                       "option 'max-iterations' of pass 'canonicalize' must "
                       "be between 1 and 1000000, got %lld",
                       (long long)max_it);
  quill_pattern_set *set = quill_pattern_set_create(ctx);
  if (!set)
    return QUILL_ERR_NOMEM;
  st = quill_populate_canonicalize_patterns(set);
  quill_greedy_config cfg = {(unsigned)max_it, true, "canonicalize"};
  bool any = false;
  uint64_t total = 0;
  if (!st)
    st = quill_apply_patterns_module(m, set, &cfg, &any, &total);
  quill_pattern_set_destroy(set);
  quill_pass_stat_add(ps, "num-rewrites", total);
  if (!st && !any)
    quill_pass_mark_unchanged(ps);
  return st;
}

const quill_pass quill_pass_canonicalize = {
    .name = "canonicalize",
    .summary = "Simplify ops with local rewrite patterns until a fixpoint",
    .run = canonicalize_run,
    .requires = 0,
    .establishes = QUILL_PROP_CANONICAL | QUILL_PROP_NO_DEAD_OPS,
    .preserves = 0,
    .options = "max-iterations=N",
};

/*
 * fuse_activation.c - the `fuse-activation` pass: fold a relu or clip into
 * the op that produces its operand, the way the backend runs them as one
 * kernel (docs/quantization.md sections 2 and 4).
 *
 *   %y = conv2d %x, %w, %b : T               %y = conv2d %x, %w, %b
 *   %z = relu %y : T                ==>            {activation = "relu"} : T
 *   return %z                                return %y
 *
 *   %s = add %a, %b : T                      %s = add %a, %b {activation = "clip",
 *   %z = clip %s {min = 0.0, max = 6.0}  ==>      activation_min = 0.0,
 *                                                 activation_max = 6.0} : T
 *
 * A relu/clip is fused when
 *   - its operand is an op result with exactly one use (the activation), so
 *     no other user sees the value before the activation;
 *   - the pair (producer, activation) is a fusion of the backend given with
 *     `backend=NAME` (quill_backend_fuses); without the option, when the
 *     producer is conv2d, conv_transpose2d, gemm, matmul, add or mul;
 *   - the producer has one float result of the activation's type and no
 *     fused activation yet;
 *   - for clip, both bounds are known: attributes `min`/`max` (absent means
 *     -inf/+inf) or constant scalar operands; NaN or min > max bounds are
 *     left alone. Bound constants left without users are erased.
 * The producer's fused activation is then applied by the reference
 * interpreter (quill_ref_eval_op) and by the integer lowering. Patterns run
 * through the greedy driver without its dead-op removal, so the pass
 * touches nothing else. Statistic: num-fused; failure reasons go to the
 * "fuse-activation" debug channel.
 */
#include <math.h>
#include <string.h>

#include "backends/backend.h"
#include "passes/pass.h"
#include "passes/rewriter.h"

static bool default_producer(quill_opcode o) {
  return o == QUILL_OP_CONV2D || o == QUILL_OP_CONV_TRANSPOSE2D ||
         o == QUILL_OP_GEMM || o == QUILL_OP_MATMUL || o == QUILL_OP_ADD ||
         o == QUILL_OP_MUL;
}

/* A clip bound: constant operand `idx` if present, else attribute `name`,
 * else dflt. False if it is not known at compile time. */
static bool clip_bound(const quill_op *clip, unsigned idx, const char *name,
                       double dflt, double *out) {
  if (quill_op_num_operands(clip) > idx) {
    const quill_attr *c = quill_value_constant(quill_op_operand(clip, idx));
    if (!c || quill_type_num_elements(quill_attr_dense_type(c)) != 1 ||
        quill_type_is_quant(quill_type_elem(quill_attr_dense_type(c))))
      return false;
    *out = quill_attr_dense_get_f64(c, 0);
    return true;
  }
  const quill_attr *a = quill_op_attr(clip, name);
  *out = dflt;
  if (!a)
    return true;
  if (quill_attr_kind_of(a) == QUILL_ATTR_FLOAT)
    *out = quill_attr_float_value(a);
  else if (quill_attr_kind_of(a) == QUILL_ATTR_INT)
    *out = (double)quill_attr_int_value(a);
  else
    return false;
  return true;
}

static quill_match_result fuse(const quill_pattern *p, quill_rewriter *rw,
                               quill_op *act) {
  const quill_backend *b = p->data; /* NULL: the default producers */
  quill_opcode aopc = quill_op_opcode(act);
  quill_value *x = quill_op_operand(act, 0);
  quill_op *prod = quill_value_def(x);
  if (!prod)
    return quill_rewriter_fail(rw, act, "operand is a graph argument");
  quill_opcode popc = quill_op_opcode(prod);
  if (!quill_value_has_one_use(x))
    return quill_rewriter_fail(rw, act, "operand has %u uses",
                               quill_value_num_uses(x));
  if (b && !quill_backend_fuses(b, popc, aopc))
    return quill_rewriter_fail(rw, act, "backend '%s' has no fusion [%s, %s]",
                               quill_backend_name(b), quill_op_name(prod),
                               quill_op_name(act));
  if (!b && !default_producer(popc))
    return quill_rewriter_fail(rw, act, "'%s' cannot take a fused activation",
                               quill_op_name(prod));
  if (quill_op_num_results(prod) != 1)
    return quill_rewriter_fail(rw, act, "producer has several results");
  if (quill_op_attr(prod, "activation"))
    return quill_rewriter_fail(rw, act, "producer already has an activation");
  quill_type *t = quill_value_type(x);
  if (t != quill_value_type(quill_op_result(act, 0)) ||
      !quill_type_is_float(quill_type_elem(t)))
    return quill_rewriter_fail(rw, act, "types differ or are not float");
  double lo = 0.0, hi = 0.0;
  if (aopc == QUILL_OP_CLIP) {
    if (!clip_bound(act, 1, "min", -INFINITY, &lo) ||
        !clip_bound(act, 2, "max", INFINITY, &hi))
      return quill_rewriter_fail(rw, act, "clip bounds are not constants");
    if (isnan(lo) || isnan(hi) || lo > hi)
      return quill_rewriter_fail(rw, act, "clip bounds are NaN or inverted");
  }

  /* commit (attributes built first: nothing changes if that fails) */
  quill_context *ctx = quill_rewriter_context(rw);
  bool clip = aopc == QUILL_OP_CLIP;
  const char *kind = clip ? "clip" : "relu";
  const quill_attr *ka = quill_attr_string(ctx, kind, strlen(kind));
  const quill_attr *la = clip ? quill_attr_float(ctx, lo) : NULL;
  const quill_attr *ha = clip ? quill_attr_float(ctx, hi) : NULL;
  if (!ka || (clip && (!la || !ha)) ||
      quill_rewriter_set_attr(rw, prod, "activation", ka) ||
      (clip && (quill_rewriter_set_attr(rw, prod, "activation_min", la) ||
                quill_rewriter_set_attr(rw, prod, "activation_max", ha)))) {
    quill_error(ctx, quill_op_loc(act), "out of memory fusing '%s'",
                quill_op_name(act));
    return QUILL_MATCH_ERROR;
  }
  quill_op *bounds[2] = {NULL, NULL};
  for (unsigned i = 1; i < quill_op_num_operands(act) && i < 3; i++)
    bounds[i - 1] = quill_value_def(quill_op_operand(act, i));
  quill_rewriter_replace_op(rw, act, &x);
  for (unsigned i = 0; i < 2; i++)
    if (bounds[i] && (i == 0 || bounds[1] != bounds[0]) &&
        !quill_value_has_uses(quill_op_result(bounds[i], 0)))
      quill_rewriter_erase_op(rw, bounds[i]);
  return QUILL_MATCH_SUCCESS;
}

static quill_status run(quill_pass_state *ps, quill_module *m) {
  quill_context *ctx = quill_pass_context(ps);
  const char *name = quill_pass_option(ps, "backend");
  const quill_backend *b = NULL;
  if (name && !(b = quill_backend_get(ctx, name)))
    return QUILL_ERR_INVALID;
  /* The patterns carry the backend, so they live on this frame. */
  const quill_pattern patterns[] = {
      {"fuse-relu", QUILL_OP_RELU, 1, fuse, b},
      {"fuse-clip", QUILL_OP_CLIP, 1, fuse, b},
  };
  quill_pattern_set *set = quill_pattern_set_create(ctx);
  if (!set)
    return QUILL_ERR_NOMEM;
  quill_status st = QUILL_OK;
  for (unsigned i = 0; !st && i < 2; i++)
    st = quill_pattern_set_add(set, &patterns[i]);
  quill_greedy_config cfg = {0, false, "fuse-activation"};
  uint64_t total = 0;
  if (!st)
    st = quill_apply_patterns_module(m, set, &cfg, NULL, &total);
  quill_pattern_set_destroy(set);
  if (st)
    return st;
  if (total)
    quill_pass_stat_add(ps, "num-fused", total);
  else
    quill_pass_mark_unchanged(ps);
  return QUILL_OK;
}

const quill_pass quill_pass_fuse_activation = {
    .name = "fuse-activation",
    .summary = "Fold relu/clip into the producing op as the backend fuses "
               "them (activation attribute)",
    .run = run,
    .requires = 0,
    .establishes = 0,
    .preserves = QUILL_PROP_NO_COMMON_SUBEXPR | QUILL_PROP_CONSTANTS_FOLDED,
    .options = "backend=NAME",
};

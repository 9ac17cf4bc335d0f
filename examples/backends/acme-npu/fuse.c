/*
 * fuse.c - the ACME NPU's fusion: a residual block's conv, add and relu
 * run as one kernel on the NPU, so the integer graph Quill makes
 * (fuse-qdq) is rewritten into one custom op:
 *
 *   %c = qconv2d %x, %w, %b {strides, pads, ..., multiplier, shift}
 *   %y = qadd %c, %skip {multiplier = [ma, mb, my], shift, left_shift,
 *                        act_min}                       (relu fused)
 *     ==>
 *   %y = custom %x, %w, %b, %skip {name = "acme.conv_add_relu",
 *          strides, pads, dilations, group,            (the conv's)
 *          conv_rounding, conv_multiplier, conv_shift, [conv_act_min/max],
 *          mid_zero_point, mid_qmin, mid_qmax,         (%c's quant type)
 *          add_rounding, add_multiplier, add_shift, add_left_shift,
 *          act_min, [act_max]}                          (the add's)
 *
 * The attributes carry everything the two integer ops compute with, so the
 * evaluator (kernel.c) reproduces them bit for bit. The pattern matches
 * only what the NPU kernel does: fixed-point requantization, per-tensor
 * activations, a bias, no broadcasting in the add, a relu (act_min) after
 * it, and a conv whose result feeds nothing but the add. Either operand of
 * the add may be the conv (the attributes are stored conv first).
 *
 * The pattern only reads until it has decided; every change goes through
 * the rewriter (Quill's pattern rule). The greedy driver erases the conv
 * once it is dead.
 */
#include <string.h>

#include "acme_npu.h"

static quill_type *elem_of(quill_value *v) {
  return quill_type_elem(quill_value_type(v));
}

static bool per_tensor_quant(quill_value *v) {
  quill_type *e = elem_of(v);
  return quill_type_is_quant(e) && quill_type_quant_axis_of(e) < 0;
}

static bool same_shape(quill_value *a, quill_value *b) {
  quill_type *ta = quill_value_type(a), *tb = quill_value_type(b);
  unsigned r = quill_type_rank(ta);
  if (r != quill_type_rank(tb))
    return false;
  for (unsigned i = 0; i < r; ++i)
    if (quill_type_dim(ta, i) != quill_type_dim(tb, i))
      return false;
  return true;
}

/* Attributes of the new op: up to 24, names borrowed. */
typedef struct attrs {
  quill_named_attr a[24];
  unsigned n;
  bool nomem;
} attrs;

static void put(attrs *as, const char *name, const quill_attr *a) {
  if (!a) {
    as->nomem = true;
    return;
  }
  as->a[as->n++] = (quill_named_attr){name, a};
}

/* Copy op's attribute `from` as `to`, if op has it. */
static void copy(attrs *as, const quill_op *op, const char *from,
                 const char *to) {
  const quill_attr *a = quill_op_attr(op, from);
  if (a)
    put(as, to, a);
}

static quill_match_result match_conv_add_relu(const quill_pattern *p,
                                              quill_rewriter *rw,
                                              quill_op *add) {
  (void)p;
  /* --- match: read only --- */
  if (!quill_op_attr(add, "act_min"))
    return quill_rewriter_fail(rw, add, "no relu fused into the add");
  if (!quill_op_attr(add, "multiplier"))
    return quill_rewriter_fail(rw, add, "the add is not fixed point");
  quill_op *conv = NULL;
  unsigned ci = 0;
  for (unsigned i = 0; i < 2 && !conv; ++i) {
    quill_op *d = quill_value_def(quill_op_operand(add, i));
    if (d && quill_op_opcode(d) == QUILL_OP_QCONV2D &&
        quill_value_has_one_use(quill_op_result(d, 0))) {
      conv = d;
      ci = i;
    }
  }
  if (!conv)
    return quill_rewriter_fail(rw, add,
                               "no operand is a qconv2d used only here");
  quill_value *mid = quill_op_result(conv, 0);
  quill_value *skip = quill_op_operand(add, 1 - ci);
  quill_value *y = quill_op_result(add, 0);
  if (quill_op_num_operands(conv) != 3)
    return quill_rewriter_fail(rw, add, "the conv has no bias");
  if (!quill_op_attr(conv, "multiplier"))
    return quill_rewriter_fail(rw, add, "the conv is not fixed point");
  const quill_attr *ap = quill_op_attr(conv, "auto_pad");
  if (ap && (quill_attr_kind_of(ap) != QUILL_ATTR_STRING ||
             strcmp(quill_attr_string_value(ap, NULL), "NOTSET") != 0))
    return quill_rewriter_fail(rw, add, "the conv uses auto_pad");
  if (!per_tensor_quant(quill_op_operand(conv, 0)) || !per_tensor_quant(mid) ||
      !per_tensor_quant(skip) || !per_tensor_quant(y))
    return quill_rewriter_fail(rw, add,
                               "activations are not quantized per tensor");
  if (!same_shape(mid, skip) || !same_shape(mid, y))
    return quill_rewriter_fail(rw, add, "the add broadcasts");

  /* --- rewrite --- */
  quill_context *ctx = quill_rewriter_context(rw);
  quill_type *me = elem_of(mid);
  attrs as = {.n = 0, .nomem = false};
  put(&as, "name", quill_attr_string(ctx, ACME_CONV_ADD_RELU,
                                     strlen(ACME_CONV_ADD_RELU)));
  copy(&as, conv, "strides", "strides");
  copy(&as, conv, "pads", "pads");
  copy(&as, conv, "dilations", "dilations");
  copy(&as, conv, "group", "group");
  copy(&as, conv, "rounding", "conv_rounding");
  copy(&as, conv, "multiplier", "conv_multiplier");
  copy(&as, conv, "shift", "conv_shift");
  copy(&as, conv, "act_min", "conv_act_min");
  copy(&as, conv, "act_max", "conv_act_max");
  put(&as, "mid_zero_point",
      quill_attr_int(ctx, quill_type_quant_zero_points(me)[0]));
  put(&as, "mid_qmin", quill_attr_int(ctx, quill_type_quant_qmin(me)));
  put(&as, "mid_qmax", quill_attr_int(ctx, quill_type_quant_qmax(me)));
  copy(&as, add, "rounding", "add_rounding");
  /* conv first: swap the add's per-operand parameters if needed */
  int64_t m[3], s[3];
  if (quill_op_attr_ints(add, "multiplier", m, 3) != 3 ||
      quill_op_attr_ints(add, "shift", s, 3) != 3)
    return quill_rewriter_fail(rw, add, "malformed multiplier/shift");
  if (ci == 1) {
    int64_t t = m[0];
    m[0] = m[1], m[1] = t;
    t = s[0];
    s[0] = s[1], s[1] = t;
  }
  put(&as, "add_multiplier", quill_attr_int_list(ctx, 3, m));
  put(&as, "add_shift", quill_attr_int_list(ctx, 3, s));
  copy(&as, add, "left_shift", "add_left_shift");
  copy(&as, add, "act_min", "act_min");
  copy(&as, add, "act_max", "act_max");
  if (as.nomem)
    return QUILL_MATCH_ERROR;

  quill_value *operands[4] = {quill_op_operand(conv, 0),
                              quill_op_operand(conv, 1),
                              quill_op_operand(conv, 2), skip};
  quill_type *rt = quill_value_type(y);
  quill_op *fused =
      quill_rewriter_create_op(rw, QUILL_OP_CUSTOM, 4, operands, 1, &rt, as.n,
                               as.a, quill_op_loc(add));
  if (!fused)
    return QUILL_MATCH_ERROR;
  quill_value *r = quill_op_result(fused, 0);
  quill_rewriter_replace_op(rw, add, &r);
  return QUILL_MATCH_SUCCESS;
}

const quill_pattern acme_patterns[] = {
    {"acme-conv-add-relu", QUILL_OP_QADD, 1, match_conv_add_relu, NULL},
};
const unsigned acme_num_patterns =
    sizeof acme_patterns / sizeof acme_patterns[0];

/* acme-fuse: the pattern set, greedily, on every graph. */
static quill_status acme_fuse_run(quill_pass_state *ps, quill_module *m) {
  quill_context *ctx = quill_pass_context(ps);
  quill_pattern_set *set = quill_pattern_set_create(ctx);
  if (!set)
    return QUILL_ERR_NOMEM;
  quill_status st = QUILL_OK;
  for (unsigned i = 0; !st && i < acme_num_patterns; ++i)
    st = quill_pattern_set_add(set, &acme_patterns[i]);
  quill_greedy_config cfg = {10, true, "acme-fuse"};
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
  quill_pass_stat_add(ps, "num-fused", total);
  if (!st && !any)
    quill_pass_mark_unchanged(ps);
  return st;
}

const quill_pass acme_fuse_pass = {
    .name = "acme-fuse",
    .summary = "Fuse qconv2d -> qadd+relu into the ACME NPU kernel "
               "(custom acme.conv_add_relu)",
    .run = acme_fuse_run,
    .requires = 0,
    .establishes = 0,
    .preserves = 0,
    .options = NULL,
};

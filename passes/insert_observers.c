/*
 * insert_observers.c - the `insert-observers` pass: put a fake_quant (an
 * observer plus the quantization scheme) on every value the backend
 * quantizes (docs/quantization.md sections 2 and 4).
 *
 *   %y = conv2d %x, %w, %b {activation = "relu"}      (tflite-int8)
 *     ==>
 *   %xq = fake_quant %x {role = "activation", dtype = i8, qmin = -128, ...}
 *   %wq = fake_quant %w {role = "weight", ..., symmetric = true, axis = 0}
 *   %y  = conv2d %xq, %wq, %b {activation = "relu"}   (bias: no observer)
 *   %yq = fake_quant %y {role = "activation", ...}     (all uses of %y)
 *
 * An op is *quantized* if the backend lists its opcode in quantize_ops, its
 * first result is a float tensor and it is not kept float by the option
 * keep-float=a,b (matched against the op's location name or its first
 * result's value name; a name matching no op is an error). Ops are visited
 * in program order; for each quantized op:
 *
 *   inputs    each float, non-constant activation operand (see role_of)
 *             gets role=activation unless already observed: a fake_quant
 *             result, or the output of a quantized shared_params op (it
 *             inherits its first input's params). One observer per value:
 *             it is inserted right after the value's producer (graph
 *             arguments: at the top of the graph), and every quantized
 *             user of the value as an activation is rewired to it; float
 *             users keep reading the float value (mixed precision).
 *   weights   conv2d / conv_transpose2d / gemm operand 1, and matmul
 *             operand 1 when it is a constant, get role=weight with the
 *             weight scheme; per-channel axis: conv2d 0, conv_transpose2d 1,
 *             gemm 0 if trans_b else 1, matmul the last axis of B (-1, per
 *             tensor, for a 1-D B). Biases (operand 2) get nothing: the
 *             quantize pass derives their params.
 *   outputs   unless the op is a shared_params op or the backend keeps
 *             outputs float (quantize_outputs = false), each float result
 *             gets role=activation (fixed_scale / fixed_zero_point for
 *             fixed_params ops) and *every* use of the result is rewired
 *             to it: a quantized op cannot produce the float value.
 *
 * Mixed precision: the schemes are the op's own (quill_backend_op_quant:
 * the config's `overrides` applied; an override may also keep it float).
 * An input already observed with another scheme than the consumer's (an
 * int8 producer's output read by an int16 op, or back) gets a second
 * fake_quant with the consumer's scheme on the observed value, which
 * `quantize` turns into quantize(dequantize) and fuse-qdq into one
 * requantize (TFLite QUANTIZE int8 <-> int16):
 *
 *   %a = fake_quant %y {dtype = i8, ..}     (the producer's output)
 *   %b = fake_quant %a {dtype = i16, ..}    (the i16 consumer's input)
 *
 * An override giving 16-bit activations to an op the backend cannot run
 * so (a TFLite backend: no 16x8 kernel) is an error naming the op.
 *
 * Kept float as well: ops carrying {keep_float = true} (the ONNX importer
 * marks an unrolled RNN/GRU/LSTM node's ops but its gemms so when the
 * backend says `rnn_float`), and a shared_params op between float ops: its input made
 * by a float op (not a graph argument), through other such ops, and no
 * quantized op reading its result, through other such ops (a transpose
 * from a float reduce_mean into an LSTM kept float). Quantizing it would
 * round values that only float ops read; a quantized consumer further on
 * observes the value itself. mark_kept gives these ops the attribute too.
 *
 * Fused ops (an `activation` attribute from fuse-activation) are one op
 * here, observed once after the activation. The pass is idempotent: a
 * second run finds every value observed and adds nothing. Statistic:
 * num-observers.
 */
#include <string.h>

#include "backends/backend.h"
#include "passes/pass.h"

typedef enum operand_role {
  ROLE_NONE,   /* not observed: non-float, constant input, bias */
  ROLE_ACT,    /* activation input */
  ROLE_WEIGHT, /* weight: the weight scheme, per-channel axis */
} operand_role;

typedef struct obs_run {
  quill_pass_state *ps;
  quill_context *ctx;
  const quill_backend *b;
  char *keep_text;    /* copy of keep-float, split in place at commas */
  const char **keep;  /* the names (keep_cap slots) */
  size_t num_keep, keep_cap;
  quill_op *arg_pos;  /* graph-argument observers go before this op */
  uint64_t inserted;
  bool changed;
} obs_run;

/* ---- classification ------------------------------------------------------- */

static bool is_float_tensor(const quill_type *t) {
  return t && quill_type_is_tensor(t) && quill_type_is_float(quill_type_elem(t));
}

static bool name_matches(const obs_run *r, const char *name) {
  if (!name)
    return false;
  for (size_t i = 0; i < r->num_keep; i++)
    if (strcmp(r->keep[i], name) == 0)
      return true;
  return false;
}

static bool kept_float(const obs_run *r, const quill_op *op) {
  if (!r->num_keep)
    return false;
  if (name_matches(r, quill_op_loc(op).name))
    return true;
  return quill_op_num_results(op) > 0 &&
         name_matches(r, quill_value_name(quill_op_result(op, 0)));
}

static bool is_fake_quant(const quill_op *op) {
  return op && quill_op_opcode(op) == QUILL_OP_FAKE_QUANT;
}

/* Marked {keep_float = true}: by mark_kept below, or by the ONNX importer
 * (the ops of an unrolled recurrent node, backend key rnn_float). */
static bool marked_float(const quill_op *op) {
  const quill_attr *a = quill_op_attr(op, "keep_float");
  return a && quill_attr_kind_of(a) == QUILL_ATTR_BOOL &&
         quill_attr_bool_value(a);
}

static bool is_quantized(const obs_run *r, const quill_op *op) {
  return quill_backend_quantizes(r->b, quill_op_opcode(op)) &&
         quill_op_num_results(op) > 0 &&
         is_float_tensor(quill_value_type(quill_op_result(op, 0))) &&
         !kept_float(r, op) && !quill_backend_op_quant(r->b, op).keep_float &&
         !marked_float(op);
}

/* A quantized shared_params op whose params would come from a float op's
 * result (through other such ops; not a graph argument) and whose
 * results reach no quantized op (directly or through such ops): its
 * observer would quantize values only float ops read, a pure loss (an
 * LSTM kept float reading a transpose of a float reduce_mean). A quantized
 * consumer further on observes the value itself, after the op. */
static bool reads_float(const obs_run *r, const quill_value *v) {
  for (;;) {
    quill_op *d = quill_value_def(v);
    if (!d || is_fake_quant(d))
      return false; /* a graph argument (observed as the model's input), or
                       observed already (a second run) */
    if (!is_quantized(r, d))
      return true;
    if (!quill_backend_shares_params(r->b, quill_op_opcode(d)) ||
        quill_op_num_operands(d) == 0)
      return false;
    v = quill_op_operand(d, 0);
  }
}

static bool feeds_quantized(const obs_run *r, const quill_op *op) {
  for (unsigned i = 0; i < quill_op_num_results(op); i++)
    for (quill_use *u = quill_value_first_use(quill_op_result(op, i)); u;
         u = quill_use_next(u)) {
      quill_op *user = quill_use_user(u);
      if (is_fake_quant(user))
        return true; /* observed for a quantized reader (a second run) */
      if (!is_quantized(r, user))
        continue;
      if (!quill_backend_shares_params(r->b, quill_op_opcode(user)) ||
          quill_use_operand_index(u) != 0 || feeds_quantized(r, user))
        return true;
    }
  return false;
}

static bool float_between(const obs_run *r, const quill_op *op) {
  return quill_backend_quantizes_outputs(r->b) &&
         quill_backend_shares_params(r->b, quill_op_opcode(op)) &&
         is_quantized(r, op) && quill_op_num_operands(op) > 0 &&
         reads_float(r, quill_op_operand(op, 0)) && !feeds_quantized(r, op);
}

static const quill_quant_scheme *act_scheme(const obs_run *r,
                                            const quill_op *op) {
  return quill_backend_op_quant(r->b, op).activation;
}

static bool is_constant(const quill_value *v) {
  quill_op *d = quill_value_def(v);
  return d && quill_op_has_flag(d, QUILL_OPF_CONSTANT);
}

/* What operand i of a quantized op is. */
static operand_role role_of(const quill_op *op, unsigned i) {
  quill_value *v = quill_op_operand(op, i);
  if (!is_float_tensor(quill_value_type(v)))
    return ROLE_NONE;
  switch (quill_op_opcode(op)) {
  case QUILL_OP_CONV2D:
  case QUILL_OP_CONV_TRANSPOSE2D:
  case QUILL_OP_GEMM:
    if (i == 1)
      return ROLE_WEIGHT;
    if (i == 2)
      return ROLE_NONE; /* bias */
    break;
  case QUILL_OP_MATMUL:
    if (i == 1 && is_constant(v))
      return ROLE_WEIGHT;
    break;
  default:
    break;
  }
  return is_constant(v) ? ROLE_NONE : ROLE_ACT;
}

/* The per-channel axis of op's weight (-1: per tensor). */
static int64_t weight_axis(const obs_run *r, const quill_op *op) {
  if (!quill_backend_op_quant(r->b, op).weight->per_channel)
    return -1;
  switch (quill_op_opcode(op)) {
  case QUILL_OP_CONV2D:
    return 0;
  case QUILL_OP_CONV_TRANSPOSE2D:
    return 1;
  case QUILL_OP_GEMM:
    return quill_op_attr_int(op, "trans_b", 0) ? 0 : 1;
  case QUILL_OP_MATMUL: {
    unsigned rank = quill_type_rank(quill_value_type(quill_op_operand(op, 1)));
    return rank >= 2 ? (int64_t)rank - 1 : -1;
  }
  default:
    return -1;
  }
}

/* The role attribute of a fake_quant ("activation" when absent). */
static bool fq_is_weight(const quill_op *fq) {
  const quill_attr *a = quill_op_attr(fq, "role");
  return a && quill_attr_kind_of(a) == QUILL_ATTR_STRING &&
         strcmp(quill_attr_string_value(a, NULL), "weight") == 0;
}

/* The fake_quant that gives v its quantization params: v's producer, or
 * (through a chain of them) the one on the first input of the quantized
 * shared_params op producing v; NULL if v is not observed. */
static quill_op *observer_of(const obs_run *r, const quill_value *v) {
  for (;;) {
    quill_op *d = quill_value_def(v);
    if (!d)
      return NULL;
    if (is_fake_quant(d))
      return d;
    if (!quill_backend_quantizes_outputs(r->b) ||
        !quill_backend_shares_params(r->b, quill_op_opcode(d)) ||
        !is_quantized(r, d) || quill_op_num_operands(d) == 0)
      return NULL;
    v = quill_op_operand(d, 0);
  }
}

/* Whether fake_quant fq quantizes as scheme s (storage and range; the
 * observer does not matter to a consumer). */
static bool fq_has_scheme(const quill_op *fq, const quill_quant_scheme *s) {
  const quill_attr *d = quill_op_attr(fq, "dtype");
  quill_type *t = d ? quill_attr_type_value(d) : NULL;
  return t && quill_type_kind_of(t) == s->storage &&
         quill_op_attr_int(fq, "qmin", 0) == s->qmin &&
         quill_op_attr_int(fq, "qmax", 0) == s->qmax;
}

/* An existing fake_quant user of v with the given role and scheme (and,
 * for weights, axis), or NULL. */
static quill_op *find_observer(const quill_value *v, bool weight,
                               int64_t axis, const quill_quant_scheme *s) {
  for (quill_use *u = quill_value_first_use(v); u; u = quill_use_next(u)) {
    quill_op *user = quill_use_user(u);
    if (!is_fake_quant(user) || fq_is_weight(user) != weight ||
        !fq_has_scheme(user, s))
      continue;
    if (weight && quill_op_attr_int(user, "axis", -1) != axis)
      continue;
    return user;
  }
  return NULL;
}

/* ---- creating observers ----------------------------------------------------- */

typedef struct attr_list {
  quill_named_attr a[16];
  unsigned n;
  bool nomem;
} attr_list;

static void add_attr(quill_context *ctx, attr_list *l, const char *name,
                     const quill_attr *a) {
  quill_ident id = quill_ident_get(ctx, name);
  if (!id || !a) {
    l->nomem = true;
    return;
  }
  l->a[l->n++] = (quill_named_attr){id, a};
}

/* The scheme attributes of docs/quantization.md section 2, in its order. */
static void scheme_attrs(quill_context *ctx, attr_list *l, const char *role,
                         const quill_quant_scheme *s, int64_t axis,
                         quill_fixed_params fixed) {
  add_attr(ctx, l, "role", quill_attr_string(ctx, role, strlen(role)));
  add_attr(ctx, l, "dtype",
           quill_attr_type(ctx, quill_type_scalar(ctx, s->storage)));
  add_attr(ctx, l, "qmin", quill_attr_int(ctx, s->qmin));
  add_attr(ctx, l, "qmax", quill_attr_int(ctx, s->qmax));
  add_attr(ctx, l, "symmetric", quill_attr_bool(ctx, s->symmetric));
  add_attr(ctx, l, "axis", quill_attr_int(ctx, axis));
  add_attr(ctx, l, "power_of_two", quill_attr_bool(ctx, s->power_of_two));
  const char *obs = quill_observer_name(s->observer.kind);
  add_attr(ctx, l, "observer", quill_attr_string(ctx, obs, strlen(obs)));
  switch (s->observer.kind) {
  case QUILL_OBSERVER_EMA_MINMAX:
    add_attr(ctx, l, "momentum", quill_attr_float(ctx, s->observer.momentum));
    break;
  case QUILL_OBSERVER_PERCENTILE:
    add_attr(ctx, l, "percentile",
             quill_attr_float(ctx, s->observer.percentile));
    break;
  case QUILL_OBSERVER_KL:
  case QUILL_OBSERVER_MSE:
    add_attr(ctx, l, "bins", quill_attr_int(ctx, s->observer.bins));
    break;
  default:
    break;
  }
  if (fixed.present) {
    add_attr(ctx, l, "fixed_scale", quill_attr_float(ctx, fixed.scale));
    add_attr(ctx, l, "fixed_zero_point",
             quill_attr_int(ctx, fixed.zero_point));
  }
}

/* Insert fq right after the producer of v (after observers already placed
 * there, to keep creation order), or at the top for a graph argument. */
static void place(obs_run *r, quill_value *v, quill_op *fq) {
  quill_op *d = quill_value_def(v);
  if (!d) {
    quill_op_insert_before(r->arg_pos, fq);
    return;
  }
  quill_op *pos = d;
  for (quill_op *n = quill_op_next(pos); is_fake_quant(n);
       n = quill_op_next(n)) {
    quill_op *od = quill_value_def(quill_op_operand(n, 0));
    if (od != d)
      break;
    pos = n;
  }
  quill_op_insert_after(pos, fq);
}

/* A new observer of v; NULL (diagnosed) on allocation failure. It takes the
 * location of v's producer (graph arguments: the argument's name; weights:
 * the op consuming the weight, `user`), so diagnostics about it name an op
 * of the model. */
static quill_value *new_observer(obs_run *r, quill_value *v,
                                 const quill_quant_scheme *s, bool weight,
                                 int64_t axis, quill_fixed_params fixed,
                                 const quill_op *user) {
  quill_context *ctx = r->ctx;
  attr_list l = {.n = 0, .nomem = false};
  scheme_attrs(ctx, &l, weight ? "weight" : "activation", s, axis, fixed);
  quill_op *d = quill_value_def(v);
  quill_loc loc = weight ? quill_op_loc(user)
                  : d    ? quill_op_loc(d)
                  : quill_value_name(v)
                      ? quill_loc_named(ctx, quill_value_name(v))
                      : quill_loc_unknown();
  quill_type *t = quill_value_type(v);
  quill_op *fq = l.nomem ? NULL
                         : quill_op_create(quill_value_graph(v),
                                           QUILL_OP_FAKE_QUANT, 1, &v, 1, &t,
                                           l.n, l.a, loc);
  if (!fq) {
    quill_error(ctx, quill_loc_unknown(),
                "insert-observers: out of memory creating an observer");
    return NULL;
  }
  place(r, v, fq);
  r->inserted++;
  r->changed = true;
  quill_pass_debug(r->ps, "observer (%s) on a result of '%s'",
                   weight ? "weight" : "activation",
                   d ? quill_op_name(d) : "<argument>");
  return quill_op_result(fq, 0);
}

/* ---- the walk ----------------------------------------------------------------- */

/* Observe activation operand v of the quantized op `op` with op's scheme:
 * unobserved v gets an observer; v observed with another scheme (a mixed
 * precision boundary) gets a second one on it, for op and the other
 * quantized users of v with op's scheme. */
static quill_status observe_input(obs_run *r, quill_op *op, quill_value *v) {
  const quill_quant_scheme *s = act_scheme(r, op);
  quill_op *have = observer_of(r, v);
  if (have && (fq_is_weight(have) || fq_has_scheme(have, s)))
    return QUILL_OK; /* (a matmul's constant B, observed as its weight) */
  quill_fixed_params none = {false, 0.0, 0};
  quill_op *fq = find_observer(v, false, -1, s);
  quill_value *q = fq ? quill_op_result(fq, 0)
                      : new_observer(r, v, s, false, -1, none, NULL);
  if (!q)
    return QUILL_ERR_NOMEM;
  /* rewire every quantized user that reads v as an activation */
  for (quill_use *u = quill_value_first_use(v), *nx; u; u = nx) {
    nx = quill_use_next(u);
    quill_op *user = quill_use_user(u);
    unsigned i = quill_use_operand_index(u);
    if (user == quill_value_def(q) || !is_quantized(r, user) ||
        role_of(user, i) != ROLE_ACT ||
        (user != op && !quill_quant_scheme_equal(act_scheme(r, user), s)))
      continue;
    quill_op_set_operand(user, i, q);
    r->changed = true;
  }
  return QUILL_OK;
}

static quill_status observe_weight(obs_run *r, quill_op *op, unsigned i) {
  quill_value *v = quill_op_operand(op, i);
  if (is_fake_quant(quill_value_def(v)))
    return QUILL_OK;
  int64_t axis = weight_axis(r, op);
  const quill_quant_scheme *s = quill_backend_op_quant(r->b, op).weight;
  quill_fixed_params none = {false, 0.0, 0};
  quill_op *fq = find_observer(v, true, axis, s);
  quill_value *q = fq ? quill_op_result(fq, 0)
                      : new_observer(r, v, s, true, axis, none, op);
  if (!q)
    return QUILL_ERR_NOMEM;
  /* every quantized user taking v as a weight on the same axis shares it
   * (one pass over the uses, so a weight shared by n ops costs O(n)) */
  for (quill_use *u = quill_value_first_use(v), *nx; u; u = nx) {
    nx = quill_use_next(u);
    quill_op *user = quill_use_user(u);
    unsigned k = quill_use_operand_index(u);
    if (user == quill_value_def(q) ||
        (user != op &&
         (!is_quantized(r, user) || role_of(user, k) != ROLE_WEIGHT ||
          weight_axis(r, user) != axis ||
          !quill_quant_scheme_equal(quill_backend_op_quant(r->b, user).weight,
                                    s))))
      continue;
    quill_op_set_operand(user, k, q);
    r->changed = true;
  }
  return QUILL_OK;
}

static quill_status observe_output(obs_run *r, quill_op *op, unsigned i) {
  quill_value *v = quill_op_result(op, i);
  if (!is_float_tensor(quill_value_type(v)))
    return QUILL_OK;
  const quill_quant_scheme *s = act_scheme(r, op);
  quill_op *fq = find_observer(v, false, -1, s);
  quill_value *q =
      fq ? quill_op_result(fq, 0)
         : new_observer(r, v, s, false, -1,
                        quill_backend_fixed_params(r->b, quill_op_opcode(op)),
                        NULL);
  if (!q)
    return QUILL_ERR_NOMEM;
  quill_op *qop = quill_value_def(q);
  for (quill_use *u = quill_value_first_use(v), *nx; u; u = nx) {
    nx = quill_use_next(u);
    if (quill_use_user(u) == qop)
      continue;
    quill_op_set_operand(quill_use_user(u), quill_use_operand_index(u), q);
    r->changed = true;
  }
  return QUILL_OK;
}

/* An override giving op 16-bit activations the backend cannot run. */
static quill_status check_i16(obs_run *r, const quill_op *op) {
  quill_op_quant q = quill_backend_op_quant(r->b, op);
  if (q.activation->storage != QUILL_TYPE_I16 ||
      quill_backend_runs_i16(r->b, quill_op_opcode(op)))
    return QUILL_OK;
  return quill_error(r->ctx, quill_op_loc(op),
                     "insert-observers: overrides[%d] of backend '%s' gives "
                     "'%s' (%s) 16-bit activations, but TFLite has no 16x8 "
                     "kernel for %s as the backend quantizes it (16x8 ops: "
                     "the quantize_ops of tflite-int16x8, with its "
                     "shared_params_ops): narrow the override's match, or "
                     "keep the op float",
                     q.override, quill_backend_name(r->b), quill_op_name(op),
                     quill_opcode_name(quill_op_opcode(op)),
                     quill_opcode_name(quill_op_opcode(op)));
}

static quill_status observe_op(obs_run *r, quill_op *op) {
  quill_status st = check_i16(r, op);
  for (unsigned i = 0; !st && i < quill_op_num_operands(op); i++) {
    operand_role role = role_of(op, i);
    if (role == ROLE_ACT)
      st = observe_input(r, op, quill_op_operand(op, i));
    else if (role == ROLE_WEIGHT)
      st = observe_weight(r, op, i);
  }
  if (st || !quill_backend_quantizes_outputs(r->b) ||
      quill_backend_shares_params(r->b, quill_op_opcode(op)))
    return st;
  for (unsigned i = 0; !st && i < quill_op_num_results(op); i++)
    st = observe_output(r, op, i);
  return st;
}

static quill_status observe_graph(obs_run *r, quill_graph *g) {
  r->arg_pos = quill_graph_first_op(g);
  if (!r->arg_pos)
    return QUILL_OK;
  quill_status st = QUILL_OK;
  QUILL_GRAPH_FOREACH_SAFE(g, op, next) {
    if (!is_quantized(r, op))
      continue;
    quill_pass_debug(r->ps, "observing '%s'", quill_op_name(op));
    if ((st = observe_op(r, op)))
      break;
  }
  return st;
}

/* ---- options ----------------------------------------------------------------- */

/* Mark the ops kept float by the option, the config's overrides or as
 * shared_params ops between float ops with {keep_float = true}, so that
 * later passes (fuse-qdq) still know after the observers are gone: in the
 * reference form a kept-float op between quantized ones looks quantized. */
static quill_status mark_kept(obs_run *r, quill_graph *g) {
  QUILL_GRAPH_FOREACH(g, op) {
    bool kept = kept_float(r, op) ||
                (quill_backend_quantizes(r->b, quill_op_opcode(op)) &&
                 quill_backend_op_quant(r->b, op).keep_float) ||
                float_between(r, op);
    if (quill_op_has_flag(op, QUILL_OPF_CONSTANT) ||
        quill_op_has_flag(op, QUILL_OPF_QUANT) || !kept ||
        quill_op_attr(op, "keep_float"))
      continue;
    quill_status st =
        quill_op_set_attr(op, "keep_float", quill_attr_bool(r->ctx, true));
    if (st)
      return st;
    r->changed = true;
  }
  return QUILL_OK;
}

/* Split keep-float at commas; every name must match some op. */
static quill_status parse_keep_float(obs_run *r, quill_module *m) {
  const char *opt = quill_pass_option(r->ps, "keep-float");
  if (!opt || !*opt)
    return QUILL_OK;
  size_t len = strlen(opt), n = 1;
  for (size_t i = 0; i < len; i++)
    n += opt[i] == ',';
  r->keep_text = quill_strdup(r->ctx, opt);
  r->keep = quill_calloc(r->ctx, n, sizeof *r->keep);
  if (r->keep)
    r->keep_cap = n;
  if (!r->keep_text || !r->keep)
    return QUILL_ERR_NOMEM;
  for (char *s = r->keep_text, *e;; s = e + 1) {
    e = strchr(s, ',');
    if (e)
      *e = 0;
    if (*s)
      r->keep[r->num_keep++] = s;
    if (!e)
      break;
  }
  quill_status st = QUILL_OK;
  for (size_t k = 0; k < r->num_keep; k++) {
    bool found = false;
    for (unsigned gi = 0; gi < quill_module_num_graphs(m) && !found; gi++) {
      QUILL_GRAPH_FOREACH(quill_module_graph(m, gi), op) {
        const char *ln = quill_op_loc(op).name;
        const char *vn = quill_op_num_results(op)
                             ? quill_value_name(quill_op_result(op, 0))
                             : NULL;
        if ((ln && strcmp(ln, r->keep[k]) == 0) ||
            (vn && strcmp(vn, r->keep[k]) == 0)) {
          found = true;
          break;
        }
      }
    }
    if (!found)
      st = quill_error(r->ctx, quill_loc_unknown(),
                       "insert-observers: keep-float name '%s' matches no op "
                       "(by location name or result value name)",
                       r->keep[k]);
  }
  return st;
}

static quill_status run(quill_pass_state *ps, quill_module *m) {
  quill_context *ctx = quill_pass_context(ps);
  obs_run r = {.ps = ps, .ctx = ctx};
  const char *name = quill_pass_option(ps, "backend");
  if (!name || !*name) {
    quill_strbuf sb;
    quill_strbuf_init(&sb, ctx);
    for (unsigned i = 0; i < quill_backend_num_shipped(); i++)
      quill_strbuf_printf(&sb, "%s%s", i ? ", " : "",
                          quill_backend_shipped_name(i));
    quill_error(ctx, quill_loc_unknown(),
                "pass 'insert-observers' needs option 'backend=NAME' "
                "(shipped: %s; or a config file path)",
                quill_strbuf_str(&sb));
    quill_strbuf_free(&sb);
    return QUILL_ERR_INVALID;
  }
  if (!(r.b = quill_backend_get(ctx, name)))
    return QUILL_ERR_INVALID;
  quill_status st = parse_keep_float(&r, m);
  for (unsigned gi = 0; !st && gi < quill_module_num_graphs(m); gi++)
    st = mark_kept(&r, quill_module_graph(m, gi));
  for (unsigned gi = 0; !st && gi < quill_module_num_graphs(m); gi++)
    st = observe_graph(&r, quill_module_graph(m, gi));
  quill_free(ctx, r.keep, r.keep_cap * sizeof *r.keep);
  quill_string_free(ctx, r.keep_text);
  if (st)
    return st;
  if (r.inserted)
    quill_pass_stat_add(ps, "num-observers", r.inserted);
  if (!r.changed)
    quill_pass_mark_unchanged(ps);
  return QUILL_OK;
}

const quill_pass quill_pass_insert_observers = {
    .name = "insert-observers",
    .summary = "Insert fake_quant observers on the values the backend "
               "quantizes",
    .run = run,
    .requires = 0,
    .establishes = 0,
    .preserves = QUILL_PROP_CONSTANTS_FOLDED,
    .options = "backend=NAME keep-float=NAMES",
};

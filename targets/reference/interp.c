/*
 * interp.c - run a whole graph on the reference target.
 *
 * The interpreter walks the op list once, in program order, and keeps one
 * tensor slot per SSA value:
 *
 *   slots: [ arg 0 .. arg A-1 | results of op 0 | results of op 1 | ... ]
 *            borrowed from      owned (kernel output) or borrowed (a
 *            the caller         constant's dense attribute)
 *
 * Before anything runs, a planning pass
 *   - numbers the ops (position p; the return op gets position N),
 *   - checks every op against the kernel table (all unsupported ops are
 *     reported, not only the first) and that every result is statically
 *     shaped,
 *   - records for every slot the position of its last user, so that
 *     op p frees each owned operand whose last use is p right after it ran
 *     (a value nobody uses is freed as soon as the observer has seen it).
 *
 * Values the return op uses live to the end. The outputs are then handed
 * over: an owned slot moves into the first output that names it; a
 * borrowed slot (a graph argument or a constant) and any further output
 * naming an already moved value get a copy, so every output is a separate
 * allocation owned by the caller. On any failure every owned slot and
 * every output made so far is freed and the outputs are zeroed.
 */
#include <string.h>

#include "targets/reference/kernels.h"

/* One SSA value's tensor during a run. */
typedef struct slot {
  quill_tensor t;    /* zeroed until the value is computed */
  bool owned;        /* t.data was allocated by the run (free it) */
  unsigned last_use; /* position of the last op using it; N = the return */
} slot;

/* The run's plan and state. */
typedef struct interp {
  quill_context *ctx;
  const quill_graph *g;
  unsigned num_ops;     /* ops before the return (positions 0..num_ops-1) */
  unsigned num_slots;
  slot *slots;
  unsigned *base;       /* by position: index of the op's first result slot */
  unsigned *pos_of_id;  /* by op id: position (only attached ops are valid) */
  uint32_t max_id;
  quill_op *ret;
} interp;

/* ---- planning --------------------------------------------------------------- */

static unsigned slot_of(const interp *in, const quill_value *v) {
  quill_op *def = quill_value_def(v);
  if (!def)
    return quill_value_index(v);
  return in->base[in->pos_of_id[quill_op_id(def)]] + quill_value_index(v);
}

static void interp_free(interp *in) {
  quill_context *ctx = in->ctx;
  if (in->slots) {
    for (unsigned i = 0; i < in->num_slots; i++)
      if (in->slots[i].owned)
        quill_tensor_free(ctx, &in->slots[i].t);
    quill_free(ctx, in->slots, in->num_slots * sizeof *in->slots);
  }
  if (in->base)
    quill_free(ctx, in->base, (in->num_ops + 1) * sizeof *in->base);
  if (in->pos_of_id)
    quill_free(ctx, in->pos_of_id, ((size_t)in->max_id + 1) * sizeof(unsigned));
  memset(in, 0, sizeof *in);
}

/* Report every op the reference target cannot run, and every result
 * without a static shape. Returns the worst status. */
static quill_status check_ops(interp *in) {
  quill_status st = QUILL_OK;
  QUILL_GRAPH_FOREACH(in->g, op) {
    if (op == in->ret)
      continue;
    const char *why = NULL;
    if (!quill_ref_op_supported(op, &why)) {
      if (quill_ref_kernels[quill_op_opcode(op)].eval)
        quill_error(in->ctx, quill_op_loc(op),
                    "op '%s' is not supported by target 'reference' (%s)",
                    quill_op_name(op), why);
      else
        quill_error(in->ctx, quill_op_loc(op),
                    "op '%s' is not supported by target 'reference'",
                    quill_op_name(op));
      st = QUILL_ERR_UNSUPPORTED;
      continue;
    }
    for (unsigned r = 0; r < quill_op_num_results(op); r++) {
      quill_type *t = quill_value_type(quill_op_result(op, r));
      if (!quill_type_is_tensor(t) || !quill_type_has_static_shape(t) ||
          quill_type_num_elements(t) < 0) {
        quill_error(in->ctx, quill_op_loc(op),
                    "reference: result %u of '%s' has no static shape", r,
                    quill_op_name(op));
        if (st == QUILL_OK)
          st = QUILL_ERR_INVALID;
      }
    }
  }
  return st;
}

/* Number the ops, size the slot table and record last uses. */
static quill_status plan(interp *in) {
  quill_context *ctx = in->ctx;
  const quill_graph *g = in->g;
  in->ret = quill_graph_return(g);
  if (!in->ret || quill_graph_last_op(g) != in->ret)
    return quill_error(ctx, quill_graph_loc(g),
                       "reference: graph '%s' does not end in a return",
                       quill_graph_name(g));
  if (quill_op_num_operands(in->ret) != quill_graph_num_results(g))
    return quill_error(ctx, quill_op_loc(in->ret),
                       "reference: graph '%s' returns %u values but declares "
                       "%u results",
                       quill_graph_name(g), quill_op_num_operands(in->ret),
                       quill_graph_num_results(g));

  unsigned nslots = quill_graph_num_args(g);
  QUILL_GRAPH_FOREACH(g, op) {
    if (quill_op_id(op) > in->max_id)
      in->max_id = quill_op_id(op);
    if (op != in->ret) {
      in->num_ops++;
      nslots += quill_op_num_results(op);
    }
  }
  /* one spare slot so that an empty graph still gets a non-NULL table */
  in->num_slots = nslots + 1;
  in->pos_of_id = quill_calloc(ctx, (size_t)in->max_id + 1, sizeof(unsigned));
  in->base = quill_calloc(ctx, in->num_ops + 1, sizeof *in->base);
  in->slots = quill_calloc(ctx, in->num_slots, sizeof *in->slots);
  if (!in->pos_of_id || !in->base || !in->slots)
    return QUILL_ERR_NOMEM;

  unsigned p = 0, next = quill_graph_num_args(g);
  QUILL_GRAPH_FOREACH(g, op) {
    in->pos_of_id[quill_op_id(op)] = p;
    in->base[p] = next;
    if (op != in->ret)
      next += quill_op_num_results(op);
    p++;
  }
  /* A value's last use defaults to its definition: an argument nobody
   * uses is simply never touched, a result nobody uses dies right after
   * its op. */
  p = 0;
  QUILL_GRAPH_FOREACH(g, op) {
    if (op != in->ret)
      for (unsigned r = 0; r < quill_op_num_results(op); r++)
        in->slots[in->base[p] + r].last_use = p;
    for (unsigned k = 0; k < quill_op_num_operands(op); k++) {
      const quill_value *v = quill_op_operand(op, k);
      if (quill_value_graph(v) != g) /* malformed: caught when it runs */
        continue;
      quill_op *def = quill_value_def(v);
      if (def && !quill_op_is_attached(def))
        continue;
      unsigned s = slot_of(in, v);
      if (s < nslots && in->slots[s].last_use < p)
        in->slots[s].last_use = p;
    }
    p++;
  }
  return QUILL_OK;
}

/* ---- running ---------------------------------------------------------------- */

static bool same_tensor_type(const quill_tensor *t, const quill_type *want) {
  return t->type == want;
}

/* Check the caller's inputs against the graph arguments. */
static quill_status check_inputs(interp *in, const quill_tensor *inputs,
                                 unsigned n_in) {
  quill_context *ctx = in->ctx;
  const quill_graph *g = in->g;
  unsigned nargs = quill_graph_num_args(g);
  if (n_in != nargs)
    return quill_error(ctx, quill_graph_loc(g),
                       "reference: graph '%s' takes %u input%s, got %u",
                       quill_graph_name(g), nargs, nargs == 1 ? "" : "s",
                       n_in);
  quill_status st = QUILL_OK;
  for (unsigned i = 0; i < nargs; i++) {
    const quill_value *arg = quill_graph_arg(g, i);
    quill_type *want = quill_value_type(arg);
    const char *name = quill_value_name(arg);
    const quill_tensor *t = &inputs[i];
    if (same_tensor_type(t, want) &&
        t->size == (size_t)quill_type_num_elements(want) *
                       quill_type_elem_bytes(quill_type_elem(want)) &&
        (t->data || t->size == 0))
      continue;
    quill_strbuf sw, sg;
    quill_strbuf_init(&sw, ctx);
    quill_strbuf_init(&sg, ctx);
    quill_type_print(want, &sw);
    if (t->type)
      quill_type_print(t->type, &sg);
    else
      quill_strbuf_puts(&sg, "no type");
    if (same_tensor_type(t, want))
      quill_error(ctx, quill_graph_loc(g),
                  "reference: input %u ('%s') of type %s has %zu data bytes, "
                  "expected %zu",
                  i, name ? name : "", quill_strbuf_str(&sw), t->size,
                  (size_t)(quill_type_num_elements(want) < 0
                               ? 0
                               : quill_type_num_elements(want)) *
                      quill_type_elem_bytes(quill_type_elem(want)));
    else
      quill_error(ctx, quill_graph_loc(g),
                  "reference: input %u ('%s') has type %s, but graph '%s' "
                  "expects %s",
                  i, name ? name : "", quill_strbuf_str(&sg),
                  quill_graph_name(g), quill_strbuf_str(&sw));
    quill_strbuf_free(&sw);
    quill_strbuf_free(&sg);
    st = QUILL_ERR_INVALID;
  }
  return st;
}

/* Release every owned operand of the op at position p whose last use is p,
 * and (for results nobody uses) the op's own results. */
static void release_after(interp *in, const quill_op *op, unsigned p) {
  for (unsigned k = 0; k < quill_op_num_operands(op); k++) {
    slot *s = &in->slots[slot_of(in, quill_op_operand(op, k))];
    if (s->owned && s->last_use == p) {
      quill_tensor_free(in->ctx, &s->t);
      s->owned = false;
    }
  }
  for (unsigned r = 0; r < quill_op_num_results(op); r++) {
    slot *s = &in->slots[in->base[p] + r];
    if (s->owned && s->last_use == p) {
      quill_tensor_free(in->ctx, &s->t);
      s->owned = false;
    }
  }
}

/* Run one op at position p: constants borrow their attribute, other ops
 * get fresh outputs from their kernel. */
static quill_status run_op(interp *in, quill_op *op, unsigned p,
                           quill_tensor *scratch_in, quill_tensor *scratch_out,
                           quill_ref_observer_fn observer, void *ud) {
  quill_context *ctx = in->ctx;
  unsigned nres = quill_op_num_results(op);
  slot *res = &in->slots[in->base[p]];
  if (quill_op_opcode(op) == QUILL_OP_CONSTANT) {
    const quill_attr *a = quill_op_attr(op, "value");
    if (!a || quill_attr_kind_of(a) != QUILL_ATTR_DENSE ||
        quill_attr_dense_type(a) != quill_value_type(quill_op_result(op, 0)))
      return quill_ref_op_error(ctx, op,
                                "value is not a dense attribute of the "
                                "result type");
    res[0].t = quill_tensor_from_attr(a);
    res[0].owned = false;
  } else {
    unsigned nops = quill_op_num_operands(op);
    for (unsigned k = 0; k < nops; k++) {
      const quill_value *v = quill_op_operand(op, k);
      quill_op *def = quill_value_def(v);
      if (quill_value_graph(v) != in->g || (def && !quill_op_is_attached(def)))
        return quill_error(ctx, quill_op_loc(op),
                           "reference: operand %u of '%s' is not a value of "
                           "this graph",
                           k, quill_op_name(op));
      scratch_in[k] = in->slots[slot_of(in, v)].t;
    }
    quill_status st = quill_ref_outputs_alloc(ctx, op, scratch_out);
    if (st != QUILL_OK)
      return st;
    st = quill_ref_eval_op(ctx, op, scratch_in, scratch_out);
    if (st != QUILL_OK) {
      quill_ref_outputs_free(ctx, op, scratch_out);
      return st;
    }
    for (unsigned r = 0; r < nres; r++) {
      res[r].t = scratch_out[r];
      res[r].owned = true;
    }
  }
  if (observer) {
    for (unsigned r = 0; r < nres; r++)
      scratch_out[r] = res[r].t;
    quill_status st = observer(ud, op, scratch_out, nres);
    if (st != QUILL_OK)
      return st;
  }
  release_after(in, op, p);
  return QUILL_OK;
}

/* Hand the returned values over to the caller's outputs. */
static quill_status take_outputs(interp *in, quill_tensor *outputs) {
  quill_context *ctx = in->ctx;
  for (unsigned i = 0; i < quill_op_num_operands(in->ret); i++) {
    const quill_value *v = quill_op_operand(in->ret, i);
    if (quill_value_graph(v) != in->g)
      return quill_error(ctx, quill_op_loc(in->ret),
                         "reference: result %u is not a value of this graph",
                         i);
    slot *s = &in->slots[slot_of(in, v)];
    if (s->owned) { /* move */
      outputs[i] = s->t;
      s->owned = false; /* s->t stays readable for later copies */
      continue;
    }
    quill_type *ty = s->t.type;
    if (!ty)
      return quill_error(ctx, quill_op_loc(in->ret),
                         "reference: result %u was never computed", i);
    quill_status st = quill_tensor_alloc(ctx, ty, &outputs[i]);
    if (st != QUILL_OK)
      return st;
    if (s->t.size)
      memcpy(outputs[i].data, s->t.data, s->t.size);
  }
  return QUILL_OK;
}

/* Largest operand and result counts, for the per-op scratch arrays. */
static void max_arity(const quill_graph *g, unsigned *nin, unsigned *nout) {
  *nin = 1;
  *nout = 1;
  QUILL_GRAPH_FOREACH(g, op) {
    if (quill_op_num_operands(op) > *nin)
      *nin = quill_op_num_operands(op);
    if (quill_op_num_results(op) > *nout)
      *nout = quill_op_num_results(op);
  }
}

quill_status quill_ref_run_observed(quill_context *ctx, const quill_graph *g,
                                    const quill_tensor *inputs, unsigned n_in,
                                    quill_tensor *outputs, unsigned n_out,
                                    quill_ref_observer_fn observer, void *ud) {
  if (outputs)
    memset(outputs, 0, n_out * sizeof *outputs);
  if (n_out != quill_graph_num_results(g))
    return quill_error(ctx, quill_graph_loc(g),
                       "reference: graph '%s' has %u result%s, but %u output "
                       "tensors were given",
                       quill_graph_name(g), quill_graph_num_results(g),
                       quill_graph_num_results(g) == 1 ? "" : "s", n_out);
  interp in;
  memset(&in, 0, sizeof in);
  in.ctx = ctx;
  in.g = g;
  quill_status st = plan(&in);
  if (st == QUILL_OK)
    st = check_ops(&in);
  if (st == QUILL_OK)
    st = check_inputs(&in, inputs, n_in);
  unsigned max_in, max_out;
  max_arity(g, &max_in, &max_out);
  quill_tensor *sin = NULL, *sout = NULL;
  if (st == QUILL_OK) {
    sin = quill_calloc(ctx, max_in, sizeof *sin);
    sout = quill_calloc(ctx, max_out, sizeof *sout);
    if (!sin || !sout)
      st = QUILL_ERR_NOMEM;
  }
  if (st == QUILL_OK) {
    for (unsigned i = 0; i < n_in; i++) {
      in.slots[i].t = inputs[i];
      in.slots[i].owned = false;
    }
    unsigned p = 0;
    for (quill_op *op = quill_graph_first_op(g); op && op != in.ret;
         op = quill_op_next(op), p++) {
      st = run_op(&in, op, p, sin, sout, observer, ud);
      if (st != QUILL_OK)
        break;
    }
  }
  if (st == QUILL_OK)
    st = take_outputs(&in, outputs);
  if (st != QUILL_OK && outputs)
    quill_ref_tensors_free(ctx, outputs, n_out);
  if (sin)
    quill_free(ctx, sin, max_in * sizeof *sin);
  if (sout)
    quill_free(ctx, sout, max_out * sizeof *sout);
  interp_free(&in);
  return st;
}

quill_status quill_ref_check_graph(quill_context *ctx, const quill_graph *g) {
  interp in;
  memset(&in, 0, sizeof in);
  in.ctx = ctx;
  in.g = g;
  quill_status st = plan(&in);
  if (st == QUILL_OK)
    st = check_ops(&in);
  interp_free(&in);
  return st;
}

quill_status quill_ref_run(quill_context *ctx, const quill_graph *g,
                           const quill_tensor *inputs, unsigned n_in,
                           quill_tensor *outputs, unsigned n_out) {
  return quill_ref_run_observed(ctx, g, inputs, n_in, outputs, n_out, NULL,
                                NULL);
}

/*
 * export.c - the ONNX exporter's driver: checks, tensor names, the per-op
 * wrapping around builders, graph inputs/outputs, and packing.
 *
 *   quill_graph
 *     1. graph arguments: types ONNX can hold
 *     2. names: graph arguments and op results keep their names (made
 *        unique with _1, _2...); unnamed ones are numbered as the .qir
 *        printer numbers them (%0 -> "0", argument #1 -> "arg1")
 *     3. graph inputs (value_info with the storage type of quantized ones)
 *     4. ops in program order: checked (a table entry, result types ONNX
 *        can hold, the opset it needs; the model's opset is the highest
 *        one needed, >= 13), then exported through onnx_export_table,
 *        wrapped:
 *           DequantizeLinear on quantized operands of float-only ops,
 *           the builder, Relu/Clip for an `activation`, QuantizeLinear on
 *           quantized results of float-only ops
 *        Problems are reported op by op and the export fails at the end,
 *        so every one is listed
 *     5. value_info for intermediate values, ModelProto (ir_version 8,
 *        producer "quill"), onnx__model_proto__pack into a buffer
 *
 * Everything built lives in the exporter's arena (proto.c) and is freed
 * after packing; the packed buffer is the caller's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/writefile.h"
#include "targets/onnx/export_impl.h"

/* ---- diagnostics ------------------------------------------------------------- */

quill_status ex_op_error(onnx_exporter *ex, const quill_op *op,
                         const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return quill_error(ex->ctx, quill_op_loc(op),
                     "op '%s' cannot be exported to ONNX: %s",
                     quill_op_name(op), msg);
}

void ex_op_warning(onnx_exporter *ex, const quill_op *op, const char *fmt,
                   ...) {
  va_list ap;
  va_start(ap, fmt);
  quill_diag_emitv(ex->ctx, quill_op_loc(op), QUILL_DIAG_WARNING, fmt, ap);
  va_end(ap);
}

/* ---- names ----------------------------------------------------------------------- */

/* The value's name for ONNX, or NULL if it counts as unnamed. Names are
 * kept as they are (ONNX allows any string; control characters become
 * '_'); like the .qir printer (ir/printer.c), all-digit names and `argN`
 * names of graph arguments count as unnamed, so unnamed values are
 * numbered the way `quill-opt` prints them. */
static bool all_digits(const char *s) {
  for (; *s; s++)
    if (*s < '0' || *s > '9')
      return false;
  return true;
}

static char *usable_name(onnx_exporter *ex, const quill_value *v) {
  const char *raw = quill_value_name(v);
  if (!raw || !*raw)
    return NULL;
  char *s = ex_strdup(ex, raw);
  if (!s)
    return NULL;
  for (char *c = s; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      *c = '_';
  if (all_digits(s))
    return NULL;
  if (quill_value_is_arg(v) && strlen(s) > 3 && !strncmp(s, "arg", 3) &&
      all_digits(s + 3))
    return NULL;
  return s;
}

static void reserve(onnx_exporter *ex, const char *name) {
  ex_smap_put(ex, &ex->taken, name, (void *)name);
}

const char *ex_fresh(onnx_exporter *ex, const char *base) {
  if (!base)
    return NULL; /* a failed ex_printf: nomem is set */
  const char *n = base;
  for (unsigned long long k = 1; n && ex_smap_get(&ex->taken, n); k++)
    n = ex_printf(ex, "%s_%llu", base, k);
  if (n == base)
    n = ex_strdup(ex, base);
  if (n)
    reserve(ex, n);
  return n;
}

static void name_value(onnx_exporter *ex, const quill_value *v,
                       const char *name) {
  if (name)
    ex_pmap_put(ex, &ex->value_names, v, (void *)name);
}

/* If v is a quantized constant whose first use is a dequantize with a
 * name, that name (sanitised), else NULL. */
static const char *quantized_input_of(onnx_exporter *ex, const quill_value *v) {
  quill_op *def = quill_value_def(v);
  quill_use *u = quill_value_first_use(v);
  if (!def || quill_op_opcode(def) != QUILL_OP_CONSTANT || !u ||
      !quill_type_is_quant(quill_type_elem(quill_value_type(v))))
    return NULL;
  quill_op *user = quill_use_user(u);
  if (quill_op_opcode(user) != QUILL_OP_DEQUANTIZE)
    return NULL;
  return usable_name(ex, quill_op_result(user, 0));
}

static void assign_names(onnx_exporter *ex) {
  const quill_graph *g = ex->graph;
  unsigned na = quill_graph_num_args(g);
  for (unsigned i = 0; i < na; i++) {
    quill_value *a = quill_graph_arg(g, i);
    if (!usable_name(ex, a)) {
      const char *n = ex_printf(ex, "arg%u", i);
      if (n)
        reserve(ex, n);
      name_value(ex, a, n);
    }
  }
  for (unsigned i = 0; i < na; i++) {
    quill_value *a = quill_graph_arg(g, i);
    char *s = usable_name(ex, a);
    if (s)
      name_value(ex, a, ex_fresh(ex, s));
  }
  QUILL_GRAPH_FOREACH(g, op) {
    for (unsigned i = 0; i < quill_op_num_results(op); i++) {
      quill_value *r = quill_op_result(op, i);
      char *s = usable_name(ex, r);
      if (s)
        name_value(ex, r, ex_fresh(ex, s));
    }
  }
  unsigned long long next = 0;
  QUILL_GRAPH_FOREACH(g, op) {
    for (unsigned i = 0; i < quill_op_num_results(op); i++) {
      quill_value *r = quill_op_result(op, i);
      if (ex_pmap_get(&ex->value_names, r))
        continue;
      const char *n;
      do
        n = ex_printf(ex, "%llu", next++);
      while (n && ex_smap_get(&ex->taken, n));
      /* An unnamed quantized constant that feeds a named dequantize is
       * named after it, as ONNX QDQ tools do ("<dq>_quantized"); it still
       * takes its number, so later values are numbered as printed. */
      const char *dq = quantized_input_of(ex, r);
      if (dq)
        n = ex_printf(ex, "%s_quantized", dq);
      else if (n)
        reserve(ex, n);
      name_value(ex, r, dq ? ex_fresh(ex, n) : n);
    }
  }
}

const char *ex_value_name(onnx_exporter *ex, const quill_value *v) {
  const char *n = ex_pmap_get(&ex->value_names, v);
  return n ? n : "";
}

const char *ex_in(onnx_exporter *ex, const quill_op *op, unsigned i) {
  if (op == ex->op && ex->in_names && ex->in_names[i])
    return ex->in_names[i];
  return ex_value_name(ex, quill_op_operand(op, i));
}

const char *ex_out(onnx_exporter *ex, const quill_op *op, unsigned i) {
  if (op == ex->op && ex->out_names && ex->out_names[i])
    return ex->out_names[i];
  return ex_value_name(ex, quill_op_result(op, i));
}

quill_type *ex_in_elem(onnx_exporter *ex, const quill_op *op, unsigned i) {
  quill_type *e = quill_type_elem(quill_value_type(quill_op_operand(op, i)));
  if (op == ex->op && ex->float_wrapped && quill_type_is_quant(e))
    return quill_type_quant_expressed(e);
  return e;
}

/* ---- checks ------------------------------------------------------------------------ */

/* Why an element type cannot be an ONNX tensor element, or NULL. */
static const char *elem_problem(const quill_type *e) {
  if (quill_type_is_quant(e)) {
    quill_type *st = quill_type_quant_storage(e);
    quill_type_kind k = quill_type_kind_of(st);
    if (quill_type_kind_of(quill_type_quant_expressed(e)) != QUILL_TYPE_F32)
      return "quantized types must express f32 (ONNX QuantizeLinear scales "
             "are float)";
    if (k != QUILL_TYPE_I8 && k != QUILL_TYPE_U8 && k != QUILL_TYPE_I32)
      return "quantized storage must be i8, u8 or i32 (ONNX opsets up to 17 "
             "quantize to int8/uint8 only)";
    return NULL;
  }
  return ex_dtype(e) ? NULL : "the element type has no ONNX equivalent";
}

static quill_status check_type(onnx_exporter *ex, const quill_op *op,
                               const quill_type *t, const char *what,
                               unsigned i) {
  const char *why = elem_problem(quill_type_elem(t));
  if (!why)
    return QUILL_OK;
  quill_strbuf sb;
  quill_strbuf_init(&sb, ex->ctx);
  quill_type_print(t, &sb);
  quill_status st;
  if (op)
    st = ex_op_error(ex, op, "%s #%u has type %s: %s", what, i,
                     quill_strbuf_str(&sb), why);
  else
    st = quill_error(ex->ctx, quill_graph_loc(ex->graph),
                     "graph argument #%u of type %s cannot be exported to "
                     "ONNX: %s",
                     i, quill_strbuf_str(&sb), why);
  quill_strbuf_free(&sb);
  return st;
}

/* Check one op: an exporter exists, its result types have ONNX forms and
 * the opset it needs can be written. Raises ex->opset to what it needs
 * (when no opset was requested). Each problem is an error at the op. */
static quill_status check_op(onnx_exporter *ex, const quill_op *op,
                             int64_t want_opset) {
  const onnx_export_entry *e = &onnx_export_table[quill_op_opcode(op)];
  if (!e->build) {
    const char *why = "it has no ONNX counterpart";
    quill_onnx_export_op_excluded(quill_op_opcode(op), &why);
    return ex_op_error(ex, op, "%s", why);
  }
  quill_status st = QUILL_OK;
  for (unsigned i = 0; i < quill_op_num_results(op); i++)
    if (check_type(ex, op, quill_value_type(quill_op_result(op, i)),
                   "result", i))
      st = QUILL_ERR_INVALID;
  if (st)
    return st;
  int v = e->min_opset ? e->min_opset : QUILL_ONNX_EXPORT_MIN_OPSET;
  if (e->opset_of && e->opset_of(op) > v)
    v = e->opset_of(op);
  if (v > QUILL_ONNX_EXPORT_MAX_OPSET || (want_opset && v > want_opset))
    return ex_op_error(ex, op, "it needs opset %d, the export writes opset "
                               "%lld",
                       v, (long long)(want_opset ? want_opset
                                                 : QUILL_ONNX_EXPORT_MAX_OPSET));
  if (!want_opset && v > ex->opset)
    ex->opset = v;
  return QUILL_OK;
}

/* ---- one op ------------------------------------------------------------------------- */

/* Whether the driver must dequantize the operands and quantize the results
 * of op around its builder. */
static bool needs_wrap(const onnx_export_entry *e, const quill_op *op) {
  if (e->flags & EXF_QUANT)
    return false;
  const quill_type *q = NULL;
  bool any = false, same = true;
  unsigned no = quill_op_num_operands(op), nr = quill_op_num_results(op);
  for (unsigned i = 0; i < no + nr; i++) {
    const quill_value *v = i < no ? quill_op_operand(op, i)
                                  : quill_op_result(op, i - no);
    quill_type *el = quill_type_elem(quill_value_type(v));
    if (!quill_type_is_quant(el))
      continue;
    any = true;
    if (q && q != el)
      same = false;
    q = el;
  }
  if (!any)
    return false;
  /* A fused activation is a float Relu/Clip: compute in float then. */
  bool storage = (e->flags & EXF_STORAGE) && same &&
                 !quill_op_attr(op, "activation") &&
                 (!e->storage_ok || e->storage_ok(op));
  return !storage;
}

/* Relu / Clip after the op for its `activation` attribute. */
static quill_status emit_activation(onnx_exporter *ex, const quill_op *op,
                                    const char *in, const char *out,
                                    quill_type *elem) {
  const quill_attr *a = quill_op_attr(op, "activation");
  size_t len;
  const char *kind = quill_attr_string_value(a, &len);
  if (!strcmp(kind, "relu"))
    return ex_node(ex, "Relu", 1, &in, 1, &out) ? QUILL_OK : QUILL_ERR_NOMEM;
  if (strcmp(kind, "clip"))
    return ex_op_error(ex, op, "unknown activation \"%s\"", kind);
  const char *ins[3] = {in, "", ""};
  if (quill_op_attr(op, "activation_min"))
    ins[1] = ex_init_scalar(ex, ex_printf(ex, "%s_min", out), elem,
                            quill_op_attr_float(op, "activation_min", 0));
  if (quill_op_attr(op, "activation_max"))
    ins[2] = ex_init_scalar(ex, ex_printf(ex, "%s_max", out), elem,
                            quill_op_attr_float(op, "activation_max", 0));
  if (!ins[1] || !ins[2])
    return QUILL_ERR_NOMEM;
  return ex_node(ex, "Clip", 3, ins, 1, &out) ? QUILL_OK : QUILL_ERR_NOMEM;
}

static quill_status export_op(onnx_exporter *ex, const quill_op *op,
                              unsigned index) {
  const onnx_export_entry *e = &onnx_export_table[quill_op_opcode(op)];
  unsigned no = quill_op_num_operands(op), nr = quill_op_num_results(op);
  quill_loc loc = quill_op_loc(op);
  ex->op = op;
  ex->main_named = false;
  ex->aux_mode = false;
  ex->float_wrapped = needs_wrap(e, op);
  ex->node_base = loc.name ? loc.name
                           : ex_printf(ex, "%s_%u", quill_op_name(op), index);
  ex->in_names = ex_alloc(ex, (no ? no : 1) * sizeof *ex->in_names);
  ex->out_names = ex_alloc(ex, (nr ? nr : 1) * sizeof *ex->out_names);
  const char **qin = ex_alloc(ex, (nr ? nr : 1) * sizeof *qin);
  if (!ex->node_base || !ex->in_names || !ex->out_names || !qin)
    return QUILL_ERR_NOMEM;
  quill_status st = QUILL_OK;
  /* Dequantize quantized operands of float-only ops. */
  ex->aux_mode = true;
  for (unsigned i = 0; ex->float_wrapped && !st && i < no; i++) {
    quill_type *t = quill_value_type(quill_op_operand(op, i));
    if (!quill_type_is_quant(quill_type_elem(t)))
      continue;
    const char *src = ex_in(ex, op, i);
    const char *dq = ex_fresh(ex, ex_printf(ex, "%s_dequantized", src));
    if (!dq)
      return QUILL_ERR_NOMEM;
    st = ex_emit_dequantize(ex, op, src, dq, t);
    ex->in_names[i] = dq;
  }
  ex->aux_mode = false;
  for (unsigned i = 0; ex->float_wrapped && i < nr; i++) {
    quill_type *t = quill_value_type(quill_op_result(op, i));
    if (quill_type_is_quant(quill_type_elem(t))) {
      qin[i] = ex_fresh(ex, ex_printf(ex, "%s_float", ex_out(ex, op, i)));
      ex->out_names[i] = qin[i];
    }
  }
  const quill_attr *act = quill_op_attr(op, "activation");
  const char *act_out = NULL, *pre = NULL;
  if (act && nr == 1 && quill_attr_kind_of(act) == QUILL_ATTR_STRING) {
    act_out = ex_out(ex, op, 0);
    pre = ex_fresh(ex, ex_printf(ex, "%s_preact", act_out));
    ex->out_names[0] = pre;
  }
  if (!st)
    st = e->build(ex, op);
  ex->aux_mode = true;
  if (!st && pre) {
    quill_type *el = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
    if (quill_type_is_quant(el))
      el = quill_type_quant_expressed(el);
    st = emit_activation(ex, op, pre, act_out, el);
  }
  for (unsigned i = 0; ex->float_wrapped && !st && i < nr; i++)
    if (qin[i])
      st = ex_emit_quantize(ex, op, qin[i],
                            ex_value_name(ex, quill_op_result(op, i)),
                            quill_value_type(quill_op_result(op, i)));
  ex->aux_mode = false;
  ex->op = NULL;
  if (ex->nomem)
    return QUILL_ERR_NOMEM;
  return st;
}

/* ---- the model ---------------------------------------------------------------------- */

/* Steps 2-4 (and the checks, op by op, so that every problem is reported
 * in program order): QUILL_ERR_INVALID if anything cannot be exported. */
static quill_status build_graph(onnx_exporter *ex, int64_t want_opset) {
  const quill_graph *g = ex->graph;
  quill_status st = QUILL_OK;
  ex->opset = want_opset ? want_opset : QUILL_ONNX_EXPORT_MIN_OPSET;
  for (unsigned i = 0; i < quill_graph_num_args(g); i++)
    if (check_type(ex, NULL, quill_value_type(quill_graph_arg(g, i)), "", i))
      st = QUILL_ERR_INVALID;
  assign_names(ex);
  quill_op *ret = quill_graph_return(g);
  for (unsigned i = 0; ret && i < quill_op_num_operands(ret); i++)
    ex_pmap_put(ex, &ex->returned, quill_op_operand(ret, i), (void *)1);
  for (unsigned i = 0; i < quill_graph_num_args(g); i++) {
    quill_value *a = quill_graph_arg(g, i);
    ex_vec_push(ex, &ex->inputs,
                ex_value_info(ex, ex_value_name(ex, a), quill_value_type(a)));
  }
  unsigned index = 0;
  QUILL_GRAPH_FOREACH(g, op) {
    if (check_op(ex, op, want_opset)) {
      st = QUILL_ERR_INVALID;
      index++;
      continue;
    }
    quill_status s = export_op(ex, op, index++);
    if (s == QUILL_ERR_NOMEM)
      return s;
    if (s)
      st = s;
  }
  if (st || ex->opts_omit_value_info)
    return st;
  QUILL_GRAPH_FOREACH(g, op) {
    if (quill_op_opcode(op) == QUILL_OP_CONSTANT)
      continue;
    for (unsigned i = 0; i < quill_op_num_results(op); i++) {
      quill_value *r = quill_op_result(op, i);
      if (!ex_pmap_get(&ex->returned, r))
        ex_vec_push(ex, &ex->value_info,
                    ex_value_info(ex, ex_value_name(ex, r),
                                  quill_value_type(r)));
    }
  }
  return QUILL_OK;
}

static quill_status pack_model(onnx_exporter *ex, void **data, size_t *len) {
  Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
  Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  Onnx__OperatorSetIdProto *osp = &os;
  Onnx__StringStringEntryProto meta = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
  Onnx__StringStringEntryProto *metap = &meta;
  Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
  gp.name = (char *)quill_graph_name(ex->graph);
  gp.n_node = ex->nodes.n;
  gp.node = (Onnx__NodeProto **)ex->nodes.items;
  gp.n_initializer = ex->inits.n;
  gp.initializer = (Onnx__TensorProto **)ex->inits.items;
  gp.n_input = ex->inputs.n;
  gp.input = (Onnx__ValueInfoProto **)ex->inputs.items;
  gp.n_output = ex->outputs.n;
  gp.output = (Onnx__ValueInfoProto **)ex->outputs.items;
  gp.n_value_info = ex->value_info.n;
  gp.value_info = (Onnx__ValueInfoProto **)ex->value_info.items;
  os.domain = (char *)"";
  os.has_version = 1;
  os.version = ex->opset;
  meta.key = (char *)"quill.graph";
  meta.value = (char *)quill_graph_name(ex->graph);
  mp.has_ir_version = 1;
  mp.ir_version = QUILL_ONNX_EXPORT_IR_VERSION;
  mp.producer_name = (char *)"quill";
  mp.producer_version = (char *)"0.1";
  /* the default domain, then one import per custom op domain */
  size_t nos = 1 + ex->domains.n;
  Onnx__OperatorSetIdProto **osps = ex_alloc(ex, nos * sizeof *osps);
  Onnx__OperatorSetIdProto *vos =
      ex->domains.n ? ex_alloc(ex, ex->domains.n * sizeof *vos) : NULL;
  if (!osps || (ex->domains.n && !vos))
    return QUILL_ERR_NOMEM;
  osps[0] = osp;
  for (size_t i = 0; i < ex->domains.n; i++) {
    Onnx__OperatorSetIdProto init = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    vos[i] = init;
    vos[i].domain = ex->domains.items[i];
    vos[i].has_version = 1;
    vos[i].version = 1;
    osps[1 + i] = &vos[i];
  }
  mp.n_opset_import = nos;
  mp.opset_import = osps;
  mp.n_metadata_props = 1;
  mp.metadata_props = &metap;
  mp.graph = &gp;
  size_t n = onnx__model_proto__get_packed_size(&mp);
  void *buf = quill_alloc(ex->ctx, n ? n : 1);
  if (!buf)
    return QUILL_ERR_NOMEM;
  size_t got = onnx__model_proto__pack(&mp, buf);
  if (got != n) {
    quill_free(ex->ctx, buf, n ? n : 1);
    return quill_error(ex->ctx, quill_graph_loc(ex->graph),
                       "internal error: packed %zu of %zu bytes", got, n);
  }
  *data = buf;
  *len = n;
  return QUILL_OK;
}

quill_status quill_onnx_export_buffer(quill_context *ctx, const quill_graph *g,
                                      const quill_onnx_export_options *opts,
                                      void **data, size_t *len) {
  *data = NULL;
  *len = 0;
  int64_t want = opts ? opts->opset : 0;
  if (want && (want < QUILL_ONNX_EXPORT_MIN_OPSET ||
               want > QUILL_ONNX_EXPORT_MAX_OPSET))
    return quill_error(ctx, quill_graph_loc(g),
                       "ONNX opset %lld cannot be written: the exporter writes "
                       "opsets %d to %d",
                       (long long)want, QUILL_ONNX_EXPORT_MIN_OPSET,
                       QUILL_ONNX_EXPORT_MAX_OPSET);
  if (!quill_graph_return(g))
    return quill_error(ctx, quill_graph_loc(g),
                       "graph '%s' has no return op", quill_graph_name(g));
  onnx_exporter ex = {0};
  ex.ctx = ctx;
  quill_arena_init(&ex.arena, ctx);
  ex.graph = g;
  ex.opts_omit_value_info = opts && opts->omit_value_info;
  quill_status st = build_graph(&ex, want);
  if (!st && ex.nomem)
    st = QUILL_ERR_NOMEM;
  if (!st)
    st = pack_model(&ex, data, len);
  if (st == QUILL_ERR_NOMEM)
    quill_error(ctx, quill_graph_loc(g),
                "out of memory while exporting graph '%s' to ONNX",
                quill_graph_name(g));
  ex_map_free(&ex, &ex.taken);
  ex_map_free(&ex, &ex.node_names);
  ex_map_free(&ex, &ex.value_names);
  ex_map_free(&ex, &ex.qparams);
  ex_map_free(&ex, &ex.returned);
  quill_arena_free(&ex.arena);
  return st;
}

quill_status quill_onnx_export_file(quill_context *ctx, const quill_graph *g,
                                    const char *path,
                                    const quill_onnx_export_options *opts) {
  void *data;
  size_t len;
  quill_status st = quill_onnx_export_buffer(ctx, g, opts, &data, &len);
  if (st)
    return st;
  st = quill_write_file(ctx, path, data, len);
  quill_free(ctx, data, len);
  return st;
}

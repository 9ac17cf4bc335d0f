/*
 * node.c - helpers the per-family import functions use: typed attribute
 * readers, constant-operand readers, op emission with constant folding, and
 * publishing node outputs.
 *
 * Folding at import time. ONNX exporters compute shapes with small integer
 * subgraphs (Shape -> Gather -> Unsqueeze -> Concat -> Reshape). With
 * static input shapes every such value is known, so an emitted op whose
 * operands are all constants and whose results are integers or booleans
 * (or whose table entry asks for it: Shape, Cast, Expand, ...) is evaluated
 * with the reference kernels (targets/reference) and replaced by constants:
 *
 *   %s = constant ... ; %i = constant ...
 *   %g = gather %s, %i        ==>   %g = constant dense<[3]> : tensor<1xi64>
 *
 * Every emitted op is verified right away, so a problem is reported at the
 * node that caused it.
 */
#include <stdio.h>
#include <string.h>

#include "frontends/onnx/onnx_impl.h"
#include "targets/reference/ref.h"

/* ---- errors -------------------------------------------------------------- */

quill_loc onnx_node_loc(onnx_importer *im, const char *node) {
  quill_loc loc = quill_loc_file(im->ctx, im->model_name, 0, 0);
  loc.name = node ? quill_ident_get(im->ctx, node) : NULL;
  return loc;
}

quill_status onnx_error(onnx_importer *im, const onnx_node *n,
                        const char *fmt, ...) {
  quill_strbuf sb;
  quill_strbuf_init(&sb, im->ctx);
  quill_strbuf_printf(&sb, "%s node '%s': ", n->op_type, n->name);
  va_list ap;
  va_start(ap, fmt);
  quill_strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  quill_error(im->ctx, onnx_node_loc(im, n->loc.name), "%s",
              quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return QUILL_ERR_INVALID;
}

quill_status onnx_shape_error(onnx_importer *im, const onnx_node *n,
                              const char *what, quill_strbuf *why) {
  return onnx_error(im, n, "%s: %s", what, quill_strbuf_str(why));
}

/* ---- attributes ---------------------------------------------------------- */

static const char *const attr_type_names[] = {
    "undefined", "float", "int", "string", "tensor", "graph",
    "floats", "ints", "strings", "tensors", "graphs", "sparse tensor",
    "sparse tensors", "type proto", "type protos"};

static int attr_type(const Onnx__AttributeProto *a) {
  if (a->has_type)
    return (int)a->type;
  /* IR version 1 models have no type field: guess from the content. */
  if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
  if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

static const char *attr_type_name(int t) {
  if (t >= 0 && (size_t)t < sizeof attr_type_names / sizeof *attr_type_names)
    return attr_type_names[t];
  return "unknown";
}

const Onnx__AttributeProto *onnx_attr(const onnx_node *n, const char *name) {
  for (size_t i = 0; i < n->proto->n_attribute; i++) {
    const Onnx__AttributeProto *a = n->proto->attribute[i];
    if (a->name && !strcmp(a->name, name))
      return a;
  }
  return NULL;
}

/* Fetch attribute `name` and check its type; *out NULL if absent. */
static quill_status typed_attr(onnx_importer *im, const onnx_node *n,
                               const char *name, int want,
                               const Onnx__AttributeProto **out) {
  const Onnx__AttributeProto *a = onnx_attr(n, name);
  *out = NULL;
  if (!a)
    return QUILL_OK;
  int t = attr_type(a);
  if (t != want)
    return onnx_error(im, n, "attribute '%s' must be of type %s, got %s",
                      name, attr_type_name(want), attr_type_name(t));
  *out = a;
  return QUILL_OK;
}

quill_status onnx_attr_int(onnx_importer *im, const onnx_node *n,
                           const char *name, int64_t dflt, int64_t *out) {
  const Onnx__AttributeProto *a;
  quill_status st =
      typed_attr(im, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, &a);
  *out = a ? a->i : dflt;
  return st;
}

quill_status onnx_attr_float(onnx_importer *im, const onnx_node *n,
                             const char *name, double dflt, double *out) {
  const Onnx__AttributeProto *a;
  quill_status st =
      typed_attr(im, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, &a);
  *out = a ? a->f : dflt;
  return st;
}

quill_status onnx_attr_string(onnx_importer *im, const onnx_node *n,
                              const char *name, const char *dflt,
                              const char **out) {
  const Onnx__AttributeProto *a;
  quill_status st = typed_attr(im, n, name,
                               ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, &a);
  *out = dflt;
  if (st || !a)
    return st;
  if (a->s.len && memchr(a->s.data, '\0', a->s.len))
    return onnx_error(im, n, "attribute '%s' contains a NUL byte", name);
  quill_ident s = quill_ident_getn(im->ctx, (const char *)a->s.data, a->s.len);
  if (!s)
    return QUILL_ERR_NOMEM;
  *out = s;
  return QUILL_OK;
}

quill_status onnx_attr_ints(onnx_importer *im, const onnx_node *n,
                            const char *name, int64_t *out, size_t max,
                            int64_t *len) {
  const Onnx__AttributeProto *a;
  quill_status st =
      typed_attr(im, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, &a);
  *len = -1;
  if (st || !a)
    return st;
  if (a->n_ints > max)
    return onnx_error(im, n, "attribute '%s' has %zu elements (at most %zu)",
                      name, a->n_ints, max);
  if (a->n_ints)
    memcpy(out, a->ints, a->n_ints * sizeof *out);
  *len = (int64_t)a->n_ints;
  return QUILL_OK;
}

quill_status onnx_attr_floats(onnx_importer *im, const onnx_node *n,
                              const char *name, double *out, size_t max,
                              int64_t *len) {
  const Onnx__AttributeProto *a;
  quill_status st = typed_attr(im, n, name,
                               ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS, &a);
  *len = -1;
  if (st || !a)
    return st;
  if (a->n_floats > max)
    return onnx_error(im, n, "attribute '%s' has %zu elements (at most %zu)",
                      name, a->n_floats, max);
  for (size_t i = 0; i < a->n_floats; i++)
    out[i] = a->floats[i];
  *len = (int64_t)a->n_floats;
  return QUILL_OK;
}

/* ---- operands ------------------------------------------------------------- */

quill_status onnx_input(onnx_importer *im, const onnx_node *n, unsigned i,
                        quill_value **out) {
  *out = onnx_opt_input(n, i);
  if (!*out)
    return onnx_error(im, n, "missing required input #%u", i);
  return QUILL_OK;
}

static quill_status const_input(onnx_importer *im, const onnx_node *n,
                                unsigned i, size_t max, int64_t *len,
                                const quill_attr **out) {
  quill_value *v;
  if (onnx_input(im, n, i, &v))
    return QUILL_ERR_INVALID;
  *out = quill_value_constant(v);
  if (!*out)
    return onnx_error(im, n,
                      "input #%u ('%s') must be a constant (an initializer or "
                      "a statically known value)",
                      i, n->proto->input[i]);
  int64_t cnt = quill_type_num_elements(quill_attr_dense_type(*out));
  if (cnt < 0 || (size_t)cnt > max)
    return onnx_error(im, n, "input #%u has %lld elements (at most %zu)", i,
                      (long long)cnt, max);
  *len = cnt;
  return QUILL_OK;
}

quill_status onnx_const_ints(onnx_importer *im, const onnx_node *n, unsigned i,
                             int64_t *out, size_t max, int64_t *len) {
  const quill_attr *a;
  if (const_input(im, n, i, max, len, &a))
    return QUILL_ERR_INVALID;
  for (int64_t k = 0; k < *len; k++)
    out[k] = quill_attr_dense_get_i64(a, (size_t)k);
  return QUILL_OK;
}

quill_status onnx_const_floats(onnx_importer *im, const onnx_node *n,
                               unsigned i, double *out, size_t max,
                               int64_t *len) {
  const quill_attr *a;
  if (const_input(im, n, i, max, len, &a))
    return QUILL_ERR_INVALID;
  for (int64_t k = 0; k < *len; k++)
    out[k] = quill_attr_dense_get_f64(a, (size_t)k);
  return QUILL_OK;
}

void onnx_shape(const quill_value *v, quill_shape *s) {
  quill_shape_of(quill_value_type(v), s);
}

quill_type *onnx_elem(const quill_value *v) {
  return quill_type_elem(quill_value_type(v));
}

quill_type *onnx_type(onnx_importer *im, const quill_shape *s,
                      quill_type *elem) {
  return quill_shape_type(im->ctx, s, elem);
}

/* ---- emission -------------------------------------------------------------- */

static bool should_fold(const onnx_node *n, const quill_op *op) {
  unsigned nops = quill_op_num_operands(op);
  if (nops == 0)
    return false;
  for (unsigned i = 0; i < nops; i++)
    if (!quill_value_constant(quill_op_operand(op, i)))
      return false;
  bool empty_result = false, empty_operand = false;
  for (unsigned i = 0; i < quill_op_num_results(op); i++) {
    int64_t cnt = quill_type_num_elements(quill_value_type(quill_op_result(op, i)));
    if (cnt < 0 || cnt > ONNX_FOLD_MAX_ELEMENTS)
      return false;
    empty_result |= cnt == 0;
  }
  for (unsigned i = 0; i < nops; i++)
    empty_operand |= quill_type_num_elements(
                         quill_value_type(quill_op_operand(op, i))) == 0;
  /* Empty results fold without running a kernel (fold()); kernels are not
   * run on empty operands for non-empty results. */
  if (empty_operand && !empty_result)
    return false;
  if (n->flags & ONNX_OPF_FOLD)
    return true;
  for (unsigned i = 0; i < quill_op_num_results(op); i++) {
    quill_type *e = quill_type_elem(quill_value_type(quill_op_result(op, i)));
    if (quill_type_is_float(e) || quill_type_is_quant(e))
      return false;
  }
  return true;
}

/* Replace op (all operands constant) by one constant per result. */
static quill_status fold(onnx_importer *im, quill_op *op, quill_value **res) {
  quill_context *ctx = im->ctx;
  unsigned nops = quill_op_num_operands(op), nres = quill_op_num_results(op);
  quill_tensor *ins = quill_calloc(ctx, nops, sizeof *ins);
  quill_tensor *outs = quill_calloc(ctx, nres, sizeof *outs);
  quill_status st = ins && outs ? QUILL_OK : QUILL_ERR_NOMEM;
  for (unsigned i = 0; !st && i < nops; i++)
    ins[i] = quill_tensor_from_attr(quill_value_constant(quill_op_operand(op, i)));
  if (!st)
    st = quill_ref_outputs_alloc(ctx, op, outs);
  if (!st) {
    /* Nothing to compute when every result is empty. */
    bool empty = true;
    for (unsigned i = 0; i < nres; i++)
      empty &= quill_tensor_num_elements(&outs[i]) == 0;
    if (!empty)
      st = quill_ref_eval_op(ctx, op, ins, outs);
    for (unsigned i = 0; !st && i < nres; i++) {
      const quill_attr *a = quill_tensor_to_attr(ctx, &outs[i]);
      quill_named_attr na = {quill_ident_get(ctx, "value"), a};
      quill_type *t = quill_value_type(quill_op_result(op, i));
      quill_op *c = a && na.name ? quill_op_create(quill_op_graph(op),
                                                   QUILL_OP_CONSTANT, 0, NULL,
                                                   1, &t, 1, &na,
                                                   quill_op_loc(op))
                                 : NULL;
      if (!c) {
        st = QUILL_ERR_NOMEM;
        break;
      }
      quill_op_insert_before(op, c);
      res[i] = quill_op_result(c, 0);
      quill_value_replace_all_uses(quill_op_result(op, i), res[i]);
    }
    quill_ref_outputs_free(ctx, op, outs);
  }
  if (!st)
    quill_op_erase(op);
  quill_free(ctx, ins, nops * sizeof *ins);
  quill_free(ctx, outs, nres * sizeof *outs);
  return st;
}

quill_status onnx_emit(onnx_importer *im, const onnx_node *n,
                       const onnx_emit_args *a, quill_value **results) {
  for (unsigned i = 0; i < a->num_results; i++)
    if (!a->result_types[i])
      return QUILL_ERR_NOMEM;
  if (onnx_nattrs_failed(a->attrs, a->num_attrs))
    return QUILL_ERR_NOMEM;
  quill_op *op = quill_op_create(im->graph, a->opc, a->num_operands,
                                 a->operands, a->num_results, a->result_types,
                                 a->num_attrs, a->attrs, n->loc);
  if (!op)
    return QUILL_ERR_NOMEM;
  quill_op_insert_at_end(im->graph, op);
  if (quill_verify_op(op))
    return onnx_error(im, n, "could not be imported as '%s' (see above)",
                      quill_opcode_name(a->opc));
  for (unsigned i = 0; i < a->num_results; i++)
    results[i] = quill_op_result(op, i);
  if (should_fold(n, op) && quill_ref_op_supported(op, NULL))
    return fold(im, op, results);
  return QUILL_OK;
}

quill_status onnx_emit1(onnx_importer *im, const onnx_node *n,
                        quill_opcode opc, unsigned nops,
                        quill_value *const *ops, quill_type *rtype,
                        unsigned nattrs, const quill_named_attr *attrs,
                        quill_value **out) {
  onnx_emit_args a = {opc, nops, ops, 1, &rtype, nattrs, attrs};
  return onnx_emit(im, n, &a, out);
}

quill_status onnx_emit_constant(onnx_importer *im, const onnx_node *n,
                                const quill_attr *attr, quill_value **out) {
  if (!attr)
    return QUILL_ERR_NOMEM;
  quill_named_attr na = onnx_nattr(im, "value", attr);
  return onnx_emit1(im, n, QUILL_OP_CONSTANT, 0, NULL,
                    quill_attr_dense_type(attr), 1, &na, out);
}

/* ---- outputs ------------------------------------------------------------- */

/* Compare v's type with a declared ValueInfo type (dynamic dims, -1
 * included, match anything: onnx_declared_shape_fits). */
static quill_status check_declared(onnx_importer *im, const onnx_node *n,
                                   const char *name, quill_value *v) {
  const Onnx__ValueInfoProto *vi = onnx_map_get(&im->infos, name);
  if (!vi || !vi->type ||
      vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return QUILL_OK;
  const Onnx__TypeProto__Tensor *tt = vi->type->tensor_type;
  quill_type *t = quill_value_type(v);
  quill_type *e = quill_type_elem(t);
  if (quill_type_is_quant(e))
    e = quill_type_quant_storage(e);
  bool ok = (!tt->has_elem_type || !tt->elem_type ||
             onnx_elem_type(im->ctx, tt->elem_type) == e) &&
            onnx_declared_shape_fits(tt, t);
  if (ok)
    return QUILL_OK;
  quill_strbuf sb;
  quill_strbuf_init(&sb, im->ctx);
  quill_type_print(t, &sb);
  quill_strbuf_puts(&sb, " but the model declares ");
  onnx_print_declared(&sb, tt);
  quill_status st = onnx_error(im, n, "output '%s' has inferred type %s", name,
                               quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return st;
}

quill_status onnx_set_output(onnx_importer *im, const onnx_node *n,
                             unsigned i, quill_value *v) {
  if (i >= n->proto->n_output || !n->proto->output[i][0])
    return QUILL_OK;
  const char *name = n->proto->output[i];
  if (onnx_map_get(&im->values, name))
    return onnx_error(im, n, "output '%s' is defined twice", name);
  quill_status st = check_declared(im, n, name, v);
  if (st)
    return st;
  if (quill_value_set_name(v, name) || onnx_map_put(&im->values, name, v))
    return QUILL_ERR_NOMEM;
  return QUILL_OK;
}

bool onnx_output_used(onnx_importer *im, const onnx_node *n, unsigned i) {
  return i < n->proto->n_output && n->proto->output[i][0] &&
         onnx_map_get(&im->used, n->proto->output[i]);
}

quill_status onnx_check_unused_outputs(onnx_importer *im, const onnx_node *n,
                                       unsigned first) {
  for (size_t i = first; i < n->proto->n_output; i++) {
    const char *o = n->proto->output[i];
    if (o[0] && onnx_map_get(&im->used, o))
      return onnx_error(im, n, "output #%zu ('%s') is not supported", i, o);
  }
  return QUILL_OK;
}

/* ---- named attributes ------------------------------------------------------- */

quill_named_attr onnx_nattr(onnx_importer *im, const char *name,
                            const quill_attr *a) {
  quill_named_attr na = {quill_ident_get(im->ctx, name), a};
  if (!na.name)
    na.attr = NULL;
  return na;
}

quill_named_attr onnx_nattr_int(onnx_importer *im, const char *name,
                                int64_t v) {
  return onnx_nattr(im, name, quill_attr_int(im->ctx, v));
}

quill_named_attr onnx_nattr_float(onnx_importer *im, const char *name,
                                  double v) {
  return onnx_nattr(im, name, quill_attr_float(im->ctx, v));
}

quill_named_attr onnx_nattr_ints(onnx_importer *im, const char *name,
                                 size_t n, const int64_t *v) {
  return onnx_nattr(im, name, quill_attr_int_list(im->ctx, n, v));
}

quill_named_attr onnx_nattr_str(onnx_importer *im, const char *name,
                                const char *s) {
  return onnx_nattr(im, name, quill_attr_string(im->ctx, s, strlen(s)));
}

bool onnx_nattrs_failed(const quill_named_attr *a, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (!a[i].attr)
      return true;
  return false;
}

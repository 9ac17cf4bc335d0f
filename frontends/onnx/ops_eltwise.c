/*
 * ops_eltwise.c - import of ONNX elementwise ops: unary math and
 * activations, binary arithmetic and comparisons with numpy broadcasting,
 * variadic Sum/Max/Min/Mean, Clip, Where, Identity and Dropout.
 *
 * The ONNX op type picks the Quill opcode through small name tables (one
 * per family); variadic ops become chains of binary ops:
 *
 *   Sum(a, b, c)   ->  add(add(a, b), c)
 *   Mean(a, b, c)  ->  div(add(add(a, b), c), constant 3)
 */
#include <math.h>
#include <string.h>

#include "frontends/onnx/onnx_impl.h"
#include "targets/reference/ref.h"

typedef struct name_opc {
  const char *name;
  quill_opcode opc;
} name_opc;

static const name_opc unary_ops[] = {
    {"Abs", QUILL_OP_ABS},         {"Ceil", QUILL_OP_CEIL},
    {"Erf", QUILL_OP_ERF},         {"Exp", QUILL_OP_EXP},
    {"Floor", QUILL_OP_FLOOR},     {"HardSwish", QUILL_OP_HARD_SWISH},
    {"Log", QUILL_OP_LOG},         {"Neg", QUILL_OP_NEG},
    {"Reciprocal", QUILL_OP_RECIPROCAL}, {"Relu", QUILL_OP_RELU},
    {"Sigmoid", QUILL_OP_SIGMOID}, {"Sqrt", QUILL_OP_SQRT},
    {"Tanh", QUILL_OP_TANH},
};

static const name_opc binary_ops[] = {
    {"Add", QUILL_OP_ADD},     {"Div", QUILL_OP_DIV},
    {"Equal", QUILL_OP_EQUAL}, {"Greater", QUILL_OP_GREATER},
    {"Less", QUILL_OP_LESS},   {"Max", QUILL_OP_MAX},
    {"Mean", QUILL_OP_ADD},    {"Min", QUILL_OP_MIN},
    {"Mul", QUILL_OP_MUL},     {"PRelu", QUILL_OP_PRELU},
    {"Pow", QUILL_OP_POW},     {"Sub", QUILL_OP_SUB},
    {"Sum", QUILL_OP_ADD},
};

static quill_opcode find_opc(const name_opc *t, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(t[i].name, name))
      return t[i].opc;
  return QUILL_OP_COUNT;
}

/* x -> op(x), same type. */
static quill_status emit_unary(onnx_importer *im, const onnx_node *n,
                               quill_opcode opc, unsigned nattrs,
                               const quill_named_attr *attrs) {
  quill_value *x, *r;
  if (onnx_input(im, n, 0, &x) ||
      onnx_emit1(im, n, opc, 1, &x, quill_value_type(x), nattrs, attrs, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

quill_status onnx_import_unary(onnx_importer *im, const onnx_node *n) {
  quill_opcode opc = find_opc(unary_ops, sizeof unary_ops / sizeof *unary_ops,
                              n->op_type);
  return emit_unary(im, n, opc, 0, NULL);
}

/* LeakyRelu {alpha}, HardSigmoid {alpha, beta}, Gelu {approximate}. */
quill_status onnx_import_activation(onnx_importer *im, const onnx_node *n) {
  quill_named_attr attrs[2];
  double alpha, beta;
  if (!strcmp(n->op_type, "LeakyRelu")) {
    if (onnx_attr_float(im, n, "alpha", 0.01, &alpha))
      return QUILL_ERR_INVALID;
    attrs[0] = onnx_nattr_float(im, "alpha", alpha);
    return emit_unary(im, n, QUILL_OP_LEAKY_RELU, 1, attrs);
  }
  if (!strcmp(n->op_type, "HardSigmoid")) {
    if (onnx_attr_float(im, n, "alpha", 0.2, &alpha) ||
        onnx_attr_float(im, n, "beta", 0.5, &beta))
      return QUILL_ERR_INVALID;
    attrs[0] = onnx_nattr_float(im, "alpha", alpha);
    attrs[1] = onnx_nattr_float(im, "beta", beta);
    return emit_unary(im, n, QUILL_OP_HARD_SIGMOID, 2, attrs);
  }
  const char *approx;
  if (onnx_attr_string(im, n, "approximate", "none", &approx))
    return QUILL_ERR_INVALID;
  if (strcmp(approx, "none") && strcmp(approx, "tanh"))
    return onnx_error(im, n, "attribute 'approximate' must be \"none\" or "
                             "\"tanh\", got \"%s\"",
                      approx);
  attrs[0] = onnx_nattr_str(im, "approximate", approx);
  return emit_unary(im, n, QUILL_OP_GELU, 1, attrs);
}

/* a op b with numpy broadcasting; comparisons give bool. */
static quill_status emit_binary(onnx_importer *im, const onnx_node *n,
                                quill_opcode opc, quill_value *a,
                                quill_value *b, quill_value **out) {
  quill_shape sa, sb, so;
  onnx_shape(a, &sa);
  onnx_shape(b, &sb);
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  bool ok = quill_shape_broadcast(&sa, &sb, &so, &why);
  if (!ok) {
    quill_strbuf ta, tb;
    quill_strbuf_init(&ta, im->ctx);
    quill_strbuf_init(&tb, im->ctx);
    quill_type_print(quill_value_type(a), &ta);
    quill_type_print(quill_value_type(b), &tb);
    onnx_error(im, n, "operands of types %s and %s do not broadcast: %s",
               quill_strbuf_str(&ta), quill_strbuf_str(&tb),
               quill_strbuf_str(&why));
    quill_strbuf_free(&ta);
    quill_strbuf_free(&tb);
    quill_strbuf_free(&why);
    return QUILL_ERR_INVALID;
  }
  quill_strbuf_free(&why);
  quill_type *elem = onnx_elem(a);
  if (opc == QUILL_OP_EQUAL || opc == QUILL_OP_LESS || opc == QUILL_OP_GREATER)
    elem = quill_type_scalar(im->ctx, QUILL_TYPE_BOOL);
  quill_value *ops[2] = {a, b};
  return onnx_emit1(im, n, opc, 2, ops, onnx_type(im, &so, elem), 0, NULL,
                    out);
}

/* Before opset 7, B broadcast to A only with broadcast=1, aligned at
 * `axis` (suffix matching, i.e. numpy's rule, without it); PRelu's slope
 * of size C applied per channel (axis 1). B is reshaped so that numpy
 * broadcasting does the same. */
static quill_status legacy_broadcast(onnx_importer *im, const onnx_node *n,
                                     quill_opcode opc, quill_value *a,
                                     quill_value **b) {
  quill_shape sa, sb, t;
  onnx_shape(a, &sa);
  onnx_shape(*b, &sb);
  int64_t axis = -1, bc;
  if (opc == QUILL_OP_PRELU) {
    if (sb.rank == 1 && sa.rank > 2 && sb.dims[0] == sa.dims[1] &&
        sb.dims[0] != 1)
      axis = 1;
  } else {
    if (onnx_attr_int(im, n, "broadcast", 0, &bc))
      return QUILL_ERR_INVALID;
    if (bc && onnx_attr(n, "axis") && onnx_attr_int(im, n, "axis", 0, &axis))
      return QUILL_ERR_INVALID;
    if (bc && axis < 0 && onnx_attr(n, "axis"))
      axis += sa.rank;
  }
  if (axis < 0 || sb.rank == sa.rank)
    return QUILL_OK;
  if (axis + sb.rank > sa.rank)
    return onnx_error(im, n, "B (rank %u) does not fit A (rank %u) at axis "
                             "%lld",
                      sb.rank, sa.rank, (long long)axis);
  t.rank = sa.rank - (unsigned)axis;
  for (unsigned i = 0; i < t.rank; i++)
    t.dims[i] = i < sb.rank ? sb.dims[i] : 1;
  return onnx_reshape_value(im, n, *b, &t, b);
}

quill_status onnx_import_binary(onnx_importer *im, const onnx_node *n) {
  quill_opcode opc = find_opc(binary_ops,
                              sizeof binary_ops / sizeof *binary_ops,
                              n->op_type);
  quill_value *a, *b, *r;
  if (onnx_input(im, n, 0, &a) || onnx_input(im, n, 1, &b))
    return QUILL_ERR_INVALID;
  if (n->version < 7 && legacy_broadcast(im, n, opc, a, &b))
    return QUILL_ERR_INVALID;
  if (emit_binary(im, n, opc, a, b, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/* Sum / Max / Min / Mean with one or more inputs. */
quill_status onnx_import_variadic(onnx_importer *im, const onnx_node *n) {
  quill_opcode opc = find_opc(binary_ops,
                              sizeof binary_ops / sizeof *binary_ops,
                              n->op_type);
  quill_value *acc;
  if (onnx_input(im, n, 0, &acc))
    return QUILL_ERR_INVALID;
  if (n->num_inputs == 1)
    return onnx_import_identity(im, n);
  for (unsigned i = 1; i < n->num_inputs; i++) {
    quill_value *b;
    if (onnx_input(im, n, i, &b) || emit_binary(im, n, opc, acc, b, &acc))
      return QUILL_ERR_INVALID;
  }
  if (!strcmp(n->op_type, "Mean")) {
    quill_type *elem = onnx_elem(acc);
    if (!quill_type_is_float(elem))
      return onnx_error(im, n, "only float inputs are supported");
    quill_type *st = quill_type_tensor(im->ctx, elem, 0, NULL);
    quill_tensor t;
    if (!st || quill_tensor_alloc(im->ctx, st, &t))
      return QUILL_ERR_NOMEM;
    quill_tensor_set_f64(&t, 0, (double)n->num_inputs);
    const quill_attr *a = quill_tensor_to_attr(im->ctx, &t);
    quill_tensor_free(im->ctx, &t);
    quill_value *cnt;
    if (onnx_emit_constant(im, n, a, &cnt) ||
        emit_binary(im, n, QUILL_OP_DIV, acc, cnt, &acc))
      return QUILL_ERR_INVALID;
  }
  return onnx_set_output(im, n, 0, acc);
}

/* A scalar constant of x's element type holding the lowest value. */
static quill_status lowest_constant(onnx_importer *im, const onnx_node *n,
                                    quill_type *elem, quill_value **out) {
  quill_type *st = quill_type_tensor(im->ctx, elem, 0, NULL);
  quill_tensor t;
  if (!st || quill_tensor_alloc(im->ctx, st, &t))
    return QUILL_ERR_NOMEM;
  if (quill_type_is_float(elem))
    quill_tensor_set_f64(&t, 0, -INFINITY);
  else
    quill_tensor_set_i64(&t, 0, quill_type_int_min(elem));
  const quill_attr *a = quill_tensor_to_attr(im->ctx, &t);
  quill_tensor_free(im->ctx, &t);
  return onnx_emit_constant(im, n, a, out);
}

/* Clip: opset < 11 {min, max} attributes; later min/max operands. */
quill_status onnx_import_clip(onnx_importer *im, const onnx_node *n) {
  quill_value *x, *r;
  if (onnx_input(im, n, 0, &x))
    return QUILL_ERR_INVALID;
  if (quill_type_is_quant(onnx_elem(x)) && n->opset >= 11)
    return onnx_import_quant_clip(im, n, x);
  if (n->opset < 11) {
    double lo, hi;
    if (onnx_attr_float(im, n, "min", -INFINITY, &lo) ||
        onnx_attr_float(im, n, "max", INFINITY, &hi))
      return QUILL_ERR_INVALID;
    quill_named_attr attrs[2];
    unsigned na = 0;
    if (onnx_attr(n, "min"))
      attrs[na++] = onnx_nattr_float(im, "min", lo);
    if (onnx_attr(n, "max"))
      attrs[na++] = onnx_nattr_float(im, "max", hi);
    return emit_unary(im, n, QUILL_OP_CLIP, na, attrs);
  }
  quill_value *ops[3] = {x, onnx_opt_input(n, 1), onnx_opt_input(n, 2)};
  unsigned nops = ops[2] ? 3 : ops[1] ? 2 : 1;
  if (nops == 3 && !ops[1] &&
      lowest_constant(im, n, onnx_elem(x), &ops[1]))
    return QUILL_ERR_INVALID;
  if (onnx_emit1(im, n, QUILL_OP_CLIP, nops, ops, quill_value_type(x), 0,
                 NULL, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/* Where(cond, x, y): three-way broadcasting. */
quill_status onnx_import_where(onnx_importer *im, const onnx_node *n) {
  quill_value *ops[3], *r;
  for (unsigned i = 0; i < 3; i++)
    if (onnx_input(im, n, i, &ops[i]))
      return QUILL_ERR_INVALID;
  quill_shape s0, s1, s2, t, out;
  onnx_shape(ops[0], &s0);
  onnx_shape(ops[1], &s1);
  onnx_shape(ops[2], &s2);
  quill_strbuf why;
  quill_strbuf_init(&why, im->ctx);
  quill_status st = QUILL_OK;
  if (!quill_shape_broadcast(&s0, &s1, &t, &why) ||
      !quill_shape_broadcast(&t, &s2, &out, &why))
    st = onnx_shape_error(im, n, "operands do not broadcast", &why);
  quill_strbuf_free(&why);
  if (st || onnx_emit1(im, n, QUILL_OP_WHERE, 3, ops,
                       onnx_type(im, &out, onnx_elem(ops[1])), 0, NULL, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/* A constant of type t with every element 1 (true for bool). */
static quill_status ones_constant(onnx_importer *im, const onnx_node *n,
                                  quill_type *t, quill_value **out) {
  quill_tensor tt;
  if (!t)
    return QUILL_ERR_NOMEM;
  if (quill_type_num_elements(t) > ONNX_FOLD_MAX_ELEMENTS)
    return onnx_error(im, n, "the constant mask output is too large");
  if (quill_tensor_alloc(im->ctx, t, &tt))
    return QUILL_ERR_NOMEM;
  size_t cnt = quill_tensor_num_elements(&tt);
  for (size_t i = 0; i < cnt; i++)
    quill_tensor_set_f64(&tt, i, 1.0);
  const quill_attr *a = quill_tensor_to_attr(im->ctx, &tt);
  quill_tensor_free(im->ctx, &tt);
  return onnx_emit_constant(im, n, a, out);
}

/* Dropout for inference: the identity, and a mask of ones (bool from
 * version 10, x's type before). Training mode is only accepted with a zero
 * ratio (which is the identity too). */
static quill_status import_dropout(onnx_importer *im, const onnx_node *n) {
  int64_t training = 0, len;
  double ratio = 0.5;
  if (n->version >= 12) {
    if (onnx_opt_input(n, 2) &&
        onnx_const_ints(im, n, 2, &training, 1, &len))
      return QUILL_ERR_INVALID;
    if (training && onnx_opt_input(n, 1) &&
        onnx_const_floats(im, n, 1, &ratio, 1, &len))
      return QUILL_ERR_INVALID;
  } else if (onnx_attr_float(im, n, "ratio", 0.5, &ratio)) {
    return QUILL_ERR_INVALID;
  }
  if (training && ratio != 0)
    return onnx_error(im, n, "training mode is not supported");
  quill_value *x, *r, *mask;
  if (onnx_input(im, n, 0, &x) ||
      onnx_emit1(im, n, QUILL_OP_IDENTITY, 1, &x, quill_value_type(x), 0, NULL,
                 &r) ||
      onnx_set_output(im, n, 0, r))
    return QUILL_ERR_INVALID;
  if (n->num_outputs < 2 || !n->proto->output[1][0])
    return QUILL_OK;
  quill_type *me = n->version >= 10 ? quill_type_scalar(im->ctx, QUILL_TYPE_BOOL)
                                    : onnx_elem(x);
  if (ones_constant(im, n, quill_type_with_elem(im->ctx, quill_value_type(x), me),
                    &mask))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 1, mask);
}

/* Identity, Dropout (inference) and one-input Sum/Max/Min/Mean. */
quill_status onnx_import_identity(onnx_importer *im, const onnx_node *n) {
  if (!strcmp(n->op_type, "Dropout"))
    return import_dropout(im, n);
  return emit_unary(im, n, QUILL_OP_IDENTITY, 0, NULL);
}

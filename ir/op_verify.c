/*
 * op_verify.c - op-specific verifiers for structural, elementwise and
 * quantization ops, plus the helpers every op verifier shares.
 *
 * ir/verifier.c runs the generic checks (arity from ops.def, tensor types,
 * dominance) and then the verifier named in each ops.def row through the
 * opcode-indexed quill_op_infos table. The verifiers here check element
 * types, attribute kinds and values (ONNX defaults when absent) and compare
 * the declared result type with the one inferred by ir/shape.c:
 *
 *   add %a, %b : tensor<2x3xf32>
 *     operands compatible?  broadcast(a, b) == result shape?  elem == a?
 *
 * Per-op differences live in small tables indexed by opcode (allowed
 * element classes of unary ops, their attributes) instead of switches.
 * The other verifiers are in op_verify_nn.c (conv, matmul, pooling,
 * normalization, reductions) and op_verify_data.c (data movement).
 */
#include "ir/op_verify.h"

#include <math.h>
#include <string.h>

/* ---- diagnostics ------------------------------------------------------- */

quill_status quill_vop_fail(quill_context *ctx, const quill_op *op,
                            const char *fmt, ...) {
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_strbuf_printf(&sb, "'%s' op ", quill_op_name(op));
  va_list ap;
  va_start(ap, fmt);
  quill_strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  quill_error(ctx, quill_op_loc(op), "%s", quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return QUILL_ERR_INVALID;
}

quill_status quill_vop_fail_types(quill_context *ctx, const quill_op *op,
                                  const char *fmt, const quill_type *a,
                                  const quill_type *b) {
  quill_strbuf sa, sb;
  quill_strbuf_init(&sa, ctx);
  quill_strbuf_init(&sb, ctx);
  if (a)
    quill_type_print(a, &sa);
  if (b)
    quill_type_print(b, &sb);
  quill_status st =
      quill_vop_fail(ctx, op, fmt, quill_strbuf_str(&sa), quill_strbuf_str(&sb));
  quill_strbuf_free(&sa);
  quill_strbuf_free(&sb);
  return st;
}

quill_status quill_vop_shape_fail(quill_context *ctx, const quill_op *op,
                                  const char *what, quill_strbuf *why) {
  quill_status st = quill_vop_fail(ctx, op, "%s: %s", what,
                                   quill_strbuf_str(why));
  quill_strbuf_clear(why);
  return st;
}

/* ---- types ------------------------------------------------------------- */

quill_type *quill_vop_operand_type(const quill_op *op, unsigned i) {
  return quill_value_type(quill_op_operand(op, i));
}

quill_type *quill_vop_result_type(const quill_op *op, unsigned i) {
  return quill_value_type(quill_op_result(op, i));
}

quill_type *quill_vop_operand_elem(const quill_op *op, unsigned i) {
  return quill_type_elem(quill_vop_operand_type(op, i));
}

void quill_vop_operand_shape(const quill_op *op, unsigned i, quill_shape *s) {
  quill_shape_of(quill_vop_operand_type(op, i), s);
}

unsigned quill_vop_elem_class(const quill_type *elem) {
  if (quill_type_is_quant(elem))
    return QUILL_EC_QUANT;
  if (quill_type_is_float(elem))
    return QUILL_EC_FLOAT;
  if (quill_type_kind_of(elem) == QUILL_TYPE_BOOL)
    return QUILL_EC_BOOL;
  return quill_type_is_signed(elem) ? QUILL_EC_SINT : QUILL_EC_UINT;
}

quill_status quill_vop_expect_operand_elem(quill_context *ctx,
                                           const quill_op *op, unsigned i,
                                           unsigned classes,
                                           const char *what) {
  if (quill_vop_elem_class(quill_vop_operand_elem(op, i)) & classes)
    return QUILL_OK;
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_type_print(quill_vop_operand_type(op, i), &sb);
  quill_vop_fail(ctx, op, "operand #%u must have %s element type, got %s", i,
                 what, quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return QUILL_ERR_INVALID;
}

bool quill_vop_elem_compatible(const quill_type *a, const quill_type *b) {
  if (a == b)
    return true;
  return quill_type_is_quant(a) && quill_type_is_quant(b) &&
         quill_type_quant_expressed(a) == quill_type_quant_expressed(b);
}

quill_status quill_vop_expect_operand_like(quill_context *ctx,
                                           const quill_op *op, unsigned i,
                                           const quill_type *elem) {
  quill_type *t = quill_vop_operand_type(op, i);
  if (quill_vop_elem_compatible(elem, quill_type_elem(t)))
    return QUILL_OK;
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_type_print(elem, &sb);
  quill_strbuf_puts(&sb, " but operand #");
  quill_strbuf_printf(&sb, "%u is ", i);
  quill_type_print(t, &sb);
  quill_vop_fail(ctx, op, "expects element type %s", quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return QUILL_ERR_INVALID;
}

quill_status quill_vop_expect_result(quill_context *ctx, const quill_op *op,
                                     unsigned i, const quill_shape *shape,
                                     quill_type *elem) {
  quill_type *rt = quill_vop_result_type(op, i);
  quill_shape rs;
  quill_shape_of(rt, &rs);
  if (!elem)
    elem = quill_type_elem(rt);
  if (quill_shape_matches(&rs, shape) &&
      quill_vop_elem_compatible(elem, quill_type_elem(rt)))
    return QUILL_OK;
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_type *want = quill_shape_type(ctx, shape, elem);
  if (want) {
    quill_type_print(want, &sb);
  } else {
    quill_strbuf_puts(&sb, "tensor<");
    quill_shape_print(shape, &sb);
    quill_strbuf_puts(&sb, "x...>");
  }
  quill_strbuf_puts(&sb, ", got ");
  quill_type_print(rt, &sb);
  if (quill_op_num_results(op) > 1)
    quill_vop_fail(ctx, op, "expects result #%u type %s", i,
                   quill_strbuf_str(&sb));
  else
    quill_vop_fail(ctx, op, "expects result type %s", quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return QUILL_ERR_INVALID;
}

quill_status quill_vop_check_quant_axis(quill_context *ctx,
                                        const quill_op *op, const char *what,
                                        const quill_type *tensor) {
  quill_type *e = quill_type_elem(tensor);
  if (!quill_type_is_quant(e) || quill_type_quant_axis_of(e) < 0)
    return QUILL_OK;
  int32_t axis = quill_type_quant_axis_of(e);
  unsigned rank = quill_type_rank(tensor);
  if ((unsigned)axis >= rank)
    return quill_vop_fail(ctx, op, "%s has quantization axis %d but rank %u",
                          what, (int)axis, rank);
  int64_t dim = quill_type_dim(tensor, (unsigned)axis);
  size_t n = quill_type_quant_num_params(e);
  if (dim >= 0 && (int64_t)n != dim)
    return quill_vop_fail(ctx, op,
                          "%s has %zu quantization parameters but dim %d "
                          "has size %lld",
                          what, n, (int)axis, (long long)dim);
  return QUILL_OK;
}

/* ---- attributes -------------------------------------------------------- */

quill_status quill_vop_attr_required(quill_context *ctx, const quill_op *op,
                                     const char *name) {
  if (quill_op_attr(op, name))
    return QUILL_OK;
  return quill_vop_fail(ctx, op, "requires attribute '%s'", name);
}

quill_status quill_vop_attr_int(quill_context *ctx, const quill_op *op,
                                const char *name, int64_t dflt, int64_t *out) {
  const quill_attr *a = quill_op_attr(op, name);
  *out = dflt;
  if (!a)
    return QUILL_OK;
  if (quill_attr_kind_of(a) != QUILL_ATTR_INT)
    return quill_vop_fail(ctx, op, "attribute '%s' must be an integer", name);
  *out = quill_attr_int_value(a);
  return QUILL_OK;
}

quill_status quill_vop_attr_flag(quill_context *ctx, const quill_op *op,
                                 const char *name, bool dflt, bool *out) {
  const quill_attr *a = quill_op_attr(op, name);
  *out = dflt;
  if (!a)
    return QUILL_OK;
  if (quill_attr_kind_of(a) == QUILL_ATTR_BOOL) {
    *out = quill_attr_bool_value(a);
    return QUILL_OK;
  }
  if (quill_attr_kind_of(a) != QUILL_ATTR_INT ||
      (quill_attr_int_value(a) != 0 && quill_attr_int_value(a) != 1))
    return quill_vop_fail(ctx, op, "attribute '%s' must be 0 or 1", name);
  *out = quill_attr_int_value(a) != 0;
  return QUILL_OK;
}

quill_status quill_vop_attr_float(quill_context *ctx, const quill_op *op,
                                  const char *name, double dflt, double *out) {
  const quill_attr *a = quill_op_attr(op, name);
  *out = dflt;
  if (!a)
    return QUILL_OK;
  if (quill_attr_kind_of(a) == QUILL_ATTR_FLOAT)
    *out = quill_attr_float_value(a);
  else if (quill_attr_kind_of(a) == QUILL_ATTR_INT)
    *out = (double)quill_attr_int_value(a);
  else
    return quill_vop_fail(ctx, op, "attribute '%s' must be a float", name);
  return QUILL_OK;
}

quill_status quill_vop_attr_ints(quill_context *ctx, const quill_op *op,
                                 const char *name, int64_t *out, size_t max,
                                 int64_t *len) {
  const quill_attr *a = quill_op_attr(op, name);
  *len = -1;
  if (!a)
    return QUILL_OK;
  int64_t n = quill_attr_get_ints(a, out, max);
  if (n < 0)
    return quill_vop_fail(ctx, op, "attribute '%s' must be a list of integers",
                          name);
  if ((size_t)n > max)
    return quill_vop_fail(ctx, op, "attribute '%s' has too many elements (%lld)",
                          name, (long long)n);
  *len = n;
  return QUILL_OK;
}

quill_status quill_vop_attr_choice(quill_context *ctx, const quill_op *op,
                                   const char *name, const char *dflt,
                                   const char *const *choices,
                                   const char **out) {
  const quill_attr *a = quill_op_attr(op, name);
  *out = dflt;
  if (!a)
    return QUILL_OK;
  if (quill_attr_kind_of(a) != QUILL_ATTR_STRING)
    return quill_vop_fail(ctx, op, "attribute '%s' must be a string", name);
  size_t len;
  const char *s = quill_attr_string_value(a, &len);
  for (unsigned i = 0; choices[i]; i++) {
    if (strlen(choices[i]) == len && memcmp(choices[i], s, len) == 0) {
      *out = choices[i];
      return QUILL_OK;
    }
  }
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  for (unsigned i = 0; choices[i]; i++)
    quill_strbuf_printf(&sb, "%s\"%s\"", i ? ", " : "", choices[i]);
  quill_vop_fail(ctx, op, "attribute '%s' must be one of %s, got \"%.*s\"",
                 name, quill_strbuf_str(&sb), (int)len, s);
  quill_strbuf_free(&sb);
  return QUILL_ERR_INVALID;
}

/* ---- structure --------------------------------------------------------- */

/* constant {value = dense<...> : T} : T */
quill_status quill_verify_constant(quill_context *ctx, const quill_op *op) {
  const quill_attr *v = quill_op_attr(op, "value");
  if (!v || quill_attr_kind_of(v) != QUILL_ATTR_DENSE)
    return quill_vop_fail(ctx, op, "requires a dense 'value' attribute");
  quill_type *vt = quill_attr_dense_type(v), *rt = quill_vop_result_type(op, 0);
  if (vt != rt)
    return quill_vop_fail_types(
        ctx, op, "'value' has type %s but the result type is %s", vt, rt);
  return quill_vop_check_quant_axis(ctx, op, "result #0", rt);
}

/* return %a, %b: operands match the graph's declared result types. */
quill_status quill_verify_return(quill_context *ctx, const quill_op *op) {
  const quill_graph *g = quill_op_graph(op);
  unsigned n = quill_op_num_operands(op), want = quill_graph_num_results(g);
  if (n != want)
    return quill_vop_fail(ctx, op,
                          "has %u operands but graph @%s returns %u values",
                          n, quill_graph_name(g), want);
  quill_status st = QUILL_OK;
  for (unsigned i = 0; i < n; i++) {
    quill_type *t = quill_vop_operand_type(op, i);
    quill_type *r = quill_graph_result_type(g, i);
    if (t == r)
      continue;
    quill_strbuf sa, sb;
    quill_strbuf_init(&sa, ctx);
    quill_strbuf_init(&sb, ctx);
    quill_type_print(t, &sa);
    if (r)
      quill_type_print(r, &sb);
    else
      quill_strbuf_puts(&sb, "<null>");
    st = quill_vop_fail(ctx, op,
                        "operand #%u has type %s but the graph result #%u "
                        "is %s",
                        i, quill_strbuf_str(&sa), i, quill_strbuf_str(&sb));
    quill_strbuf_free(&sa);
    quill_strbuf_free(&sb);
  }
  return st;
}

/* identity: result type == operand type. */
quill_status quill_verify_same_type(quill_context *ctx, const quill_op *op) {
  quill_type *a = quill_vop_operand_type(op, 0), *r = quill_vop_result_type(op, 0);
  if (a != r)
    return quill_vop_fail_types(
        ctx, op, "result type %s differs from operand type %s", r, a);
  return QUILL_OK;
}

/* ---- elementwise unary ------------------------------------------------- */

/* Element classes a unary op accepts beyond float and quant (ONNX types). */
static const unsigned unary_extra_classes[QUILL_OP_COUNT] = {
    [QUILL_OP_RELU] = QUILL_EC_SINT,
    [QUILL_OP_NEG] = QUILL_EC_SINT,
    [QUILL_OP_ABS] = QUILL_EC_INT,
    [QUILL_OP_CLIP] = QUILL_EC_INT,
};

typedef struct unary_attr {
  quill_opcode opc;
  const char *name;
  bool is_string; /* else float */
} unary_attr;

static const unary_attr unary_attrs[] = {
    {QUILL_OP_LEAKY_RELU, "alpha", false},
    {QUILL_OP_HARD_SIGMOID, "alpha", false},
    {QUILL_OP_HARD_SIGMOID, "beta", false},
    {QUILL_OP_GELU, "approximate", true},
};

static const char *const gelu_modes[] = {"none", "tanh", NULL};

/* Result has the operand's shape and (compatible) element type. */
static quill_status unary_result(quill_context *ctx, const quill_op *op) {
  quill_shape s;
  quill_vop_operand_shape(op, 0, &s);
  return quill_vop_expect_result(ctx, op, 0, &s, quill_vop_operand_elem(op, 0));
}

static quill_status unary_elem(quill_context *ctx, const quill_op *op) {
  unsigned classes = QUILL_EC_FLOAT | QUILL_EC_QUANT |
                     unary_extra_classes[quill_op_opcode(op)];
  return quill_vop_expect_operand_elem(
      ctx, op, 0, classes,
      classes & QUILL_EC_INT ? "a numeric" : "a float or quantized");
}

quill_status quill_verify_unary(quill_context *ctx, const quill_op *op) {
  quill_status st = unary_elem(ctx, op);
  for (size_t i = 0; i < sizeof unary_attrs / sizeof unary_attrs[0]; i++) {
    const unary_attr *ua = &unary_attrs[i];
    if (ua->opc != quill_op_opcode(op))
      continue;
    double f;
    const char *s;
    quill_status s2 =
        ua->is_string
            ? quill_vop_attr_choice(ctx, op, ua->name, "none", gelu_modes, &s)
            : quill_vop_attr_float(ctx, op, ua->name, 0.0, &f);
    if (s2)
      st = s2;
  }
  if (unary_result(ctx, op))
    st = QUILL_ERR_INVALID;
  return st;
}

/* clip x [min [max]] or clip x {min, max} */
quill_status quill_verify_clip(quill_context *ctx, const quill_op *op) {
  quill_status st = unary_elem(ctx, op);
  quill_type *xe = quill_vop_operand_elem(op, 0);
  static const char *const names[] = {"min", "max"};
  for (unsigned i = 1; i < quill_op_num_operands(op); i++) {
    quill_type *t = quill_vop_operand_type(op, i);
    if (quill_type_rank(t) != 0 &&
        !(quill_type_rank(t) == 1 && quill_type_dim(t, 0) == 1)) {
      quill_strbuf sb;
      quill_strbuf_init(&sb, ctx);
      quill_type_print(t, &sb);
      st = quill_vop_fail(ctx, op, "'%s' operand must be a scalar tensor, got %s",
                          names[i - 1], quill_strbuf_str(&sb));
      quill_strbuf_free(&sb);
    } else if (quill_vop_expect_operand_like(ctx, op, i, xe))
      st = QUILL_ERR_INVALID;
    if (quill_op_attr(op, names[i - 1]))
      st = quill_vop_fail(ctx, op, "has both a '%s' operand and attribute",
                          names[i - 1]);
  }
  double lo, hi;
  if (quill_vop_attr_float(ctx, op, "min", -INFINITY, &lo) ||
      quill_vop_attr_float(ctx, op, "max", INFINITY, &hi))
    st = QUILL_ERR_INVALID;
  else if (lo > hi)
    st = quill_vop_fail(ctx, op, "attribute 'min' (%g) is greater than 'max' "
                                 "(%g)",
                        lo, hi);
  if (unary_result(ctx, op))
    st = QUILL_ERR_INVALID;
  return st;
}

/* cast: same shape, any non-quantized element types. */
quill_status quill_verify_cast(quill_context *ctx, const quill_op *op) {
  quill_type *a = quill_vop_operand_type(op, 0), *r = quill_vop_result_type(op, 0);
  if (quill_type_is_quant(quill_type_elem(a)) ||
      quill_type_is_quant(quill_type_elem(r)))
    return quill_vop_fail_types(
        ctx, op, "cannot cast quantized types (%s to %s); use quantize or "
                 "dequantize",
        a, r);
  quill_shape s;
  quill_shape_of(a, &s);
  return quill_vop_expect_result(ctx, op, 0, &s, quill_type_elem(r));
}

/* ---- elementwise binary ------------------------------------------------ */

/* Check that two operands broadcast; on success *out is the result shape. */
static quill_status broadcast_operands(quill_context *ctx, const quill_op *op,
                                       unsigned i, unsigned j,
                                       quill_shape *out) {
  quill_shape a, b;
  quill_vop_operand_shape(op, i, &a);
  quill_vop_operand_shape(op, j, &b);
  quill_strbuf why;
  quill_strbuf_init(&why, ctx);
  quill_status st = QUILL_OK;
  if (!quill_shape_broadcast(&a, &b, out, &why))
    st = quill_vop_fail_types(ctx, op,
                              "operands of types %s and %s are not "
                              "broadcast-compatible",
                              quill_vop_operand_type(op, i),
                              quill_vop_operand_type(op, j));
  quill_strbuf_free(&why);
  return st;
}

/* add sub mul div pow max min prelu */
quill_status quill_verify_binary(quill_context *ctx, const quill_op *op) {
  quill_type *ae = quill_vop_operand_elem(op, 0);
  quill_status st =
      quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_NUMERIC, "a numeric");
  if (quill_op_opcode(op) == QUILL_OP_POW) {
    if (quill_vop_expect_operand_elem(ctx, op, 1, QUILL_EC_NUMERIC,
                                      "a numeric"))
      st = QUILL_ERR_INVALID;
  } else if (!st)
    st = quill_vop_expect_operand_like(ctx, op, 1, ae);
  if (st)
    return QUILL_ERR_INVALID;
  if (quill_op_opcode(op) == QUILL_OP_PRELU) {
    quill_shape x, slope;
    quill_vop_operand_shape(op, 0, &x);
    quill_vop_operand_shape(op, 1, &slope);
    if (!quill_shape_broadcastable_to(&slope, &x, NULL))
      return quill_vop_fail_types(
          ctx, op, "slope of type %s cannot be broadcast to input type %s",
          quill_vop_operand_type(op, 1), quill_vop_operand_type(op, 0));
    return quill_vop_expect_result(ctx, op, 0, &x, ae);
  }
  quill_shape out;
  if (broadcast_operands(ctx, op, 0, 1, &out))
    return QUILL_ERR_INVALID;
  return quill_vop_expect_result(ctx, op, 0, &out, ae);
}

/* equal less greater: broadcast, result bool. */
quill_status quill_verify_compare(quill_context *ctx, const quill_op *op) {
  unsigned classes = QUILL_EC_NUMERIC;
  if (quill_op_opcode(op) == QUILL_OP_EQUAL)
    classes |= QUILL_EC_BOOL;
  if (quill_vop_expect_operand_elem(ctx, op, 0, classes, "a numeric") ||
      quill_vop_expect_operand_like(ctx, op, 1, quill_vop_operand_elem(op, 0)))
    return QUILL_ERR_INVALID;
  quill_shape out;
  if (broadcast_operands(ctx, op, 0, 1, &out))
    return QUILL_ERR_INVALID;
  return quill_vop_expect_result(ctx, op, 0, &out,
                                 quill_type_scalar(ctx, QUILL_TYPE_BOOL));
}

/* where cond, x, y: cond bool; x, y alike; all three broadcast. */
quill_status quill_verify_where(quill_context *ctx, const quill_op *op) {
  quill_status st =
      quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_BOOL, "a bool");
  if (quill_vop_expect_operand_like(ctx, op, 2, quill_vop_operand_elem(op, 1)))
    st = QUILL_ERR_INVALID;
  if (st)
    return st;
  quill_shape cx, c, all;
  if (broadcast_operands(ctx, op, 0, 1, &cx))
    return QUILL_ERR_INVALID;
  quill_vop_operand_shape(op, 2, &c);
  if (!quill_shape_broadcast(&cx, &c, &all, NULL))
    return quill_vop_fail(ctx, op, "operands are not broadcast-compatible");
  return quill_vop_expect_result(ctx, op, 0, &all,
                                 quill_vop_operand_elem(op, 1));
}

/* ---- quantization ------------------------------------------------------ */

/* Result shape == operand shape; both per-axis parameter sets valid. */
static quill_status same_shape_quant(quill_context *ctx, const quill_op *op) {
  quill_status st = QUILL_OK;
  quill_type *a = quill_vop_operand_type(op, 0), *r = quill_vop_result_type(op, 0);
  quill_shape sa, sr;
  quill_shape_of(a, &sa);
  quill_shape_of(r, &sr);
  if (!quill_shape_matches(&sa, &sr))
    st = quill_vop_fail_types(ctx, op,
                              "result type %s must have the shape of operand "
                              "type %s",
                              r, a);
  if (quill_vop_check_quant_axis(ctx, op, "operand #0", a) ||
      quill_vop_check_quant_axis(ctx, op, "result #0", r))
    st = QUILL_ERR_INVALID;
  return st;
}

/* quantize: float -> quant with that float as expressed type; optional
 * `rounding` (a policy of ir/quant.h, default half_even). */
quill_status quill_verify_quantize(quill_context *ctx, const quill_op *op) {
  static const char *const roundings[] = {"half_even", "half_away",
                                          "half_up", "tflite", NULL};
  const char *rounding;
  quill_status st =
      quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_FLOAT, "a float");
  if (quill_vop_attr_choice(ctx, op, "rounding", "half_even", roundings,
                            &rounding))
    st = QUILL_ERR_INVALID;
  quill_type *r = quill_vop_result_type(op, 0), *re = quill_type_elem(r);
  if (!quill_type_is_quant(re))
    st = quill_vop_fail_types(ctx, op,
                              "result must have a quantized element type, "
                              "got %s%s",
                              r, NULL);
  else if (!st && quill_type_quant_expressed(re) != quill_vop_operand_elem(op, 0))
    st = quill_vop_fail_types(ctx, op,
                              "result expressed type does not match operand: "
                              "%s vs %s",
                              r, quill_vop_operand_type(op, 0));
  if (same_shape_quant(ctx, op))
    st = QUILL_ERR_INVALID;
  return st;
}

/* dequantize: quant -> its expressed float type. */
quill_status quill_verify_dequantize(quill_context *ctx, const quill_op *op) {
  quill_status st = quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_QUANT,
                                                  "a quantized");
  quill_type *r = quill_vop_result_type(op, 0);
  if (!st && quill_type_quant_expressed(quill_vop_operand_elem(op, 0)) !=
                 quill_type_elem(r))
    st = quill_vop_fail_types(ctx, op,
                              "result type %s must have the expressed type "
                              "of operand type %s",
                              r, quill_vop_operand_type(op, 0));
  if (same_shape_quant(ctx, op))
    st = QUILL_ERR_INVALID;
  return st;
}

/* requantize: quant -> quant (same expressed type), same shape. */
quill_status quill_verify_requantize(quill_context *ctx, const quill_op *op) {
  quill_status st = quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_QUANT,
                                                  "a quantized");
  quill_type *r = quill_vop_result_type(op, 0);
  if (!quill_type_is_quant(quill_type_elem(r)))
    st = quill_vop_fail_types(ctx, op,
                              "result must have a quantized element type, "
                              "got %s%s",
                              r, NULL);
  else if (!st && !quill_vop_elem_compatible(quill_vop_operand_elem(op, 0),
                                             quill_type_elem(r)))
    st = quill_vop_fail_types(ctx, op,
                              "result type %s has a different expressed type "
                              "than operand type %s",
                              r, quill_vop_operand_type(op, 0));
  if (same_shape_quant(ctx, op) || quill_vop_requantize_attrs(ctx, op))
    st = QUILL_ERR_INVALID;
  return st;
}

/* fake_quant: float in, same type out; attributes are observer settings. */
quill_status quill_verify_fake_quant(quill_context *ctx, const quill_op *op) {
  quill_status st =
      quill_vop_expect_operand_elem(ctx, op, 0, QUILL_EC_FLOAT, "a float");
  if (quill_verify_same_type(ctx, op))
    st = QUILL_ERR_INVALID;
  const quill_attr *obs = quill_op_attr(op, "observer");
  if (obs && quill_attr_kind_of(obs) != QUILL_ATTR_STRING)
    st = quill_vop_fail(ctx, op, "attribute 'observer' must be a string");
  return st;
}

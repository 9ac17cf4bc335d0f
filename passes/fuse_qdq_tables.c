/*
 * fuse_qdq_tables.c - the fuse-qdq patterns whose integer form is computed
 * from a table or from row statistics rather than by a requantized sum
 * (the others are in fuse_qdq_patterns.c, the pass in fuse_qdq.c):
 *
 *   pattern      reference form                     integer form
 *   lut          Q(f(DQ x)), f unary, 8-bit x        lut x {table}
 *                Q(sigmoid/tanh(DQ x)), 16-bit x,    lut x {TFLite's int16
 *                tflite rounding, y at 1/32768       LOGISTIC/TANH table}
 *   softmax      Q(softmax(DQ x)), 16-bit x, as     softmax x (TFLite's
 *                the 16-bit lut                      int16 SOFTMAX)
 *                Q(softmax(DQ x)), i8 x, tflite      softmax x (TFLite's
 *                rounding, y at 1/256 : -128         int8 SOFTMAX)
 *   layer_norm   Q(layer_norm(DQ x, gamma [, beta])  qlayer_norm x, g, b
 *                {numerics = "integer"}), gamma and  (ir/qnorm.h: gamma,
 *                beta float constants                beta, eps folded)
 *
 * An 8-bit table is the reference interpreter's own float op run on all
 * 256 inputs (so the table equals what the float path would give); the
 * 16-bit tables and the softmax are TFLite's integer kernels
 * (ir/tfl_int16.h, ir/tfl_int8.h); the layer_norm constants come from quill_qnorm_fold.
 */
#include <math.h>
#include <string.h>

#include "ir/qnorm.h"
#include "ir/shape.h"
#include "ir/tfl_int16.h"
#include "ir/tfl_int8.h"
#include "passes/fuse_qdq_match.h"
#include "targets/reference/ref.h"

/* ---- lut ----------------------------------------------------------------- */

/* Unary float ops a table can replace (clip: with constant bounds). */
static const bool lut_ops[QUILL_OP_COUNT] = {
    [QUILL_OP_RELU] = true,      [QUILL_OP_LEAKY_RELU] = true,
    [QUILL_OP_CLIP] = true,      [QUILL_OP_SIGMOID] = true,
    [QUILL_OP_TANH] = true,      [QUILL_OP_HARD_SIGMOID] = true,
    [QUILL_OP_HARD_SWISH] = true, [QUILL_OP_GELU] = true,
    [QUILL_OP_ERF] = true,       [QUILL_OP_SQRT] = true,
    [QUILL_OP_EXP] = true,       [QUILL_OP_LOG] = true,
    [QUILL_OP_NEG] = true,       [QUILL_OP_ABS] = true,
    [QUILL_OP_RECIPROCAL] = true, [QUILL_OP_FLOOR] = true,
    [QUILL_OP_CEIL] = true,
};

/* The table of op f over every stored value of xe: the reference kernel of
 * f on the dequantized values, quantized to ye with rounding r. NULL (and
 * *why) on failure. */
static const quill_attr *lut_table(quill_context *ctx, const quill_op *fop,
                                   quill_type *xe, quill_type *ye,
                                   quill_rounding r, const char **why) {
  quill_type *storage = quill_type_quant_storage(xe);
  int64_t n = INT64_C(1) << quill_type_bit_width(storage);
  int64_t base = quill_type_int_min(storage);
  quill_type *fe = quill_type_elem(quill_value_type(quill_op_result(fop, 0)));
  quill_type *ft = quill_type_tensor(ctx, fe, 1, &n);
  quill_type *tt = quill_type_tensor(ctx, quill_type_quant_storage(ye), 1, &n);
  if (!ft || !tt)
    return NULL;
  bool xf64 = quill_type_kind_of(quill_type_quant_expressed(xe)) ==
              QUILL_TYPE_F64;
  bool yf64 = quill_type_kind_of(quill_type_quant_expressed(ye)) ==
              QUILL_TYPE_F64;
  quill_tensor in[3], out, table;
  memset(in, 0, sizeof in);
  memset(&out, 0, sizeof out);
  memset(&table, 0, sizeof table);
  const quill_attr *res = NULL;
  if (quill_tensor_alloc(ctx, ft, &in[0]) ||
      quill_tensor_alloc(ctx, ft, &out) || quill_tensor_alloc(ctx, tt, &table))
    goto done;
  int64_t zx = quill_type_quant_zero_points(xe)[0];
  for (int64_t i = 0; i < n; i++)
    quill_tensor_set_f64(
        &in[0], (size_t)i,
        quill_dequantize_value(base + i, scale0(xe), zx, xf64));
  for (unsigned i = 1; i < quill_op_num_operands(fop); i++) {
    const quill_attr *c = quill_value_constant(quill_op_operand(fop, i));
    if (!c) {
      *why = "an extra operand is not a constant";
      goto done;
    }
    in[i] = quill_tensor_from_attr(c);
  }
  if (quill_ref_eval_op(ctx, fop, in, &out)) {
    *why = "the reference kernel failed on the table";
    goto done;
  }
  int64_t zy = quill_type_quant_zero_points(ye)[0];
  int64_t qmin = quill_type_quant_qmin(ye), qmax = quill_type_quant_qmax(ye);
  for (int64_t i = 0; i < n; i++) {
    double v = quill_tensor_get_f64(&out, (size_t)i);
    quill_tensor_set_i64(&table, (size_t)i,
                         quill_quantize_value(v, scale0(ye), zy, qmin, qmax,
                                              yf64, r));
  }
  res = quill_tensor_to_attr(ctx, &table);
done:
  quill_tensor_free(ctx, &in[0]);
  quill_tensor_free(ctx, &out);
  quill_tensor_free(ctx, &table);
  return res;
}

/* Whether x -> y is TFLite's 16x8 form of LOGISTIC, TANH and SOFTMAX:
 * i16 storage, zero points 0, y at 1/32768, tflite rounding. */
static bool tfl16_form(const quill_type *xe, const quill_type *ye,
                       quill_rounding r) {
  return r == QUILL_ROUND_TFLITE && quill_tfl16_types(xe, ye);
}

/* The table of TFLite's int16 LOGISTIC or TANH over xe (tfl16_form). */
static const quill_attr *tfl16_table(quill_context *ctx, const quill_op *fop,
                                     quill_type *xe, quill_type *ye,
                                     const char **why) {
  int64_t n = 65536;
  quill_type *tt = quill_type_tensor(ctx, quill_type_quant_storage(ye), 1, &n);
  quill_tensor table;
  memset(&table, 0, sizeof table);
  if (!tt || quill_tensor_alloc(ctx, tt, &table))
    return NULL;
  int kind = quill_op_opcode(fop) == QUILL_OP_TANH ? QUILL_TFL16_TANH
                                                   : QUILL_TFL16_LOGISTIC;
  const quill_attr *res = NULL;
  if (quill_tfl16_act_table(kind, scale0(xe), (int16_t *)table.data))
    res = quill_tensor_to_attr(ctx, &table);
  else
    *why = "the input scale is too large for TFLite's int16 rescale";
  quill_tensor_free(ctx, &table);
  return res;
}

quill_match_result quill_fqdq_match_lut(const quill_pattern *p,
                                        quill_rewriter *rw, quill_op *q) {
  fqdq *f = state(p);
  quill_context *ctx = quill_rewriter_context(rw);
  quill_op *op = producer(state(p), q, lut_ops);
  if (!op)
    return no_producer(rw, q, lut_ops);
  quill_value *x = quill_fqdq_dq_source(quill_op_operand(op, 0));
  quill_value *y = quill_op_result(q, 0);
  if (!x || !quill_fqdq_per_tensor(x) || !quill_fqdq_per_tensor(y))
    return quill_rewriter_fail(rw, q, "the operand or the result is not "
                                      "quantized per tensor");
  quill_type *xe = quill_fqdq_qelem(x), *ye = quill_fqdq_qelem(y);
  quill_opcode o = quill_op_opcode(op);
  quill_rounding r = quill_fqdq_rounding(f, q);
  bool tfl16 = (o == QUILL_OP_SIGMOID || o == QUILL_OP_TANH) &&
               tfl16_form(xe, ye, r);
  if (!tfl16 && quill_type_bit_width(quill_type_quant_storage(xe)) > 8)
    return quill_rewriter_fail(rw, q, "the operand is wider than 8 bits "
                                      "(16 bits: only TFLite's int16 "
                                      "sigmoid and tanh)");
  if (!quill_ref_op_supported(op, NULL))
    return quill_rewriter_fail(rw, q, "the reference target cannot evaluate "
                                      "the op");
  const char *why = NULL;
  const quill_attr *table = tfl16 ? tfl16_table(ctx, op, xe, ye, &why)
                                  : lut_table(ctx, op, xe, ye, r, &why);
  if (!table)
    return why ? quill_rewriter_fail(rw, q, "%s", why) : oom(rw, q);
  quill_fqdq_attrs attrs;
  quill_fqdq_attrs_init(&attrs, ctx);
  quill_fqdq_attrs_set(&attrs, "table", table);
  quill_value *res = quill_fqdq_attrs_ok(&attrs)
                         ? emit(rw, QUILL_OP_LUT, 1, &x, quill_value_type(y),
                                &attrs, quill_op_loc(op))
                         : NULL;
  quill_fqdq_attrs_free(&attrs);
  if (!res)
    return oom(rw, q);
  return finish(p, rw, q, res, quill_op_opcode(op));
}

/* ---- layer_norm {numerics = "integer"} ----------------------------------- */

static const bool layer_norm_ops[QUILL_OP_COUNT] = {
    [QUILL_OP_LAYER_NORM] = true};

/* The n values of a layer_norm's gamma or beta operand v (a float constant
 * of n elements, or of one, broadcast) into out; false if it is not. */
static bool ln_param(const quill_value *v, size_t n, double *out) {
  const quill_attr *a = quill_value_constant(v);
  if (!a)
    return false;
  quill_tensor t = quill_tensor_from_attr(a);
  size_t k = quill_tensor_num_elements(&t);
  if (quill_type_is_quant(quill_type_elem(t.type)) || (k != n && k != 1))
    return false;
  for (size_t i = 0; i < n; i++)
    out[i] = quill_tensor_get_f64(&t, k == 1 ? 0 : i);
  return true;
}

/* Q(layer_norm(DQ x, gamma [, beta]) {numerics = "integer"}) ->
 * qlayer_norm x, g, b with gamma / s_y, beta / s_y and eps folded into
 * integers (quill_qnorm_fold). */
quill_match_result quill_fqdq_match_layer_norm(const quill_pattern *p,
                                               quill_rewriter *rw,
                                               quill_op *q) {
  quill_context *ctx = quill_rewriter_context(rw);
  /* not producer(): the backends list layer_norm in float_ops (it is no
   * quantized op: no observer of its own), and numerics = "integer" is
   * their choice of its arithmetic; only the user's keep_float counts */
  quill_op *op = quill_value_def(quill_op_operand(q, 0));
  if (!op || quill_op_opcode(op) != QUILL_OP_LAYER_NORM ||
      strcmp(str_attr(op, "numerics", "f64"), "integer") != 0)
    return QUILL_MATCH_FAILURE; /* a float layer_norm by choice: no log */
  if (!quill_fqdq_only_use(quill_op_result(op, 0), q) || kept_float(op))
    return no_producer(rw, q, layer_norm_ops);
  quill_value *x = quill_fqdq_dq_source(quill_op_operand(op, 0));
  quill_value *y = quill_op_result(q, 0);
  if (!x || !quill_fqdq_per_tensor(x) || !quill_fqdq_per_tensor(y))
    return quill_rewriter_fail(rw, q, "the operand or the result is not "
                                      "quantized per tensor");
  quill_type *xe = quill_fqdq_qelem(x), *ye = quill_fqdq_qelem(y);
  if (quill_type_bit_width(quill_type_quant_storage(xe)) > 16)
    return quill_rewriter_fail(rw, q, "the operand is wider than 16 bits");
  quill_type *xt = quill_value_type(x);
  unsigned r = quill_type_rank(xt), ax;
  if (!quill_shape_norm_axis(quill_op_attr_int(op, "axis", -1), r, &ax))
    return quill_rewriter_fail(rw, q, "'axis' is out of range");
  int64_t n = 1;
  for (unsigned d = ax; d < r; d++)
    n = quill_type_dim(xt, d) < 0 ? -1 : n * quill_type_dim(xt, d);
  if (n < 1 || n > QUILL_QNORM_MAX_ROW)
    return quill_rewriter_fail(rw, q, "the row is dynamic, empty or longer "
                                      "than %d elements",
                               QUILL_QNORM_MAX_ROW);
  size_t sz = (size_t)n * (2 * sizeof(double) + 2 * sizeof(int32_t));
  double *gam = quill_alloc(ctx, sz);
  if (!gam)
    return oom(rw, q);
  double *bet = gam + n;
  int32_t *g = (int32_t *)(bet + n), *b = g + n;
  bool has_b = quill_op_num_operands(op) > 2;
  const char *why = NULL;
  int G = 0, F = 0;
  int64_t E = 0;
  if (!ln_param(quill_op_operand(op, 1), (size_t)n, gam) ||
      (has_b && !ln_param(quill_op_operand(op, 2), (size_t)n, bet)))
    why = "gamma or beta is not a float constant of one value per row "
          "element";
  else
    (void)quill_qnorm_fold((size_t)n, quill_op_attr_number(op, "epsilon",
                                                            1e-5),
                           scale0(xe), scale0(ye), gam, has_b ? bet : NULL,
                           g, b, &G, &F, &E, &why);
  quill_type *ct = why ? NULL
                       : quill_type_tensor(ctx, quill_type_scalar(
                                                    ctx, QUILL_TYPE_I32),
                                           1, &n);
  const quill_attr *ga = ct ? quill_attr_dense(ctx, ct, g, (size_t)n * 4)
                            : NULL;
  const quill_attr *ba = ct ? quill_attr_dense(ctx, ct, b, (size_t)n * 4)
                            : NULL;
  quill_free(ctx, gam, sz);
  if (why)
    return quill_rewriter_fail(rw, q, "%s", why);
  quill_fqdq_attrs attrs;
  quill_fqdq_attrs_init(&attrs, ctx);
  quill_fqdq_attrs_set_int(&attrs, "axis", quill_op_attr_int(op, "axis", -1));
  quill_fqdq_attrs_set_int(&attrs, "epsilon_q", E);
  quill_fqdq_attrs_set_int(&attrs, "shift", G);
  quill_fqdq_attrs_set_int(&attrs, "bias_shift", F);
  quill_value *ops[3] = {x, NULL, NULL};
  quill_value *res = NULL;
  if (ga && ba && quill_fqdq_attrs_ok(&attrs) &&
      (ops[1] = quill_rewriter_create_constant(rw, ga, quill_op_loc(op))) &&
      (ops[2] = quill_rewriter_create_constant(rw, ba, quill_op_loc(op))))
    res = emit(rw, QUILL_OP_QLAYER_NORM, 3, ops, quill_value_type(y), &attrs,
               quill_op_loc(op));
  quill_fqdq_attrs_free(&attrs);
  if (!res)
    return oom(rw, q);
  return finish(p, rw, q, res, QUILL_OP_LAYER_NORM);
}

/* ---- softmax (TFLite's integer SOFTMAX, int16 and int8) ------------------- */

static const bool softmax_ops[QUILL_OP_COUNT] = {[QUILL_OP_SOFTMAX] = true};

/* Whether x -> y is TFLite's int8 SOFTMAX under tflite rounding: i8, y at
 * 1/256 with zero point -128, an input scale TFLite accepts. */
static bool tfl8_softmax_form(const quill_type *xe, const quill_type *ye,
                              quill_rounding r) {
  quill_tfl8_softmax p;
  return r == QUILL_ROUND_TFLITE && quill_tfl8_softmax_types(xe, ye) &&
         quill_tfl8_softmax_init(&p, scale0(xe), 1.0);
}

quill_match_result quill_fqdq_match_softmax(const quill_pattern *p,
                                            quill_rewriter *rw, quill_op *q) {
  fqdq *f = state(p);
  quill_op *op = producer(f, q, softmax_ops);
  if (!op)
    return QUILL_MATCH_FAILURE; /* other 8-bit forms stay float: no log */
  quill_value *x = quill_fqdq_dq_source(quill_op_operand(op, 0));
  quill_value *y = quill_op_result(q, 0);
  if (!x || !quill_fqdq_per_tensor(x) || !quill_fqdq_per_tensor(y))
    return QUILL_MATCH_FAILURE;
  quill_type *xe = quill_fqdq_qelem(x), *ye = quill_fqdq_qelem(y);
  quill_rounding r = quill_fqdq_rounding(f, q);
  if (!tfl16_form(xe, ye, r) && !tfl8_softmax_form(xe, ye, r))
    return QUILL_MATCH_FAILURE;
  quill_fqdq_attrs attrs;
  quill_fqdq_attrs_init(&attrs, quill_rewriter_context(rw));
  quill_fqdq_attrs_copy(&attrs, op, NULL);
  quill_value *res = quill_fqdq_attrs_ok(&attrs)
                         ? emit(rw, QUILL_OP_SOFTMAX, 1, &x,
                                quill_value_type(y), &attrs, quill_op_loc(op))
                         : NULL;
  quill_fqdq_attrs_free(&attrs);
  if (!res)
    return oom(rw, q);
  return finish(p, rw, q, res, QUILL_OP_SOFTMAX);
}

/*
 * quantize.c - the `quantize` pass: turn a calibrated fake-quantized graph
 * into the reference quantized (QDQ) model (docs/quantization.md sections
 * 2 and 4).
 *
 *   %y  = fake_quant %x {..., quant = Q}        %q = quantize %x {rounding = R} : Q
 *                                        ==>    %y = dequantize %q
 *   %w' = fake_quant %w {..., quant = Q}        %wq = constant {value = round(w/s)+zp} : Q
 *         (%w a constant)                ==>    %w' = dequantize %wq
 *   conv2d %xd, %wd, %b (b a float constant, %xd and %wd dequantized)
 *                                        ==>    %bq = constant : !quant.uniform<i32:f32[:0], {s_x*s_w[c]:0}>
 *                                               conv2d %xd, %wd, (dequantize %bq)
 *
 * Option backend=NAME (optional) supplies the rounding policy R of every
 * quantize op and of the constants (default half_even), whether biases
 * become int32 (its `bias` rule; default yes), and two rules that need the
 * config:
 *
 *   shared params  a quantized shared_params op (maxpool, reshape, ...)
 *                  reading a dequantized value gets `quantize` ->
 *                  `dequantize` to its input's quant type after each float
 *                  result, so every quantized op is dequantize -> op ->
 *                  quantize, as in ONNX QDQ models;
 *   constant data  a float constant operand of a quantized add, sub, mul,
 *                  max, min or concat that has a dequantized operand is
 *                  quantized per tensor with the activation scheme over its
 *                  own min/max (insert-observers leaves constants
 *                  unobserved).
 *
 * keep-float=a,b names ops that stay float (as for insert-observers), as
 * do the ops a `keep_float` override of the backend matches; constant data
 * takes the op's own activation scheme (the overrides applied). Biases
 * are quantized for conv2d, conv_transpose2d and gemm (alpha = beta = 1)
 * when the input is quantized per tensor and the weight's parameters give
 * one scale per output channel; otherwise the bias stays float. A weight
 * channel whose bias scale s_x * s_w would be below FLT_MIN (0 or denormal
 * in float32) is zeroed with scale 1.0 first, with a warning; a
 * per-channel weight's channel whose bias lies beyond int32 at s_x * s_w
 * gets a wider scale that fits it (fix_tiny_channels), with a warning. A
 * bias value still beyond int32 at its scale (per-tensor weights)
 * saturates, with a warning naming the op.
 * Constant
 * values are quantized with quill_quantize_value (ir/quant.c), the
 * arithmetic of the reference `quantize` kernel, so constant-folding a
 * quantize of the same constant gives the same bits.
 *
 * Every fake_quant must be calibrated (have `quant`); each one that is not
 * is reported, and the pass changes nothing. Statistics: num-quantized
 * (activation Q/DQ pairs), num-weights, num-biases, num-shared,
 * num-constants, num-layer-norm-numerics (layer_norms given the backend's
 * layer_norm_numerics, "f32" for tflite-int8: TFLite's float steps).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "backends/backend.h"
#include "ir/quant.h"
#include "passes/pass.h"
#include "targets/reference/ref.h"

typedef struct qrun {
  quill_pass_state *ps;
  quill_context *ctx;
  const quill_backend *b; /* NULL without backend= */
  quill_rounding rounding;
  bool bias_i32;
  char *keep_text;
  const char **keep;
  size_t num_keep, keep_cap;
  uint64_t n_act, n_weights, n_biases, n_shared, n_consts, n_norms;
} qrun;

/* ---- helpers ------------------------------------------------------------------------ */

static bool is_float_tensor(const quill_type *t) {
  return t && quill_type_is_tensor(t) && quill_type_is_float(quill_type_elem(t));
}


/* The quant element type of v if v = dequantize(...), else NULL. */
static quill_type *dequantized(const quill_value *v) {
  quill_op *d = quill_value_def(v);
  if (!d || quill_op_opcode(d) != QUILL_OP_DEQUANTIZE)
    return NULL;
  return quill_type_elem(quill_value_type(quill_op_operand(d, 0)));
}

static bool name_kept(const qrun *r, const char *name) {
  for (size_t i = 0; name && i < r->num_keep; i++)
    if (strcmp(r->keep[i], name) == 0)
      return true;
  return false;
}

/* Quantized by the backend: listed, float first result, not kept float. */
static bool is_quantized(const qrun *r, const quill_op *op) {
  if (!r->b || !quill_backend_quantizes(r->b, quill_op_opcode(op)) ||
      !quill_op_num_results(op) ||
      !is_float_tensor(quill_value_type(quill_op_result(op, 0))))
    return false;
  return !name_kept(r, quill_op_loc(op).name) &&
         !name_kept(r, quill_value_name(quill_op_result(op, 0))) &&
         !quill_backend_op_quant(r->b, op).keep_float;
}

/* A new op before `pos` (NULL on allocation failure). */
static quill_op *make(qrun *r, quill_op *pos, quill_opcode opc,
                      quill_value *operand, quill_type *type,
                      const quill_attr *attr, const char *attr_name,
                      quill_loc loc) {
  quill_named_attr na = {0, attr};
  unsigned nattrs = 0;
  if (attr) {
    if (!(na.name = quill_ident_get(r->ctx, attr_name)))
      return NULL;
    nattrs = 1;
  }
  quill_op *op = quill_op_create(quill_op_graph(pos), opc, operand ? 1 : 0,
                                 &operand, 1, &type, nattrs, &na, loc);
  if (op)
    quill_op_insert_before(pos, op);
  return op;
}

static const quill_attr *rounding_attr(qrun *r) {
  const char *s = quill_rounding_name(r->rounding);
  return quill_attr_string(r->ctx, s, strlen(s));
}

/* quantize v -> dequantize, before pos; the dequantized value or NULL. */
static quill_value *qdq(qrun *r, quill_op *pos, quill_value *v,
                        quill_type *qelem, quill_loc loc) {
  quill_type *ft = quill_value_type(v);
  quill_type *qt = quill_type_with_elem(r->ctx, ft, qelem);
  const quill_attr *ra = rounding_attr(r);
  quill_op *q = qt && ra ? make(r, pos, QUILL_OP_QUANTIZE, v, qt, ra,
                                "rounding", loc)
                         : NULL;
  quill_op *d = q ? make(r, pos, QUILL_OP_DEQUANTIZE, quill_op_result(q, 0),
                         ft, NULL, NULL, loc)
                  : NULL;
  return d ? quill_op_result(d, 0) : NULL;
}

/* Quantize the float constant data `a` to qelem (a quant element type whose
 * per-axis parameters fit a's shape) as a new constant + dequantize before
 * pos; the dequantized value or NULL (NOMEM). */
static quill_value *quantize_constant(qrun *r, quill_op *pos,
                                      const quill_attr *a, quill_type *qelem,
                                      quill_loc loc) {
  quill_context *ctx = r->ctx;
  quill_type *ft = quill_attr_dense_type(a);
  quill_type *qt = quill_type_with_elem(ctx, ft, qelem);
  quill_tensor t;
  if (!qt || quill_tensor_alloc(ctx, qt, &t))
    return NULL;
  const double *sc = quill_type_quant_scales(qelem);
  const int64_t *zp = quill_type_quant_zero_points(qelem);
  size_t np = quill_type_quant_num_params(qelem), inner = 1;
  int32_t axis = quill_type_quant_axis_of(qelem);
  for (unsigned d = axis < 0 ? quill_type_rank(ft) : (unsigned)axis + 1;
       d < quill_type_rank(ft); d++)
    inner *= (size_t)quill_type_dim(ft, d);
  int64_t qmin = quill_type_quant_qmin(qelem), qmax = quill_type_quant_qmax(qelem);
  bool f64 = quill_type_kind_of(quill_type_elem(ft)) == QUILL_TYPE_F64;
  quill_tensor src = quill_tensor_from_attr(a);
  size_t n = quill_tensor_num_elements(&t);
  for (size_t i = 0; i < n; i++) {
    size_t c = np == 1 ? 0 : (i / inner) % np;
    quill_tensor_set_i64(&t, i,
                         quill_quantize_value(quill_tensor_get_f64(&src, i),
                                              sc[c], zp[c], qmin, qmax, f64,
                                              r->rounding));
  }
  const quill_attr *dense = quill_tensor_to_attr(ctx, &t);
  quill_tensor_free(ctx, &t);
  quill_op *k = dense ? make(r, pos, QUILL_OP_CONSTANT, NULL, qt, dense,
                             "value", loc)
                      : NULL;
  quill_op *d = k ? make(r, pos, QUILL_OP_DEQUANTIZE, quill_op_result(k, 0),
                         ft, NULL, NULL, loc)
                  : NULL;
  return d ? quill_op_result(d, 0) : NULL;
}

/* ---- the rewrites ------------------------------------------------------------------- */

static quill_status rewrite_fake_quant(qrun *r, quill_op *fq) {
  quill_value *x = quill_op_operand(fq, 0), *y = quill_op_result(fq, 0);
  quill_type *qe = quill_fake_quant_type(fq);
  const quill_attr *c = quill_value_constant(x);
  quill_value *dq = c ? quantize_constant(r, fq, c, qe, quill_op_loc(fq))
                      : qdq(r, fq, x, qe, quill_op_loc(fq));
  if (!dq)
    return QUILL_ERR_NOMEM;
  if (quill_value_name(y) && quill_value_set_name(dq, quill_value_name(y)))
    return QUILL_ERR_NOMEM;
  quill_value_replace_all_uses(y, dq);
  quill_op_erase(fq);
  if (c)
    r->n_weights++;
  else
    r->n_act++;
  return QUILL_OK;
}

/* The i32 bias of a conv2d / conv_transpose2d / gemm, if it applies. */
/* A warning, naming the op, when bias values (float constant ba, one scale
 * per channel along its last axis, or one) lie beyond the int32 range at
 * their scale s_x * s_w[c]: quantize_constant saturates them, and the
 * quantized model silently loses that bias (tiny weight or input scales,
 * e.g. from calibration data near 1e-38). */
static void warn_bias_saturation(qrun *r, const quill_op *op,
                                 const quill_attr *ba, const double *sc,
                                 size_t n) {
  quill_tensor b = quill_tensor_from_attr(ba);
  size_t nb = quill_tensor_num_elements(&b), bad = 0, first = 0;
  double first_v = 0.0;
  for (size_t i = 0; i < nb; i++) {
    double v = quill_tensor_get_f64(&b, i);
    double q = v / sc[n == 1 ? 0 : i % n];
    if (!(fabs(q) <= (double)INT32_MAX) && !isnan(q)) {
      if (!bad++) {
        first = i;
        first_v = v;
      }
    }
  }
  if (bad)
    quill_diag_emit(r->ctx, quill_op_loc(op), QUILL_DIAG_WARNING,
                    "quantize: the int32 bias of '%s' saturates in %zu of "
                    "%zu values (first: #%zu = %g at scale %g = s_in * s_w); "
                    "the quantized op loses it (input or weight scale too "
                    "small)",
                    quill_op_name(op), bad, nb, first, first_v,
                    sc[n == 1 ? 0 : first % n]);
}

/* Weight channels that cannot carry their bias at s_x * s_w[k]; op's
 * weight operand (dequantize of a quantized constant) is replaced by one
 * with new scales for them:
 *
 *   zeroed   s_x * s_w[k] below the smallest normal float32 (FLT_MIN): the
 *            bias scale would be 0 or denormal in every float32 consumer
 *            (PP-OCRv4 rec: "bias scale 4.62e-44" from weights near 1e-38
 *            that calibrate still gave a normal scale). Their weights are
 *            negligible (|w| <= qmax * s_w), so the channel becomes a
 *            degenerate one, as calibrate makes a zero channel: scale 1.0,
 *            every value the zero point, and the bias scale is s_x.
 *   widened  a bias b[k] (ba, one value per weight channel) beyond int32
 *            at s_x * s_w[k]: the weights are negligible next to the bias
 *            (|w x| <= qmax s_w qmax_x s_x, over 2^31 / K times smaller
 *            than |b|), e.g. a dead channel whose constant output a
 *            folded shift (fold-batchnorm) put into its bias. The scale
 *            becomes s_w'[k] = |b[k]| / (s_x 2^30), so the bias keeps 30
 *            bits, and the weights are requantized to it (mostly to 0).
 *
 * Returns the new quant element type, or qw itself when no channel is
 * affected (or the weight is not a constant), NULL on allocation
 * failure. */
static quill_type *fix_tiny_channels(qrun *r, quill_op *op, double s_x,
                                     quill_type *qw, const quill_attr *ba) {
  quill_context *ctx = r->ctx;
  size_t nw = quill_type_quant_num_params(qw), zeroed = 0, widened = 0;
  const double *s_w = quill_type_quant_scales(qw);
  const int64_t *zp = quill_type_quant_zero_points(qw);
  quill_op *dq = quill_value_def(quill_op_operand(op, 1));
  const quill_attr *wa = dq ? quill_value_constant(quill_op_operand(dq, 0))
                            : NULL;
  bool per_bias = ba && nw > 1 &&
                  (size_t)quill_type_num_elements(quill_attr_dense_type(ba)) ==
                      nw;
  if (!wa)
    return qw;
  double *sc = quill_alloc(ctx, nw * sizeof *sc);
  if (!sc)
    return NULL;
  double first = 0.0, first_b = 0.0;
  size_t first_w = 0;
  for (size_t k = 0; k < nw; k++) {
    sc[k] = s_w[k];
    if (s_x * s_w[k] < FLT_MIN) {
      first = zeroed++ ? first : s_w[k];
      sc[k] = 1.0;
      continue;
    }
    double b = per_bias ? fabs(quill_attr_dense_get_f64(ba, k)) : 0.0;
    if (b / (s_x * s_w[k]) > (double)INT32_MAX && isfinite(b)) {
      if (!widened++) {
        first_w = k;
        first_b = quill_attr_dense_get_f64(ba, k);
      }
      sc[k] = b / (s_x * 1073741824.0);
    }
  }
  if (!zeroed && !widened) {
    quill_free(ctx, sc, nw * sizeof *sc);
    return qw;
  }
  int32_t axis = quill_type_quant_axis_of(qw);
  quill_type *st = quill_type_quant_storage(qw);
  quill_type *ex = quill_type_quant_expressed(qw);
  int64_t qmin = quill_type_quant_qmin(qw), qmax = quill_type_quant_qmax(qw);
  quill_type *nq = axis < 0 ? quill_type_quant(ctx, st, ex, 1.0, zp[0], qmin,
                                               qmax)
                            : quill_type_quant_axis(ctx, st, ex, axis, nw, sc,
                                                    zp, qmin, qmax);
  quill_type *wt = quill_attr_dense_type(wa);
  quill_type *nt = nq ? quill_type_with_elem(ctx, wt, nq) : NULL;
  quill_tensor old = quill_tensor_from_attr(wa), nw_t;
  if (!nt || quill_tensor_alloc(ctx, nt, &nw_t) != QUILL_OK) {
    quill_free(ctx, sc, nw * sizeof *sc);
    return NULL;
  }
  size_t inner = 1, dim = axis < 0 ? 1 : (size_t)quill_type_dim(wt, axis);
  for (unsigned d = axis < 0 ? 0 : (unsigned)axis + 1; axis >= 0 &&
                                                       d < quill_type_rank(wt);
       d++)
    inner *= (size_t)quill_type_dim(wt, d);
  bool f64 = quill_type_kind_of(ex) == QUILL_TYPE_F64;
  for (size_t i = 0; i < quill_tensor_num_elements(&old); i++) {
    size_t k = axis < 0 ? 0 : (i / inner) % dim;
    int64_t v = quill_tensor_get_i64(&old, i);
    if (s_x * s_w[k] < FLT_MIN)
      v = zp[k];
    else if (sc[k] != s_w[k])
      v = quill_quantize_value(quill_dequantize_value(v, s_w[k], zp[k], f64),
                               sc[k], zp[k], qmin, qmax, f64, r->rounding);
    quill_tensor_set_i64(&nw_t, i, v);
  }
  double first_sc = widened ? sc[first_w] : 0.0;
  quill_free(ctx, sc, nw * sizeof *sc);
  const quill_attr *na = quill_tensor_to_attr(ctx, &nw_t);
  quill_tensor_free(ctx, &nw_t);
  quill_loc loc = quill_op_loc(op);
  quill_op *c = na ? make(r, op, QUILL_OP_CONSTANT, NULL, nt, na, "value", loc)
                   : NULL;
  quill_type *ft = quill_value_type(quill_op_result(dq, 0));
  quill_op *d = c ? make(r, op, QUILL_OP_DEQUANTIZE, quill_op_result(c, 0), ft,
                         NULL, NULL, loc)
                  : NULL;
  if (!d)
    return NULL;
  quill_op_set_operand(op, 1, quill_op_result(d, 0));
  if (zeroed)
    quill_diag_emit(ctx, loc, QUILL_DIAG_WARNING,
                    "quantize: %zu weight channel(s) of '%s' give a bias "
                    "scale s_in * s_w below float32's normal range (first: "
                    "%g * %g): their weights are negligible and quantize to 0 "
                    "with scale 1.0",
                    zeroed, quill_op_name(op), s_x, first);
  if (widened)
    quill_diag_emit(ctx, loc, QUILL_DIAG_WARNING,
                    "quantize: %zu weight channel(s) of '%s' have a bias "
                    "beyond int32 at s_in * s_w (first: #%zu = %g): their "
                    "weights are negligible next to it, and their scale is "
                    "widened to %g so that the bias keeps 30 bits",
                    widened, quill_op_name(op), first_w, first_b, first_sc);
  return nq;
}

static quill_status rewrite_bias(qrun *r, quill_op *op) {
  quill_context *ctx = r->ctx;
  quill_opcode opc = quill_op_opcode(op);
  if (!r->bias_i32 || quill_op_num_operands(op) < 3 ||
      (opc != QUILL_OP_CONV2D && opc != QUILL_OP_CONV_TRANSPOSE2D &&
       opc != QUILL_OP_GEMM))
    return QUILL_OK;
  quill_value *bv = quill_op_operand(op, 2);
  const quill_attr *ba = quill_value_constant(bv);
  quill_type *qx = dequantized(quill_op_operand(op, 0));
  quill_type *qw = dequantized(quill_op_operand(op, 1));
  if (!ba || !is_float_tensor(quill_value_type(bv)) || !qx || !qw ||
      quill_type_quant_axis_of(qx) >= 0 ||
      (opc == QUILL_OP_GEMM && (quill_op_attr_float(op, "alpha", 1.0) != 1.0 ||
                                quill_op_attr_float(op, "beta", 1.0) != 1.0)))
    return QUILL_OK;
  /* output channels and the weight scale of each */
  quill_type *yt = quill_value_type(quill_op_result(op, 0));
  unsigned yr = quill_type_rank(yt);
  int64_t C = opc == QUILL_OP_GEMM ? quill_type_dim(yt, yr - 1)
                                   : quill_type_dim(yt, 1);
  size_t nw = quill_type_quant_num_params(qw);
  if (C <= 0 || (nw > 1 && (int64_t)nw != C &&
                 !(opc == QUILL_OP_CONV_TRANSPOSE2D && C % (int64_t)nw == 0)))
    return QUILL_OK;
  /* the bias layout: one value, or the channels along its last axis */
  quill_type *bt = quill_value_type(bv);
  unsigned br = quill_type_rank(bt);
  int64_t nb = quill_type_num_elements(bt);
  bool per_channel = nw > 1;
  if (per_channel) {
    if (br == 0 || quill_type_dim(bt, br - 1) != C || nb != C)
      return QUILL_OK;
  }
  double s_x = quill_type_quant_scales(qx)[0];
  if (!(qw = fix_tiny_channels(r, op, s_x, qw, per_channel ? ba : NULL)))
    return QUILL_ERR_NOMEM;
  const double *s_w = quill_type_quant_scales(qw);
  size_t n = per_channel ? (size_t)C : 1;
  double *sc = quill_alloc(ctx, n * sizeof *sc);
  int64_t *zp = quill_calloc(ctx, n, sizeof *zp);
  quill_status st = sc && zp ? QUILL_OK : QUILL_ERR_NOMEM;
  for (size_t c = 0; !st && c < n; c++)
    sc[c] = s_x * s_w[per_channel ? c % nw : 0];
  quill_type *i32 = quill_type_scalar(ctx, QUILL_TYPE_I32);
  quill_type *fe = quill_type_elem(bt);
  quill_type *qb = NULL;
  if (!st) {
    qb = per_channel ? quill_type_quant_axis(ctx, i32, fe, (int32_t)(br - 1), n,
                                             sc, zp, INT32_MIN, INT32_MAX)
                     : quill_type_quant(ctx, i32, fe, sc[0], 0, INT32_MIN,
                                        INT32_MAX);
    if (!qb) /* a product of scales that underflows: keep the float bias */
      quill_pass_debug(r->ps, "bias of '%s' kept float: scale %g unusable",
                       quill_op_name(op), sc[0]);
  }
  if (!st && qb)
    warn_bias_saturation(r, op, ba, sc, n);
  if (!st && qb) {
    quill_value *dq = quantize_constant(r, op, ba, qb, quill_op_loc(op));
    if (!dq)
      st = QUILL_ERR_NOMEM;
    else {
      quill_op_set_operand(op, 2, dq);
      r->n_biases++;
    }
  }
  quill_free(ctx, sc, n * sizeof *sc);
  quill_free(ctx, zp, n * sizeof *zp);
  return st;
}

static bool takes_constant_data(quill_opcode opc) {
  return opc == QUILL_OP_ADD || opc == QUILL_OP_SUB || opc == QUILL_OP_MUL ||
         opc == QUILL_OP_MAX || opc == QUILL_OP_MIN || opc == QUILL_OP_CONCAT;
}

/* Float constant operands of a quantized binary op / concat. */
static quill_status rewrite_constant_data(qrun *r, quill_op *op) {
  if (!takes_constant_data(quill_op_opcode(op)) || !is_quantized(r, op))
    return QUILL_OK;
  bool any = false;
  for (unsigned i = 0; i < quill_op_num_operands(op); i++)
    any |= dequantized(quill_op_operand(op, i)) != NULL;
  if (!any)
    return QUILL_OK;
  const quill_quant_scheme *s = quill_backend_op_quant(r->b, op).activation;
  for (unsigned i = 0; i < quill_op_num_operands(op); i++) {
    quill_value *v = quill_op_operand(op, i);
    const quill_attr *a = quill_value_constant(v);
    if (!a || !is_float_tensor(quill_value_type(v)))
      continue;
    quill_tensor t = quill_tensor_from_attr(a);
    double lo = 0.0, hi = 0.0, scale;
    int64_t zp;
    for (size_t k = 0; k < quill_tensor_num_elements(&t); k++) {
      double x = quill_tensor_get_f64(&t, k);
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
    }
    if (quill_quant_params_from_range(s, lo, hi, &scale, &zp, NULL))
      return quill_error(r->ctx, quill_op_loc(op),
                         "quantize: constant operand #%u of '%s' is not "
                         "finite",
                         i, quill_op_name(op));
    quill_type *qe = quill_type_quant(
        r->ctx, quill_type_scalar(r->ctx, s->storage),
        quill_type_elem(quill_value_type(v)), scale, zp, s->qmin, s->qmax);
    quill_value *dq = qe ? quantize_constant(r, op, a, qe, quill_op_loc(op))
                         : NULL;
    if (!dq)
      return QUILL_ERR_NOMEM;
    quill_op_set_operand(op, i, dq);
    r->n_consts++;
  }
  return QUILL_OK;
}

/* Q/DQ after a quantized shared-params op reading a dequantized value. */
static quill_status rewrite_shared(qrun *r, quill_op *op) {
  if (!r->b || !quill_backend_quantizes_outputs(r->b) ||
      !quill_backend_shares_params(r->b, quill_op_opcode(op)) ||
      !is_quantized(r, op) || quill_op_num_operands(op) == 0)
    return QUILL_OK;
  quill_type *qe = dequantized(quill_op_operand(op, 0));
  if (!qe || quill_type_quant_axis_of(qe) >= 0)
    return QUILL_OK;
  quill_op *pos = quill_op_next(op);
  for (unsigned i = 0; i < quill_op_num_results(op); i++) {
    quill_value *y = quill_op_result(op, i);
    if (!is_float_tensor(quill_value_type(y)) ||
        quill_type_elem(quill_value_type(y)) != quill_type_quant_expressed(qe))
      continue;
    quill_value *dq = qdq(r, pos, y, qe, quill_op_loc(op));
    if (!dq)
      return QUILL_ERR_NOMEM;
    quill_op *q = quill_value_def(quill_op_operand(quill_value_def(dq), 0));
    for (quill_use *u = quill_value_first_use(y), *nx; u; u = nx) {
      nx = quill_use_next(u);
      if (quill_use_user(u) != q)
        quill_op_set_operand(quill_use_user(u), quill_use_operand_index(u),
                             dq);
    }
    r->n_shared++;
  }
  return QUILL_OK;
}

/* ---- the pass ------------------------------------------------------------------------- */

static quill_status parse_keep_float(qrun *r) {
  const char *opt = quill_pass_option(r->ps, "keep-float");
  if (!opt || !*opt)
    return QUILL_OK;
  size_t n = 1;
  for (const char *s = opt; *s; s++)
    n += *s == ',';
  r->keep_text = quill_strdup(r->ctx, opt);
  r->keep = quill_calloc(r->ctx, n, sizeof *r->keep);
  if (!r->keep_text || !r->keep)
    return QUILL_ERR_NOMEM;
  r->keep_cap = n;
  for (char *s = r->keep_text, *e;; s = e + 1) {
    if ((e = strchr(s, ',')))
      *e = '\0';
    if (*s)
      r->keep[r->num_keep++] = s;
    if (!e)
      break;
  }
  return QUILL_OK;
}

/* Every fake_quant must carry a quant type; report each one that does not. */
static quill_status check_calibrated(qrun *r, quill_module *m) {
  quill_status st = QUILL_OK;
  for (unsigned gi = 0; gi < quill_module_num_graphs(m); gi++)
    QUILL_GRAPH_FOREACH(quill_module_graph(m, gi), op) {
      if (quill_op_opcode(op) != QUILL_OP_FAKE_QUANT || quill_fake_quant_type(op))
        continue;
      st = quill_error(r->ctx, quill_op_loc(op),
                       "quantize: the fake_quant of '%s' is not calibrated "
                       "(no 'quant' type: run calibrate first)",
                       quill_fake_quant_subject(op));
    }
  return st;
}

/* An f32 layer_norm gets the backend's `numerics` (its layer_norm_numerics)
 * unless it has its own: tflite-int8's "f32" computes TFLite's float
 * builtins' steps, so that the exported model equals the interpreter;
 * "integer" asks fuse-qdq for a qlayer_norm. */
static quill_status set_layer_norm_numerics(qrun *r, quill_op *op) {
  if (!r->b || quill_op_opcode(op) != QUILL_OP_LAYER_NORM ||
      quill_op_attr(op, "numerics"))
    return QUILL_OK;
  const char *n = quill_backend_layer_norm_numerics(r->b);
  const quill_type *t = quill_value_type(quill_op_operand(op, 0));
  if (strcmp(n, "f64") == 0 || !is_float_tensor(t) ||
      quill_type_kind_of(quill_type_elem(t)) != QUILL_TYPE_F32)
    return QUILL_OK;
  const quill_attr *a = quill_attr_string(r->ctx, n, strlen(n));
  quill_status st = a ? quill_op_set_attr(op, "numerics", a) : QUILL_ERR_NOMEM;
  if (!st)
    r->n_norms++;
  return st;
}

static quill_status run(quill_pass_state *ps, quill_module *m) {
  qrun r = {.ps = ps, .ctx = quill_pass_context(ps),
            .rounding = QUILL_ROUND_HALF_EVEN, .bias_i32 = true};
  const char *bname = quill_pass_option(ps, "backend");
  if (bname && *bname) {
    if (!(r.b = quill_backend_get(r.ctx, bname)))
      return QUILL_ERR_INVALID;
    r.rounding = quill_backend_rounding(r.b);
    r.bias_i32 = quill_backend_bias_int32(r.b);
  }
  quill_status st = parse_keep_float(&r);
  if (!st)
    st = check_calibrated(&r, m);
  for (unsigned gi = 0; !st && gi < quill_module_num_graphs(m); gi++)
    QUILL_GRAPH_FOREACH_SAFE(quill_module_graph(m, gi), op, next) {
      if (quill_op_opcode(op) == QUILL_OP_FAKE_QUANT)
        st = rewrite_fake_quant(&r, op);
      else if (!(st = rewrite_bias(&r, op)) &&
               !(st = rewrite_constant_data(&r, op)) &&
               !(st = set_layer_norm_numerics(&r, op)))
        st = rewrite_shared(&r, op);
      if (st)
        break;
    }
  quill_free(r.ctx, r.keep, r.keep_cap * sizeof *r.keep);
  quill_string_free(r.ctx, r.keep_text);
  if (st)
    return st;
  if (r.n_act)
    quill_pass_stat_add(ps, "num-quantized", r.n_act);
  if (r.n_weights)
    quill_pass_stat_add(ps, "num-weights", r.n_weights);
  if (r.n_biases)
    quill_pass_stat_add(ps, "num-biases", r.n_biases);
  if (r.n_shared)
    quill_pass_stat_add(ps, "num-shared", r.n_shared);
  if (r.n_consts)
    quill_pass_stat_add(ps, "num-constants", r.n_consts);
  if (r.n_norms)
    quill_pass_stat_add(ps, "num-layer-norm-numerics", r.n_norms);
  uint64_t total = r.n_act + r.n_weights + r.n_biases + r.n_shared +
                   r.n_consts + r.n_norms;
  if (!total)
    quill_pass_mark_unchanged(ps);
  return QUILL_OK;
}

const quill_pass quill_pass_quantize = {
    .name = "quantize",
    .summary = "Turn calibrated fake_quants into quantize/dequantize, "
               "integer weights and int32 biases",
    .run = run,
    .requires = 0,
    .establishes = 0,
    .preserves = 0,
    .options = "backend=NAME keep-float=NAMES",
};

/*
 * fuse_qdq_lstm.c - the fuse-qdq pattern that makes TFLite's integer LSTM:
 *
 *   Q_y(lstm(DQ(x), w, r [, b]))  ->  qlstm x, w_q, r_q, b_q {cell_shift}
 *
 * under TFLite's arithmetic only (quill_backend_makes_qlstm: rounding
 * "tflite", fixed point, int8 activations: tflite-int8), with x and y int8 per tensor and w, r, b float
 * constants. The other backends keep the lstm float between DQ and Q (the
 * LLVM target lowers qlstm but not lstm: its backends import ONNX LSTMs
 * unrolled).
 *
 * The parameters, as TFLite's quantization spec for the 8x8_16 LSTM has
 * them (ir/qlstm.h):
 *
 *   w_q, r_q   int8 symmetric per tensor, s = max|.| / 127 (one scale
 *              for the four gate blocks of each)
 *   b_q        int32 Wb + Rb at s_x * s_w (the f32 product TFLite stores)
 *   y          the quantize's parameters: the observed hidden state
 *   cell_shift the cell state's power-of-two scale 2^C (TFLite requires
 *              a power of two), C = ceil(log2 B) - 15 clamped to [-15, -9]:
 *              the smallest power of two covering B, with B
 *     calibrated  the lstm's attribute cell_absmax when the calibrate pass
 *              set it (observers.h: the largest |c| of the float lstm
 *              over the calibration data), else
 *     bounded  a bound on |c| that needs no calibration data: per unit,
 *              with the gate sums bounded by |b| + sum |w| max|x| + sum |r|
 *              (|h| <= 1), f_max the forget gate's largest sigmoid and m
 *              the largest |i * g|, c_t <= f_max c_(t-1) + m over the
 *              sequence length. Sound (the cell never saturates), coarser
 *              than the calibrated range where the gates do not saturate
 *              (crnn: 2^-10 bounded, 2^-14 calibrated).
 */
#include <math.h>
#include <string.h>

#include "ir/qlstm.h"
#include "passes/fuse_qdq_match.h"
#include "targets/reference/ref.h"

static const bool lstm_ops[QUILL_OP_COUNT] = {[QUILL_OP_LSTM] = true};

static double sigm(double v) { return 1.0 / (1.0 + exp(-v)); }

/* The C of the smallest 2^(C + 15) >= amax, clamped to qlstm's range. */
static int shift_covering(double amax) {
  int e = amax > 0.0 ? (int)ceil(log2(amax)) : 0;
  int shift = e - 15;
  return shift < QUILL_QLSTM_CELL_MIN   ? QUILL_QLSTM_CELL_MIN
         : shift > QUILL_QLSTM_CELL_MAX ? QUILL_QLSTM_CELL_MAX
                                        : shift;
}

/* The cell shift from the bound described above. */
static int cell_shift(const quill_tensor *w, const quill_tensor *r,
                      const quill_tensor *b, size_t h, size_t nin,
                      size_t seq, double xmax) {
  double worst = 0.0;
  for (size_t j = 0; j < h; j++) {
    double ub[4]; /* |gate sum| bounds, ONNX order i o f c */
    for (int g = 0; g < 4; g++) {
      size_t row = (size_t)g * h + j;
      double s = b ? fabs(quill_tensor_get_f64(b, row) +
                          quill_tensor_get_f64(b, 4 * h + row))
                   : 0.0;
      for (size_t k = 0; k < nin; k++)
        s += fabs(quill_tensor_get_f64(w, row * nin + k)) * xmax;
      for (size_t k = 0; k < h; k++)
        s += fabs(quill_tensor_get_f64(r, row * h + k));
      ub[g] = s;
    }
    double f = sigm(ub[2]), m = sigm(ub[0]) * tanh(ub[3]), c = 0.0;
    for (size_t t = 0; t < seq; t++)
      c = f * c + m;
    worst = c > worst ? c : worst;
  }
  return shift_covering(worst);
}

/* The symmetric int8 scale of a float tensor, max|t| / 127 rounded to
 * f32 (1 for an all-zero tensor). */
static double weight_scale(const quill_tensor *t) {
  size_t n = quill_tensor_num_elements(t);
  double amax = 0.0;
  for (size_t i = 0; i < n; i++)
    amax = fmax(amax, fabs(quill_tensor_get_f64(t, i)));
  return (double)(float)(amax > 0.0 ? amax / 127.0 : 1.0);
}

/* A float constant quantized to int8 per tensor at *scale (symmetric,
 * [-127, 127]). NULL on allocation failure. */
static quill_value *quantize_weights(quill_rewriter *rw, quill_op *op,
                                     const quill_tensor *t,
                                     const double *scale) {
  quill_context *ctx = quill_rewriter_context(rw);
  size_t n = quill_tensor_num_elements(t);
  int8_t *q = quill_alloc(ctx, n ? n : 1);
  if (!q)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    double v = round(quill_tensor_get_f64(t, i) / *scale);
    q[i] = (int8_t)(v > 127.0 ? 127 : v < -127.0 ? -127 : v);
  }
  quill_type *qe = quill_type_quant(ctx, quill_type_scalar(ctx, QUILL_TYPE_I8),
                                    quill_type_scalar(ctx, QUILL_TYPE_F32),
                                    *scale, 0, -127, 127);
  quill_type *qt = qe ? quill_type_with_elem(ctx, t->type, qe) : NULL;
  const quill_attr *a = qt ? quill_attr_dense(ctx, qt, q, n) : NULL;
  quill_free(ctx, q, n ? n : 1);
  return a ? quill_rewriter_create_constant(rw, a, quill_op_loc(op)) : NULL;
}

/* The int32 gate biases (Wb + Rb) at s_b; absent b: zeros. */
static quill_value *quantize_bias(quill_rewriter *rw, quill_op *op,
                                  const quill_tensor *b, size_t h, double s_b) {
  quill_context *ctx = quill_rewriter_context(rw);
  int32_t *q = quill_alloc(ctx, 4 * h * sizeof *q);
  if (!q)
    return NULL;
  for (size_t i = 0; i < 4 * h; i++) {
    double v = b ? round((quill_tensor_get_f64(b, i) +
                          quill_tensor_get_f64(b, 4 * h + i)) /
                         s_b)
                 : 0.0;
    q[i] = (int32_t)(v > 2147483647.0 ? 2147483647.0
                     : v < -2147483648.0 ? -2147483648.0
                                         : v);
  }
  int64_t d = (int64_t)(4 * h);
  quill_type *t =
      quill_type_tensor(ctx, quill_type_scalar(ctx, QUILL_TYPE_I32), 1, &d);
  const quill_attr *a = t ? quill_attr_dense(ctx, t, q, 4 * h * sizeof *q)
                          : NULL;
  quill_free(ctx, q, 4 * h * sizeof *q);
  return a ? quill_rewriter_create_constant(rw, a, quill_op_loc(op)) : NULL;
}

/* Whether v's element type is int8 quantized per tensor. */
static bool i8_per_tensor(const quill_value *v) {
  if (!quill_fqdq_per_tensor(v))
    return false;
  quill_type *e = quill_fqdq_qelem(v);
  return quill_type_kind_of(quill_type_quant_storage(e)) == QUILL_TYPE_I8;
}

quill_match_result quill_fqdq_match_lstm(const quill_pattern *p,
                                         quill_rewriter *rw, quill_op *q) {
  fqdq *f = state(p);
  quill_op *op = producer(f, q, lstm_ops);
  if (!op)
    return no_producer(rw, q, lstm_ops);
  if (!quill_backend_makes_qlstm(f->backend))
    return quill_rewriter_fail(rw, q, "the integer lstm is TFLite's: the "
                                      "backend is not TFLite's int8 "
                                      "(rounding \"tflite\", fixed point)");
  quill_value *x = quill_fqdq_dq_source(quill_op_operand(op, 0));
  quill_value *y = quill_op_result(q, 0);
  if (!x || !i8_per_tensor(x) || !i8_per_tensor(y))
    return quill_rewriter_fail(rw, q, "the lstm's input and result must be "
                                      "int8 per tensor");
  bool has_b = quill_op_num_operands(op) > 3;
  const quill_attr *ca[3] = {quill_value_constant(quill_op_operand(op, 1)),
                             quill_value_constant(quill_op_operand(op, 2)),
                             has_b ? quill_value_constant(quill_op_operand(op, 3))
                                   : NULL};
  if (!ca[0] || !ca[1] || (has_b && !ca[2]))
    return quill_rewriter_fail(rw, q, "w, r and b must be float constants");
  quill_tensor w = quill_tensor_from_attr(ca[0]);
  quill_tensor r = quill_tensor_from_attr(ca[1]);
  quill_tensor b = has_b ? quill_tensor_from_attr(ca[2]) : w;
  quill_type *xt = quill_value_type(x), *xe = quill_fqdq_qelem(x);
  if (!quill_type_has_static_shape(xt))
    return quill_rewriter_fail(rw, q, "the lstm's input has a dynamic shape");
  size_t seq = (size_t)quill_type_dim(xt, 0);
  size_t nin = (size_t)quill_type_dim(xt, 2);
  size_t h = (size_t)quill_type_dim(r.type, 1);
  double s_x = scale0(xe);
  int64_t z_x = quill_type_quant_zero_points(xe)[0];
  double xmax = s_x * fmax(fabs((double)(quill_type_quant_qmax(xe) - z_x)),
                           fabs((double)(quill_type_quant_qmin(xe) - z_x)));
  double cmax = quill_op_attr_float(op, "cell_absmax", -1.0);
  int C = cmax >= 0.0 ? shift_covering(cmax)
                      : cell_shift(&w, &r, has_b ? &b : NULL, h, nin, seq,
                                   xmax);
  double s_w = weight_scale(&w), s_r = weight_scale(&r);
  quill_qlstm_params prm;
  const char *why = NULL;
  quill_type *ye = quill_fqdq_qelem(y);
  if (!quill_qlstm_params_init(&prm, s_x, s_w, s_r, scale0(ye), z_x,
                               quill_type_quant_zero_points(ye)[0], C, &why))
    return quill_rewriter_fail(rw, q, "%s", why);
  quill_value *ops[4] = {x, quantize_weights(rw, op, &w, &s_w),
                         quantize_weights(rw, op, &r, &s_r), NULL};
  if (ops[1] && ops[2])
    ops[3] = quantize_bias(rw, op, has_b ? &b : NULL, h,
                           (double)((float)s_x * (float)s_w));
  if (!ops[3])
    return oom(rw, q);
  quill_fqdq_attrs attrs;
  quill_fqdq_attrs_init(&attrs, quill_rewriter_context(rw));
  quill_fqdq_attrs_set_int(&attrs, "cell_shift", C);
  quill_value *res = quill_fqdq_attrs_ok(&attrs)
                         ? emit(rw, QUILL_OP_QLSTM, 4, ops, quill_value_type(y),
                                &attrs, quill_op_loc(op))
                         : NULL;
  quill_fqdq_attrs_free(&attrs);
  if (!res)
    return oom(rw, q);
  return finish(p, rw, q, res, QUILL_OP_LSTM);
}

/*
 * kernels_norm.c - reference kernels for normalization, reductions and
 * softmax: batch_norm, layer_norm, reduce_{mean,sum,max,min}, softmax and
 * log_softmax, with ONNX semantics.
 *
 *   batch_norm  x [N, C, ...], scale/bias/mean/var [C]  (inference form)
 *               y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c]
 *   layer_norm  normalizes over dims [axis, rank) (axis default -1):
 *               y = (x - mean) / sqrt(var + epsilon) * scale + bias, scale
 *               and bias broadcast to the normalized shape; mean and
 *               variance each sum the row in 8 partial sums (lane i % 8)
 *               added as a tree at the end (sum8), a fixed order that
 *               vectorizes; with numerics = "f32" (the tflite-int8
 *               backend's layer_norms) every step is f32 instead, as
 *               TFLite's float builtins compute it (layer_norm_f32)
 *   reduce_*    over `axes` (absent: all dims, or nothing with
 *               noop_with_empty_axes = 1), keepdims default 1
 *   softmax     along `axis` (default -1), numerically stable:
 *               y = exp(x - max) / sum(exp(x - max));
 *               log_softmax = x - max - log(sum(exp(x - max)));
 *               on 16-bit quantized values (zero point 0, the result at
 *               1/32768: tflite-int16x8) TFLite's integer SOFTMAX
 *               (ir/tfl_int16.h), on int8 values with the result at
 *               1/256, zero point -128 (tflite-int8) TFLite's int8
 *               SOFTMAX (ir/tfl_int8.h)
 *
 * Statistics (means, variances, log_softmax sums) accumulate in double,
 * then round once to the result type. An f32 softmax computes in f32 in
 * a fixed order the LLVM target vectorizes (f32_softmax_row; the numerics
 * contract's exp, ir/fmath.h). Reductions walk the input like an
 * odometer and keep one output offset per element, with stride 0 along
 * the reduced dims:
 *
 *   x [2,3,4], axes [1] -> out [2,1,4]: out stride per x dim = [4, 0, 1]
 *
 * Integer reductions accumulate in double too and store with truncation
 * toward zero (reduce_mean of ints rounds like numpy's mean-then-cast).
 */
#include <math.h>
#include <string.h>

#include "ir/fmath.h"
#include "ir/tfl_int16.h"
#include "ir/tfl_int8.h"
#include "ir/shape.h"
#include "targets/reference/kernels.h"

/* ---- batch_norm ----------------------------------------------------------- */

QUILL_REF_KERNEL(quill_ref_kernel_batch_norm) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  unsigned r = quill_type_rank(x->type);
  if (r < 2 || quill_tensor_num_elements(y) != quill_tensor_num_elements(x))
    return quill_ref_op_error(ctx, op, "operand must be [N, C, ...] and the "
                                       "result the same shape");
  size_t N = (size_t)quill_type_dim(x->type, 0);
  size_t C = (size_t)quill_type_dim(x->type, 1);
  size_t plane = 1;
  for (unsigned d = 2; d < r; d++)
    plane *= (size_t)quill_type_dim(x->type, d);
  for (unsigned i = 1; i < 5; i++)
    if (quill_tensor_num_elements(&in[i]) != C)
      return quill_ref_op_error(ctx, op, "scale, bias, mean and var must "
                                         "have C elements");
  double eps = quill_op_attr_number(op, "epsilon", 1e-5);
  quill_ref_fbuf fx = {0}, fy = {0};
  quill_status st;
  if ((st = quill_ref_fbuf_read(ctx, x, &fx)) ||
      (st = quill_ref_fbuf_write(ctx, y, &fy)))
    goto done;
  for (size_t c = 0; c < C; c++) {
    double s = quill_tensor_get_f64(&in[1], c) /
               sqrt(quill_tensor_get_f64(&in[4], c) + eps);
    double b = quill_tensor_get_f64(&in[2], c) -
               quill_tensor_get_f64(&in[3], c) * s;
    float fs = (float)s, fb = (float)b;
    for (size_t n = 0; n < N; n++) {
      const float *xp = fx.p + (n * C + c) * plane;
      float *yp = fy.p + (n * C + c) * plane;
      for (size_t i = 0; i < plane; i++)
        yp[i] = xp[i] * fs + fb;
    }
  }
done:
  quill_ref_fbuf_release(ctx, NULL, &fx);
  quill_ref_fbuf_release(ctx, st ? NULL : y, &fy);
  return st;
}

/* ---- layer_norm ----------------------------------------------------------- */

/* Expand t (broadcastable to `norm`, a tensor of `n` elements) into n
 * doubles. */
static quill_status expand_param(quill_context *ctx, const quill_tensor *t,
                                 quill_type *norm, double *outv, size_t n) {
  quill_ref_bcast it;
  const quill_type *tt = t->type;
  if (!quill_ref_bcast_init(&it, norm, 1, &tt))
    return QUILL_ERR_INVALID;
  for (size_t i = 0; i < n; i++, quill_ref_bcast_next(&it))
    outv[i] = quill_tensor_get_f64(t, it.offset[0]);
  return QUILL_OK;
}

/* The 8 partial sums of a layer_norm statistic (element i of the row went
 * to lane i % 8, in order), added as a tree: lane l += lane l + w for
 * w = 4, 2, 1. A fixed order that the LLVM target computes with vectors
 * (lower_reduce.c's row_sum8). */
static double sum8(double *p) {
  for (int w = 4; w >= 1; w /= 2)
    for (int l = 0; l < w; l++)
      p[l] += p[l + w];
  return p[0];
}

/* layer_norm {numerics = "f32"}: every step in f32, as TFLite's float
 * builtins compute the decomposition targets/tflite writes (MEAN,
 * SQUARED_DIFFERENCE, MEAN, ADD, RSQRT, SUB, MUL, MUL, ADD; reference
 * kernels): each MEAN adds the row in order into one f32 sum and divides
 * by (float)n, RSQRT is 1.0f / sqrtf, and every product and sum is
 * rounded to f32 on its own (no fused multiply-add: C11 contracts nothing
 * across statements, and each step is one). */
static quill_status layer_norm_f32(quill_context *ctx, const quill_tensor *x,
                                   quill_tensor *y, size_t outer, size_t inner,
                                   double eps, const double *scale,
                                   const double *bias) {
  quill_ref_fbuf fx = {0}, fy = {0};
  quill_status st;
  if ((st = quill_ref_fbuf_read(ctx, x, &fx)) ||
      (st = quill_ref_fbuf_write(ctx, y, &fy)))
    goto done;
  float n = (float)inner, e = (float)eps;
  for (size_t o = 0; o < outer; o++) {
    const float *xp = fx.p + o * inner;
    float *yp = fy.p + o * inner;
    float s = 0.0f;
    for (size_t i = 0; i < inner; i++)
      s += xp[i];
    float mean = s / n;
    float q = 0.0f;
    for (size_t i = 0; i < inner; i++) {
      float d = xp[i] - mean;
      float d2 = d * d;
      q += d2;
    }
    float var = q / n;
    float ve = var + e;
    float inv = 1.0f / sqrtf(ve);
    for (size_t i = 0; i < inner; i++) {
      float v = (xp[i] - mean) * inv;
      v = v * (float)scale[i];
      yp[i] = v + (float)bias[i];
    }
  }
done:
  quill_ref_fbuf_release(ctx, NULL, &fx);
  quill_ref_fbuf_release(ctx, st ? NULL : y, &fy);
  return st;
}

QUILL_REF_KERNEL(quill_ref_kernel_layer_norm) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  unsigned r = quill_type_rank(x->type), ax;
  if (!quill_shape_norm_axis(quill_op_attr_int(op, "axis", -1), r, &ax))
    return quill_ref_op_error(ctx, op, "'axis' is out of range");
  if (quill_tensor_num_elements(y) != quill_tensor_num_elements(x))
    return quill_ref_op_error(ctx, op, "result shape differs from operand");
  double eps = quill_op_attr_number(op, "epsilon", 1e-5);
  size_t inner = 1;
  for (unsigned d = ax; d < r; d++)
    inner *= (size_t)quill_type_dim(x->type, d);
  size_t outer = inner ? quill_tensor_num_elements(x) / inner : 0;
  quill_type *norm = quill_type_tensor(ctx, quill_type_elem(x->type), r - ax,
                                       quill_type_dims(x->type) + ax);
  size_t psize = 2 * (inner ? inner : 1) * sizeof(double);
  double *scale = norm ? quill_alloc(ctx, psize) : NULL;
  if (!scale)
    return QUILL_ERR_NOMEM;
  double *bias = scale + (inner ? inner : 1);
  quill_status st = expand_param(ctx, &in[1], norm, scale, inner);
  if (!st && quill_op_num_operands(op) > 2)
    st = expand_param(ctx, &in[2], norm, bias, inner);
  else
    memset(bias, 0, inner * sizeof *bias);
  if (st) {
    quill_free(ctx, scale, psize);
    return quill_ref_op_error(ctx, op, "scale or bias does not broadcast to "
                                       "the normalized shape");
  }
  if (strcmp(quill_ref_attr_str(op, "numerics", "f64"), "f32") == 0) {
    st = layer_norm_f32(ctx, x, y, outer, inner, eps, scale, bias);
    quill_free(ctx, scale, psize);
    return st;
  }
  for (size_t o = 0; o < outer; o++) {
    size_t base = o * inner;
    double part[8] = {0};
    for (size_t i = 0; i < inner; i++)
      part[i % 8] += quill_tensor_get_f64(x, base + i);
    double mean = sum8(part) / (double)inner;
    memset(part, 0, sizeof part);
    for (size_t i = 0; i < inner; i++) {
      double dv = quill_tensor_get_f64(x, base + i) - mean;
      part[i % 8] += dv * dv;
    }
    double var = sum8(part) / (double)inner;
    double inv = 1.0 / sqrt(var + eps);
    for (size_t i = 0; i < inner; i++)
      quill_tensor_set_f64(y, base + i,
                           (quill_tensor_get_f64(x, base + i) - mean) * inv *
                                   scale[i] +
                               bias[i]);
  }
  quill_free(ctx, scale, psize);
  return QUILL_OK;
}

/* ---- reductions ----------------------------------------------------------- */

QUILL_REF_KERNEL(quill_ref_kernel_reduce) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  unsigned r = quill_type_rank(x->type);
  quill_opcode opc = quill_op_opcode(op);
  int64_t axes[QUILL_MAX_RANK];
  int64_t n = quill_op_attr_ints(op, "axes", axes, QUILL_MAX_RANK);
  bool keep = quill_op_attr_int(op, "keepdims", 1) != 0;
  bool noop = quill_op_attr_int(op, "noop_with_empty_axes", 0) != 0;
  bool reduced[QUILL_MAX_RANK] = {false};
  if (n <= 0 && noop) { /* identity */
    if (y->size != x->size)
      return quill_ref_op_error(ctx, op, "result shape differs from operand");
    if (y->size)
      memcpy(y->data, x->data, y->size);
    return QUILL_OK;
  }
  if (n <= 0)
    for (unsigned d = 0; d < r; d++)
      reduced[d] = true;
  for (int64_t i = 0; i < n; i++) {
    unsigned a;
    if (!quill_shape_norm_axis(axes[i], r, &a))
      return quill_ref_op_error(ctx, op, "'axes' is out of range");
    reduced[a] = true;
  }
  /* expected result dims and the output stride of each input dim */
  int64_t ostride[QUILL_MAX_RANK], odims[QUILL_MAX_RANK], idx[QUILL_MAX_RANK];
  unsigned orank = 0;
  for (unsigned d = 0; d < r; d++)
    if (!reduced[d] || keep)
      odims[orank++] = reduced[d] ? 1 : quill_type_dim(x->type, d);
  if (quill_type_rank(y->type) != orank)
    return quill_ref_op_error(ctx, op, "result rank does not match 'axes' "
                                       "and 'keepdims'");
  for (unsigned d = 0; d < orank; d++)
    if (odims[d] != quill_type_dim(y->type, d))
      return quill_ref_op_error(ctx, op, "result shape does not match 'axes'");
  int64_t s = 1;
  for (unsigned d = r; d-- > 0;) {
    ostride[d] = reduced[d] ? 0 : s;
    if (!reduced[d])
      s *= quill_type_dim(x->type, d);
  }
  size_t ny = quill_tensor_num_elements(y), nx = quill_tensor_num_elements(x);
  double *acc = quill_alloc(ctx, (ny ? ny : 1) * sizeof *acc);
  if (!acc)
    return QUILL_ERR_NOMEM;
  double init = opc == QUILL_OP_REDUCE_MAX   ? -INFINITY
                : opc == QUILL_OP_REDUCE_MIN ? INFINITY
                                             : 0.0;
  for (size_t i = 0; i < ny; i++)
    acc[i] = init;
  memset(idx, 0, sizeof idx);
  size_t oi = 0;
  for (size_t i = 0; i < nx; i++) {
    double v = quill_tensor_get_f64(x, i);
    double *a = &acc[oi];
    if (opc == QUILL_OP_REDUCE_MAX)
      *a = (v > *a || isnan(v)) && !isnan(*a) ? v : *a;
    else if (opc == QUILL_OP_REDUCE_MIN)
      *a = (v < *a || isnan(v)) && !isnan(*a) ? v : *a;
    else
      *a += v;
    for (unsigned d = r; d-- > 0;) { /* odometer, tracking the out offset */
      oi += (size_t)ostride[d];
      if (++idx[d] < quill_type_dim(x->type, d))
        break;
      oi -= (size_t)(ostride[d] * quill_type_dim(x->type, d));
      idx[d] = 0;
    }
  }
  size_t count = ny ? nx / ny : 0;
  for (size_t i = 0; i < ny; i++) {
    double v = acc[i];
    if (opc == QUILL_OP_REDUCE_MEAN)
      v = count ? v / (double)count : NAN;
    quill_tensor_set_f64(y, i, v);
  }
  quill_free(ctx, acc, (ny ? ny : 1) * sizeof *acc);
  return QUILL_OK;
}

/* ---- softmax -------------------------------------------------------------- */

/* The f32 softmax of one row (elements base + k * inner), the order the
 * LLVM target's code follows (lower_float.c): m = max in order, e[k] =
 * exp(x[k] - m) (ir/fmath.h) stored to y and summed into 16 partial sums
 * (lane k % 16), the partials added as a tree (lane l += lane l + w for
 * w = 8, 4, 2, 1), then y[k] = e[k] / sum; all in f32. */
static void f32_softmax_row(const quill_tensor *x, quill_tensor *y,
                            size_t base, size_t len, size_t inner) {
  float m = -INFINITY, part[16] = {0};
  for (size_t k = 0; k < len; k++) {
    float v = (float)quill_tensor_get_f64(x, base + k * inner);
    m = m < v ? v : m;
  }
  for (size_t k = 0; k < len; k++) {
    float v = (float)quill_tensor_get_f64(x, base + k * inner);
    float e = quill_fexp(v - m);
    quill_tensor_set_f64(y, base + k * inner, e);
    part[k % 16] = part[k % 16] + e;
  }
  for (size_t w = 8; w >= 1; w /= 2)
    for (size_t l = 0; l < w; l++)
      part[l] = part[l] + part[l + w];
  for (size_t k = 0; k < len; k++) {
    float e = (float)quill_tensor_get_f64(y, base + k * inner);
    quill_tensor_set_f64(y, base + k * inner, e / part[0]);
  }
}

/* The 16-bit form TFLite defines (softmax only): quantized operand and
 * result of 16-bit storage, zero points 0, the result at 1/32768. */
static bool softmax_i16(const quill_op *op) {
  return quill_op_opcode(op) == QUILL_OP_SOFTMAX &&
         quill_tfl16_types(
             quill_type_elem(quill_value_type(quill_op_operand(op, 0))),
             quill_type_elem(quill_value_type(quill_op_result(op, 0))));
}

/* TFLite's int8 form: i8 operand, i8 result at 1/256 with zero point
 * -128 (ir/tfl_int8.h). */
static bool softmax_i8(const quill_op *op) {
  return quill_op_opcode(op) == QUILL_OP_SOFTMAX &&
         quill_tfl8_softmax_types(
             quill_type_elem(quill_value_type(quill_op_operand(op, 0))),
             quill_type_elem(quill_value_type(quill_op_result(op, 0))));
}

const char *quill_ref_supports_softmax(const quill_op *op) {
  if (softmax_i16(op) || softmax_i8(op))
    return NULL;
  const char *why = quill_ref_supports_float(op);
  bool quant = quill_type_is_quant(
      quill_type_elem(quill_value_type(quill_op_operand(op, 0))));
  return why && quant && quill_op_opcode(op) == QUILL_OP_SOFTMAX
             ? "quantized element types other than TFLite's int16 form "
               "(i16, zero point 0, result at 1/32768) and int8 form (i8, "
               "result at 1/256 with zero point -128)"
             : why;
}

/* TFLite's int16 SOFTMAX over rows of `len` values `inner` apart. */
static quill_status softmax_i16_run(quill_context *ctx, const quill_op *op,
                                    const quill_tensor *x, quill_tensor *y,
                                    size_t outer, size_t len, size_t inner) {
  quill_tfl16_softmax p;
  if (!quill_tfl16_softmax_init(
          &p, quill_type_quant_scales(quill_type_elem(x->type))[0], 1.0))
    return quill_ref_op_error(ctx, op, "the input scale has no int16 "
                                       "softmax rescale");
  size_t bytes = (len ? len : 1) * 2 * sizeof(int16_t);
  int16_t *row = quill_alloc(ctx, bytes);
  if (!row)
    return QUILL_ERR_NOMEM;
  for (size_t o = 0; o < outer; o++)
    for (size_t i = 0; i < inner; i++) {
      size_t base = o * len * inner + i;
      for (size_t k = 0; k < len; k++)
        row[k] = (int16_t)quill_tensor_get_i64(x, base + k * inner);
      quill_tfl16_softmax_row(&p, row, row + len, len, 1);
      for (size_t k = 0; k < len; k++)
        quill_tensor_set_i64(y, base + k * inner, row[len + k]);
    }
  quill_free(ctx, row, bytes);
  return QUILL_OK;
}

/* TFLite's int8 SOFTMAX over rows of `len` values `inner` apart. */
static quill_status softmax_i8_run(quill_context *ctx, const quill_op *op,
                                   const quill_tensor *x, quill_tensor *y,
                                   size_t outer, size_t len, size_t inner) {
  quill_tfl8_softmax p;
  if (!quill_tfl8_softmax_init(
          &p, quill_type_quant_scales(quill_type_elem(x->type))[0], 1.0))
    return quill_ref_op_error(ctx, op, "the input scale is too small for "
                                       "TFLite's int8 softmax rescale");
  size_t bytes = (len ? len : 1) * 2;
  int8_t *row = quill_alloc(ctx, bytes);
  if (!row)
    return QUILL_ERR_NOMEM;
  for (size_t o = 0; o < outer; o++)
    for (size_t i = 0; i < inner; i++) {
      size_t base = o * len * inner + i;
      for (size_t k = 0; k < len; k++)
        row[k] = (int8_t)quill_tensor_get_i64(x, base + k * inner);
      quill_tfl8_softmax_row(&p, row, row + len, len, 1);
      for (size_t k = 0; k < len; k++)
        quill_tensor_set_i64(y, base + k * inner, row[len + k]);
    }
  quill_free(ctx, row, bytes);
  return QUILL_OK;
}

QUILL_REF_KERNEL(quill_ref_kernel_softmax) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  unsigned r = quill_type_rank(x->type), ax;
  if (!quill_shape_norm_axis(quill_op_attr_int(op, "axis", -1), r, &ax))
    return quill_ref_op_error(ctx, op, "'axis' is out of range");
  if (quill_tensor_num_elements(y) != quill_tensor_num_elements(x))
    return quill_ref_op_error(ctx, op, "result shape differs from operand");
  bool log_sm = quill_op_opcode(op) == QUILL_OP_LOG_SOFTMAX;
  bool f32 = quill_type_kind_of(quill_type_elem(x->type)) == QUILL_TYPE_F32 &&
             quill_type_kind_of(quill_type_elem(y->type)) == QUILL_TYPE_F32;
  size_t len = (size_t)quill_type_dim(x->type, ax), inner = 1;
  for (unsigned d = ax + 1; d < r; d++)
    inner *= (size_t)quill_type_dim(x->type, d);
  size_t total = quill_tensor_num_elements(x);
  size_t outer = len && inner ? total / (len * inner) : 0;
  if (softmax_i16(op))
    return softmax_i16_run(ctx, op, x, y, outer, len, inner);
  if (softmax_i8(op))
    return softmax_i8_run(ctx, op, x, y, outer, len, inner);
  for (size_t o = 0; o < outer; o++)
    for (size_t in_i = 0; in_i < inner; in_i++) {
      size_t base = o * len * inner + in_i;
      if (f32 && !log_sm) {
        f32_softmax_row(x, y, base, len, inner);
        continue;
      }
      double mx = -INFINITY, sum = 0;
      for (size_t k = 0; k < len; k++) {
        double v = quill_tensor_get_f64(x, base + k * inner);
        mx = v > mx ? v : mx;
      }
      for (size_t k = 0; k < len; k++)
        sum += exp(quill_tensor_get_f64(x, base + k * inner) - mx);
      double lsum = log(sum);
      for (size_t k = 0; k < len; k++) {
        double v = quill_tensor_get_f64(x, base + k * inner) - mx;
        quill_tensor_set_f64(y, base + k * inner,
                             log_sm ? v - lsum : exp(v) / sum);
      }
    }
  return QUILL_OK;
}

/*
 * kernels_quant.c - reference kernels for the quantization ops: quantize,
 * dequantize, requantize and fake_quant, with ONNX QuantizeLinear /
 * DequantizeLinear semantics, and the storage cast scast and
 * dynamic_quantize (ONNX DynamicQuantizeLinear, at the end of the file).
 *
 * The quantization parameters live in the quantized element type
 * (!quant.uniform<i8:f32, scale:zp> or the per-axis form), never in
 * attributes:
 *
 *   quantize    q = saturate(round_r(x / scale) + zp, qmin, qmax)
 *   dequantize  x = (q - zp) * scale
 *   requantize  q2 = quantize_2(dequantize_1(q1))   (a DQ -> Q pair), or
 *               with {multiplier, shift} in fixed point:
 *               q2 = saturate(zp2 + quill_requant_fixed(q1 - zp1, m, s, r))
 *   fake_quant  x' = dequantize(quantize(x)) with the quant type in the
 *               op's `quant` type attribute; identity without one
 *
 * x / scale and (q - zp) * scale are computed in the expressed float type
 * (f32 arithmetic for f32/f16/bf16, as ONNX's reference does), then
 * rounded with the op's `rounding` policy r (default half_even, ONNX's:
 * 0.5 -> 0, 1.5 -> 2, -0.5 -> 0, -1.5 -> -2; ir/quant.h quill_quantize_value
 * is the one definition). fake_quant rounds half to even. qmin/qmax
 * come from the type (the storage range unless narrowed, e.g.
 * i8<-127:127>). Per-axis types pick the parameters of each element's
 * index along the axis:
 *
 *   x [O, I, kh, kw], axis 0: channel(i) = (i / (I*kh*kw)) % O
 */
#include <math.h>
#include <string.h>

#include "ir/quant.h"
#include "targets/reference/kernels.h"

typedef quill_ref_qinfo qinfo;

bool quill_ref_qinfo_init(quill_ref_qinfo *qi, const quill_type *qelem,
                          const quill_type *tensor) {
  qi->scales = quill_type_quant_scales(qelem);
  qi->zps = quill_type_quant_zero_points(qelem);
  qi->n = quill_type_quant_num_params(qelem);
  qi->qmin = quill_type_quant_qmin(qelem);
  qi->qmax = quill_type_quant_qmax(qelem);
  qi->f64 = quill_type_kind_of(quill_type_quant_expressed(qelem)) ==
            QUILL_TYPE_F64;
  qi->inner = 1;
  int32_t axis = quill_type_quant_axis_of(qelem);
  if (axis < 0)
    return qi->n == 1;
  unsigned r = quill_type_rank(tensor);
  if ((unsigned)axis >= r || quill_type_dim(tensor, (unsigned)axis) !=
                                 (int64_t)qi->n)
    return false;
  for (unsigned d = (unsigned)axis + 1; d < r; d++)
    qi->inner *= (size_t)quill_type_dim(tensor, d);
  return true;
}

static bool qinfo_init(qinfo *qi, const quill_type *qelem,
                       const quill_type *tensor) {
  return quill_ref_qinfo_init(qi, qelem, tensor);
}

static size_t qchannel(const qinfo *qi, size_t i) {
  return quill_ref_qchannel(qi, i);
}

/* quill_quantize_value / quill_dequantize_value (ir/quant.c) with the
 * parameters of element i. */
static int64_t quantize_one(const qinfo *qi, size_t i, double x,
                            quill_rounding r) {
  size_t c = qchannel(qi, i);
  return quill_quantize_value(x, qi->scales[c], qi->zps[c], qi->qmin,
                              qi->qmax, qi->f64, r);
}

static double dequantize_one(const qinfo *qi, size_t i, int64_t q) {
  size_t c = qchannel(qi, i);
  return quill_dequantize_value(q, qi->scales[c], qi->zps[c], qi->f64);
}

/* The quant element type of a tensor, or NULL. */
static quill_type *quant_elem(const quill_tensor *t) {
  quill_type *e = quill_type_elem(t->type);
  return quill_type_is_quant(e) ? e : NULL;
}

static quill_status check_same_count(quill_context *ctx, const quill_op *op,
                                     const quill_tensor *x,
                                     const quill_tensor *y) {
  if (quill_tensor_num_elements(x) != quill_tensor_num_elements(y))
    return quill_ref_op_error(ctx, op, "result shape differs from operand");
  return QUILL_OK;
}

/* The `rounding` attribute of a quantize op (half_even when absent). */
static bool op_rounding(const quill_op *op, quill_rounding *r) {
  const quill_attr *a = quill_op_attr(op, "rounding");
  *r = QUILL_ROUND_HALF_EVEN;
  return !a || (quill_attr_kind_of(a) == QUILL_ATTR_STRING &&
                quill_rounding_parse(quill_attr_string_value(a, NULL), r));
}

QUILL_REF_KERNEL(quill_ref_kernel_quantize) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  quill_type *qe = quant_elem(y);
  qinfo qi;
  quill_rounding r;
  if (check_same_count(ctx, op, x, y))
    return QUILL_ERR_INVALID;
  if (!op_rounding(op, &r))
    return quill_ref_op_error(ctx, op, "attribute 'rounding' must name a "
                                       "rounding policy");
  if (!qe || quant_elem(x) || !qinfo_init(&qi, qe, y->type))
    return quill_ref_op_error(ctx, op, "expects a float operand and a "
                                       "quantized result that fits its shape");
  size_t n = quill_tensor_num_elements(y);
  for (size_t i = 0; i < n; i++)
    quill_tensor_set_i64(y, i,
                         quantize_one(&qi, i, quill_tensor_get_f64(x, i), r));
  return QUILL_OK;
}

QUILL_REF_KERNEL(quill_ref_kernel_dequantize) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  quill_type *qe = quant_elem(x);
  qinfo qi;
  if (check_same_count(ctx, op, x, y))
    return QUILL_ERR_INVALID;
  if (!qe || quant_elem(y) || !qinfo_init(&qi, qe, x->type))
    return quill_ref_op_error(ctx, op, "expects a quantized operand that "
                                       "fits its shape and a float result");
  size_t n = quill_tensor_num_elements(y);
  for (size_t i = 0; i < n; i++)
    quill_tensor_set_f64(y, i, dequantize_one(&qi, i, quill_tensor_get_i64(x, i)));
  return QUILL_OK;
}

QUILL_REF_KERNEL(quill_ref_kernel_requantize) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  quill_type *qa = quant_elem(x), *qb = quant_elem(y);
  qinfo ia, ib;
  if (check_same_count(ctx, op, x, y))
    return QUILL_ERR_INVALID;
  if (!qa || !qb || !qinfo_init(&ia, qa, x->type) ||
      !qinfo_init(&ib, qb, y->type))
    return quill_ref_op_error(ctx, op, "expects quantized operand and result "
                                       "types that fit their shapes");
  quill_rounding r;
  if (!op_rounding(op, &r))
    return quill_ref_op_error(ctx, op, "unknown 'rounding'");
  size_t n = quill_tensor_num_elements(y);
  if (quill_op_attr(op, "multiplier")) { /* fixed point, per tensor */
    int64_t m, sh;
    if (ia.n != 1 || ib.n != 1 ||
        quill_op_attr_ints(op, "multiplier", &m, 1) != 1 ||
        quill_op_attr_ints(op, "shift", &sh, 1) != 1 || m < 0 ||
        m > INT32_MAX || sh < -31 || sh > 62)
      return quill_ref_op_error(ctx, op, "fixed point needs per-tensor types "
                                         "and one 'multiplier' and 'shift' in "
                                         "range");
    for (size_t i = 0; i < n; i++) {
      int64_t v = quill_requant_fixed(quill_tensor_get_i64(x, i) - ia.zps[0],
                                      (int32_t)m, (int)sh, r);
      v = v >= ib.qmax - ib.zps[0]   ? ib.qmax
          : v <= ib.qmin - ib.zps[0] ? ib.qmin
                                     : v + ib.zps[0];
      quill_tensor_set_i64(y, i, v);
    }
    return QUILL_OK;
  }
  for (size_t i = 0; i < n; i++) {
    double real = dequantize_one(&ia, i, quill_tensor_get_i64(x, i));
    quill_tensor_set_i64(y, i, quantize_one(&ib, i, real, r));
  }
  return QUILL_OK;
}


QUILL_REF_KERNEL(quill_ref_kernel_fake_quant) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0];
  if (x->size != y->size || check_same_count(ctx, op, x, y))
    return quill_ref_op_error(ctx, op, "result type differs from operand");
  quill_type *qe = quill_fake_quant_type(op);
  if (!qe) {
    if (y->size)
      memcpy(y->data, x->data, y->size);
    return QUILL_OK;
  }
  qinfo qi;
  if (!qinfo_init(&qi, qe, x->type))
    return quill_ref_op_error(ctx, op, "attribute 'quant' does not fit the "
                                       "operand's shape");
  size_t n = quill_tensor_num_elements(y);
  for (size_t i = 0; i < n; i++) {
    int64_t q = quantize_one(&qi, i, quill_tensor_get_f64(x, i),
                             QUILL_ROUND_HALF_EVEN);
    quill_tensor_set_f64(y, i, dequantize_one(&qi, i, q));
  }
  return QUILL_OK;
}

/* scast: the storage bits unchanged (integer <-> quantized of that
 * storage), so a byte copy. */
QUILL_REF_KERNEL(quill_ref_kernel_scast) {
  if (in[0].size != out[0].size ||
      quill_tensor_num_elements(&in[0]) != quill_tensor_num_elements(&out[0]))
    return quill_ref_op_error(ctx, op, "result storage differs from operand");
  if (out[0].size)
    memcpy(out[0].data, in[0].data, out[0].size);
  return QUILL_OK;
}

/* dynamic_quantize x -> (y u8, scale f32, zero point u8), ONNX
 * DynamicQuantizeLinear as its reference implementation computes it, in
 * f32 throughout:
 *
 *   maxx = max(0, max(x)), minx = min(0, min(x))
 *   scale = (maxx == minx ? 1 : maxx - minx) / 255
 *   zp = rint(clamp(0 - minx / scale, 0, 255))
 *   y = clamp(rint(x / scale) + zp, 0, 255)
 *
 * An all-zero (or empty) x gives scale 1/255 and zp 0 (onnxruntime returns
 * scale 1 there; y and zp agree). A NaN anywhere makes scale NaN and, as
 * Python's min/max do with the reference's scalars, zp 255; NaN elements of
 * y become 0 (a NaN float -> int cast). */
QUILL_REF_KERNEL(quill_ref_kernel_dynamic_quantize) {
  const quill_tensor *x = &in[0];
  quill_tensor *y = &out[0], *s = &out[1], *z = &out[2];
  size_t n = quill_tensor_num_elements(x);
  if (quill_tensor_num_elements(y) != n ||
      quill_tensor_elem_kind(y) != QUILL_TYPE_U8 ||
      quill_tensor_num_elements(s) != 1 ||
      quill_tensor_num_elements(z) != 1)
    return quill_ref_op_error(ctx, op, "expects results u8 [shape of x], "
                                       "f32 [] and u8 []");
  float maxx = 0.0f, minx = 0.0f;
  bool nan = false;
  for (size_t i = 0; i < n; i++) {
    float v = (float)quill_tensor_get_f64(x, i);
    if (isnan(v))
      nan = true;
    else if (v > maxx)
      maxx = v;
    else if (v < minx)
      minx = v;
  }
  if (nan)
    maxx = minx = NAN;
  float scale = (maxx == minx ? 1.0f : maxx - minx) / 255.0f;
  float izp = 0.0f - minx / scale;
  float zpc = izp < 255.0f ? izp : 255.0f; /* min(qmax, izp) */
  zpc = zpc > 0.0f ? zpc : 0.0f;           /* max(qmin, .) */
  float zp = rintf(zpc);
  for (size_t i = 0; i < n; i++) {
    float q = rintf((float)quill_tensor_get_f64(x, i) / scale) + zp;
    int64_t v = isnan(q) ? 0 : q <= 0.0f ? 0 : q >= 255.0f ? 255 : (int64_t)q;
    quill_tensor_set_i64(y, i, v);
  }
  quill_tensor_set_f64(s, 0, scale);
  quill_tensor_set_i64(z, 0, (int64_t)zp);
  return QUILL_OK;
}

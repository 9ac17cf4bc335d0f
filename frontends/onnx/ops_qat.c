/*
 * ops_qat.c - import of the fake quantizers that quantization-aware
 * training tools export, as Quill quantize + dequantize pairs (the QDQ
 * form `quill compile` fuses into integer ops):
 *
 *   QONNX Quant(x, scale, zeropt, bitwidth) {signed, narrow, rounding_mode}
 *     (domain qonnx.custom_op.general, also finn.custom_op.general; what
 *     Brevitas' export_qonnx writes)
 *       q = clamp(round(x / scale + zeropt), min, max)
 *       signed: [-2^(b-1) + narrow, 2^(b-1) - 1], else [0, 2^b - 1 - narrow]
 *   MQBench's custom nodes (default domain, from its torch.onnx symbolics):
 *     LearnablePerTensorAffine(x, scale, zp, qmin, qmax)
 *     FixedPerTensorAffine(x, scale, zp, qmin, qmax)
 *     FixedPerChannelAffine(x, scale, zp, axis, qmin, qmax)
 *     FakeQuantizeLearnablePerchannelAffine(x, scale, zp)
 *         {quant_min, quant_max}, channels along axis 0
 *       q = clamp(round(x / scale + zp), qmin, qmax), zp rounded and
 *       clamped first as torch's learnable fake quantizers do
 *   Clip on a quantized value with integer bounds (Brevitas' QCDQ export:
 *     QuantizeLinear -> Clip -> DequantizeLinear for bit widths under 8):
 *       requantize to the same parameters with the narrower range, which
 *       DequantizeLinear then accepts as its own (ops_quant.c)
 *
 * The learned scale and zero point become the quant type (per tensor, or
 * per axis when scale has one dimension of size > 1), so the parameters
 * must be constants. Storage: the narrowest of u8/i8/u16/i16/i32 holding
 * [min, max]. Rounding: half to even (QONNX ROUND, torch), half up (QONNX
 * HALF_UP); round(x / s + zp) equals Quill's round(x / s) + zp since zp is
 * an integer. Not imported (located errors): BipolarQuant (its grid {-s, s}
 * has no zero), QONNX's other rounding modes, non-integer bit widths.
 */
#include <math.h>
#include <string.h>

#include "frontends/onnx/onnx_impl.h"

#define MAX_PARAMS 65536

static quill_type *narrowest_storage(quill_context *ctx, int64_t lo,
                                     int64_t hi) {
  static const quill_type_kind kinds[] = {QUILL_TYPE_U8, QUILL_TYPE_I8,
                                          QUILL_TYPE_U16, QUILL_TYPE_I16,
                                          QUILL_TYPE_I32};
  for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    quill_type *t = quill_type_scalar(ctx, kinds[i]);
    if (lo >= quill_type_int_min(t) && hi <= quill_type_int_max(t))
      return t;
  }
  return NULL;
}

/* The quantization axis of a scale of shape ss against x (numpy
 * broadcasting, right-aligned): the one dim of size > 1, -1 for a single
 * value, -2 when several dims exceed 1 or the shapes do not broadcast. */
static int scale_axis(const quill_shape *ss, const quill_shape *xs) {
  if (ss->rank > xs->rank)
    return -2;
  int axis = -1;
  for (unsigned i = 0; i < ss->rank; i++) {
    int64_t d = ss->dims[i];
    unsigned xi = xs->rank - ss->rank + i;
    if (d == 1)
      continue;
    if (d != xs->dims[xi] || axis >= 0)
      return -2;
    axis = (int)xi;
  }
  return axis;
}

typedef struct fq_spec {
  unsigned scale, zp; /* input indices (zp may be absent) */
  int axis;           /* forced axis (MQBench per channel), -1: from shape */
  int64_t qmin, qmax;
  const char *rounding;
} fq_spec;

/* quantize + dequantize x (input 0) with the spec's constant parameters. */
static quill_status emit_fake_quant(onnx_importer *im, const onnx_node *n,
                                    const fq_spec *f) {
  quill_context *ctx = im->ctx;
  quill_value *x, *sv, *zv = onnx_opt_input(n, f->zp), *q, *y;
  if (onnx_input(im, n, 0, &x) || onnx_input(im, n, f->scale, &sv))
    return QUILL_ERR_INVALID;
  quill_type *f32 = quill_type_scalar(ctx, QUILL_TYPE_F32);
  if (onnx_elem(x) != f32)
    return onnx_error(im, n, "the input must be an f32 tensor");
  quill_shape xs, ss;
  onnx_shape(x, &xs);
  onnx_shape(sv, &ss);
  int axis = f->axis >= 0 ? f->axis : scale_axis(&ss, &xs);
  if (axis == -2)
    return onnx_error(im, n, "the scale must be one value or vary along one "
                             "axis of the input");
  size_t cnt = axis >= 0 && (unsigned)axis < xs.rank ? (size_t)xs.dims[axis] : 1;
  if (axis >= 0 && (unsigned)axis >= xs.rank)
    return onnx_error(im, n, "channel axis %d is out of range for rank %u",
                      axis, xs.rank);
  if (cnt > MAX_PARAMS)
    return onnx_error(im, n, "%zu quantization parameters (at most %d)", cnt,
                      MAX_PARAMS);
  double *scales = quill_calloc(ctx, cnt, sizeof *scales);
  double *zf = quill_calloc(ctx, cnt, sizeof *zf);
  int64_t *zps = quill_calloc(ctx, cnt, sizeof *zps);
  quill_status st = scales && zf && zps ? QUILL_OK : QUILL_ERR_NOMEM;
  int64_t ns = 0, nz = 0;
  if (!st)
    st = onnx_const_floats(im, n, f->scale, scales, cnt, &ns);
  if (!st && zv)
    st = onnx_const_floats(im, n, f->zp, zf, cnt, &nz);
  if (!st && (ns != (int64_t)cnt && ns != 1))
    st = onnx_error(im, n, "the scale has %lld values for %zu channels",
                    (long long)ns, cnt);
  if (!st && zv && nz != (int64_t)cnt && nz != 1)
    st = onnx_error(im, n, "the zero point has %lld values for %zu channels",
                    (long long)nz, cnt);
  for (size_t i = 0; !st && i < cnt; i++) {
    scales[i] = scales[ns == 1 ? 0 : i];
    double z = zv ? zf[nz == 1 ? 0 : i] : 0.0;
    z = nearbyint(z); /* torch: zero_point.round(), then clamped */
    zps[i] = (int64_t)fmin(fmax(z, (double)f->qmin), (double)f->qmax);
  }
  quill_type *storage = narrowest_storage(ctx, f->qmin, f->qmax);
  if (!st && !storage)
    st = onnx_error(im, n, "the range [%lld, %lld] needs more than 32 bits",
                    (long long)f->qmin, (long long)f->qmax);
  const char *why =
      st ? NULL
         : quill_type_quant_check(storage, f32, cnt, scales, zps, f->qmin,
                                  f->qmax);
  if (why)
    st = onnx_error(im, n, "invalid quantization parameters: %s", why);
  quill_type *qe = NULL;
  if (!st) {
    qe = axis >= 0 ? quill_type_quant_axis(ctx, storage, f32, axis, cnt,
                                           scales, zps, f->qmin, f->qmax)
                   : quill_type_quant(ctx, storage, f32, scales[0], zps[0],
                                      f->qmin, f->qmax);
    st = qe ? QUILL_OK : QUILL_ERR_NOMEM;
  }
  quill_free(ctx, scales, cnt * sizeof *scales);
  quill_free(ctx, zf, cnt * sizeof *zf);
  quill_free(ctx, zps, cnt * sizeof *zps);
  if (st)
    return st;
  quill_named_attr r = onnx_nattr_str(im, "rounding", f->rounding);
  if (onnx_emit1(im, n, QUILL_OP_QUANTIZE, 1, &x,
                 quill_type_with_elem(ctx, quill_value_type(x), qe), 1, &r,
                 &q) ||
      onnx_emit1(im, n, QUILL_OP_DEQUANTIZE, 1, &q, quill_value_type(x), 0,
                 NULL, &y))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, y);
}

/* A constant integer-valued scalar input. */
static quill_status const_int(onnx_importer *im, const onnx_node *n,
                              unsigned i, const char *what, int64_t *out) {
  double v;
  int64_t len = 0;
  if (onnx_const_floats(im, n, i, &v, 1, &len))
    return QUILL_ERR_INVALID;
  if (len != 1 || v != nearbyint(v) || fabs(v) > 2147483647.0)
    return onnx_error(im, n, "%s (input #%u) must be one integer", what, i);
  *out = (int64_t)v;
  return QUILL_OK;
}

quill_status onnx_import_qonnx_quant(onnx_importer *im, const onnx_node *n) {
  if (!strcmp(n->op_type, "BipolarQuant"))
    return onnx_error(im, n, "BipolarQuant is not supported: its grid {-scale, "
                             "scale} has no zero, which Quill's integer types "
                             "need (keep the layer float in the training tool)");
  int64_t sgn = 1, narrow = 0, bits = 8;
  const char *mode;
  if (onnx_attr_int(im, n, "signed", 1, &sgn) ||
      onnx_attr_int(im, n, "narrow", 0, &narrow) ||
      onnx_attr_string(im, n, "rounding_mode", "ROUND", &mode) ||
      const_int(im, n, 3, "the bit width", &bits))
    return QUILL_ERR_INVALID;
  fq_spec f = {1, 2, -1, 0, 0, NULL};
  if (!strcmp(mode, "ROUND") || !strcmp(mode, "HALF_EVEN"))
    f.rounding = "half_even";
  else if (!strcmp(mode, "HALF_UP"))
    f.rounding = "half_up";
  else
    return onnx_error(im, n, "rounding_mode '%s' is not supported (ROUND, "
                             "HALF_EVEN or HALF_UP)",
                      mode);
  if (bits < 2 || bits > 16)
    return onnx_error(im, n, "bit width %lld is not supported (2..16)",
                      (long long)bits);
  if (sgn) {
    f.qmin = -((int64_t)1 << (bits - 1)) + (narrow ? 1 : 0);
    f.qmax = ((int64_t)1 << (bits - 1)) - 1;
  } else {
    f.qmin = 0;
    f.qmax = ((int64_t)1 << bits) - 1 - (narrow ? 1 : 0);
  }
  return emit_fake_quant(im, n, &f);
}

quill_status onnx_import_mqbench_fake_quant(onnx_importer *im,
                                            const onnx_node *n) {
  fq_spec f = {1, 2, -1, 0, 0, "half_even"};
  if (!strcmp(n->op_type, "FakeQuantizeLearnablePerchannelAffine")) {
    f.axis = 0;
    if (onnx_attr_int(im, n, "quant_min", 0, &f.qmin) ||
        onnx_attr_int(im, n, "quant_max", 255, &f.qmax))
      return QUILL_ERR_INVALID;
  } else {
    unsigned first = 3;
    if (!strcmp(n->op_type, "FixedPerChannelAffine")) {
      int64_t axis = 0;
      if (const_int(im, n, 3, "the channel axis", &axis))
        return QUILL_ERR_INVALID;
      quill_value *x;
      if (onnx_input(im, n, 0, &x))
        return QUILL_ERR_INVALID;
      quill_shape xs;
      onnx_shape(x, &xs);
      unsigned ax;
      if (!quill_shape_norm_axis(axis, xs.rank, &ax))
        return onnx_error(im, n, "channel axis %lld is out of range",
                          (long long)axis);
      f.axis = (int)ax;
      first = 4;
    }
    if (const_int(im, n, first, "quant_min", &f.qmin) ||
        const_int(im, n, first + 1, "quant_max", &f.qmax))
      return QUILL_ERR_INVALID;
  }
  if (f.qmin >= f.qmax)
    return onnx_error(im, n, "quant_min %lld must be below quant_max %lld",
                      (long long)f.qmin, (long long)f.qmax);
  return emit_fake_quant(im, n, &f);
}

/* Clip(q, lo, hi) on a quantized value with integer bounds: the clamp as a
 * requantize to the same parameters with range [max(qmin, lo), min(qmax,
 * hi)]. */
quill_status onnx_import_quant_clip(onnx_importer *im, const onnx_node *n,
                                    quill_value *x) {
  quill_context *ctx = im->ctx;
  quill_type *e = onnx_elem(x);
  int64_t lo = quill_type_quant_qmin(e), hi = quill_type_quant_qmax(e);
  for (unsigned i = 1; i <= 2; i++) {
    if (!onnx_opt_input(n, i))
      continue;
    int64_t v = 0;
    if (const_int(im, n, i, i == 1 ? "the lower bound" : "the upper bound",
                  &v))
      return QUILL_ERR_INVALID;
    if (i == 1 && v > lo)
      lo = v;
    if (i == 2 && v < hi)
      hi = v;
  }
  if (lo > hi)
    return onnx_error(im, n, "the bounds leave no value (%lld > %lld)",
                      (long long)lo, (long long)hi);
  size_t cnt = quill_type_quant_num_params(e);
  int32_t axis = quill_type_quant_axis_of(e);
  quill_type *st = quill_type_quant_storage(e);
  quill_type *ex = quill_type_quant_expressed(e);
  const double *s = quill_type_quant_scales(e);
  const int64_t *z = quill_type_quant_zero_points(e);
  for (size_t i = 0; i < cnt; i++)
    if (z[i] < lo || z[i] > hi)
      return onnx_error(im, n, "the bounds [%lld, %lld] exclude the zero "
                               "point %lld",
                        (long long)lo, (long long)hi, (long long)z[i]);
  quill_type *ne = axis >= 0
                       ? quill_type_quant_axis(ctx, st, ex, axis, cnt, s, z,
                                               lo, hi)
                       : quill_type_quant(ctx, st, ex, s[0], z[0], lo, hi);
  quill_value *r;
  if (!ne)
    return QUILL_ERR_NOMEM;
  if (onnx_emit1(im, n, QUILL_OP_REQUANTIZE, 1, &x,
                 quill_type_with_elem(ctx, quill_value_type(x), ne), 0, NULL,
                 &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

/*
 * ops_quant.c - import of ONNX QuantizeLinear / DequantizeLinear (the QDQ
 * format) into Quill's quantize / dequantize ops.
 *
 * Scale and zero point must be constants; they become the parameters of a
 * quantized element type (per tensor for scalar / one-element scales, per
 * axis along `axis` for 1-D scales). The zero point's type is the storage
 * type (u8 when absent). ONNX's DequantizeLinear takes raw integers, Quill's
 * dequantize a quantized value, so the operand must be either
 *
 *   - the result of a QuantizeLinear with the same parameters, or
 *   - a constant integer tensor (an initializer), which is re-emitted as a
 *     constant of the quantized type (same storage bytes).
 */
#include <string.h>

#include "frontends/onnx/onnx_impl.h"

/* Build the quantized element type for the node's scale (input 1) and zero
 * point (input 2) applied to a tensor of shape `s` and float type `expr`. */
static quill_status quant_type(onnx_importer *im, const onnx_node *n,
                               const quill_shape *s, quill_type *expr,
                               quill_type **out) {
  quill_context *ctx = im->ctx;
  quill_value *sv;
  if (onnx_input(im, n, 1, &sv))
    return QUILL_ERR_INVALID;
  const quill_attr *sa = quill_value_constant(sv);
  quill_value *zv = onnx_opt_input(n, 2);
  const quill_attr *za = zv ? quill_value_constant(zv) : NULL;
  if (!sa || (zv && !za))
    return onnx_error(im, n, "scale and zero point must be constants");
  quill_type *st = quill_attr_dense_type(sa);
  quill_type *storage = za ? quill_type_elem(quill_attr_dense_type(za))
                           : quill_type_scalar(ctx, QUILL_TYPE_U8);
  if (!quill_type_is_integer(storage) || quill_type_bit_width(storage) > 32)
    return onnx_error(im, n, "unsupported zero point type");
  if (!quill_type_is_float(quill_type_elem(st)))
    return onnx_error(im, n, "scale must be a float tensor");
  size_t cnt = (size_t)quill_type_num_elements(st);
  if (za && (size_t)quill_type_num_elements(quill_attr_dense_type(za)) != cnt)
    return onnx_error(im, n, "scale and zero point have different sizes");
  if (cnt == 0 || quill_type_rank(st) > 1)
    return onnx_error(im, n, "scale must be a scalar or a 1-D tensor");
  int64_t axis;
  if (onnx_attr_int(im, n, "axis", 1, &axis))
    return QUILL_ERR_INVALID;
  bool per_axis = quill_type_rank(st) == 1 && cnt > 1;
  unsigned ax = 0;
  if (per_axis) {
    if (!quill_shape_norm_axis(axis, s->rank, &ax))
      return onnx_error(im, n, "axis %lld is out of range for rank %u",
                        (long long)axis, s->rank);
    if (s->dims[ax] != (int64_t)cnt)
      return onnx_error(im, n, "scale has %zu elements but dimension %u has "
                               "size %lld",
                        cnt, ax, (long long)s->dims[ax]);
  }
  double *scales = quill_calloc(ctx, cnt, sizeof *scales);
  int64_t *zps = quill_calloc(ctx, cnt, sizeof *zps);
  quill_status st2 = scales && zps ? QUILL_OK : QUILL_ERR_NOMEM;
  for (size_t i = 0; !st2 && i < cnt; i++) {
    scales[i] = quill_attr_dense_get_f64(sa, i);
    zps[i] = za ? quill_attr_dense_get_i64(za, i) : 0;
  }
  int64_t qmin = quill_type_int_min(storage), qmax = quill_type_int_max(storage);
  const char *why = st2 ? NULL
                        : quill_type_quant_check(storage, expr, cnt, scales,
                                                 zps, qmin, qmax);
  if (why)
    st2 = onnx_error(im, n, "invalid quantization parameters: %s", why);
  quill_type *q = NULL;
  if (!st2) {
    q = per_axis ? quill_type_quant_axis(ctx, storage, expr, (int32_t)ax, cnt,
                                         scales, zps, qmin, qmax)
                 : quill_type_quant(ctx, storage, expr, scales[0], zps[0],
                                    qmin, qmax);
    if (!q)
      st2 = QUILL_ERR_NOMEM;
  }
  quill_free(ctx, scales, cnt * sizeof *scales);
  quill_free(ctx, zps, cnt * sizeof *zps);
  *out = q ? quill_shape_type(ctx, s, q) : NULL;
  if (!st2 && !*out)
    st2 = QUILL_ERR_NOMEM;
  return st2;
}

quill_status onnx_import_quant(onnx_importer *im, const onnx_node *n) {
  bool deq = n->op_type[0] == 'D';
  quill_value *x, *r, *sv;
  if (onnx_input(im, n, 0, &x) || onnx_input(im, n, 1, &sv))
    return QUILL_ERR_INVALID;
  quill_shape s;
  onnx_shape(x, &s);
  quill_type *expr = deq ? onnx_elem(sv) : onnx_elem(x);
  if (!quill_type_is_float(expr))
    return onnx_error(im, n, "%s must be a float tensor",
                      deq ? "the scale" : "the input");
  quill_type *qt = NULL;
  if (quant_type(im, n, &s, expr, &qt))
    return QUILL_ERR_INVALID;
  if (!deq) {
    if (onnx_emit1(im, n, QUILL_OP_QUANTIZE, 1, &x, qt, 0, NULL, &r))
      return QUILL_ERR_INVALID;
    return onnx_set_output(im, n, 0, r);
  }
  quill_type *xe = onnx_elem(x);
  if (quill_type_is_quant(xe)) {
    if (quill_value_type(x) != qt)
      return onnx_error(im, n, "input is quantized with other parameters "
                               "than this node's scale and zero point");
  } else {
    const quill_attr *c = quill_value_constant(x);
    if (!c || xe != quill_type_quant_storage(quill_type_elem(qt)))
      return onnx_error(im, n, "input must be a constant of the zero point's "
                               "type or the output of a QuantizeLinear");
    const quill_attr *qc = quill_attr_dense(im->ctx, qt,
                                            quill_attr_dense_data(c),
                                            quill_attr_dense_size(c));
    if (onnx_emit_constant(im, n, qc, &x))
      return QUILL_ERR_INVALID;
  }
  if (onnx_emit1(im, n, QUILL_OP_DEQUANTIZE, 1, &x,
                 quill_type_with_elem(im->ctx, qt, expr), 0, NULL, &r))
    return QUILL_ERR_INVALID;
  return onnx_set_output(im, n, 0, r);
}

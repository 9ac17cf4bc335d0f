/*
 * ops_quant.c - ONNX builders for constants, graph outputs and the
 * quantization ops (QDQ format and ONNX's integer ops).
 *
 *   constant (float, from an initializer)  initializer named like the value
 *   constant (located at another node)     Constant node (keeps the name)
 *   constant : !quant.uniform<...>         initializer of the storage type
 *   quantize     QuantizeLinear(x, scale, zp) [+ Clip for i8<-127:127>]
 *   dequantize   DequantizeLinear(q, scale, zp)
 *   requantize   DequantizeLinear -> QuantizeLinear
 *   fake_quant   QuantizeLinear -> DequantizeLinear with its `quant` type;
 *                Identity before calibration
 *   qconv2d      QLinearConv (ConvInteger [+ Add bias] for an i32 result)
 *   qmatmul      QLinearMatMul; MatMulInteger [+ Add bias] for an i32
 *                result; with a bias and a quantized result:
 *                MatMulInteger -> Add -> Cast -> Mul(s_a*s_b/s_y in f32) ->
 *                QuantizeLinear(scale 1, zp_y), which is Quill's float
 *                requantization step by step
 *   scast        Identity (the storage does not change)
 *   dynamic_quantize  DynamicQuantizeLinear
 *
 * Scales are f32 initializers (scalar, or 1-D with `axis` for per-axis
 * types), zero points initializers of the storage type; both are made once
 * per quantized type and shared (ex_quant_params).
 */
#include <string.h>

#include "targets/onnx/export_impl.h"
#include "ir/quant.h"

/* ---- scale and zero point ---------------------------------------------------- */

/* Store v as a little-endian integer of `bytes` bytes. */
static void put_int(unsigned char *dst, size_t bytes, int64_t v) {
  for (size_t i = 0; i < bytes; i++)
    dst[i] = (unsigned char)((uint64_t)v >> (8 * i));
}

const ex_qparams *ex_quant_params(onnx_exporter *ex, const quill_type *qelem,
                                  const char *base, bool scale, bool zp) {
  ex_qparams *p = ex_pmap_get(&ex->qparams, qelem);
  if (!p) {
    if (!(p = ex_alloc(ex, sizeof *p)))
      return NULL;
    p->axis = quill_type_quant_axis_of(qelem);
    ex_pmap_put(ex, &ex->qparams, qelem, p);
  }
  size_t n = quill_type_quant_num_params(qelem);
  bool scalar = p->axis < 0;
  if (!base || !*base)
    base = "q";
  if (scale && !p->scale) {
    p->scale = ex_init_f32s(ex, ex_printf(ex, "%s_scale", base), scalar, n,
                            quill_type_quant_scales(qelem));
    if (!p->scale)
      return NULL;
  }
  if (zp && !p->zero_point) {
    quill_type *storage = quill_type_quant_storage(qelem);
    size_t zb = quill_type_elem_bytes(storage);
    unsigned char *data = ex_alloc(ex, n * zb);
    if (!data)
      return NULL;
    const int64_t *zps = quill_type_quant_zero_points(qelem);
    for (size_t i = 0; i < n; i++)
      put_int(data + i * zb, zb, zps[i]);
    int64_t dim = (int64_t)n;
    p->zero_point = ex_init(ex, ex_printf(ex, "%s_zero_point", base),
                            ex_dtype(storage), scalar ? 0 : 1, &dim, data,
                            n * zb, false);
    if (!p->zero_point)
      return NULL;
  }
  return p;
}

quill_status ex_emit_dequantize(onnx_exporter *ex, const quill_op *op,
                                const char *in, const char *out,
                                const quill_type *qt) {
  const ex_qparams *p =
      ex_quant_params(ex, quill_type_elem(qt), in, true, true);
  if (!p)
    return QUILL_ERR_NOMEM;
  const char *ins[3] = {in, p->scale, p->zero_point};
  Onnx__NodeProto *n = ex_node(ex, "DequantizeLinear", 3, ins, 1, &out);
  if (!n)
    return QUILL_ERR_NOMEM;
  if (p->axis >= 0)
    ex_attr_int(ex, n, "axis", p->axis);
  return QUILL_OK;
}

/* Clip(in, lo, hi) -> out on storage integers of quant type qelem. */
static quill_status emit_int_clip(onnx_exporter *ex, const char *in,
                                  const char *out, const quill_type *qelem,
                                  int64_t lo, int64_t hi) {
  const char *ins[3] = {
      in, ex_init_scalar(ex, ex_printf(ex, "%s_qmin", out), qelem, (double)lo),
      ex_init_scalar(ex, ex_printf(ex, "%s_qmax", out), qelem, (double)hi)};
  if (!ins[1] || !ins[2])
    return QUILL_ERR_NOMEM;
  bool aux = ex->aux_mode;
  ex->aux_mode = true;
  Onnx__NodeProto *n = ex_node(ex, "Clip", 3, ins, 1, &out);
  ex->aux_mode = aux;
  return n ? QUILL_OK : QUILL_ERR_NOMEM;
}

/* Whether [lo, hi] is narrower than qelem's storage range. */
static bool narrows(const quill_type *qelem, int64_t lo, int64_t hi) {
  quill_type *st = quill_type_quant_storage(qelem);
  return lo > quill_type_int_min(st) || hi < quill_type_int_max(st);
}

quill_status ex_emit_quantize(onnx_exporter *ex, const quill_op *op,
                              const char *in, const char *out,
                              const quill_type *qt) {
  const quill_type *qe = quill_type_elem(qt);
  if (quill_type_kind_of(quill_type_quant_storage(qe)) == QUILL_TYPE_I32)
    return ex_op_error(ex, op, "ONNX QuantizeLinear produces int8 or uint8, "
                               "not i32");
  const ex_qparams *p = ex_quant_params(ex, qe, out, true, true);
  if (!p)
    return QUILL_ERR_NOMEM;
  int64_t lo = quill_type_quant_qmin(qe), hi = quill_type_quant_qmax(qe);
  bool clip = narrows(qe, lo, hi);
  const char *q = clip ? ex_fresh(ex, ex_printf(ex, "%s_unclipped", out)) : out;
  const char *ins[3] = {in, p->scale, p->zero_point};
  Onnx__NodeProto *n = q ? ex_node(ex, "QuantizeLinear", 3, ins, 1, &q) : NULL;
  if (!n)
    return QUILL_ERR_NOMEM;
  if (p->axis >= 0)
    ex_attr_int(ex, n, "axis", p->axis);
  return clip ? emit_int_clip(ex, q, out, qe, lo, hi) : QUILL_OK;
}

quill_status ex_emit_round_to_storage(onnx_exporter *ex, const quill_op *op,
                                      const char *in, const char *out,
                                      const quill_type *qelem) {
  quill_type *st = quill_type_quant_storage(qelem);
  double one = 1.0;
  const char *ins[3] = {
      in, ex_init_f32s(ex, ex_printf(ex, "%s_unit_scale", out), true, 1, &one),
      ex_init_scalar(ex, ex_printf(ex, "%s_zero", out), st, 0.0)};
  if (!ins[1] || !ins[2])
    return QUILL_ERR_NOMEM;
  int64_t lo = quill_type_quant_qmin(qelem), hi = quill_type_quant_qmax(qelem);
  bool clip = narrows(qelem, lo, hi);
  const char *q = clip ? ex_fresh(ex, ex_printf(ex, "%s_unclipped", out)) : out;
  if (!q || !ex_node(ex, "QuantizeLinear", 3, ins, 1, &q))
    return QUILL_ERR_NOMEM;
  (void)op;
  return clip ? emit_int_clip(ex, q, out, qelem, lo, hi) : QUILL_OK;
}

/* The op's `rounding`, or NULL for the default half_even. */
static const char *rounding_of(const quill_op *op) {
  const quill_attr *r = quill_op_attr(op, "rounding");
  if (!r || quill_attr_kind_of(r) != QUILL_ATTR_STRING)
    return NULL;
  const char *s = quill_attr_string_value(r, NULL);
  return strcmp(s, "half_even") ? s : NULL;
}

/* ---- constants and outputs -------------------------------------------------- */

quill_status ex_build_constant(onnx_exporter *ex, const quill_op *op) {
  const quill_attr *a = quill_op_attr(op, "value");
  quill_value *v = quill_op_result(op, 0);
  quill_type *t = quill_attr_dense_type(a);
  const char *name = ex_out(ex, op, 0), *raw = quill_value_name(v);
  quill_loc loc = quill_op_loc(op);
  bool quant = quill_type_is_quant(quill_type_elem(t));
  /* A Constant node keeps a location that differs from the value's name
   * (e.g. a folded shape computation); graph outputs must be node
   * outputs. Everything else is an initializer. */
  bool as_node = ex_pmap_get(&ex->returned, v) ||
                 (!quant && loc.name && (!raw || strcmp(loc.name, raw)));
  Onnx__TensorProto *tp =
      ex_tensor(ex, as_node ? NULL : name, ex_dtype(quill_type_elem(t)),
                quill_type_rank(t), quill_type_dims(t),
                quill_attr_dense_data(a), quill_attr_dense_size(a), false);
  if (!tp)
    return QUILL_ERR_NOMEM;
  if (!as_node) {
    ex_vec_push(ex, &ex->inits, tp);
    return QUILL_OK;
  }
  Onnx__NodeProto *n = ex_node(ex, "Constant", 0, NULL, 1, &name);
  if (!n)
    return QUILL_ERR_NOMEM;
  ex_attr_tensor(ex, n, "value", tp);
  return QUILL_OK;
}

/* return: graph outputs. A graph argument or a value returned twice goes
 * through an Identity (ONNX output names are unique node outputs). */
quill_status ex_build_return(onnx_exporter *ex, const quill_op *op) {
  ex_map seen = {0};
  quill_status st = QUILL_OK;
  for (unsigned i = 0; !st && i < quill_op_num_operands(op); i++) {
    quill_value *v = quill_op_operand(op, i);
    const char *name = ex_in(ex, op, i);
    if (quill_value_is_arg(v) || ex_smap_get(&seen, name)) {
      const char *out = ex_fresh(ex, ex_printf(ex, "%s_out", name));
      if (!out || !ex_node(ex, "Identity", 1, &name, 1, &out))
        st = QUILL_ERR_NOMEM;
      name = out;
    }
    ex_smap_put(ex, &seen, name, (void *)name);
    ex_vec_push(ex, &ex->outputs,
                ex_value_info(ex, name, quill_value_type(v)));
  }
  ex_map_free(ex, &seen);
  return st;
}

/* ---- QDQ ops ------------------------------------------------------------------ */

quill_status ex_build_quantize(onnx_exporter *ex, const quill_op *op) {
  const char *r = rounding_of(op);
  if (r)
    ex_op_warning(ex, op, "'quantize' op rounds \"%s\", but ONNX "
                          "QuantizeLinear rounds half to even: ties may "
                          "differ",
                  r);
  return ex_emit_quantize(ex, op, ex_in(ex, op, 0), ex_out(ex, op, 0),
                          quill_value_type(quill_op_result(op, 0)));
}

quill_status ex_build_dequantize(onnx_exporter *ex, const quill_op *op) {
  return ex_emit_dequantize(ex, op, ex_in(ex, op, 0), ex_out(ex, op, 0),
                            quill_value_type(quill_op_operand(op, 0)));
}

quill_status ex_build_requantize(onnx_exporter *ex, const quill_op *op) {
  const char *r = rounding_of(op);
  if (quill_op_attr(op, "multiplier") || r)
    ex_op_warning(ex, op, "'requantize' op uses %s requantization; ONNX "
                          "DequantizeLinear -> QuantizeLinear computes it in "
                          "float, rounding half to even: results may differ "
                          "by one",
                  quill_op_attr(op, "multiplier") ? "fixed-point"
                                                  : "non-default rounding");
  const char *y = ex_out(ex, op, 0);
  const char *f = ex_fresh(ex, ex_printf(ex, "%s_dequantized", y));
  if (!f)
    return QUILL_ERR_NOMEM;
  quill_status st = ex_emit_dequantize(
      ex, op, ex_in(ex, op, 0), f, quill_value_type(quill_op_operand(op, 0)));
  return st ? st
            : ex_emit_quantize(ex, op, f, y,
                               quill_value_type(quill_op_result(op, 0)));
}

quill_status ex_build_fake_quant(onnx_exporter *ex, const quill_op *op) {
  const char *x = ex_in(ex, op, 0), *y = ex_out(ex, op, 0);
  const quill_attr *qa = quill_op_attr(op, "quant");
  if (!qa)
    return ex_node(ex, "Identity", 1, &x, 1, &y) ? QUILL_OK : QUILL_ERR_NOMEM;
  quill_type *qt = quill_attr_kind_of(qa) == QUILL_ATTR_TYPE
                       ? quill_attr_type_value(qa)
                       : NULL;
  if (qt && quill_type_is_tensor(qt))
    qt = quill_type_elem(qt);
  if (!qt || !quill_type_is_quant(qt))
    return ex_op_error(ex, op, "attribute 'quant' must be a quantized type");
  quill_type *tt =
      quill_type_with_elem(ex->ctx, quill_value_type(quill_op_result(op, 0)),
                           qt);
  const char *q = ex_fresh(ex, ex_printf(ex, "%s_quantized", y));
  if (!tt || !q)
    return QUILL_ERR_NOMEM;
  quill_status st = ex_emit_quantize(ex, op, x, q, tt);
  return st ? st : ex_emit_dequantize(ex, op, q, y, tt);
}

quill_status ex_build_scast(onnx_exporter *ex, const quill_op *op) {
  const char *x = ex_in(ex, op, 0), *y = ex_out(ex, op, 0);
  return ex_node(ex, "Identity", 1, &x, 1, &y) ? QUILL_OK : QUILL_ERR_NOMEM;
}

quill_status ex_build_dynamic_quantize(onnx_exporter *ex, const quill_op *op) {
  const char *x = ex_in(ex, op, 0);
  const char *out[3] = {ex_out(ex, op, 0), ex_out(ex, op, 1),
                        ex_out(ex, op, 2)};
  return ex_node(ex, "DynamicQuantizeLinear", 1, &x, 3, out)
             ? QUILL_OK
             : QUILL_ERR_NOMEM;
}

/* ---- integer ops ------------------------------------------------------------- */

static quill_type *operand_elem(const quill_op *op, unsigned i) {
  return quill_type_elem(quill_value_type(quill_op_operand(op, i)));
}

/* Warn where ONNX's float requantization differs from the op's. */
static void check_requant(onnx_exporter *ex, const quill_op *op) {
  const char *r = rounding_of(op);
  if (quill_op_attr(op, "multiplier"))
    ex_op_warning(ex, op, "'%s' op uses fixed-point requantization; the "
                          "ONNX op requantizes in float: results may differ "
                          "by one",
                  quill_op_name(op));
  else if (r)
    ex_op_warning(ex, op, "'%s' op rounds \"%s\"; the ONNX op rounds half to "
                          "even: ties may differ",
                  quill_op_name(op), r);
}

/* The fused activation bounds act_min/act_max (quantized domain). */
static quill_status emit_act_clip(onnx_exporter *ex, const quill_op *op,
                                  const char *in, const char *out) {
  quill_type *re = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  int64_t lo = quill_op_attr_int(op, "act_min", quill_type_quant_qmin(re));
  int64_t hi = quill_op_attr_int(op, "act_max", quill_type_quant_qmax(re));
  lo = lo > quill_type_quant_qmin(re) ? lo : quill_type_quant_qmin(re);
  hi = hi < quill_type_quant_qmax(re) ? hi : quill_type_quant_qmax(re);
  return emit_int_clip(ex, in, out, re, lo, hi);
}

/* Whether the result needs a clamp after the ONNX op (fused activation or
 * a narrowed storage range). */
static bool needs_act_clip(const quill_op *op) {
  quill_type *re = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  return quill_op_attr(op, "act_min") || quill_op_attr(op, "act_max") ||
         narrows(re, quill_type_quant_qmin(re), quill_type_quant_qmax(re));
}

/* Optional bias add for i32 accumulators: acc + reshape(b) -> out. For
 * convolutions the [C] bias is reshaped to [C, 1, 1]. */
static quill_status emit_bias_add(onnx_exporter *ex, const quill_op *op,
                                  const char *acc, const char *out,
                                  bool conv) {
  const char *b = ex_in(ex, op, 2);
  if (conv) {
    int64_t shape[3] = {-1, 1, 1};
    const char *s = ex_init_i64s(ex, ex_printf(ex, "%s_bias_shape", out), 3,
                                 shape);
    const char *rb = ex_fresh(ex, ex_printf(ex, "%s_bias", out));
    const char *in[2] = {b, s};
    if (!s || !rb || !ex_node(ex, "Reshape", 2, in, 1, &rb))
      return QUILL_ERR_NOMEM;
    b = rb;
  }
  const char *in[2] = {acc, b};
  return ex_node(ex, "Add", 2, in, 1, &out) ? QUILL_OK : QUILL_ERR_NOMEM;
}

static quill_status check_per_tensor(onnx_exporter *ex, const quill_op *op,
                                     unsigned i) {
  if (quill_type_quant_axis_of(operand_elem(op, i)) >= 0)
    return ex_op_error(ex, op, "operand #%u must be quantized per tensor", i);
  return QUILL_OK;
}

quill_status ex_build_qconv2d(onnx_exporter *ex, const quill_op *op) {
  static const char *const conv_attrs[] = {"strides", "pads", "dilations",
                                           "group", "auto_pad", "kernel_shape",
                                           NULL};
  quill_type *xe = operand_elem(op, 0), *we = operand_elem(op, 1);
  quill_type *re = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  bool bias = quill_op_num_operands(op) > 2;
  const char *y = ex_out(ex, op, 0);
  if (check_per_tensor(ex, op, 0))
    return QUILL_ERR_INVALID;
  bool acc_result = quill_type_kind_of(re) == QUILL_TYPE_I32;
  const ex_qparams *px =
      ex_quant_params(ex, xe, ex_in(ex, op, 0), !acc_result, true);
  const ex_qparams *pw =
      ex_quant_params(ex, we, ex_in(ex, op, 1), !acc_result, true);
  if (!px || !pw)
    return QUILL_ERR_NOMEM;
  if (acc_result) {
    const char *acc = bias ? ex_fresh(ex, ex_printf(ex, "%s_acc", y)) : y;
    const char *in[4] = {ex_in(ex, op, 0), ex_in(ex, op, 1), px->zero_point,
                         pw->zero_point};
    Onnx__NodeProto *n =
        acc ? ex_node(ex, "ConvInteger", 4, in, 1, &acc) : NULL;
    if (!n)
      return QUILL_ERR_NOMEM;
    for (const char *const *a = conv_attrs; *a; a++)
      if (quill_op_attr(op, *a))
        ex_attr_from_quill(ex, n, *a, quill_op_attr(op, *a));
    return bias ? emit_bias_add(ex, op, acc, y, true) : QUILL_OK;
  }
  check_requant(ex, op);
  const ex_qparams *py = ex_quant_params(ex, re, y, true, true);
  if (!py)
    return QUILL_ERR_NOMEM;
  bool clip = needs_act_clip(op);
  const char *q = clip ? ex_fresh(ex, ex_printf(ex, "%s_unclipped", y)) : y;
  const char *in[9] = {ex_in(ex, op, 0), px->scale,      px->zero_point,
                       ex_in(ex, op, 1), pw->scale,      pw->zero_point,
                       py->scale,        py->zero_point, bias ? ex_in(ex, op, 2)
                                                              : ""};
  Onnx__NodeProto *n =
      q ? ex_node(ex, "QLinearConv", bias ? 9 : 8, in, 1, &q) : NULL;
  if (!n)
    return QUILL_ERR_NOMEM;
  for (const char *const *a = conv_attrs; *a; a++)
    if (quill_op_attr(op, *a))
      ex_attr_from_quill(ex, n, *a, quill_op_attr(op, *a));
  return clip ? emit_act_clip(ex, op, q, y) : QUILL_OK;
}

quill_status ex_build_qmatmul(onnx_exporter *ex, const quill_op *op) {
  quill_type *ae = operand_elem(op, 0), *be = operand_elem(op, 1);
  quill_type *re = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  bool bias = quill_op_num_operands(op) > 2;
  const char *y = ex_out(ex, op, 0);
  if (check_per_tensor(ex, op, 0))
    return QUILL_ERR_INVALID;
  bool acc_result = quill_type_kind_of(re) == QUILL_TYPE_I32;
  bool qlinear = !acc_result && !bias;
  const ex_qparams *pa =
      ex_quant_params(ex, ae, ex_in(ex, op, 0), qlinear, true);
  const ex_qparams *pb =
      ex_quant_params(ex, be, ex_in(ex, op, 1), qlinear, true);
  if (!pa || !pb)
    return QUILL_ERR_NOMEM;
  if (!acc_result)
    check_requant(ex, op);
  const ex_qparams *py =
      acc_result ? NULL : ex_quant_params(ex, re, y, qlinear, true);
  if (!acc_result && !py)
    return QUILL_ERR_NOMEM;
  bool clip = !acc_result && needs_act_clip(op);
  const char *q = clip ? ex_fresh(ex, ex_printf(ex, "%s_unclipped", y)) : y;
  if (!q)
    return QUILL_ERR_NOMEM;
  if (qlinear) {
    const char *in[8] = {ex_in(ex, op, 0), pa->scale, pa->zero_point,
                         ex_in(ex, op, 1), pb->scale, pb->zero_point,
                         py->scale,        py->zero_point};
    if (!ex_node(ex, "QLinearMatMul", 8, in, 1, &q))
      return QUILL_ERR_NOMEM;
    return clip ? emit_act_clip(ex, op, q, y) : QUILL_OK;
  }
  /* MatMulInteger [+ bias] (+ float requantization). */
  const char *acc = acc_result && !bias
                        ? y
                        : ex_fresh(ex, ex_printf(ex, "%s_acc", y));
  const char *in[4] = {ex_in(ex, op, 0), ex_in(ex, op, 1), pa->zero_point,
                       pb->zero_point};
  if (!acc || !ex_node(ex, "MatMulInteger", 4, in, 1, &acc))
    return QUILL_ERR_NOMEM;
  const char *sum = acc;
  if (bias) {
    sum = acc_result ? y : ex_fresh(ex, ex_printf(ex, "%s_biased", y));
    if (!sum || emit_bias_add(ex, op, acc, sum, false))
      return QUILL_ERR_NOMEM;
  }
  if (acc_result)
    return QUILL_OK;
  /* v = (f32)acc * (f32)(s_a*s_b/s_y) per column, then
   * QuantizeLinear(v, 1, zp_y) rounds half to even and saturates. */
  size_t nb = quill_type_quant_num_params(be);
  double *scale = ex_alloc(ex, nb * sizeof *scale);
  const char *f = ex_fresh(ex, ex_printf(ex, "%s_accf", y));
  const char *scaled = ex_fresh(ex, ex_printf(ex, "%s_scaled", y));
  if (!scale || !f || !scaled)
    return QUILL_ERR_NOMEM;
  for (size_t i = 0; i < nb; i++)
    scale[i] = quill_requant_scale_f32(quill_type_quant_scales(ae)[0],
                                       quill_type_quant_scales(be)[i],
                                       quill_type_quant_scales(re)[0]);
  const char *sname = ex_init_f32s(ex, ex_printf(ex, "%s_multiplier", y),
                                   nb == 1, nb, scale);
  double one = 1.0;
  const char *unit = ex_init_f32s(ex, ex_printf(ex, "%s_unit_scale", y), true,
                                  1, &one);
  Onnx__NodeProto *cast = ex_node(ex, "Cast", 1, &sum, 1, &f);
  if (!sname || !unit || !cast)
    return QUILL_ERR_NOMEM;
  ex_attr_int(ex, cast, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
  const char *min[2] = {f, sname};
  const char *qin[3] = {scaled, unit, py->zero_point};
  if (!ex_node(ex, "Mul", 2, min, 1, &scaled) ||
      !ex_node(ex, "QuantizeLinear", 3, qin, 1, &q))
    return QUILL_ERR_NOMEM;
  return clip ? emit_act_clip(ex, op, q, y) : QUILL_OK;
}

/* ---- qadd, qmul, lut ---------------------------------------------------------- */

/* qadd / qmul: DequantizeLinear both operands, Add / Mul in f32, then
 * QuantizeLinear and the fused activation clamp. This is the op's float
 * requantization (docs/quantization.md 3) step by step; fixed-point
 * parameters and other rounding policies export with a warning. */
quill_status ex_build_qbinary(onnx_exporter *ex, const quill_op *op) {
  bool add = quill_op_opcode(op) == QUILL_OP_QADD;
  const char *r = rounding_of(op);
  if (quill_op_attr(op, "multiplier") || r)
    ex_op_warning(ex, op, "'%s' op uses %s requantization; ONNX computes it "
                          "in float, rounding half to even: results may "
                          "differ by one",
                  quill_op_name(op),
                  quill_op_attr(op, "multiplier") ? "fixed-point"
                                                  : "non-default rounding");
  const char *y = ex_out(ex, op, 0);
  const char *d[2];
  for (unsigned i = 0; i < 2; i++) {
    d[i] = ex_fresh(ex, ex_printf(ex, "%s_in%u_dequantized", y, i));
    if (!d[i])
      return QUILL_ERR_NOMEM;
    quill_status st =
        ex_emit_dequantize(ex, op, ex_in(ex, op, i), d[i],
                           quill_value_type(quill_op_operand(op, i)));
    if (st)
      return st;
  }
  const char *f = ex_fresh(ex, ex_printf(ex, "%s_float", y));
  if (!f || !ex_node(ex, add ? "Add" : "Mul", 2, d, 1, &f))
    return QUILL_ERR_NOMEM;
  quill_type *rt = quill_value_type(quill_op_result(op, 0));
  if (!needs_act_clip(op))
    return ex_emit_quantize(ex, op, f, y, rt);
  const char *q = ex_fresh(ex, ex_printf(ex, "%s_unclamped", y));
  if (!q)
    return QUILL_ERR_NOMEM;
  quill_status st = ex_emit_quantize(ex, op, f, q, rt);
  return st ? st : emit_act_clip(ex, op, q, y);
}

/* lut: y = table[x - storage_min], exactly, as
 * Gather(table, Cast<int32>(x) - storage_min). */
quill_status ex_build_lut(onnx_exporter *ex, const quill_op *op) {
  const quill_attr *t = quill_op_attr(op, "table");
  if (!t || quill_attr_kind_of(t) != QUILL_ATTR_DENSE)
    return ex_op_error(ex, op, "attribute 'table' must be a dense tensor");
  quill_type *tt = quill_attr_dense_type(t);
  quill_type *te = quill_type_elem(tt);
  if (quill_type_is_quant(te))
    te = quill_type_quant_storage(te);
  int64_t n = quill_type_num_elements(tt);
  const char *y = ex_out(ex, op, 0);
  const char *table = ex_init(ex, ex_printf(ex, "%s_table", y), ex_dtype(te),
                              1, &n, quill_attr_dense_data(t),
                              quill_attr_dense_size(t), false);
  quill_type *xe = quill_type_elem(quill_value_type(quill_op_operand(op, 0)));
  quill_type *xs = quill_type_is_quant(xe) ? quill_type_quant_storage(xe) : xe;
  quill_type *i32 = quill_type_scalar(ex->ctx, QUILL_TYPE_I32);
  const char *offset = ex_init_scalar(ex, ex_printf(ex, "%s_offset", y), i32,
                                      (double)-quill_type_int_min(xs));
  const char *x32 = ex_fresh(ex, ex_printf(ex, "%s_index32", y));
  const char *idx = ex_fresh(ex, ex_printf(ex, "%s_index", y));
  if (!table || !offset || !x32 || !idx)
    return QUILL_ERR_NOMEM;
  const char *x = ex_in(ex, op, 0);
  Onnx__NodeProto *c = ex_node(ex, "Cast", 1, &x, 1, &x32);
  if (!c)
    return QUILL_ERR_NOMEM;
  ex_attr_int(ex, c, "to", ex_dtype(i32));
  const char *add_in[2] = {x32, offset};
  const char *gather_in[2] = {table, idx};
  if (!ex_node(ex, "Add", 2, add_in, 1, &idx) ||
      !ex_node(ex, "Gather", 2, gather_in, 1, &y))
    return QUILL_ERR_NOMEM;
  return QUILL_OK;
}

/*
 * ops_float.c - ONNX builders for float ops that are not 1:1: where ONNX
 * (opset 13) takes an input that Quill keeps as an attribute or in the
 * result type, the value becomes an initializer:
 *
 *   reshape x : tensor<2x12xf32>       Reshape(x, shape=[2, 12])
 *   split x {axis} : T1, T2            Split(x, split=[d1, d2]) {axis}
 *   slice x {starts, ends, axes, steps}  Slice(x, starts, ends, axes, steps)
 *   pad x {pads, mode, value}          Pad(x, pads, constant_value) {mode}
 *   squeeze / unsqueeze x {axes}       (Un)Squeeze(x, axes)
 *   resize x {..., scales?} : T        Resize(x, "", scales | "", sizes)
 *   reduce_sum x {axes, keepdims}      ReduceSum(x, axes) {keepdims}
 *   clip x {min, max}                  Clip(x, min, max)
 *
 * gelu (ONNX opset 20) is written as its formula. Quantized operands reach
 * these builders either dequantized by the driver (ex_in_elem() says
 * float) or, for ops that move stored values, as storage integers: pad
 * then pads with the quantized value (zero point for 0.0).
 */
#include <math.h>
#include <string.h>

#include "targets/onnx/export_impl.h"
#include "ir/quant.h"

/* A one-input node op_type(x) -> out of the current op. */
static Onnx__NodeProto *node1(onnx_exporter *ex, const char *op_type,
                              const char *in, const char *out) {
  return ex_node(ex, op_type, 1, &in, 1, &out);
}

static Onnx__NodeProto *node2(onnx_exporter *ex, const char *op_type,
                              const char *a, const char *b, const char *out) {
  const char *in[2] = {a, b};
  return ex_node(ex, op_type, 2, in, 1, &out);
}

/* A fresh intermediate tensor name "<base>_<what>" (reserved). */
static const char *tmp_name(onnx_exporter *ex, const char *base,
                            const char *what) {
  const char *n = ex_printf(ex, "%s_%s", base, what);
  return n ? ex_fresh(ex, n) : NULL;
}

/* The base "<base>_<what>" of an initializer name (ex_init makes it
 * unique). */
static const char *init_name(onnx_exporter *ex, const char *base,
                             const char *what) {
  return ex_printf(ex, "%s_%s", base, what);
}

/* Copy the listed attributes of op that are present. */
static quill_status copy_attrs(onnx_exporter *ex, const quill_op *op,
                               Onnx__NodeProto *n,
                               const char *const *names) {
  if (!n)
    return QUILL_ERR_NOMEM;
  for (; *names; names++) {
    const quill_attr *a = quill_op_attr(op, *names);
    if (a && !ex_attr_from_quill(ex, n, *names, a))
      return ex_op_error(ex, op, "attribute '%s' has no ONNX form", *names);
  }
  return QUILL_OK;
}

/* ---- elementwise -------------------------------------------------------------- */

int ex_opset_relu(const quill_op *op) {
  /* Relu takes integer tensors from opset 14. */
  quill_type *e = quill_type_elem(quill_value_type(quill_op_operand(op, 0)));
  return quill_type_is_integer(e) ? 14 : 0;
}

int ex_opset_arith(const quill_op *op) {
  /* Add/Sub/Mul/Div take 8- and 16-bit integers from opset 14. */
  quill_type *e = quill_type_elem(quill_value_type(quill_op_operand(op, 0)));
  return quill_type_is_integer(e) && quill_type_bit_width(e) < 32 ? 14 : 0;
}

/* clip x [min [max]] or clip x {min, max}: ONNX wants scalar min/max
 * inputs of x's type. */
quill_status ex_build_clip(onnx_exporter *ex, const quill_op *op) {
  quill_type *elem = ex_in_elem(ex, op, 0);
  const char *out = ex_out(ex, op, 0);
  const char *in[3] = {ex_in(ex, op, 0), "", ""};
  static const char *const names[] = {"min", "max"};
  for (unsigned i = 1; i < 3; i++) {
    if (i < quill_op_num_operands(op)) {
      quill_value *v = quill_op_operand(op, i);
      const quill_attr *c = quill_value_constant(v);
      if (quill_type_rank(quill_value_type(v)) == 0) {
        in[i] = ex_in(ex, op, i);
      } else if (c && !quill_type_is_quant(quill_type_elem(
                          quill_attr_dense_type(c)))) {
        /* A [1] constant: re-emit it as a scalar. */
        in[i] = ex_init_scalar(ex, init_name(ex, out, names[i - 1]), elem,
                               quill_attr_dense_get_f64(c, 0));
      } else {
        /* A [1] value: reshape it to a scalar. */
        const char *shape = ex_init_i64s(ex, init_name(ex, out, "scalar"), 0,
                                         NULL);
        in[i] = tmp_name(ex, out, names[i - 1]);
        ex->aux_mode = true;
        bool ok = shape && in[i] &&
                  node2(ex, "Reshape", ex_in(ex, op, i), shape, in[i]);
        ex->aux_mode = false;
        if (!ok)
          return QUILL_ERR_NOMEM;
      }
      continue;
    }
    const quill_attr *a = quill_op_attr(op, names[i - 1]);
    if (!a)
      continue;
    double v = quill_op_attr_float(op, names[i - 1], 0.0);
    if (quill_type_is_integer(elem)) {
      /* Integer x: the tightest integer bound, within the type. */
      double lo = (double)quill_type_int_min(elem);
      double hi = (double)quill_type_int_max(elem);
      v = i == 1 ? ceil(v) : floor(v);
      v = v < lo ? lo : v > hi ? hi : v;
    }
    in[i] = ex_init_scalar(ex, init_name(ex, out, names[i - 1]), elem, v);
  }
  if (!in[1] || !in[2])
    return QUILL_ERR_NOMEM;
  unsigned nin = in[2][0] ? 3 : in[1][0] ? 2 : 1;
  return ex_node(ex, "Clip", nin, in, 1, &out) ? QUILL_OK : QUILL_ERR_NOMEM;
}

quill_status ex_build_cast(onnx_exporter *ex, const quill_op *op) {
  Onnx__NodeProto *n = node1(ex, "Cast", ex_in(ex, op, 0), ex_out(ex, op, 0));
  if (!n)
    return QUILL_ERR_NOMEM;
  ex_attr_int(ex, n, "to",
              ex_dtype(quill_type_elem(quill_value_type(quill_op_result(op, 0)))));
  return QUILL_OK;
}

/* gelu: "none"  y = x * (erf(x / sqrt(2)) + 1) * 0.5
 *       "tanh"  y = x * (tanh(sqrt(2/pi) * (x + 0.044715 x^3)) + 1) * 0.5 */
quill_status ex_build_gelu(onnx_exporter *ex, const quill_op *op) {
  quill_type *elem = ex_in_elem(ex, op, 0);
  const char *x = ex_in(ex, op, 0), *y = ex_out(ex, op, 0);
  const quill_attr *ap = quill_op_attr(op, "approximate");
  bool tanh_form = ap && quill_attr_kind_of(ap) == QUILL_ATTR_STRING &&
                   !strcmp(quill_attr_string_value(ap, NULL), "tanh");
  const char *one = ex_init_scalar(ex, init_name(ex, y, "one"), elem, 1.0);
  const char *half = ex_init_scalar(ex, init_name(ex, y, "half"), elem, 0.5);
  const char *t = tmp_name(ex, y, "t"), *u = tmp_name(ex, y, "u");
  const char *p = tmp_name(ex, y, "p"), *inner = tmp_name(ex, y, "inner");
  if (!one || !half || !t || !u || !p || !inner)
    return QUILL_ERR_NOMEM;
  bool ok;
  if (!tanh_form) {
    const char *sqrt2 =
        ex_init_scalar(ex, init_name(ex, y, "sqrt2"), elem, sqrt(2.0));
    ok = sqrt2 && node2(ex, "Div", x, sqrt2, inner) &&
         node1(ex, "Erf", inner, t);
  } else {
    const char *c = ex_init_scalar(ex, init_name(ex, y, "c"), elem, 0.044715);
    const char *k = ex_init_scalar(ex, init_name(ex, y, "k"), elem,
                                   sqrt(2.0 / 3.14159265358979323846));
    const char *x2 = tmp_name(ex, y, "x2"), *x3 = tmp_name(ex, y, "x3");
    const char *cx3 = tmp_name(ex, y, "cx3"), *s = tmp_name(ex, y, "s");
    ok = c && k && x2 && x3 && cx3 && s && node2(ex, "Mul", x, x, x2) &&
         node2(ex, "Mul", x2, x, x3) && node2(ex, "Mul", x3, c, cx3) &&
         node2(ex, "Add", x, cx3, s) && node2(ex, "Mul", s, k, inner) &&
         node1(ex, "Tanh", inner, t);
  }
  ok = ok && node2(ex, "Add", t, one, u) && node2(ex, "Mul", x, u, p) &&
       node2(ex, "Mul", p, half, y);
  return ok ? QUILL_OK : QUILL_ERR_NOMEM;
}

/* ---- pooling and reductions ------------------------------------------------- */

/* avgpool / global_avgpool. On quantized storage (equal input and output
 * types; docs/quantization.md section 3) the result is the rounded mean of
 * the stored values, round_half_even(s / n):
 *
 *   Cast(q -> f32) -> AveragePool -> QuantizeLinear(scale 1, zero point 0)
 *
 * (exact: window sums of 8-bit values are exact in f32, and a tie s / n =
 * k + 0.5 is representable). Dequantizing around a float AveragePool would
 * round mean(q - zp) instead, which differs at ties for odd zero points. */
quill_status ex_build_avgpool(onnx_exporter *ex, const quill_op *op) {
  bool global = quill_op_opcode(op) == QUILL_OP_GLOBAL_AVGPOOL;
  int64_t dil[QUILL_MAX_RANK];
  int64_t nd = quill_op_attr_ints(op, "dilations", dil, QUILL_MAX_RANK);
  for (int64_t i = 0; i < nd; i++)
    if (dil[i] != 1)
      return ex_op_error(ex, op, "AveragePool takes dilations only from "
                                 "opset 19");
  const char *x = ex_in(ex, op, 0), *y = ex_out(ex, op, 0);
  quill_type *qe = ex_in_elem(ex, op, 0);
  bool storage = quill_type_is_quant(qe);
  const char *pool_in = x, *pool_out = y;
  if (storage) {
    const quill_attr *r = quill_op_attr(op, "rounding");
    if (r && quill_attr_kind_of(r) == QUILL_ATTR_STRING &&
        strcmp(quill_attr_string_value(r, NULL), "half_even"))
      ex_op_warning(ex, op, "'%s' op rounds \"%s\"; the ONNX export rounds "
                            "the mean half to even: ties may differ",
                    quill_op_name(op), quill_attr_string_value(r, NULL));
    pool_in = tmp_name(ex, y, "stored");
    pool_out = tmp_name(ex, y, "mean");
    ex->aux_mode = true;
    Onnx__NodeProto *c = pool_in ? node1(ex, "Cast", x, pool_in) : NULL;
    ex->aux_mode = false;
    if (!c || !pool_out)
      return QUILL_ERR_NOMEM;
    ex_attr_int(ex, c, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
  }
  static const char *const attrs[] = {
      "kernel_shape", "strides", "pads", "ceil_mode", "count_include_pad",
      "auto_pad", NULL};
  static const char *const none[] = {NULL};
  quill_status st = copy_attrs(
      ex, op,
      node1(ex, global ? "GlobalAveragePool" : "AveragePool", pool_in,
            pool_out),
      global ? none : attrs);
  if (st || !storage)
    return st;
  ex->aux_mode = true;
  st = ex_emit_round_to_storage(ex, op, pool_out, y, qe);
  ex->aux_mode = false;
  return st;
}

/* reduce_*: axes is an attribute at opset 13 except for ReduceSum (input). */
quill_status ex_build_reduce(onnx_exporter *ex, const quill_op *op) {
  const char *op_type = onnx_export_table[quill_op_opcode(op)].op_type;
  const char *x = ex_in(ex, op, 0), *y = ex_out(ex, op, 0);
  int64_t axes[QUILL_MAX_RANK];
  int64_t na = quill_op_attr_ints(op, "axes", axes, QUILL_MAX_RANK);
  bool noop = quill_op_attr_int(op, "noop_with_empty_axes", 0) != 0;
  const quill_attr *kd = quill_op_attr(op, "keepdims");
  if (noop && na <= 0)
    return node1(ex, "Identity", x, y) ? QUILL_OK : QUILL_ERR_NOMEM;
  Onnx__NodeProto *n;
  if (quill_op_opcode(op) == QUILL_OP_REDUCE_SUM) {
    const char *in[2] = {x, ""};
    if (na > 0 &&
        !(in[1] = ex_init_i64s(ex, init_name(ex, y, "axes"), (size_t)na, axes)))
      return QUILL_ERR_NOMEM;
    n = ex_node(ex, op_type, na > 0 ? 2 : 1, in, 1, &y);
  } else {
    n = node1(ex, op_type, x, y);
    if (n && na > 0)
      ex_attr_ints(ex, n, "axes", (size_t)na, axes);
  }
  if (!n)
    return QUILL_ERR_NOMEM;
  if (kd)
    ex_attr_from_quill(ex, n, "keepdims", kd);
  return QUILL_OK;
}

/* ---- data movement ----------------------------------------------------------- */

quill_status ex_build_reshape(onnx_exporter *ex, const quill_op *op) {
  quill_type *rt = quill_value_type(quill_op_result(op, 0));
  unsigned rank = quill_type_rank(rt), dyn = 0;
  int64_t shape[QUILL_MAX_RANK];
  bool zero = false;
  for (unsigned i = 0; i < rank; i++) {
    shape[i] = quill_type_dim(rt, i);
    if (shape[i] == QUILL_DIM_DYNAMIC) {
      shape[i] = -1;
      dyn++;
    }
    zero = zero || shape[i] == 0;
  }
  if (dyn > 1)
    return ex_op_error(ex, op, "the result type has %u dynamic dimensions "
                               "(Reshape infers at most one)",
                       dyn);
  if (zero)
    return ex_op_error(ex, op, "a zero-sized result dimension needs "
                               "Reshape's allowzero (opset 14)");
  const char *y = ex_out(ex, op, 0);
  const char *s = ex_init_i64s(ex, init_name(ex, y, "shape"), rank, shape);
  return s && node2(ex, "Reshape", ex_in(ex, op, 0), s, y) ? QUILL_OK
                                                           : QUILL_ERR_NOMEM;
}

/* split x {axis}: sizes from the result types. */
quill_status ex_build_split(onnx_exporter *ex, const quill_op *op) {
  quill_type *xt = quill_value_type(quill_op_operand(op, 0));
  int64_t axis = quill_op_attr_int(op, "axis", 0);
  if (axis < 0)
    axis += quill_type_rank(xt);
  unsigned nr = quill_op_num_results(op);
  int64_t *sizes = ex_alloc(ex, nr * sizeof *sizes);
  const char **out = ex_alloc(ex, nr * sizeof *out);
  if (!sizes || !out)
    return QUILL_ERR_NOMEM;
  for (unsigned i = 0; i < nr; i++) {
    sizes[i] = quill_type_dim(quill_value_type(quill_op_result(op, i)),
                              (unsigned)axis);
    out[i] = ex_out(ex, op, i);
    if (sizes[i] == QUILL_DIM_DYNAMIC)
      return ex_op_error(ex, op, "result #%u has a dynamic split size", i);
  }
  const char *in[2] = {ex_in(ex, op, 0),
                       ex_init_i64s(ex, init_name(ex, out[0], "split"), nr,
                                    sizes)};
  Onnx__NodeProto *n = in[1] ? ex_node(ex, "Split", 2, in, nr, out) : NULL;
  if (!n)
    return QUILL_ERR_NOMEM;
  ex_attr_int(ex, n, "axis", axis);
  return QUILL_OK;
}

quill_status ex_build_slice(onnx_exporter *ex, const quill_op *op) {
  static const char *const names[] = {"starts", "ends", "axes", "steps"};
  const char *y = ex_out(ex, op, 0);
  const char *in[5] = {ex_in(ex, op, 0), "", "", "", ""};
  unsigned nin = 3;
  for (unsigned k = 0; k < 4; k++) {
    int64_t v[QUILL_MAX_RANK];
    int64_t n = quill_op_attr_ints(op, names[k], v, QUILL_MAX_RANK);
    if (n < 0)
      continue;
    if (!(in[k + 1] = ex_init_i64s(ex, init_name(ex, y, names[k]), (size_t)n,
                                   v)))
      return QUILL_ERR_NOMEM;
    if (k >= 2)
      nin = k + 2;
  }
  return ex_node(ex, "Slice", nin, in, 1, &y) ? QUILL_OK : QUILL_ERR_NOMEM;
}

static const char *pad_mode(const quill_op *op) {
  const quill_attr *m = quill_op_attr(op, "mode");
  if (!m || quill_attr_kind_of(m) != QUILL_ATTR_STRING)
    return "constant";
  return quill_attr_string_value(m, NULL);
}

int ex_opset_pad(const quill_op *op) {
  return strcmp(pad_mode(op), "wrap") ? 0 : 19;
}

/* pad x {pads, mode, value}; on quantized storage the pad value is
 * quantized (0.0 pads the zero point). */
quill_status ex_build_pad(onnx_exporter *ex, const quill_op *op) {
  const char *y = ex_out(ex, op, 0), *mode = pad_mode(op);
  int64_t pads[2 * QUILL_MAX_RANK];
  int64_t np = quill_op_attr_ints(op, "pads", pads, 2 * QUILL_MAX_RANK);
  quill_type *elem = ex_in_elem(ex, op, 0);
  double value = quill_op_attr_float(op, "value", 0.0);
  const char *in[3] = {ex_in(ex, op, 0),
                       ex_init_i64s(ex, init_name(ex, y, "pads"),
                                    np < 0 ? 0 : (size_t)np, pads),
                       ""};
  if (!in[1])
    return QUILL_ERR_NOMEM;
  bool constant = !strcmp(mode, "constant");
  if (constant && quill_type_is_quant(elem)) {
    if (quill_type_quant_axis_of(elem) >= 0)
      return ex_op_error(ex, op, "padding a per-axis quantized tensor");
    double s = quill_type_quant_scales(elem)[0];
    int64_t q = quill_type_quant_zero_points(elem)[0] +
                quill_round((double)((float)value / (float)s),
                            QUILL_ROUND_HALF_EVEN);
    q = quill_clamp_i64(q, quill_type_quant_qmin(elem),
                        quill_type_quant_qmax(elem));
    in[2] = ex_init_scalar(ex, init_name(ex, y, "value"), elem, (double)q);
  } else if (constant && value != 0.0) {
    in[2] = ex_init_scalar(ex, init_name(ex, y, "value"), elem, value);
  }
  if (!in[2])
    return QUILL_ERR_NOMEM;
  Onnx__NodeProto *n = ex_node(ex, "Pad", in[2][0] ? 3 : 2, in, 1, &y);
  if (!n)
    return QUILL_ERR_NOMEM;
  ex_attr_string(ex, n, "mode", mode, strlen(mode));
  return QUILL_OK;
}

/* squeeze / unsqueeze x {axes}: axes is an input from opset 13. */
quill_status ex_build_squeeze(onnx_exporter *ex, const quill_op *op) {
  const char *op_type = onnx_export_table[quill_op_opcode(op)].op_type;
  const char *y = ex_out(ex, op, 0);
  int64_t axes[QUILL_MAX_RANK];
  int64_t na = quill_op_attr_ints(op, "axes", axes, QUILL_MAX_RANK);
  const char *in[2] = {ex_in(ex, op, 0), ""};
  if (na >= 0 &&
      !(in[1] = ex_init_i64s(ex, init_name(ex, y, "axes"), (size_t)na, axes)))
    return QUILL_ERR_NOMEM;
  return ex_node(ex, op_type, na >= 0 ? 2 : 1, in, 1, &y) ? QUILL_OK
                                                           : QUILL_ERR_NOMEM;
}

static const char *resize_mode(const quill_op *op) {
  const quill_attr *m = quill_op_attr(op, "mode");
  if (!m || quill_attr_kind_of(m) != QUILL_ATTR_STRING)
    return "nearest";
  return quill_attr_string_value(m, NULL);
}

bool ex_storage_per_tensor(const quill_op *op) {
  quill_type *e = quill_type_elem(quill_value_type(quill_op_operand(op, 0)));
  return quill_type_quant_axis_of(e) < 0;
}

bool ex_storage_resize(const quill_op *op) {
  return !strcmp(resize_mode(op), "nearest");
}

/* resize x {mode, ..., scales?} : T -> Resize(x, roi, scales, sizes). */
quill_status ex_build_resize(onnx_exporter *ex, const quill_op *op) {
  const char *y = ex_out(ex, op, 0);
  quill_type *rt = quill_value_type(quill_op_result(op, 0));
  const quill_attr *sc = quill_op_attr(op, "scales");
  const char *in[4] = {ex_in(ex, op, 0), "", "", ""};
  const char *ct = NULL;
  const quill_attr *cta = quill_op_attr(op, "coordinate_transformation_mode");
  if (cta && quill_attr_kind_of(cta) == QUILL_ATTR_STRING)
    ct = quill_attr_string_value(cta, NULL);
  if (ct && !strcmp(ct, "tf_crop_and_resize"))
    return ex_op_error(ex, op, "coordinate_transformation_mode "
                               "\"tf_crop_and_resize\" needs a region of "
                               "interest, which Quill's resize does not keep");
  if (ct && !strcmp(ct, "half_pixel_symmetric"))
    return ex_op_error(ex, op, "coordinate_transformation_mode "
                               "\"half_pixel_symmetric\" needs opset 19");
  unsigned nin;
  if (sc && quill_attr_kind_of(sc) == QUILL_ATTR_LIST) {
    size_t n = quill_attr_list_size(sc);
    double v[QUILL_MAX_RANK];
    for (size_t i = 0; i < n && i < QUILL_MAX_RANK; i++) {
      const quill_attr *e = quill_attr_list_elem(sc, i);
      v[i] = quill_attr_kind_of(e) == QUILL_ATTR_FLOAT
                 ? quill_attr_float_value(e)
                 : (double)quill_attr_int_value(e);
    }
    in[2] = ex_init_f32s(ex, init_name(ex, y, "scales"), false,
                         n < QUILL_MAX_RANK ? n : QUILL_MAX_RANK, v);
    nin = 3;
  } else {
    unsigned rank = quill_type_rank(rt);
    for (unsigned i = 0; i < rank; i++)
      if (quill_type_dim(rt, i) == QUILL_DIM_DYNAMIC)
        return ex_op_error(ex, op, "the result type has a dynamic "
                                   "dimension (Resize needs sizes)");
    in[3] = ex_init_i64s(ex, init_name(ex, y, "sizes"), rank,
                         quill_type_dims(rt));
    nin = 4;
  }
  if (!in[2] || !in[3])
    return QUILL_ERR_NOMEM;
  static const char *const attrs[] = {
      "mode", "coordinate_transformation_mode", "nearest_mode",
      "cubic_coeff_a", "exclude_outside", "extrapolation_value", NULL};
  return copy_attrs(ex, op, ex_node(ex, "Resize", nin, in, 1, &y), attrs);
}

/*
 * quant.c - quantization for the TFLite target: fused activations and the
 * checks of the TFLite int8 spec (what backends/tflite-int8.json encodes).
 *
 * TFLite stores scales as f32 and derives everything else at load time:
 * requantization multipliers come from
 *   (double)s_in * (double)s_w[c] / (double)s_out      (f32 scales)
 * through QuantizeMultiplier, and a fused activation is a clamp range it
 * computes from the output parameters:
 *
 *   NONE          [-128, 127]
 *   RELU          [max(-128, zp), 127]
 *   RELU6         [max(-128, zp), min(127, zp + round(6 / s))]
 *   RELU_N1_TO_1  [max(-128, zp + round(-1 / s)), min(127, zp + round(1 / s))]
 *
 * (round half away from zero, f32 division). Quill's integer ops carry
 * their clamp as act_min/act_max; a folded float op carries `activation`.
 * Either must equal one of the four ranges, or the op is refused.
 *
 * The spec rules checked here, each a located error naming the rule:
 * activations int8, or int16 with zero point 0 for the ops whose
 * op_table.c row has .int16 (TFLite's 16x8 kernels: int16 activations,
 * int8 weights, int64 bias and accumulator); weights int8, zero point 0,
 * values in [-127, 127], per tensor or per output channel; bias int32
 * (int64 after 16-bit activations), zero point 0, scale
 * s_in * s_w[c] (TFLite's tolerance: 1e-6 relative); equal input and
 * output quantization for kernels that move values; fixed-point
 * requantization with TFLite's rounding.
 */
#include <math.h>
#include <string.h>

#include "ir/quant.h"
#include "targets/tflite/export_impl.h"

float tx_scale_f32(double s) { return (float)s; }

static const char *storage_name(const quill_type *elem) {
  if (quill_type_is_quant(elem))
    elem = quill_type_quant_storage(elem);
  const char *n = quill_type_scalar_name(quill_type_kind_of(elem));
  return n ? n : "?";
}

bool tx_float_activation(const quill_op *op, int *act, double *lo,
                         double *hi, bool *present) {
  *act = TFL_ACT_NONE;
  *lo = -INFINITY;
  *hi = INFINITY;
  *present = false;
  const quill_attr *a = quill_op_attr(op, "activation");
  if (!a || quill_attr_kind_of(a) != QUILL_ATTR_STRING)
    return true;
  *present = true;
  const char *s = quill_attr_string_value(a, NULL);
  if (!strcmp(s, "relu")) {
    *act = TFL_ACT_RELU;
    *lo = 0;
    return true;
  }
  *lo = quill_op_attr_float(op, "activation_min", -INFINITY);
  *hi = quill_op_attr_float(op, "activation_max", INFINITY);
  if (*lo == 0 && *hi == 6)
    *act = TFL_ACT_RELU6;
  else if (*lo == -1 && *hi == 1)
    *act = TFL_ACT_RELU_N1_TO_1;
  else if (*lo == 0 && isinf(*hi) && *hi > 0)
    *act = TFL_ACT_RELU;
  else
    return false;
  return true;
}

/* TFLite's quantization of an activation bound f. */
static int64_t q_bound(float scale, int64_t zp, float f) {
  return zp + (int64_t)roundf(f / scale);
}

quill_status tx_quant_activation(tflite_exporter *ex, const quill_op *op,
                                 const quill_type *out_elem, int *act) {
  *act = TFL_ACT_NONE;
  if (!quill_type_is_quant(out_elem) ||
      quill_type_quant_num_params(out_elem) != 1)
    return QUILL_OK;
  float s = tx_scale_f32(quill_type_quant_scales(out_elem)[0]);
  int64_t zp = quill_type_quant_zero_points(out_elem)[0];
  int64_t tmin = quill_type_int_min(quill_type_quant_storage(out_elem));
  int64_t tmax = quill_type_int_max(quill_type_quant_storage(out_elem));
  /* Quill's clamp: the result's storage range and the activation. */
  int64_t lo = quill_type_quant_qmin(out_elem);
  int64_t hi = quill_type_quant_qmax(out_elem);
  tx_opinfo *oi = tx_map_get(&ex->opinfo, op);
  if (oi && oi->folded) {
    int fa;
    double flo, fhi;
    bool present;
    tx_float_activation(op, &fa, &flo, &fhi, &present);
    if (present && !isinf(flo))
      lo = q_bound(s, zp, (float)flo) > lo ? q_bound(s, zp, (float)flo) : lo;
    if (present && !isinf(fhi))
      hi = q_bound(s, zp, (float)fhi) < hi ? q_bound(s, zp, (float)fhi) : hi;
  } else {
    int64_t amin = quill_op_attr_int(op, "act_min", INT64_MIN);
    int64_t amax = quill_op_attr_int(op, "act_max", INT64_MAX);
    if (amin > lo)
      lo = amin;
    if (amax < hi)
      hi = amax;
  }
  struct {
    int act;
    int64_t lo, hi;
  } cand[4] = {
      {TFL_ACT_NONE, tmin, tmax},
      {TFL_ACT_RELU, zp > tmin ? zp : tmin, tmax},
      {TFL_ACT_RELU6, zp > tmin ? zp : tmin, 0},
      {TFL_ACT_RELU_N1_TO_1, 0, 0},
  };
  int64_t six = q_bound(s, zp, 6.0f), m1 = q_bound(s, zp, -1.0f),
          p1 = q_bound(s, zp, 1.0f);
  cand[2].hi = six < tmax ? six : tmax;
  cand[3].lo = m1 > tmin ? m1 : tmin;
  cand[3].hi = p1 < tmax ? p1 : tmax;
  for (int i = 0; i < 4; i++)
    if (cand[i].lo == lo && cand[i].hi == hi) {
      *act = cand[i].act;
      return QUILL_OK;
    }
  return tx_spec_error(
      ex, op, "fused activation",
      "the output clamp [%lld, %lld] is none of TFLite's fused activation "
      "ranges for this output (NONE [%lld, %lld], RELU [%lld, %lld], RELU6 "
      "[%lld, %lld], RELU_N1_TO_1 [%lld, %lld])",
      (long long)lo, (long long)hi, (long long)cand[0].lo,
      (long long)cand[0].hi, (long long)cand[1].lo, (long long)cand[1].hi,
      (long long)cand[2].lo, (long long)cand[2].hi, (long long)cand[3].lo,
      (long long)cand[3].hi);
}

bool tx_is_16x8(const quill_type *x_elem) {
  return x_elem && quill_type_is_quant(x_elem) &&
         quill_type_kind_of(quill_type_quant_storage(x_elem)) ==
             QUILL_TYPE_I16;
}

quill_status tx_check_act_i8(tflite_exporter *ex, const quill_op *op,
                             const quill_type *elem, const char *what) {
  if (!quill_type_is_quant(elem))
    return QUILL_OK;
  quill_type_kind k = quill_type_kind_of(quill_type_quant_storage(elem));
  if (k == QUILL_TYPE_I16 && tx_table[quill_op_opcode(op)].int16) {
    /* TFLite's 16x8 kernels: symmetric int16 activations */
    for (size_t i = 0; i < quill_type_quant_num_params(elem); i++)
      if (quill_type_quant_zero_points(elem)[i] != 0)
        return tx_spec_error(ex, op, "int16 activations have zero point 0",
                             "the %s has zero point %lld", what,
                             (long long)quill_type_quant_zero_points(elem)[i]);
  } else if (k == QUILL_TYPE_I16) {
    return tx_spec_error(ex, op, "activations are int8",
                         "the %s is i16-quantized, and this writer has no "
                         "16x8 form of the op: keep it float "
                         "(--keep-float, or leave it out of the backend "
                         "config's quantize_ops)",
                         what);
  } else if (k != QUILL_TYPE_I8) {
    return tx_spec_error(ex, op, "activations are int8",
                         "the %s is %s-quantized", what, storage_name(elem));
  }
  if (quill_type_quant_axis_of(elem) >= 0)
    return tx_spec_error(ex, op, "activations are quantized per tensor",
                         "the %s is quantized per axis", what);
  return QUILL_OK;
}

quill_status tx_check_weights(tflite_exporter *ex, const quill_op *op,
                              const quill_attr *w, int channel_axis) {
  quill_type *t = quill_attr_dense_type(w);
  quill_type *e = quill_type_elem(t);
  if (!quill_type_is_quant(e) ||
      quill_type_kind_of(quill_type_quant_storage(e)) != QUILL_TYPE_I8)
    return tx_spec_error(ex, op, "weights are int8", "the weights are %s",
                         storage_name(e));
  size_t n = quill_type_quant_num_params(e);
  const int64_t *zp = quill_type_quant_zero_points(e);
  for (size_t i = 0; i < n; i++)
    if (zp[i] != 0)
      return tx_spec_error(ex, op, "weights are symmetric (zero point 0)",
                           "zero point %lld%s", (long long)zp[i],
                           n > 1 ? " in a channel" : "");
  int32_t axis = quill_type_quant_axis_of(e);
  if (axis >= 0 && axis != channel_axis)
    return tx_spec_error(
        ex, op, "weights are quantized per tensor or per output channel",
        "they are quantized along axis %d, the output channels are axis %d",
        axis, channel_axis);
  const int8_t *d = quill_attr_dense_data(w);
  size_t count = quill_attr_dense_size(w);
  for (size_t i = 0; i < count; i++)
    if (d[i] == -128)
      return tx_spec_error(ex, op, "weights are in [-127, 127]",
                           "weight #%zu is -128", i);
  return QUILL_OK;
}

quill_status tx_check_bias(tflite_exporter *ex, const quill_op *op,
                           const quill_type *b, const quill_type *in,
                           const quill_type *w, int64_t channels) {
  quill_type *storage = quill_type_is_quant(b) ? quill_type_quant_storage(b)
                                               : (quill_type *)b;
  quill_type_kind bk = quill_type_kind_of(storage);
  if (bk != QUILL_TYPE_I32 && !(bk == QUILL_TYPE_I64 && tx_is_16x8(in)))
    return tx_spec_error(ex, op, "biases are int32", "the bias is %s",
                         storage_name(b));
  if (!quill_type_is_quant(b))
    return QUILL_OK; /* raw int32: written with scale s_in * s_w[c] */
  size_t nb = quill_type_quant_num_params(b);
  size_t nw = quill_type_quant_num_params(w);
  const double *sb = quill_type_quant_scales(b);
  const double *sw = quill_type_quant_scales(w);
  double si = tx_scale_f32(quill_type_quant_scales(in)[0]);
  for (int64_t c = 0; c < channels; c++) {
    double want = si * (double)tx_scale_f32(sw[nw > 1 ? c : 0]);
    double got = tx_scale_f32(sb[nb > 1 ? c : 0]);
    if (quill_type_quant_zero_points(b)[nb > 1 ? c : 0] != 0)
      return tx_spec_error(ex, op, "biases have zero point 0",
                           "zero point %lld",
                           (long long)quill_type_quant_zero_points(
                               b)[nb > 1 ? c : 0]);
    if (fabs(want - got) > 1e-6 * fmin(want, got))
      return tx_spec_error(ex, op, "bias scale is s_in * s_w[c]",
                           "channel %lld: bias scale %.9g, s_in * s_w = %.9g",
                           (long long)c, got, want);
  }
  return QUILL_OK;
}

void *tx_bias_values(tflite_exporter *ex, const quill_attr *b, int64_t n,
                     const quill_type *x_elem, int *type, size_t *bytes) {
  bool wide = tx_is_16x8(x_elem);
  *type = wide ? TFL_INT64 : TFL_INT32;
  *bytes = (size_t)n * (wide ? 8 : 4);
  void *d = tx_alloc(ex, *bytes ? *bytes : 1);
  if (!d)
    return NULL;
  memset(d, 0, *bytes);
  for (int64_t c = 0; b && c < n; c++) {
    int64_t v = quill_attr_dense_get_i64(b, (size_t)c);
    if (wide)
      ((int64_t *)d)[c] = v;
    else
      ((int32_t *)d)[c] = (int32_t)v;
  }
  return d;
}

quill_status tx_check_same_quant(tflite_exporter *ex, const quill_op *op,
                                 const quill_type *in, const quill_type *out,
                                 const char *builtin) {
  if (!quill_type_is_quant(in) && !quill_type_is_quant(out))
    return QUILL_OK;
  if (quill_type_is_quant(in) != quill_type_is_quant(out))
    return tx_error(ex, op, "%s needs both its input and output quantized or "
                            "both float",
                    builtin);
  float si = tx_scale_f32(quill_type_quant_scales(in)[0]);
  float so = tx_scale_f32(quill_type_quant_scales(out)[0]);
  int64_t zi = quill_type_quant_zero_points(in)[0];
  int64_t zo = quill_type_quant_zero_points(out)[0];
  if (si != so || zi != zo || quill_type_quant_num_params(in) != 1 ||
      quill_type_quant_num_params(out) != 1)
    return tx_spec_error(ex, op, "equal input and output quantization",
                         "TFLite's %s does not rescale: input %.9g:%lld, "
                         "output %.9g:%lld",
                         builtin, (double)si, (long long)zi, (double)so,
                         (long long)zo);
  return QUILL_OK;
}

void tx_check_requant(tflite_exporter *ex, const quill_op *op,
                      const quill_type *in, const quill_type *w,
                      const quill_type *out) {
  if (!quill_type_is_quant(out))
    return;
  const quill_attr *ma = quill_op_attr(op, "multiplier");
  size_t cap = ma && quill_attr_kind_of(ma) == QUILL_ATTR_LIST
                   ? quill_attr_list_size(ma)
                   : 0;
  int64_t *mult = tx_alloc(ex, (cap ? cap : 1) * sizeof *mult);
  int64_t *shift = tx_alloc(ex, (cap ? cap : 1) * sizeof *shift);
  if (!cap || !mult || !shift)
    return;
  int64_t nm = quill_op_attr_ints(op, "multiplier", mult, cap);
  int64_t ns = quill_op_attr_ints(op, "shift", shift, cap);
  size_t nw = quill_type_quant_num_params(w);
  if (nm <= 0 || ns != nm)
    return;
  double si = tx_scale_f32(quill_type_quant_scales(in)[0]);
  double so = tx_scale_f32(quill_type_quant_scales(out)[0]);
  size_t n = nw > (size_t)nm ? nw : (size_t)nm;
  unsigned differ = 0;
  size_t first = 0;
  for (size_t c = 0; c < n; c++) {
    double sw = tx_scale_f32(quill_type_quant_scales(w)[nw > 1 ? c : 0]);
    int32_t m;
    int sh;
    if (!quill_quantize_multiplier(si * sw / so, &m, &sh))
      continue;
    size_t k = nm > 1 ? c : 0;
    if (mult[k] != m || shift[k] != sh) {
      if (!differ++)
        first = c;
    }
  }
  if (differ)
    tx_warning(ex, op,
               "the op's requantization multiplier differs from the one "
               "TFLite derives from the f32 scales in %u channel(s) (first: "
               "channel %zu): results may differ by one step",
               differ, first);
}

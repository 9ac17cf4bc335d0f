/*
 * kernel.c - the custom op kind "acme.conv_add_relu": what the ACME NPU's
 * fused residual kernel computes, as a verifier and a reference evaluator
 * that `quill run` (and anything else running Quill's reference
 * interpreter) calls for every such op.
 *
 *   %y = custom %x, %w, %b, %skip {name = "acme.conv_add_relu", ...}
 *
 * For every output element (n, m, oh, ow), exactly as Quill's qconv2d then
 * qadd (docs/quantization.md section 3), with Quill's public integer
 * arithmetic (ir/quant.h):
 *
 *   acc  = b[m] + sum (x - zp_x) * (w - zp_w[m])       int32, wrapping
 *   mid  = clamp(zp_mid + R(acc; conv_multiplier[m], conv_shift[m]),
 *                max(mid_qmin, conv_act_min), min(mid_qmax, conv_act_max))
 *   v    = quill_qadd_fixed(mid - zp_mid, skip - zp_skip, add params)
 *   y    = clamp(zp_y + v, max(qmin_y, act_min), min(qmax_y, act_max))
 *
 * so a model with the fused op gives the same bits as the unfused integer
 * model (checked by the example's test). A real vendor would write its
 * hardware's arithmetic here; Quill runs, calibrates and reports with it.
 */
#include <string.h>

#include "acme_npu.h"

/* ---- verification ---------------------------------------------------------- */

static quill_type *operand_elem(const quill_op *op, unsigned i) {
  return quill_type_elem(quill_value_type(quill_op_operand(op, i)));
}

static bool quant_per_tensor(quill_type *e) {
  return quill_type_is_quant(e) && quill_type_quant_axis_of(e) < 0;
}

static quill_status fail(quill_context *ctx, const quill_op *op,
                         const char *what) {
  return quill_error(ctx, quill_op_loc(op), "'%s' op %s", ACME_CONV_ADD_RELU,
                     what);
}

/* Operands x (quantized per tensor, rank 4), w (quantized, per tensor or
 * along axis 0), b (i32), skip (quantized per tensor, the result's shape);
 * one per-tensor quantized result; the requantization attributes. */
static quill_status verify_car(quill_context *ctx, const quill_op *op) {
  if (quill_op_num_operands(op) != 4 || quill_op_num_results(op) != 1)
    return fail(ctx, op, "takes 4 operands (x, w, b, skip) and 1 result");
  quill_type *we = operand_elem(op, 1);
  quill_type *ye = quill_type_elem(quill_value_type(quill_op_result(op, 0)));
  if (!quant_per_tensor(operand_elem(op, 0)) ||
      !quant_per_tensor(operand_elem(op, 3)) || !quant_per_tensor(ye) ||
      !quill_type_is_quant(we) || quill_type_quant_axis_of(we) > 0)
    return fail(ctx, op, "needs per-tensor quantized x, skip and result, and "
                         "weights quantized per tensor or along axis 0");
  if (quill_type_kind_of(operand_elem(op, 2)) != QUILL_TYPE_I32)
    return fail(ctx, op, "needs an i32 bias");
  if (quill_type_rank(quill_value_type(quill_op_operand(op, 0))) != 4 ||
      quill_type_rank(quill_value_type(quill_op_operand(op, 1))) != 4)
    return fail(ctx, op, "needs rank-4 x and w");
  static const char *const required[] = {
      "conv_multiplier", "conv_shift",  "mid_zero_point", "mid_qmin",
      "mid_qmax",        "add_multiplier", "add_shift",   "act_min"};
  for (size_t i = 0; i < sizeof required / sizeof required[0]; ++i)
    if (!quill_op_attr(op, required[i])) {
      char msg[96];
      snprintf(msg, sizeof msg, "needs the attribute '%s'", required[i]);
      return fail(ctx, op, msg);
    }
  if (quill_op_attr_ints(op, "add_multiplier", NULL, 0) != 3 ||
      quill_op_attr_ints(op, "add_shift", NULL, 0) != 3)
    return fail(ctx, op, "needs 3-element add_multiplier and add_shift");
  return QUILL_OK;
}

/* ---- evaluation ------------------------------------------------------------ */

/* v + zp clamped to [lo, hi] without overflow. */
static int64_t saturate(int64_t v, int64_t zp, int64_t lo, int64_t hi) {
  if (v >= hi - zp)
    return hi;
  if (v <= lo - zp)
    return lo;
  return v + zp;
}

static quill_rounding rounding_of(const quill_op *op, const char *name) {
  const quill_attr *a = quill_op_attr(op, name);
  quill_rounding r = QUILL_ROUND_HALF_EVEN;
  if (a && quill_attr_kind_of(a) == QUILL_ATTR_STRING)
    quill_rounding_parse(quill_attr_string_value(a, NULL), &r);
  return r;
}

/* Read an int-list attribute of 1 or n elements into out[n] (a single
 * element is repeated); false if it has another length. */
static bool per_channel(const quill_op *op, const char *name, int64_t *out,
                        int64_t n) {
  int64_t len = quill_op_attr_ints(op, name, out, (size_t)n);
  if (len == 1)
    for (int64_t i = 1; i < n; ++i)
      out[i] = out[0];
  return len == 1 || len == n;
}

static quill_status eval_car(quill_context *ctx, const quill_op *op,
                             const quill_tensor *in, quill_tensor *out) {
  const quill_tensor *x = &in[0], *w = &in[1], *b = &in[2], *skip = &in[3];
  quill_tensor *y = &out[0];
  const int64_t *xd = quill_type_dims(x->type), *wd = quill_type_dims(w->type);
  const int64_t *yd = quill_type_dims(y->type);
  int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3];
  int64_t M = wd[0], Cg = wd[1], KH = wd[2], KW = wd[3];
  int64_t OH = yd[2], OW = yd[3];
  int64_t strides[2] = {1, 1}, pads[4] = {0, 0, 0, 0}, dil[2] = {1, 1};
  quill_op_attr_ints(op, "strides", strides, 2);
  quill_op_attr_ints(op, "pads", pads, 4);
  quill_op_attr_ints(op, "dilations", dil, 2);
  int64_t group = quill_op_attr_int(op, "group", 1);
  if (group < 1 || C != Cg * group || M % group || yd[1] != M)
    return fail(ctx, op, "has inconsistent conv shapes");

  quill_type *xe = quill_type_elem(x->type), *we = quill_type_elem(w->type);
  quill_type *se = quill_type_elem(skip->type), *ye = quill_type_elem(y->type);
  int64_t zx = quill_type_quant_zero_points(xe)[0];
  int64_t zs = quill_type_quant_zero_points(se)[0];
  int64_t zy = quill_type_quant_zero_points(ye)[0];
  const int64_t *zw = quill_type_quant_zero_points(we);
  bool w_per_channel = quill_type_quant_axis_of(we) == 0;

  /* Per output channel: conv multiplier and shift (at most 4096). */
  int64_t cm[4096], cs[4096];
  if (M > 4096 || !per_channel(op, "conv_multiplier", cm, M) ||
      !per_channel(op, "conv_shift", cs, M))
    return fail(ctx, op, "needs conv_multiplier/conv_shift of 1 or one per "
                         "output channel (at most 4096)");
  quill_rounding rconv = rounding_of(op, "conv_rounding");
  quill_rounding radd = rounding_of(op, "add_rounding");
  int64_t zmid = quill_op_attr_int(op, "mid_zero_point", 0);
  int64_t mlo = quill_op_attr_int(op, "mid_qmin", -128);
  int64_t mhi = quill_op_attr_int(op, "mid_qmax", 127);
  int64_t v;
  if ((v = quill_op_attr_int(op, "conv_act_min", mlo)) > mlo)
    mlo = v;
  if ((v = quill_op_attr_int(op, "conv_act_max", mhi)) < mhi)
    mhi = v;
  int64_t ylo = quill_type_quant_qmin(ye), yhi = quill_type_quant_qmax(ye);
  if ((v = quill_op_attr_int(op, "act_min", ylo)) > ylo)
    ylo = v;
  if ((v = quill_op_attr_int(op, "act_max", yhi)) < yhi)
    yhi = v;
  int64_t am[3], ash[3];
  quill_op_attr_ints(op, "add_multiplier", am, 3);
  quill_op_attr_ints(op, "add_shift", ash, 3);
  quill_qadd_params p;
  p.left_shift = (int)quill_op_attr_int(op, "add_left_shift", 20);
  for (int i = 0; i < 3; ++i) {
    p.multiplier[i] = (int32_t)am[i];
    p.shift[i] = (int)ash[i];
  }

  int64_t Mg = M / group;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      int64_t g = m / Mg, zwm = zw[w_per_channel ? m : 0];
      uint32_t bias = (uint32_t)quill_tensor_get_i64(b, (size_t)m);
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          uint32_t acc = bias; /* int32 arithmetic, wrapping */
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                int64_t ih = oh * strides[0] - pads[0] + i * dil[0];
                int64_t iw = ow * strides[1] - pads[1] + j * dil[1];
                if (ih < 0 || iw < 0 || ih >= H || iw >= W)
                  continue;
                size_t xi = (size_t)(((n * C + g * Cg + c) * H + ih) * W + iw);
                size_t wi = (size_t)(((m * Cg + c) * KH + i) * KW + j);
                acc += (uint32_t)((quill_tensor_get_i64(x, xi) - zx) *
                                  (quill_tensor_get_i64(w, wi) - zwm));
              }
          int64_t r = quill_requant_fixed((int32_t)acc, (int32_t)cm[m],
                                          (int)cs[m], rconv);
          int64_t mid = saturate(r, zmid, mlo, mhi);
          size_t yi = (size_t)(((n * M + m) * OH + oh) * OW + ow);
          int64_t sum = quill_qadd_fixed(
              mid - zmid, quill_tensor_get_i64(skip, yi) - zs, &p, radd);
          quill_tensor_set_i64(y, yi, saturate(sum, zy, ylo, yhi));
        }
    }
  return QUILL_OK;
}

const quill_custom_op acme_conv_add_relu = {
    .name = ACME_CONV_ADD_RELU,
    .summary = "ACME NPU residual kernel: qconv2d + qadd + relu in one op",
    .verify = verify_car,
    .eval = eval_car,
};

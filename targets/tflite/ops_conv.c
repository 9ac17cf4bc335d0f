/*
 * ops_conv.c - writers of the convolutions and of the normalizations:
 * conv2d / qconv2d (CONV_2D, DEPTHWISE_CONV_2D, and grouped convolution),
 * conv_transpose2d (TRANSPOSE_CONV), batch_norm (MUL + ADD), layer_norm
 * (MEAN, SQUARED_DIFFERENCE, RSQRT, ...).
 *
 * Float ops, integer ops (qconv2d) and folded QDQ patterns share one
 * writer: the effective operand types say whether it is float or int8,
 * and the int8 spec is checked on the quantized ones. Filters are
 * permuted at compile time: OIHW -> OHWI (CONV_2D), [1, kh, kw, O]
 * (DEPTHWISE_CONV_2D), IOHW -> OHWI (TRANSPOSE_CONV).
 *
 * Grouped convolution (1 < group < C, as in RegNet) is one CONV_2D whose
 * filter has C/group input channels ([O, kh, kw, C/group]): TFLite reads
 * the group count from the input and filter depths (CONV_2D version 6,
 * runtime 2.9). tflite-runtime 2.14 runs it with its reference kernels,
 * its optimized kernels and the XNNPACK delegate, int8 and float, with
 * the results of the reference interpreter (targets.tflite-runtime:
 * conv2d_group2_int8, conv2d_group4_f32); the other way, SPLIT + CONV_2D
 * per group + CONCATENATION, is not needed.
 *
 * TRANSPOSE_CONV takes the output shape as an input and derives its
 * padding from SAME or VALID: pad_before = floor(total / 2) with total =
 * (H_in - 1) * s + k - H_out, the mode choosing the H_in it assumes
 * (SAME: ceil(H_out / s), VALID: (H_out - k) / s + 1). ONNX pads that
 * give another split, or an output_padding past the last input, are
 * written as a VALID TRANSPOSE_CONV to the full (H_in - 1) * s + k rows
 * and a STRIDED_SLICE of the rows ONNX keeps. TFLite has no dilated or
 * grouped TRANSPOSE_CONV.
 *
 * batch_norm (left when no convolution precedes it, or not folded) is
 * y = x * s[c] + b[c] with s = scale / sqrt(var + epsilon) and b = bias -
 * mean * s computed in double and rounded to f32, exactly as the
 * reference interpreter computes them (kernels_norm.c): MUL then ADD, both
 * float and exact per element, so the results are equal bit for bit. A
 * quantized graph has it between dequantize and quantize (it has no int8
 * kernel and does not fold): DEQUANTIZE, MUL, ADD, QUANTIZE, as Quill
 * computes it.
 *
 * layer_norm over dims [axis, rank) has no TFLite builtin; it is written
 * as the float decomposition TFLite's converter produces:
 *
 *   m = MEAN(x, axes)          v = MEAN(SQUARED_DIFFERENCE(x, m), axes)
 *   y = (x - m) * RSQRT(v + epsilon) * scale + bias
 *
 * With numerics = "f32" (what `quantize` gives the layer_norms of a
 * tflite-int8 model) Quill computes exactly these steps: each MEAN one
 * f32 sum over the row in order divided by (float)n, RSQRT as 1.0f /
 * sqrtf, every product and sum rounded to f32 on its own
 * (kernels_norm.c's layer_norm_f32, and the LLVM target): the reference
 * kernels' results bit for bit (runtime cases layer_norm*_exact). The
 * optimized kernels sum the MEANs in another order (1 step on a few
 * values). With the default "f64" (statistics in double, rounded once)
 * float results are about 1e-6 relative apart, and a quantized graph
 * lands 1 step apart next to a rounding boundary: convnext_tiny (3 steps
 * at the output) and vit_b_16 (11) of the model zoo were, before
 * tflite-int8 selected "f32" (tflite_bisect.py: with it, no value of
 * vit_b_16 differs).
 */
#include <math.h>
#include <string.h>

#include "ir/quant.h"
#include "targets/tflite/export_impl.h"

/* ---- filters and biases ------------------------------------------------------------ */

/* The constant weights w (dims wd, rank 4) as a TFLite filter permuted by
 * perm, quantized like w (per-axis scales on the physical axis holding
 * w's quantized axis). */
static int32_t filter_tensor(tflite_exporter *ex, const quill_attr *w,
                             const int64_t *wd, const int *perm,
                             const char *name) {
  quill_type *we = quill_type_elem(quill_attr_dense_type(w));
  size_t size = quill_attr_dense_size(w);
  void *data = tx_alloc(ex, size ? size : 1);
  if (!data)
    return -1;
  tx_transpose_data(quill_attr_dense_data(w), wd, 4, perm,
                    quill_type_elem_bytes(we), data);
  int64_t pd[4] = {wd[perm[0]], wd[perm[1]], wd[perm[2]], wd[perm[3]]};
  int32_t t = tx_const(ex, name, tx_tensor_type(we), 4, pd, data, size, false);
  int32_t qa = quill_type_is_quant(we) ? quill_type_quant_axis_of(we) : -1;
  int32_t qdim = 0;
  for (int j = 0; j < 4 && qa >= 0; j++)
    if (perm[j] == qa)
      qdim = j;
  tx_tensor_set_quant(ex, t, we, qdim);
  return t;
}

/* The bias of the n output channels: f32, or int32 (int64 after 16-bit
 * activations) with scale s_in * s_w[c] (or the bias type's own) when quantized; zeros when the op has
 * none (b NULL). */
static int32_t bias_tensor(tflite_exporter *ex, const quill_attr *b,
                           const quill_type *xe, const quill_type *we,
                           int64_t n, const char *name) {
  int64_t bd = n;
  if (!quill_type_is_quant(xe)) {
    float *d = tx_alloc(ex, (size_t)n * 4);
    if (!d)
      return -1;
    for (int64_t c = 0; b && c < n; c++)
      d[c] = (float)quill_attr_dense_get_f64(b, (size_t)c);
    return tx_const(ex, name, TFL_FLOAT32, 1, &bd, d, (size_t)n * 4, false);
  }
  int btype;
  size_t bbytes;
  void *d = tx_bias_values(ex, b, n, xe, &btype, &bbytes);
  if (!d)
    return -1;
  int32_t t = tx_const(ex, name, btype, 1, &bd, d, bbytes, false);
  if (t < 0)
    return -1;
  quill_type *be = b ? quill_type_elem(quill_attr_dense_type(b)) : NULL;
  size_t nw = quill_type_quant_num_params(we);
  tx_tensor *tt = &ex->tensors[t];
  tt->scale = tx_alloc(ex, (size_t)n * sizeof *tt->scale);
  tt->zero_point = tx_alloc(ex, (size_t)n * sizeof *tt->zero_point);
  if (!tt->scale || !tt->zero_point)
    return -1;
  float si = tx_scale_f32(quill_type_quant_scales(xe)[0]);
  for (int64_t c = 0; c < n; c++) {
    if (be && quill_type_is_quant(be))
      tt->scale[c] = tx_scale_f32(
          quill_type_quant_scales(be)[quill_type_quant_num_params(be) > 1 ? c
                                                                          : 0]);
    else
      tt->scale[c] = (float)((double)si *
                             tx_scale_f32(quill_type_quant_scales(
                                 we)[nw > 1 ? c : 0]));
  }
  /* per-tensor weights: per-tensor bias */
  tt->nq = n == 1 || nw == 1 ? 1 : (unsigned)n;
  return t;
}

/* An intermediate NHWC tensor [N, H, W, C] quantized like tensor `like`. */
static int32_t nhwc_temp(tflite_exporter *ex, int32_t like, const char *sfx,
                         int64_t n, int64_t h, int64_t w, int64_t c) {
  int64_t d[4] = {n, h, w, c};
  tx_tensor *l = &ex->tensors[like];
  int32_t t = tx_tensor_new(ex, tx_printf(ex, "%s_%s", l->name, sfx), l->type,
                            4, d);
  if (t < 0)
    return -1;
  l = &ex->tensors[like];
  ex->tensors[t].nq = l->nq;
  ex->tensors[t].scale = l->scale;
  ex->tensors[t].zero_point = l->zero_point;
  return t;
}

/* ---- conv2d ------------------------------------------------------------------------- */

static tx_op *emit_conv2d(tflite_exporter *ex, int32_t x, int32_t w,
                          int32_t b, int32_t y, const tx_padding *p,
                          const quill_window *win, int act) {
  int32_t ins[3] = {x, w, b};
  tx_op *o = tx_emit(ex, TFL_OP_CONV_2D, 3, ins, 1, &y);
  if (!o)
    return NULL;
  o->opt_type = TFL_OPT_Conv2DOptions;
  tx_opt_int(ex, o, TFL_CONV2D_PADDING, TXO_I8, p->mode, 0);
  tx_opt_int(ex, o, TFL_CONV2D_STRIDE_W, TXO_I32, win->strides[1], 0);
  tx_opt_int(ex, o, TFL_CONV2D_STRIDE_H, TXO_I32, win->strides[0], 0);
  tx_opt_int(ex, o, TFL_CONV2D_FUSED_ACTIVATION, TXO_I8, act, 0);
  tx_opt_int(ex, o, TFL_CONV2D_DILATION_W, TXO_I32, win->dilations[1], 1);
  tx_opt_int(ex, o, TFL_CONV2D_DILATION_H, TXO_I32, win->dilations[0], 1);
  return o;
}

/* The int8 checks of conv2d / qconv2d (and the folded QDQ form). */
static void check_conv_int8(tflite_exporter *ex, const quill_op *op,
                            bool integer, const quill_attr *w,
                            int channel_axis) {
  quill_type *xe = quill_type_elem(tx_in_type(ex, op, 0));
  quill_type *we = quill_type_elem(tx_in_type(ex, op, 1));
  quill_type *ye = quill_type_elem(tx_out_type(ex, op, 0));
  tx_check_act_i8(ex, op, xe, "input");
  tx_check_act_i8(ex, op, ye, "output");
  tx_check_weights(ex, op, w, channel_axis);
  if (!integer)
    return;
  const quill_attr *r = quill_op_attr(op, "rounding");
  const char *rs = r ? quill_attr_string_value(r, NULL) : "half_even";
  if (strcmp(rs, "tflite") != 0)
    tx_spec_error(ex, op, "requantization rounds as TFLite (gemmlowp double "
                          "rounding, 'tflite')",
                  "the op rounds \"%s\"", rs);
  else if (!quill_op_attr(op, "multiplier"))
    tx_spec_error(ex, op, "requantization is fixed point",
                  "the op requantizes in f32 (no 'multiplier')");
  else
    tx_check_requant(ex, op, xe, we, ye);
}

/* The constant bias operand (index 2) or NULL; an error if it is not a
 * constant or breaks the int8 spec. */
static quill_status conv_bias(tflite_exporter *ex, const quill_op *op,
                              int64_t channels, const quill_attr **b) {
  *b = NULL;
  if (quill_op_num_operands(op) <= 2)
    return QUILL_OK;
  if (!(*b = tx_in_const(ex, op, 2)))
    return tx_error(ex, op, "the bias must be a constant");
  quill_type *xe = quill_type_elem(tx_in_type(ex, op, 0));
  if (!quill_type_is_quant(xe))
    return QUILL_OK;
  return tx_check_bias(ex, op, quill_type_elem(quill_attr_dense_type(*b)), xe,
                       quill_type_elem(tx_in_type(ex, op, 1)), channels);
}

quill_status tx_write_conv(tflite_exporter *ex, const quill_op *op) {
  unsigned e0 = ex->errors;
  bool integer = quill_op_opcode(op) == QUILL_OP_QCONV2D;
  if (integer && tx_check_acc_i32(ex, op))
    return QUILL_ERR_INVALID;
  quill_type *xt = tx_in_type(ex, op, 0), *wt = tx_in_type(ex, op, 1);
  quill_type *yt = tx_out_type(ex, op, 0);
  quill_type *xe = quill_type_elem(xt), *we = quill_type_elem(wt);
  quill_type *ye = quill_type_elem(yt);
  bool quant = quill_type_is_quant(xe);
  if (!quill_type_has_static_shape(xt) || !quill_type_has_static_shape(yt))
    return tx_error(ex, op, "dynamic shapes are not supported");
  if (integer && !quill_type_is_quant(ye))
    return tx_error(ex, op, "an %s result (the raw accumulator, no "
                            "requantization) has no TFLite form",
                    quill_type_scalar_name(quill_type_kind_of(ye)));
  const quill_attr *w = tx_in_const(ex, op, 1);
  if (!w)
    return tx_error(ex, op, "the weights must be a constant (TFLite conv "
                            "filters are constant tensors)");
  const int64_t *xd = quill_type_dims(xt), *wd = quill_type_dims(wt);
  const int64_t *yd = quill_type_dims(yt);
  quill_window win;
  tx_read_window(op, xd, wd + 2, &win);
  int64_t C = xd[1], O = wd[0], G = win.group;
  bool depthwise = G != 1 && G == C && wd[1] == 1 && O % C == 0;
  if (G < 1 || C % G || O % G)
    return tx_error(ex, op, "channels (%lld in, %lld out) are not divisible "
                            "by group %lld",
                    (long long)C, (long long)O, (long long)G);
  if (quant)
    check_conv_int8(ex, op, integer, w, 0);
  const quill_attr *b;
  if (conv_bias(ex, op, O, &b))
    return QUILL_ERR_INVALID;
  int act;
  bool post;
  double lo, hi;
  if (tx_fused_activation(ex, op, &act, &post, &lo, &hi))
    return QUILL_ERR_INVALID;
  if (ex->errors != e0)
    return QUILL_ERR_INVALID;

  /* filter: OIHW -> OHWI (conv, grouped conv: a filter of C/group input
   * channels) or [1, kh, kw, O] (depthwise); bias [O] (zeros if absent) */
  static const int conv_perm[4] = {0, 2, 3, 1}, dw_perm[4] = {1, 2, 3, 0};
  const quill_value *wv = tx_ein(ex, op, 1);
  const char *wname = quill_value_name(wv) ? quill_value_name(wv) : "weights";
  int32_t wt_t = filter_tensor(ex, w, wd, depthwise ? dw_perm : conv_perm,
                               wname);
  int32_t bt = bias_tensor(ex, b, xe, we, O, tx_printf(ex, "%s_bias", wname));
  int32_t x = tx_in(ex, op, 0, TX_NHWC);
  int32_t y = tx_out(ex, op, 0);
  if (x < 0 || y < 0 || wt_t < 0 || bt < 0)
    return QUILL_ERR_NOMEM;
  tx_padding p;
  int64_t hw[2] = {xd[2], xd[3]}, ohw[2] = {yd[2], yd[3]};
  tx_classify_padding(hw, ohw, wd + 2, &win, &p);
  if (p.explicit_pad) {
    x = tx_emit_spatial_pad(ex, x, &p, false, 0);
    if (x < 0)
      return QUILL_ERR_NOMEM;
  }
  int32_t dst = post ? tx_temp_like(ex, y, "preact") : y;
  if (dst < 0)
    return QUILL_ERR_NOMEM;
  if (!depthwise) {
    if (!emit_conv2d(ex, x, wt_t, bt, dst, &p, &win, act))
      return QUILL_ERR_NOMEM;
    return post ? tx_emit_clamp(ex, dst, y, lo, hi) : QUILL_OK;
  }
  int32_t ins[3] = {x, wt_t, bt};
  tx_op *o = tx_emit(ex, TFL_OP_DEPTHWISE_CONV_2D, 3, ins, 1, &dst);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_DepthwiseConv2DOptions;
  tx_opt_int(ex, o, TFL_DWCONV_PADDING, TXO_I8, p.mode, 0);
  tx_opt_int(ex, o, TFL_DWCONV_STRIDE_W, TXO_I32, win.strides[1], 0);
  tx_opt_int(ex, o, TFL_DWCONV_STRIDE_H, TXO_I32, win.strides[0], 0);
  tx_opt_int(ex, o, TFL_DWCONV_DEPTH_MULTIPLIER, TXO_I32, O / C, 0);
  tx_opt_int(ex, o, TFL_DWCONV_FUSED_ACTIVATION, TXO_I8, act, 0);
  tx_opt_int(ex, o, TFL_DWCONV_DILATION_W, TXO_I32, win.dilations[1], 1);
  tx_opt_int(ex, o, TFL_DWCONV_DILATION_H, TXO_I32, win.dilations[0], 1);
  return post ? tx_emit_clamp(ex, dst, y, lo, hi) : QUILL_OK;
}

/* ---- conv_transpose2d ------------------------------------------------------------------ */

/* The TFLite padding mode whose implied input size and pad_before match
 * the op in both spatial dims (-1: none). */
static int tconv_mode(const int64_t *in, const int64_t *out, const int64_t *k,
                      const quill_window *win) {
  for (int mode = TFL_PADDING_SAME; mode <= TFL_PADDING_VALID; mode++) {
    bool ok = true;
    for (int i = 0; i < 2 && ok; i++) {
      int64_t s = win->strides[i];
      int64_t implied = mode == TFL_PADDING_SAME ? (out[i] + s - 1) / s
                        : out[i] >= k[i]         ? (out[i] - k[i]) / s + 1
                                                 : -1;
      int64_t total = (in[i] - 1) * s + k[i] - out[i];
      ok = implied == in[i] && total >= 0 && win->pads[i] == total / 2;
    }
    if (ok)
      return mode;
  }
  return -1;
}

quill_status tx_write_conv_transpose(tflite_exporter *ex, const quill_op *op) {
  unsigned e0 = ex->errors;
  quill_type *xt = tx_in_type(ex, op, 0), *wt = tx_in_type(ex, op, 1);
  quill_type *yt = tx_out_type(ex, op, 0);
  quill_type *xe = quill_type_elem(xt), *we = quill_type_elem(wt);
  bool quant = quill_type_is_quant(xe);
  if (!quill_type_has_static_shape(xt) || !quill_type_has_static_shape(yt) ||
      quill_type_rank(xt) != 4)
    return tx_error(ex, op, "only 4-D tensors with static shapes have a "
                            "TRANSPOSE_CONV form");
  const quill_attr *w = tx_in_const(ex, op, 1);
  if (!w)
    return tx_error(ex, op, "the weights must be a constant (TFLite "
                            "TRANSPOSE_CONV filters are constant tensors)");
  quill_window win;
  if (!quill_window_of_conv(op, xt, wt, true, &win))
    return tx_error(ex, op, "invalid strides, dilations, pads or group");
  if (win.group != 1)
    return tx_error(ex, op, "grouped transposed convolution (group %lld) has "
                            "no TFLite builtin",
                    (long long)win.group);
  if (win.dilations[0] != 1 || win.dilations[1] != 1)
    return tx_error(ex, op, "dilated transposed convolution has no TFLite "
                            "builtin");
  const int64_t *xd = quill_type_dims(xt), *wd = quill_type_dims(wt);
  const int64_t *yd = quill_type_dims(yt);
  int64_t M = wd[1];
  if (quant)
    check_conv_int8(ex, op, false, w, 1);
  const quill_attr *b;
  if (conv_bias(ex, op, M, &b))
    return QUILL_ERR_INVALID;
  int act;
  bool post;
  double lo, hi;
  if (tx_fused_activation(ex, op, &act, &post, &lo, &hi))
    return QUILL_ERR_INVALID;
  if (ex->errors != e0)
    return QUILL_ERR_INVALID;
  /* A fused activation makes TRANSPOSE_CONV version 4 (op_version.cc since
   * TFLite 2.13), which tflite-runtime 2.14 does not register: the
   * activation is an op of its own: RELU / RELU6 / RELU_N1_TO_1, exact in
   * f32, and in int8 on equal input and output parameters (multiplier 1:
   * the clamp alone, as Quill's integer form clamps). */
  int own_act = act;

  int64_t in[2] = {xd[2], xd[3]}, out[2] = {yd[2], yd[3]};
  int mode = tconv_mode(in, out, wd + 2, &win);
  int64_t full[2] = {out[0], out[1]};
  if (mode < 0) { /* VALID to the full size, then crop */
    mode = TFL_PADDING_VALID;
    for (int i = 0; i < 2; i++) {
      full[i] = (in[i] - 1) * win.strides[i] + wd[2 + i];
      if (win.pads[i] + out[i] > full[i])
        return tx_error(ex, op, "output_padding past the last input row has "
                                "no TFLite form");
    }
  }
  bool crop = full[0] != out[0] || full[1] != out[1];
  static const int tconv_perm[4] = {1, 2, 3, 0}; /* IOHW -> OHWI */
  const quill_value *wv = tx_ein(ex, op, 1);
  const char *wname = quill_value_name(wv) ? quill_value_name(wv) : "weights";
  int32_t wt_t = filter_tensor(ex, w, wd, tconv_perm, wname);
  int32_t bt = bias_tensor(ex, b, xe, we, M, tx_printf(ex, "%s_bias", wname));
  int32_t shape[4] = {(int32_t)yd[0], (int32_t)full[0], (int32_t)full[1],
                      (int32_t)M};
  int32_t st = tx_const_i32(ex, "output_shape", 4, shape);
  int32_t x = tx_in(ex, op, 0, TX_NHWC), y = tx_out(ex, op, 0);
  if (wt_t < 0 || bt < 0 || st < 0 || x < 0 || y < 0)
    return QUILL_ERR_NOMEM;
  int32_t final = post || own_act != TFL_ACT_NONE ? tx_temp_like(ex, y, "preact")
                                                : y;
  int32_t dst = crop ? nhwc_temp(ex, y, "full", yd[0], full[0], full[1], M)
                     : final;
  if (final < 0 || dst < 0)
    return QUILL_ERR_NOMEM;
  int32_t ins[4] = {st, wt_t, x, bt};
  tx_op *o = tx_emit(ex, TFL_OP_TRANSPOSE_CONV, 4, ins, 1, &dst);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_TransposeConvOptions;
  tx_opt_int(ex, o, TFL_TCONV_PADDING, TXO_I8, mode, 0);
  tx_opt_int(ex, o, TFL_TCONV_STRIDE_W, TXO_I32, win.strides[1], 0);
  tx_opt_int(ex, o, TFL_TCONV_STRIDE_H, TXO_I32, win.strides[0], 0);
  if (crop) {
    int32_t begin[4] = {0, (int32_t)win.pads[0], (int32_t)win.pads[1], 0};
    int32_t end[4] = {(int32_t)yd[0], (int32_t)(win.pads[0] + out[0]),
                      (int32_t)(win.pads[1] + out[1]), (int32_t)M};
    int32_t one[4] = {1, 1, 1, 1};
    int32_t sin[4] = {dst, tx_const_i32(ex, "begin", 4, begin),
                      tx_const_i32(ex, "end", 4, end),
                      tx_const_i32(ex, "strides", 4, one)};
    o = tx_emit(ex, TFL_OP_STRIDED_SLICE, 4, sin, 1, &final);
    if (!o)
      return QUILL_ERR_NOMEM;
    o->opt_type = TFL_OPT_StridedSliceOptions;
  }
  if (own_act != TFL_ACT_NONE) {
    int32_t b = own_act == TFL_ACT_RELU    ? TFL_OP_RELU
                : own_act == TFL_ACT_RELU6 ? TFL_OP_RELU6
                                        : TFL_OP_RELU_N1_TO_1;
    return tx_emit1(ex, b, 0, final, y) ? QUILL_OK : QUILL_ERR_NOMEM;
  }
  return post ? tx_emit_clamp(ex, final, y, lo, hi) : QUILL_OK;
}

/* ---- batch_norm ------------------------------------------------------------------------- */

quill_status tx_write_batch_norm(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0);
  unsigned r = quill_type_rank(xt);
  if (quill_type_is_quant(quill_type_elem(xt)) ||
      quill_type_kind_of(quill_type_elem(xt)) != QUILL_TYPE_F32)
    return tx_error(ex, op, "only f32 batch normalization has a TFLite form "
                            "(MUL + ADD)");
  if (r < 2 || !quill_type_has_static_shape(xt))
    return tx_error(ex, op, "the input must be [N, C, ...] with a static "
                            "shape");
  const quill_attr *p[5] = {NULL};
  for (unsigned i = 1; i < 5; i++)
    if (!(p[i] = tx_in_const(ex, op, i)))
      return tx_error(ex, op, "scale, bias, mean and variance must be "
                              "constants");
  int64_t C = quill_type_dim(xt, 1);
  float *s = tx_alloc(ex, (size_t)C * sizeof *s);
  float *bb = tx_alloc(ex, (size_t)C * sizeof *bb);
  if (!s || !bb)
    return QUILL_ERR_NOMEM;
  double eps = quill_op_attr_number(op, "epsilon", 1e-5);
  for (int64_t c = 0; c < C; c++) { /* as targets/reference/kernels_norm.c */
    double sc = quill_attr_dense_get_f64(p[1], (size_t)c) /
                sqrt(quill_attr_dense_get_f64(p[4], (size_t)c) + eps);
    s[c] = (float)sc;
    bb[c] = (float)(quill_attr_dense_get_f64(p[2], (size_t)c) -
                    quill_attr_dense_get_f64(p[3], (size_t)c) * sc);
  }
  /* per-channel constants shaped to broadcast: [C] on the last axis of
   * an NHWC value, [C, 1, ...] (rank r - 1) in NCHW order */
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  int64_t cd[QUILL_MAX_RANK];
  unsigned cr = lay == TX_NHWC && r == 4 ? 1 : r - 1;
  cd[0] = C;
  for (unsigned i = 1; i < cr; i++)
    cd[i] = 1;
  const char *base = quill_value_name(quill_op_result(op, 0));
  base = base ? base : "batch_norm";
  int32_t st = tx_const(ex, tx_printf(ex, "%s_scale", base), TFL_FLOAT32, cr,
                        cd, s, (size_t)C * 4, false);
  int32_t bt = tx_const(ex, tx_printf(ex, "%s_shift", base), TFL_FLOAT32, cr,
                        cd, bb, (size_t)C * 4, false);
  int32_t x = tx_in(ex, op, 0, lay), y = tx_out(ex, op, 0);
  if (st < 0 || bt < 0 || x < 0 || y < 0)
    return QUILL_ERR_NOMEM;
  int32_t tmp = tx_temp_like(ex, y, "scaled");
  int32_t mins[2] = {x, st};
  tx_op *o = tmp < 0 ? NULL : tx_emit(ex, TFL_OP_MUL, 2, mins, 1, &tmp);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_MulOptions;
  int32_t ains[2] = {tmp, bt};
  o = tx_emit(ex, TFL_OP_ADD, 2, ains, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_AddOptions;
  return QUILL_OK;
}

/* ---- layer_norm ------------------------------------------------------------------------- */

/* A float tensor shaped like `dims`, the dims from `reduce_from` on
 * reduced to 1. */
static int32_t f32_temp(tflite_exporter *ex, const char *base, const char *sfx,
                        unsigned r, const int64_t *dims, unsigned reduce_from) {
  int64_t d[QUILL_MAX_RANK];
  for (unsigned i = 0; i < r; i++)
    d[i] = i >= reduce_from ? 1 : dims[i];
  return tx_tensor_new(ex, tx_printf(ex, "%s_%s", base, sfx), TFL_FLOAT32, r, d);
}

static tx_op *emit2(tflite_exporter *ex, int32_t builtin, uint8_t opt,
                    int32_t a, int32_t b, int32_t y) {
  int32_t ins[2] = {a, b};
  if (a < 0 || b < 0 || y < 0)
    return NULL;
  tx_op *o = tx_emit(ex, builtin, 2, ins, 1, &y);
  if (o)
    o->opt_type = opt;
  return o;
}

/* Operand i (scale or bias) expanded to the normalized dims [ax, r). */
static int32_t norm_param(tflite_exporter *ex, const quill_op *op, unsigned i,
                          unsigned r, const int64_t *dims, unsigned ax,
                          const char *name) {
  const quill_attr *a = tx_in_const(ex, op, i);
  if (!a) {
    tx_error(ex, op, "the scale and bias must be constants");
    return -1;
  }
  size_t inner = 1;
  for (unsigned d = ax; d < r; d++)
    inner *= (size_t)dims[d];
  size_t n = (size_t)quill_type_num_elements(quill_attr_dense_type(a));
  if (n != inner && n != 1) {
    tx_error(ex, op, "a scale or bias that broadcasts within the normalized "
                     "dims is not supported");
    return -1;
  }
  float *v = tx_alloc(ex, inner * sizeof *v);
  if (!v)
    return -1;
  for (size_t k = 0; k < inner; k++)
    v[k] = (float)quill_attr_dense_get_f64(a, n == 1 ? 0 : k);
  return tx_const(ex, name, TFL_FLOAT32, r - ax, dims + ax, v,
                  inner * sizeof *v, false);
}

quill_status tx_write_layer_norm(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0);
  unsigned r = quill_type_rank(xt);
  const quill_attr *na = quill_op_attr(op, "numerics");
  if (na && quill_attr_kind_of(na) == QUILL_ATTR_STRING &&
      strcmp(quill_attr_string_value(na, NULL), "integer") == 0)
    return tx_error(ex, op, "numerics \"integer\" (an integer LayerNorm) has "
                            "no TFLite form: quantize with "
                            "layer_norm_numerics \"f32\" (the tflite-int8 "
                            "backend: TFLite's float builtins)");
  if (quill_type_kind_of(quill_type_elem(xt)) != QUILL_TYPE_F32)
    return tx_error(ex, op, "only f32 layer normalization has a TFLite form "
                            "(keep it float: MEAN, SQUARED_DIFFERENCE, RSQRT)");
  if (!quill_type_has_static_shape(xt) || r == 0)
    return tx_error(ex, op, "dynamic shapes are not supported");
  int64_t axis = quill_op_attr_int(op, "axis", -1);
  axis = axis < 0 ? axis + r : axis;
  if (axis < 0 || axis >= (int64_t)r)
    return tx_error(ex, op, "'axis' is out of range");
  unsigned ax = (unsigned)axis;
  const int64_t *dims = quill_type_dims(xt);
  const char *base = quill_value_name(quill_op_result(op, 0));
  base = base ? base : "layer_norm";
  int32_t scale = norm_param(ex, op, 1, r, dims, ax,
                             tx_printf(ex, "%s_gamma", base));
  int32_t bias = quill_op_num_operands(op) > 2
                     ? norm_param(ex, op, 2, r, dims, ax,
                                  tx_printf(ex, "%s_beta", base))
                     : INT32_MAX;
  if (scale < 0 || bias < 0)
    return ex->errors ? QUILL_ERR_INVALID : QUILL_ERR_NOMEM;
  int32_t axes[QUILL_MAX_RANK];
  for (unsigned d = ax; d < r; d++)
    axes[d - ax] = (int32_t)d;
  int32_t at = tx_const_i32(ex, "axes", r - ax, axes);
  float eps = (float)quill_op_attr_number(op, "epsilon", 1e-5);
  int32_t et = tx_const_f32_scalar(ex, "epsilon", eps);
  int32_t x = tx_in(ex, op, 0, TX_NATIVE), y = tx_out(ex, op, 0);
  int32_t mean = f32_temp(ex, base, "mean", r, dims, ax);
  int32_t sq = f32_temp(ex, base, "sqdiff", r, dims, r);
  int32_t var = f32_temp(ex, base, "var", r, dims, ax);
  int32_t ve = f32_temp(ex, base, "var_eps", r, dims, ax);
  int32_t inv = f32_temp(ex, base, "rstd", r, dims, ax);
  int32_t d = f32_temp(ex, base, "centered", r, dims, r);
  int32_t nrm = f32_temp(ex, base, "normalized", r, dims, r);
  int32_t sc = bias == INT32_MAX ? y : f32_temp(ex, base, "scaled", r, dims, r);
  if (at < 0 || et < 0 || x < 0 || y < 0 || mean < 0 || sq < 0 || var < 0 ||
      ve < 0 || inv < 0 || d < 0 || nrm < 0 || sc < 0)
    return QUILL_ERR_NOMEM;
  tx_op *o = emit2(ex, TFL_OP_MEAN, TFL_OPT_ReducerOptions, x, at, mean);
  if (!o)
    return QUILL_ERR_NOMEM;
  tx_opt_int(ex, o, TFL_REDUCER_KEEP_DIMS, TXO_BOOL, true, false);
  if (!emit2(ex, TFL_OP_SQUARED_DIFFERENCE, 0, x, mean, sq))
    return QUILL_ERR_NOMEM;
  o = emit2(ex, TFL_OP_MEAN, TFL_OPT_ReducerOptions, sq, at, var);
  if (!o)
    return QUILL_ERR_NOMEM;
  tx_opt_int(ex, o, TFL_REDUCER_KEEP_DIMS, TXO_BOOL, true, false);
  if (!emit2(ex, TFL_OP_ADD, TFL_OPT_AddOptions, var, et, ve))
    return QUILL_ERR_NOMEM;
  int32_t rin = ve;
  if (!tx_emit(ex, TFL_OP_RSQRT, 1, &rin, 1, &inv) ||
      !emit2(ex, TFL_OP_SUB, TFL_OPT_SubOptions, x, mean, d) ||
      !emit2(ex, TFL_OP_MUL, TFL_OPT_MulOptions, d, inv, nrm) ||
      !emit2(ex, TFL_OP_MUL, TFL_OPT_MulOptions, nrm, scale, sc))
    return QUILL_ERR_NOMEM;
  if (bias != INT32_MAX &&
      !emit2(ex, TFL_OP_ADD, TFL_OPT_AddOptions, sc, bias, y))
    return QUILL_ERR_NOMEM;
  return QUILL_OK;
}

/*
 * ops_misc.c - writers of elementwise ops (unary builtins, ADD/SUB/MUL/...,
 * RELU/RELU6/clip, LEAKY_RELU), data movement (CONCATENATION, RESHAPE,
 * TRANSPOSE, PAD/PADV2/MIRROR_PAD, RESIZE_*), constants, casts and
 * custom ops; the quantization ops are in ops_quant.c.
 *
 * Layout-agnostic ops write in the layout of their result (layout.c put
 * operands and result in one group); axes, pads and broadcast constants
 * are mapped to the physical order. A lower-rank operand broadcast
 * against an NHWC result is expanded to 4-D and permuted (constants at
 * compile time, other values by a RESHAPE when that moves only size-1
 * dims).
 */
#include <math.h>
#include <string.h>

#include "targets/tflite/export_impl.h"

static const int nhwc_perm[4] = {0, 2, 3, 1};

void tx_copy_quant(tflite_exporter *ex, int32_t to, int32_t from) {
  if (to < 0 || from < 0)
    return;
  tx_tensor *t = &ex->tensors[to], *f = &ex->tensors[from];
  t->nq = f->nq;
  t->scale = f->scale;
  t->zero_point = f->zero_point;
  t->qdim = f->qdim;
}

tx_op *tx_emit1(tflite_exporter *ex, int32_t builtin, uint8_t opt, int32_t in,
                int32_t out) {
  if (in < 0 || out < 0)
    return NULL;
  tx_op *o = tx_emit(ex, builtin, 1, &in, 1, &out);
  if (o)
    o->opt_type = opt;
  return o;
}

/* ---- unary ------------------------------------------------------------------------- */

quill_status tx_write_unary(tflite_exporter *ex, const quill_op *op) {
  const tx_entry *e = &tx_table[quill_op_opcode(op)];
  quill_type *xe = quill_type_elem(tx_in_type(ex, op, 0));
  quill_type *ye = quill_type_elem(tx_out_type(ex, op, 0));
  unsigned e0 = ex->errors;
  if (quill_type_is_quant(xe) || quill_type_is_quant(ye)) {
    if (!e->int8)
      return tx_error(ex, op, "TFLite's %s has no int8 kernel; keep the op "
                              "float",
                      e->builtins);
    tx_check_act_i8(ex, op, xe, "input");
    tx_check_act_i8(ex, op, ye, "output");
    double fs = 0;
    int64_t fz = 0;
    if (e->builtin == TFL_OP_LOGISTIC)
      fs = 1.0 / 256, fz = -128;
    else if (e->builtin == TFL_OP_TANH)
      fs = 1.0 / 128, fz = 0;
    if (fs && ex->errors == e0 &&
        (tx_scale_f32(quill_type_quant_scales(ye)[0]) != (float)fs ||
         quill_type_quant_zero_points(ye)[0] != fz))
      tx_spec_error(ex, op, "fixed output quantization",
                    "TFLite's int8 %s outputs scale %g, zero point %lld; the "
                    "op's output has %.9g:%lld",
                    e->builtins, fs, (long long)fz,
                    quill_type_quant_scales(ye)[0],
                    (long long)quill_type_quant_zero_points(ye)[0]);
    if (ex->errors != e0)
      return QUILL_ERR_INVALID;
  }
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  tx_op *o = tx_emit1(ex, e->builtin, e->opt_type, tx_in(ex, op, 0, lay),
                   tx_out(ex, op, 0));
  if (!o)
    return QUILL_ERR_NOMEM;
  if (e->builtin == TFL_OP_GELU) {
    const quill_attr *a = quill_op_attr(op, "approximate");
    bool tanh = a && quill_attr_kind_of(a) == QUILL_ATTR_STRING &&
                !strcmp(quill_attr_string_value(a, NULL), "tanh");
    tx_opt_int(ex, o, TFL_GELU_APPROXIMATE, TXO_BOOL, tanh, 0);
  }
  return QUILL_OK;
}

quill_status tx_write_leaky_relu(tflite_exporter *ex, const quill_op *op) {
  quill_type *xe = quill_type_elem(tx_in_type(ex, op, 0));
  if (quill_type_is_quant(xe) &&
      (tx_check_act_i8(ex, op, xe, "input") ||
       tx_check_act_i8(ex, op, quill_type_elem(tx_out_type(ex, op, 0)),
                       "output")))
    return QUILL_ERR_INVALID;
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  tx_op *o = tx_emit1(ex, TFL_OP_LEAKY_RELU, TFL_OPT_LeakyReluOptions,
                   tx_in(ex, op, 0, lay), tx_out(ex, op, 0));
  if (!o)
    return QUILL_ERR_NOMEM;
  tx_opt_f32(ex, o, TFL_LEAKY_RELU_ALPHA,
             (float)quill_op_attr_float(op, "alpha", 0.01), 0.0f);
  return QUILL_OK;
}

/* ---- relu and clip --------------------------------------------------------------------- */

/* Clip bound i (1: min, 2: max) from an operand or an attribute. */
static double clip_bound(tflite_exporter *ex, const quill_op *op, unsigned i,
                         double dflt) {
  if (quill_op_num_operands(op) > i) {
    const quill_attr *a = tx_in_const(ex, op, i);
    if (!a)
      return NAN;
    quill_type *e = quill_type_elem(quill_attr_dense_type(a));
    if (quill_type_is_quant(e))
      return ((double)quill_attr_dense_get_i64(a, 0) -
              (double)quill_type_quant_zero_points(e)[0]) *
             quill_type_quant_scales(e)[0];
    return quill_attr_dense_get_f64(a, 0);
  }
  return quill_op_attr_float(op, i == 1 ? "min" : "max", dflt);
}

static quill_status write_clamp(tflite_exporter *ex, const quill_op *op,
                                double lo, double hi) {
  quill_type *xe = quill_type_elem(tx_in_type(ex, op, 0));
  quill_type *ye = quill_type_elem(tx_out_type(ex, op, 0));
  bool quant = quill_type_is_quant(xe);
  if (quant && (tx_check_act_i8(ex, op, xe, "input") ||
                tx_check_act_i8(ex, op, ye, "output")))
    return QUILL_ERR_INVALID;
  int32_t builtin = -1;
  if (lo == 0 && isinf(hi) && hi > 0)
    builtin = TFL_OP_RELU;
  else if (lo == 0 && hi == 6)
    builtin = TFL_OP_RELU6;
  else if (lo == -1 && hi == 1)
    builtin = TFL_OP_RELU_N1_TO_1;
  else if (lo == 0 && hi == 1)
    builtin = TFL_OP_RELU_0_TO_1;
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  int32_t x = tx_in(ex, op, 0, lay), y = tx_out(ex, op, 0);
  if (x < 0 || y < 0)
    return QUILL_ERR_NOMEM;
  if (builtin >= 0)
    return tx_emit1(ex, builtin, 0, x, y) ? QUILL_OK : QUILL_ERR_NOMEM;
  if (quant)
    return tx_error(ex, op, "clip to [%g, %g] on int8 tensors: TFLite has "
                            "RELU, RELU6, RELU_N1_TO_1 and RELU_0_TO_1 only",
                    lo, hi);
  if (isnan(lo) || isnan(hi))
    return tx_error(ex, op, "clip bounds must be constants");
  return tx_emit_clamp(ex, x, y, lo, hi);
}

quill_status tx_write_relu(tflite_exporter *ex, const quill_op *op) {
  return write_clamp(ex, op, 0, INFINITY);
}

quill_status tx_write_clip(tflite_exporter *ex, const quill_op *op) {
  return write_clamp(ex, op, clip_bound(ex, op, 1, -INFINITY),
                     clip_bound(ex, op, 2, INFINITY));
}

/* ---- binary ----------------------------------------------------------------------------- */

/* Operand i of a broadcasting op whose result has rank `rank`, in layout
 * `lay`. */
static int32_t broadcast_operand(tflite_exporter *ex, const quill_op *op,
                                 unsigned i, unsigned rank, int lay) {
  const quill_value *v = tx_ein(ex, op, i);
  quill_type *t = quill_value_type(v);
  unsigned r = quill_type_rank(t);
  if (r == rank || lay != TX_NHWC || rank != 4)
    return tx_value(ex, v, lay);
  int64_t e[4];
  for (unsigned k = 0; k < 4; k++)
    e[k] = k < 4 - r ? 1 : quill_type_dim(t, k - (4 - r));
  int64_t pd[4];
  tx_phys_dims(4, e, TX_NHWC, pd);
  quill_type *elem = quill_type_elem(t);
  const quill_attr *a = quill_value_constant(v);
  if (a) {
    size_t size = quill_attr_dense_size(a);
    void *d = tx_alloc(ex, size);
    if (!d)
      return -1;
    tx_transpose_data(quill_attr_dense_data(a), e, 4, nhwc_perm,
                      quill_type_elem_bytes(elem), d);
    int32_t c = tx_const(ex, quill_value_name(v) ? quill_value_name(v) : "c",
                         tx_tensor_type(elem), 4, pd, d, size, false);
    if (quill_type_is_quant(elem)) {
      int32_t ax = quill_type_quant_axis_of(elem);
      tx_tensor_set_quant(ex, c, elem,
                          ax >= 0 ? tx_phys_axis(4, ax + (int)(4 - r), TX_NHWC)
                                  : 0);
    }
    return c;
  }
  if (!tx_layout_neutral(4, e, TX_NHWC)) {
    tx_error(ex, op, "operand #%u (rank %u) broadcasts against an NHWC "
                     "tensor in a way TFLite cannot express without a "
                     "transpose",
             i, r);
    return -1;
  }
  int32_t src = tx_value(ex, v, TX_NATIVE);
  if (src < 0)
    return -1;
  int32_t dst = tx_tensor_new(ex, tx_printf(ex, "%s_4d", ex->tensors[src].name),
                              ex->tensors[src].type, 4, pd);
  tx_copy_quant(ex, dst, src);
  int32_t shape[4] = {(int32_t)pd[0], (int32_t)pd[1], (int32_t)pd[2],
                      (int32_t)pd[3]};
  int32_t ins[2] = {src, tx_const_i32(ex, "shape", 4, shape)};
  tx_op *o = tx_emit(ex, TFL_OP_RESHAPE, 2, ins, 1, &dst);
  if (!o)
    return -1;
  o->opt_type = TFL_OPT_ReshapeOptions;
  tx_opt_vec(ex, o, TFL_RESHAPE_NEW_SHAPE, 4, shape);
  return dst;
}

quill_status tx_write_binary(tflite_exporter *ex, const quill_op *op) {
  const tx_entry *e = &tx_table[quill_op_opcode(op)];
  quill_type *yt = tx_out_type(ex, op, 0);
  quill_type *ye = quill_type_elem(yt);
  unsigned e0 = ex->errors;
  bool quant = false;
  for (unsigned i = 0; i < 2; i++) {
    quill_type *xe = quill_type_elem(tx_in_type(ex, op, i));
    if (quill_type_is_quant(xe)) {
      quant = true;
      tx_check_act_i8(ex, op, xe, i ? "second input" : "first input");
      if (e->builtin == TFL_OP_MAXIMUM || e->builtin == TFL_OP_MINIMUM)
        tx_check_same_quant(ex, op, xe, ye, e->builtins);
    }
  }
  if (quant && !e->int8)
    return tx_error(ex, op, "TFLite's %s has no int8 kernel; keep the op "
                            "float",
                    e->builtins);
  if (quill_type_is_quant(ye))
    tx_check_act_i8(ex, op, ye, "output");
  bool fused = e->builtin == TFL_OP_ADD || e->builtin == TFL_OP_SUB ||
               e->builtin == TFL_OP_MUL || e->builtin == TFL_OP_DIV;
  int act = TFL_ACT_NONE;
  bool post = false;
  double lo = 0, hi = 0;
  if (fused && tx_fused_activation(ex, op, &act, &post, &lo, &hi))
    return QUILL_ERR_INVALID;
  if (ex->errors != e0)
    return QUILL_ERR_INVALID;
  unsigned rank = quill_type_rank(yt);
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  int32_t ins[2] = {broadcast_operand(ex, op, 0, rank, lay),
                    broadcast_operand(ex, op, 1, rank, lay)};
  int32_t y = tx_out(ex, op, 0);
  if (ins[0] < 0 || ins[1] < 0 || y < 0)
    return ex->errors != e0 ? QUILL_ERR_INVALID : QUILL_ERR_NOMEM;
  int32_t dst = y;
  if (post) {
    tx_tensor *yt_ = &ex->tensors[y];
    int64_t d[QUILL_MAX_RANK];
    for (unsigned i = 0; i < yt_->rank; i++)
      d[i] = yt_->shape[i];
    dst = tx_tensor_new(ex, tx_printf(ex, "%s_preact", yt_->name), yt_->type,
                        yt_->rank, d);
  }
  tx_op *o = tx_emit(ex, e->builtin, 2, ins, 1, &dst);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = e->opt_type;
  if (fused)
    tx_opt_int(ex, o, TFL_ADD_FUSED_ACTIVATION, TXO_I8, act, 0);
  /* int16 ADD/SUB: the general path (left shift 15, any scales), not the
   * power-of-two one the option's default selects */
  if ((e->builtin == TFL_OP_ADD || e->builtin == TFL_OP_SUB) &&
      tx_is_16x8(quill_type_elem(tx_in_type(ex, op, 0))))
    tx_opt_int(ex, o, TFL_ADD_POT_SCALE_INT16, TXO_BOOL, 0, 1);
  return post ? tx_emit_clamp(ex, dst, y, lo, hi) : QUILL_OK;
}

/* ---- data movement ----------------------------------------------------------------------- */

quill_status tx_write_concat(tflite_exporter *ex, const quill_op *op) {
  unsigned n = quill_op_num_operands(op), e0 = ex->errors;
  quill_type *yt = tx_out_type(ex, op, 0);
  /* TFLite's int8 CONCATENATION does not rescale (uint8's does). */
  for (unsigned i = 0; i < n && ex->errors == e0; i++) {
    quill_type *xe = quill_type_elem(tx_in_type(ex, op, i));
    if (!tx_check_act_i8(ex, op, xe, "input"))
      tx_check_same_quant(ex, op, xe, quill_type_elem(yt), "CONCATENATION");
  }
  tx_check_act_i8(ex, op, quill_type_elem(yt), "output");
  if (ex->errors != e0)
    return QUILL_ERR_INVALID;
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  int32_t *ins = tx_alloc(ex, n * sizeof *ins);
  if (!ins)
    return QUILL_ERR_NOMEM;
  for (unsigned i = 0; i < n; i++)
    if ((ins[i] = tx_in(ex, op, i, lay)) < 0)
      return QUILL_ERR_NOMEM;
  int32_t y = tx_out(ex, op, 0);
  tx_op *o = y < 0 ? NULL : tx_emit(ex, TFL_OP_CONCATENATION, n, ins, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_ConcatenationOptions;
  int64_t axis = quill_op_attr_int(op, "axis", 0);
  tx_opt_int(ex, o, TFL_CONCAT_AXIS, TXO_I32,
             tx_phys_axis(quill_type_rank(yt), (int)axis, lay), 0);
  return QUILL_OK;
}

quill_status tx_emit_reshape(tflite_exporter *ex, int32_t x, int32_t y) {
  if (x < 0 || y < 0)
    return QUILL_ERR_NOMEM;
  tx_tensor *yt = &ex->tensors[y];
  unsigned r = yt->rank;
  int32_t *shape = tx_alloc(ex, (r ? r : 1) * sizeof *shape);
  if (!shape)
    return QUILL_ERR_NOMEM;
  memcpy(shape, yt->shape, r * sizeof *shape);
  int32_t ins[2] = {x, tx_const_i32(ex, "shape", r, shape)};
  tx_op *o = tx_emit(ex, TFL_OP_RESHAPE, 2, ins, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_ReshapeOptions;
  tx_opt_vec(ex, o, TFL_RESHAPE_NEW_SHAPE, r, shape);
  return QUILL_OK;
}

quill_status tx_write_reshape(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0), *yt = tx_out_type(ex, op, 0);
  if (!quill_type_has_static_shape(yt))
    return tx_error(ex, op, "the result shape must be static");
  if (tx_check_same_quant(ex, op, quill_type_elem(xt), quill_type_elem(yt),
                          "RESHAPE"))
    return QUILL_ERR_INVALID;
  const quill_value *xv = tx_ein(ex, op, 0);
  const quill_value *yv = tx_resolve(ex, tx_eout(ex, op, 0));
  int lout = tx_layout_of(ex, yv);
  int lin = tx_layout_of(ex, xv);
  if (lout == TX_FLAT) /* flatten the NHWC data (layout.c) */
    return tx_emit_reshape(ex, tx_value(ex, xv, TX_NHWC), tx_out(ex, op, 0));
  if (!tx_layout_neutral(quill_type_rank(xt), quill_type_dims(xt), lin))
    lin = TX_NATIVE;
  int32_t x = tx_value(ex, xv, lin);
  int32_t y = tx_out(ex, op, 0);
  if (tx_layout_neutral(quill_type_rank(yt), quill_type_dims(yt), lout))
    return tx_emit_reshape(ex, x, y);
  /* The result is NHWC but the data is in NCHW order: reshape to NCHW,
   * then transpose. */
  if (y < 0)
    return QUILL_ERR_NOMEM;
  tx_warning(ex, op, "the result is needed in NHWC layout: a TRANSPOSE "
                     "follows the RESHAPE");
  int64_t d[4];
  for (int i = 0; i < 4; i++)
    d[i] = quill_type_dim(yt, (unsigned)i);
  int32_t tmp = tx_tensor_new(ex, tx_printf(ex, "%s_nchw", ex->tensors[y].name),
                              ex->tensors[y].type, 4, d);
  tx_copy_quant(ex, tmp, y);
  quill_status st = tx_emit_reshape(ex, x, tmp);
  if (st)
    return st;
  int32_t perm[4] = {0, 2, 3, 1};
  int32_t ins[2] = {tmp, tx_const_i32(ex, "perm", 4, perm)};
  tx_op *o = tx_emit(ex, TFL_OP_TRANSPOSE, 2, ins, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_TransposeOptions;
  return QUILL_OK;
}

quill_status tx_write_transpose(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0), *yt = tx_out_type(ex, op, 0);
  if (tx_check_same_quant(ex, op, quill_type_elem(xt), quill_type_elem(yt),
                          "TRANSPOSE"))
    return QUILL_ERR_INVALID;
  unsigned r = quill_type_rank(xt);
  int64_t p[QUILL_MAX_RANK];
  if (quill_op_attr_ints(op, "perm", p, QUILL_MAX_RANK) != (int64_t)r)
    for (unsigned i = 0; i < r; i++)
      p[i] = r - 1 - i; /* ONNX default: reverse */
  const quill_value *xv = tx_ein(ex, op, 0);
  int lin = tx_layout_of(ex, xv);
  int lout = tx_layout_of(ex, tx_resolve(ex, tx_eout(ex, op, 0)));
  /* q[j] = phys axis of the input holding output phys axis j */
  int32_t q[QUILL_MAX_RANK];
  bool identity = true;
  for (unsigned j = 0; j < r; j++) {
    int lo_axis = lout == TX_NHWC && r == 4 ? nhwc_perm[j] : (int)j;
    q[j] = tx_phys_axis(r, (int)p[lo_axis], lin);
    identity &= q[j] == (int32_t)j;
  }
  int32_t x = tx_value(ex, xv, lin), y = tx_out(ex, op, 0);
  if (identity)
    return tx_emit_reshape(ex, x, y);
  if (x < 0 || y < 0)
    return QUILL_ERR_NOMEM;
  int32_t ins[2] = {x, tx_const_i32(ex, "perm", r, q)};
  tx_op *o = tx_emit(ex, TFL_OP_TRANSPOSE, 2, ins, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_TransposeOptions;
  return QUILL_OK;
}

quill_status tx_write_pad(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0), *yt = tx_out_type(ex, op, 0);
  quill_type *xe = quill_type_elem(xt);
  unsigned r = quill_type_rank(xt);
  int64_t pads[2 * QUILL_MAX_RANK];
  if (quill_op_attr_ints(op, "pads", pads, 2 * QUILL_MAX_RANK) != 2 * (int64_t)r)
    return tx_error(ex, op, "'pads' must hold 2 * rank values");
  for (unsigned i = 0; i < 2 * r; i++)
    if (pads[i] < 0)
      return tx_error(ex, op, "negative pads (cropping) are not supported");
  const quill_attr *ma = quill_op_attr(op, "mode");
  const char *mode = ma ? quill_attr_string_value(ma, NULL) : "constant";
  double value = quill_op_attr_float(op, "value", 0.0);
  if (quill_type_is_quant(xe)) {
    if (tx_check_act_i8(ex, op, xe, "input") ||
        tx_check_same_quant(ex, op, xe, quill_type_elem(yt), "PAD"))
      return QUILL_ERR_INVALID;
    if (value != 0)
      return tx_error(ex, op, "padding int8 tensors with a value other than "
                              "0.0 (the zero point) is not supported");
  }
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  int32_t *pp = tx_alloc(ex, 2 * r * sizeof *pp);
  if (!pp)
    return QUILL_ERR_NOMEM;
  for (unsigned j = 0; j < r; j++) {
    unsigned a = lay == TX_NHWC && r == 4 ? (unsigned)nhwc_perm[j] : j;
    pp[2 * j] = (int32_t)pads[a];
    pp[2 * j + 1] = (int32_t)pads[r + a];
  }
  int64_t pd[2] = {r, 2};
  int32_t x = tx_in(ex, op, 0, lay), y = tx_out(ex, op, 0);
  int32_t pt = tx_const(ex, "paddings", TFL_INT32, 2, pd, pp, 2 * r * 4, false);
  if (x < 0 || y < 0 || pt < 0)
    return QUILL_ERR_NOMEM;
  int32_t ins[3] = {x, pt, -1};
  int32_t builtin = TFL_OP_PAD;
  uint8_t opt = TFL_OPT_PadOptions;
  unsigned nin = 2;
  tx_op *o;
  if (!strcmp(mode, "reflect")) {
    builtin = TFL_OP_MIRROR_PAD;
    opt = TFL_OPT_MirrorPadOptions;
  } else if (!strcmp(mode, "constant")) {
    if (value != 0) {
      builtin = TFL_OP_PADV2;
      opt = TFL_OPT_PadV2Options;
      ins[2] = tx_const_f32_scalar(ex, "pad_value", (float)value);
      nin = 3;
    }
  } else {
    return tx_error(ex, op, "pad mode \"%s\" has no TFLite builtin (constant "
                            "and reflect do)",
                    mode);
  }
  o = tx_emit(ex, builtin, nin, ins, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = opt;
  if (builtin == TFL_OP_MIRROR_PAD)
    tx_opt_int(ex, o, TFL_MIRROR_PAD_MODE, TXO_I8, TFL_MIRROR_REFLECT, 0);
  return QUILL_OK;
}

/* ---- resize ---------------------------------------------------------------------------------- */

static const char *attr_str(const quill_op *op, const char *name,
                            const char *dflt) {
  const quill_attr *a = quill_op_attr(op, name);
  return a && quill_attr_kind_of(a) == QUILL_ATTR_STRING
             ? quill_attr_string_value(a, NULL)
             : dflt;
}

/* Quill's (ONNX's) nearest source index, as targets/reference computes it. */
static int64_t onnx_nearest(const char *cm, const char *nm, int64_t x,
                            int64_t in, int64_t out) {
  double scale = (double)out / (double)in, o;
  if (!strcmp(cm, "align_corners"))
    o = out == 1 ? 0.0 : (double)x * (double)(in - 1) / (double)(out - 1);
  else if (!strcmp(cm, "asymmetric"))
    o = (double)x / scale;
  else if (!strcmp(cm, "pytorch_half_pixel"))
    o = out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  else if (!strcmp(cm, "half_pixel"))
    o = (x + 0.5) / scale - 0.5;
  else
    return -1;
  int64_t i;
  bool tie = o - floor(o) == 0.5;
  if (!strcmp(nm, "round_prefer_floor"))
    i = tie ? (int64_t)floor(o) : (int64_t)floor(o + 0.5);
  else if (!strcmp(nm, "round_prefer_ceil"))
    i = tie ? (int64_t)ceil(o) : (int64_t)floor(o + 0.5);
  else if (!strcmp(nm, "floor"))
    i = (int64_t)floor(o);
  else
    i = (int64_t)ceil(o);
  return i < 0 ? 0 : i >= in ? in - 1 : i;
}

/* TFLite's RESIZE_NEAREST_NEIGHBOR source index. */
static int64_t tflite_nearest(bool align, bool half, int64_t x, int64_t in,
                              int64_t out) {
  float scale = align && out > 1 ? (float)(in - 1) / (float)(out - 1)
                                 : (float)in / (float)out;
  float v = ((float)x + (half ? 0.5f : 0.0f)) * scale;
  int64_t i = align ? (int64_t)roundf(v) : (int64_t)floorf(v);
  if (i > in - 1)
    i = in - 1;
  if (half && i < 0)
    i = 0;
  return i;
}

quill_status tx_write_resize(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0), *yt = tx_out_type(ex, op, 0);
  if (quill_type_rank(xt) != 4 || !quill_type_has_static_shape(yt))
    return tx_error(ex, op, "only 4-D resizes with a static result shape "
                            "have a TFLite form");
  const int64_t *xd = quill_type_dims(xt), *yd = quill_type_dims(yt);
  if (xd[0] != yd[0] || xd[1] != yd[1])
    return tx_error(ex, op, "TFLite resizes only the spatial dims (H, W)");
  const char *mode = attr_str(op, "mode", "nearest");
  const char *cm = attr_str(op, "coordinate_transformation_mode", "half_pixel");
  const char *nm = attr_str(op, "nearest_mode", "round_prefer_floor");
  bool linear = !strcmp(mode, "linear");
  bool align = false, half = false;
  if (linear) {
    if (!strcmp(cm, "align_corners"))
      align = true;
    else if (!strcmp(cm, "half_pixel") ||
             (!strcmp(cm, "pytorch_half_pixel") && yd[2] > 1 && yd[3] > 1))
      half = true;
    else if (strcmp(cm, "asymmetric") != 0)
      return tx_error(ex, op, "linear resize with coordinate mode \"%s\" has "
                              "no TFLite form",
                      cm);
  } else if (!strcmp(mode, "nearest")) {
    /* Pick the TFLite flags that pick the same source pixels. */
    static const bool cfg[3][2] = {{false, false}, {false, true},
                                   {true, false}};
    int found = -1;
    for (int c = 0; c < 3 && found < 0; c++) {
      bool same = true;
      for (int d = 2; d < 4 && same; d++)
        for (int64_t x = 0; x < yd[d] && same; x++)
          same = onnx_nearest(cm, nm, x, xd[d], yd[d]) ==
                 tflite_nearest(cfg[c][0], cfg[c][1], x, xd[d], yd[d]);
      if (same)
        found = c;
    }
    if (found < 0)
      return tx_error(ex, op, "nearest resize with coordinate mode \"%s\" and "
                              "nearest mode \"%s\" picks pixels TFLite's "
                              "RESIZE_NEAREST_NEIGHBOR cannot for these sizes",
                      cm, nm);
    align = cfg[found][0];
    half = cfg[found][1];
  } else {
    return tx_error(ex, op, "resize mode \"%s\" has no TFLite builtin", mode);
  }
  quill_type *xe = quill_type_elem(xt);
  if (quill_type_is_quant(xe) &&
      (tx_check_act_i8(ex, op, xe, "input") ||
       tx_check_same_quant(ex, op, xe, quill_type_elem(yt),
                           linear ? "RESIZE_BILINEAR"
                                  : "RESIZE_NEAREST_NEIGHBOR")))
    return QUILL_ERR_INVALID;
  int32_t size[2] = {(int32_t)yd[2], (int32_t)yd[3]};
  int32_t ins[2] = {tx_in(ex, op, 0, TX_NHWC), tx_const_i32(ex, "size", 2, size)};
  int32_t y = tx_out(ex, op, 0);
  if (ins[0] < 0 || ins[1] < 0 || y < 0)
    return QUILL_ERR_NOMEM;
  tx_op *o = tx_emit(ex, linear ? TFL_OP_RESIZE_BILINEAR
                                : TFL_OP_RESIZE_NEAREST_NEIGHBOR,
                     2, ins, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  if (linear) {
    o->opt_type = TFL_OPT_ResizeBilinearOptions;
    tx_opt_int(ex, o, TFL_RESIZE_BILINEAR_ALIGN_CORNERS, TXO_BOOL, align, 0);
    tx_opt_int(ex, o, TFL_RESIZE_BILINEAR_HALF_PIXEL_CENTERS, TXO_BOOL, half,
               0);
  } else {
    o->opt_type = TFL_OPT_ResizeNearestNeighborOptions;
    tx_opt_int(ex, o, TFL_RESIZE_NEAREST_ALIGN_CORNERS, TXO_BOOL, align, 0);
    tx_opt_int(ex, o, TFL_RESIZE_NEAREST_HALF_PIXEL_CENTERS, TXO_BOOL, half,
               0);
  }
  return QUILL_OK;
}

/* ---- identity, constants, casts ------------------------------------------------------------------ */

quill_status tx_write_identity(tflite_exporter *ex, const quill_op *op) {
  /* Only an identity that is a graph output gets here: a copy. */
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  return tx_emit_reshape(ex, tx_in(ex, op, 0, lay), tx_out(ex, op, 0));
}

quill_status tx_write_constant(tflite_exporter *ex, const quill_op *op) {
  (void)ex;
  (void)op; /* tensors are made where constants are used */
  return QUILL_OK;
}

quill_status tx_write_cast(tflite_exporter *ex, const quill_op *op) {
  quill_type *xe = quill_type_elem(tx_in_type(ex, op, 0));
  quill_type *ye = quill_type_elem(tx_out_type(ex, op, 0));
  if (quill_type_is_quant(xe) || quill_type_is_quant(ye))
    return tx_error(ex, op, "casts of quantized tensors are not supported");
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  tx_op *o = tx_emit1(ex, TFL_OP_CAST, TFL_OPT_CastOptions, tx_in(ex, op, 0, lay),
                   tx_out(ex, op, 0));
  if (!o)
    return QUILL_ERR_NOMEM;
  tx_opt_int(ex, o, TFL_CAST_IN_DATA_TYPE, TXO_I8, tx_tensor_type(xe), 0);
  tx_opt_int(ex, o, TFL_CAST_OUT_DATA_TYPE, TXO_I8, tx_tensor_type(ye), 0);
  return QUILL_OK;
}

/* custom {name = "vendor.op"}: a CUSTOM op with custom code "vendor.op"
 * and no options (the runtime needs a kernel registered under that code;
 * the op's other attributes are not written). Operands and results in
 * Quill's own layout (NCHW), as a custom kernel cannot be told otherwise. */
quill_status tx_write_as_custom(tflite_exporter *ex, const quill_op *op,
                                const char *code) {
  unsigned no = quill_op_num_operands(op), nr = quill_op_num_results(op);
  int32_t *ins = tx_alloc(ex, (no ? no : 1) * sizeof *ins);
  int32_t *outs = tx_alloc(ex, (nr ? nr : 1) * sizeof *outs);
  if (!ins || !outs)
    return QUILL_ERR_NOMEM;
  for (unsigned i = 0; i < no; i++)
    ins[i] = tx_in(ex, op, i, TX_NATIVE);
  for (unsigned i = 0; i < nr; i++)
    outs[i] = tx_out(ex, op, i);
  tx_op *o = tx_emit(ex, TFL_OP_CUSTOM, no, ins, nr, outs);
  if (o)
    o->custom_code = tx_printf(ex, "%s", code);
  return o && o->custom_code ? QUILL_OK : QUILL_ERR_NOMEM;
}

quill_status tx_write_custom(tflite_exporter *ex, const quill_op *op) {
  const char *name = quill_op_custom_name(op);
  if (!name)
    return tx_error(ex, op, "a custom op needs a string attribute 'name'");
  return tx_write_as_custom(ex, op, name);
}

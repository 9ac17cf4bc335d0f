/*
 * ops_nn.c - writers of the neural-network ops: fully connected layers
 * (FULLY_CONNECTED, BATCH_MATMUL), pooling (MAX_POOL_2D, AVERAGE_POOL_2D),
 * reductions (MEAN, SUM, REDUCE_MAX, REDUCE_MIN) and softmax, and the
 * helpers the convolutions (ops_conv.c) share with pooling: windows,
 * SAME/VALID padding, explicit PAD, fused activations.
 *
 * Float ops, integer ops (qmatmul) and folded QDQ patterns share
 * one writer each: the effective operand types say whether it is float or
 * int8, and the int8 spec is checked on the quantized ones.
 *
 * ONNX-style explicit pads become TFLite's SAME or VALID padding when they
 * are equal to it; otherwise a PAD (PADV2 with the lowest value for max
 * pooling) runs first and the op is VALID:
 *
 *   SAME: out = ceil(in / s), total = max((out - 1) * s + (k - 1) * d + 1
 *         - in, 0), before = total / 2, after = total - before
 */
#include <math.h>
#include <string.h>

#include "ir/quant.h"
#include "ir/shape.h"
#include "ir/tfl_int16.h"
#include "targets/tflite/export_impl.h"

/* ---- shared helpers ------------------------------------------------------------- */

int32_t tx_temp_like(tflite_exporter *ex, int32_t like, const char *sfx) {
  tx_tensor *l = &ex->tensors[like];
  int64_t d[QUILL_MAX_RANK];
  for (unsigned i = 0; i < l->rank; i++)
    d[i] = l->shape[i];
  const char *name = tx_printf(ex, "%s_%s", l->name, sfx);
  int32_t t = tx_tensor_new(ex, name, l->type, l->rank, d);
  if (t >= 0 && l->nq) {
    tx_tensor *tt = &ex->tensors[t];
    l = &ex->tensors[like]; /* the array may have moved */
    tt->nq = l->nq;
    tt->scale = l->scale;
    tt->zero_point = l->zero_point;
    tt->qdim = l->qdim;
  }
  return t;
}

quill_status tx_fused_activation(tflite_exporter *ex, const quill_op *op,
                                 int *act, bool *post, double *lo,
                                 double *hi) {
  *post = false;
  *act = TFL_ACT_NONE;
  quill_type *ye = quill_type_elem(tx_out_type(ex, op, 0));
  if (quill_type_is_quant(ye))
    return tx_quant_activation(ex, op, ye, act);
  bool present;
  if (!tx_float_activation(op, act, lo, hi, &present))
    *post = true;
  return QUILL_OK;
}

quill_status tx_emit_clamp(tflite_exporter *ex, int32_t in, int32_t out,
                           double lo, double hi) {
  int32_t cur = in;
  if (!isinf(lo)) {
    int32_t c = tx_const_f32_scalar(ex, "clip_min", (float)lo);
    int32_t dst = isinf(hi) ? out : tx_temp_like(ex, out, "lo");
    int32_t ins[2] = {cur, c};
    tx_op *o = tx_emit(ex, TFL_OP_MAXIMUM, 2, ins, 1, &dst);
    if (!o)
      return QUILL_ERR_NOMEM;
    o->opt_type = TFL_OPT_MaximumMinimumOptions;
    cur = dst;
  }
  if (!isinf(hi)) {
    int32_t c = tx_const_f32_scalar(ex, "clip_max", (float)hi);
    int32_t ins[2] = {cur, c};
    tx_op *o = tx_emit(ex, TFL_OP_MINIMUM, 2, ins, 1, &out);
    if (!o)
      return QUILL_ERR_NOMEM;
    o->opt_type = TFL_OPT_MaximumMinimumOptions;
  }
  return QUILL_OK;
}

void tx_read_window(const quill_op *op, const int64_t *x,
                    const int64_t *kernel, quill_window *w) {
  quill_window_init(w, 2);
  quill_op_attr_ints(op, "strides", w->strides, 2);
  quill_op_attr_ints(op, "pads", w->pads, 4);
  quill_op_attr_ints(op, "dilations", w->dilations, 2);
  w->group = quill_op_attr_int(op, "group", 1);
  const quill_attr *ap = quill_op_attr(op, "auto_pad");
  if (ap && quill_attr_kind_of(ap) == QUILL_ATTR_STRING) {
    const char *m = quill_attr_string_value(ap, NULL);
    if (!strncmp(m, "SAME", 4))
      quill_window_same_pads(w, x + 2, kernel, m[5] == 'U', false);
  }
}

void tx_classify_padding(const int64_t *in, const int64_t *out,
                         const int64_t *k, const quill_window *w,
                         tx_padding *p) {
  bool valid = true, same = true;
  for (int i = 0; i < 2; i++) {
    int64_t s = w->strides[i], ek = (k[i] - 1) * w->dilations[i] + 1;
    int64_t before = w->pads[i];
    /* the end padding actually used (ceil mode, or pads larger than
     * needed, give a different declared value) */
    int64_t after = (out[i] - 1) * s + ek - in[i] - before;
    if (after < 0)
      after = 0;
    p->before[i] = before;
    p->after[i] = after;
    if (before || after || out[i] != (in[i] - ek) / s + 1)
      valid = false;
    int64_t so = (in[i] + s - 1) / s;
    int64_t total = (so - 1) * s + ek - in[i];
    if (total < 0)
      total = 0;
    if (out[i] != so || before != total / 2 || after != total - total / 2)
      same = false;
  }
  p->explicit_pad = !valid && !same;
  p->mode = valid || p->explicit_pad ? TFL_PADDING_VALID : TFL_PADDING_SAME;
}

int32_t tx_emit_spatial_pad(tflite_exporter *ex, int32_t x,
                            const tx_padding *p, bool use_value,
                            double value) {
  tx_tensor *xt = &ex->tensors[x];
  int64_t d[4];
  for (int i = 0; i < 4; i++)
    d[i] = xt->shape[i];
  d[1] += p->before[0] + p->after[0];
  d[2] += p->before[1] + p->after[1];
  int32_t padded = tx_tensor_new(ex, tx_printf(ex, "%s_padded", xt->name),
                                 xt->type, 4, d);
  if (padded < 0)
    return -1;
  xt = &ex->tensors[x];
  tx_tensor *pt = &ex->tensors[padded];
  pt->nq = xt->nq;
  pt->scale = xt->scale;
  pt->zero_point = xt->zero_point;
  int32_t pads[8] = {0, 0, (int32_t)p->before[0], (int32_t)p->after[0],
                     (int32_t)p->before[1], (int32_t)p->after[1], 0, 0};
  int64_t pd[2] = {4, 2};
  int32_t pc = tx_const(ex, "paddings", TFL_INT32, 2, pd, pads, sizeof pads,
                        true);
  int32_t ins[3] = {x, pc, -1};
  unsigned nin = 2;
  if (use_value) {
    if (ex->tensors[x].type == TFL_FLOAT32) {
      ins[2] = tx_const_f32_scalar(ex, "pad_value", (float)value);
    } else {
      int8_t v = (int8_t)value;
      ins[2] = tx_const(ex, "pad_value", ex->tensors[x].type, 0, NULL, &v, 1,
                        true);
      if (ins[2] >= 0) {
        tx_tensor *vt = &ex->tensors[ins[2]];
        xt = &ex->tensors[x];
        vt->nq = xt->nq;
        vt->scale = xt->scale;
        vt->zero_point = xt->zero_point;
      }
    }
    nin = 3;
  }
  tx_op *o = tx_emit(ex, use_value ? TFL_OP_PADV2 : TFL_OP_PAD, nin, ins, 1,
                     &padded);
  if (!o)
    return -1;
  o->opt_type = use_value ? TFL_OPT_PadV2Options : TFL_OPT_PadOptions;
  return padded;
}

/* TFLite's int8 CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and
 * BATCH_MATMUL accumulate in int32: an op whose sum needs int64 has no
 * int8 TFLite form. Their 16x8 kernels (16-bit input) always sum in int64
 * and requantize through the int64 MultiplyByQuantizedMultiplier, which
 * is Quill's accumulator = "i64" (quill_requant_fixed64); an i32 one would
 * round otherwise. */
quill_status tx_check_acc_i32(tflite_exporter *ex, const quill_op *op) {
  quill_type *xe = quill_type_elem(tx_in_type(ex, op, 0));
  if (tx_is_16x8(xe)) {
    if (quill_op_acc_i64(op))
      return QUILL_OK;
    return tx_error(ex, op, "16-bit input: TFLite's 16x8 kernels accumulate "
                            "in int64 and requantize with a 16-bit "
                            "multiplier, which the op does only with "
                            "accumulator = \"i64\" (fuse-qdq sets it with "
                            "the tflite rounding)");
  }
  if (!quill_op_acc_i64(op))
    return QUILL_OK;
  return tx_error(ex, op, "it accumulates in int64 (accumulator = \"i64\": "
                          "its worst-case sum does not fit in int32), and "
                          "TFLite's int8 kernels accumulate in int32");
}

/* ---- fully connected and batch matmul ----------------------------------------------- */

/* A 2-D [rows, cols] tensor with the type and quantization of `like`. */
static int32_t temp_2d(tflite_exporter *ex, int32_t like, int64_t rows,
                       int64_t cols) {
  int64_t d[2] = {rows, cols};
  int32_t t = tx_tensor_new(ex, tx_printf(ex, "%s_2d", ex->tensors[like].name),
                            ex->tensors[like].type, 2, d);
  if (t >= 0) {
    tx_tensor *tt = &ex->tensors[t], *l = &ex->tensors[like];
    tt->nq = l->nq;
    tt->scale = l->scale;
    tt->zero_point = l->zero_point;
    tt->qdim = l->qdim;
  }
  return t;
}

/* FULLY_CONNECTED of input tensor `a` with constant weights w (logical
 * [K, N] when kn, else [N, K]), bias attr b (or NULL).
 *
 * The FULLY_CONNECTED is always 2-D: an input of rank > 2 ([..., K], as
 * nn.Linear on [T, B, C]) is reshaped to [M, K] and the [M, N] result
 * back, rather than written with keep_num_dims. TFLite 2.14's reference
 * int8 per-channel kernel (reference_integer_ops::FullyConnectedPerChannel)
 * takes the batch count from output dim 0 and the depth from dim 1, so on
 * a [64, 1, 768] output it computes 64 values and leaves the rest
 * (test/targets/tflite: fc_3d_int8, up to 128 steps off in the
 * TransformerEncoder of the model zoo); the RESHAPEs cost no copy. */
static quill_status emit_fc(tflite_exporter *ex, const quill_op *op,
                            int32_t a, const quill_attr *w, bool kn,
                            const quill_attr *b, double alpha, double beta,
                            bool batched) {
  unsigned e0 = ex->errors;
  quill_type *xe = quill_type_elem(tx_in_type(ex, op, 0));
  quill_type *wt = quill_attr_dense_type(w), *we = quill_type_elem(wt);
  quill_type *ye = quill_type_elem(tx_out_type(ex, op, 0));
  bool quant = quill_type_is_quant(xe);
  const int64_t *wd = quill_type_dims(wt);
  int64_t N = kn ? wd[1] : wd[0], K = kn ? wd[0] : wd[1];
  if (quant) {
    tx_check_act_i8(ex, op, xe, "input");
    tx_check_act_i8(ex, op, ye, "output");
    tx_check_weights(ex, op, w, kn ? 1 : 0);
    if (alpha != 1.0 || beta != 1.0)
      tx_error(ex, op, "alpha and beta other than 1 on quantized operands");
    if (b && tx_check_bias(ex, op, quill_type_elem(quill_attr_dense_type(b)),
                           xe, we, N))
      return QUILL_ERR_INVALID;
  }
  if (b && quill_type_num_elements(quill_attr_dense_type(b)) != N)
    return tx_error(ex, op, "the bias must have one value per output (%lld), "
                            "FULLY_CONNECTED has no other bias form",
                    (long long)N);
  int act;
  bool post;
  double lo, hi;
  if (tx_fused_activation(ex, op, &act, &post, &lo, &hi) || ex->errors != e0)
    return QUILL_ERR_INVALID;
  size_t esz = quill_type_elem_bytes(we);
  size_t wsize = quill_attr_dense_size(w);
  void *wdata = (void *)quill_attr_dense_data(w);
  tx_vinfo *ai = tx_info(ex, tx_ein(ex, op, 0));
  bool flat = ai && ai->layout == TX_FLAT;
  if (kn || flat || (!quant && alpha != 1.0)) {
    wdata = tx_alloc(ex, wsize);
    if (!wdata)
      return QUILL_ERR_NOMEM;
    static const int t2[2] = {1, 0};
    if (kn)
      tx_transpose_data(quill_attr_dense_data(w), wd, 2, t2, esz, wdata);
    else
      memcpy(wdata, quill_attr_dense_data(w), wsize);
    if (!quant && alpha != 1.0)
      for (int64_t i = 0; i < N * K; i++)
        ((float *)wdata)[i] *= (float)alpha;
  }
  if (flat) {
    /* The input is [N, C*H*W] flattened in NHWC order (layout.c): weight
     * column (h*W + w)*C + c takes NCHW column c*H*W + h*W + w. */
    int64_t C = ai->chw[0], H = ai->chw[1], W = ai->chw[2];
    if (C * H * W != K)
      return tx_error(ex, op, "internal error: flattened input of %lld "
                              "features for %lld weights",
                      (long long)(C * H * W), (long long)K);
    unsigned char *perm = tx_alloc(ex, wsize);
    if (!perm)
      return QUILL_ERR_NOMEM;
    for (int64_t n = 0; n < N; n++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t x = 0; x < W; x++)
          for (int64_t c = 0; c < C; c++)
            memcpy(perm + ((size_t)(n * K + (h * W + x) * C + c)) * esz,
                   (unsigned char *)wdata +
                       ((size_t)(n * K + c * H * W + h * W + x)) * esz,
                   esz);
    wdata = perm;
  }
  int64_t nk[2] = {N, K};
  int32_t wt_t = tx_const(ex, "weights", tx_tensor_type(we), 2, nk, wdata,
                          wsize, false);
  if (quant)
    tx_tensor_set_quant(ex, wt_t, we, 0);
  int32_t bt;
  if (quant) {
    int btype;
    size_t bbytes;
    void *bd = tx_bias_values(ex, b, N, xe, &btype, &bbytes);
    if (!bd)
      return QUILL_ERR_NOMEM;
    bt = tx_const(ex, "bias", btype, 1, &N, bd, bbytes, false);
    if (bt >= 0) {
      size_t nw = quill_type_quant_num_params(we);
      tx_tensor *t = &ex->tensors[bt];
      t->nq = nw > 1 ? (unsigned)N : 1;
      t->scale = tx_alloc(ex, (size_t)N * sizeof *t->scale);
      t->zero_point = tx_alloc(ex, (size_t)N * sizeof *t->zero_point);
      if (!t->scale || !t->zero_point)
        return QUILL_ERR_NOMEM;
      float si = tx_scale_f32(quill_type_quant_scales(xe)[0]);
      for (int64_t c = 0; c < N; c++)
        t->scale[c] = (float)((double)si * tx_scale_f32(quill_type_quant_scales(
                                               we)[nw > 1 ? c : 0]));
    }
  } else {
    float *bd = tx_alloc(ex, (size_t)N * 4);
    if (!bd)
      return QUILL_ERR_NOMEM;
    for (int64_t i = 0; b && i < N; i++)
      bd[i] = (float)(beta * quill_attr_dense_get_f64(b, (size_t)i));
    bt = tx_const(ex, "bias", TFL_FLOAT32, 1, &N, bd, (size_t)N * 4, false);
  }
  int32_t y = tx_out(ex, op, 0);
  if (a < 0 || y < 0 || wt_t < 0 || bt < 0)
    return QUILL_ERR_NOMEM;
  int32_t a2 = a, y2 = y;
  if (batched) {
    int64_t M = quill_type_num_elements(tx_in_type(ex, op, 0)) / K;
    a2 = temp_2d(ex, a, M, K);
    y2 = a2 < 0 ? -1 : temp_2d(ex, y, M, N);
    if (y2 < 0)
      return QUILL_ERR_NOMEM;
    quill_status st = tx_emit_reshape(ex, a, a2);
    if (st)
      return st;
  }
  int32_t dst = post ? tx_temp_like(ex, y2, "preact") : y2;
  int32_t ins[3] = {a2, wt_t, bt};
  tx_op *o = tx_emit(ex, TFL_OP_FULLY_CONNECTED, 3, ins, 1, &dst);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_FullyConnectedOptions;
  tx_opt_int(ex, o, TFL_FC_FUSED_ACTIVATION, TXO_I8, act, 0);
  quill_status st = post ? tx_emit_clamp(ex, dst, y2, lo, hi) : QUILL_OK;
  if (st == QUILL_OK && batched)
    st = tx_emit_reshape(ex, y2, y);
  return st;
}

static quill_status emit_batch_matmul(tflite_exporter *ex, const quill_op *op,
                                      bool adj_y) {
  unsigned e0 = ex->errors;
  quill_type *ae = quill_type_elem(tx_in_type(ex, op, 0));
  quill_type *be = quill_type_elem(tx_in_type(ex, op, 1));
  if (quill_type_is_quant(ae)) {
    tx_check_act_i8(ex, op, ae, "input A");
    tx_check_act_i8(ex, op, be, "input B");
    tx_check_act_i8(ex, op, quill_type_elem(tx_out_type(ex, op, 0)),
                    "output");
    if (quill_op_num_operands(op) > 2)
      tx_error(ex, op, "BATCH_MATMUL has no bias input (a constant 2-D B "
                       "would be a FULLY_CONNECTED)");
  }
  int act;
  bool post;
  double lo, hi;
  if (tx_fused_activation(ex, op, &act, &post, &lo, &hi) || ex->errors != e0)
    return QUILL_ERR_INVALID;
  if (act != TFL_ACT_NONE)
    post = true, lo = act == TFL_ACT_RELU_N1_TO_1 ? -1 : 0,
    hi = act == TFL_ACT_RELU6 ? 6 : act == TFL_ACT_RELU_N1_TO_1 ? 1 : INFINITY;
  if (post && quill_type_is_quant(ae))
    return tx_error(ex, op, "BATCH_MATMUL has no fused activation");
  int32_t ins[2] = {tx_in(ex, op, 0, TX_NATIVE), tx_in(ex, op, 1, TX_NATIVE)};
  int32_t y = tx_out(ex, op, 0);
  if (ins[0] < 0 || ins[1] < 0 || y < 0)
    return QUILL_ERR_NOMEM;
  int32_t dst = post ? tx_temp_like(ex, y, "preact") : y;
  tx_op *o = tx_emit(ex, TFL_OP_BATCH_MATMUL, 2, ins, 1, &dst);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_BatchMatMulOptions;
  tx_opt_int(ex, o, TFL_BMM_ADJ_Y, TXO_BOOL, adj_y, 0);
  return post ? tx_emit_clamp(ex, dst, y, lo, hi) : QUILL_OK;
}

quill_status tx_write_gemm(tflite_exporter *ex, const quill_op *op) {
  if (quill_op_attr_int(op, "trans_a", 0))
    return tx_error(ex, op, "trans_a = 1 has no FULLY_CONNECTED form");
  bool trans_b = quill_op_attr_int(op, "trans_b", 0) != 0;
  double alpha = quill_op_attr_float(op, "alpha", 1.0);
  double beta = quill_op_attr_float(op, "beta", 1.0);
  const quill_attr *w = tx_in_const(ex, op, 1);
  const quill_attr *b = NULL;
  if (quill_op_num_operands(op) > 2) {
    b = tx_in_const(ex, op, 2);
    if (!b)
      return tx_error(ex, op, "a non-constant C input is not supported");
  }
  if (!w) {
    if (b || alpha != 1.0)
      return tx_error(ex, op, "non-constant B with C or alpha has no TFLite "
                              "form");
    return emit_batch_matmul(ex, op, trans_b);
  }
  return emit_fc(ex, op, tx_in(ex, op, 0, TX_NATIVE), w, !trans_b, b, alpha,
                 beta, false);
}

quill_status tx_write_matmul(tflite_exporter *ex, const quill_op *op) {
  if (tx_check_acc_i32(ex, op))
    return QUILL_ERR_INVALID;
  quill_type *at = tx_in_type(ex, op, 0), *bt = tx_in_type(ex, op, 1);
  const quill_attr *w = tx_in_const(ex, op, 1);
  if (quill_type_rank(at) < 2 || quill_type_rank(bt) < 2)
    return tx_error(ex, op, "1-D matmul operands are not supported");
  if (w && quill_type_rank(bt) == 2) {
    const quill_attr *b = NULL;
    if (quill_op_num_operands(op) > 2 && !(b = tx_in_const(ex, op, 2)))
      return tx_error(ex, op, "the bias must be a constant");
    return emit_fc(ex, op, tx_in(ex, op, 0, TX_NATIVE), w, true, b, 1.0, 1.0,
                   quill_type_rank(at) > 2);
  }
  return emit_batch_matmul(ex, op, false);
}

/* ---- pooling ------------------------------------------------------------------------ */

/* An integer average (not a folded float op) must round as TFLite's
 * AVERAGE_POOL_2D and MEAN do: the `tflite` policy. */
static quill_status check_avg_rounding(tflite_exporter *ex,
                                       const quill_op *op) {
  tx_opinfo *oi = tx_map_get(&ex->opinfo, op);
  if (oi && oi->folded)
    return QUILL_OK;
  const quill_attr *r = quill_op_attr(op, "rounding");
  const char *rs = r && quill_attr_kind_of(r) == QUILL_ATTR_STRING
                       ? quill_attr_string_value(r, NULL)
                       : "half_even";
  if (strcmp(rs, "tflite") != 0)
    return tx_spec_error(ex, op, "averages round as TFLite ('tflite')",
                         "the op rounds \"%s\"", rs);
  return QUILL_OK;
}

/* True if every value of v is >= 0.0 (stored >= zero point): v comes out
 * of a ReLU-like activation. Max pooling may then pad with 0.0 (PAD)
 * instead of the lowest value (PADV2, which fewer runtimes support). */
static bool nonnegative(tflite_exporter *ex, const quill_value *v) {
  for (int depth = 0; v && depth < 8; depth++) {
    /* a quantized type whose zero point is its lowest value holds no
     * negative number */
    quill_type *qe = quill_type_elem(quill_value_type(v));
    if (quill_type_is_quant(qe) && quill_type_quant_num_params(qe) == 1 &&
        quill_type_quant_zero_points(qe)[0] <= quill_type_quant_qmin(qe))
      return true;
    quill_op *d = quill_value_def(v);
    if (!d)
      return false;
    quill_opcode opc = quill_op_opcode(d);
    if (opc == QUILL_OP_QUANTIZE || opc == QUILL_OP_MAXPOOL ||
        opc == QUILL_OP_IDENTITY) {
      v = quill_op_operand(d, 0); /* look through */
      continue;
    }
    if (opc == QUILL_OP_RELU)
      return true;
    if (opc == QUILL_OP_CLIP)
      return quill_op_num_operands(d) == 1 &&
             quill_op_attr_float(d, "min", -1.0) >= 0.0;
    const quill_attr *a = quill_op_attr(d, "activation");
    if (a && quill_attr_kind_of(a) == QUILL_ATTR_STRING) {
      const char *s = quill_attr_string_value(a, NULL);
      return !strcmp(s, "relu") ||
             quill_op_attr_float(d, "activation_min", -1.0) >= 0.0;
    }
    quill_type *e = quill_type_elem(quill_value_type(v));
    if (quill_type_is_quant(e) && quill_type_quant_num_params(e) == 1)
      return quill_op_attr_int(d, "act_min", INT64_MIN) >=
             quill_type_quant_zero_points(e)[0];
    return false;
  }
  (void)ex;
  return false;
}

static quill_status emit_pool(tflite_exporter *ex, const quill_op *op,
                              bool avg, const int64_t *kernel,
                              const quill_window *win, bool include_pad) {
  unsigned e0 = ex->errors;
  quill_type *xt = tx_in_type(ex, op, 0), *yt = tx_out_type(ex, op, 0);
  quill_type *xe = quill_type_elem(xt), *ye = quill_type_elem(yt);
  const char *name = avg ? "AVERAGE_POOL_2D" : "MAX_POOL_2D";
  if (quill_type_rank(xt) != 4)
    return tx_error(ex, op, "only 2-D pooling (4-D tensors) has a TFLite form");
  if (win->dilations[0] != 1 || win->dilations[1] != 1)
    return tx_error(ex, op, "dilated pooling has no TFLite form");
  if (quill_type_is_quant(xe)) {
    tx_check_act_i8(ex, op, xe, "input");
    tx_check_same_quant(ex, op, xe, ye, name);
    if (avg)
      check_avg_rounding(ex, op);
  }
  if (ex->errors != e0)
    return QUILL_ERR_INVALID;
  const int64_t *xd = quill_type_dims(xt), *yd = quill_type_dims(yt);
  tx_padding p;
  int64_t hw[2] = {xd[2], xd[3]}, ohw[2] = {yd[2], yd[3]};
  tx_classify_padding(hw, ohw, kernel, win, &p);
  if (avg && p.mode == TFL_PADDING_SAME && include_pad &&
      (p.before[0] || p.before[1] || p.after[0] || p.after[1]))
    p.explicit_pad = true, p.mode = TFL_PADDING_VALID; /* pad zeros, count them */
  if (avg && p.explicit_pad && !include_pad)
    return tx_error(ex, op, "average pooling over pads [%lld, %lld, %lld, "
                            "%lld] that are not SAME padding, excluding the "
                            "padding from the count: TFLite cannot express it",
                    (long long)p.before[0], (long long)p.before[1],
                    (long long)p.after[0], (long long)p.after[1]);
  int32_t x = tx_in(ex, op, 0, TX_NHWC), y = tx_out(ex, op, 0);
  if (x < 0 || y < 0)
    return QUILL_ERR_NOMEM;
  if (p.explicit_pad) {
    double low = quill_type_is_quant(xe)
                     ? (double)quill_type_int_min(quill_type_quant_storage(xe))
                     : -3.4028234663852886e38;
    /* every window holds an input value (pads are smaller than the
     * kernel), so 0.0 padding cannot win over a non-negative input */
    bool use_low = !avg && !nonnegative(ex, tx_ein(ex, op, 0));
    x = tx_emit_spatial_pad(ex, x, &p, use_low, low);
    if (x < 0)
      return QUILL_ERR_NOMEM;
  }
  tx_op *o = tx_emit(ex, avg ? TFL_OP_AVERAGE_POOL_2D : TFL_OP_MAX_POOL_2D, 1,
                     &x, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_Pool2DOptions;
  tx_opt_int(ex, o, TFL_POOL_PADDING, TXO_I8, p.mode, 0);
  tx_opt_int(ex, o, TFL_POOL_STRIDE_W, TXO_I32, win->strides[1], 0);
  tx_opt_int(ex, o, TFL_POOL_STRIDE_H, TXO_I32, win->strides[0], 0);
  tx_opt_int(ex, o, TFL_POOL_FILTER_WIDTH, TXO_I32, kernel[1], 0);
  tx_opt_int(ex, o, TFL_POOL_FILTER_HEIGHT, TXO_I32, kernel[0], 0);
  return QUILL_OK;
}

quill_status tx_write_pool(tflite_exporter *ex, const quill_op *op) {
  int64_t kernel[2] = {1, 1};
  quill_op_attr_ints(op, "kernel_shape", kernel, 2);
  quill_window win;
  tx_read_window(op, quill_type_dims(tx_in_type(ex, op, 0)), kernel, &win);
  bool avg = quill_op_opcode(op) == QUILL_OP_AVGPOOL;
  return emit_pool(ex, op, avg, kernel, &win,
                   quill_op_attr_int(op, "count_include_pad", 0) != 0);
}

quill_status tx_write_global_pool(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0);
  if (quill_type_rank(xt) != 4)
    return tx_error(ex, op, "only 4-D global pooling has a TFLite form");
  const int64_t *xd = quill_type_dims(xt);
  int64_t kernel[2] = {xd[2], xd[3]};
  quill_window win;
  quill_window_init(&win, 2);
  bool avg = quill_op_opcode(op) == QUILL_OP_GLOBAL_AVGPOOL;
  quill_type *xe = quill_type_elem(xt);
  quill_type *ye = quill_type_elem(tx_out_type(ex, op, 0));
  if (avg && quill_type_is_quant(xe) && quill_type_is_quant(ye) &&
      (tx_scale_f32(quill_type_quant_scales(xe)[0]) !=
           tx_scale_f32(quill_type_quant_scales(ye)[0]) ||
       quill_type_quant_zero_points(xe)[0] !=
           quill_type_quant_zero_points(ye)[0])) {
    /* Rescaling average: TFLite's int8 or int16 MEAN over H and W, which
     * folds 1/n into the multiplier of s_x / s_y by an integer division;
     * fuse-qdq gives means under tflite rounding that multiplier
     * (ir/quant.h quill_mean_multiplier); a 16-bit one must have it: one
     * step apart on 9 of 512 ResNet-18 channels (7x7) otherwise. */
    unsigned e0 = ex->errors;
    int32_t tm = 0;
    int ts = 0;
    int64_t om = 0, os = 0;
    if (tx_is_16x8(xe) &&
        (!quill_mean_multiplier(
             quill_requant_multiplier(quill_type_quant_scales(xe)[0],
                                      quill_type_quant_scales(ye)[0]),
             xd[2] * xd[3], &tm, &ts) ||
         quill_op_attr_ints(op, "multiplier", &om, 1) != 1 ||
         quill_op_attr_ints(op, "shift", &os, 1) != 1 || om != tm ||
         os != ts))
      return tx_error(ex, op, "a rescaling int16 average is TFLite's int16 "
                              "MEAN only with its multiplier (s_x / s_y with "
                              "1/%lld folded in: %d, shift %d; quantize with "
                              "tflite rounding and fixed point), or with the "
                              "input's params (AVERAGE_POOL_2D)",
                      (long long)(xd[2] * xd[3]), (int)tm, ts);
    tx_check_act_i8(ex, op, xe, "input");
    tx_check_act_i8(ex, op, ye, "output");
    tx_opinfo *oi = tx_map_get(&ex->opinfo, op);
    if (!(oi && oi->folded)) {
      if (!check_avg_rounding(ex, op) && !quill_op_attr(op, "multiplier"))
        tx_spec_error(ex, op, "requantization is fixed point",
                      "the op requantizes in f32 (no 'multiplier')");
    }
    if (ex->errors != e0)
      return QUILL_ERR_INVALID;
    int32_t axes[2] = {1, 2};
    int32_t ins[2] = {tx_in(ex, op, 0, TX_NHWC),
                      tx_const_i32(ex, "axes", 2, axes)};
    int32_t y = tx_out(ex, op, 0);
    if (ins[0] < 0 || ins[1] < 0 || y < 0)
      return QUILL_ERR_NOMEM;
    tx_op *o = tx_emit(ex, TFL_OP_MEAN, 2, ins, 1, &y);
    if (!o)
      return QUILL_ERR_NOMEM;
    o->opt_type = TFL_OPT_ReducerOptions;
    tx_opt_int(ex, o, TFL_REDUCER_KEEP_DIMS, TXO_BOOL, true, false);
    return QUILL_OK;
  }
  return emit_pool(ex, op, avg, kernel, &win, false);
}

/* ---- reductions and softmax ----------------------------------------------------------- */

quill_status tx_write_reduce(tflite_exporter *ex, const quill_op *op) {
  unsigned e0 = ex->errors;
  static const struct {
    quill_opcode opc;
    int32_t builtin;
  } map[] = {{QUILL_OP_REDUCE_MEAN, TFL_OP_MEAN},
             {QUILL_OP_REDUCE_SUM, TFL_OP_SUM},
             {QUILL_OP_REDUCE_MAX, TFL_OP_REDUCE_MAX},
             {QUILL_OP_REDUCE_MIN, TFL_OP_REDUCE_MIN}};
  int32_t builtin = TFL_OP_MEAN;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (map[i].opc == quill_op_opcode(op))
      builtin = map[i].builtin;
  quill_type *xt = tx_in_type(ex, op, 0);
  quill_type *xe = quill_type_elem(xt);
  unsigned rank = quill_type_rank(xt);
  int64_t axes[QUILL_MAX_RANK];
  int64_t na = quill_op_attr_ints(op, "axes", axes, QUILL_MAX_RANK);
  if (na < 0) {
    for (unsigned i = 0; i < rank; i++)
      axes[i] = i;
    na = rank;
  }
  bool keep = quill_op_attr_int(op, "keepdims", 1) != 0;
  if (quill_type_is_quant(xe)) {
    tx_check_act_i8(ex, op, xe, "input");
    tx_check_act_i8(ex, op, quill_type_elem(tx_out_type(ex, op, 0)),
                    "output");
    if (builtin == TFL_OP_REDUCE_MAX || builtin == TFL_OP_REDUCE_MIN)
      tx_check_same_quant(ex, op, xe, quill_type_elem(tx_out_type(ex, op, 0)),
                          builtin == TFL_OP_REDUCE_MAX ? "REDUCE_MAX"
                                                       : "REDUCE_MIN");
    if (ex->errors != e0)
      return QUILL_ERR_INVALID;
  }
  /* The input's layout, unless dropping the axes would leave the other
   * dims out of order. */
  int lay = tx_layout_of(ex, tx_ein(ex, op, 0));
  if (keep)
    lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  else if (lay == TX_NHWC) {
    bool dropped[4] = {0};
    for (int64_t i = 0; i < na; i++)
      dropped[(axes[i] + 4) % 4] = true;
    static const int perm[4] = {0, 2, 3, 1};
    int last = -1;
    for (int i = 0; i < 4; i++)
      if (!dropped[perm[i]]) {
        if (perm[i] < last)
          lay = TX_NATIVE;
        last = perm[i];
      }
  }
  int32_t pa[QUILL_MAX_RANK];
  for (int64_t i = 0; i < na; i++)
    pa[i] = tx_phys_axis(rank, (int)axes[i], lay);
  int32_t x = tx_in(ex, op, 0, lay), y = tx_out(ex, op, 0);
  int32_t at = tx_const_i32(ex, "axes", (size_t)na, pa);
  if (x < 0 || y < 0 || at < 0)
    return QUILL_ERR_NOMEM;
  int32_t ins[2] = {x, at};
  tx_op *o = tx_emit(ex, builtin, 2, ins, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_ReducerOptions;
  tx_opt_int(ex, o, TFL_REDUCER_KEEP_DIMS, TXO_BOOL, keep, 0);
  return QUILL_OK;
}

/* An int8 softmax (i8 operand, result at 1/256 : -128) is TFLite's int8
 * SOFTMAX integer for integer (ir/tfl_int8.h; fuse-qdq makes it under
 * tflite rounding; runtime cases softmax_i8_*, 0 steps from TFLite's
 * reference kernels). A folded QDQ softmax is written as the same SOFTMAX,
 * which computes exp in gemmlowp fixed point from the input scale where
 * Quill's reference form computes the f32 softmax of the dequantized
 * values and rounds once: the two may be 1 step apart where the exact
 * value lies next to a rounding boundary (PP-OCRv4 rec: 1 of 265000
 * outputs; runtime case softmax_qdq, bound 1). */
quill_status tx_write_softmax(tflite_exporter *ex, const quill_op *op) {
  unsigned e0 = ex->errors;
  bool log = quill_op_opcode(op) == QUILL_OP_LOG_SOFTMAX;
  quill_type *xt = tx_in_type(ex, op, 0);
  quill_type *ye = quill_type_elem(tx_out_type(ex, op, 0));
  unsigned rank = quill_type_rank(xt);
  int64_t axis = quill_op_attr_int(op, "axis", -1);
  if (axis < 0)
    axis += rank;
  int lay = tx_layout_of(ex, tx_eout(ex, op, 0));
  if (tx_phys_axis(rank, (int)axis, lay) != (int)rank - 1)
    return tx_error(ex, op, "softmax over axis %lld: TFLite's %s works on the "
                            "last axis only",
                    (long long)axis, log ? "LOG_SOFTMAX" : "SOFTMAX");
  if (quill_type_is_quant(quill_type_elem(xt))) {
    tx_check_act_i8(ex, op, quill_type_elem(xt), "input");
    tx_check_act_i8(ex, op, ye, "output");
    bool i16 = quill_type_kind_of(quill_type_quant_storage(ye)) ==
               QUILL_TYPE_I16;
    /* int16 SOFTMAX (TFLite's 16x8 kernel; the reference interpreter
     * computes it, ir/tfl_int16.h): 1/32768, zero point 0 */
    double want_s = log ? 16.0 / 256 : i16 ? 1.0 / 32768 : 1.0 / 256;
    int64_t want_z = log ? 127 : i16 ? 0 : -128;
    if (log && i16 && ex->errors == e0)
      return tx_spec_error(ex, op, "activations are int8",
                           "TFLite has no int16 LOG_SOFTMAX: keep the op "
                           "float");
    if (ex->errors == e0 && (tx_scale_f32(quill_type_quant_scales(ye)[0]) !=
                            (float)want_s ||
                        quill_type_quant_zero_points(ye)[0] != want_z))
      tx_spec_error(ex, op, "fixed output quantization",
                    "TFLite's %s %s outputs scale %g, zero point %lld; the "
                    "op's output has %.9g:%lld",
                    i16 ? "int16" : "int8", log ? "LOG_SOFTMAX" : "SOFTMAX",
                    want_s,
                    (long long)want_z, quill_type_quant_scales(ye)[0],
                    (long long)quill_type_quant_zero_points(ye)[0]);
    if (ex->errors != e0)
      return QUILL_ERR_INVALID;
    /* TFLite's reference int8 SOFTMAX shifts an int32 by 23 + the exp
     * sum's bits above one: a row whose sum reaches 512 (512 or more
     * values close to the row's maximum) shifts by 32 or more, undefined
     * in C++ (127 on x86; LiteRT's reference kernel aborts). Quill and
     * TFLite's optimized kernels round exactly there (docs/numerics.md). */
    int64_t row = quill_type_dim(xt, (unsigned)axis);
    if (!log && !i16 && row >= 512)
      tx_warning(ex, op,
                 "int8 SOFTMAX over rows of %lld values: a row whose exp "
                 "sum reaches 512 (512 or more values near its maximum) is "
                 "undefined behaviour in TFLite's reference kernel (127 on "
                 "x86, or an abort), where Quill and TFLite's optimized "
                 "kernels give the exactly rounded value; keep the op "
                 "float (--keep-float) if the target runs the reference "
                 "kernel",
                 (long long)row);
  }
  int32_t x = tx_in(ex, op, 0, lay), y = tx_out(ex, op, 0);
  if (x < 0 || y < 0)
    return QUILL_ERR_NOMEM;
  tx_op *o = tx_emit(ex, log ? TFL_OP_LOG_SOFTMAX : TFL_OP_SOFTMAX, 1, &x, 1,
                     &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  if (log) {
    o->opt_type = TFL_OPT_LogSoftmaxOptions;
  } else {
    o->opt_type = TFL_OPT_SoftmaxOptions;
    tx_opt_f32(ex, o, TFL_SOFTMAX_BETA, 1.0f, 0.0f);
  }
  return QUILL_OK;
}

/*
 * ops_rnn.c - the writers of lstm and qlstm: one float or integer
 * UNIDIRECTIONAL_SEQUENCE_LSTM
 * (time major, no peepholes, projection, clipping or layer norm; fused
 * activation TANH for the cell input and output, sigmoid gates: the
 * definition of Quill's lstm, targets/reference/kernels_rnn.c).
 *
 * Quill's operands hold the gates in ONNX order (rows i, o, f, c of w and
 * r; b = Wb then Rb); TFLite takes one tensor per gate, in its input order
 *
 *   0 x [seq, batch, in]     1-4  input-to-{input, forget, cell, output}
 *   5-8 recurrent-to-{...}   9-11 cell-to-* (peepholes, absent)
 *   12-15 {input, forget, cell, output} gate bias = Wb + Rb
 *   16-17 projection (absent) 18 output state, 19 cell state [batch, h]
 *   20-23 layer norm coefficients (absent)
 *
 * so the gate rows are cut apart at compile time and Wb + Rb is added in
 * double and rounded to f32. The two states are variable tensors without
 * data: TFLite starts them at zero, as Quill's lstm starts.
 *
 * TFLite computes in f32 (its gate sums as f32 dot products, its own
 * sigmoid and tanh), Quill's reference in double rounded to f32 once per
 * step: equal within float rounding, not bit for bit (runtime case
 * lstm_f32 and its bound there).
 *
 * qlstm is TFLite's integer form (8x8_16, ir/qlstm.h): int8 x, gate
 * weights (one per-tensor scale s_w for the four input blocks, s_r for
 * the recurrent ones), int32 gate biases at s_x * s_w, the output state
 * int8 with the result's parameters, the cell state int16 at 2^C. TFLite
 * reads the rest from the op's five intermediates: without layer norm it
 * takes the gates' Q3.12 itself and only reads #4, the hidden state (the
 * result's parameters again: without projection the output is the hidden
 * state); #0-3 are written int16 at 2^-12 as TFLite's converter writes
 * them. Its kernel then computes what Quill's reference kernel computes,
 * bit for bit (runtime cases qlstm_*).
 */
#include <math.h>
#include <string.h>

#include "ir/qlstm.h"
#include "targets/tflite/export_impl.h"

/* TFLite's gate order (input, forget, cell, output) as ONNX row blocks. */
static const int onnx_gate[4] = {0, 2, 3, 1};

/* Rows [g*h, (g+1)*h) of the constant a ([4h, cols]) as an f32 tensor. */
static int32_t gate_block(tflite_exporter *ex, const quill_attr *a, int g,
                          int64_t h, int64_t cols, const char *name) {
  float *v = tx_alloc(ex, (size_t)(h * cols) * sizeof *v);
  if (!v)
    return -1;
  for (int64_t i = 0; i < h * cols; i++)
    v[i] = (float)quill_attr_dense_get_f64(a, (size_t)(g * h * cols + i));
  int64_t d[2] = {h, cols};
  return tx_const(ex, name, TFL_FLOAT32, 2, d, v,
                  (size_t)(h * cols) * sizeof *v, false);
}

quill_status tx_write_lstm(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0);
  if (quill_type_kind_of(quill_type_elem(xt)) != QUILL_TYPE_F32)
    return tx_error(ex, op, "only an f32 lstm has a TFLite form here (keep "
                            "it float: UNIDIRECTIONAL_SEQUENCE_LSTM)");
  if (!quill_type_has_static_shape(xt))
    return tx_error(ex, op, "dynamic shapes are not supported");
  const quill_attr *w = tx_in_const(ex, op, 1), *r = tx_in_const(ex, op, 2);
  const quill_attr *b =
      quill_op_num_operands(op) > 3 ? tx_in_const(ex, op, 3) : NULL;
  if (!w || !r || (quill_op_num_operands(op) > 3 && !b))
    return tx_error(ex, op, "the weights and biases must be constants");
  const int64_t *xd = quill_type_dims(xt);
  int64_t batch = xd[1], in = xd[2];
  int64_t h = quill_type_dim(quill_attr_dense_type(r), 1);
  const char *base = quill_value_name(quill_op_result(op, 0));
  base = base ? base : "lstm";
  static const char *const gname[4] = {"input", "forget", "cell", "output"};
  int32_t ins[24];
  for (int i = 0; i < 24; i++)
    ins[i] = -1;
  ins[0] = tx_in(ex, op, 0, TX_NATIVE);
  for (int g = 0; g < 4; g++) {
    ins[1 + g] = gate_block(ex, w, onnx_gate[g], h, in,
                            tx_printf(ex, "%s_w_%s", base, gname[g]));
    ins[5 + g] = gate_block(ex, r, onnx_gate[g], h, h,
                            tx_printf(ex, "%s_r_%s", base, gname[g]));
    float *bv = tx_alloc(ex, (size_t)h * sizeof *bv);
    if (!bv)
      return QUILL_ERR_NOMEM;
    for (int64_t j = 0; j < h; j++) {
      size_t k = (size_t)(onnx_gate[g] * h + j);
      bv[j] = b ? (float)(quill_attr_dense_get_f64(b, k) +
                          quill_attr_dense_get_f64(b, (size_t)(4 * h) + k))
                : 0.0f;
    }
    ins[12 + g] = tx_const(ex, tx_printf(ex, "%s_b_%s", base, gname[g]),
                           TFL_FLOAT32, 1, &h, bv, (size_t)h * sizeof *bv,
                           false);
  }
  int64_t sd[2] = {batch, h};
  ins[18] = tx_tensor_new(ex, tx_printf(ex, "%s_h", base), TFL_FLOAT32, 2, sd);
  ins[19] = tx_tensor_new(ex, tx_printf(ex, "%s_c", base), TFL_FLOAT32, 2, sd);
  int32_t y = tx_out(ex, op, 0);
  for (int i = 0; i < 24; i++) /* every input made but the absent ones */
    if (ins[i] < 0 && (i <= 8 || (i >= 12 && i <= 15) || i == 18 || i == 19))
      return ex->errors ? QUILL_ERR_INVALID : QUILL_ERR_NOMEM;
  if (y < 0)
    return ex->errors ? QUILL_ERR_INVALID : QUILL_ERR_NOMEM;
  ex->tensors[ins[18]].is_variable = true;
  ex->tensors[ins[19]].is_variable = true;
  tx_op *o = tx_emit(ex, TFL_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, 24, ins, 1, &y);
  if (!o)
    return QUILL_ERR_NOMEM;
  o->opt_type = TFL_OPT_UnidirectionalSequenceLSTMOptions;
  tx_opt_int(ex, o, TFL_USLSTM_FUSED_ACTIVATION, TXO_I8, TFL_ACT_TANH,
             TFL_ACT_NONE);
  tx_opt_int(ex, o, TFL_USLSTM_TIME_MAJOR, TXO_BOOL, true, false);
  return QUILL_OK;
}

/* Rows [g*h, (g+1)*h) of the int8 constant a ([4h, cols]) as an int8
 * tensor with a's per-tensor quantization. */
static int32_t gate_block_i8(tflite_exporter *ex, const quill_attr *a, int g,
                             int64_t h, int64_t cols, const char *name) {
  const int8_t *d = quill_attr_dense_data(a);
  int64_t dims[2] = {h, cols};
  int32_t t = tx_const(ex, name, TFL_INT8, 2, dims,
                       d + (size_t)(g * h * cols), (size_t)(h * cols), false);
  if (t >= 0)
    tx_tensor_set_quant(ex, t, quill_type_elem(quill_attr_dense_type(a)), 0);
  return t;
}

/* A tensor [batch, h] of `type` quantized at (scale, zp), no data. */
static int32_t state_tensor(tflite_exporter *ex, const char *name, int type,
                            const int64_t *dims, float scale, int64_t zp) {
  int32_t t = tx_tensor_new(ex, name, type, 2, dims);
  if (t < 0)
    return t;
  tx_tensor *tt = &ex->tensors[t];
  tt->nq = 1;
  tt->scale = tx_alloc(ex, sizeof *tt->scale);
  tt->zero_point = tx_alloc(ex, sizeof *tt->zero_point);
  if (!tt->scale || !tt->zero_point)
    return -1;
  tt->scale[0] = scale;
  tt->zero_point[0] = zp;
  return t;
}

quill_status tx_write_qlstm(tflite_exporter *ex, const quill_op *op) {
  quill_type *xt = tx_in_type(ex, op, 0), *yt = tx_out_type(ex, op, 0);
  if (!quill_type_has_static_shape(xt))
    return tx_error(ex, op, "dynamic shapes are not supported");
  const quill_attr *w = tx_in_const(ex, op, 1), *r = tx_in_const(ex, op, 2);
  const quill_attr *b = tx_in_const(ex, op, 3);
  if (!w || !r || !b)
    return tx_error(ex, op, "the weights and biases must be constants");
  quill_type *xe = quill_type_elem(xt), *ye = quill_type_elem(yt);
  quill_type *we = quill_type_elem(quill_attr_dense_type(w));
  quill_type *re = quill_type_elem(quill_attr_dense_type(r));
  unsigned e0 = ex->errors;
  (void)tx_check_act_i8(ex, op, xe, "the input");
  (void)tx_check_act_i8(ex, op, ye, "the result");
  (void)tx_check_weights(ex, op, w, 0);
  (void)tx_check_weights(ex, op, r, 0);
  if (ex->errors != e0)
    return QUILL_ERR_INVALID;
  int64_t C = quill_op_attr_int(op, "cell_shift", -11);
  quill_qlstm_params p;
  const char *why = NULL;
  double s_x = quill_type_quant_scales(xe)[0];
  double s_w = quill_type_quant_scales(we)[0];
  double s_y = quill_type_quant_scales(ye)[0];
  int64_t z_y = quill_type_quant_zero_points(ye)[0];
  if (!quill_qlstm_params_init(&p, s_x, s_w, quill_type_quant_scales(re)[0],
                               s_y, quill_type_quant_zero_points(xe)[0], z_y,
                               C, &why))
    return tx_error(ex, op, "%s", why);
  const int64_t *xd = quill_type_dims(xt);
  int64_t batch = xd[1], in = xd[2];
  int64_t h = quill_type_dim(quill_attr_dense_type(r), 1);
  const char *base = quill_value_name(quill_op_result(op, 0));
  base = base ? base : "qlstm";
  static const char *const gname[4] = {"input", "forget", "cell", "output"};
  int32_t ins[24];
  for (int i = 0; i < 24; i++)
    ins[i] = -1;
  ins[0] = tx_in(ex, op, 0, TX_NATIVE);
  float sb = tx_scale_f32(s_x) * tx_scale_f32(s_w); /* TFLite's bias scale */
  for (int g = 0; g < 4; g++) {
    ins[1 + g] = gate_block_i8(ex, w, onnx_gate[g], h, in,
                               tx_printf(ex, "%s_w_%s", base, gname[g]));
    ins[5 + g] = gate_block_i8(ex, r, onnx_gate[g], h, h,
                               tx_printf(ex, "%s_r_%s", base, gname[g]));
    int32_t *bv = tx_alloc(ex, (size_t)h * sizeof *bv);
    if (!bv)
      return QUILL_ERR_NOMEM;
    for (int64_t j = 0; j < h; j++)
      bv[j] = (int32_t)quill_attr_dense_get_i64(
          b, (size_t)(onnx_gate[g] * h + j));
    ins[12 + g] = tx_const(ex, tx_printf(ex, "%s_b_%s", base, gname[g]),
                           TFL_INT32, 1, &h, bv, (size_t)h * sizeof *bv,
                           false);
    if (ins[12 + g] >= 0) {
      tx_tensor *bt = &ex->tensors[ins[12 + g]];
      bt->nq = 1;
      bt->scale = tx_alloc(ex, sizeof *bt->scale);
      bt->zero_point = tx_alloc(ex, sizeof *bt->zero_point);
      if (!bt->scale || !bt->zero_point)
        return QUILL_ERR_NOMEM;
      bt->scale[0] = sb;
    }
  }
  int64_t sd[2] = {batch, h};
  float fy = tx_scale_f32(s_y), fc = (float)ldexp(1.0, (int)C);
  ins[18] = state_tensor(ex, tx_printf(ex, "%s_h", base), TFL_INT8, sd, fy,
                         z_y);
  ins[19] = state_tensor(ex, tx_printf(ex, "%s_c", base), TFL_INT16, sd, fc,
                         0);
  int32_t inter[5];
  for (int g = 0; g < 4; g++)
    inter[g] = state_tensor(ex, tx_printf(ex, "%s_%s_gate", base, gname[g]),
                            TFL_INT16, sd, 1.0f / 4096.0f, 0);
  inter[4] = state_tensor(ex, tx_printf(ex, "%s_hidden", base), TFL_INT8, sd,
                          fy, z_y);
  int32_t y = tx_out(ex, op, 0);
  for (int i = 0; i < 24; i++) /* every input made but the absent ones */
    if (ins[i] < 0 && (i <= 8 || (i >= 12 && i <= 15) || i == 18 || i == 19))
      return ex->errors ? QUILL_ERR_INVALID : QUILL_ERR_NOMEM;
  for (int i = 0; i < 5; i++)
    if (inter[i] < 0)
      return QUILL_ERR_NOMEM;
  if (y < 0)
    return ex->errors ? QUILL_ERR_INVALID : QUILL_ERR_NOMEM;
  ex->tensors[ins[18]].is_variable = true;
  ex->tensors[ins[19]].is_variable = true;
  tx_op *o = tx_emit(ex, TFL_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, 24, ins, 1, &y);
  if (!o || !(o->intermediates = tx_alloc(ex, sizeof inter)))
    return QUILL_ERR_NOMEM;
  memcpy(o->intermediates, inter, sizeof inter);
  o->ninter = 5;
  o->opt_type = TFL_OPT_UnidirectionalSequenceLSTMOptions;
  tx_opt_int(ex, o, TFL_USLSTM_FUSED_ACTIVATION, TXO_I8, TFL_ACT_TANH,
             TFL_ACT_NONE);
  tx_opt_int(ex, o, TFL_USLSTM_TIME_MAJOR, TXO_BOOL, true, false);
  return QUILL_OK;
}

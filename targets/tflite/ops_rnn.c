/*
 * ops_rnn.c - the writer of lstm: one float UNIDIRECTIONAL_SEQUENCE_LSTM
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
 */
#include <string.h>

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

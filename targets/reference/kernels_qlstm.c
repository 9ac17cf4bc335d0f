/*
 * kernels_qlstm.c - the reference kernel of qlstm: TFLite's integer
 * UNIDIRECTIONAL_SEQUENCE_LSTM step by step, with the arithmetic of
 * ir/qlstm.h (gates, cell and hidden state).
 *
 *   x [seq, batch, in] i8, w [4h, in] i8, r [4h, h] i8, b [4h] i32, gate
 *   rows in ONNX order i, o, f, c; y [seq, batch, h] i8.
 *
 * The zero points are folded into per-row biases once, as TFLite's
 * Prepare does (bx = b - z_x * rowsum(w), bh = -z_y * rowsum(r), int32).
 * The hidden state starts at z_y (TFLite resets an int8 variable tensor to
 * its zero point), the cell state at 0. Per step and batch row every gate
 * reads the previous hidden state, which is replaced only after all four
 * gates of all units are known; y[t] is the new hidden state.
 */
#include <string.h>

#include "ir/qlstm.h"
#include "targets/reference/kernels.h"

QUILL_REF_KERNEL(quill_ref_kernel_qlstm) {
  const quill_tensor *x = &in[0], *w = &in[1], *r = &in[2], *b = &in[3];
  quill_tensor *y = &out[0];
  quill_type *xe = quill_type_elem(x->type), *we = quill_type_elem(w->type);
  quill_type *re = quill_type_elem(r->type), *ye = quill_type_elem(y->type);
  if (!quill_type_is_quant(xe) || !quill_type_is_quant(we) ||
      !quill_type_is_quant(re) || !quill_type_is_quant(ye) ||
      quill_type_rank(x->type) != 3 || quill_type_rank(r->type) != 2)
    return quill_ref_op_error(ctx, op, "expects quantized x [seq, batch, "
                                       "in], w, r and result");
  size_t seq = (size_t)quill_type_dim(x->type, 0);
  size_t batch = (size_t)quill_type_dim(x->type, 1);
  size_t nin = (size_t)quill_type_dim(x->type, 2);
  size_t h = (size_t)quill_type_dim(r->type, 1);
  if (quill_tensor_num_elements(w) != 4 * h * nin ||
      quill_tensor_num_elements(r) != 4 * h * h ||
      quill_tensor_num_elements(b) != 4 * h ||
      quill_tensor_num_elements(y) != seq * batch * h)
    return quill_ref_op_error(ctx, op, "w, r, b or the result do not match "
                                       "x and the hidden size");
  quill_qlstm_params p;
  const char *why = NULL;
  if (!quill_qlstm_params_init(
          &p, quill_type_quant_scales(xe)[0], quill_type_quant_scales(we)[0],
          quill_type_quant_scales(re)[0], quill_type_quant_scales(ye)[0],
          quill_type_quant_zero_points(xe)[0],
          quill_type_quant_zero_points(ye)[0],
          quill_op_attr_int(op, "cell_shift", -11), &why))
    return quill_ref_op_error(ctx, op, why);
  /* bx, bh [4h] int32; the gate pre-activations a [4h] and the states
   * H [batch, h] (i8, as stored) and C [batch, h] (i16) */
  size_t bytes = 8 * h * sizeof(int32_t) + 4 * h * sizeof(int16_t) +
                 batch * h * (sizeof(int16_t) + sizeof(int8_t));
  int32_t *bx = quill_alloc(ctx, bytes);
  if (!bx)
    return QUILL_ERR_NOMEM;
  int32_t *bh = bx + 4 * h;
  int16_t *a = (int16_t *)(bh + 4 * h), *cs = a + 4 * h;
  int8_t *hs = (int8_t *)(cs + batch * h);
  for (size_t g = 0; g < 4 * h; g++) {
    int64_t sw = 0, sr = 0;
    for (size_t k = 0; k < nin; k++)
      sw += quill_tensor_get_i64(w, g * nin + k);
    for (size_t k = 0; k < h; k++)
      sr += quill_tensor_get_i64(r, g * h + k);
    bx[g] = (int32_t)(quill_tensor_get_i64(b, g) - p.zx * sw);
    bh[g] = (int32_t)(-p.zy * sr);
  }
  memset(cs, 0, batch * h * sizeof *cs);
  memset(hs, (int)(int8_t)p.zy, batch * h);
  for (size_t t = 0; t < seq; t++)
    for (size_t n = 0; n < batch; n++) {
      int8_t *hn = hs + n * h;
      int16_t *cn = cs + n * h;
      size_t xo = (t * batch + n) * nin;
      for (size_t g = 0; g < 4 * h; g++) {
        int32_t ax = bx[g], ah = bh[g];
        for (size_t k = 0; k < nin; k++)
          ax += (int32_t)quill_tensor_get_i64(x, xo + k) *
                (int32_t)quill_tensor_get_i64(w, g * nin + k);
        for (size_t k = 0; k < h; k++)
          ah += (int32_t)hn[k] * (int32_t)quill_tensor_get_i64(r, g * h + k);
        a[g] = quill_qlstm_gate(&p, ax, ah);
      }
      for (size_t j = 0; j < h; j++) {
        int16_t ig = quill_qlstm_sigmoid(a[j]);
        int16_t og = quill_qlstm_sigmoid(a[h + j]);
        int16_t fg = quill_qlstm_sigmoid(a[2 * h + j]);
        int16_t cg = quill_qlstm_tanh(a[3 * h + j], 3);
        cn[j] = quill_qlstm_cell(&p, cn[j], ig, fg, cg);
        hn[j] = quill_qlstm_hidden(&p, og, cn[j]);
        quill_tensor_set_i64(y, (t * batch + n) * h + j, hn[j]);
      }
    }
  quill_free(ctx, bx, bytes);
  return QUILL_OK;
}

/*
 * kernels_rnn.c - the reference kernel of lstm: ONNX LSTM's forward layer
 * with the default activations (sigmoid for the gates, tanh for the cell
 * input and output) and a zero initial state.
 *
 *   x [seq, batch, in], w [4h, in], r [4h, h], b [8h] (Wb then Rb; absent:
 *   0), gate rows in ONNX order i, o, f, c. For t = 0 .. seq-1, per batch
 *   row n, with H and C the previous step's state (0 at t = 0):
 *
 *     a    = x[t, n] w^T + H r^T + Wb + Rb          [4h], in double
 *     i, o, f = sigmoid(a_i), sigmoid(a_o), sigmoid(a_f)
 *     C    = f * C + i * tanh(a_c)
 *     H    = o * tanh(C)                      y[t, n] = H
 *
 * Each step computes in double and rounds C and H to the element type
 * once, as the stored state of TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM (the
 * writer in targets/tflite/ops_rnn.c) is: a step's f32 rounding then
 * carries into the next.
 *
 * The recurrence is quill_ref_lstm_eval (rnn.h): the kernel, and the
 * calibrate pass's observer of the cell state (passes/observers.c: the
 * largest |C| of any step, which fuse-qdq's qlstm takes for its cell
 * scale), run the same code.
 */
#include <math.h>
#include <string.h>

#include "targets/reference/kernels.h"
#include "targets/reference/rnn.h"

static double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }

/* v rounded to the element type of t (f32: to float). */
static double round_to(const quill_tensor *t, double v) {
  return quill_type_kind_of(quill_type_elem(t->type)) == QUILL_TYPE_F32
             ? (double)(float)v
             : v;
}

quill_status quill_ref_lstm_eval(quill_context *ctx, const quill_op *op,
                                 const quill_tensor *x, const quill_tensor *w,
                                 const quill_tensor *r, const quill_tensor *b,
                                 quill_tensor *y, double *cell_absmax) {
  /* the element type the states are rounded to: y's (x's without y; the
   * verifier makes them equal) */
  const quill_tensor *yt = y ? y : x;
  double cmax = 0.0;
  if (quill_type_rank(x->type) != 3 || quill_type_rank(r->type) != 2)
    return quill_ref_op_error(ctx, op, "x must be [seq, batch, in] and r "
                                       "[4*hidden, hidden]");
  size_t seq = (size_t)quill_type_dim(x->type, 0);
  size_t batch = (size_t)quill_type_dim(x->type, 1);
  size_t nin = (size_t)quill_type_dim(x->type, 2);
  size_t h = (size_t)quill_type_dim(r->type, 1);
  if (quill_tensor_num_elements(w) != 4 * h * nin ||
      quill_tensor_num_elements(r) != 4 * h * h ||
      (b && quill_tensor_num_elements(b) != 8 * h) ||
      (y && quill_tensor_num_elements(y) != seq * batch * h))
    return quill_ref_op_error(ctx, op, "w, r, b or the result do not match "
                                       "x and the hidden size");
  /* state H, C [batch, h] and the gate sums a [4h] */
  size_t bytes = (2 * batch * h + 4 * h) * sizeof(double);
  double *hs = quill_alloc(ctx, bytes ? bytes : 1);
  if (!hs)
    return QUILL_ERR_NOMEM;
  memset(hs, 0, bytes);
  double *cs = hs + batch * h, *a = cs + batch * h;
  for (size_t t = 0; t < seq; t++)
    for (size_t n = 0; n < batch; n++) {
      double *hn = hs + n * h, *cn = cs + n * h;
      size_t xo = (t * batch + n) * nin;
      for (size_t g = 0; g < 4 * h; g++) {
        double s = b ? quill_tensor_get_f64(b, g) +
                           quill_tensor_get_f64(b, 4 * h + g)
                     : 0.0;
        for (size_t k = 0; k < nin; k++)
          s += quill_tensor_get_f64(x, xo + k) *
               quill_tensor_get_f64(w, g * nin + k);
        for (size_t k = 0; k < h; k++)
          s += hn[k] * quill_tensor_get_f64(r, g * h + k);
        a[g] = s;
      }
      /* every gate reads the previous H: it is replaced only now */
      for (size_t j = 0; j < h; j++) {
        double ig = sigmoid(a[j]), og = sigmoid(a[h + j]);
        double fg = sigmoid(a[2 * h + j]), cg = tanh(a[3 * h + j]);
        cn[j] = round_to(yt, fg * cn[j] + ig * cg);
        hn[j] = round_to(yt, og * tanh(cn[j]));
        cmax = fmax(cmax, fabs(cn[j]));
        if (y)
          quill_tensor_set_f64(y, (t * batch + n) * h + j, hn[j]);
      }
    }
  quill_free(ctx, hs, bytes ? bytes : 1);
  if (cell_absmax)
    *cell_absmax = cmax;
  return QUILL_OK;
}

QUILL_REF_KERNEL(quill_ref_kernel_lstm) {
  return quill_ref_lstm_eval(ctx, op, &in[0], &in[1], &in[2],
                             quill_op_num_operands(op) > 3 ? &in[3] : NULL,
                             &out[0], NULL);
}

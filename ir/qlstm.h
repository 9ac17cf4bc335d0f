/*
 * qlstm.h - the integer arithmetic of `qlstm`, defined once: TFLite's
 * integer UNIDIRECTIONAL_SEQUENCE_LSTM (its 8x8_16 kernel, lstm_eval.cc,
 * without layer norm, peepholes, projection, CIFG or clipping).
 *
 * qlstm %x, %w, %r, %b {cell_shift = C} : y
 *
 *   x [seq, batch, in] i8 (s_x, z_x), w [4h, in] i8 (s_w, 0),
 *   r [4h, h] i8 (s_r, 0), b [4h] i32 (the gate biases at s_x * s_w),
 *   y [seq, batch, h] i8 (s_y, z_y): the hidden state is stored as y is;
 *   the cell state c is int16 at 2^C (C in [-15, -9]); both start at 0.
 *   Gate rows are in ONNX order i, o, f, c (as the float lstm's).
 *
 * Per step t and batch row, gate g (of 4) and unit j:
 *
 *   ax   = b[j] - z_x sum_k w[j,k] + sum_k x_t[k] w[j,k]     int32
 *   ah   =      - z_y sum_k r[j,k] + sum_k h[k] r[j,k]       int32
 *   a    = sat16(sat16(MBQM(ax, mx_g)) + MBQM(ah, mh_g))      Q3.12
 *   i, f, o = logistic(a)       cg = tanh(a)                  Q0.15
 *   c    = sat16(RDPOT(f * c, 15) + RDPOT(i * cg, 30 + C))
 *   h    = sat8(MBQM(o * tanh_{15+C}(c), m_hid) + z_y)        y_t = h
 *
 * MBQM is TFLite's MultiplyByQuantizedMultiplier (gemmlowp doubling high
 * multiply, then a rounding right shift: Quill's "tflite" rounding),
 * RDPOT gemmlowp's RoundingDivideByPOT, logistic / tanh gemmlowp's 16-bit
 * fixed-point functions (Q3.12 in; the cell's tanh reads c with 15 + C
 * integer bits). The multipliers are QuantizeMultiplier of the effective
 * scales TFLite computes in f32 from the f32 tensor scales:
 *
 *   mx_g = (float)(s_w * s_x) / 2^-12     mh_g = (float)(s_r * s_y) / 2^-12
 *   m_hid = (float)(2^-15 / s_y * 2^-15)
 *
 * Pure functions, no state.
 */
#ifndef QUILL_IR_QLSTM_H
#define QUILL_IR_QLSTM_H

#include <stdbool.h>
#include <stdint.h>

#define QUILL_QLSTM_CELL_MIN (-15) /* cell_shift range: the cell tanh */
#define QUILL_QLSTM_CELL_MAX (-9)  /* takes 0 to 6 integer bits */

/* The fixed-point parameters of one qlstm, from its f32 scales. */
typedef struct quill_qlstm_params {
  int32_t mx, mh, mhid; /* multipliers of the input, recurrent and hidden */
  int sx, sh, shid;     /* rescales, and their shifts */
  int cell_shift;       /* C */
  int32_t zx, zy;       /* zero points of x and y (= the hidden state) */
} quill_qlstm_params;

/* Fill p from the scales (rounded to f32 as TFLite stores them). False
 * (and *why set) if a multiplier is not representable or C is outside
 * [QUILL_QLSTM_CELL_MIN, QUILL_QLSTM_CELL_MAX]. */
bool quill_qlstm_params_init(quill_qlstm_params *p, double s_x, double s_w,
                             double s_r, double s_y, int64_t zx, int64_t zy,
                             int64_t cell_shift, const char **why);

/* gemmlowp's logistic of a Q3.12 value, in Q0.15. */
int16_t quill_qlstm_sigmoid(int16_t a);
/* gemmlowp's tanh of a value with `ibits` integer bits (0..6), Q0.15. */
int16_t quill_qlstm_tanh(int16_t a, int ibits);

/* The logistic (logistic = true) or tanh (`ibits` integer bits) of every
 * |a| for a in [-32768, 32767], for tables half the size of all inputs':
 * t[m] = f(m) for m in [0, 32767] and t[32768] = what mirrors f(-32768),
 * so that for every a
 *   f(a) = a >= 0 ? t[a] : 32767 - t[-a]   (logistic)
 *   f(a) = a >= 0 ? t[a] : -t[-a]          (tanh)
 * (gemmlowp's functions are symmetric so: unit.test_qlstm checks every
 * input). t holds QUILL_QLSTM_HALF_TABLE entries. */
#define QUILL_QLSTM_HALF_TABLE 32769
void quill_qlstm_half_table(bool logistic, int ibits, int16_t *t);

/* One gate pre-activation from the two int32 sums (ax, ah above). */
int16_t quill_qlstm_gate(const quill_qlstm_params *p, int32_t ax, int32_t ah);
/* The new cell state from the old one and the gates (Q0.15). */
int16_t quill_qlstm_cell(const quill_qlstm_params *p, int16_t c, int16_t i,
                         int16_t f, int16_t g);
/* The new hidden state (stored as y) from the output gate and the cell. */
int8_t quill_qlstm_hidden(const quill_qlstm_params *p, int16_t o, int16_t c);

#endif /* QUILL_IR_QLSTM_H */

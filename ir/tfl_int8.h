/*
 * tfl_int8.h - TFLite's int8 SOFTMAX, integer for integer (its reference
 * kernel: int8 input, output at scale 1/256 with zero point -128; gemmlowp
 * fixed point). Defined once here (in ir/tfl_int16.c, beside the int16
 * SOFTMAX): the reference interpreter runs it
 * (targets/reference/kernels_norm.c), the LLVM target compiles it from the
 * same parameters and tables (targets/llvm/lower_softmax16.c), fuse-qdq
 * makes it under the backends whose rounding is TFLite's and the TFLite
 * writer writes it as SOFTMAX int8. Pure functions, no state.
 */
#ifndef QUILL_IR_TFL_INT8_H
#define QUILL_IR_TFL_INT8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/types_fwd.h"

/* The output quantization TFLite requires of int8 SOFTMAX. */
#define QUILL_TFL8_OUT_SCALE (1.0 / 256.0)
#define QUILL_TFL8_OUT_ZP (-128)

/* Whether quantized element types xe -> ye are TFLite's int8 SOFTMAX: i8
 * storage, per tensor, ye at 1/256 with zero point -128. */
bool quill_tfl8_softmax_types(const quill_type *xe, const quill_type *ye);

/* TFLite's int8 SOFTMAX parameters for an input scale and beta
 * (SoftmaxPrepare with the reference kernel: PreprocessSoftmaxScaling and
 * CalculateInputRadius with 5 integer bits for the scaled differences),
 * and, since an int8 row's differences to its maximum are the 256 values
 * 0..-255, exp of each as the kernel computes it:
 *   exp[d]     exp_on_negative_values(rescaled(-d)) in Q0.31, 0 where -d is
 *              below diff_min (TFLite skips those: output -128)
 *   exp_acc[d] the same rescaled to Q12.19 (the row sum's terms) */
typedef struct quill_tfl8_softmax {
  int32_t multiplier; /* of beta * s_x * 2^26, capped below 2^31 */
  int left_shift;     /* >= 0 */
  int32_t diff_min;   /* smallest difference that takes part, <= 0 */
  int32_t exp[256];
  int32_t exp_acc[256];
} quill_tfl8_softmax;

/* False if TFLite refuses the scale (beta * s_x * 2^26 <= 1: its
 * QuantizeMultiplierGreaterThanOne check fails). */
bool quill_tfl8_softmax_init(quill_tfl8_softmax *p, double in_scale,
                             double beta);

/* GetReciprocal of a row sum in Q12.19: 1 / (1 + f) in Q0.31 where
 * sum = 2^nbou * (1 + f), f in [0, 1) (gemmlowp's
 * one_over_one_plus_x_for_x_in_0_1: three Newton-Raphson steps); the
 * sum's bits above the unit in *nbou. */
int32_t quill_tfl8_reciprocal(int32_t sum, int *nbou);

/* One output: round(recip * e / 2^(nbou + 23)) - 128, clamped to int8
 * (nbou + 23 up to 35: the sum of one row of 4096 values at most). */
int8_t quill_tfl8_softmax_out(int32_t recip, int nbou, int32_t e);

/* One softmax row of n values, elements `stride` apart in x and y. */
void quill_tfl8_softmax_row(const quill_tfl8_softmax *p, const int8_t *x,
                            int8_t *y, size_t n, size_t stride);

#endif /* QUILL_IR_TFL_INT8_H */

/*
 * tfl_int16.h - TFLite's 16-bit LOGISTIC, TANH and SOFTMAX, integer for
 * integer (its 16x8 quantization mode: int16 activations, zero point 0,
 * outputs at scale 1/32768). Defined once here: fuse-qdq builds the
 * tables of the `lut` ops that stand for LOGISTIC/TANH, the TFLite writer
 * recognises them, the reference interpreter runs the int16 softmax and
 * the LLVM target compiles it from the same parameters and tables.
 * Pure functions, no state.
 */
#ifndef QUILL_IR_TFL_INT16_H
#define QUILL_IR_TFL_INT16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/types_fwd.h"

/* The output scale TFLite requires of int16 LOGISTIC, TANH and SOFTMAX. */
#define QUILL_TFL16_OUT_SCALE (1.0 / 32768.0)

enum { QUILL_TFL16_LOGISTIC, QUILL_TFL16_TANH };

/* Whether quantized element types xe -> ye are the 16x8 form of these ops:
 * i16 storage, per tensor, zero points 0, ye at 1/32768. */
bool quill_tfl16_types(const quill_type *xe, const quill_type *ye);

/* Whether TFLite takes its power-of-two path for this input scale
 * (CheckedLog2 passes and the input left shift is 0, or 0/1 for TANH):
 * its reference kernel computes what quill_tfl16_act_table gives, but its
 * optimized builds (the default resolver) then run gemmlowp's fixed-point
 * LOGISTIC/TANH instead, up to 7 (LOGISTIC) and 12 (TANH) steps off. */
bool quill_tfl16_act_pot(int kind, double in_scale);

/* The table of TFLite's int16 LOGISTIC (kind QUILL_TFL16_LOGISTIC) or TANH
 * for an input of scale `in_scale` (zero point 0): table[x + 32768] is the
 * output of input x, for all 65536 inputs. False if TFLite refuses the
 * scale (its input rescale needs a shift above 31). */
bool quill_tfl16_act_table(int kind, double in_scale, int16_t *table);

/* TFLite's int16 SOFTMAX parameters for an input scale and beta: the
 * rescale of input differences to [-65535, 0] ~ [-10, 0] and the two
 * 513-entry interpolation tables (exp on [-10, 0], 1/(1+x) on [0, 1]). */
typedef struct quill_tfl16_softmax {
  int32_t multiplier;   /* QuantizeMultiplier(s_x * beta / (10 / 65535)) */
  int shift;
  int16_t exp_lut[513];
  int16_t recip_lut[513];
} quill_tfl16_softmax;

/* False if the rescale is not representable. */
bool quill_tfl16_softmax_init(quill_tfl16_softmax *p, double in_scale,
                              double beta);

/* TFLite's table lookup with linear interpolation (LUTLookup): 512
 * segments of 128 inputs each. */
int16_t quill_tfl16_lut_lookup(const int16_t *lut, int16_t x);

/* One softmax row of n values, elements `stride` apart in x and y. */
void quill_tfl16_softmax_row(const quill_tfl16_softmax *p, const int16_t *x,
                             int16_t *y, size_t n, size_t stride);

#endif /* QUILL_IR_TFL_INT16_H */

/*
 * quant.h - the integer arithmetic of quantization, shared by every target.
 *
 * This is the numerics contract: the reference interpreter, the LLVM
 * kernels and the TFLite exporter all requantize through these definitions,
 * so a model gives the same bits everywhere for the same rounding policy.
 *
 *   rounding     float -> int                 fixed-point requantization
 *   half_even    ties to even (nearbyint)     one rounding of acc*m/2^(31-s)
 *   half_away    ties away from zero (round)  one rounding, ties away
 *   half_up      ties toward +inf (floor(x+.5)) one rounding, ties up
 *   tflite       ties away from zero          gemmlowp's double rounding:
 *                                             SaturatingRoundingDoublingHighMul
 *                                             then RoundingDivideByPOT
 */
#ifndef QUILL_IR_QUANT_H
#define QUILL_IR_QUANT_H

#include "ir/types_fwd.h"

typedef enum quill_rounding {
  QUILL_ROUND_HALF_EVEN,
  QUILL_ROUND_HALF_AWAY,
  QUILL_ROUND_HALF_UP,
  QUILL_ROUND_TFLITE,
} quill_rounding;

/* "half_even" etc. -> policy; false if the name is unknown. */
bool quill_rounding_parse(const char *name, quill_rounding *out);
const char *quill_rounding_name(quill_rounding r);

/* Round a double to an integer with the policy (tflite rounds half away).
 * Saturates to the int64 range; NaN gives 0. */
int64_t quill_round(double v, quill_rounding r);

/* Quantize one real value x to an integer of scale/zero point, the
 * arithmetic of the reference `quantize` kernel (ONNX QuantizeLinear with
 * a rounding policy): x / scale is computed in f32 (operands converted to
 * float) unless `f64` (the expressed type is f64), rounded with r, then
 * zp is added and the result clamped to [qmin, qmax]. NaN gives zp (then
 * clamped). Weight and bias constants made by the quantize pass use this
 * too, so folding a `quantize` of a constant gives the same bits. */
int64_t quill_quantize_value(double x, double scale, int64_t zero_point,
                             int64_t qmin, int64_t qmax, quill_rounding r,
                             bool f64);

/* Decompose a positive real multiplier as m * 2^(shift - 31) with m in
 * [2^30, 2^31) (TFLite's QuantizeMultiplier). real <= 0 gives m = 0,
 * shift = 0. Returns false if the shift would leave [-31, 62]. */
bool quill_quantize_multiplier(double real, int32_t *multiplier, int *shift);

/* acc * multiplier * 2^(shift - 31), rounded with the policy. */
int64_t quill_requant_fixed(int64_t acc, int32_t multiplier, int shift,
                            quill_rounding r);

/* The ONNX QLinear* way: acc * scale in f32, rounded with the policy
 * (`scale` is s_x * s_w / s_y computed in f32 by quill_requant_scale_f32). */
int64_t quill_requant_float(int64_t acc, float scale, quill_rounding r);
float quill_requant_scale_f32(double s_x, double s_w, double s_y);

static inline int64_t quill_clamp_i64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

#endif /* QUILL_IR_QUANT_H */

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

#include "types_fwd.h"

QUILL_BEGIN_DECLS

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

/* Decompose a positive real multiplier as m * 2^(shift - 31) with m in
 * [2^30, 2^31) (TFLite's QuantizeMultiplier). real <= 0 gives m = 0,
 * shift = 0. Returns false if the shift would leave [-31, 62]. */
bool quill_quantize_multiplier(double real, int32_t *multiplier, int *shift);

/* TFLite's int8 MEAN over a plane of n values (reduce.cc, mean.h): the
 * multiplier of real = s_x / s_y (quill_quantize_multiplier) with n folded
 * in by an integer division, rs = min(floor(log2 n), 32, 31 + shift),
 * multiplier = (multiplier << rs) / n (truncated), shift -= rs. Not the
 * multiplier of s_x / (n * s_y): that one rounds otherwise on about 6% of
 * ResNet-18's 512 pooled channels. Returns false as
 * quill_quantize_multiplier does, or for n < 1. */
bool quill_mean_multiplier(double real, int64_t n, int32_t *multiplier,
                           int *shift);

/* gemmlowp's SaturatingRoundingDoublingHighMul: (a * b + 2^30) / 2^31
 * rounded half away from zero, INT32_MAX for INT32_MIN * INT32_MIN (the
 * product of two Q0.31 values in gemmlowp's FixedPoint). */
int32_t quill_srdhm(int32_t a, int32_t b);
/* gemmlowp's RoundingDivideByPOT: x / 2^exponent (exponent in [0, 31])
 * rounded half away from zero. */
int32_t quill_rdbpot(int32_t x, int exponent);

/* acc * multiplier * 2^(shift - 31), rounded with the policy. */
int64_t quill_requant_fixed(int64_t acc, int32_t multiplier, int shift,
                            quill_rounding r);

/* The same for a 64-bit accumulator (qconv2d/qmatmul with accumulator =
 * "i64"), as TFLite's int64 MultiplyByQuantizedMultiplier (its 16x8
 * kernels): acc clamped to [-2^47, 2^47), the multiplier reduced to 16 bits
 * (m < 0x7fff0000 ? (m + 2^15) >> 16 : 0x7fff), then one rounding of
 * acc * m16 / 2^(15 - shift) with the policy (tflite: ties up, TFLite's
 * `+ 2^(n-1) >> n`). Exact in int64 for every shift in [-31, 62]. */
int64_t quill_requant_fixed64(int64_t acc, int32_t multiplier, int shift,
                              quill_rounding r);

/* Whether the integer op accumulates in int64: qconv2d/qmatmul carrying
 * `accumulator = "i64"` (fuse-qdq sets it when the worst-case sum does not
 * fit in int32). Absent or "i32": int32 sums modulo 2^32. */
bool quill_op_acc_i64(const quill_op *op);

/* The ONNX QLinear* way: acc * scale in f32, rounded with the policy
 * (`scale` is s_x * s_w / s_y computed in f32 by quill_requant_scale_f32). */
int64_t quill_requant_float(int64_t acc, float scale, quill_rounding r);
float quill_requant_scale_f32(double s_x, double s_w, double s_y);

/* ---- values (the quantize / dequantize ops, docs/quantization.md 2) ----- */

/* The stored value of real x: clamp(zp + round_r(x / scale), qmin, qmax).
 * x / scale is an f32 division of (float)x by (float)scale, or an f64 one
 * when f64 (the expressed type); NaN quantizes to zp. This is the reference
 * `quantize` kernel's definition and the one fuse-qdq uses for activation
 * bounds and lut tables. */
int64_t quill_quantize_value(double x, double scale, int64_t zp, int64_t qmin,
                             int64_t qmax, bool f64, quill_rounding r);
/* The real value of stored q: (q - zp) * scale in f32 ((float)(q - zp) *
 * (float)scale), or in f64 when f64. */
double quill_dequantize_value(int64_t q, double scale, int64_t zp, bool f64);

/* n / d (d > 0) rounded with the policy: exactly for half_even, half_away
 * and half_up; tflite is TFLite's integer average pool,
 * n > 0 ? (n + d/2) / d : (n - d/2) / d with C (truncating) division. */
int64_t quill_div_round(int64_t n, int64_t d, quill_rounding r);

/* ---- fixed-point parameters of the integer ops (section 3) ---------------
 *
 * Every real multiplier is computed the way TFLite's kernels compute it
 * from the f32 scales a .tflite file stores: each scale is first rounded
 * to f32, then the formula is evaluated in f64. So a model exported to
 * TFLite requantizes with exactly the multipliers Quill computed. */

/* The real multiplier of an integer product requantized to scale s_y:
 * (f64)(f32)s_x * (f64)(f32)s_w / (f64)(f32)s_y (qconv2d, qmatmul, qmul;
 * TFLite's PopulateConvolutionQuantizationParams and Mul). */
double quill_product_multiplier(double s_x, double s_w, double s_y);
/* TFLite's MUL (mul.cc): the same product and quotient computed in f32,
 * (f64)((f32)((f32)s_a * (f32)s_b) / (f32)s_y); up to ~6e-8 relative from
 * quill_product_multiplier, one step on some int16 products. */
double quill_mul_multiplier_f32(double s_a, double s_b, double s_y);
/* The real multiplier of requantize: (f64)(f32)s_x / (f64)(f32)s_y. */
double quill_requant_multiplier(double s_x, double s_y);

/* TFLite's ADD: each operand is centered, shifted left by left_shift and
 * scaled to the common scale 2*max(s_a, s_b); the sum is scaled to s_y. */
typedef struct quill_qadd_params {
  int left_shift;        /* 20 for 8-bit operands, 15 for 16-bit */
  int32_t multiplier[3]; /* a, b, result */
  int shift[3];
} quill_qadd_params;

/* The left shift for operands of `bits` storage bits: 20 up to 8 bits, 15
 * up to 16 bits (TFLite's choice; (2^bits - 1) << left_shift < 2^31). */
int quill_qadd_left_shift(unsigned bits);
/* Fill p for scales s_a, s_b, s_y (all > 0): with m = 2 * max(f32 s_a,
 * f32 s_b), the multipliers of s_a / m, s_b / m and m / (2^left_shift *
 * s_y) (quill_quantize_multiplier, in f64 from the f32 scales). Returns
 * false if a multiplier does not decompose. */
bool quill_qadd_params_compute(double s_a, double s_b, double s_y,
                               int left_shift, quill_qadd_params *p);
/* The qadd sum v (before + zp_y and the clamp) of centered operands
 * da = a - zp_a, db = b - zp_b:
 *   v = R_y(R_a(da << left_shift) + R_b(db << left_shift))
 * each R a quill_requant_fixed with the policy (the sum wraps modulo 2^32
 * like an int32 register). */
int64_t quill_qadd_fixed(int64_t da, int64_t db, const quill_qadd_params *p,
                         quill_rounding r);

static inline int64_t quill_clamp_i64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* The calibrated `quant` attribute of a fake_quant op: its quant element
 * type (also when the attribute holds a tensor type of one), or NULL. */
quill_type *quill_fake_quant_type(const quill_op *fq);
/* A name for the value a fake_quant observes, for messages: its operand's
 * name, else the op's location name, else the producer's op name, else
 * "<argument>". */
const char *quill_fake_quant_subject(const quill_op *fq);

QUILL_END_DECLS

#endif /* QUILL_IR_QUANT_H */

/*
 * tfl_int16.c - TFLite's 16-bit LOGISTIC, TANH and SOFTMAX (its 16x8
 * mode) and its int8 SOFTMAX (ir/tfl_int8.h, the last section), integer
 * for integer, as TFLite's reference kernels compute them
 * (tflite-runtime 2.14: kernels/activations.cc for the parameters,
 * internal/reference/integer_ops/logistic.h and tanh.h, the int16
 * SoftmaxInt16 and the LUTPopulate tables of lut.h).
 *
 * LOGISTIC and TANH: the input is rescaled to 1/(3 * 4096) per step (a
 * multiplier below 2^15 and a rounding right shift; power-of-two scales
 * that TFLite's CheckedLog2 accepts use 3 << shift, as TFLite does), and
 * the absolute value is interpolated linearly in a fixed 256-entry table
 * of sigmoid(i/24) in Q0.16; tanh uses tanh(x) = 2 sigmoid(2x) - 1 on the
 * same table. Both are elementwise over 65536 inputs, so callers take the
 * whole table (quill_tfl16_act_table) and use it as a `lut` op.
 *
 * MEAN (requantizing, int16) takes int8's multiplier (ir/quant.h
 * quill_mean_multiplier).
 *
 * SOFTMAX: per row, differences to the row maximum are rescaled to
 * [-65535, 0] ~ [-10, 0] (MultiplyByQuantizedMultiplier), looked up in a
 * 513-entry exp table with interpolation (128 inputs per segment), summed
 * in Q16.15, the sum normalised by its leading zeros and inverted through
 * a 1/(1+x) table, and each exp scaled by the inverse with one rounding
 * shift. The two tables are LUTPopulate's, in double (as TFLite keeps them
 * for backward compatibility).
 */
#include <math.h>

#include "ir/quant.h"
#include "ir/tfl_int16.h"
#include "ir/tfl_int8.h"
#include "ir/type.h"

/* sigmoid(i / 24) in Q0.16 for i = 0..255 (TFLite's sigmoid_table_uint16;
 * not a plain rounding of the function: some entries are one above it). */
static const uint16_t sigmoid_q16[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841,
    39498, 40149, 40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102,
    45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464,
    50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755,
    55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007,
    58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036,
    62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968,
    64030, 64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494,
    64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845,
    64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337,
    65345, 65352, 65360, 65367, 65374, 65381, 65387, 65393, 65399, 65404,
    65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479,
    65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511,
    65512, 65513, 65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520,
    65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524, 65525, 65525,
    65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529,
    65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531,
    65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65535,
};

static bool i16_per_tensor_zp0(const quill_type *e) {
  if (!quill_type_is_quant(e) || quill_type_quant_axis_of(e) >= 0)
    return false;
  const quill_type *s = quill_type_quant_storage(e);
  return quill_type_kind_of(s) == QUILL_TYPE_I16 &&
         quill_type_quant_zero_points(e)[0] == 0;
}

bool quill_tfl16_types(const quill_type *xe, const quill_type *ye) {
  return i16_per_tensor_zp0(xe) && i16_per_tensor_zp0(ye) &&
         quill_type_quant_scales(ye)[0] == QUILL_TFL16_OUT_SCALE;
}

/* TFLite's CheckedLog2 (in f32): whether x is 2^n within 1e-3 of an
 * exponent step, n in *n. */
static bool checked_log2(float x, int *n) {
  float l = logf(x) * (1.0f / logf(2.0f));
  float r = roundf(l);
  *n = (int)r;
  return fabsf(l - r) < 1e-3f;
}

/* The input rescale of Sigmoid/TanhPrepare: multiplier and right shift
 * (x * mult + round) >> shift. */
static bool act_rescale(int kind, float s, int32_t *mult, int *shift) {
  int lg;
  if (checked_log2(s, &lg)) {
    int ls = 12 + lg; /* (15 - 3 integer bits) + log2(scale) */
    if (ls == 0 || (kind == QUILL_TFL16_TANH && ls == 1)) {
      *mult = 3 << ls;
      *shift = 0;
      return true;
    }
  }
  double m = (double)s * 4096.0 * 3.0;
  int sh = 0;
  while (m <= 32767.0 / 2.0 && sh <= 30) {
    sh++;
    m *= 2.0;
  }
  /* x * mult must stay in int32 (TFLite's product is int32) */
  if (!(m <= 32767.0))
    return false;
  *mult = (int32_t)m;
  *shift = sh;
  return true;
}

bool quill_tfl16_act_pot(int kind, double in_scale) {
  int lg;
  if (!checked_log2((float)in_scale, &lg))
    return false;
  int ls = 12 + lg;
  return ls == 0 || (kind == QUILL_TFL16_TANH && ls == 1);
}

static int16_t logistic(int32_t x, int32_t mult, int shift) {
  int32_t rnd = shift > 0 ? INT32_C(1) << (shift - 1) : 0;
  int32_t v = (x * mult + rnd) >> shift;
  uint32_t a = (uint32_t)(v < 0 ? -v : v);
  uint32_t seg = a >> 9, r;
  if (seg >= 255) {
    r = UINT32_C(0x7fff) << 10;
  } else {
    uint32_t lo = sigmoid_q16[seg], hi = sigmoid_q16[seg + 1];
    r = (lo << 9) + (a & 0x1ff) * (hi - lo);
  }
  /* sigmoid(-x) = 1 - sigmoid(x), then Q0.25 -> Q0.15 */
  r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
  return (int16_t)(r >> 10);
}

static int16_t tanh16(int32_t x, int32_t mult, int shift) {
  int32_t rnd = shift > 0 ? INT32_C(1) << (shift - 1) : 0;
  int32_t v = (x * mult + rnd) >> shift;
  uint32_t a = (uint32_t)(v < 0 ? -v : v);
  uint32_t seg = a >> 8;
  int32_t r;
  if (seg >= 255) {
    r = (int32_t)(UINT32_C(0xffff) << 8);
  } else {
    uint32_t lo = sigmoid_q16[seg], hi = sigmoid_q16[seg + 1];
    r = (int32_t)((lo << 8) + (a & 0xff) * (hi - lo));
  }
  /* tanh = 2 sigmoid(2x) - 1, odd; Q0.24 -> Q0.15 */
  r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
  return (int16_t)(r >> 8);
}

bool quill_tfl16_act_table(int kind, double in_scale, int16_t *table) {
  int32_t mult;
  int shift;
  if (!act_rescale(kind, (float)in_scale, &mult, &shift))
    return false;
  for (int32_t x = -32768; x <= 32767; x++)
    table[x + 32768] = kind == QUILL_TFL16_TANH ? tanh16(x, mult, shift)
                                                : logistic(x, mult, shift);
  return true;
}

/* ---- softmax -------------------------------------------------------------- */

static double f_exp(double v) { return exp(v); }
static double f_recip(double v) { return 1.0 / (1.0 + v); }

/* LUTPopulateInt16<double>: 512 segments over the int16 input range of
 * (in_scale, in_zp), output at 2/65535 per step (symmetric [-1, 1]); each
 * entry the sample minus half the midpoint error of the interpolation,
 * and one closing entry for the last slope. */
static void lut_populate(double in_scale, int32_t in_zp, double (*f)(double),
                         int16_t *lut) {
  const double out_scale = 2.0 / 65535;
  const double in_min = in_scale * (-32768 - in_zp);
  const double in_max = in_scale * (32767 - in_zp);
  const double out_min = out_scale * -32768;
  const double out_max = out_scale * 32767;
  const double step = (in_max - in_min) / 512;
  const double half = step / 2;
  const double inv = 65536.0 / (out_max - out_min);
  for (int i = 0; i < 512; i++) {
    double val = f(in_min + i * step);
    double mid = f(in_min + i * step + half);
    double next = f(in_min + (i + 1) * step);
    double sample = round(val * inv);
    double interp = round((next * inv + round(val * inv)) / 2);
    double err = interp - round(mid * inv);
    double v = sample - round(err / 2);
    lut[i] = (int16_t)fmin(fmax(v, -32768.0), 32767.0);
  }
  lut[512] = (int16_t)fmin(fmax(round(f(in_max) * inv), -32768.0), 32767.0);
}

bool quill_tfl16_softmax_init(quill_tfl16_softmax *p, double in_scale,
                              double beta) {
  lut_populate(10.0 / 65535, 32767, f_exp, p->exp_lut);
  lut_populate(1.0 / 65535, -32768, f_recip, p->recip_lut);
  /* TFLite multiplies the f32 scale by the f32 beta in f32 */
  double real = (double)((float)in_scale * (float)beta) / (10.0 / 65535.0);
  return quill_quantize_multiplier(real, &p->multiplier, &p->shift) &&
         p->multiplier != 0;
}

int16_t quill_tfl16_lut_lookup(const int16_t *lut, int16_t x) {
  unsigned idx = (unsigned)(256 + (x >> 7));
  int32_t off = x & 0x7f;
  int32_t slope = (int32_t)lut[idx + 1] - lut[idx];
  return (int16_t)(lut[idx] + ((slope * off + 64) >> 7));
}

static int16_t sat16(int64_t v) {
  return (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
}

void quill_tfl16_softmax_row(const quill_tfl16_softmax *p, const int16_t *x,
                             int16_t *y, size_t n, size_t stride) {
  int16_t mx = INT16_MIN;
  for (size_t i = 0; i < n; i++)
    mx = x[i * stride] > mx ? x[i * stride] : mx;
  /* exp of the rescaled differences, parked in y; their Q16.15 sum */
  int32_t sum = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t d = quill_requant_fixed((int64_t)x[i * stride] - mx,
                                    p->multiplier, p->shift,
                                    QUILL_ROUND_TFLITE);
    int16_t e = quill_tfl16_lut_lookup(p->exp_lut, sat16(d + 32767));
    y[i * stride] = e;
    sum += e;
  }
  /* 1 / sum: normalise to [1, 2) in Q1.14-ish steps and look up 1/(1+x) */
  if (sum <= 0)
    return; /* no elements (the row maximum alone gives ~32767) */
  int lz = 0;
  while (!((uint32_t)sum & (UINT32_C(0x80000000) >> lz)))
    lz++;
  int64_t shifted = (((int64_t)sum << (lz - 1)) + (1 << 13)) >> 14;
  int16_t inv = quill_tfl16_lut_lookup(p->recip_lut,
                                       sat16(shifted - ((1 << 15) + (1 << 16))));
  int rs = 31 - lz;
  int64_t rnd = INT64_C(1) << (rs - 1);
  for (size_t i = 0; i < n; i++) {
    int64_t v = ((int64_t)y[i * stride] * inv + rnd) >> rs;
    y[i * stride] = (int16_t)(v < 0 ? 0 : v > 32767 ? 32767 : v);
  }
}

/* ---- int8 SOFTMAX ---------------------------------------------------------
 *
 * TFLite's int8 SOFTMAX as its reference kernel computes it
 * (tflite-runtime 2.14: kernels/activations.cc SoftmaxPrepare for the
 * parameters, internal/reference/softmax.h for the row, gemmlowp's
 * fixedpoint.h for exp and the reciprocal, internal/common.h GetReciprocal).
 *
 * Per row of int8 values x with maximum mx, for d = mx - x[k] in [0, 255]:
 *
 *   rescaled(d)  SRDHM(-d * 2^left_shift, multiplier): the difference in
 *                Q5.26 (5 integer bits), multiplier ~ beta * s_x * 2^26;
 *                differences below diff_min (the largest that still fits
 *                in Q5.26 after the shift) take no part
 *   e(d)         exp_on_negative_values(rescaled) in Q0.31: exp on
 *                [-1/4, 0) by a Taylor polynomial around -1/8, times
 *                exp(-2^k) for every bit k = -2..4 set in the rest
 *   sum          sum of RoundingDivideByPOT(e, 12) (Q12.19, int32 adds)
 *   recip, nbou  sum = 2^nbou (1 + f): 1 / (1 + f) by Newton-Raphson
 *   y[k]         RoundingDivideByPOT(SRDHM(recip, e), nbou + 23) - 128
 *
 * Since d takes 256 values, quill_tfl8_softmax_init tabulates e(d) and its
 * Q12.19 term: the interpreter and the LLVM target index the same tables
 * and only the reciprocal and the final rounding run per row.
 *
 * TFLite's optimized kernels (the default resolver; XNNPACK does not take
 * int8 SOFTMAX) compute the row in f32 from a table of expf instead
 * (optimized_ops::Softmax, PopulateSoftmaxLookupTable): they may be 1
 * step from these values (0 in the runtime cases softmax_i8_*, 30 random
 * inputs each).
 *
 * The final rounding divides by 2^(nbou + 23), which passes 2^31 for rows
 * whose sum reaches 512 (nbou >= 9: long, flat rows). TFLite's
 * RoundingDivideByPOT then shifts an int32 by 32 or more, which C++ leaves
 * undefined (x86 masks the count: 127 comes out; LiteRT 2.3's reference
 * kernel aborts); here it is the exact rounding (0: the product is below
 * 2^31), which TFLite's optimized kernels give too.
 */

bool quill_tfl8_softmax_types(const quill_type *xe, const quill_type *ye) {
  if (!quill_type_is_quant(xe) || !quill_type_is_quant(ye) ||
      quill_type_quant_axis_of(xe) >= 0 || quill_type_quant_axis_of(ye) >= 0)
    return false;
  return quill_type_kind_of(quill_type_quant_storage(xe)) == QUILL_TYPE_I8 &&
         quill_type_kind_of(quill_type_quant_storage(ye)) == QUILL_TYPE_I8 &&
         quill_type_quant_scales(ye)[0] == QUILL_TFL8_OUT_SCALE &&
         quill_type_quant_zero_points(ye)[0] == QUILL_TFL8_OUT_ZP;
}

/* gemmlowp's SaturatingRoundingMultiplyByPOT<e> for e > 0: a saturating
 * left shift. */
static int32_t mul_pot_sat(int32_t x, int e) {
  int32_t thr = (INT32_C(1) << (31 - e)) - 1;
  if (x > thr)
    return INT32_MAX;
  if (x < -thr)
    return INT32_MIN;
  return (int32_t)((int64_t)x * (INT64_C(1) << e));
}

/* An int32 add that wraps like the kernel's register. */
static int32_t add_wrap(int32_t a, int32_t b) {
  return (int32_t)(uint32_t)((uint32_t)a + (uint32_t)b);
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out. */
static int32_t exp_quarter(int32_t a) {
  const int32_t c = 1895147668;     /* exp(-1/8) */
  const int32_t third = 715827883;  /* 1/3 */
  int32_t x = add_wrap(a, INT32_C(1) << 28); /* a + 1/8 */
  int32_t x2 = quill_srdhm(x, x), x3 = quill_srdhm(x2, x);
  int32_t x4 = quill_srdhm(x2, x2);
  int32_t x4_4 = quill_rdbpot(x4, 2);
  int32_t poly = quill_rdbpot(
      add_wrap(quill_srdhm(add_wrap(x4_4, x3), third), x2), 1);
  return add_wrap(c, quill_srdhm(c, add_wrap(x, poly)));
}

/* exp_on_negative_values for a Q5.26 value a <= 0: Q0.31. */
static int32_t exp_negative(int32_t a) {
  /* exp(-2^k) in Q0.31 for k = -2..4 */
  static const int32_t mult[7] = {1672461947, 1302514674, 790015084,
                                  290630308,  39332535,   720401, 242};
  const int32_t quarter = INT32_C(1) << 24;
  int32_t am = (a & (quarter - 1)) - quarter; /* in [-1/4, 0) */
  int32_t r = exp_quarter(mul_pot_sat(am, 5));
  int32_t rest = am - a;
  for (int k = 0; k < 7; k++)
    if (rest & (INT32_C(1) << (24 + k)))
      r = quill_srdhm(r, mult[k]);
  return a == 0 ? INT32_MAX : r;
}

bool quill_tfl8_softmax_init(quill_tfl8_softmax *p, double in_scale,
                             double beta) {
  /* PreprocessSoftmaxScaling in f64 from the f32 scale and beta */
  double real = (double)(float)beta * (double)(float)in_scale *
                (double)(INT64_C(1) << 26);
  if (real > 2147483647.0)
    real = 2147483647.0;
  if (!(real > 1.0) ||
      !quill_quantize_multiplier(real, &p->multiplier, &p->left_shift) ||
      p->left_shift < 0)
    return false;
  /* CalculateInputRadius(5, left_shift) */
  double radius = 31.0 * (double)(INT64_C(1) << 26) /
                  (double)(INT64_C(1) << p->left_shift);
  p->diff_min = -(int32_t)floor(radius);
  for (int d = 0; d < 256; d++) {
    if (-d < p->diff_min) {
      p->exp[d] = p->exp_acc[d] = 0;
      continue;
    }
    /* |d| * 2^left_shift <= 31 * 2^26 by diff_min: no overflow */
    int32_t s = quill_srdhm((int32_t)(-d * (INT64_C(1) << p->left_shift)),
                            p->multiplier);
    p->exp[d] = exp_negative(s);
    p->exp_acc[d] = quill_rdbpot(p->exp[d], 12);
  }
  return true;
}

/* gemmlowp's one_over_one_plus_x_for_x_in_0_1 on Q0.31. */
static int32_t one_over_one_plus(int32_t a) {
  /* RoundingHalfSum(a, 1): (a + 1 + sign) / 2, truncated */
  int64_t s = (int64_t)a + INT32_MAX;
  int32_t half = (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
  /* Q2.29: x0 = 48/17 - 32/17 * half, then x += x * (1 - half * x) */
  int32_t x = add_wrap(1515870810, quill_srdhm(half, -1010580540));
  for (int i = 0; i < 3; i++) {
    int32_t one_minus = (INT32_C(1) << 29) - quill_srdhm(half, x);
    x = add_wrap(x, mul_pot_sat(quill_srdhm(x, one_minus), 2));
  }
  /* x / 2 as Q1.30, rescaled to Q0.31 */
  return mul_pot_sat(x, 1);
}

int32_t quill_tfl8_reciprocal(int32_t sum, int *nbou) {
  uint32_t u = (uint32_t)sum;
  int lz = 0;
  while (lz < 32 && !(u & (UINT32_C(0x80000000) >> lz)))
    lz++;
  *nbou = 12 - lz;
  /* the sum normalised to [1, 2), minus 1, in Q0.31 (wrapping) */
  uint32_t f = (uint32_t)((uint64_t)u << lz) - UINT32_C(0x80000000);
  return one_over_one_plus((int32_t)f);
}

int8_t quill_tfl8_softmax_out(int32_t recip, int nbou, int32_t e) {
  int64_t v = quill_srdhm(recip, e);
  int k = nbou + 23;
  if (k < 0)
    k = 0;
  if (k > 62)
    k = 62;
  /* RoundingDivideByPOT, exact for every k */
  int64_t mask = (INT64_C(1) << k) - 1;
  int64_t thr = (mask >> 1) + (v < 0 ? 1 : 0);
  int64_t q = (v >> k) + ((v & mask) > thr ? 1 : 0);
  q += QUILL_TFL8_OUT_ZP;
  return (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
}

void quill_tfl8_softmax_row(const quill_tfl8_softmax *p, const int8_t *x,
                            int8_t *y, size_t n, size_t stride) {
  int mx = -128;
  for (size_t i = 0; i < n; i++)
    mx = x[i * stride] > mx ? x[i * stride] : mx;
  int32_t sum = 0;
  for (size_t i = 0; i < n; i++)
    sum = add_wrap(sum, p->exp_acc[mx - x[i * stride]]);
  int nbou;
  int32_t recip = quill_tfl8_reciprocal(sum, &nbou);
  for (size_t i = 0; i < n; i++)
    y[i * stride] = quill_tfl8_softmax_out(recip, nbou, p->exp[mx - x[i * stride]]);
}

/*
 * quant.c - rounding policies and fixed-point requantization (see quant.h
 * for the table of policies).
 *
 * Fixed point follows TFLite/gemmlowp: a real multiplier 0 < M is stored as
 * a Q31 mantissa m in [2^30, 2^31) and an exponent `shift`, M = m * 2^(shift-31).
 * The single-rounding policies compute acc * m exactly in 64 bits (|acc| <
 * 2^31, m < 2^31 so the product fits in 63 bits) and divide by 2^(31-shift)
 * with the policy's tie rule. The tflite policy reproduces gemmlowp's
 * MultiplyByQuantizedMultiplier bit for bit, including its saturation.
 *
 * The end of the file is the integer arithmetic of `qlayer_norm` (qnorm.h
 * has the definition): the exact integer square root, a row's multiplier
 * and shift, one element's result, and the folding of a float
 * layer_norm's gamma, beta and epsilon into the op's integers. The
 * reference kernel calls these; the LLVM target (lower_reduce.c) emits the
 * same integer steps as IR. Products and sums are computed on uint64
 * (wrapping, as the target's i64) and shifted right arithmetically, so no
 * step depends on C's undefined signed overflow.
 */
#include <math.h>
#include <string.h>

#include "ir/qnorm.h"
#include "ir/quant.h"
#include "ir/attr.h"
#include "ir/graph.h"

static const char *const names[] = {"half_even", "half_away", "half_up",
                                    "tflite"};

bool quill_rounding_parse(const char *name, quill_rounding *out) {
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(name, names[i]) == 0) {
      *out = (quill_rounding)i;
      return true;
    }
  return false;
}

const char *quill_rounding_name(quill_rounding r) { return names[r]; }

int64_t quill_round(double v, quill_rounding r) {
  if (isnan(v))
    return 0;
  double x;
  switch (r) {
  case QUILL_ROUND_HALF_EVEN:
    x = nearbyint(v); /* default FE_TONEAREST: ties to even */
    break;
  case QUILL_ROUND_HALF_UP:
    x = floor(v); /* v - floor(v) is exact, v + 0.5 would not be */
    if (v - x >= 0.5)
      x += 1.0;
    break;
  default:
    x = round(v);
    break;
  }
  if (x >= 9223372036854775807.0)
    return INT64_MAX;
  if (x <= -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)x;
}

bool quill_quantize_multiplier(double real, int32_t *multiplier, int *shift) {
  *multiplier = 0;
  *shift = 0;
  if (!(real > 0.0) || isinf(real))
    return real == 0.0;
  int e;
  double q = frexp(real, &e); /* real = q * 2^e, q in [0.5, 1) */
  int64_t m = (int64_t)llround(q * (double)(INT64_C(1) << 31));
  if (m == (INT64_C(1) << 31)) {
    m /= 2;
    e++;
  }
  if (e < -31 || e > 62)
    return false;
  *multiplier = (int32_t)m;
  *shift = e;
  return true;
}

bool quill_mean_multiplier(double real, int64_t n, int32_t *multiplier,
                           int *shift) {
  if (n < 1 || !quill_quantize_multiplier(real, multiplier, shift))
    return false;
  int rs = 0;
  while (rs < 32 && (INT64_C(2) << rs) <= n)
    rs++; /* floor(log2 n), at most 32 */
  if (rs > 31 + *shift)
    rs = 31 + *shift;
  if (rs <= 0)
    return rs == 0 || *multiplier == 0;
  *multiplier = (int32_t)(((int64_t)*multiplier << rs) / n);
  *shift -= rs;
  return true;
}

int32_t quill_srdhm(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN)
    return INT32_MAX;
  int64_t ab = (int64_t)a * (int64_t)b;
  int64_t nudge = ab >= 0 ? (INT64_C(1) << 30) : 1 - (INT64_C(1) << 30);
  return (int32_t)((ab + nudge) / (INT64_C(1) << 31));
}

int32_t quill_rdbpot(int32_t x, int exponent) {
  int32_t mask = (int32_t)((INT64_C(1) << exponent) - 1);
  int32_t remainder = x & mask;
  int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* Divide v by 2^n (n >= 1) rounding with the policy. */
static int64_t div_pot(int64_t v, int n, quill_rounding r) {
  if (n >= 63)
    return 0;
  int64_t q = v >> n; /* floor */
  int64_t rem = v - q * (INT64_C(1) << n);
  int64_t half = INT64_C(1) << (n - 1);
  if (rem > half)
    return q + 1;
  if (rem < half)
    return q;
  switch (r) { /* exact tie: q + 0.5 */
  case QUILL_ROUND_HALF_EVEN:
    return (q & 1) ? q + 1 : q;
  case QUILL_ROUND_HALF_UP:
    return q + 1;
  default: /* away from zero */
    return q >= 0 ? q + 1 : q;
  }
}

int64_t quill_requant_fixed(int64_t acc, int32_t multiplier, int shift,
                            quill_rounding r) {
  if (r == QUILL_ROUND_TFLITE) {
    int32_t x = (int32_t)quill_clamp_i64(acc, INT32_MIN, INT32_MAX);
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int64_t shifted = (int64_t)x * (INT64_C(1) << left);
    int32_t xs = (int32_t)quill_clamp_i64(shifted, INT32_MIN, INT32_MAX);
    int32_t hi = quill_srdhm(xs, multiplier);
    return right ? quill_rdbpot(hi, right) : hi;
  }
  /* Exact product; acc is an int32 accumulator in practice. */
  acc = quill_clamp_i64(acc, INT32_MIN, INT32_MAX);
  int64_t prod = acc * (int64_t)multiplier;
  int n = 31 - shift;
  if (n <= 0) {
    int64_t lim = INT64_MAX >> (-n);
    prod = quill_clamp_i64(prod, -lim, lim);
    return prod * (INT64_C(1) << (-n));
  }
  return div_pot(prod, n, r);
}

int64_t quill_requant_fixed64(int64_t acc, int32_t multiplier, int shift,
                              quill_rounding r) {
  int64_t x = quill_clamp_i64(acc, -(INT64_C(1) << 47),
                              (INT64_C(1) << 47) - 1);
  int64_t m16 = multiplier < 0x7fff0000 ? ((int64_t)multiplier + (1 << 15)) >>
                                              16
                                        : 0x7fff;
  int64_t prod = x * m16; /* |prod| < 2^62 */
  int n = 15 - shift;
  if (n <= 0) {
    int64_t lim = INT64_MAX >> (-n);
    prod = quill_clamp_i64(prod, -lim, lim);
    return prod * (INT64_C(1) << (-n));
  }
  return div_pot(prod, n, r == QUILL_ROUND_TFLITE ? QUILL_ROUND_HALF_UP : r);
}

bool quill_op_acc_i64(const quill_op *op) {
  const quill_attr *a = quill_op_attr(op, "accumulator");
  return a && quill_attr_kind_of(a) == QUILL_ATTR_STRING &&
         strcmp(quill_attr_string_value(a, NULL), "i64") == 0;
}

float quill_requant_scale_f32(double s_x, double s_w, double s_y) {
  float p = (float)s_x * (float)s_w;
  return p / (float)s_y;
}

int64_t quill_requant_float(int64_t acc, float scale, quill_rounding r) {
  float v = (float)acc * scale;
  return quill_round((double)v, r);
}

/* ---- values ------------------------------------------------------------------ */

int64_t quill_quantize_value(double x, double scale, int64_t zp, int64_t qmin,
                             int64_t qmax, bool f64, quill_rounding r) {
  double q = f64 ? x / scale : (double)((float)x / (float)scale);
  int64_t v = isnan(q) ? 0 : quill_round(q, r); /* saturates to int64 */
  if (v >= qmax - zp)
    return qmax;
  if (v <= qmin - zp)
    return qmin;
  return v + zp;
}

double quill_dequantize_value(int64_t q, double scale, int64_t zp, bool f64) {
  if (f64)
    return (double)(q - zp) * scale;
  return (double)((float)(q - zp) * (float)scale);
}

int64_t quill_div_round(int64_t n, int64_t d, quill_rounding r) {
  if (r == QUILL_ROUND_TFLITE)
    return n > 0 ? (n + d / 2) / d : (n - d / 2) / d;
  int64_t q = n / d, rem = n % d;
  if (rem < 0) { /* floor division: 0 <= rem < d */
    q -= 1;
    rem += d;
  }
  int64_t rest = d - rem; /* n/d = q + rem/d; compare rem/d with 1/2 */
  if (rem > rest)
    return q + 1;
  if (rem < rest)
    return q;
  switch (r) { /* exact tie: q + 0.5 */
  case QUILL_ROUND_HALF_EVEN:
    return (q & 1) ? q + 1 : q;
  case QUILL_ROUND_HALF_UP:
    return q + 1;
  default:
    return q >= 0 ? q + 1 : q;
  }
}

/* ---- fixed-point parameters ------------------------------------------------- */

double quill_product_multiplier(double s_x, double s_w, double s_y) {
  return (double)(float)s_x * (double)(float)s_w / (double)(float)s_y;
}

double quill_mul_multiplier_f32(double s_a, double s_b, double s_y) {
  /* volatile: each f32 rounding kept (see quill_qadd_params_compute) */
  volatile float a = (float)s_a, b = (float)s_b, y = (float)s_y;
  volatile float ab = a * b;
  volatile float q = ab / y;
  return (double)q;
}

double quill_requant_multiplier(double s_x, double s_y) {
  return (double)(float)s_x / (double)(float)s_y;
}

int quill_qadd_left_shift(unsigned bits) { return bits <= 8 ? 20 : 15; }

bool quill_qadd_params_compute(double s_a, double s_b, double s_y,
                               int left_shift, quill_qadd_params *p) {
  /* The f32 scales as TFLite stores them. Written as `double fa =
   * (float)s_a, fb = (float)s_b` GCC 12.2 at -O2 (its SLP vectorizer)
   * compared the rounded floats but divided the unrounded doubles: with
   * scales that are not f32 values the multipliers left TFLite's by ~2e-8
   * relative (one step on 30 of 200704 int16 ADD results of ResNet-18,
   * test/targets/tflite/Inputs/qadd_f64_scales.qir). The volatile stores
   * keep each rounding. */
  volatile float va = (float)s_a, vb = (float)s_b, vy = (float)s_y;
  double fa = va, fb = vb, fy = vy;
  double twice = 2.0 * (fa > fb ? fa : fb);
  double real[3] = {fa / twice, fb / twice,
                    twice / (ldexp(1.0, left_shift) * fy)};
  p->left_shift = left_shift;
  for (int i = 0; i < 3; i++)
    if (!(real[i] > 0.0) ||
        !quill_quantize_multiplier(real[i], &p->multiplier[i], &p->shift[i]))
      return false;
  return true;
}

int64_t quill_qadd_fixed(int64_t da, int64_t db, const quill_qadd_params *p,
                         quill_rounding r) {
  int64_t one = INT64_C(1) << p->left_shift;
  int64_t ra = quill_requant_fixed(da * one, p->multiplier[0], p->shift[0], r);
  int64_t rb = quill_requant_fixed(db * one, p->multiplier[1], p->shift[1], r);
  int32_t sum = (int32_t)(uint32_t)((uint64_t)ra + (uint64_t)rb);
  return quill_requant_fixed(sum, p->multiplier[2], p->shift[2], r);
}

const char *quill_fake_quant_subject(const quill_op *fq) {
  const quill_value *v = quill_op_operand(fq, 0);
  if (quill_value_name(v))
    return quill_value_name(v);
  if (quill_op_loc(fq).name)
    return quill_op_loc(fq).name;
  quill_op *d = quill_value_def(v);
  return d ? quill_op_name(d) : "<argument>";
}

quill_type *quill_fake_quant_type(const quill_op *fq) {
  const quill_attr *a = quill_op_attr(fq, "quant");
  if (!a || quill_attr_kind_of(a) != QUILL_ATTR_TYPE)
    return NULL;
  quill_type *t = quill_attr_type_value(a);
  if (quill_type_is_tensor(t))
    t = quill_type_elem(t);
  return quill_type_is_quant(t) ? t : NULL;
}

/* ---- qlayer_norm (qnorm.h) ------------------------------------------------ */

/* x >> s, arithmetic, for s in [0, 63]. */
static int64_t asr(uint64_t x, int s) {
  int64_t v = (int64_t)x;
  return v >= 0 ? v >> s : -1 - ((-1 - v) >> s);
}

uint64_t quill_isqrt_u64(uint64_t w) {
  uint64_t r = 0, bit = UINT64_C(1) << 62;
  while (bit > w)
    bit >>= 2;
  while (bit) {
    if (w >= r + bit) {
      w -= r + bit;
      r = (r >> 1) + bit;
    } else {
      r >>= 1;
    }
    bit >>= 2;
  }
  return r;
}

void quill_qnorm_row(int64_t v, int64_t *m, int *s) {
  if (v <= 0) {
    *m = 0;
    *s = 37;
    return;
  }
  int b = 0;
  for (uint64_t t = (uint64_t)v; t; t >>= 1)
    b++;
  int k = (62 - b) / 2;
  uint64_t r = quill_isqrt_u64((uint64_t)v << (2 * k));
  *m = (int64_t)((UINT64_C(1) << 61) / r);
  *s = 37 - k;
}

int64_t quill_qnorm_elem(int64_t d, int64_t m, int s, int64_t g, int64_t b,
                         int G, int F, int64_t zy, int64_t qmin,
                         int64_t qmax) {
  int zs = QUILL_QNORM_Z_BITS + G;
  int64_t z = asr((uint64_t)d * (uint64_t)m + (UINT64_C(1) << (s - 1)), s);
  uint64_t acc = (uint64_t)z * (uint64_t)g + ((uint64_t)b << (zs - F));
  int64_t y = asr(acc + (UINT64_C(1) << (zs - 1)), zs) + zy;
  return y < qmin ? qmin : y > qmax ? qmax : y;
}

/* The largest G <= hi with a * 2^G <= lim (a >= 0), or -1. */
static int fit_shift(double a, int hi, double lim) {
  int G = hi;
  while (G >= 0 && a * ldexp(1.0, G) > lim)
    G--;
  return G;
}

bool quill_qnorm_fold(size_t n, double eps, double sx, double sy,
                      const double *gamma, const double *beta, int32_t *g,
                      int32_t *b, int *G, int *F, int64_t *E,
                      const char **why) {
  if (n == 0 || n > QUILL_QNORM_MAX_ROW) {
    *why = "the row is empty or longer than 16383 elements";
    return false;
  }
  if (!(sx > 0) || !(sy > 0) || !(eps >= 0)) {
    *why = "a scale is not positive or epsilon is negative";
    return false;
  }
  double e = eps * (double)n * (double)n / (sx * sx);
  if (!(e <= (double)QUILL_QNORM_MAX_EPS)) {
    *why = "epsilon / s_x^2 * n^2 is above 2^60";
    return false;
  }
  double ma = 0, mb = 0;
  for (size_t i = 0; i < n; i++) {
    double a = fabs(gamma[i] / sy), c = beta ? fabs(beta[i] / sy) : 0;
    if (!isfinite(a) || !isfinite(c)) {
      *why = "gamma or beta is not finite";
      return false;
    }
    ma = a > ma ? a : ma;
    mb = c > mb ? c : mb;
  }
  /* |g| <= 2^30; |b| * 2^(24 + G - F) <= 2^61: the sums stay below 2^62 */
  int gs = fit_shift(ma, 61 - QUILL_QNORM_Z_BITS, 0x1p30);
  int gb = fit_shift(mb, 61 - QUILL_QNORM_Z_BITS, 0x1p61 / 0x1p24);
  gs = gb < gs ? gb : gs;
  int fs = fit_shift(mb, QUILL_QNORM_Z_BITS + (gs > 0 ? gs : 0), 0x1p30);
  if (gs < 0 || fs < 0) {
    *why = "gamma / s_y or beta / s_y is too large for the fixed point";
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    g[i] = (int32_t)llround(ldexp(gamma[i] / sy, gs));
    b[i] = beta ? (int32_t)llround(ldexp(beta[i] / sy, fs)) : 0;
  }
  *G = gs;
  *F = fs;
  *E = llround(e);
  return true;
}

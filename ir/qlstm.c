/*
 * qlstm.c - the integer arithmetic of `qlstm` (ir/qlstm.h): TFLite's
 * integer LSTM step (tflite-runtime 2.14, lstm_eval.cc's 8x8_16 path and
 * portable_tensor_utils) and gemmlowp's 16-bit fixed-point logistic and
 * tanh (fixedpoint.h), which that path applies to its gates.
 *
 * gemmlowp works on int16 raw values whose additions, subtractions and
 * negations wrap (C++ int16 arithmetic) unless it saturates explicitly;
 * w16() reproduces the wrap. A fixed-point value with b integer bits
 * holds raw / 2^(15 - b). Constants are gemmlowp's int32 ones rounded to
 * 16 bits (its RescaleConstantInitializer: a rounding shift by 16).
 */
#include <math.h>

#include "ir/qlstm.h"
#include "ir/quant.h"

/* ---- int16 fixed point (gemmlowp) ------------------------------------------ */

static int16_t w16(int32_t v) {
  uint16_t u = (uint16_t)(uint32_t)v;
  return u >= 0x8000u ? (int16_t)((int32_t)u - 0x10000) : (int16_t)u;
}

static int32_t rdpot32(int32_t x, int e) {
  if (e == 0)
    return x;
  int32_t mask = (int32_t)((INT64_C(1) << e) - 1);
  int32_t rem = x & mask, thr = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> e) + (rem > thr ? 1 : 0);
}

static int16_t rdpot16(int16_t x, int e) { return w16(rdpot32(x, e)); }

/* gemmlowp's int32 constant as a 16-bit raw value. */
static int16_t k16(int32_t c) { return w16(rdpot32(c, 16)); }

/* SaturatingRoundingDoublingHighMul on int16: the fixed-point product. */
static int16_t mul16(int16_t a, int16_t b) {
  if (a == INT16_MIN && b == INT16_MIN)
    return INT16_MAX;
  int32_t ab = (int32_t)a * (int32_t)b;
  int32_t nudge = ab >= 0 ? (1 << 14) : 1 - (1 << 14);
  return (int16_t)((ab + nudge) / (1 << 15));
}

/* SaturatingRoundingMultiplyByPOT<e>: saturating left shift for e > 0,
 * rounding right shift for e < 0. */
static int16_t mulpot16(int16_t x, int e) {
  if (e < 0)
    return rdpot16(x, -e);
  if (e == 0)
    return x;
  int32_t thr = (1 << (15 - e)) - 1;
  if (x > thr)
    return INT16_MAX;
  if (x < -thr)
    return INT16_MIN;
  return w16((int32_t)x * (1 << e));
}

static int16_t sat16(int32_t v) {
  return (int16_t)(v > INT16_MAX ? INT16_MAX : v < INT16_MIN ? INT16_MIN : v);
}

static int16_t one(int ibits) {
  return ibits == 0 ? INT16_MAX : (int16_t)(1 << (15 - ibits));
}

/* exp(a) for a in [-1/4, 0), a with 0 integer bits. */
static int16_t exp_quarter(int16_t a) {
  const int16_t c = k16(1895147668);         /* exp(-1/8) */
  const int16_t third = k16(715827883);      /* 1/3 */
  int16_t x = w16(a + (1 << 12));            /* a + 1/8 */
  int16_t x2 = mul16(x, x), x3 = mul16(x2, x), x4 = mul16(x2, x2);
  int16_t x4_4 = mulpot16(x4, -2);
  int16_t poly = mulpot16(w16(mul16(w16(x4_4 + x3), third) + x2), -1);
  return sat16((int32_t)c + mul16(c, w16(x + poly)));
}

/* exp(a) for a <= 0 with `ib` integer bits, in Q0.15. */
static int16_t exp_negative(int16_t a, int ib) {
  static const int32_t mult[7] = {1672461947, 1302514674, 790015084,
                                  290630308,  39332535,   720401, 242};
  int fb = 15 - ib;
  int16_t quarter = (int16_t)(1 << (fb - 2));
  int16_t amq = w16((a & (quarter - 1)) - quarter);
  int16_t result = exp_quarter(mulpot16(amq, ib));
  int16_t rem = w16(amq - a);
  for (int e = -2; e <= 4; e++)
    if (ib > e && (rem & (1 << (fb + e))))
      result = mul16(result, k16(mult[e + 2]));
  if (ib > 5 && a < k16(-(1 << (36 - ib))))
    result = 0;
  return a == 0 ? INT16_MAX : result;
}

/* Newton-Raphson 1 / (1 + a) for a in [0, 1): x in Q2.13. */
static int16_t recip_half(int16_t a, int16_t *half) {
  int32_t s = (int32_t)a + INT16_MAX;
  *half = (int16_t)((s + (s >= 0 ? 1 : -1)) / 2);
  int16_t x = w16(k16(1515870810) + mul16(*half, k16(-1010580540)));
  for (int i = 0; i < 3; i++) {
    int16_t hx = mul16(*half, x);
    int16_t omh = w16(one(2) - hx);
    x = w16(x + mulpot16(mul16(x, omh), 2));
  }
  return x;
}

int16_t quill_qlstm_sigmoid(int16_t a) {
  const int ib = 3;
  int16_t abs = a > 0 ? a : w16(-a), half;
  int16_t x = recip_half(exp_negative(w16(-abs), ib), &half);
  int16_t pos = mulpot16(x, 1); /* x / 2 in Q2.13 = Q1.14, to Q0.15 */
  if (a == 0)
    return k16(1 << 30);
  return a > 0 ? pos : w16(INT16_MAX - pos);
}

int16_t quill_qlstm_tanh(int16_t a, int ibits) {
  int16_t n = a < 0 ? a : w16(-a), half;
  int16_t x = recip_half(exp_negative(n, ibits + 1), &half);
  int16_t t = mulpot16(w16(x - one(2)), 2);
  if (a == 0)
    return 0;
  return a < 0 ? w16(-t) : t;
}

void quill_qlstm_half_table(bool logistic, int ibits, int16_t *t) {
  for (int32_t m = 0; m < 32768; m++)
    t[m] = logistic ? quill_qlstm_sigmoid((int16_t)m)
                    : quill_qlstm_tanh((int16_t)m, ibits);
  t[32768] = logistic ? w16(INT16_MAX - quill_qlstm_sigmoid(INT16_MIN))
                      : w16(-quill_qlstm_tanh(INT16_MIN, ibits));
}

/* ---- the step -------------------------------------------------------------- */

static int32_t mbqm(int32_t acc, int32_t m, int shift) {
  return (int32_t)quill_requant_fixed(acc, m, shift, QUILL_ROUND_TFLITE);
}

bool quill_qlstm_params_init(quill_qlstm_params *p, double s_x, double s_w,
                             double s_r, double s_y, int64_t zx, int64_t zy,
                             int64_t cell_shift, const char **why) {
  if (cell_shift < QUILL_QLSTM_CELL_MIN || cell_shift > QUILL_QLSTM_CELL_MAX) {
    *why = "cell_shift must be in [-15, -9] (the cell state's tanh takes 0 "
           "to 6 integer bits)";
    return false;
  }
  float fx = (float)s_x, fw = (float)s_w, fr = (float)s_r, fy = (float)s_y;
  const float q312 = 1.0f / 4096.0f; /* the gates' Q3.12 */
  float ex = fw * fx / q312, eh = fr * fy / q312;
  float ehid = (float)(ldexp(1.0, -15) / (double)fy * ldexp(1.0, -15));
  if (!quill_quantize_multiplier((double)ex, &p->mx, &p->sx) ||
      !quill_quantize_multiplier((double)eh, &p->mh, &p->sh) ||
      !quill_quantize_multiplier((double)ehid, &p->mhid, &p->shid) ||
      p->sx > 31 || p->sh > 31 || p->shid > 31 || !(ex > 0.0f) ||
      !(eh > 0.0f) || !(ehid > 0.0f)) {
    *why = "an effective scale of the gates or the hidden state has no "
           "fixed-point multiplier";
    return false;
  }
  p->cell_shift = (int)cell_shift;
  p->zx = (int32_t)zx;
  p->zy = (int32_t)zy;
  return true;
}

int16_t quill_qlstm_gate(const quill_qlstm_params *p, int32_t ax,
                         int32_t ah) {
  int16_t g = sat16(mbqm(ax, p->mx, p->sx));
  return sat16(mbqm(ah, p->mh, p->sh) + (int32_t)g);
}

int16_t quill_qlstm_cell(const quill_qlstm_params *p, int16_t c, int16_t i,
                         int16_t f, int16_t g) {
  int16_t fc = w16(rdpot32((int32_t)f * c, 15));
  int16_t ig = w16(rdpot32((int32_t)i * g, 30 + p->cell_shift));
  return sat16((int32_t)fc + ig);
}

int8_t quill_qlstm_hidden(const quill_qlstm_params *p, int16_t o, int16_t c) {
  int16_t t = quill_qlstm_tanh(c, 15 + p->cell_shift);
  int32_t v = mbqm((int32_t)o * t, p->mhid, p->shid) + p->zy;
  return (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
}

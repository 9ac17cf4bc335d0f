/*
 * test_quant.c - the quantization arithmetic contract (ir/quant.c):
 * rounding policies on ties, TFLite's QuantizeMultiplier decomposition, and
 * fixed-point requantization against values computed by hand and against an
 * exact rational reference on random inputs; TFLite's int8 SOFTMAX
 * arithmetic (ir/tfl_int16.c) against values computed by hand and NumPy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ir/quant.h"
#include "ir/tfl_int8.h"

static int passed, failed;

#define CHECK_EQ(a, b)                                                        \
  do {                                                                        \
    long long va_ = (long long)(a), vb_ = (long long)(b);                     \
    if (va_ == vb_)                                                           \
      passed++;                                                               \
    else {                                                                    \
      failed++;                                                               \
      fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__,         \
              __LINE__, #a, va_, vb_);                                        \
    }                                                                         \
  } while (0)

static void test_round(void) {
  static const struct {
    double v;
    long long even, away, up;
  } cases[] = {
      {0.5, 0, 1, 1},    {1.5, 2, 2, 2},    {2.5, 2, 3, 3},
      {-0.5, 0, -1, 0},  {-1.5, -2, -2, -1}, {-2.5, -2, -3, -2},
      {0.49999999999999994, 0, 0, 0}, {3.7, 4, 4, 4}, {-3.7, -4, -4, -4},
  };
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CHECK_EQ(quill_round(cases[i].v, QUILL_ROUND_HALF_EVEN), cases[i].even);
    CHECK_EQ(quill_round(cases[i].v, QUILL_ROUND_HALF_AWAY), cases[i].away);
    CHECK_EQ(quill_round(cases[i].v, QUILL_ROUND_HALF_UP), cases[i].up);
    CHECK_EQ(quill_round(cases[i].v, QUILL_ROUND_TFLITE), cases[i].away);
  }
  CHECK_EQ(quill_round(NAN, QUILL_ROUND_HALF_EVEN), 0);
  CHECK_EQ(quill_round(1e300, QUILL_ROUND_HALF_EVEN), INT64_MAX);
  quill_rounding r;
  CHECK_EQ(quill_rounding_parse("half_up", &r), 1);
  CHECK_EQ(r, QUILL_ROUND_HALF_UP);
  CHECK_EQ(quill_rounding_parse("nearest", &r), 0);
}

static void test_multiplier(void) {
  int32_t m;
  int s;
  CHECK_EQ(quill_quantize_multiplier(0.5, &m, &s), 1);
  CHECK_EQ(m, 1 << 30);
  CHECK_EQ(s, 0);
  CHECK_EQ(quill_quantize_multiplier(1.0, &m, &s), 1);
  CHECK_EQ(m, 1 << 30);
  CHECK_EQ(s, 1);
  CHECK_EQ(quill_quantize_multiplier(0.75, &m, &s), 1);
  CHECK_EQ(m, 3 << 29);
  CHECK_EQ(s, 0);
  /* 0.0039215686 (1/255): m = round(0.50196 * 2^31), shift -7 */
  CHECK_EQ(quill_quantize_multiplier(1.0 / 255.0, &m, &s), 1);
  CHECK_EQ(s, -7);
  CHECK_EQ(m, llround(ldexp(1.0 / 255.0, 7) * 2147483648.0));
  /* A mantissa that rounds up to 2^31 renormalises. */
  CHECK_EQ(quill_quantize_multiplier(0.99999999999, &m, &s), 1);
  CHECK_EQ(m, 1 << 30);
  CHECK_EQ(s, 1);
  CHECK_EQ(quill_quantize_multiplier(0.0, &m, &s), 1);
  CHECK_EQ(m, 0);
  CHECK_EQ(quill_quantize_multiplier(1e-30, &m, &s), 0);
}

static void test_fixed(void) {
  int32_t half = 1 << 30; /* with shift 0: x 0.5 */
  /* ties: 5 * 0.5 = 2.5, -5 * 0.5 = -2.5 */
  CHECK_EQ(quill_requant_fixed(5, half, 0, QUILL_ROUND_HALF_EVEN), 2);
  CHECK_EQ(quill_requant_fixed(5, half, 0, QUILL_ROUND_HALF_AWAY), 3);
  CHECK_EQ(quill_requant_fixed(5, half, 0, QUILL_ROUND_HALF_UP), 3);
  CHECK_EQ(quill_requant_fixed(5, half, 0, QUILL_ROUND_TFLITE), 3);
  CHECK_EQ(quill_requant_fixed(-5, half, 0, QUILL_ROUND_HALF_EVEN), -2);
  CHECK_EQ(quill_requant_fixed(-5, half, 0, QUILL_ROUND_HALF_AWAY), -3);
  CHECK_EQ(quill_requant_fixed(-5, half, 0, QUILL_ROUND_HALF_UP), -2);
  /* gemmlowp's SaturatingRoundingDoublingHighMul rounds a negative tie
   * toward zero: -2.5 -> -2. */
  CHECK_EQ(quill_requant_fixed(-5, half, 0, QUILL_ROUND_TFLITE), -2);
  /* x 0.125 = 0.5 * 2^-2: double rounding in tflite. 13 * 0.125 = 1.625 */
  CHECK_EQ(quill_requant_fixed(13, half, -2, QUILL_ROUND_HALF_EVEN), 2);
  CHECK_EQ(quill_requant_fixed(13, half, -2, QUILL_ROUND_TFLITE), 2);
  /* 12 * 0.125 = 1.5 */
  CHECK_EQ(quill_requant_fixed(12, half, -2, QUILL_ROUND_HALF_EVEN), 2);
  CHECK_EQ(quill_requant_fixed(20, half, -2, QUILL_ROUND_HALF_EVEN), 2);
  CHECK_EQ(quill_requant_fixed(20, half, -2, QUILL_ROUND_TFLITE), 3);
  /* x 2 (shift 2 with m = 0.5) */
  CHECK_EQ(quill_requant_fixed(-7, half, 2, QUILL_ROUND_TFLITE), -14);
  CHECK_EQ(quill_requant_fixed(-7, half, 2, QUILL_ROUND_HALF_EVEN), -14);

  /* Random: the single-rounding policies equal the exact rational result
   * acc * m / 2^(31 - shift) rounded by quill_round on a long double. */
  srand(7);
  for (int i = 0; i < 20000; i++) {
    int64_t acc = (int64_t)(rand() % 2000001) - 1000000;
    double real = ldexp((double)rand() / RAND_MAX + 0.5, -(rand() % 20));
    int32_t m;
    int s;
    if (!quill_quantize_multiplier(real, &m, &s))
      continue;
    long double exact = (long double)acc * m / ldexpl(1.0L, 31 - s);
    for (int r = QUILL_ROUND_HALF_EVEN; r <= QUILL_ROUND_HALF_UP; r++) {
      long double fl = floorl(exact), frac = exact - fl;
      long long want = (long long)fl + (frac > 0.5L);
      if (frac == 0.5L)
        want = (long long)fl + (r == QUILL_ROUND_HALF_UP ? 1
                                : r == QUILL_ROUND_HALF_AWAY ? (fl >= 0)
                                                             : ((long long)fl & 1));
      CHECK_EQ(quill_requant_fixed(acc, m, s, (quill_rounding)r), want);
    }
  }
}

static void test_float(void) {
  float sc = quill_requant_scale_f32(0.5, 0.25, 0.125); /* = 1.0 */
  CHECK_EQ(sc == 1.0f, 1);
  CHECK_EQ(quill_requant_float(7, 0.5f, QUILL_ROUND_HALF_EVEN), 4);
  CHECK_EQ(quill_requant_float(5, 0.5f, QUILL_ROUND_HALF_EVEN), 2);
  CHECK_EQ(quill_requant_float(-5, 0.5f, QUILL_ROUND_HALF_AWAY), -3);
}

/* TFLite's int8 SOFTMAX: PreprocessSoftmaxScaling's multiplier and
 * CalculateInputRadius's diff_min (NumPy: frexp of min(s * 2^26, 2^31 - 1),
 * floor(31 * 2^26 / 2^shift)), exp in Q0.31 close to exp(-d s), the
 * reciprocal of the Q12.19 row sum, and whole rows whose softmax is exact
 * (equal values) or computed by NumPy (p * 256 rounded, minus 128). */
static void test_tfl8_softmax(void) {
  quill_tfl8_softmax p;
  CHECK_EQ(quill_tfl8_softmax_init(&p, 0.1, 1.0), 1);
  CHECK_EQ(p.multiplier, 1717986944); /* 0.1f * 2^26 = 0.8 * 2^23 */
  CHECK_EQ(p.left_shift, 23);
  CHECK_EQ(p.diff_min, -248);
  CHECK_EQ(p.exp[0], INT32_MAX);
  CHECK_EQ(p.exp_acc[0], 1 << 19); /* 1.0 in Q12.19 */
  int exp_close = 1;
  for (int d = 1; d < 256; d++)
    exp_close &= fabs(p.exp[d] / 2147483648.0 - exp(-0.1f * d)) < 1e-6;
  CHECK_EQ(exp_close, 1);
  CHECK_EQ(quill_tfl8_softmax_init(&p, 0.5, 1.0), 1);
  CHECK_EQ(p.left_shift, 26);
  CHECK_EQ(p.diff_min, -31); /* differences of 32 steps and more drop out */
  CHECK_EQ(p.exp[31] > 0, 1);
  CHECK_EQ(p.exp[32], 0);
  CHECK_EQ(p.exp_acc[32], 0);
  /* a large scale: the multiplier capped at 2^31 - 1, only the maximum */
  CHECK_EQ(quill_tfl8_softmax_init(&p, 40.0, 1.0), 1);
  CHECK_EQ(p.multiplier, INT32_MAX);
  CHECK_EQ(p.left_shift, 31);
  CHECK_EQ(p.diff_min, 0);
  CHECK_EQ(p.exp[1], 0);
  /* TFLite refuses s * 2^26 <= 1 */
  CHECK_EQ(quill_tfl8_softmax_init(&p, 1e-8, 1.0), 0);

  int nbou;
  int32_t r = quill_tfl8_reciprocal(1 << 19, &nbou); /* 1.0 -> 1 */
  CHECK_EQ(nbou, 0);
  CHECK_EQ(r > INT32_MAX - 8, 1);
  r = quill_tfl8_reciprocal(3 << 19, &nbou); /* 3.0 = 2 * 1.5 -> 2/3 */
  CHECK_EQ(nbou, 1);
  CHECK_EQ(llabs((long long)r - 1431655765) <= 4, 1); /* Newton: 3 below */

  int8_t x[1000], y[1000];
  CHECK_EQ(quill_tfl8_softmax_init(&p, 0.1, 1.0), 1);
  x[0] = 7;
  quill_tfl8_softmax_row(&p, x, y, 1, 1);
  CHECK_EQ(y[0], 127); /* 1.0 = 256 steps: saturates */
  x[0] = x[1] = 5;
  quill_tfl8_softmax_row(&p, x, y, 2, 1);
  CHECK_EQ(y[0], 0); /* 0.5 */
  CHECK_EQ(y[1], 0);
  for (int i = 0; i < 4; i++)
    x[2 * i] = -3; /* stride 2 */
  quill_tfl8_softmax_row(&p, x, y, 4, 2);
  CHECK_EQ(y[6], -64); /* 0.25 */
  x[0] = 0;
  x[1] = -10;
  quill_tfl8_softmax_row(&p, x, y, 2, 1);
  CHECK_EQ(y[0], 59); /* NumPy: 0.7311 * 256 = 187.15 */
  CHECK_EQ(y[1], -59); /* 68.85 */
  /* 1000 equal values: the sum 1000 in Q12.19, the final shift 32 (0.256
   * steps: -128; TFLite's reference kernel's int32 shift by 32 is
   * undefined, x86 gives 127) */
  for (int i = 0; i < 1000; i++)
    x[i] = 1;
  quill_tfl8_softmax_row(&p, x, y, 1000, 1);
  CHECK_EQ(y[0], -128);
  CHECK_EQ(y[999], -128);
  /* beyond diff_min: -128 */
  CHECK_EQ(quill_tfl8_softmax_init(&p, 0.5, 1.0), 1);
  x[0] = 100;
  x[1] = 60;
  quill_tfl8_softmax_row(&p, x, y, 2, 1);
  CHECK_EQ(y[0], 127);
  CHECK_EQ(y[1], -128);
}

int main(void) {
  test_round();
  test_multiplier();
  test_fixed();
  test_float();
  test_tfl8_softmax();
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

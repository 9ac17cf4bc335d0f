/*
 * test_ref_qops.c - exactness of the reference kernels of the quantized
 * elementwise ops: qadd, qmul, lut, requantize (fixed point and float),
 * quantize's rounding (targets/reference/kernels_qelementwise.c,
 * kernels_quant.c), the shared parameter arithmetic of ir/quant.c
 * (quill_qadd_params_compute, quill_div_round, quill_product_multiplier),
 * and qlayer_norm's integer steps (ir/qnorm.h: the square root, a row's m
 * and s, one element, the kernel on a hand-checked row). The quantized
 * pooling and data-movement ops are test_ref_qops_pool.c.
 *
 * Hand-checked values cover every rounding policy on exact ties (positive
 * and negative), saturation at both ends, act_min/act_max, broadcasting and
 * zero-point handling. Randomized cross-checks (each seeding rand() itself)
 * compare every element with formulas written here, independently of
 * ir/quant.c:
 *
 *   qadd/qmul tflite   a transliteration of TFLite's reference integer
 *                      kernels (integer_ops/add.h AddFunc, mul.h
 *                      MulElementwise, gemmlowp SaturatingRoundingDoubling-
 *                      HighMul / RoundingDivideByPOT, QuantizeMultiplier and
 *                      the Prepare-time parameter formulas of add.cc/mul.cc)
 *   other policies     exact rational rounding (__int128)
 *   float paths        dequantize -> op -> quantize in f32
 *
 * Each op case is a one-op .qir function run by ref_qops_harness.h.
 */
#include "test/unit/ref_qops_harness.h"

/* ---- an independent TFLite transliteration ------------------------------- */

static int32_t t_srdhm(int32_t a, int32_t b) {
  bool overflow = a == b && a == INT32_MIN;
  int64_t ab = (int64_t)a * (int64_t)b;
  int32_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  int32_t high = (int32_t)((ab + nudge) / (INT64_C(1) << 31));
  return overflow ? INT32_MAX : high;
}

static int32_t t_rdbpot(int32_t x, int exponent) {
  int32_t mask = (int32_t)((INT64_C(1) << exponent) - 1);
  int32_t remainder = x & mask;
  int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* MultiplyByQuantizedMultiplier (shift = exponent, any sign). */
static int32_t t_mbqm(int32_t x, int32_t m, int shift) {
  int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  return t_rdbpot(t_srdhm((int32_t)((int64_t)x * (INT64_C(1) << left)), m),
                  right);
}

static void t_quantize_multiplier(double d, int32_t *m, int *shift) {
  if (d == 0.0) {
    *m = 0;
    *shift = 0;
    return;
  }
  double q = frexp(d, shift);
  int64_t qf = llround(q * (double)(INT64_C(1) << 31));
  if (qf == (INT64_C(1) << 31)) {
    qf /= 2;
    ++*shift;
  }
  if (*shift < -31) {
    *shift = 0;
    qf = 0;
  }
  *m = (int32_t)qf;
}

typedef struct t_add {
  int32_t off1, off2, out_off, m1, m2, mo;
  int s1, s2, so, left_shift;
  int32_t act_min, act_max;
} t_add;

/* add.cc Prepare for 8-bit: float scales, double arithmetic. */
static void t_add_prepare(float s1, int z1, float s2, int z2, float so,
                          int zo, t_add *p) {
  p->off1 = -z1;
  p->off2 = -z2;
  p->out_off = zo;
  p->left_shift = 20;
  const double twice = 2 * (double)(s1 > s2 ? s1 : s2);
  t_quantize_multiplier((double)s1 / twice, &p->m1, &p->s1);
  t_quantize_multiplier((double)s2 / twice, &p->m2, &p->s2);
  t_quantize_multiplier(twice / ((1 << p->left_shift) * (double)so), &p->mo,
                        &p->so);
  p->act_min = -128;
  p->act_max = 127;
}

/* integer_ops/add.h AddFunc */
static int8_t t_add_func(int8_t x, int8_t y, const t_add *p) {
  const int32_t v1 = p->off1 + x, v2 = p->off2 + y;
  const int32_t sh1 = v1 * (1 << p->left_shift);
  const int32_t sh2 = v2 * (1 << p->left_shift);
  const int32_t sc1 = t_mbqm(sh1, p->m1, p->s1);
  const int32_t sc2 = t_mbqm(sh2, p->m2, p->s2);
  const int32_t raw = t_mbqm(sc1 + sc2, p->mo, p->so) + p->out_off;
  int32_t c = raw < p->act_min ? p->act_min : raw;
  c = c > p->act_max ? p->act_max : c;
  return (int8_t)c;
}

/* integer_ops/mul.h MulElementwise with mul.cc's multiplier */
static int8_t t_mul_func(int8_t x, int8_t y, float s1, int z1, float s2,
                         int z2, float so, int zo) {
  int32_t m;
  int sh;
  t_quantize_multiplier((double)s1 * (double)s2 / (double)so, &m, &sh);
  const int32_t v = zo + t_mbqm((x - z1) * (y - z2), m, sh);
  return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

/* ---- exact rational rounding of v * m * 2^(shift - 31) ------------------- */

static int64_t exact_requant(int64_t v, int32_t m, int shift,
                             quill_rounding r) {
  __int128 num = (__int128)v * m;
  int n = 31 - shift;
  if (n <= 0)
    return (int64_t)(num * ((__int128)1 << -n));
  __int128 d = (__int128)1 << n;
  __int128 q = num / d, rem = num % d;
  if (rem < 0) {
    q -= 1;
    rem += d;
  }
  if (2 * rem > d)
    return (int64_t)(q + 1);
  if (2 * rem < d)
    return (int64_t)q;
  if (r == QUILL_ROUND_HALF_EVEN)
    return (int64_t)((q & 1) ? q + 1 : q);
  if (r == QUILL_ROUND_HALF_UP)
    return (int64_t)(q + 1);
  return (int64_t)(q >= 0 ? q + 1 : q);
}

/* ---- shared parameter arithmetic ----------------------------------------- */

static void test_params(void) {
  /* div_round: ties of each policy, both signs, and tflite's (s +- n/2)/n */
  CHECK(quill_div_round(5, 2, QUILL_ROUND_HALF_EVEN) == 2);
  CHECK(quill_div_round(7, 2, QUILL_ROUND_HALF_EVEN) == 4);
  CHECK(quill_div_round(-5, 2, QUILL_ROUND_HALF_EVEN) == -2);
  CHECK(quill_div_round(5, 2, QUILL_ROUND_HALF_AWAY) == 3);
  CHECK(quill_div_round(-5, 2, QUILL_ROUND_HALF_AWAY) == -3);
  CHECK(quill_div_round(5, 2, QUILL_ROUND_HALF_UP) == 3);
  CHECK(quill_div_round(-5, 2, QUILL_ROUND_HALF_UP) == -2);
  CHECK(quill_div_round(5, 2, QUILL_ROUND_TFLITE) == 3);
  CHECK(quill_div_round(-5, 2, QUILL_ROUND_TFLITE) == -3);
  CHECK(quill_div_round(-7, 3, QUILL_ROUND_HALF_EVEN) == -2); /* -2.33 */
  CHECK(quill_div_round(-8, 3, QUILL_ROUND_HALF_EVEN) == -3); /* -2.67 */
  /* tflite with odd n: (10 + 1) / 3 = 3 (3.33), (-11 - 1)/3 = -4 (-3.67) */
  CHECK(quill_div_round(10, 3, QUILL_ROUND_TFLITE) == 3);
  CHECK(quill_div_round(-11, 3, QUILL_ROUND_TFLITE) == -4);
  CHECK(quill_div_round(0, 4, QUILL_ROUND_TFLITE) == 0);
  /* random against the exact value */
  srand(11);
  for (int i = 0; i < 20000; i++) {
    int64_t n = (int64_t)(rand() % 200001) - 100000, d = rand() % 300 + 1;
    for (int r = 0; r < 3; r++) {
      int64_t q = quill_div_round(n, d, (quill_rounding)r);
      /* |n/d - q| <= 1/2 with the policy's tie */
      int64_t twice = 2 * (n - q * d);
      CHECK(twice <= d && twice >= -d);
    }
    int64_t t = quill_div_round(n, d, QUILL_ROUND_TFLITE);
    CHECK(t == (n > 0 ? (n + d / 2) / d : (n - d / 2) / d));
  }
  /* product multiplier: f32 scales, f64 arithmetic */
  double pm = quill_product_multiplier(0.1, 0.2, 0.3);
  CHECK(pm == (double)0.1f * (double)0.2f / (double)0.3f);
  /* qadd params equal TFLite's Prepare on random scales */
  for (int i = 0; i < 2000; i++) {
    float s1 = ldexpf((float)rand() / (float)RAND_MAX + 0.5f, -(rand() % 12));
    float s2 = ldexpf((float)rand() / (float)RAND_MAX + 0.5f, -(rand() % 12));
    float so = ldexpf((float)rand() / (float)RAND_MAX + 0.5f, -(rand() % 10));
    quill_qadd_params p;
    t_add t;
    t_add_prepare(s1, 0, s2, 0, so, 0, &t);
    CHECK(quill_qadd_params_compute(s1, s2, so, 20, &p));
    CHECK(p.multiplier[0] == t.m1 && p.shift[0] == t.s1);
    CHECK(p.multiplier[1] == t.m2 && p.shift[1] == t.s2);
    CHECK(p.multiplier[2] == t.mo && p.shift[2] == t.so);
  }
  CHECK(quill_qadd_left_shift(8) == 20);
  CHECK(quill_qadd_left_shift(16) == 15);
}

/* ---- qadd / qmul --------------------------------------------------------- */

static void test_qadd_hand(void) {
  char src[1024];
  /* s_a 0.5, s_b 0.25, s_y 1: m = 1, multipliers 0.5 -> (2^30, 0), 0.25 ->
   * (2^30, -1), 2^-20 -> (2^30, -19). a=3,b=1: 1.5+0.25 = 1.75 -> 2;
   * a=1,b=0: 0.5 (tie); a=-1,b=0: -0.5 (tie); a=1,b=2: 1.0; a=5,b=2: 3.0 */
  const double a[] = {3, 1, -1, 1, 5}, b[] = {1, 0, 0, 2, 2};
  const double *want[] = {V(2, 0, 0, 1, 3), V(2, 1, -1, 1, 3),
                          V(2, 1, 0, 1, 3), V(2, 1, -1, 1, 3)};
  for (int p = 0; p < 4; p++) {
    snprintf(src, sizeof src,
             "func @f(%%a: tensor<5x!quant.uniform<i8:f32, 0.5:0>>, "
             "%%b: tensor<5x!quant.uniform<i8:f32, 0.25:0>>) -> "
             "tensor<5x!quant.uniform<i8:f32, 1.0:0>> {\n"
             "  %%y = qadd %%a, %%b {rounding = \"%s\", multiplier = "
             "[1073741824, 1073741824, 1073741824], shift = [0, -1, -19], "
             "left_shift = 20} : tensor<5x!quant.uniform<i8:f32, 1.0:0>>\n"
             "  return %%y\n}\n",
             policies[p]);
    expect(src, a, 5, b, 5, want[p], 5, __LINE__);
    /* float: (f32) dequantize, add, quantize: the same ties */
    snprintf(src, sizeof src,
             "func @f(%%a: tensor<5x!quant.uniform<i8:f32, 0.5:0>>, "
             "%%b: tensor<5x!quant.uniform<i8:f32, 0.25:0>>) -> "
             "tensor<5x!quant.uniform<i8:f32, 1.0:0>> {\n"
             "  %%y = qadd %%a, %%b {rounding = \"%s\"} : "
             "tensor<5x!quant.uniform<i8:f32, 1.0:0>>\n  return %%y\n}\n",
             policies[p]);
    expect(src, a, 5, b, 5, p == 3 ? want[1] : want[p], 5, __LINE__);
  }
  /* zero points, saturation, act range, broadcast [2,3] + [3]: u8 zp 128,
   * scales 1, result scale 1 zp 100, act [90, 200]. */
  const char *bc =
      "func @f(%a: tensor<2x3x!quant.uniform<u8:f32, 1.0:128>>, "
      "%b: tensor<3x!quant.uniform<u8:f32, 1.0:120>>) -> "
      "tensor<2x3x!quant.uniform<u8:f32, 1.0:100>> {\n"
      "  %y = qadd %a, %b {act_min = 90, act_max = 200} : "
      "tensor<2x3x!quant.uniform<u8:f32, 1.0:100>>\n  return %y\n}\n";
  /* a-128 = [0, 5, 127 | -128, -20, 1], b-120 = [0, 3, 135] */
  EXPECT2(bc, V(128, 133, 255, 0, 108, 129), V(120, 123, 255),
          V(100, 108, 200, 90, 90, 236 > 200 ? 200 : 236));
}

static void test_qmul_hand(void) {
  char src[1024];
  /* s_a*s_b/s_y = 0.5*0.5/1 = 0.25: v = (a-1)(b+2) * 0.25:
   * a=3,b=0: 2*2*.25 = 1; a=3,b=1: 6*.25=1.5 (tie); a=-1,b=0: -1 ;
   * a=-1,b=1: -1.5 (tie); a=5,b=3: 20*.25 = 5 */
  const double a[] = {3, 3, -1, -1, 5}, b[] = {0, 1, 0, 1, 3};
  /* tflite: gemmlowp's RoundingDivideByPOT rounds -1.5 away from zero */
  const double *fixed_want[] = {V(1, 2, -1, -2, 5), V(1, 2, -1, -2, 5),
                                V(1, 2, -1, -1, 5), V(1, 2, -1, -2, 5)};
  const double *float_want[] = {V(1, 2, -1, -2, 5), V(1, 2, -1, -2, 5),
                                V(1, 2, -1, -1, 5), V(1, 2, -1, -2, 5)};
  for (int p = 0; p < 4; p++) {
    /* multiplier 0.25 = 2^30 * 2^(-1 - 31): (2^30, -1) */
    snprintf(src, sizeof src,
             "func @f(%%a: tensor<5x!quant.uniform<i8:f32, 0.5:1>>, "
             "%%b: tensor<5x!quant.uniform<i8:f32, 0.5:-2>>) -> "
             "tensor<5x!quant.uniform<i8:f32, 1.0:0>> {\n"
             "  %%y = qmul %%a, %%b {rounding = \"%s\", multiplier = "
             "[1073741824], shift = [-1]} : "
             "tensor<5x!quant.uniform<i8:f32, 1.0:0>>\n  return %%y\n}\n",
             policies[p]);
    expect(src, a, 5, b, 5, fixed_want[p], 5, __LINE__);
    snprintf(src, sizeof src,
             "func @f(%%a: tensor<5x!quant.uniform<i8:f32, 0.5:1>>, "
             "%%b: tensor<5x!quant.uniform<i8:f32, 0.5:-2>>) -> "
             "tensor<5x!quant.uniform<i8:f32, 1.0:0>> {\n"
             "  %%y = qmul %%a, %%b {rounding = \"%s\"} : "
             "tensor<5x!quant.uniform<i8:f32, 1.0:0>>\n  return %%y\n}\n",
             policies[p]);
    expect(src, a, 5, b, 5, float_want[p], 5, __LINE__);
  }
  /* saturation and broadcast [2,1] x [3] -> [2,3] */
  const char *bc =
      "func @f(%a: tensor<2x1x!quant.uniform<i8:f32, 1.0:0>>, "
      "%b: tensor<3x!quant.uniform<i8:f32, 1.0:0>>) -> "
      "tensor<2x3x!quant.uniform<i8:f32, 1.0:0>> {\n"
      "  %y = qmul %a, %b {multiplier = [1073741824], shift = [1]} : "
      "tensor<2x3x!quant.uniform<i8:f32, 1.0:0>>\n  return %y\n}\n";
  EXPECT2(bc, V(100, -3), V(2, -1, 0), V(127, -100, 0, -6, 3, 0));
}

/* Random qadd/qmul with tflite rounding vs the TFLite transliteration, and
 * with the other policies vs exact rational steps. */
static void test_qbinary_random(void) {
  srand(5);
  char src[2048];
  for (int iter = 0; iter < 60; iter++) {
    bool add = iter % 2 == 0;
    float s1 = ldexpf((float)rand() / (float)RAND_MAX + 0.5f, -(rand() % 8));
    float s2 = ldexpf((float)rand() / (float)RAND_MAX + 0.5f, -(rand() % 8));
    float so = ldexpf((float)rand() / (float)RAND_MAX + 0.5f, -(rand() % 6));
    int z1 = rand() % 256 - 128, z2 = rand() % 256 - 128;
    int zo = rand() % 256 - 128;
    quill_rounding pol = (quill_rounding)(iter / 2 % 4);
    int32_t mm[3];
    int sh[3];
    char attrs[512];
    quill_qadd_params ap;
    if (add) {
      CHECK(quill_qadd_params_compute(s1, s2, so, 20, &ap));
      snprintf(attrs, sizeof attrs,
               "rounding = \"%s\", multiplier = [%d, %d, %d], shift = [%d, "
               "%d, %d], left_shift = 20",
               policies[pol], ap.multiplier[0], ap.multiplier[1],
               ap.multiplier[2], ap.shift[0], ap.shift[1], ap.shift[2]);
    } else {
      CHECK(quill_quantize_multiplier(quill_product_multiplier(s1, s2, so),
                                      &mm[0], &sh[0]));
      snprintf(attrs, sizeof attrs,
               "rounding = \"%s\", multiplier = [%d], shift = [%d]",
               policies[pol], mm[0], sh[0]);
    }
    /* all 256 x 16 pairs: a [256,1] against b [16] */
    char ta[128], tb[128], ty[128];
    snprintf(ta, sizeof ta, "!quant.uniform<i8:f32, %.9g:%d>", (double)s1, z1);
    snprintf(tb, sizeof tb, "!quant.uniform<i8:f32, %.9g:%d>", (double)s2, z2);
    snprintf(ty, sizeof ty, "!quant.uniform<i8:f32, %.9g:%d>", (double)so, zo);
    snprintf(src, sizeof src,
             "func @f(%%a: tensor<256x1x%s>, %%b: tensor<16x%s>) -> "
             "tensor<256x16x%s> {\n  %%y = %s %%a, %%b {%s} : "
             "tensor<256x16x%s>\n  return %%y\n}\n",
             ta, tb, ty, add ? "qadd" : "qmul", attrs, ty);
    run r;
    if (!setup(&r, src)) {
      CHECK(!"setup");
      run_free(&r);
      continue;
    }
    int8_t bv[16];
    for (int i = 0; i < 256; i++)
      quill_tensor_set_i64(&r.args[0], (size_t)i, i - 128);
    for (int j = 0; j < 16; j++) {
      bv[j] = (int8_t)(rand() % 256 - 128);
      quill_tensor_set_i64(&r.args[1], (size_t)j, bv[j]);
    }
    CHECK(quill_ref_eval_op(r.ctx, r.op, r.in, r.out) == QUILL_OK);
    t_add tp;
    t_add_prepare(s1, z1, s2, z2, so, zo, &tp);
    int bad = 0;
    for (int i = 0; i < 256; i++)
      for (int j = 0; j < 16; j++) {
        int8_t x = (int8_t)(i - 128), y = bv[j];
        int64_t want;
        if (pol == QUILL_ROUND_TFLITE)
          want = add ? t_add_func(x, y, &tp)
                     : t_mul_func(x, y, s1, z1, s2, z2, so, zo);
        else if (add) {
          int64_t ra = exact_requant((int64_t)(x - z1) * (1 << 20),
                                     ap.multiplier[0], ap.shift[0], pol);
          int64_t rb = exact_requant((int64_t)(y - z2) * (1 << 20),
                                     ap.multiplier[1], ap.shift[1], pol);
          want = zo + exact_requant(ra + rb, ap.multiplier[2], ap.shift[2],
                                    pol);
        } else
          want = zo + exact_requant((int64_t)(x - z1) * (y - z2), mm[0], sh[0],
                                    pol);
        want = want < -128 ? -128 : want > 127 ? 127 : want;
        if (quill_tensor_get_i64(&r.out[0], (size_t)(i * 16 + j)) != want)
          bad++;
      }
    if (bad)
      fprintf(stderr, "  %s %s: %d mismatches\n", add ? "qadd" : "qmul",
              policies[pol], bad);
    CHECK(bad == 0);
    /* the float path: dequantize, op and quantize in f32 */
    snprintf(src, sizeof src,
             "func @f(%%a: tensor<256x1x%s>, %%b: tensor<16x%s>) -> "
             "tensor<256x16x%s> {\n  %%y = %s %%a, %%b {rounding = \"%s\"} : "
             "tensor<256x16x%s>\n  return %%y\n}\n",
             ta, tb, ty, add ? "qadd" : "qmul", policies[pol], ty);
    run f;
    if (setup(&f, src)) {
      for (int i = 0; i < 256; i++)
        quill_tensor_set_i64(&f.args[0], (size_t)i, i - 128);
      for (int j = 0; j < 16; j++)
        quill_tensor_set_i64(&f.args[1], (size_t)j, bv[j]);
      CHECK(quill_ref_eval_op(f.ctx, f.op, f.in, f.out) == QUILL_OK);
      bad = 0;
      for (int i = 0; i < 256; i++)
        for (int j = 0; j < 16; j++) {
          float fa = (float)(i - 128 - z1) * s1, fb = (float)(bv[j] - z2) * s2;
          float v = add ? fa + fb : fa * fb;
          float qf = v / so;
          int64_t q = quill_round((double)qf, pol) + zo;
          q = q < -128 ? -128 : q > 127 ? 127 : q;
          if (quill_tensor_get_i64(&f.out[0], (size_t)(i * 16 + j)) != q)
            bad++;
        }
      CHECK(bad == 0);
    } else
      CHECK(!"setup");
    run_free(&f);
    run_free(&r);
  }
}

/* ---- lut, requantize, quantize ------------------------------------------- */

static void test_lut(void) {
  /* u8 -> i8: table[i] = 127 - i/2 (any values in range); x - 0 indexes */
  char src[8192];
  int n = snprintf(src, sizeof src,
                   "func @f(%%x: tensor<4x!quant.uniform<u8:f32, 0.1:3>>) -> "
                   "tensor<4x!quant.uniform<i8:f32, 0.2:0>> {\n"
                   "  %%y = lut %%x {table = dense<[");
  for (int i = 0; i < 256; i++)
    n += snprintf(src + n, sizeof src - (size_t)n, "%s%d", i ? ", " : "",
                  127 - i / 2 - (i > 250 ? 1 : 0));
  snprintf(src + n, sizeof src - (size_t)n,
           "]> : tensor<256xi8>} : tensor<4x!quant.uniform<i8:f32, 0.2:0>>\n"
           "  return %%y\n}\n");
  EXPECT1(src, V(0, 1, 255, 100), V(127, 127, -1, 77));
  /* i8 operand: index x + 128 */
  n = snprintf(src, sizeof src,
               "func @f(%%x: tensor<3x!quant.uniform<i8:f32, 0.1:0>>) -> "
               "tensor<3x!quant.uniform<u8:f32, 0.2:0>> {\n"
               "  %%y = lut %%x {table = dense<[");
  for (int i = 0; i < 256; i++)
    n += snprintf(src + n, sizeof src - (size_t)n, "%s%d", i ? ", " : "", i);
  snprintf(src + n, sizeof src - (size_t)n,
           "]> : tensor<256xu8>} : tensor<3x!quant.uniform<u8:f32, 0.2:0>>\n"
           "  return %%y\n}\n");
  EXPECT1(src, V(-128, 0, 127), V(0, 128, 255));
}

static void test_requantize(void) {
  char src[1024];
  /* s_x 0.5 zp 4 -> s_y 1 zp -2: x-4 = 1, 3, -1, -3, 300-> sat, 9 -> 4.5
   * multiplier 0.5 = (2^30, 0) */
  const double x[] = {5, 7, 3, 1, 127, 13};
  const double *want[] = {V(-2, 0, -2, -4, 60, 2), V(-1, 0, -3, -4, 60, 3),
                          V(-1, 0, -2, -3, 60, 3), V(-1, 0, -2, -3, 60, 3)};
  const double *fwant[] = {V(-2, 0, -2, -4, 60, 2), V(-1, 0, -3, -4, 60, 3),
                           V(-1, 0, -2, -3, 60, 3), V(-1, 0, -3, -4, 60, 3)};
  for (int p = 0; p < 4; p++) {
    snprintf(src, sizeof src,
             "func @f(%%x: tensor<6x!quant.uniform<i8:f32, 0.5:4>>) -> "
             "tensor<6x!quant.uniform<i8:f32, 1.0:-2>> {\n"
             "  %%y = requantize %%x {rounding = \"%s\", multiplier = "
             "[1073741824], shift = [0]} : "
             "tensor<6x!quant.uniform<i8:f32, 1.0:-2>>\n  return %%y\n}\n",
             policies[p]);
    expect(src, x, 6, NULL, 0, want[p], 6, __LINE__);
    snprintf(src, sizeof src,
             "func @f(%%x: tensor<6x!quant.uniform<i8:f32, 0.5:4>>) -> "
             "tensor<6x!quant.uniform<i8:f32, 1.0:-2>> {\n"
             "  %%y = requantize %%x {rounding = \"%s\"} : "
             "tensor<6x!quant.uniform<i8:f32, 1.0:-2>>\n  return %%y\n}\n",
             policies[p]);
    expect(src, x, 6, NULL, 0, fwant[p], 6, __LINE__);
  }
  /* saturation into u8 with a large multiplier (x 4: 2^30, shift 3) */
  EXPECT1("func @f(%x: tensor<3x!quant.uniform<i8:f32, 1.0:0>>) -> "
          "tensor<3x!quant.uniform<u8:f32, 0.25:10>> {\n"
          "  %y = requantize %x {multiplier = [1073741824], shift = [3]} : "
          "tensor<3x!quant.uniform<u8:f32, 0.25:10>>\n  return %y\n}\n",
          V(100, -3, -2), V(255, 0, 2));
  /* random: fixed point vs exact rational, for every policy */
  srand(3);
  for (int it = 0; it < 40; it++) {
    double sx = ldexp((double)rand() / RAND_MAX + 0.5, -(rand() % 6));
    double sy = ldexp((double)rand() / RAND_MAX + 0.5, -(rand() % 6));
    int zx = rand() % 256 - 128, zy = rand() % 256 - 128;
    int32_t m;
    int sh;
    quill_rounding pol = (quill_rounding)(it % 4);
    CHECK(quill_quantize_multiplier(quill_requant_multiplier(sx, sy), &m, &sh));
    snprintf(src, sizeof src,
             "func @f(%%x: tensor<256x!quant.uniform<i8:f32, %.17g:%d>>) -> "
             "tensor<256x!quant.uniform<i8:f32, %.17g:%d>> {\n"
             "  %%y = requantize %%x {rounding = \"%s\", multiplier = [%d], "
             "shift = [%d]} : tensor<256x!quant.uniform<i8:f32, %.17g:%d>>\n"
             "  return %%y\n}\n",
             sx, zx, sy, zy, policies[pol], m, sh, sy, zy);
    run r;
    if (!setup(&r, src)) {
      CHECK(!"setup");
      run_free(&r);
      continue;
    }
    for (int i = 0; i < 256; i++)
      quill_tensor_set_i64(&r.args[0], (size_t)i, i - 128);
    CHECK(quill_ref_eval_op(r.ctx, r.op, r.in, r.out) == QUILL_OK);
    int bad = 0;
    for (int i = 0; i < 256; i++) {
      int64_t want =
          pol == QUILL_ROUND_TFLITE
              ? t_mbqm(i - 128 - zx, m, sh)
              : exact_requant(i - 128 - zx, m, sh, pol);
      want += zy;
      want = want < -128 ? -128 : want > 127 ? 127 : want;
      bad += quill_tensor_get_i64(&r.out[0], (size_t)i) != want;
    }
    CHECK(bad == 0);
    run_free(&r);
  }
}

static void test_quantize_rounding(void) {
  /* x / 0.5 = 0.5 1.5 2.5 -0.5 -1.5 -2.5 (exact ties) */
  const double x[] = {0.25, 0.75, 1.25, -0.25, -0.75, -1.25};
  const double *want[] = {V(0, 2, 2, 0, -2, -2), V(1, 2, 3, -1, -2, -3),
                          V(1, 2, 3, 0, -1, -2), V(1, 2, 3, -1, -2, -3)};
  char src[512];
  for (int p = 0; p < 4; p++) {
    snprintf(src, sizeof src,
             "func @f(%%x: tensor<6xf32>) -> "
             "tensor<6x!quant.uniform<i8:f32, 0.5:0>> {\n"
             "  %%y = quantize %%x {rounding = \"%s\"} : "
             "tensor<6x!quant.uniform<i8:f32, 0.5:0>>\n  return %%y\n}\n",
             policies[p]);
    expect(src, x, 6, NULL, 0, want[p], 6, __LINE__);
  }
  /* the default is half_even, the zero point is added after rounding */
  EXPECT1("func @f(%x: tensor<3xf32>) -> "
          "tensor<3x!quant.uniform<u8:f32, 0.5:3>> {\n"
          "  %y = quantize %x : tensor<3x!quant.uniform<u8:f32, 0.5:3>>\n"
          "  return %y\n}\n",
          V(0.25, -10, 1000), V(3, 0, 255));
}



/* qlayer_norm (ir/qnorm.h). The row (x - zx) = (1, -1): S = 0, Q = 2,
 * V = 2*2 - 0 + 0 = 4, b = 3, k = 29, W = 2^60, R = 2^30, m = 2^31,
 * s = 8; d = +-2, z = (+-2 * 2^31 + 2^7) >> 8 = +-2^24 (1.0 in Q24);
 * g = 10, b = 3 with shift 0, bias_shift 0: y = zy + 13 and zy - 7. */
static void test_qlayer_norm(void) {
  static const uint64_t ws[] = {0, 1, 2, 3, 4, 8, 9, 15, 16, 99, 100,
                                (UINT64_C(1) << 62) - 1, UINT64_C(1) << 62,
                                UINT64_C(1) << 60, UINT64_MAX,
                                UINT64_C(4611686014132420609), /* (2^31-1)^2 */
                                UINT64_C(4611686014132420608)};
  for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
    unsigned __int128 w = ws[i], r = quill_isqrt_u64(ws[i]);
    CHECK(r * r <= w && (r + 1) * (r + 1) > w);
  }
  for (uint64_t r = 1; r < 3000000000u; r = r * 3 + 7) { /* squares +- 1 */
    CHECK(quill_isqrt_u64(r * r) == r);
    CHECK(quill_isqrt_u64(r * r - 1) == r - 1);
    CHECK(quill_isqrt_u64(r * r + 1) == r);
  }
  int64_t m;
  int s;
  quill_qnorm_row(4, &m, &s);
  CHECK(m == INT64_C(1) << 31 && s == 8);
  quill_qnorm_row(0, &m, &s);
  CHECK(m == 0 && s == 37);
  quill_qnorm_row(INT64_C(1) << 60, &m, &s); /* b = 61: k = 0 */
  CHECK(m == INT64_C(1) << 31 && s == 37);
  quill_qnorm_row(1, &m, &s); /* b = 1: k = 30, R = 2^30 */
  CHECK(m == INT64_C(1) << 31 && s == 7);
  CHECK(quill_qnorm_elem(2, INT64_C(1) << 31, 8, 10, 3, 0, 0, 5, -128, 127) ==
        18);
  CHECK(quill_qnorm_elem(-2, INT64_C(1) << 31, 8, 10, 3, 0, 0, 5, -128,
                         127) == -2);
  CHECK(quill_qnorm_elem(2, INT64_C(1) << 31, 8, 1000, 0, 0, 0, 5, -128,
                         127) == 127); /* saturates */
  /* the kernel: two rows, (1, -1) with g = (10, -20) and b = 0, and a
   * constant row (V = 0: z = 0, the output is zy + beta = 5) */
  EXPECT2("func @f(%x: tensor<2x2x!quant.uniform<i8:f32, 0.1:4>>, %g: "
          "tensor<2xi32>, %b: tensor<2xi32>) -> "
          "tensor<2x2x!quant.uniform<i8:f32, 0.2:5>> {\n"
          "  %y = qlayer_norm %x, %g, %b {shift = 0, bias_shift = 0} : "
          "tensor<2x2x!quant.uniform<i8:f32, 0.2:5>>\n  return %y\n}\n",
          V(5, 3, -7, -7), V(10, -20), V(15, 25, 5, 5));
}

int main(void) {
  test_params();
  test_qlayer_norm();
  test_qadd_hand();
  test_qmul_hand();
  test_qbinary_random();
  test_lut();
  test_requantize();
  test_quantize_rounding();
  printf("test_ref_qops: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}

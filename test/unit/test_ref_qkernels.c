/*
 * test_ref_qkernels.c - unit tests of the reference target's integer
 * kernels on hand-checked cases: qconv2d, qmatmul, scast and
 * dynamic_quantize (targets/reference/kernels_qlinear.c, kernels_quant.c).
 *
 * The cases cover every rounding policy on ties (float and fixed-point
 * requantization, including tflite's double rounding), negative zero
 * points, u8 and i8, per-channel weights, padding (which must contribute
 * zp_x, i.e. zero after centering), depthwise with dilation, strides, i32
 * accumulator results with bias, saturation at both ends and narrow ranges,
 * 8-bit sums beyond 2^24 (exactness across the engine's f32 K blocks), the
 * kernel table and the errors of invalid operands. The randomized
 * cross-check against a naive formula is test_ref_qkernels_random.c.
 *
 * Each case is a one-op .qir function whose operands are graph arguments;
 * the harness (ref_qkernels_harness.h) fills them and evaluates the op
 * with quill_ref_eval_op; EXPECT2/EXPECT3 compare output 0 with the
 * expected values (check.h counts each as one check).
 */
#include "test/unit/ref_qkernels_harness.h"

static void set_values(quill_tensor *t, const double *v, size_t n) {
  for (size_t i = 0; i < n && i < quill_tensor_num_elements(t); i++)
    quill_tensor_set_f64(t, i, v[i]);
}

static bool expect_out(run *r, unsigned k, const double *want, size_t n) {
  if (r->st != QUILL_OK || k >= r->nout ||
      quill_tensor_num_elements(&r->out[k]) != n) {
    fprintf(stderr, "  status %d, diag '%s'\n", (int)r->st, r->diag);
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    double got = quill_tensor_get_f64(&r->out[k], i);
    if (got != want[i]) {
      fprintf(stderr, "  output %u element %zu: got %.9g, want %.9g\n", k, i,
              got, want[i]);
      return false;
    }
  }
  return true;
}

#define V(...) ((const double[]){__VA_ARGS__})
#define NV(...) (sizeof((const double[]){__VA_ARGS__}) / sizeof(double))

/* Run src on up to three argument value lists; compare output 0. */
static void expect(const char *src, const double *a, size_t na,
                   const double *b, size_t nb, const double *c, size_t nc,
                   const double *want, size_t nw, int line) {
  run r;
  if (!setup(&r, src)) {
    CHECK(!"setup");
    run_free(&r);
    return;
  }
  set_values(&r.args[0], a, na);
  if (r.nargs > 1)
    set_values(&r.args[1], b, nb);
  if (r.nargs > 2)
    set_values(&r.args[2], c, nc);
  eval(&r);
  bool ok = expect_out(&r, 0, want, nw);
  if (!ok)
    fprintf(stderr, "  (case at line %d)\n", line);
  CHECK(ok);
  run_free(&r);
}
#define EXPECT2(src, a, b, want)                                              \
  expect(src, a, sizeof(a) / sizeof(double), b, sizeof(b) / sizeof(double),  \
         NULL, 0, want, sizeof(want) / sizeof(double), __LINE__)
#define EXPECT3(src, a, b, c, want)                                           \
  expect(src, a, sizeof(a) / sizeof(double), b, sizeof(b) / sizeof(double),  \
         c, sizeof(c) / sizeof(double), want, sizeof(want) / sizeof(double),  \
         __LINE__)

/* ---- qmatmul: rounding, saturation, per channel -------------------------- */

/* y[4x1] = a[4x1] * b[1x1] with b - zp_b = 1, so acc = a - zp_a = a + 3. */
static const char *mm_k1(char *buf, size_t n, const char *ytype,
                         const char *attrs) {
  snprintf(buf, n,
           "func @f(%%a: tensor<4x1x!quant.uniform<i8:f32, 1.0:-3>>, "
           "%%b: tensor<1x1x!quant.uniform<i8:f32, 0.5:2>>) -> tensor<4x1x%s> {\n"
           "  %%y = qmatmul %%a, %%b %s : tensor<4x1x%s>\n"
           "  return %%y\n}\n",
           ytype, attrs, ytype);
  return buf;
}

static void test_qmatmul_rounding(void) {
  char src[1024];
  const double b[] = {3};
  /* acc = 5, -5, 7, -7; scale s_a*s_b/s_y = 1*0.5/1 = 0.5: 2.5 -2.5 3.5 -3.5 */
  const double a[] = {2, -8, 4, -10};
  const char *y = "!quant.uniform<i8:f32, 1.0:0>";
  EXPECT2(mm_k1(src, sizeof src, y, ""), a, b, V(2, -2, 4, -4));
  EXPECT2(mm_k1(src, sizeof src, y, "{rounding = \"half_even\"}"), a, b,
          V(2, -2, 4, -4));
  EXPECT2(mm_k1(src, sizeof src, y, "{rounding = \"half_away\"}"), a, b,
          V(3, -3, 4, -4));
  EXPECT2(mm_k1(src, sizeof src, y, "{rounding = \"half_up\"}"), a, b,
          V(3, -2, 4, -3));
  EXPECT2(mm_k1(src, sizeof src, y, "{rounding = \"tflite\"}"), a, b,
          V(3, -3, 4, -4));
  /* Fixed point: multiplier 2^30, shift 0 is exactly 0.5. gemmlowp's
   * SaturatingRoundingDoublingHighMul rounds -2.5 to -2 and -3.5 to -3. */
  const char *fx = "multiplier = [1073741824], shift = [0]";
  char attrs[256];
  const char *pol[] = {"half_even", "half_away", "half_up", "tflite"};
  const double *want[] = {V(2, -2, 4, -4), V(3, -3, 4, -4), V(3, -2, 4, -3),
                          V(3, -2, 4, -3)};
  for (int i = 0; i < 4; i++) {
    snprintf(attrs, sizeof attrs, "{rounding = \"%s\", %s}", pol[i], fx);
    expect(mm_k1(src, sizeof src, y, attrs), a, 4, b, 1, NULL, 0, want[i], 4,
           __LINE__);
  }
  /* shift -1: 0.25. acc 5, -5, 6, -6 -> 1.25 -1.25 1.5 -1.5. tflite rounds
   * twice (5*0.5 = 2.5 -> 3, then 3/2 = 1.5 -> 2): 2 where one rounding
   * gives 1. */
  const double a2[] = {2, -8, 3, -9};
  const double *want2[] = {V(1, -1, 2, -2), V(1, -1, 2, -2), V(1, -1, 2, -1),
                           V(2, -1, 2, -2)};
  for (int i = 0; i < 4; i++) {
    snprintf(attrs, sizeof attrs,
             "{rounding = \"%s\", multiplier = [1073741824], shift = [-1]}",
             pol[i]);
    expect(mm_k1(src, sizeof src, y, attrs), a2, 4, b, 1, NULL, 0, want2[i],
           4, __LINE__);
  }
}

static void test_qmatmul_saturation(void) {
  char src[1024];
  /* s_y = 0.25: scale 1*0.5/0.25 = 2 */
  const double b[] = {3};
  const double a[] = {124, -128, 27, -8}; /* acc = a + 3: 127, -125, 30, -5 */
  /* u8, zp 10: 264 -> 255, -240 -> 0, 70, 0 (exactly the bound) */
  EXPECT2(mm_k1(src, sizeof src, "!quant.uniform<u8:f32, 0.25:10>", ""), a, b,
          V(255, 0, 70, 0));
  /* i8, zp -3: 251 -> 127, -253 -> -128, 57, -13 */
  EXPECT2(mm_k1(src, sizeof src, "!quant.uniform<i8:f32, 0.25:-3>", ""), a, b,
          V(127, -128, 57, -13));
  /* narrow range i8<-127:127> */
  EXPECT2(mm_k1(src, sizeof src, "!quant.uniform<i8<-127:127>:f32, 0.25:0>",
                ""),
          a, b, V(127, -127, 60, -10));
  /* fixed point saturates too: 2^30 * 2^1 = 1.0 */
  EXPECT2(mm_k1(src, sizeof src, "!quant.uniform<u8:f32, 0.5:200>",
                "{multiplier = [1073741824], shift = [1]}"),
          a, b, V(255, 75, 230, 195));
  /* i32 accumulator: the raw sums */
  EXPECT2(mm_k1(src, sizeof src, "i32", ""), a, b, V(127, -125, 30, -5));
}

static void test_qmatmul_per_channel(void) {
  /* a - 128 = [[1,2,0],[-2,0,3]]; b per column: zp 0 and -2, so the
   * centered columns are [1,0,2] and [0,2,1]; acc = [[1,4],[4,3]], bias
   * [-1, 5]: [[0,9],[3,8]]. Scales: column 0 1*0.5/0.25 = 2, column 1 1. */
  const char *head =
      "func @f(%a: tensor<2x3x!quant.uniform<u8:f32, 1.0:128>>, "
      "%b: tensor<3x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:-2}>>, "
      "%c: tensor<2xi32>) -> ";
  const double a[] = {129, 130, 128, 126, 128, 131};
  const double b[] = {1, -2, 0, 0, 2, -1};
  const double c[] = {-1, 5};
  char src[1024];
  snprintf(src, sizeof src,
           "%stensor<2x2xi32> {\n  %%y = qmatmul %%a, %%b, %%c : "
           "tensor<2x2xi32>\n  return %%y\n}\n",
           head);
  EXPECT3(src, a, b, c, V(0, 9, 3, 8));
  snprintf(src, sizeof src,
           "%stensor<2x2x!quant.uniform<i8:f32, 0.25:-5>> {\n"
           "  %%y = qmatmul %%a, %%b, %%c : tensor<2x2x!quant.uniform<i8:f32, "
           "0.25:-5>>\n  return %%y\n}\n",
           head);
  EXPECT3(src, a, b, c, V(-5, 4, 1, 3));
  /* per-channel fixed point: column 0 x1 (2^30, shift 1), column 1 x0.5 */
  snprintf(src, sizeof src,
           "%stensor<2x2x!quant.uniform<i8:f32, 0.25:-5>> {\n"
           "  %%y = qmatmul %%a, %%b, %%c {multiplier = [1073741824, "
           "1073741824], shift = [1, 0]} : tensor<2x2x!quant.uniform<i8:f32, "
           "0.25:-5>>\n  return %%y\n}\n",
           head);
  EXPECT3(src, a, b, c, V(-5, -1, -2, -1)); /* 0, 4.5->4, 3, 4 */
}

/* Batched and 1-D operands; u8 x u8 as in ONNX MatMulInteger. */
static void test_qmatmul_shapes(void) {
  /* a [2,1,2] x b [2,1] (batch of a broadcast over b): acc per batch */
  EXPECT2("func @f(%a: tensor<2x1x2x!quant.uniform<u8:f32, 1.0:1>>, "
          "%b: tensor<2x1x!quant.uniform<u8:f32, 1.0:2>>) -> tensor<2x1x1xi32> {\n"
          "  %y = qmatmul %a, %b : tensor<2x1x1xi32>\n  return %y\n}\n",
          V(2, 3, 0, 5), V(4, 1), V(1 * 2 + 2 * -1, -1 * 2 + 4 * -1));
  /* 1-D a [3] x b [3,2] -> [2] */
  EXPECT2("func @f(%a: tensor<3x!quant.uniform<i8:f32, 1.0:0>>, "
          "%b: tensor<3x2x!quant.uniform<i8:f32, 1.0:0>>) -> tensor<2xi32> {\n"
          "  %y = qmatmul %a, %b : tensor<2xi32>\n  return %y\n}\n",
          V(1, 2, 3), V(1, -1, 2, -2, 3, -3), V(14, -14));
}

/* Sums beyond 2^24 stay exact: K = 1000 with the largest 8-bit products
 * crosses several f32 blocks of the engine. */
static void test_qmatmul_exact_large(void) {
  run r;
  if (!setup(&r, "func @f(%a: tensor<2x1000x!quant.uniform<u8:f32, 1.0:0>>, "
                 "%b: tensor<1000x3x!quant.uniform<i8:f32, 1.0:0>>) -> "
                 "tensor<2x3xi32> {\n"
                 "  %y = qmatmul %a, %b : tensor<2x3xi32>\n  return %y\n}\n")) {
    CHECK(!"setup");
    run_free(&r);
    return;
  }
  for (size_t i = 0; i < 2000; i++)
    quill_tensor_set_i64(&r.args[0], i, i < 1000 ? 255 : (int64_t)(i % 256));
  for (size_t i = 0; i < 3000; i++)
    quill_tensor_set_i64(&r.args[1], i, i % 3 == 0 ? -128 : i % 3 == 1 ? 127 : 1);
  eval(&r);
  /* row 0: 255 * 1000 * {-128, 127, 1}; row 1: sum of (k % 256) = ... */
  int64_t s1 = 0;
  for (int k = 0; k < 1000; k++)
    s1 += (1000 + k) % 256;
  CHECK(expect_out(&r, 0,
                   V(-32640000, 32385000, 255000, (double)(-128 * s1),
                     (double)(127 * s1), (double)s1),
                   6));
  run_free(&r);
}

/* ---- qconv2d --------------------------------------------------------------- */

static void test_qconv_hand(void) {
  /* x - 2 = [[-1,0,1],[2,3,4],[5,6,7]]; w per channel, zps {0, -1}:
   * centered w0 = [[1,0],[0,1]], w1 = [[0,0],[1,3]]; bias [10, -20]. */
  EXPECT3("func @f(%x: tensor<1x1x3x3x!quant.uniform<u8:f32, 0.5:2>>, "
          "%w: tensor<2x1x2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:-1}>>, "
          "%b: tensor<2xi32>) -> tensor<1x2x2x2xi32> {\n"
          "  %y = qconv2d %x, %w, %b : tensor<1x2x2x2xi32>\n  return %y\n}\n",
          V(1, 2, 3, 4, 5, 6, 7, 8, 9), V(1, 0, 0, 1, -1, -1, 0, 2), V(10, -20),
          V(12, 14, 18, 20, -9, -5, 3, 7));
  /* Padding contributes zp_x (0 after centering): x - (-1) = [[1,2],[3,4]],
   * w - 3 = [[1,2],[3,0]], pads 1 -> 3x3. */
  const char *pad_i32 =
      "func @f(%x: tensor<1x1x2x2x!quant.uniform<i8:f32, 0.5:-1>>, "
      "%w: tensor<1x1x2x2x!quant.uniform<u8:f32, 0.5:3>>) -> "
      "tensor<1x1x3x3xi32> {\n"
      "  %y = qconv2d %x, %w {pads = [1, 1, 1, 1]} : tensor<1x1x3x3xi32>\n"
      "  return %y\n}\n";
  EXPECT2(pad_i32, V(0, 1, 2, 3), V(4, 5, 6, 3), V(0, 3, 6, 2, 14, 14, 6, 11, 4));
  /* The same requantized: scale 0.5*0.5/0.5, half_even, zp 100. */
  EXPECT2("func @f(%x: tensor<1x1x2x2x!quant.uniform<i8:f32, 0.5:-1>>, "
          "%w: tensor<1x1x2x2x!quant.uniform<u8:f32, 0.5:3>>) -> "
          "tensor<1x1x3x3x!quant.uniform<u8:f32, 0.5:100>> {\n"
          "  %y = qconv2d %x, %w {pads = [1, 1, 1, 1]} : "
          "tensor<1x1x3x3x!quant.uniform<u8:f32, 0.5:100>>\n  return %y\n}\n",
          V(0, 1, 2, 3), V(4, 5, 6, 3),
          V(100, 102, 103, 101, 107, 107, 103, 106, 102));
  /* auto_pad SAME_UPPER with a 2x2 kernel pads bottom/right only. */
  EXPECT2("func @f(%x: tensor<1x1x2x2x!quant.uniform<i8:f32, 0.5:-1>>, "
          "%w: tensor<1x1x2x2x!quant.uniform<u8:f32, 0.5:3>>) -> "
          "tensor<1x1x2x2xi32> {\n"
          "  %y = qconv2d %x, %w {auto_pad = \"SAME_UPPER\"} : "
          "tensor<1x1x2x2xi32>\n  return %y\n}\n",
          V(0, 1, 2, 3), V(4, 5, 6, 3), V(14, 14, 11, 4));
}

static void test_qconv_depthwise(void) {
  /* group 2, dilation 2: each channel sums its four corners. */
  EXPECT2("func @f(%x: tensor<1x2x3x3x!quant.uniform<u8:f32, 1.0:0>>, "
          "%w: tensor<2x1x2x2x!quant.uniform<i8:f32, 1.0:0>>) -> "
          "tensor<1x2x1x1xi32> {\n"
          "  %y = qconv2d %x, %w {group = 2, dilations = [2, 2]} : "
          "tensor<1x2x1x1xi32>\n  return %y\n}\n",
          V(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18),
          V(1, 2, 3, 4, 1, -1, -1, 1), V(64, 0));
  /* stride 2, 1x1 kernel, two output channels per group (group 1 of 1
   * input channel): picks (0,0) (0,2) (2,0) (2,2) times 2 and -1. */
  EXPECT2("func @f(%x: tensor<1x1x3x3x!quant.uniform<u8:f32, 1.0:5>>, "
          "%w: tensor<2x1x1x1x!quant.uniform<i8:f32, 1.0:0>>) -> "
          "tensor<1x2x2x2xi32> {\n"
          "  %y = qconv2d %x, %w {strides = [2, 2]} : tensor<1x2x2x2xi32>\n"
          "  return %y\n}\n",
          V(1, 2, 3, 4, 5, 6, 7, 8, 9), V(2, -1),
          V(-8, -4, 4, 8, 4, 2, -2, -4));
}

/* 8-bit sums beyond 2^24 in a 3x3 convolution over 576 channels. */
static void test_qconv_exact_large(void) {
  run r;
  if (!setup(&r, "func @f(%x: tensor<1x576x3x3x!quant.uniform<u8:f32, 1.0:0>>, "
                 "%w: tensor<1x576x3x3x!quant.uniform<i8:f32, 1.0:0>>) -> "
                 "tensor<1x1x1x1xi32> {\n"
                 "  %y = qconv2d %x, %w : tensor<1x1x1x1xi32>\n  return %y\n}\n")) {
    CHECK(!"setup");
    run_free(&r);
    return;
  }
  for (size_t i = 0; i < 576 * 9; i++) {
    quill_tensor_set_i64(&r.args[0], i, 255);
    quill_tensor_set_i64(&r.args[1], i, i == 7 ? 1 : -128);
  }
  eval(&r);
  CHECK(expect_out(&r, 0, V(255.0 * (-128.0 * (576 * 9 - 1) + 1)), 1));
  run_free(&r);
}

/* ---- scast and dynamic_quantize ---------------------------------------------- */

static void test_scast(void) {
  EXPECT2("func @f(%x: tensor<4xu8>) -> tensor<4x!quant.uniform<u8:f32, 0.5:3>> {\n"
          "  %y = scast %x : tensor<4x!quant.uniform<u8:f32, 0.5:3>>\n"
          "  return %y\n}\n",
          V(0, 3, 128, 255), V(0), V(0, 3, 128, 255));
  EXPECT2("func @f(%x: tensor<3x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<3xi8> {\n"
          "  %y = scast %x : tensor<3xi8>\n  return %y\n}\n",
          V(-128, -3, 127), V(0), V(-128, -3, 127));
}

static void dynq(const double *x, size_t n, const double *y, double scale,
                 double zp, int line) {
  char src[512];
  snprintf(src, sizeof src,
           "func @f(%%x: tensor<%zuxf32>) -> tensor<%zuxu8> {\n"
           "  %%y, %%s, %%z = dynamic_quantize %%x : tensor<%zuxu8>, "
           "tensor<f32>, tensor<u8>\n  return %%y\n}\n",
           n, n, n);
  run r;
  if (!setup(&r, src)) {
    CHECK(!"setup");
    run_free(&r);
    return;
  }
  set_values(&r.args[0], x, n);
  eval(&r);
  bool ok = expect_out(&r, 0, y, n) && expect_out(&r, 1, &scale, 1) &&
            expect_out(&r, 2, &zp, 1);
  if (!ok)
    fprintf(stderr, "  (case at line %d)\n", line);
  CHECK(ok);
  run_free(&r);
}
#define DYNQ(x, y, s, z)                                                      \
  dynq(x, sizeof(x) / sizeof(double), y, s, z, __LINE__)

static void test_dynamic_quantize(void) {
  /* Values from ONNX's reference implementation (f32 throughout). */
  DYNQ(V(0, 2, -3, -2.5, 1.34, 0.5), V(153, 255, 0, 26, 221, 179),
       (double)(5.0f / 255.0f), 153);
  /* all zero: the degenerate range counts as 1, scale 1/255 */
  DYNQ(V(0, 0, 0), V(0, 0, 0), (double)(1.0f / 255.0f), 0);
  /* all positive: min adjusted to 0 */
  DYNQ(V(1, 2, 3), V(85, 170, 255), (double)(3.0f / 255.0f), 0);
  /* all negative: max adjusted to 0, zp 255; -2/scale is -127.49999 in f32 */
  DYNQ(V(-1, -2, -4), V(191, 128, 0), (double)(4.0f / 255.0f), 255);
  DYNQ(V(-1, -2, -4.5, 0.25), V(188, 135, 0, 255), (double)(4.75f / 255.0f),
       242);
}

/* ---- the table and errors ------------------------------------------------------ */

static void test_table(void) {
  /* Every quantization op has a reference kernel. */
  for (int opc = 0; opc < QUILL_OP_COUNT; opc++) {
    const quill_op_info *info = quill_opcode_info((quill_opcode)opc);
    if (info->flags & QUILL_OPF_QUANT) {
      CHECK(quill_ref_kernels[opc].eval != NULL);
      if (!quill_ref_kernels[opc].eval)
        fprintf(stderr, "  no kernel for '%s'\n", info->mnemonic);
    }
  }
}

/* Unverified IR that the kernels must reject with a diagnostic. */
static void expect_error(const char *src, const char *msg) {
  run r;
  if (!setup_ex(&r, src, false)) {
    CHECK(!"setup");
    run_free(&r);
    return;
  }
  CHECK(eval(&r) == QUILL_ERR_INVALID);
  CHECK(strstr(r.diag, msg) != NULL);
  if (!strstr(r.diag, msg))
    fprintf(stderr, "  diag was '%s'\n", r.diag);
  run_free(&r);
}

static void test_errors(void) {
  const char *head =
      "func @f(%a: tensor<2x2x!quant.uniform<i8:f32, 1.0:0>>, "
      "%b: tensor<2x3x!quant.uniform<i8:f32, 1.0:0>>) -> "
      "tensor<2x3x!quant.uniform<i8:f32, 1.0:0>> {\n";
  char src[1024];
  snprintf(src, sizeof src,
           "%s  %%y = qmatmul %%a, %%b {rounding = \"nearest\"} : "
           "tensor<2x3x!quant.uniform<i8:f32, 1.0:0>>\n  return %%y\n}\n",
           head);
  expect_error(src, "unknown 'rounding'");
  snprintf(src, sizeof src,
           "%s  %%y = qmatmul %%a, %%b {multiplier = [1, 2], shift = [0, 0]} "
           ": tensor<2x3x!quant.uniform<i8:f32, 1.0:0>>\n  return %%y\n}\n",
           head);
  expect_error(src, "one-per-channel");
  snprintf(src, sizeof src,
           "%s  %%y = qmatmul %%a, %%b {multiplier = [1], shift = [99]} "
           ": tensor<2x3x!quant.uniform<i8:f32, 1.0:0>>\n  return %%y\n}\n",
           head);
  expect_error(src, "out of range");
  expect_error("func @f(%a: tensor<2x2xf32>, %b: tensor<2x3x!quant.uniform<"
               "i8:f32, 1.0:0>>) -> tensor<2x3xi32> {\n"
               "  %y = qmatmul %a, %b : tensor<2x3xi32>\n  return %y\n}\n",
               "expects a quantized per tensor");
  expect_error("func @f(%x: tensor<1x1x3x3x!quant.uniform<u8:f32, 1.0:0>>, "
               "%w: tensor<1x1x2x2x!quant.uniform<i8:f32, 1.0:0>>) -> "
               "tensor<1x1x3x3xi32> {\n"
               "  %y = qconv2d %x, %w : tensor<1x1x3x3xi32>\n  return %y\n}\n",
               "result shape does not match");
  expect_error("func @f(%x: tensor<4xf32>) -> tensor<4xi8> {\n"
               "  %y, %s, %z = dynamic_quantize %x : tensor<4xi8>, tensor<f32>, "
               "tensor<u8>\n  return %y\n}\n",
               "expects results u8");
}


int main(void) {
  test_qmatmul_rounding();
  test_qmatmul_saturation();
  test_qmatmul_per_channel();
  test_qmatmul_shapes();
  test_qmatmul_exact_large();
  test_qconv_hand();
  test_qconv_depthwise();
  test_qconv_exact_large();
  test_scast();
  test_dynamic_quantize();
  test_table();
  test_errors();
  printf("test_ref_qkernels: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}

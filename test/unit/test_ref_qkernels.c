/*
 * test_ref_qkernels.c - unit tests of the reference target's integer
 * kernels: qconv2d, qmatmul, scast and dynamic_quantize
 * (targets/reference/kernels_qlinear.c, kernels_quant.c).
 *
 * Hand-checked cases: every rounding policy on ties (float and fixed-point
 * requantization, including tflite's double rounding), negative zero
 * points, u8 and i8, per-channel weights, padding (which must contribute
 * zp_x, i.e. zero after centering), depthwise with dilation, strides, i32
 * accumulator results with bias, saturation at both ends and narrow ranges,
 * 8-bit sums beyond 2^24 (exactness across the engine's f32 K blocks).
 *
 * Then a randomized cross-check: many random shapes, attributes, storage
 * types (u8, i8, i16 - which takes the int64 fallback when products get
 * large), zero points, requantization parameters and biases, each compared
 * element for element against a naive formula written here:
 *
 *   acc = (int32)(sum (x - zp_x)(w - zp_w) + bias)   (exact, then mod 2^32)
 *   y   = clamp(zp_y + quill_requant_{float,fixed}(acc, ...), qmin, qmax)
 *
 * Each case is a one-op .qir function whose operands are graph arguments;
 * the harness fills them and evaluates the op with quill_ref_eval_op.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/quant.h"
#include "targets/reference/ref.h"
#include "test/unit/check.h"

/* ---- harness ------------------------------------------------------------- */

typedef struct run {
  quill_context *ctx;
  quill_module *m;
  quill_op *op;
  quill_tensor args[4];
  unsigned nargs;
  quill_tensor in[4];   /* the op's operands (views of args) */
  quill_tensor out[3];
  unsigned nout;
  quill_status st;
  char diag[512];
} run;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  (void)loc;
  (void)sev;
  run *r = ud;
  snprintf(r->diag, sizeof r->diag, "%s", msg);
}

static void run_free(run *r) {
  for (unsigned i = 0; i < r->nout; i++)
    quill_tensor_free(r->ctx, &r->out[i]);
  for (unsigned i = 0; i < r->nargs; i++)
    quill_tensor_free(r->ctx, &r->args[i]);
  if (r->m)
    quill_module_destroy(r->m);
  quill_context_destroy(r->ctx);
  memset(r, 0, sizeof *r);
}

/* Parse and (if `verify`) verify src, allocate zeroed graph arguments and
 * the outputs of its first op. False (with a message) if the harness
 * fails. */
static bool setup_ex(run *r, const char *src, bool verify) {
  memset(r, 0, sizeof *r);
  r->ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(r->ctx, capture, r);
  r->m = quill_parse_module(r->ctx, src, strlen(src), "test.qir", 0);
  if (!r->m || (verify && quill_verify_module(r->m) != QUILL_OK)) {
    fprintf(stderr, "invalid test IR: %s\n%s\n", r->diag, src);
    return false;
  }
  quill_graph *g = quill_module_graph(r->m, 0);
  QUILL_GRAPH_FOREACH(g, op) {
    r->op = op;
    break;
  }
  r->nargs = quill_graph_num_args(g);
  for (unsigned i = 0; i < r->nargs; i++)
    if (quill_tensor_alloc(r->ctx, quill_value_type(quill_graph_arg(g, i)),
                           &r->args[i]))
      return false;
  for (unsigned j = 0; j < quill_op_num_operands(r->op); j++)
    for (unsigned i = 0; i < r->nargs; i++)
      if (quill_op_operand(r->op, j) == quill_graph_arg(g, i))
        r->in[j] = r->args[i];
  r->nout = quill_op_num_results(r->op);
  if (quill_ref_outputs_alloc(r->ctx, r->op, r->out)) {
    r->nout = 0;
    return false;
  }
  return true;
}

static bool setup(run *r, const char *src) { return setup_ex(r, src, true); }

static quill_status eval(run *r) {
  return r->st = quill_ref_eval_op(r->ctx, r->op, r->in, r->out);
}

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

/* ---- randomized cross-check ----------------------------------------------------- */

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static int64_t rnd_in(int64_t lo, int64_t hi) {
  return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* A storage type with its range and a value range to draw from. */
typedef struct storage {
  const char *name;
  int64_t lo, hi;
} storage;
static const storage storages[] = {
    {"u8", 0, 255}, {"i8", -128, 127}, {"i16", -32768, 32767}, {"u4", 0, 15},
};

static storage pick_storage(bool wide) {
  /* mostly 8-bit; i16 sometimes (full range takes the int64 path,
   * a narrow value range the f32 engine with short K blocks) */
  int64_t r = rnd_in(0, 9);
  storage s = storages[r < 5 ? 0 : r < 8 ? 1 : r < 9 && wide ? 2 : 3];
  if (s.lo == -32768 && rnd() % 2) {
    s.lo = -1500;
    s.hi = 1500;
  }
  return s;
}

/* Append printf output to a growing text buffer. */
typedef struct text {
  char buf[16384];
  size_t n;
} text;
static void put(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(t->buf + t->n, sizeof t->buf - t->n, fmt, ap);
  va_end(ap);
  if (k > 0)
    t->n += (size_t)k < sizeof t->buf - t->n ? (size_t)k : sizeof t->buf - t->n - 1;
}

/* Quantization of one operand: per tensor or per axis (n params). */
typedef struct qparam {
  storage st;
  size_t n;
  double scale[16];
  int64_t zp[16];
} qparam;

static void make_qparam(qparam *q, storage st, size_t n) {
  q->st = st;
  q->n = n;
  for (size_t i = 0; i < n; i++) {
    q->scale[i] = (double)rnd_in(1, 1000) / 4096.0;
    q->zp[i] = rnd_in(st.lo, st.hi);
    if (rnd() % 3 == 0) /* quantized ranges often center on 0 */
      q->zp[i] = st.lo < 0 ? 0 : (st.hi + 1) / 2;
  }
}

static void put_qtype(text *t, const qparam *q, int axis) {
  const char *base = q->st.name;
  if (axis < 0) {
    put(t, "!quant.uniform<%s:f32, %.17g:%lld>", base, q->scale[0],
        (long long)q->zp[0]);
    return;
  }
  put(t, "!quant.uniform<%s:f32:%d, {", base, axis);
  for (size_t i = 0; i < q->n; i++)
    put(t, "%s%.17g:%lld", i ? ", " : "", q->scale[i], (long long)q->zp[i]);
  put(t, "}>");
}

/* The result: i32 or quantized, with a requantization policy. */
typedef struct result {
  bool raw;
  qparam q;          /* per tensor */
  quill_rounding r;
  bool fixed;
  size_t nfixed;
  int64_t mult[16], shift[16];
} result;

static void make_result(result *res, size_t nch) {
  memset(res, 0, sizeof *res);
  res->raw = rnd() % 3 == 0;
  if (res->raw)
    return;
  make_qparam(&res->q, storages[rnd() % 2], 1);
  res->q.scale[0] = (double)rnd_in(1, 1000) / 64.0;
  res->r = (quill_rounding)(rnd() % 4);
  res->fixed = rnd() % 2;
  res->nfixed = rnd() % 2 ? 1 : nch;
  for (size_t i = 0; i < res->nfixed; i++) {
    res->mult[i] = rnd_in(INT64_C(1) << 30, (INT64_C(1) << 31) - 1);
    res->shift[i] = rnd_in(-14, 1);
  }
}

static void put_result_attrs(text *t, const result *res) {
  if (res->raw)
    return;
  static const char *names[] = {"half_even", "half_away", "half_up", "tflite"};
  put(t, "rounding = \"%s\"", names[res->r]);
  if (!res->fixed)
    return;
  put(t, ", multiplier = [");
  for (size_t i = 0; i < res->nfixed; i++)
    put(t, "%s%lld", i ? ", " : "", (long long)res->mult[i]);
  put(t, "], shift = [");
  for (size_t i = 0; i < res->nfixed; i++)
    put(t, "%s%lld", i ? ", " : "", (long long)res->shift[i]);
  put(t, "]");
}

static void put_result_type(text *t, const result *res) {
  if (res->raw)
    put(t, "i32");
  else
    put_qtype(t, &res->q, -1);
}

/* The naive requantization of an exact sum for channel c. */
static int64_t naive_finish(const result *res, double s_x, const qparam *wq,
                            size_t c, int64_t sum, int64_t bias) {
  int32_t acc = (int32_t)(uint32_t)(uint64_t)(sum + bias);
  if (res->raw)
    return acc;
  int64_t v;
  if (res->fixed) {
    size_t i = res->nfixed == 1 ? 0 : c;
    v = quill_requant_fixed(acc, (int32_t)res->mult[i], (int)res->shift[i],
                            res->r);
  } else {
    float s = quill_requant_scale_f32(s_x, wq->scale[wq->n == 1 ? 0 : c],
                                      res->q.scale[0]);
    v = quill_requant_float(acc, s, res->r);
  }
  int64_t lo = res->q.st.lo, hi = res->q.st.hi;
  v = quill_clamp_i64(v, -(INT64_C(1) << 40), INT64_C(1) << 40) + res->q.zp[0];
  return quill_clamp_i64(v, lo, hi);
}

static void fill_random(quill_tensor *t, int64_t *vals, storage st) {
  size_t n = quill_tensor_num_elements(t);
  for (size_t i = 0; i < n; i++) {
    vals[i] = rnd_in(st.lo, st.hi);
    quill_tensor_set_i64(t, i, vals[i]);
  }
}

static bool compare_all(run *r, const int64_t *want, size_t n,
                        const char *src) {
  if (r->st != QUILL_OK || quill_tensor_num_elements(&r->out[0]) != n) {
    fprintf(stderr, "  status %d '%s'\n%s", (int)r->st, r->diag, src);
    return false;
  }
  for (size_t i = 0; i < n; i++)
    if (quill_tensor_get_i64(&r->out[0], i) != want[i]) {
      fprintf(stderr, "  element %zu: got %lld, want %lld\n%s", i,
              (long long)quill_tensor_get_i64(&r->out[0], i),
              (long long)want[i], src);
      return false;
    }
  return true;
}

static void random_qconv(void) {
  size_t group = (size_t)rnd_in(1, 3), Cg = (size_t)rnd_in(1, 4);
  size_t Mg = (size_t)rnd_in(1, 3);
  if (rnd() % 3 == 0) { /* depthwise */
    Cg = 1;
    group = (size_t)rnd_in(1, 6);
    Mg = (size_t)rnd_in(1, 2);
  }
  size_t C = group * Cg, M = group * Mg, N = (size_t)rnd_in(1, 2);
  size_t H = (size_t)rnd_in(1, 9), W = (size_t)rnd_in(1, 9);
  size_t kh = (size_t)rnd_in(1, 4), kw = (size_t)rnd_in(1, 4);
  int64_t sh = rnd_in(1, 3), sw = rnd_in(1, 3), dh = rnd_in(1, 2),
          dw = rnd_in(1, 2);
  int64_t pads[4] = {rnd_in(0, 2), rnd_in(0, 2), rnd_in(0, 2), rnd_in(0, 2)};
  int auto_pad = rnd() % 5 == 0 ? (int)rnd_in(1, 2) : 0; /* UPPER, LOWER */
  if (auto_pad) {
    int64_t in[2] = {(int64_t)H, (int64_t)W}, k[2] = {(int64_t)kh, (int64_t)kw};
    int64_t s[2] = {sh, sw}, d[2] = {dh, dw};
    for (int a = 0; a < 2; a++) {
      int64_t out = (in[a] + s[a] - 1) / s[a];
      int64_t total = (out - 1) * s[a] + d[a] * (k[a] - 1) + 1 - in[a];
      total = total < 0 ? 0 : total;
      pads[a] = auto_pad == 1 ? total / 2 : total - total / 2;
      pads[a + 2] = total - pads[a];
    }
  }
  int64_t eh = dh * ((int64_t)kh - 1) + 1, ew = dw * ((int64_t)kw - 1) + 1;
  if ((int64_t)H + pads[0] + pads[2] < eh || (int64_t)W + pads[1] + pads[3] < ew)
    return; /* no output */
  size_t OH = (size_t)(((int64_t)H + pads[0] + pads[2] - eh) / sh + 1);
  size_t OW = (size_t)(((int64_t)W + pads[1] + pads[3] - ew) / sw + 1);
  qparam xq, wq;
  make_qparam(&xq, pick_storage(true), 1);
  bool per_ch = rnd() % 2;
  make_qparam(&wq, pick_storage(true), per_ch ? M : 1);
  if (rnd() % 8 == 0) /* a scale product that hits ties often */
    wq.scale[0] = xq.scale[0] = 0.5;
  result res;
  make_result(&res, M);
  bool has_bias = rnd() % 2;

  text t = {{0}, 0};
  put(&t, "func @f(%%x: tensor<%zux%zux%zux%zux", N, C, H, W);
  put_qtype(&t, &xq, -1);
  put(&t, ">, %%w: tensor<%zux%zux%zux%zux", M, Cg, kh, kw);
  put_qtype(&t, &wq, per_ch ? 0 : -1);
  put(&t, ">");
  if (has_bias)
    put(&t, ", %%b: tensor<%zuxi32>", M);
  put(&t, ") -> tensor<%zux%zux%zux%zux", N, M, OH, OW);
  put_result_type(&t, &res);
  put(&t, "> {\n  %%y = qconv2d %%x, %%w%s {strides = [%lld, %lld], "
          "dilations = [%lld, %lld], group = %zu",
      has_bias ? ", %b" : "", (long long)sh, (long long)sw, (long long)dh,
      (long long)dw, group);
  if (auto_pad)
    put(&t, ", auto_pad = \"%s\"", auto_pad == 1 ? "SAME_UPPER" : "SAME_LOWER");
  else
    put(&t, ", pads = [%lld, %lld, %lld, %lld]", (long long)pads[0],
        (long long)pads[1], (long long)pads[2], (long long)pads[3]);
  if (!res.raw)
    put(&t, ", ");
  put_result_attrs(&t, &res);
  put(&t, "} : tensor<%zux%zux%zux%zux", N, M, OH, OW);
  put_result_type(&t, &res);
  put(&t, ">\n  return %%y\n}\n");

  run r;
  if (!setup(&r, t.buf)) {
    CHECK(!"setup");
    run_free(&r);
    return;
  }
  size_t nx = N * C * H * W, nw = M * Cg * kh * kw, ny = N * M * OH * OW;
  int64_t *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w);
  int64_t *b = calloc(M, sizeof *b), *want = malloc(ny * sizeof *want);
  fill_random(&r.args[0], x, xq.st);
  fill_random(&r.args[1], w, wq.st);
  if (has_bias)
    for (size_t m = 0; m < M; m++) {
      b[m] = rnd() % 8 ? rnd_in(-100000, 100000)
                       : rnd_in(INT32_MIN, INT32_MAX); /* wraps */
      quill_tensor_set_i64(&r.args[2], m, b[m]);
    }
  for (size_t n = 0; n < N; n++)
    for (size_t m = 0; m < M; m++)
      for (size_t oh = 0; oh < OH; oh++)
        for (size_t ow = 0; ow < OW; ow++) {
          int64_t sum = 0, zw = wq.zp[per_ch ? m : 0];
          size_t gr = m / Mg;
          for (size_t c = 0; c < Cg; c++)
            for (size_t i = 0; i < kh; i++)
              for (size_t j = 0; j < kw; j++) {
                int64_t ih = (int64_t)oh * sh - pads[0] + (int64_t)i * dh;
                int64_t iw = (int64_t)ow * sw - pads[1] + (int64_t)j * dw;
                if (ih < 0 || iw < 0 || ih >= (int64_t)H || iw >= (int64_t)W)
                  continue;
                int64_t xv = x[((n * C + gr * Cg + c) * H + (size_t)ih) * W +
                               (size_t)iw];
                int64_t wv = w[((m * Cg + c) * kh + i) * kw + j];
                sum += (xv - xq.zp[0]) * (wv - zw);
              }
          want[((n * M + m) * OH + oh) * OW + ow] =
              naive_finish(&res, xq.scale[0], &wq, m, sum, b[m]);
        }
  eval(&r);
  CHECK(compare_all(&r, want, ny, t.buf));
  free(x);
  free(w);
  free(b);
  free(want);
  run_free(&r);
}

static void put_dims(text *t, const size_t *d, unsigned r) {
  for (unsigned i = 0; i < r; i++)
    put(t, "%zux", d[i]);
}

static void random_qmatmul(void) {
  /* batch dims of a and b (right-aligned, each 1 or the full size) */
  unsigned nbatch = (unsigned)rnd_in(0, 2);
  size_t full[2] = {(size_t)rnd_in(1, 3), (size_t)rnd_in(1, 3)};
  size_t M = (size_t)rnd_in(1, 9), K = (size_t)rnd_in(1, 12),
         Nn = (size_t)rnd_in(1, 9);
  if (rnd() % 6 == 0)
    K = (size_t)rnd_in(200, 700); /* several f32 blocks */
  bool a1 = nbatch == 0 && rnd() % 5 == 0, b1 = nbatch == 0 && rnd() % 5 == 0;
  size_t ad[4], bd[4], yd[4];
  unsigned ra = 0, rb = 0, ry = 0;
  unsigned nba = nbatch ? (unsigned)rnd_in(0, nbatch) : 0;
  unsigned nbb = nbatch ? (unsigned)rnd_in(0, nbatch) : 0;
  for (unsigned d = nbatch - nba; d < nbatch; d++)
    ad[ra++] = rnd() % 3 ? full[d] : 1;
  for (unsigned d = nbatch - nbb; d < nbatch; d++)
    bd[rb++] = rnd() % 3 ? full[d] : 1;
  unsigned nb = nba > nbb ? nba : nbb;
  for (unsigned d = 0; d < nb; d++) {
    size_t da = d + nba >= nb ? ad[d + nba - nb] : 1;
    size_t db = d + nbb >= nb ? bd[d + nbb - nb] : 1;
    yd[ry++] = da > db ? da : db;
  }
  if (!a1)
    ad[ra++] = M;
  ad[ra++] = K;
  bd[rb++] = K;
  if (!b1)
    bd[rb++] = Nn;
  if (!a1)
    yd[ry++] = M;
  if (!b1)
    yd[ry++] = Nn;
  if (a1)
    M = 1;
  if (b1)
    Nn = 1;
  size_t cols = ry ? yd[ry - 1] : 1;
  qparam aq, bq;
  make_qparam(&aq, pick_storage(true), 1);
  bool per_col = !b1 && Nn <= 16 && rnd() % 2;
  make_qparam(&bq, pick_storage(true), per_col ? Nn : 1);
  result res;
  make_result(&res, cols <= 16 ? cols : 1);
  if (res.nfixed > 1 && res.nfixed != cols)
    res.nfixed = 1;
  bool has_bias = rnd() % 2;

  text t = {{0}, 0};
  put(&t, "func @f(%%a: tensor<");
  put_dims(&t, ad, ra);
  put_qtype(&t, &aq, -1);
  put(&t, ">, %%b: tensor<");
  put_dims(&t, bd, rb);
  put_qtype(&t, &bq, per_col ? (int)rb - 1 : -1);
  put(&t, ">");
  if (has_bias)
    put(&t, ", %%c: tensor<%zuxi32>", cols);
  put(&t, ") -> tensor<");
  put_dims(&t, yd, ry);
  put_result_type(&t, &res);
  put(&t, "> {\n  %%y = qmatmul %%a, %%b%s {", has_bias ? ", %c" : "");
  put_result_attrs(&t, &res);
  put(&t, "} : tensor<");
  put_dims(&t, yd, ry);
  put_result_type(&t, &res);
  put(&t, ">\n  return %%y\n}\n");

  run r;
  if (!setup(&r, t.buf)) {
    CHECK(!"setup");
    run_free(&r);
    return;
  }
  size_t na = quill_tensor_num_elements(&r.args[0]);
  size_t nbv = quill_tensor_num_elements(&r.args[1]);
  size_t ny = quill_tensor_num_elements(&r.out[0]);
  int64_t *a = malloc(na * sizeof *a), *b = malloc(nbv * sizeof *b);
  int64_t *bias = calloc(cols, sizeof *bias), *want = malloc(ny * sizeof *want);
  fill_random(&r.args[0], a, aq.st);
  fill_random(&r.args[1], b, bq.st);
  if (has_bias)
    for (size_t c = 0; c < cols; c++) {
      bias[c] = rnd_in(-100000, 100000);
      quill_tensor_set_i64(&r.args[2], c, bias[c]);
    }
  /* Naive: for each output index, decode the batch index and broadcast. */
  size_t batches = ny / (M * Nn);
  for (size_t tb = 0; tb < batches; tb++) {
    size_t ia = 0, ib = 0, sa = 1, sb = 1, rem = tb;
    for (unsigned d = nb; d-- > 0;) {
      size_t idx = rem % yd[d];
      rem /= yd[d];
      if (d + nba >= nb) {
        size_t da = ad[d + nba - nb];
        ia += (da == 1 ? 0 : idx) * sa;
        sa *= da;
      }
      if (d + nbb >= nb) {
        size_t db = bd[d + nbb - nb];
        ib += (db == 1 ? 0 : idx) * sb;
        sb *= db;
      }
    }
    for (size_t i = 0; i < M; i++)
      for (size_t j = 0; j < Nn; j++) {
        int64_t sum = 0, zb = bq.zp[per_col ? j : 0];
        for (size_t k = 0; k < K; k++)
          sum += (a[ia * M * K + i * K + k] - aq.zp[0]) *
                 (b[ib * K * Nn + k * Nn + j] - zb);
        size_t yi = tb * M * Nn + i * Nn + j;
        size_t c = yi % cols;
        want[yi] = naive_finish(&res, aq.scale[0], &bq, c, sum, bias[c]);
      }
  }
  eval(&r);
  CHECK(compare_all(&r, want, ny, t.buf));
  free(a);
  free(b);
  free(bias);
  free(want);
  run_free(&r);
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
  for (int i = 0; i < 400; i++)
    random_qconv();
  for (int i = 0; i < 400; i++)
    random_qmatmul();
  printf("test_ref_qkernels: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}

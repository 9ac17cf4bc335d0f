/*
 * test_ref_kernels.c - unit tests of the reference target's kernels
 * (targets/reference/): every kernel on small inputs with hand-computed
 * results, numpy broadcasting, f16/bf16 and integer cases, and the error
 * paths (integer division by zero, gather out of range, unsupported ops).
 *
 * Each case is a tiny .qir function: constants feeding one op. The harness
 * parses it, evaluates the first non-constant op on the constants' data
 * with quill_ref_eval_op and compares the outputs element by element.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "targets/reference/ref.h"
#include "test/unit/check.h"

typedef struct fixture {
  quill_context *ctx;
  quill_module *m;
  quill_op *op;
  quill_tensor out[4];
  unsigned nout;
  quill_status st;
  char diag[512]; /* last diagnostic */
} fixture;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  (void)loc;
  (void)sev;
  fixture *f = ud;
  snprintf(f->diag, sizeof f->diag, "%s", msg);
}

static void finish(fixture *f) {
  for (unsigned i = 0; i < f->nout; i++)
    quill_tensor_free(f->ctx, &f->out[i]);
  if (f->m)
    quill_module_destroy(f->m);
  quill_context_destroy(f->ctx);
  memset(f, 0, sizeof *f);
}

/* Parse src and evaluate its first non-constant op. Returns the status of
 * the evaluation (QUILL_ERR_INTERNAL if the harness itself failed). */
static quill_status eval(fixture *f, const char *src) {
  memset(f, 0, sizeof *f);
  f->ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(f->ctx, capture, f);
  f->m = quill_parse_module(f->ctx, src, strlen(src), "test.qir", 0);
  if (!f->m) {
    fprintf(stderr, "parse failed: %s\n%s\n", f->diag, src);
    return f->st = QUILL_ERR_INTERNAL;
  }
  quill_graph *g = quill_module_graph(f->m, 0);
  QUILL_GRAPH_FOREACH(g, op) {
    if (quill_op_opcode(op) != QUILL_OP_CONSTANT) {
      f->op = op;
      break;
    }
  }
  if (!f->op)
    return f->st = QUILL_ERR_INTERNAL;
  quill_tensor in[8];
  unsigned nin = quill_op_num_operands(f->op);
  for (unsigned i = 0; i < nin && i < 8; i++) {
    const quill_attr *a = quill_value_constant(quill_op_operand(f->op, i));
    if (!a)
      return f->st = QUILL_ERR_INTERNAL;
    in[i] = quill_tensor_from_attr(a);
  }
  f->nout = quill_op_num_results(f->op);
  if (quill_ref_outputs_alloc(f->ctx, f->op, f->out) != QUILL_OK) {
    f->nout = 0;
    return f->st = QUILL_ERR_INTERNAL;
  }
  return f->st = quill_ref_eval_op(f->ctx, f->op, in, f->out);
}

/* Compare output k with expected values; tol 0 means exact. */
static bool expect_f64(fixture *f, unsigned k, const double *want, size_t n,
                       double tol) {
  if (f->st != QUILL_OK || k >= f->nout ||
      quill_tensor_num_elements(&f->out[k]) != n) {
    fprintf(stderr, "  status %d, diag '%s'\n", (int)f->st, f->diag);
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    double got = quill_tensor_get_f64(&f->out[k], i);
    bool ok = isnan(want[i]) ? isnan(got)
              : tol == 0     ? got == want[i]
                             : fabs(got - want[i]) <= tol;
    if (!ok) {
      fprintf(stderr, "  element %zu: got %.9g, want %.9g\n", i, got,
              want[i]);
      return false;
    }
  }
  return true;
}

static bool expect_i64(fixture *f, unsigned k, const int64_t *want,
                       size_t n) {
  if (f->st != QUILL_OK || k >= f->nout ||
      quill_tensor_num_elements(&f->out[k]) != n) {
    fprintf(stderr, "  status %d, diag '%s'\n", (int)f->st, f->diag);
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    int64_t got = quill_tensor_get_i64(&f->out[k], i);
    if (got != want[i]) {
      fprintf(stderr, "  element %zu: got %lld, want %lld\n", i,
              (long long)got, (long long)want[i]);
      return false;
    }
  }
  return true;
}

#define F64S(...) ((const double[]){__VA_ARGS__})
#define I64S(...) ((const int64_t[]){__VA_ARGS__})
#define COUNT(...) (sizeof((const double[]){__VA_ARGS__}) / sizeof(double))
/* Evaluate src and compare output 0 (exactly, or within tol). */
#define EXPECT_F(src, tol, ...)                                               \
  do {                                                                        \
    fixture f_;                                                               \
    eval(&f_, src);                                                           \
    CHECK(expect_f64(&f_, 0, F64S(__VA_ARGS__), COUNT(__VA_ARGS__), tol));    \
    finish(&f_);                                                              \
  } while (0)
#define EXPECT_I(src, ...)                                                    \
  do {                                                                        \
    fixture f_;                                                               \
    eval(&f_, src);                                                           \
    CHECK(expect_i64(&f_, 0, I64S(__VA_ARGS__), COUNT(__VA_ARGS__)));         \
    finish(&f_);                                                              \
  } while (0)
/* Evaluate src and expect a failure with a diagnostic containing msg. */
#define EXPECT_ERR(src, status, msg)                                          \
  do {                                                                        \
    fixture f_;                                                               \
    CHECK(eval(&f_, src) == (status));                                        \
    CHECK(strstr(f_.diag, msg) != NULL);                                      \
    if (!strstr(f_.diag, msg))                                                \
      fprintf(stderr, "  diag was '%s'\n", f_.diag);                          \
    finish(&f_);                                                              \
  } while (0)

/* One-op function text: constants a (and b, c) then the op line. */
#define FN(body) "func @f() -> () {\n" body "  return\n}\n"
#define CST(name, val, ty)                                                    \
  "  %" name " = constant {value = dense<" val "> : " ty "} : " ty "\n"

/* ---- elementwise ---------------------------------------------------------- */

static void test_binary_f32(void) {
  /* numpy broadcasting: 2x3 + 3 and 2x1 + 1x3 */
  EXPECT_F(FN(CST("a", "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]", "tensor<2x3xf32>")
              CST("b", "[10.0, 20.0, 30.0]", "tensor<3xf32>")
              "  %r = add %a, %b : tensor<2x3xf32>\n"),
           0, 11, 22, 33, 14, 25, 36);
  EXPECT_F(FN(CST("a", "[1.0, 2.0]", "tensor<2x1xf32>")
              CST("b", "[10.0, 20.0, 30.0]", "tensor<1x3xf32>")
              "  %r = sub %a, %b : tensor<2x3xf32>\n"),
           0, -9, -19, -29, -8, -18, -28);
  EXPECT_F(FN(CST("a", "[1.5, -2.0]", "tensor<2xf32>")
              CST("b", "4.0", "tensor<f32>")
              "  %r = mul %a, %b : tensor<2xf32>\n"),
           0, 6, -8);
  EXPECT_F(FN(CST("a", "[1.0, -1.0, 0.0, 3.0]", "tensor<4xf32>")
              CST("b", "[0.0, 0.0, 0.0, 4.0]", "tensor<4xf32>")
              "  %r = div %a, %b : tensor<4xf32>\n"),
           0, INFINITY, -INFINITY, NAN, 0.75);
  /* f32 arithmetic, not f64: 0.1f + 0.2f rounds as float */
  EXPECT_F(FN(CST("a", "0.1", "tensor<f32>") CST("b", "0.2", "tensor<f32>")
              "  %r = add %a, %b : tensor<f32>\n"),
           0, (double)(0.1f + 0.2f));
  EXPECT_F(FN(CST("a", "[2.0, 3.0, 4.0]", "tensor<3xf32>")
              CST("b", "[3.0, 2.0, 0.5]", "tensor<3xf32>")
              "  %r = pow %a, %b : tensor<3xf32>\n"),
           0, 8, 9, 2);
  EXPECT_F(FN(CST("a", "[1.0, 5.0, nan]", "tensor<3xf32>")
              CST("b", "[3.0, 2.0, 1.0]", "tensor<3xf32>")
              "  %r = max %a, %b : tensor<3xf32>\n"),
           0, 3, 5, NAN);
  EXPECT_F(FN(CST("a", "[1.0, 5.0]", "tensor<2xf32>")
              CST("b", "[3.0, 2.0]", "tensor<2xf32>")
              "  %r = min %a, %b : tensor<2xf32>\n"),
           0, 1, 2);
  EXPECT_F(FN(CST("a", "[-2.0, 3.0, -4.0, 1.0]", "tensor<2x2xf32>")
              CST("b", "[0.5, 0.25]", "tensor<2xf32>")
              "  %r = prelu %a, %b : tensor<2x2xf32>\n"),
           0, -1, 3, -2, 1);
  EXPECT_F(FN(CST("a", "[1.0, 2.0]", "tensor<2xf64>")
              CST("b", "[3.0, 0.1]", "tensor<2xf64>")
              "  %r = add %a, %b : tensor<2xf64>\n"),
           0, 4, 2.1);
}

static void test_binary_int(void) {
  /* C division truncates toward zero */
  EXPECT_I(FN(CST("a", "[7, -7, 7, -7]", "tensor<4xi32>")
              CST("b", "[2, 2, -2, -2]", "tensor<4xi32>")
              "  %r = div %a, %b : tensor<4xi32>\n"),
           3, -3, -3, 3);
  /* wraps to the element width */
  EXPECT_I(FN(CST("a", "[100, -128]", "tensor<2xi8>")
              CST("b", "[100, -1]", "tensor<2xi8>")
              "  %r = add %a, %b : tensor<2xi8>\n"),
           -56, 127);
  EXPECT_I(FN(CST("a", "[-128]", "tensor<1xi8>") CST("b", "[-1]", "tensor<1xi8>")
              "  %r = div %a, %b : tensor<1xi8>\n"),
           -128);
  EXPECT_I(FN(CST("a", "[250, 3]", "tensor<2xu8>") CST("b", "[10, 5]", "tensor<2xu8>")
              "  %r = add %a, %b : tensor<2xu8>\n"),
           4, 8);
  EXPECT_I(FN(CST("a", "[3, 2, -1, 5]", "tensor<4xi64>")
              CST("b", "[4, 10, 3, 0]", "tensor<4xi64>")
              "  %r = pow %a, %b : tensor<4xi64>\n"),
           81, 1024, -1, 1);
  EXPECT_I(FN(CST("a", "[1, 9]", "tensor<2x1xi32>") CST("b", "[4, 6]", "tensor<2xi32>")
              "  %r = max %a, %b : tensor<2x2xi32>\n"),
           4, 6, 9, 9);
  EXPECT_I(FN(CST("a", "[-3, 3]", "tensor<2xi16>") CST("b", "[2]", "tensor<1xi16>")
              "  %r = mul %a, %b : tensor<2xi16>\n"),
           -6, 6);
  EXPECT_ERR(FN(CST("a", "[1, 2]", "tensor<2xi32>") CST("b", "[1, 0]", "tensor<2xi32>")
                "  %r = div %a, %b : tensor<2xi32>\n"),
             QUILL_ERR_INVALID, "integer division by zero");
  EXPECT_ERR(FN(CST("a", "[0]", "tensor<1xi32>") CST("b", "[-1]", "tensor<1xi32>")
                "  %r = pow %a, %b : tensor<1xi32>\n"),
             QUILL_ERR_INVALID, "negative integer power");
  EXPECT_ERR(FN(CST("a", "[1.0, 2.0, 3.0]", "tensor<3xf32>")
                CST("b", "[1.0, 2.0]", "tensor<2xf32>")
                "  %r = add %a, %b : tensor<3xf32>\n"),
             QUILL_ERR_INVALID, "do not broadcast");
}

static void test_compare_where(void) {
  EXPECT_I(FN(CST("a", "[1.0, 2.0, nan]", "tensor<3xf32>") CST("b", "2.0", "tensor<f32>")
              "  %r = equal %a, %b : tensor<3xbool>\n"),
           0, 1, 0);
  EXPECT_I(FN(CST("a", "[1, 2, 3]", "tensor<3xi32>") CST("b", "[2]", "tensor<1xi32>")
              "  %r = less %a, %b : tensor<3xbool>\n"),
           1, 0, 0);
  EXPECT_I(FN(CST("a", "[1, 2, 3]", "tensor<3xi32>") CST("b", "[2]", "tensor<1xi32>")
              "  %r = greater %a, %b : tensor<3xbool>\n"),
           0, 0, 1);
  EXPECT_F(FN(CST("c", "[true, false]", "tensor<2x1xbool>")
              CST("x", "[1.0, 2.0, 3.0]", "tensor<3xf32>")
              CST("y", "-1.0", "tensor<f32>")
              "  %r = where %c, %x, %y : tensor<2x3xf32>\n"),
           0, 1, 2, 3, -1, -1, -1);
}

static void test_unary(void) {
#define UN(op, vals, n, extra) \
  FN(CST("a", vals, "tensor<" #n "xf32>") "  %r = " op " %a" extra " : tensor<" #n "xf32>\n")
  EXPECT_F(UN("relu", "[-1.0, 0.0, 2.5]", 3, ""), 0, 0, 0, 2.5);
  EXPECT_F(UN("leaky_relu", "[-1.0, 2.0]", 2, ""), 0, (double)(0.01f * -1.0f), 2);
  EXPECT_F(UN("leaky_relu", "[-1.0, 2.0]", 2, " {alpha = 0.5}"), 0, -0.5, 2);
  EXPECT_F(UN("sigmoid", "[0.0, 100.0, -100.0]", 3, ""), 1e-7, 0.5, 1, 0);
  EXPECT_F(UN("tanh", "[0.0, 1.0]", 2, ""), 1e-6, 0, 0.7615941559557649);
  EXPECT_F(UN("hard_sigmoid", "[1.0, 10.0, -10.0]", 3, ""), 1e-6, 0.7, 1, 0);
  EXPECT_F(UN("hard_sigmoid", "[1.0]", 1, " {alpha = 0.5, beta = 0.25}"), 1e-6, 0.75);
  EXPECT_F(UN("hard_swish", "[3.0, -3.0, 1.0]", 3, ""), 1e-6, 3, 0, 2.0 / 3.0);
  EXPECT_F(UN("gelu", "[0.0, 1.0, -1.0]", 3, ""), 1e-6, 0, 0.8413447460685429,
           -0.15865525393145707);
  EXPECT_F(UN("gelu", "[1.0]", 1, " {approximate = \"tanh\"}"), 1e-6,
           0.8411919906082768);
  EXPECT_F(UN("erf", "[0.5, 0.0]", 2, ""), 1e-6, 0.5204998778130465, 0);
  EXPECT_F(UN("sqrt", "[4.0, 2.0, -1.0]", 3, ""), 0, 2, (double)sqrtf(2.0f), NAN);
  EXPECT_F(UN("exp", "[0.0, 1.0]", 2, ""), 0, 1, (double)expf(1.0f));
  EXPECT_F(UN("log", "[1.0, 0.0]", 2, ""), 0, 0, -INFINITY);
  EXPECT_F(UN("neg", "[1.0, -2.0]", 2, ""), 0, -1, 2);
  EXPECT_F(UN("abs", "[-1.5, 2.0]", 2, ""), 0, 1.5, 2);
  EXPECT_F(UN("reciprocal", "[4.0, 0.0]", 2, ""), 0, 0.25, INFINITY);
  EXPECT_F(UN("floor", "[-1.5, 1.5]", 2, ""), 0, -2, 1);
  EXPECT_F(UN("ceil", "[-1.5, 1.5]", 2, ""), 0, -1, 2);
#undef UN
  EXPECT_I(FN(CST("a", "[-3, 4]", "tensor<2xi32>") "  %r = relu %a : tensor<2xi32>\n"), 0, 4);
  EXPECT_I(FN(CST("a", "[-3, 4]", "tensor<2xi32>") "  %r = abs %a : tensor<2xi32>\n"), 3, 4);
  EXPECT_I(FN(CST("a", "[-3, 4]", "tensor<2xi8>") "  %r = neg %a : tensor<2xi8>\n"), 3, -4);
  EXPECT_ERR(FN(CST("a", "[4]", "tensor<1xi32>") "  %r = sqrt %a : tensor<1xi32>\n"),
             QUILL_ERR_UNSUPPORTED, "not supported by target 'reference'");
}

static void test_clip(void) {
  EXPECT_F(FN(CST("a", "[-2.0, 0.5, 9.0, nan]", "tensor<4xf32>")
              "  %r = clip %a {min = -1.0, max = 1.0} : tensor<4xf32>\n"),
           0, -1, 0.5, 1, NAN);
  EXPECT_F(FN(CST("a", "[-2.0, 0.5, 9.0]", "tensor<3xf32>")
              CST("lo", "0.0", "tensor<f32>") CST("hi", "6.0", "tensor<f32>")
              "  %r = clip %a, %lo, %hi : tensor<3xf32>\n"),
           0, 0, 0.5, 6);
  EXPECT_I(FN(CST("a", "[-5, 3, 100]", "tensor<3xi8>")
              "  %r = clip %a {min = 0, max = 10} : tensor<3xi8>\n"),
           0, 3, 10);
}

static void test_cast(void) {
  EXPECT_I(FN(CST("a", "[-1.7, 1.7, 2.5, nan, 1.0e10]", "tensor<5xf32>")
              "  %r = cast %a : tensor<5xi32>\n"),
           -1, 1, 2, 0, INT32_MAX);
  EXPECT_I(FN(CST("a", "[0.0, 0.5, -2.0]", "tensor<3xf32>")
              "  %r = cast %a : tensor<3xbool>\n"),
           0, 1, 1);
  EXPECT_I(FN(CST("a", "[300, -1]", "tensor<2xi32>") "  %r = cast %a : tensor<2xu8>\n"),
           44, 255);
  EXPECT_F(FN(CST("a", "[3, -7]", "tensor<2xi32>") "  %r = cast %a : tensor<2xf32>\n"),
           0, 3, -7);
  /* f32 -> f16 rounds to nearest even: 1 + 2^-11 is a tie -> 1.0 */
  EXPECT_F(FN(CST("a", "[1.00048828125, 65504.0, 1.0e6]", "tensor<3xf32>")
              "  %r = cast %a : tensor<3xf16>\n"),
           0, 1, 65504, INFINITY);
  EXPECT_F(FN(CST("a", "[1.5, 2.25]", "tensor<2xf16>") "  %r = cast %a : tensor<2xf32>\n"),
           0, 1.5, 2.25);
}

static void test_half(void) {
  EXPECT_F(FN(CST("a", "[1.5, 2.25]", "tensor<2xf16>") CST("b", "[0.25, 0.5]", "tensor<2xf16>")
              "  %r = add %a, %b : tensor<2xf16>\n"),
           0, 1.75, 2.75);
  /* 2048 + 1 is not representable in f16: ties to even */
  EXPECT_F(FN(CST("a", "2048.0", "tensor<f16>") CST("b", "1.0", "tensor<f16>")
              "  %r = add %a, %b : tensor<f16>\n"),
           0, 2048);
  EXPECT_F(FN(CST("a", "[1.0, 256.0]", "tensor<2xbf16>") CST("b", "[0.5, 1.0]", "tensor<2xbf16>")
              "  %r = mul %a, %b : tensor<2xbf16>\n"),
           0, 0.5, 256);
  EXPECT_F(FN(CST("a", "[-1.0, 4.0]", "tensor<2xf16>") "  %r = relu %a : tensor<2xf16>\n"),
           0, 0, 4);
}

/* Narrow and wide integer types: i4/u4 wrap in 4 bits, u64 is unsigned. */
static void test_int_types(void) {
  EXPECT_I(FN(CST("a", "[7, -8]", "tensor<2xi4>") CST("b", "[1, -1]", "tensor<2xi4>")
              "  %r = add %a, %b : tensor<2xi4>\n"),
           -8, 7);
  EXPECT_I(FN(CST("a", "[15, 3]", "tensor<2xu4>") CST("b", "[1, 2]", "tensor<2xu4>")
              "  %r = add %a, %b : tensor<2xu4>\n"),
           0, 5);
  /* 2^63 + 2 as u64 bits; unsigned division and comparison */
  EXPECT_I(FN(CST("a", "[9223372036854775810]", "tensor<1xu64>")
              CST("b", "[2]", "tensor<1xu64>")
              "  %r = div %a, %b : tensor<1xu64>\n"),
           INT64_C(4611686018427387905));
  EXPECT_I(FN(CST("a", "[9223372036854775810]", "tensor<1xu64>")
              CST("b", "[2]", "tensor<1xu64>")
              "  %r = greater %a, %b : tensor<1xbool>\n"),
           1);
}

/* The tensor helpers on their own. */
static void test_tensor_helpers(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  int64_t dims[2] = {2, 3};
  quill_type *i8 = quill_type_scalar(ctx, QUILL_TYPE_I8);
  quill_type *t = quill_type_tensor(ctx, i8, 2, dims);
  quill_tensor x;
  CHECK(quill_tensor_alloc(ctx, t, &x) == QUILL_OK);
  CHECK(x.size == 6 && quill_tensor_num_elements(&x) == 6);
  quill_tensor_set_f64(&x, 0, 1e9);   /* saturates */
  quill_tensor_set_f64(&x, 1, -2.9);  /* truncates toward zero */
  quill_tensor_set_i64(&x, 2, 200);   /* wraps */
  quill_tensor_set_f64(&x, 3, NAN);   /* NaN -> 0 */
  CHECK(quill_tensor_get_i64(&x, 0) == 127);
  CHECK(quill_tensor_get_i64(&x, 1) == -2);
  CHECK(quill_tensor_get_i64(&x, 2) == -56);
  CHECK(quill_tensor_get_i64(&x, 3) == 0);
  int64_t strides[2];
  quill_ref_strides(t, strides);
  CHECK(strides[0] == 3 && strides[1] == 1);
  quill_tensor_free(ctx, &x);
  CHECK(x.data == NULL && x.size == 0);

  /* three-input broadcast: out 2x3 from 2x1, 3 and a scalar */
  int64_t d21[2] = {2, 1}, d3[1] = {3};
  quill_type *f32 = quill_type_scalar(ctx, QUILL_TYPE_F32);
  const quill_type *ins[3] = {quill_type_tensor(ctx, f32, 2, d21),
                              quill_type_tensor(ctx, f32, 1, d3),
                              quill_type_tensor(ctx, f32, 0, NULL)};
  quill_ref_bcast it;
  CHECK(quill_ref_bcast_init(&it, quill_type_tensor(ctx, f32, 2, dims), 3, ins));
  size_t want0[6] = {0, 0, 0, 1, 1, 1}, want1[6] = {0, 1, 2, 0, 1, 2};
  bool ok = it.count == 6;
  for (size_t i = 0; ok && i < it.count; i++, quill_ref_bcast_next(&it))
    ok = it.offset[0] == want0[i] && it.offset[1] == want1[i] &&
         it.offset[2] == 0;
  CHECK(ok);
  /* 3 does not broadcast to 2 */
  int64_t d2[1] = {2};
  const quill_type *bad[1] = {quill_type_tensor(ctx, f32, 1, d3)};
  CHECK(!quill_ref_bcast_init(&it, quill_type_tensor(ctx, f32, 1, d2), 1, bad));
  quill_context_destroy(ctx);
}

/* ---- data movement -------------------------------------------------------- */

static void test_shape(void) {
  EXPECT_F(FN("  %r = constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>\n"
              "  %s = identity %r : tensor<2xf32>\n"),
           0, 1, 2);
  EXPECT_F(FN(CST("a", "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]", "tensor<2x3xf32>")
              "  %r = reshape %a : tensor<3x2xf32>\n"),
           0, 1, 2, 3, 4, 5, 6);
  EXPECT_F(FN(CST("a", "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]", "tensor<2x3xf32>")
              "  %r = transpose %a {perm = [1, 0]} : tensor<3x2xf32>\n"),
           0, 1, 4, 2, 5, 3, 6);
  EXPECT_I(FN(CST("a", "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]", "tensor<2x3x2xi8>")
              "  %r = transpose %a {perm = [2, 0, 1]} : tensor<2x2x3xi8>\n"),
           0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11);
  EXPECT_I(FN(CST("a", "[1, 2, 3, 4]", "tensor<2x2xi32>") CST("b", "[5, 6]", "tensor<2x1xi32>")
              "  %r = concat %a, %b {axis = -1} : tensor<2x3xi32>\n"),
           1, 2, 5, 3, 4, 6);
  {
    fixture f;
    eval(&f, FN(CST("a", "[1, 2, 3, 4, 5, 6]", "tensor<2x3xi32>")
                "  %r, %s = split %a {axis = 1} : tensor<2x1xi32>, tensor<2x2xi32>\n"));
    CHECK(expect_i64(&f, 0, I64S(1, 4), 2));
    CHECK(expect_i64(&f, 1, I64S(2, 3, 5, 6), 4));
    finish(&f);
  }
  /* slice: clamping of ends, negative starts and steps */
  EXPECT_I(FN(CST("a", "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]", "tensor<10xi32>")
              "  %r = slice %a {starts = [1], ends = [100], steps = [3]} : tensor<3xi32>\n"),
           1, 4, 7);
  EXPECT_I(FN(CST("a", "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]", "tensor<10xi32>")
              "  %r = slice %a {starts = [-1], ends = [-100], steps = [-2]} : tensor<5xi32>\n"),
           9, 7, 5, 3, 1);
  EXPECT_I(FN(CST("a", "[1, 2, 3, 4, 5, 6]", "tensor<2x3xi32>")
              "  %r = slice %a {starts = [1, 0], ends = [2, 2], axes = [1, 0]} : tensor<2x1xi32>\n"),
           2, 5);
  EXPECT_I(FN(CST("a", "[1, 2, 3]", "tensor<3xi32>")
              "  %r = pad %a {pads = [2, 1]} : tensor<6xi32>\n"),
           0, 0, 1, 2, 3, 0);
  EXPECT_F(FN(CST("a", "[1.0, 2.0]", "tensor<2xf32>")
              "  %r = pad %a {pads = [1, 1], mode = \"constant\", value = 9.5} : tensor<4xf32>\n"),
           0, 9.5, 1, 2, 9.5);
  EXPECT_I(FN(CST("a", "[1, 2, 3]", "tensor<3xi32>")
              "  %r = pad %a {pads = [2, 2], mode = \"reflect\"} : tensor<7xi32>\n"),
           3, 2, 1, 2, 3, 2, 1);
  EXPECT_I(FN(CST("a", "[1, 2, 3, 4]", "tensor<2x2xi32>")
              "  %r = pad %a {pads = [0, 1, 1, 0], mode = \"edge\"} : tensor<3x3xi32>\n"),
           1, 1, 2, 3, 3, 4, 3, 3, 4);
  EXPECT_I(FN(CST("a", "[1, 2, 3, 4]", "tensor<4xi32>")
              "  %r = pad %a {pads = [-1, -2]} : tensor<1xi32>\n"),
           2);
  EXPECT_I(FN(CST("a", "[1, 2, 3, 4, 5, 6]", "tensor<3x2xi32>")
              CST("i", "[2, -3]", "tensor<2xi64>")
              "  %r = gather %a, %i : tensor<2x2xi32>\n"),
           5, 6, 1, 2);
  EXPECT_I(FN(CST("a", "[1, 2, 3, 4, 5, 6]", "tensor<2x3xi32>")
              CST("i", "[-1, 0]", "tensor<2x1xi32>")
              "  %r = gather %a, %i {axis = 1} : tensor<2x2x1xi32>\n"),
           3, 1, 6, 4);
  EXPECT_ERR(FN(CST("a", "[1, 2, 3]", "tensor<3xi32>") CST("i", "[3]", "tensor<1xi64>")
                "  %r = gather %a, %i : tensor<1xi32>\n"),
             QUILL_ERR_INVALID, "gather index 3 is out of range [-3, 3)");
  EXPECT_F(FN(CST("a", "[1.0, 2.0]", "tensor<1x2x1xf32>")
              "  %r = squeeze %a {axes = [0, 2]} : tensor<2xf32>\n"),
           0, 1, 2);
  EXPECT_F(FN(CST("a", "[1.0, 2.0]", "tensor<2xf32>")
              "  %r = unsqueeze %a {axes = [0]} : tensor<1x2xf32>\n"),
           0, 1, 2);
  EXPECT_F(FN(CST("a", "[1.0, 2.0, 3.0, 4.0]", "tensor<2x1x2xf32>")
              "  %r = flatten %a {axis = 1} : tensor<2x2xf32>\n"),
           0, 1, 2, 3, 4);
  EXPECT_ERR(FN(CST("a", "[1.0, 2.0]", "tensor<2xf32>")
                "  %r = reshape %a : tensor<3xf32>\n"),
             QUILL_ERR_INVALID, "element counts differ");
}

/* ---- the table ------------------------------------------------------------ */

static void test_table(void) {
  /* Every elementwise op of ops.def has a kernel (quant ops excepted). */
  for (int opc = 0; opc < QUILL_OP_COUNT; opc++) {
    const quill_op_info *info = quill_opcode_info((quill_opcode)opc);
    if ((info->flags & QUILL_OPF_ELEMENTWISE) && !(info->flags & QUILL_OPF_QUANT)) {
      CHECK(quill_ref_kernels[opc].eval != NULL);
      if (!quill_ref_kernels[opc].eval)
        fprintf(stderr, "  no kernel for '%s'\n", info->mnemonic);
    }
  }
  CHECK(quill_ref_kernels[QUILL_OP_CONSTANT].eval != NULL);
  CHECK(quill_ref_kernels[QUILL_OP_RETURN].eval == NULL);
  /* return is the one op no target evaluates: the generic report. */
  EXPECT_ERR("func @f() -> (tensor<2xf32>) {\n"
             "  %x = constant {value = dense<0.0> : tensor<2xf32>} : tensor<2xf32>\n"
             "  return %x\n}\n",
             QUILL_ERR_UNSUPPORTED, "op 'return' is not supported by target 'reference'");
}

int main(void) {
  test_binary_f32();
  test_binary_int();
  test_compare_where();
  test_unary();
  test_clip();
  test_cast();
  test_half();
  test_int_types();
  test_tensor_helpers();
  test_shape();
  test_table();
  printf("test_ref_kernels: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}

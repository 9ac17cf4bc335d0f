/*
 * test_ref_gemm.c - unit tests of the reference target's f32 GEMM engine
 * (targets/reference/sgemm.c) through the ops that use it: conv2d,
 * conv_transpose2d, matmul and gemm.
 *
 * ONNX's documented Conv example is checked exactly; then random shapes
 * (edges of every micro-tile and cache block: M, N, K around multiples of
 * 8 and 256, transposed operands, batch broadcasting, groups, depthwise,
 * dilations, strides, asymmetric pads) are compared with a naive double
 * precision formula written here, within a tolerance scaled by the sum of
 * |products| (the engine's summation order differs from the naive one).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/reference/ref.h"
#include "test/unit/check.h"
#include "test/unit/ref_op_harness.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return xorshift64(&rng); }
static int64_t rnd_in(int64_t lo, int64_t hi) {
  return xorshift_in(&rng, lo, hi);
}

/* Fill a tensor with random values in [-1, 1]; return them as doubles (as
 * stored, i.e. rounded to the element type). */
static double *fill(quill_tensor *t) {
  size_t n = quill_tensor_num_elements(t);
  double *v = malloc((n ? n : 1) * sizeof *v);
  for (size_t i = 0; i < n; i++) {
    quill_tensor_set_f64(t, i, (double)rnd_in(-1000, 1000) / 1000.0);
    v[i] = quill_tensor_get_f64(t, i);
  }
  return v;
}

/* Compare output 0 with want[i] within tol[i]. */
static bool compare(run *r, const double *want, const double *tol, size_t n,
                    const char *src) {
  if (r->st != QUILL_OK || quill_tensor_num_elements(&r->out[0]) != n) {
    fprintf(stderr, "  status %d '%s'\n%s", (int)r->st, r->diag, src);
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    double got = quill_tensor_get_f64(&r->out[0], i);
    if (!(fabs(got - want[i]) <= tol[i])) {
      fprintf(stderr, "  element %zu: got %.9g, want %.9g (tol %g)\n%s", i,
              got, want[i], tol[i], src);
      return false;
    }
  }
  return true;
}

/* f32 rounding of each of up to K products and partial sums: a few ulps of
 * the sum of magnitudes. */
static double tol_of(double abs_sum, size_t terms) {
  return abs_sum * 1.2e-7 * (double)(terms + 4) + 1e-30;
}

typedef struct text {
  char buf[8192];
  size_t n;
} text;

static void put(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(t->buf + t->n, sizeof t->buf - t->n, fmt, ap);
  va_end(ap);
  if (k > 0 && (size_t)k < sizeof t->buf - t->n)
    t->n += (size_t)k;
}

/* ---- the ONNX Conv example ---------------------------------------------------- */

static void test_conv_onnx_example(void) {
  /* x = 0..24 (5x5), w = ones (3x3), pads 1. */
  static const double want[] = {12, 21, 27,  33,  24,  33, 54,  63,  72,
                                51, 63, 99,  108, 117, 81, 93,  144, 153,
                                162, 111, 72, 111, 117, 123, 84};
  run r;
  CHECK(setup(&r, "func @f(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3x3xf32>) "
                  "-> tensor<1x1x5x5xf32> {\n"
                  "  %y = conv2d %x, %w {pads = [1, 1, 1, 1]} : "
                  "tensor<1x1x5x5xf32>\n  return %y\n}\n"));
  for (int i = 0; i < 25; i++)
    quill_tensor_set_f64(&r.args[0], (size_t)i, i);
  for (int i = 0; i < 9; i++)
    quill_tensor_set_f64(&r.args[1], (size_t)i, 1);
  r.st = quill_ref_eval_op(r.ctx, r.op, r.in, r.out);
  double zero[25] = {0};
  CHECK(compare(&r, want, zero, 25, "onnx conv example"));
  run_free(&r);
}

/* ---- random conv2d --------------------------------------------------------------- */

static void random_conv(bool transpose) {
  size_t group = (size_t)rnd_in(1, 3), Cg = (size_t)rnd_in(1, 5),
         Mg = (size_t)rnd_in(1, 5);
  if (!transpose && rnd() % 3 == 0) { /* depthwise */
    Cg = 1;
    group = (size_t)rnd_in(1, 8);
    Mg = (size_t)rnd_in(1, 2);
  }
  if (rnd() % 6 == 0) /* a K beyond one 256 block */
    Cg = (size_t)rnd_in(30, 70);
  size_t C = group * Cg, M = group * Mg, N = (size_t)rnd_in(1, 2);
  size_t H = (size_t)rnd_in(1, 11), W = (size_t)rnd_in(1, 11);
  size_t kh = (size_t)rnd_in(1, 4), kw = (size_t)rnd_in(1, 4);
  int64_t sh = rnd_in(1, 3), sw = rnd_in(1, 3), dh = rnd_in(1, 2),
          dw = rnd_in(1, 2);
  int64_t p[4] = {rnd_in(0, 2), rnd_in(0, 2), rnd_in(0, 2), rnd_in(0, 2)};
  if (rnd() % 4 == 0)
    p[0] = p[1] = p[2] = p[3] = 0;
  int64_t eh = dh * ((int64_t)kh - 1) + 1, ew = dw * ((int64_t)kw - 1) + 1;
  int64_t OH, OW;
  if (transpose) {
    OH = ((int64_t)H - 1) * sh + eh - p[0] - p[2];
    OW = ((int64_t)W - 1) * sw + ew - p[1] - p[3];
  } else {
    OH = ((int64_t)H + p[0] + p[2] - eh) / sh + 1;
    OW = ((int64_t)W + p[1] + p[3] - ew) / sw + 1;
    if ((int64_t)H + p[0] + p[2] < eh || (int64_t)W + p[1] + p[3] < ew)
      return;
  }
  if (OH < 1 || OW < 1)
    return;
  bool bias = rnd() % 2;
  text t = {{0}, 0};
  if (transpose)
    put(&t, "func @f(%%x: tensor<%zux%zux%zux%zuxf32>, "
            "%%w: tensor<%zux%zux%zux%zuxf32>",
        N, C, H, W, C, Mg, kh, kw);
  else
    put(&t, "func @f(%%x: tensor<%zux%zux%zux%zuxf32>, "
            "%%w: tensor<%zux%zux%zux%zuxf32>",
        N, C, H, W, M, Cg, kh, kw);
  if (bias)
    put(&t, ", %%b: tensor<%zuxf32>", M);
  put(&t, ") -> tensor<%zux%zux%lldx%lldxf32> {\n  %%y = %s %%x, %%w%s "
          "{strides = [%lld, %lld], dilations = [%lld, %lld], group = %zu, "
          "pads = [%lld, %lld, %lld, %lld]} : tensor<%zux%zux%lldx%lldxf32>\n"
          "  return %%y\n}\n",
      N, M, (long long)OH, (long long)OW,
      transpose ? "conv_transpose2d" : "conv2d", bias ? ", %b" : "",
      (long long)sh, (long long)sw, (long long)dh, (long long)dw, group,
      (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3], N,
      M, (long long)OH, (long long)OW);
  run r;
  if (!setup(&r, t.buf)) {
    CHECK(!"setup");
    run_free(&r);
    return;
  }
  double *x = fill(&r.args[0]), *w = fill(&r.args[1]);
  double *b = bias ? fill(&r.args[2]) : NULL;
  size_t ny = N * M * (size_t)OH * (size_t)OW;
  double *want = calloc(ny, sizeof *want), *mag = calloc(ny, sizeof *mag);
  size_t terms = 0;
  /* Naive: every (input pixel, tap) pair that lands on an output. */
  for (size_t n = 0; n < N; n++)
    for (size_t m = 0; m < M; m++) {
      size_t gr = m / Mg;
      for (size_t c = 0; c < Cg; c++)
        for (size_t i = 0; i < kh; i++)
          for (size_t j = 0; j < kw; j++) {
            double wv = transpose
                            ? w[(((gr * Cg + c) * Mg + m % Mg) * kh + i) * kw + j]
                            : w[((m * Cg + c) * kh + i) * kw + j];
            for (int64_t oh = 0; oh < OH; oh++)
              for (int64_t ow = 0; ow < OW; ow++) {
                int64_t ih, iw;
                if (transpose) { /* oh = ih*sh - p0 + i*dh */
                  int64_t u = oh + p[0] - (int64_t)i * dh;
                  int64_t v = ow + p[1] - (int64_t)j * dw;
                  if (u < 0 || v < 0 || u % sh || v % sw)
                    continue;
                  ih = u / sh;
                  iw = v / sw;
                } else {
                  ih = oh * sh - p[0] + (int64_t)i * dh;
                  iw = ow * sw - p[1] + (int64_t)j * dw;
                }
                if (ih < 0 || iw < 0 || ih >= (int64_t)H || iw >= (int64_t)W)
                  continue;
                double xv = x[((n * C + gr * Cg + c) * H + (size_t)ih) * W +
                              (size_t)iw];
                size_t yi = ((n * M + m) * (size_t)OH + (size_t)oh) *
                                (size_t)OW + (size_t)ow;
                want[yi] += xv * wv;
                mag[yi] += fabs(xv * wv);
              }
          }
      terms = Cg * kh * kw;
      if (b)
        for (size_t q = 0; q < (size_t)(OH * OW); q++) {
          size_t yi = (n * M + m) * (size_t)(OH * OW) + q;
          want[yi] += b[m];
          mag[yi] += fabs(b[m]);
        }
    }
  for (size_t i = 0; i < ny; i++)
    mag[i] = tol_of(mag[i], terms);
  r.st = quill_ref_eval_op(r.ctx, r.op, r.in, r.out);
  CHECK(compare(&r, want, mag, ny, t.buf));
  free(x);
  free(w);
  free(b);
  free(want);
  free(mag);
  run_free(&r);
}

/* ---- random matmul and gemm ------------------------------------------------------ */

static size_t pick_dim(void) {
  static const size_t edges[] = {1, 7, 8, 9, 15, 16, 17, 95, 96, 97, 255, 256, 257};
  return rnd() % 2 ? (size_t)rnd_in(1, 40)
                   : edges[rnd() % (sizeof edges / sizeof edges[0])];
}

static void random_gemm(void) {
  size_t M = pick_dim(), N = pick_dim(), K = pick_dim();
  if (M * N * K > 3000000)
    K = 3000000 / (M * N) + 1;
  bool ta = rnd() % 2, tb = rnd() % 2, has_c = rnd() % 2;
  double alpha = rnd() % 2 ? 1.0 : 0.5, beta = rnd() % 2 ? 1.0 : -2.0;
  text t = {{0}, 0};
  put(&t, "func @f(%%a: tensor<%zux%zuxf32>, %%b: tensor<%zux%zuxf32>",
      ta ? K : M, ta ? M : K, tb ? N : K, tb ? K : N);
  if (has_c)
    put(&t, ", %%c: tensor<%zuxf32>", N);
  put(&t, ") -> tensor<%zux%zuxf32> {\n  %%y = gemm %%a, %%b%s {alpha = %.1f, "
          "beta = %.1f, trans_a = %d, trans_b = %d} : tensor<%zux%zuxf32>\n"
          "  return %%y\n}\n",
      M, N, has_c ? ", %c" : "", alpha, beta, (int)ta, (int)tb, M, N);
  run r;
  if (!setup(&r, t.buf)) {
    CHECK(!"setup");
    run_free(&r);
    return;
  }
  double *a = fill(&r.args[0]), *b = fill(&r.args[1]);
  double *c = has_c ? fill(&r.args[2]) : NULL;
  double *want = calloc(M * N, sizeof *want), *tol = calloc(M * N, sizeof *tol);
  for (size_t i = 0; i < M; i++)
    for (size_t j = 0; j < N; j++) {
      double s = 0, mag = 0;
      for (size_t k = 0; k < K; k++) {
        double p = (ta ? a[k * M + i] : a[i * K + k]) *
                   (tb ? b[j * K + k] : b[k * N + j]);
        s += p;
        mag += fabs(p);
      }
      want[i * N + j] = alpha * s + (c ? beta * c[j] : 0);
      tol[i * N + j] = tol_of(mag + (c ? 2 * fabs(c[j]) : 0), K);
    }
  r.st = quill_ref_eval_op(r.ctx, r.op, r.in, r.out);
  CHECK(compare(&r, want, tol, M * N, t.buf));
  free(a);
  free(b);
  free(c);
  free(want);
  free(tol);
  run_free(&r);
}

static void random_matmul(void) {
  size_t B = (size_t)rnd_in(1, 3), M = pick_dim(), N = pick_dim(),
         K = (size_t)rnd_in(1, 300);
  if (B * M * N * K > 3000000)
    M = N = 9;
  bool bcast_a = rnd() % 2; /* a [M,K] against b [B,K,N] */
  text t = {{0}, 0};
  if (bcast_a)
    put(&t, "func @f(%%a: tensor<%zux%zuxf32>, ", M, K);
  else
    put(&t, "func @f(%%a: tensor<%zux%zux%zuxf32>, ", B, M, K);
  put(&t, "%%b: tensor<%zux%zux%zuxf32>) -> tensor<%zux%zux%zuxf32> {\n"
          "  %%y = matmul %%a, %%b : tensor<%zux%zux%zuxf32>\n  return %%y\n}\n",
      B, K, N, B, M, N, B, M, N);
  run r;
  if (!setup(&r, t.buf)) {
    CHECK(!"setup");
    run_free(&r);
    return;
  }
  double *a = fill(&r.args[0]), *b = fill(&r.args[1]);
  double *want = calloc(B * M * N, sizeof *want),
         *tol = calloc(B * M * N, sizeof *tol);
  for (size_t q = 0; q < B; q++)
    for (size_t i = 0; i < M; i++)
      for (size_t j = 0; j < N; j++) {
        double s = 0, mag = 0;
        for (size_t k = 0; k < K; k++) {
          double p = a[(bcast_a ? 0 : q * M * K) + i * K + k] *
                     b[q * K * N + k * N + j];
          s += p;
          mag += fabs(p);
        }
        want[(q * M + i) * N + j] = s;
        tol[(q * M + i) * N + j] = tol_of(mag, K);
      }
  r.st = quill_ref_eval_op(r.ctx, r.op, r.in, r.out);
  CHECK(compare(&r, want, tol, B * M * N, t.buf));
  free(a);
  free(b);
  free(want);
  free(tol);
  run_free(&r);
}

int main(void) {
  test_conv_onnx_example();
  for (int i = 0; i < 300; i++)
    random_conv(false);
  for (int i = 0; i < 150; i++)
    random_conv(true);
  for (int i = 0; i < 120; i++)
    random_gemm();
  for (int i = 0; i < 60; i++)
    random_matmul();
  printf("test_ref_gemm: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}

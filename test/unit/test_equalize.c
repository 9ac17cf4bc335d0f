/*
 * test_equalize.c - the math of `equalize` and `bias-correction` on small
 * graphs with pseudo-random weights (a fixed LCG), checked against values
 * computed here independently of the passes:
 *
 *   pair        conv3x3 -> relu -> conv3x3 (padded): the equalized graph
 *               gives the original output within 1e-5 (relative to the
 *               largest output), and every channel's ranges become
 *               sqrt(r1 r2) of the original weights, on both sides
 *   chain       conv -> relu -> depthwise conv -> relu -> 1x1 conv and
 *               gemm -> relu -> gemm (B [K, N]): output within 1e-5; after
 *               the sweeps each pair's ranges agree within 1e-4
 *   absorb      conv -> relu -> 1x1 conv with high biases, absorb-bias on
 *               an in-memory dataset: the output on every calibration
 *               sample within 1e-5, and the first conv's bias lowered
 *   bias-corr   fake_quant x -> 1x1 conv with 4-bit weights: the
 *               per-channel mean of the output over the data equals the
 *               mean with float weights (same quantized x) within 1e-5
 *               (exact for a 1x1 conv: every input pixel meets every
 *               tap; a wider kernel sees the border less often)
 *
 * The context counts its allocations: nothing stays allocated.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ir/ir.h"
#include "passes/calib_data.h"
#include "passes/pass.h"
#include "targets/reference/ref.h"

/* ---- fixture ---------------------------------------------------------------- */

static size_t live; /* bytes the contexts hold */

static void *count_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  if (nsize == 0) {
    if (ptr)
      live -= osize;
    free(ptr);
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (p)
    live += nsize - (ptr ? osize : 0);
  return p;
}

typedef struct text {
  char *buf;
  size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    t->cap = t->cap ? 2 * t->cap + (size_t)n : 4096;
    t->buf = realloc(t->buf, t->cap);
    if (!t->buf)
      abort(); /* test harness: out of memory */
  }
}

static uint64_t rng = 7;
static double uniform(double lo, double hi) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (hi - lo) * ((double)(rng >> 11) / 9007199254740992.0);
}

/* A constant of n values; channel k of the leading axis (k = i / per) is
 * scaled by spread^(k / (channels - 1)), so the channel ranges differ. */
static void put_const(text *t, const char *name, const char *type, int n,
                      int per, double spread, double off) {
  int ch = n / per;
  put(t, "  %%%s = constant {value = dense<[", name);
  for (int i = 0; i < n; i++) {
    double s = ch > 1 ? pow(spread, (double)(i / per) / (ch - 1)) : 1.0;
    put(t, "%s%.9g", i ? ", " : "", (double)(float)(off + s * uniform(-1, 1)));
  }
  put(t, "]> : %s} : %s\n", type, type);
}

static quill_status run_pipeline(quill_context *ctx, quill_module *m,
                                 const char *pipeline,
                                 quill_calib_dataset *ds) {
  quill_pass_manager *pm = quill_pass_manager_create(ctx);
  quill_status st = quill_pass_manager_parse_pipeline(pm, pipeline);
  if (!st && ds)
    st = quill_pass_manager_set_input(pm, "calibration-data", ds);
  if (!st)
    st = quill_pass_manager_run(pm, m);
  quill_pass_manager_destroy(pm);
  return st;
}

static void fill(quill_tensor *t, double lo, double hi) {
  for (size_t i = 0; i < quill_tensor_num_elements(t); i++)
    quill_tensor_set_f64(t, i, uniform(lo, hi));
}

/* max |a - b| / max |b| */
static double rel_error(const quill_tensor *a, const quill_tensor *b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < quill_tensor_num_elements(b); i++) {
    double x = quill_tensor_get_f64(a, i), y = quill_tensor_get_f64(b, i);
    num = fmax(num, fabs(x - y));
    den = fmax(den, fabs(y));
  }
  return den > 0 ? num / den : num;
}

/* The weight constant of the conv/gemm whose result is named `name`. */
static const quill_attr *weight_of(const quill_graph *g, const char *name,
                                   unsigned operand) {
  QUILL_GRAPH_FOREACH(g, op) {
    const char *n = quill_value_name(quill_op_result(op, 0));
    if (n && strcmp(n, name) == 0 && quill_op_num_operands(op) > operand)
      return quill_value_constant(quill_op_operand(op, operand));
  }
  return NULL;
}

/* Range of output channel c of a [O, ...] weight, or of input channel c
 * (axis 1) when `in`. */
static double range(const quill_attr *w, int64_t c, bool in) {
  quill_type *t = quill_attr_dense_type(w);
  int64_t o = quill_type_dim(t, 0), ci = quill_type_dim(t, 1);
  int64_t inner = quill_type_num_elements(t) / (o * ci);
  double r = 0;
  for (int64_t i = 0; i < quill_type_num_elements(t); i++) {
    int64_t k = in ? (i / inner) % ci : i / (ci * inner);
    if (k == c)
      r = fmax(r, fabs(quill_attr_dense_get_f64(w, (size_t)i)));
  }
  return r;
}

/* Parse src twice, run `pipeline` on one copy, compare both on `nx` random
 * inputs (or the dataset's samples). Returns the optimized copy's context
 * objects through *ref / *opt for further checks (the caller destroys). */
static double compare(quill_context *ctx, const text *src, const char *pipeline,
                      quill_calib_dataset *ds, quill_module **ref,
                      quill_module **opt) {
  *ref = quill_parse_module(ctx, src->buf, src->len, "case", 0);
  *opt = quill_parse_module(ctx, src->buf, src->len, "case", 0);
  CHECK(*ref && *opt);
  if (!*ref || !*opt)
    return INFINITY;
  CHECK(run_pipeline(ctx, *opt, pipeline, ds) == QUILL_OK);
  quill_graph *g0 = quill_module_graph(*ref, 0), *g1 = quill_module_graph(*opt, 0);
  size_t n = ds ? quill_calib_dataset_size(ds) : 4;
  double worst = 0;
  for (size_t s = 0; s < n; s++) {
    quill_tensor x, y0 = {0}, y1 = {0};
    const quill_tensor *in = &x;
    if (ds) {
      in = quill_calib_dataset_sample(ds, s);
    } else {
      CHECK(quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g0, 0)),
                               &x) == QUILL_OK);
      fill(&x, -1, 1);
    }
    CHECK(quill_ref_run(ctx, g0, in, 1, &y0, 1) == QUILL_OK);
    CHECK(quill_ref_run(ctx, g1, in, 1, &y1, 1) == QUILL_OK);
    worst = fmax(worst, rel_error(&y1, &y0));
    quill_tensor_free(ctx, &y0);
    quill_tensor_free(ctx, &y1);
    if (!ds)
      quill_tensor_free(ctx, &x);
  }
  return worst;
}

/* ---- cases ------------------------------------------------------------------ */

static void test_pair(void) {
  quill_context *ctx = quill_context_create(count_alloc, NULL);
  text t = {0};
  put(&t, "func @pair(%%x: tensor<1x3x6x6xf32>) -> tensor<1x4x6x6xf32> {\n");
  put_const(&t, "w1", "tensor<8x3x3x3xf32>", 8 * 27, 27, 50.0, 0);
  put_const(&t, "b1", "tensor<8xf32>", 8, 1, 1.0, 0);
  put_const(&t, "w2", "tensor<4x8x3x3xf32>", 4 * 72, 72, 1.0, 0);
  put_const(&t, "b2", "tensor<4xf32>", 4, 1, 1.0, 0);
  put(&t, "  %%c1 = conv2d %%x, %%w1, %%b1 {pads = [1, 1, 1, 1]} : "
          "tensor<1x8x6x6xf32>\n"
          "  %%r = relu %%c1 : tensor<1x8x6x6xf32>\n"
          "  %%c2 = conv2d %%r, %%w2, %%b2 {pads = [1, 1, 1, 1]} : "
          "tensor<1x4x6x6xf32>\n  return %%c2\n}\n");
  quill_module *ref, *opt;
  double err = compare(ctx, &t, "equalize", NULL, &ref, &opt);
  printf("pair      relative error %.3g\n", err);
  CHECK(err <= 1e-5);
  if (ref && opt) {
    const quill_graph *g0 = quill_module_graph(ref, 0);
    const quill_graph *g1 = quill_module_graph(opt, 0);
    double worst = 0;
    for (int64_t c = 0; c < 8; c++) {
      double r1 = range(weight_of(g0, "c1", 1), c, false);
      double r2 = range(weight_of(g0, "c2", 1), c, true);
      double e = sqrt(r1 * r2);
      double a = range(weight_of(g1, "c1", 1), c, false);
      double b = range(weight_of(g1, "c2", 1), c, true);
      worst = fmax(worst, fmax(fabs(a - e), fabs(b - e)) / e);
    }
    printf("pair      ranges vs sqrt(r1 r2): relative error %.3g\n", worst);
    CHECK(worst <= 1e-6);
  }
  if (ref)
    quill_module_destroy(ref);
  if (opt)
    quill_module_destroy(opt);
  free(t.buf);
  quill_context_destroy(ctx);
}

static void test_chains(void) {
  quill_context *ctx = quill_context_create(count_alloc, NULL);
  text t = {0};
  put(&t, "func @dw(%%x: tensor<1x2x5x5xf32>) -> tensor<1x3x5x5xf32> {\n");
  put_const(&t, "w1", "tensor<6x2x1x1xf32>", 12, 2, 30.0, 0);
  put_const(&t, "w2", "tensor<6x1x3x3xf32>", 54, 9, 0.1, 0);
  put_const(&t, "b2", "tensor<6xf32>", 6, 1, 1.0, 0);
  put_const(&t, "w3", "tensor<3x6x1x1xf32>", 18, 6, 1.0, 0);
  put(&t, "  %%c1 = conv2d %%x, %%w1 : tensor<1x6x5x5xf32>\n"
          "  %%r1 = relu %%c1 : tensor<1x6x5x5xf32>\n"
          "  %%c2 = conv2d %%r1, %%w2, %%b2 {pads = [1, 1, 1, 1], group = 6} : "
          "tensor<1x6x5x5xf32>\n"
          "  %%r2 = relu %%c2 : tensor<1x6x5x5xf32>\n"
          "  %%c3 = conv2d %%r2, %%w3 : tensor<1x3x5x5xf32>\n"
          "  return %%c3\n}\n");
  quill_module *ref, *opt;
  double err = compare(ctx, &t, "equalize", NULL, &ref, &opt);
  printf("dw chain  relative error %.3g\n", err);
  CHECK(err <= 1e-5);
  if (opt) {
    const quill_graph *g1 = quill_module_graph(opt, 0);
    double worst = 0;
    for (int64_t c = 0; c < 6; c++) {
      /* depthwise: input channel c of w2 is its output channel c */
      double a = range(weight_of(g1, "c1", 1), c, false);
      double b = range(weight_of(g1, "c2", 1), c, false);
      double d = range(weight_of(g1, "c3", 1), c, true);
      worst = fmax(worst, fmax(fabs(a - b) / b, fabs(b - d) / d));
    }
    printf("dw chain  pair ranges after the sweeps differ by %.3g\n", worst);
    CHECK(worst <= 1e-4);
  }
  if (ref)
    quill_module_destroy(ref);
  if (opt)
    quill_module_destroy(opt);
  t.len = 0;
  put(&t, "func @fc(%%x: tensor<2x5xf32>) -> tensor<2x3xf32> {\n");
  /* B [K, N]: the output channel is the column; spread along rows of
   * the transposed layout is irrelevant here, the ranges differ anyway */
  put_const(&t, "w1", "tensor<5x7xf32>", 35, 1, 1.0, 0);
  put_const(&t, "c1b", "tensor<7xf32>", 7, 1, 1.0, 0);
  put_const(&t, "w2", "tensor<7x3xf32>", 21, 3, 40.0, 0);
  put(&t, "  %%g1 = gemm %%x, %%w1, %%c1b {alpha = 0.5, beta = 2.0} : "
          "tensor<2x7xf32>\n"
          "  %%r = relu %%g1 : tensor<2x7xf32>\n"
          "  %%g2 = gemm %%r, %%w2 : tensor<2x3xf32>\n  return %%g2\n}\n");
  err = compare(ctx, &t, "equalize", NULL, &ref, &opt);
  printf("gemm pair relative error %.3g\n", err);
  CHECK(err <= 1e-5);
  if (ref)
    quill_module_destroy(ref);
  if (opt)
    quill_module_destroy(opt);
  free(t.buf);
  quill_context_destroy(ctx);
}

/* A dataset of n random [1, c, h, h] samples in [lo, hi). */
static quill_calib_dataset *dataset(quill_context *ctx, quill_module *m,
                                    size_t n, double lo, double hi) {
  quill_graph *g = quill_module_graph(m, 0);
  quill_calib_dataset *ds = quill_calib_dataset_create(ctx, g);
  for (size_t i = 0; ds && i < n; i++) {
    quill_tensor x;
    CHECK(quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g, 0)),
                             &x) == QUILL_OK);
    fill(&x, lo, hi);
    CHECK(quill_calib_dataset_add(ds, &x, 1, NULL) == QUILL_OK);
    quill_tensor_free(ctx, &x);
  }
  return ds;
}

static void test_absorb(void) {
  quill_context *ctx = quill_context_create(count_alloc, NULL);
  text t = {0};
  put(&t, "func @abs(%%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {\n");
  put_const(&t, "w1", "tensor<5x2x3x3xf32>", 90, 18, 4.0, 0);
  put_const(&t, "b1", "tensor<5xf32>", 5, 1, 1.0, 6.0); /* high biases */
  put_const(&t, "w2", "tensor<3x5x1x1xf32>", 15, 5, 1.0, 0);
  put(&t, "  %%c1 = conv2d %%x, %%w1, %%b1 {pads = [1, 1, 1, 1]} : "
          "tensor<1x5x4x4xf32>\n"
          "  %%r = relu %%c1 : tensor<1x5x4x4xf32>\n"
          "  %%c2 = conv2d %%r, %%w2 : tensor<1x3x4x4xf32>\n"
          "  return %%c2\n}\n");
  quill_module *tmp = quill_parse_module(ctx, t.buf, t.len, "case", 0);
  quill_calib_dataset *ds = tmp ? dataset(ctx, tmp, 8, -0.5, 0.5) : NULL;
  CHECK(ds != NULL);
  quill_module *ref, *opt;
  double err = compare(ctx, &t, "equalize{absorb-bias=true}", ds, &ref, &opt);
  printf("absorb    relative error on the data %.3g\n", err);
  CHECK(err <= 1e-5);
  if (ref && opt) {
    const quill_attr *b0 = weight_of(quill_module_graph(ref, 0), "c1", 2);
    const quill_attr *b1 = weight_of(quill_module_graph(opt, 0), "c1", 2);
    double lowered = 0;
    for (size_t c = 0; c < 5; c++)
      lowered = fmax(lowered, quill_attr_dense_get_f64(b0, c) -
                                  quill_attr_dense_get_f64(b1, c));
    printf("absorb    largest bias decrease %.3g\n", lowered);
    CHECK(lowered > 1.0);
  }
  if (ref)
    quill_module_destroy(ref);
  if (opt)
    quill_module_destroy(opt);
  if (tmp)
    quill_module_destroy(tmp);
  quill_calib_dataset_destroy(ds);
  free(t.buf);
  quill_context_destroy(ctx);
}

/* Channel means of the output of g over the dataset. */
static void output_means(quill_context *ctx, const quill_graph *g,
                         quill_calib_dataset *ds, double *mean, int c) {
  for (int k = 0; k < c; k++)
    mean[k] = 0;
  size_t n = quill_calib_dataset_size(ds), per = 0;
  for (size_t s = 0; s < n; s++) {
    quill_tensor y = {0};
    CHECK(quill_ref_run(ctx, g, quill_calib_dataset_sample(ds, s), 1, &y, 1) ==
          QUILL_OK);
    size_t total = quill_tensor_num_elements(&y);
    per = total / (size_t)c;
    for (size_t i = 0; i < total; i++)
      mean[i / per] += quill_tensor_get_f64(&y, i);
    quill_tensor_free(ctx, &y);
  }
  for (int k = 0; k < c; k++)
    mean[k] /= (double)(n * per);
}

static void test_bias_correction(void) {
  quill_context *ctx = quill_context_create(count_alloc, NULL);
  /* quantized: x and W through fake_quants (W 4-bit, scale 1/7 per
   * tensor); float: the same x, W float */
  text q = {0}, f = {0};
  const char *head = "func @bc(%%x: tensor<1x3x5x5xf32>) -> "
                     "tensor<1x4x5x5xf32> {\n";
  put(&q, head);
  put(&f, head);
  uint64_t seed = rng;
  put_const(&q, "w", "tensor<4x3x1x1xf32>", 12, 3, 1.0, 0.1);
  put_const(&q, "b", "tensor<4xf32>", 4, 1, 1.0, 0);
  rng = seed;
  put_const(&f, "w", "tensor<4x3x1x1xf32>", 12, 3, 1.0, 0.1);
  put_const(&f, "b", "tensor<4xf32>", 4, 1, 1.0, 0);
  const char *xq = "  %%xq = fake_quant %%x {role = \"activation\", quant = "
                   "!quant.uniform<i8:f32, 0.01:-20>} : tensor<1x3x5x5xf32>\n";
  put(&q, xq);
  put(&f, xq);
  put(&q, "  %%wq = fake_quant %%w {role = \"weight\", axis = -1, quant = "
          "!quant.uniform<i8<-7:7>:f32, 0.14285715:0>} : "
          "tensor<4x3x1x1xf32>\n"
          "  %%y = conv2d %%xq, %%wq, %%b : tensor<1x4x5x5xf32>\n"
          "  return %%y\n}\n");
  put(&f, "  %%y = conv2d %%xq, %%w, %%b : tensor<1x4x5x5xf32>\n"
          "  return %%y\n}\n");
  quill_module *mq = quill_parse_module(ctx, q.buf, q.len, "q", 0);
  quill_module *mf = quill_parse_module(ctx, f.buf, f.len, "f", 0);
  CHECK(mq && mf);
  quill_calib_dataset *ds = mq ? dataset(ctx, mq, 6, 0.0, 1.0) : NULL;
  if (mq && mf && ds) {
    double m0[4], m1[4], m2[4];
    output_means(ctx, quill_module_graph(mf, 0), ds, m0, 4);
    output_means(ctx, quill_module_graph(mq, 0), ds, m1, 4);
    CHECK(run_pipeline(ctx, mq, "bias-correction", ds) == QUILL_OK);
    output_means(ctx, quill_module_graph(mq, 0), ds, m2, 4);
    double before = 0, after = 0;
    for (int k = 0; k < 4; k++) {
      before = fmax(before, fabs(m1[k] - m0[k]));
      after = fmax(after, fabs(m2[k] - m0[k]));
    }
    printf("bias-corr mean output error per channel %.3g -> %.3g\n", before,
           after);
    CHECK(before > 1e-3);
    CHECK(after <= 1e-5);
  }
  quill_calib_dataset_destroy(ds);
  if (mq)
    quill_module_destroy(mq);
  if (mf)
    quill_module_destroy(mf);
  free(q.buf);
  free(f.buf);
  quill_context_destroy(ctx);
}

int main(void) {
  test_pair();
  test_chains();
  test_absorb();
  test_bias_correction();
  CHECK(live == 0);
  printf("%d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}

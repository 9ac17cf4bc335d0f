/*
 * test_fold_batchnorm.c - numerical tests of the fold-batchnorm pass: the
 * graph computes the same values before and after folding.
 *
 * Each case is .qir text generated here with pseudo-random weights and
 * batch_norm parameters (a fixed LCG). The text is parsed twice: one module
 * stays as it is, the other goes through `fold-batchnorm` (with the
 * verifier after the pass). Both run on the same pseudo-random input through
 * the reference kernels, op by op (quill_ref_eval_op), and the outputs must
 * agree within a relative error of 1e-5 (max |a - b| / max |b|). The test
 * also checks the structure: which cases must lose every batch_norm and
 * which must turn into mul + add.
 *
 * The last case imports the bundled digits model (examples/digits/
 * model.onnx, 5 conv + batch_norm pairs, one with a conv bias, one
 * depthwise), folds it, checks that no batch_norm is left, and compares the
 * logits on the first test images (test_x.npy) before and after.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/onnx/onnx.h"
#include "ir/ir.h"
#include "passes/pass.h"
#include "targets/reference/ref.h"

static int failures;
#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);   \
      failures++;                                                             \
    }                                                                         \
  } while (0)

/* ---- text generation --------------------------------------------------------- */

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

static uint64_t rng_state = 12345;
static double uniform(double lo, double hi) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  double u = (double)(rng_state >> 11) / 9007199254740992.0;
  return lo + (hi - lo) * u;
}

/* `%name = constant {value = dense<[...]> : T} : T` with n values drawn
 * from [lo, hi), rounded to f32. */
static void put_const(text *t, const char *name, const char *type, int n,
                      double lo, double hi) {
  put(t, "  %%%s = constant {value = dense<[", name);
  for (int i = 0; i < n; i++)
    put(t, "%s%.9g", i ? ", " : "", (double)(float)uniform(lo, hi));
  put(t, "]> : %s} : %s\n", type, type);
}

/* The four batch_norm parameters for c channels: %g %bb %m %v. */
static void put_bn_params(text *t, int c) {
  char type[64];
  snprintf(type, sizeof type, "tensor<%dxf32>", c);
  put_const(t, "g", type, c, 0.5, 1.5);
  put_const(t, "bb", type, c, -0.5, 0.5);
  put_const(t, "m", type, c, -0.5, 0.5);
  put_const(t, "v", type, c, 0.1, 2.0);
}

/* ---- graph evaluation, op by op -------------------------------------------- */

typedef struct slot {
  const quill_value *v;
  quill_tensor t;
  bool owned;
} slot;

typedef struct env {
  quill_context *ctx;
  slot *s;
  size_t n, cap;
} env;

static const quill_tensor *lookup(env *e, const quill_value *v) {
  for (size_t i = e->n; i-- > 0;)
    if (e->s[i].v == v)
      return &e->s[i].t;
  return NULL;
}

static void bind(env *e, const quill_value *v, quill_tensor t, bool owned) {
  if (e->n == e->cap) {
    e->cap = e->cap ? 2 * e->cap : 64;
    e->s = realloc(e->s, e->cap * sizeof *e->s);
    if (!e->s)
      abort();
  }
  e->s[e->n++] = (slot){v, t, owned};
}

/* Run graph g (one argument, one result) on `in`; *out gets a copy of the
 * result (free with quill_tensor_free). */
static quill_status run_graph(quill_context *ctx, const quill_graph *g,
                              const quill_tensor *in, quill_tensor *out) {
  env e = {ctx, NULL, 0, 0};
  quill_status st = QUILL_OK;
  bind(&e, quill_graph_arg(g, 0), *in, false);
  for (quill_op *op = quill_graph_first_op(g); op && !st;
       op = quill_op_next(op)) {
    unsigned nin = quill_op_num_operands(op), nout = quill_op_num_results(op);
    if (quill_op_opcode(op) == QUILL_OP_RETURN) {
      const quill_tensor *r = lookup(&e, quill_op_operand(op, 0));
      st = quill_tensor_alloc(ctx, r->type, out);
      if (!st)
        memcpy(out->data, r->data, r->size);
      break;
    }
    if (quill_op_opcode(op) == QUILL_OP_CONSTANT) {
      bind(&e, quill_op_result(op, 0),
           quill_tensor_from_attr(quill_value_constant(quill_op_result(op, 0))),
           false);
      continue;
    }
    quill_tensor ins[8], outs[4];
    if (nin > 8 || nout > 4)
      return QUILL_ERR_UNSUPPORTED;
    for (unsigned i = 0; i < nin; i++)
      ins[i] = *lookup(&e, quill_op_operand(op, i));
    st = quill_ref_outputs_alloc(ctx, op, outs);
    if (!st)
      st = quill_ref_eval_op(ctx, op, ins, outs);
    for (unsigned i = 0; i < nout; i++)
      bind(&e, quill_op_result(op, i), outs[i], true);
  }
  for (size_t i = 0; i < e.n; i++)
    if (e.s[i].owned)
      quill_tensor_free(ctx, &e.s[i].t);
  free(e.s);
  return st;
}

/* max |a - b| / max |b| */
static double rel_error(const quill_tensor *a, const quill_tensor *b) {
  double num = 0, den = 0;
  size_t n = quill_tensor_num_elements(b);
  for (size_t i = 0; i < n; i++) {
    double x = quill_tensor_get_f64(a, i), y = quill_tensor_get_f64(b, i);
    num = fmax(num, fabs(x - y));
    den = fmax(den, fabs(y));
  }
  return den > 0 ? num / den : num;
}

static unsigned count_ops(const quill_graph *g, quill_opcode opc) {
  unsigned n = 0;
  QUILL_GRAPH_FOREACH(g, op)
  if (quill_op_opcode(op) == opc)
    n++;
  return n;
}

static quill_status fold(quill_context *ctx, quill_module *m) {
  quill_pass_manager *pm = quill_pass_manager_create(ctx);
  quill_status st = quill_pass_manager_parse_pipeline(pm, "fold-batchnorm");
  if (!st)
    st = quill_pass_manager_run(pm, m);
  quill_pass_manager_destroy(pm);
  return st;
}

/* Fill a tensor with values from [lo, hi). */
static void fill(quill_tensor *t, double lo, double hi) {
  for (size_t i = 0; i < quill_tensor_num_elements(t); i++)
    quill_tensor_set_f64(t, i, uniform(lo, hi));
}

/* EXPECT_DEPTHWISE: the batch_norm of a 4-D value that cannot fold
 * becomes one more conv2d (1x1 depthwise), no mul or add of its own. */
enum { EXPECT_FOLD, EXPECT_DEPTHWISE };

/* Parse `src` twice, fold one copy, compare both on a random input. */
static void check_case(const char *name, const text *src, int expect) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_module *ref = quill_parse_module(ctx, src->buf, src->len, name, 0);
  quill_module *opt = quill_parse_module(ctx, src->buf, src->len, name, 0);
  CHECK(ref && opt);
  if (!ref || !opt) {
    fprintf(stderr, "%s: parse failed:\n%s\n", name, src->buf);
    goto done;
  }
  CHECK(quill_verify_module(ref) == QUILL_OK);
  CHECK(fold(ctx, opt) == QUILL_OK);
  quill_graph *g0 = quill_module_graph(ref, 0), *g1 = quill_module_graph(opt, 0);
  CHECK(count_ops(g0, QUILL_OP_BATCH_NORM) > 0);
  CHECK(count_ops(g1, QUILL_OP_BATCH_NORM) == 0);
  if (expect == EXPECT_FOLD)
    CHECK(count_ops(g1, QUILL_OP_MUL) == 0 && count_ops(g1, QUILL_OP_ADD) == 0);
  else
    CHECK(count_ops(g1, QUILL_OP_MUL) == count_ops(g0, QUILL_OP_MUL) &&
          count_ops(g1, QUILL_OP_ADD) == count_ops(g0, QUILL_OP_ADD) &&
          count_ops(g1, QUILL_OP_CONV2D) == count_ops(g0, QUILL_OP_CONV2D) + 1);
  quill_tensor x, y0, y1;
  CHECK(quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g0, 0)), &x) ==
        QUILL_OK);
  fill(&x, -1.0, 1.0);
  CHECK(run_graph(ctx, g0, &x, &y0) == QUILL_OK);
  CHECK(run_graph(ctx, g1, &x, &y1) == QUILL_OK);
  double err = rel_error(&y1, &y0);
  printf("%-24s relative error %.3g\n", name, err);
  CHECK(err <= 1e-5);
  quill_tensor_free(ctx, &x);
  quill_tensor_free(ctx, &y0);
  quill_tensor_free(ctx, &y1);
done:
  if (ref)
    quill_module_destroy(ref);
  if (opt)
    quill_module_destroy(opt);
  quill_context_destroy(ctx);
}

/* ---- cases ------------------------------------------------------------------- */

/* conv2d x[1,cin,h,h] w[cout,cin/g,k,k] (+bias) + batch_norm [+ extra use] */
static void conv_case(const char *name, int cin, int cout, int group, int k,
                      int h, int stride, bool bias, bool two_uses) {
  text t = {0};
  int oh = (h + 2 - k) / stride + 1; /* pads 1 */
  char wt[64], xt[64], yt[64], bt[64];
  snprintf(xt, sizeof xt, "tensor<1x%dx%dx%dxf32>", cin, h, h);
  snprintf(wt, sizeof wt, "tensor<%dx%dx%dx%dxf32>", cout, cin / group, k, k);
  snprintf(yt, sizeof yt, "tensor<1x%dx%dx%dxf32>", cout, oh, oh);
  snprintf(bt, sizeof bt, "tensor<%dxf32>", cout);
  put(&t, "func @%s(%%x: %s) -> %s {\n", name, xt, yt);
  put_const(&t, "w", wt, cout * (cin / group) * k * k, -1.0, 1.0);
  if (bias)
    put_const(&t, "b", bt, cout, -1.0, 1.0);
  put_bn_params(&t, cout);
  put(&t, "  %%c = conv2d %%x, %%w%s {strides = [%d, %d], pads = [1, 1, 1, 1], "
          "group = %d} : %s\n",
      bias ? ", %b" : "", stride, stride, group, yt);
  put(&t, "  %%y = batch_norm %%c, %%g, %%bb, %%m, %%v : %s\n", yt);
  if (two_uses) {
    put(&t, "  %%z = add %%y, %%c : %s\n  return %%z\n}\n", yt);
  } else {
    put(&t, "  return %%y\n}\n");
  }
  check_case(name, &t, two_uses ? EXPECT_DEPTHWISE : EXPECT_FOLD);
  free(t.buf);
}

/* conv_transpose2d x[1,cin,h,h] w[cin,cout/g,k,k], stride 2, + batch_norm */
static void conv_transpose_case(const char *name, int cin, int cout, int group,
                                int k, int h, bool bias) {
  text t = {0};
  int oh = (h - 1) * 2 + k;
  char wt[64], xt[64], yt[64], bt[64];
  snprintf(xt, sizeof xt, "tensor<1x%dx%dx%dxf32>", cin, h, h);
  snprintf(wt, sizeof wt, "tensor<%dx%dx%dx%dxf32>", cin, cout / group, k, k);
  snprintf(yt, sizeof yt, "tensor<1x%dx%dx%dxf32>", cout, oh, oh);
  snprintf(bt, sizeof bt, "tensor<%dxf32>", cout);
  put(&t, "func @%s(%%x: %s) -> %s {\n", name, xt, yt);
  put_const(&t, "w", wt, cin * (cout / group) * k * k, -1.0, 1.0);
  if (bias)
    put_const(&t, "b", bt, cout, -1.0, 1.0);
  put_bn_params(&t, cout);
  put(&t, "  %%c = conv_transpose2d %%x, %%w%s {strides = [2, 2], group = %d} "
          ": %s\n",
      bias ? ", %b" : "", group, yt);
  put(&t, "  %%y = batch_norm %%c, %%g, %%bb, %%m, %%v : %s\n", yt);
  put(&t, "  return %%y\n}\n");
  check_case(name, &t, EXPECT_FOLD);
  free(t.buf);
}

/* gemm a[M,K] b (trans_b: [N,K], else [K,N]) [c: none, [N], or [M,N]] */
static void gemm_case(const char *name, int mm, int kk, int nn, bool trans_b,
                      int c_rank) {
  text t = {0};
  char at[64], bt[64], ct[64], yt[64];
  snprintf(at, sizeof at, "tensor<%dx%dxf32>", mm, kk);
  snprintf(bt, sizeof bt, "tensor<%dx%dxf32>", trans_b ? nn : kk,
           trans_b ? kk : nn);
  if (c_rank == 2)
    snprintf(ct, sizeof ct, "tensor<%dx%dxf32>", mm, nn);
  else
    snprintf(ct, sizeof ct, "tensor<%dxf32>", nn);
  snprintf(yt, sizeof yt, "tensor<%dx%dxf32>", mm, nn);
  put(&t, "func @%s(%%a: %s) -> %s {\n", name, at, yt);
  put_const(&t, "w", bt, nn * kk, -1.0, 1.0);
  if (c_rank)
    put_const(&t, "c", ct, c_rank == 2 ? mm * nn : nn, -1.0, 1.0);
  put_bn_params(&t, nn);
  put(&t, "  %%p = gemm %%a, %%w%s {alpha = 0.75, beta = 1.25, trans_b = %d} "
          ": %s\n",
      c_rank ? ", %c" : "", trans_b ? 1 : 0, yt);
  put(&t, "  %%y = batch_norm %%p, %%g, %%bb, %%m, %%v : %s\n", yt);
  put(&t, "  return %%y\n}\n");
  check_case(name, &t, EXPECT_FOLD);
  free(t.buf);
}

/* batch_norm of the graph argument: a 1x1 depthwise conv. */
static void arg_case(void) {
  text t = {0};
  put(&t, "func @bn_arg(%%x: tensor<2x5x3x3xf32>) -> tensor<2x5x3x3xf32> {\n");
  put_bn_params(&t, 5);
  put(&t, "  %%y = batch_norm %%x, %%g, %%bb, %%m, %%v {epsilon = 0.001} : "
          "tensor<2x5x3x3xf32>\n  return %%y\n}\n");
  check_case("bn_arg", &t, EXPECT_DEPTHWISE);
  free(t.buf);
}

/* ---- the digits model ------------------------------------------------------ */

/* Read the first `n` samples of a float32 C-order .npy of shape
 * [N, 1, 16, 16] into dst (n * 256 floats). */
static bool read_npy_f32(const char *path, float *dst, size_t n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return false;
  unsigned char pre[10];
  bool ok = fread(pre, 1, 10, f) == 10 && memcmp(pre, "\x93NUMPY", 6) == 0 &&
            pre[6] == 1;
  size_t hlen = ok ? (size_t)pre[8] | (size_t)pre[9] << 8 : 0;
  char hdr[512] = {0};
  ok = ok && hlen < sizeof hdr && fread(hdr, 1, hlen, f) == hlen &&
       strstr(hdr, "'descr': '<f4'") && strstr(hdr, "'fortran_order': False") &&
       strstr(hdr, ", 1, 16, 16)");
  ok = ok && fread(dst, sizeof(float), n * 256, f) == n * 256;
  fclose(f);
  return ok;
}

static void digits_case(void) {
  enum { N = 8 };
  const char *model = QUILL_SOURCE_DIR "/examples/digits/model.onnx";
  const char *data = QUILL_SOURCE_DIR "/examples/digits/test_x.npy";
  static float xs[N * 256];
  CHECK(read_npy_f32(data, xs, N));
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_module *ref = quill_onnx_import_file(ctx, model, NULL);
  quill_module *opt = quill_onnx_import_file(ctx, model, NULL);
  CHECK(ref && opt);
  if (!ref || !opt)
    goto done;
  CHECK(fold(ctx, opt) == QUILL_OK);
  quill_graph *g0 = quill_module_graph(ref, 0), *g1 = quill_module_graph(opt, 0);
  CHECK(count_ops(g0, QUILL_OP_BATCH_NORM) == 5);
  CHECK(count_ops(g1, QUILL_OP_BATCH_NORM) == 0);
  CHECK(count_ops(g1, QUILL_OP_CONV2D) == 5);
  CHECK(count_ops(g1, QUILL_OP_MUL) == 0);
  double worst = 0;
  bool same_pred = true;
  for (int s = 0; s < N; s++) {
    quill_tensor x, y0, y1;
    CHECK(quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g0, 0)),
                             &x) == QUILL_OK);
    memcpy(x.data, xs + s * 256, 256 * sizeof(float));
    CHECK(run_graph(ctx, g0, &x, &y0) == QUILL_OK);
    CHECK(run_graph(ctx, g1, &x, &y1) == QUILL_OK);
    worst = fmax(worst, rel_error(&y1, &y0));
    size_t a0 = 0, a1 = 0;
    for (size_t i = 1; i < 10; i++) {
      if (quill_tensor_get_f64(&y0, i) > quill_tensor_get_f64(&y0, a0))
        a0 = i;
      if (quill_tensor_get_f64(&y1, i) > quill_tensor_get_f64(&y1, a1))
        a1 = i;
    }
    same_pred &= a0 == a1;
    quill_tensor_free(ctx, &x);
    quill_tensor_free(ctx, &y0);
    quill_tensor_free(ctx, &y1);
  }
  printf("%-24s relative error %.3g over %d test images\n", "digits", worst, N);
  CHECK(worst <= 1e-5);
  CHECK(same_pred);
done:
  if (ref)
    quill_module_destroy(ref);
  if (opt)
    quill_module_destroy(opt);
  quill_context_destroy(ctx);
}

int main(void) {
  conv_case("conv_bias", 3, 8, 1, 3, 6, 1, true, false);
  conv_case("conv_nobias_stride2", 3, 8, 1, 3, 7, 2, false, false);
  conv_case("conv_grouped", 4, 6, 2, 3, 5, 1, false, false);
  conv_case("conv_depthwise", 4, 4, 4, 3, 6, 2, true, false);
  conv_case("conv_two_uses", 3, 4, 1, 3, 4, 1, true, true);
  conv_transpose_case("convt_bias", 3, 5, 1, 3, 3, true);
  conv_transpose_case("convt_grouped", 4, 6, 2, 2, 3, false);
  conv_transpose_case("convt_grouped_bias", 6, 9, 3, 3, 2, true);
  gemm_case("gemm_trans_b", 3, 7, 5, true, 1);
  gemm_case("gemm_no_trans", 3, 7, 5, false, 0);
  gemm_case("gemm_c_matrix", 4, 6, 3, true, 2);
  gemm_case("gemm_no_trans_c", 2, 5, 4, false, 1);
  arg_case();
  digits_case();
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  return failures != 0;
}

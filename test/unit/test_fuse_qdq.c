/*
 * test_fuse_qdq.c - numerical tests of the fuse-qdq pass: small graphs in
 * the reference quantized form (dequantize -> float op -> quantize) run in
 * the reference interpreter (quill_ref_run) before and after the pass, on
 * the same pseudo-random inputs, and their quantized outputs are compared
 * as integers.
 *
 * Each case is .qir text generated here with pseudo-random quantized
 * weights, scales and zero points (a fixed LCG), for three numerics:
 *
 *   none         no backend: ONNX semantics (half_even, f32 requantization)
 *   tflite-int8  fixed point, tflite rounding (gemmlowp)
 *   x86-vnni     f32 requantization, half_even
 *
 * The reference form's quantize ops carry the same rounding as the backend
 * (as the `quantize` pass writes them). After the pass no float op may read
 * a dequantized value (everything fused) and the integer graph must verify.
 * The outputs may differ by at most 1 LSB (the reference form rounds a
 * float value once, the integer form rounds an exact integer once, with a
 * differently rounded scale; average pooling rounds an exact tie where the
 * float sum lands on either side). Cases marked `exact` (the elementwise
 * ops whose float requantization is defined as the reference form's
 * dequantize -> op -> quantize, and the ops that only move values) must
 * agree bit for bit under f32 requantization. The distribution of the
 * differences of every case is printed.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- text generation ----------------------------------------------------- */

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
    t->cap = t->cap ? 2 * t->cap + (size_t)n : 8192;
    t->buf = realloc(t->buf, t->cap);
    if (!t->buf)
      abort(); /* test harness: out of memory */
  }
}

static uint64_t rng_state = 4242;
static double uniform(double lo, double hi) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  double u = (double)(rng_state >> 11) / 9007199254740992.0;
  return lo + (hi - lo) * u;
}
static int irand(int lo, int hi) { /* [lo, hi] */
  return lo + (int)floor(uniform(0, hi - lo + 1));
}

/* The rounding the reference form's quantize ops use (the backend's). */
static const char *g_round_attr = "";

/* A per-tensor i8 type with a random scale around `s` and zero point. */
static void qtype(char *buf, size_t n, double s, int zp) {
  snprintf(buf, n, "!quant.uniform<i8:f32, %.9g:%d>", (double)(float)s, zp);
}

/* `%name = quantize %x` then `%nameD = dequantize %name`. */
static void put_qdq(text *t, const char *name, const char *x,
                    const char *shape, const char *q) {
  put(t, "  %%%s = quantize %%%s%s : tensor<%sx%s>\n", name, x, g_round_attr,
      shape, q);
  put(t, "  %%%sD = dequantize %%%s : tensor<%sxf32>\n", name, name, shape);
}

/* A quantized i8 constant (dequantized as %nameD): per channel along axis
 * 0 if `per_channel`, narrow range [-127, 127], zero point 0. Writes the
 * scales to s_out (n0 entries, or 1). */
static void put_weight(text *t, const char *name, const int *dims, int rank,
                       bool per_channel, double *s_out) {
  char shape[64] = "";
  int total = 1;
  for (int d = 0; d < rank; d++) {
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%d",
             d ? "x" : "", dims[d]);
    total *= dims[d];
  }
  char q[4096];
  int nsc = per_channel ? dims[0] : 1;
  int len = snprintf(q, sizeof q, "!quant.uniform<i8<-127:127>:f32%s",
                     per_channel ? ":0, {" : ", ");
  for (int c = 0; c < nsc; c++) {
    s_out[c] = (double)(float)uniform(0.002, 0.02);
    len += snprintf(q + len, sizeof q - (size_t)len, "%s%.9g:0",
                    c ? ", " : "", s_out[c]);
  }
  snprintf(q + len, sizeof q - (size_t)len, "%s>", per_channel ? "}" : "");
  put(t, "  %%%s = constant {value = dense<[", name);
  for (int i = 0; i < total; i++)
    put(t, "%s%d", i ? ", " : "", irand(-127, 127));
  put(t, "]> : tensor<%sx%s>} : tensor<%sx%s>\n", shape, q, shape, q);
  put(t, "  %%%sD = dequantize %%%s : tensor<%sxf32>\n", name, name, shape);
}

/* An i32 bias constant with scales s_x * s_w[c] (dequantized as %nameD). */
static void put_bias(text *t, const char *name, int n, double s_x,
                     const double *s_w, int nsw) {
  char q[4096];
  int len = snprintf(q, sizeof q, "!quant.uniform<i32:f32:0, {");
  for (int c = 0; c < n; c++)
    len += snprintf(q + len, sizeof q - (size_t)len, "%s%.9g:0", c ? ", " : "",
                    (double)((float)s_x * (float)s_w[nsw == 1 ? 0 : c]));
  snprintf(q + len, sizeof q - (size_t)len, "}>");
  put(t, "  %%%s = constant {value = dense<[", name);
  for (int i = 0; i < n; i++)
    put(t, "%s%d", i ? ", " : "", irand(-3000, 3000));
  put(t, "]> : tensor<%dx%s>} : tensor<%dx%s>\n", n, q, n, q);
  put(t, "  %%%sD = dequantize %%%s : tensor<%dxf32>\n", name, name, n);
}

/* ---- the cases ----------------------------------------------------------- */

typedef struct gcase {
  const char *name;
  bool exact; /* bit-exact under f32 requantization */
  void (*gen)(text *t, int variant);
  int variants;
} gcase;

/* conv2d: variant 0 per-channel + i32 bias + relu, 1 float bias, 2
 * depthwise, 3 strided per-tensor weights, clip activation. */
static void gen_conv(text *t, int v) {
  int c = 4, h = 9, w = 9, m = v == 2 ? 4 : 6, k = 3;
  int group = v == 2 ? c : 1, stride = v == 3 ? 2 : 1;
  int oh = (h + 2 - k) / stride + 1, ow = (w + 2 - k) / stride + 1;
  double sx = uniform(0.01, 0.05), sy = uniform(0.02, 0.2), sw[16];
  int zx = irand(-20, 20), zy = irand(-128, -60);
  char qx[96], qy[96], xs[32], ys[32];
  qtype(qx, sizeof qx, sx, zx);
  qtype(qy, sizeof qy, sy, zy);
  snprintf(xs, sizeof xs, "1x%dx%dx%d", c, h, w);
  snprintf(ys, sizeof ys, "1x%dx%dx%d", m, oh, ow);
  put(t, "func @f(%%x: tensor<%sxf32>) -> tensor<%sx%s> {\n", xs, ys, qy);
  put_qdq(t, "xq", "x", xs, qx);
  int wd[4] = {m, c / group, k, k};
  put_weight(t, "w", wd, 4, v != 3, sw);
  const char *bias = "";
  if (v == 0 || v == 2) {
    put_bias(t, "b", m, (double)(float)sx, sw, v != 3 ? m : 1);
    bias = ", %bD";
  } else if (v == 1) {
    put(t, "  %%bD = constant {value = dense<[");
    for (int i = 0; i < m; i++)
      put(t, "%s%.6g", i ? ", " : "", uniform(-0.5, 0.5));
    put(t, "]> : tensor<%dxf32>} : tensor<%dxf32>\n", m, m);
    bias = ", %bD";
  }
  const char *act = v == 0   ? ", activation = \"relu\""
                    : v == 3 ? ", activation = \"clip\", activation_min = "
                               "-0.5, activation_max = 1.5"
                             : "";
  put(t, "  %%c = conv2d %%xqD, %%wD%s {strides = [%d, %d], pads = [1, 1, 1, "
         "1], group = %d%s} : tensor<%sxf32>\n",
      bias, stride, stride, group, act, ys);
  put(t, "  %%y = quantize %%c%s : tensor<%sx%s>\n  return %%y\n}\n",
      g_round_attr, ys, qy);
}

/* gemm: variant 0 trans_b with bias and relu, 1 no trans_b, no bias. */
static void gen_gemm(text *t, int v) {
  int mm = 3, kk = 24, n = 10;
  double sx = uniform(0.01, 0.05), sy = uniform(0.05, 0.3), sw[16];
  int zx = irand(-20, 20), zy = irand(-30, 30);
  char qx[96], qy[96], xs[32], ys[32];
  qtype(qx, sizeof qx, sx, zx);
  qtype(qy, sizeof qy, sy, zy);
  snprintf(xs, sizeof xs, "%dx%d", mm, kk);
  snprintf(ys, sizeof ys, "%dx%d", mm, n);
  put(t, "func @f(%%x: tensor<%sxf32>) -> tensor<%sx%s> {\n", xs, ys, qy);
  put_qdq(t, "xq", "x", xs, qx);
  int wd[2] = {v == 0 ? n : kk, v == 0 ? kk : n};
  put_weight(t, "w", wd, 2, v == 0, sw);
  if (v == 0) {
    put_bias(t, "b", n, (double)(float)sx, sw, n);
    put(t, "  %%c = gemm %%xqD, %%wD, %%bD {trans_b = 1, activation = "
           "\"relu\"} : tensor<%sxf32>\n",
        ys);
  } else
    put(t, "  %%c = gemm %%xqD, %%wD : tensor<%sxf32>\n", ys);
  put(t, "  %%y = quantize %%c%s : tensor<%sx%s>\n  return %%y\n}\n",
      g_round_attr, ys, qy);
}

/* matmul [2,3,16] x [16,8] + float bias [8] */
static void gen_matmul(text *t, int v) {
  (void)v;
  double sx = uniform(0.01, 0.05), sy = uniform(0.05, 0.3), sw[16];
  int zx = irand(-20, 20), zy = irand(-30, 30);
  char qx[96], qy[96];
  qtype(qx, sizeof qx, sx, zx);
  qtype(qy, sizeof qy, sy, zy);
  put(t, "func @f(%%x: tensor<2x3x16xf32>) -> tensor<2x3x8x%s> {\n", qy);
  put_qdq(t, "xq", "x", "2x3x16", qx);
  int wd[2] = {16, 8};
  put_weight(t, "w", wd, 2, false, sw);
  put(t, "  %%bD = constant {value = dense<[");
  for (int i = 0; i < 8; i++)
    put(t, "%s%.6g", i ? ", " : "", uniform(-0.5, 0.5));
  put(t, "]> : tensor<8xf32>} : tensor<8xf32>\n");
  put(t, "  %%m = matmul %%xqD, %%wD : tensor<2x3x8xf32>\n");
  put(t, "  %%c = add %%m, %%bD : tensor<2x3x8xf32>\n");
  put(t, "  %%y = quantize %%c%s : tensor<2x3x8x%s>\n  return %%y\n}\n",
      g_round_attr, qy);
}

/* add / mul of two quantized inputs, broadcast [4,1,6] with [5,1] */
static void gen_binary(text *t, int v) {
  bool mul = v >= 2;
  double sa = uniform(0.01, 0.05), sb = uniform(0.01, 0.05);
  double sy = mul ? uniform(0.0005, 0.003) : uniform(0.02, 0.1);
  char qa[96], qb[96], qy[96];
  qtype(qa, sizeof qa, sa, irand(-30, 30));
  qtype(qb, sizeof qb, sb, irand(-30, 30));
  qtype(qy, sizeof qy, sy, irand(-30, 30));
  put(t, "func @f(%%a: tensor<4x1x6xf32>, %%b: tensor<5x1xf32>) -> "
         "tensor<4x5x6x%s> {\n",
      qy);
  put_qdq(t, "aq", "a", "4x1x6", qa);
  put_qdq(t, "bq", "b", "5x1", qb);
  put(t, "  %%c = %s %%aqD, %%bqD%s : tensor<4x5x6xf32>\n", mul ? "mul" : "add",
      v % 2 ? " {activation = \"relu\"}" : "");
  put(t, "  %%y = quantize %%c%s : tensor<4x5x6x%s>\n  return %%y\n}\n",
      g_round_attr, qy);
}

/* unary ops as lut */
static const char *const lut_ops[] = {"sigmoid", "tanh", "hard_swish",
                                      "leaky_relu", "gelu", "exp"};
static void gen_lut(text *t, int v) {
  double sx = uniform(0.02, 0.05), sy = uniform(0.005, 0.03);
  char qx[96], qy[96];
  qtype(qx, sizeof qx, sx, irand(-10, 10));
  qtype(qy, sizeof qy, sy, irand(-128, 0));
  put(t, "func @f(%%x: tensor<2x40xf32>) -> tensor<2x40x%s> {\n", qy);
  put_qdq(t, "xq", "x", "2x40", qx);
  put(t, "  %%c = %s %%xqD : tensor<2x40xf32>\n", lut_ops[v]);
  put(t, "  %%y = quantize %%c%s : tensor<2x40x%s>\n  return %%y\n}\n",
      g_round_attr, qy);
}

/* pools: 0 maxpool same params, 1 maxpool new params (requantize), 2
 * avgpool same params, 3 global_avgpool new params */
static void gen_pool(text *t, int v) {
  double sx = uniform(0.02, 0.05);
  int zx = irand(-20, 20);
  char qx[96], qy[96];
  qtype(qx, sizeof qx, sx, zx);
  if (v == 1 || v == 3)
    qtype(qy, sizeof qy, uniform(0.01, 0.05), irand(-20, 20));
  else
    snprintf(qy, sizeof qy, "%s", qx);
  const char *ys = v == 3 ? "1x3x1x1" : "1x3x4x4";
  put(t, "func @f(%%x: tensor<1x3x8x8xf32>) -> tensor<%sx%s> {\n", ys, qy);
  put_qdq(t, "xq", "x", "1x3x8x8", qx);
  if (v == 3)
    put(t, "  %%c = global_avgpool %%xqD : tensor<%sxf32>\n", ys);
  else
    put(t, "  %%c = %s %%xqD {kernel_shape = [2, 2], strides = [2, 2]} : "
           "tensor<%sxf32>\n",
        v == 2 ? "avgpool" : "maxpool", ys);
  put(t, "  %%y = quantize %%c%s : tensor<%sx%s>\n  return %%y\n}\n",
      g_round_attr, ys, qy);
}

/* data movement: 0 reshape + transpose + pad chain, 1 concat of different
 * params, 2 quantize(dequantize) with new params */
static void gen_data(text *t, int v) {
  char qa[96], qb[96], qy[96];
  qtype(qa, sizeof qa, uniform(0.02, 0.05), irand(-20, 20));
  qtype(qb, sizeof qb, uniform(0.02, 0.05), irand(-20, 20));
  qtype(qy, sizeof qy, uniform(0.02, 0.05), irand(-20, 20));
  if (v == 0) {
    put(t, "func @f(%%x: tensor<2x6xf32>) -> tensor<5x4x%s> {\n", qa);
    put_qdq(t, "xq", "x", "2x6", qa);
    put(t, "  %%r = reshape %%xqD : tensor<3x4xf32>\n");
    put_qdq(t, "rq", "r", "3x4", qa);
    put(t, "  %%p = pad %%rqD {pads = [1, 0, 1, 0]} : tensor<5x4xf32>\n");
    put(t, "  %%y = quantize %%p%s : tensor<5x4x%s>\n  return %%y\n}\n",
        g_round_attr, qa);
  } else if (v == 1) {
    put(t, "func @f(%%a: tensor<2x3xf32>, %%b: tensor<2x5xf32>) -> "
           "tensor<2x8x%s> {\n",
        qy);
    put_qdq(t, "aq", "a", "2x3", qa);
    put_qdq(t, "bq", "b", "2x5", qb);
    put(t, "  %%c = concat %%aqD, %%bqD {axis = 1} : tensor<2x8xf32>\n");
    put(t, "  %%y = quantize %%c%s : tensor<2x8x%s>\n  return %%y\n}\n",
        g_round_attr, qy);
  } else {
    put(t, "func @f(%%x: tensor<64xf32>) -> tensor<64x%s> {\n", qy);
    put_qdq(t, "xq", "x", "64", qa);
    put(t, "  %%y = quantize %%xqD%s : tensor<64x%s>\n  return %%y\n}\n",
        g_round_attr, qy);
  }
}

static const gcase cases[] = {
    {"conv2d", false, gen_conv, 4},   {"gemm", false, gen_gemm, 2},
    {"matmul+add", false, gen_matmul, 1}, {"add/mul", true, gen_binary, 4},
    {"lut", true, gen_lut, 6},        {"pool", false, gen_pool, 4},
    {"data", true, gen_data, 3},
};

/* ---- running ------------------------------------------------------------- */

static char diag[1024];
static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  (void)ud;
  (void)loc;
  if (sev == QUILL_DIAG_ERROR)
    snprintf(diag, sizeof diag, "%s", msg);
}

/* No op other than the quantization ops reads a dequantized value. */
static bool all_fused(const quill_graph *g) {
  QUILL_GRAPH_FOREACH(g, op) {
    if (quill_op_has_flag(op, QUILL_OPF_QUANT) ||
        quill_op_opcode(op) == QUILL_OP_RETURN)
      continue;
    for (unsigned i = 0; i < quill_op_num_operands(op); i++) {
      quill_op *d = quill_value_def(quill_op_operand(op, i));
      if (d && quill_op_opcode(d) == QUILL_OP_DEQUANTIZE) {
        fprintf(stderr, "  unfused '%s'\n", quill_op_name(op));
        return false;
      }
    }
  }
  return true;
}

typedef struct config {
  const char *label, *pipeline, *round_attr;
  bool float_requant;
} config;

static const config configs[] = {
    {"none", "fuse-qdq", "", true},
    {"tflite-int8", "fuse-qdq{backend=tflite-int8}", " {rounding = \"tflite\"}",
     false},
    {"x86-vnni", "fuse-qdq{backend=x86-vnni}", "", true},
};

/* Run one generated graph under one config on `samples` random inputs;
 * add the |difference| counts to hist[0..2] (2: more). */
static void run_case(const gcase *c, int variant, const config *cfg,
                     int samples, long *hist) {
  text t = {0};
  g_round_attr = cfg->round_attr;
  c->gen(&t, variant);
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, capture, NULL);
  diag[0] = 0;
  quill_module *ref = quill_parse_module(ctx, t.buf, t.len, "case.qir", 0);
  quill_module *fused = quill_parse_module(ctx, t.buf, t.len, "case.qir", 0);
  quill_pass_manager *pm = quill_pass_manager_create(ctx);
  bool ok = ref && fused && quill_verify_module(ref) == QUILL_OK &&
            quill_pass_manager_parse_pipeline(pm, cfg->pipeline) == QUILL_OK &&
            quill_pass_manager_run(pm, fused) == QUILL_OK;
  if (!ok)
    fprintf(stderr, "%s/%d [%s]: %s\n%s", c->name, variant, cfg->label, diag,
            t.buf);
  CHECK(ok);
  quill_pass_manager_destroy(pm);
  if (ok) {
    const quill_graph *gr = quill_module_graph(ref, 0);
    const quill_graph *gf = quill_module_graph(fused, 0);
    CHECK(all_fused(gf));
    unsigned nin = quill_graph_num_args(gr);
    quill_tensor in[2], out_r, out_f;
    for (int s = 0; s < samples && ok; s++) {
      for (unsigned i = 0; i < nin; i++) {
        quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(gr, i)),
                           &in[i]);
        size_t n = quill_tensor_num_elements(&in[i]);
        double range = uniform(1.0, 6.0);
        for (size_t k = 0; k < n; k++)
          quill_tensor_set_f64(&in[i], k, uniform(-range, range));
      }
      ok = quill_ref_run(ctx, gr, in, nin, &out_r, 1) == QUILL_OK &&
           quill_ref_run(ctx, gf, in, nin, &out_f, 1) == QUILL_OK;
      if (!ok)
        fprintf(stderr, "%s/%d [%s]: run failed: %s\n", c->name, variant,
                cfg->label, diag);
      CHECK(ok);
      for (size_t k = 0; ok && k < quill_tensor_num_elements(&out_r); k++) {
        int64_t d = llabs(quill_tensor_get_i64(&out_r, k) -
                          quill_tensor_get_i64(&out_f, k));
        hist[d > 2 ? 2 : d]++;
      }
      if (ok) {
        quill_tensor_free(ctx, &out_r);
        quill_tensor_free(ctx, &out_f);
      }
      quill_ref_tensors_free(ctx, in, nin);
    }
  }
  if (ref)
    quill_module_destroy(ref);
  if (fused)
    quill_module_destroy(fused);
  quill_context_destroy(ctx);
  free(t.buf);
}

int main(void) {
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
    for (int v = 0; v < cases[ci].variants; v++)
      for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++) {
        const config *cfg = &configs[k];
        long hist[3] = {0, 0, 0};
        for (int rep = 0; rep < 8; rep++) /* new random params each time */
          run_case(&cases[ci], v, cfg, 6, hist);
        long total = hist[0] + hist[1] + hist[2];
        printf("%-10s %d [%-11s] %6ld values: %6ld exact, %4ld off by 1 "
               "(%.3f%%), %ld off by more\n",
               cases[ci].name, v, cfg->label, total, hist[0], hist[1],
               total ? 100.0 * (double)hist[1] / (double)total : 0.0, hist[2]);
        CHECK(total > 0);
        CHECK(hist[2] == 0);
        if (cases[ci].exact && cfg->float_requant)
          CHECK(hist[1] == 0);
      }
  printf("test_fuse_qdq: %d failures\n", failures);
  return failures ? 1 : 0;
}

/*
 * ref_kernels.c - benchmark of the reference target's conv2d / qconv2d /
 * matmul kernels (`bench-ref-kernels`, not a test).
 *
 * Each case is one op built from .qir text whose operands are graph
 * arguments, filled with random data and evaluated through
 * quill_ref_eval_op, exactly as the interpreter runs it. The cases are the
 * conv layers of ResNet-18 at batch 1 (224x224 input) plus a depthwise
 * layer and a few GEMMs; every case is run once to warm up and then
 * repeated until at least --min-time seconds have passed. Printed per case:
 * milliseconds per call and GFLOP/s (2 * multiply-adds / time; for the
 * integer ops "GOP/s" of the same count), the best of --rounds rounds
 * (the machine is shared: the minimum is the least disturbed). The
 * closing lines sum
 * count * time over the ResNet-18 layers (`xN` in the table is how often a
 * layer occurs in the network), the time all of ResNet-18's convolutions
 * take in one inference.
 *
 *   bench-ref-kernels [--float|--int] [--min-time S] [--rounds R] [FILTER]
 *
 * FILTER keeps only the cases whose name contains it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "targets/reference/ref.h"

typedef struct conv_case {
  const char *name;
  int C, H, W, M, k, stride, pad, group;
  int count; /* occurrences in ResNet-18 (0: not part of it) */
} conv_case;

static const conv_case convs[] = {
    {"stem 7x7/2 3->64 @224", 3, 224, 224, 64, 7, 2, 3, 1, 1},
    {"3x3 64->64 @56", 64, 56, 56, 64, 3, 1, 1, 1, 4},
    {"3x3/2 64->128 @56", 64, 56, 56, 128, 3, 2, 1, 1, 1},
    {"3x3 128->128 @28", 128, 28, 28, 128, 3, 1, 1, 1, 3},
    {"3x3/2 128->256 @28", 128, 28, 28, 256, 3, 2, 1, 1, 1},
    {"3x3 256->256 @14", 256, 14, 14, 256, 3, 1, 1, 1, 3},
    {"3x3/2 256->512 @14", 256, 14, 14, 512, 3, 2, 1, 1, 1},
    {"3x3 512->512 @7", 512, 7, 7, 512, 3, 1, 1, 1, 3},
    {"1x1/2 64->128 @56", 64, 56, 56, 128, 1, 2, 0, 1, 1},
    {"1x1/2 128->256 @28", 128, 28, 28, 256, 1, 2, 0, 1, 1},
    {"1x1/2 256->512 @14", 256, 14, 14, 512, 1, 2, 0, 1, 1},
    {"1x1 256->64 @56", 256, 56, 56, 64, 1, 1, 0, 1, 0},
    {"dw 3x3 128 @56", 128, 56, 56, 128, 3, 1, 1, 128, 0},
    {"dw 3x3/2 256 @28", 256, 28, 28, 256, 3, 2, 1, 256, 0},
};

typedef struct gemm_case {
  const char *name;
  int M, N, K;
  int count;
  bool trans_b; /* float only: gemm {trans_b = 1}, as exported FC layers */
} gemm_case;

static const gemm_case gemms[] = {
    {"fc 1x512 * 512x1000", 1, 1000, 512, 1, false},
    {"fc 1x512 * (1000x512)^T", 1, 1000, 512, 0, true},
    {"gemm 256^3", 256, 256, 256, 0, false},
    {"gemm 512^3", 512, 512, 512, 0, false},
    {"gemm 1024^3", 1024, 1024, 1024, 0, false},
    {"gemm 196x768x3072", 196, 3072, 768, 0, false},
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}

static void fill_random(quill_tensor *t) {
  size_t n = quill_tensor_num_elements(t);
  quill_type_kind k = quill_tensor_elem_kind(t);
  for (size_t i = 0; i < n; i++) {
    if (k == QUILL_TYPE_F32)
      quill_tensor_set_f64(t, i, (double)(rnd() % 2001) / 1000.0 - 1.0);
    else if (k == QUILL_TYPE_I32)
      quill_tensor_set_i64(t, i, (int64_t)(rnd() % 2001) - 1000);
    else
      quill_tensor_set_i64(t, i, (int64_t)(rnd() & 0xff)); /* wraps for i8 */
  }
}

/* Parse src, evaluate its one op on random arguments; returns the seconds
 * per call, the best of `rounds` rounds of at least min_time each
 * (negative on failure). */
static double run_case(const char *src, double min_time, int rounds) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_module *m = quill_parse_module(ctx, src, strlen(src), "bench.qir", 0);
  double result = -1;
  quill_tensor in[4] = {{0}}, out[1] = {{0}};
  unsigned nin = 0;
  if (!m)
    goto done;
  quill_graph *g = quill_module_graph(m, 0);
  quill_op *op = NULL;
  QUILL_GRAPH_FOREACH(g, o) {
    op = o;
    break;
  }
  nin = quill_graph_num_args(g);
  for (unsigned i = 0; i < nin; i++) {
    if (quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g, i)),
                           &in[i]))
      goto done;
    fill_random(&in[i]);
  }
  if (quill_ref_outputs_alloc(ctx, op, out))
    goto done;
  if (quill_ref_eval_op(ctx, op, in, out) == QUILL_OK) {
    for (int r = 0; r < rounds; r++) {
      unsigned reps = 0;
      double t0 = now(), t;
      do {
        quill_ref_eval_op(ctx, op, in, out);
        reps++;
        t = now() - t0;
      } while (t < min_time);
      if (result < 0 || t / reps < result)
        result = t / reps;
    }
  }
  quill_ref_outputs_free(ctx, op, out);
done:
  quill_ref_tensors_free(ctx, in, nin);
  if (m)
    quill_module_destroy(m);
  quill_context_destroy(ctx);
  return result;
}

static int out_dim(int in, int k, int s, int p) {
  return (in + 2 * p - k) / s + 1;
}

static void conv_src(char *buf, size_t n, const conv_case *c, bool integer) {
  int OH = out_dim(c->H, c->k, c->stride, c->pad);
  int OW = out_dim(c->W, c->k, c->stride, c->pad);
  const char *xt = integer ? "!quant.uniform<u8:f32, 0.02:128>" : "f32";
  const char *wt = integer ? "!quant.uniform<i8:f32, 0.01:0>" : "f32";
  const char *bt = integer ? "i32" : "f32";
  const char *yt = integer ? "!quant.uniform<u8:f32, 0.05:128>" : "f32";
  snprintf(buf, n,
           "func @f(%%x: tensor<1x%dx%dx%dx%s>, %%w: tensor<%dx%dx%dx%dx%s>, "
           "%%b: tensor<%dx%s>) -> tensor<1x%dx%dx%dx%s> {\n"
           "  %%y = %s %%x, %%w, %%b {strides = [%d, %d], pads = [%d, %d, %d, "
           "%d], group = %d} : tensor<1x%dx%dx%dx%s>\n"
           "  return %%y\n}\n",
           c->C, c->H, c->W, xt, c->M, c->C / c->group, c->k, c->k, wt, c->M,
           bt, c->M, OH, OW, yt, integer ? "qconv2d" : "conv2d", c->stride,
           c->stride, c->pad, c->pad, c->pad, c->pad, c->group, c->M, OH, OW,
           yt);
}

static void gemm_src(char *buf, size_t n, const gemm_case *c, bool integer) {
  if (c->trans_b) {
    snprintf(buf, n,
             "func @f(%%a: tensor<%dx%dxf32>, %%b: tensor<%dx%dxf32>) -> "
             "tensor<%dx%dxf32> {\n"
             "  %%y = gemm %%a, %%b {trans_b = 1} : tensor<%dx%dxf32>\n"
             "  return %%y\n}\n",
             c->M, c->K, c->N, c->K, c->M, c->N, c->M, c->N);
    return;
  }
  const char *at = integer ? "!quant.uniform<u8:f32, 0.02:128>" : "f32";
  const char *bt = integer ? "!quant.uniform<i8:f32, 0.01:0>" : "f32";
  const char *yt = integer ? "!quant.uniform<u8:f32, 0.05:128>" : "f32";
  snprintf(buf, n,
           "func @f(%%a: tensor<%dx%dx%s>, %%b: tensor<%dx%dx%s>) -> "
           "tensor<%dx%dx%s> {\n"
           "  %%y = %s %%a, %%b : tensor<%dx%dx%s>\n"
           "  return %%y\n}\n",
           c->M, c->K, at, c->K, c->N, bt, c->M, c->N, yt,
           integer ? "qmatmul" : "matmul", c->M, c->N, yt);
}

int main(int argc, char **argv) {
  bool do_float = true, do_int = true;
  double min_time = 0.2;
  int rounds = 3;
  const char *filter = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--float"))
      do_int = false;
    else if (!strcmp(argv[i], "--int"))
      do_float = false;
    else if (!strcmp(argv[i], "--min-time") && i + 1 < argc)
      min_time = atof(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
    else if (argv[i][0] == '-') {
      fprintf(stderr,
              "usage: %s [--float|--int] [--min-time S] [--rounds R] "
              "[FILTER]\n",
              argv[0]);
      return 2;
    } else
      filter = argv[i];
  }
  char src[2048];
  for (int integer = 0; integer < 2; integer++) {
    if (integer ? !do_int : !do_float)
      continue;
    const char *unit = integer ? "GOP/s" : "GFLOP/s";
    printf("%s\n%-24s %4s %10s %9s\n", integer ? "== qconv2d / qmatmul "
                                                 "(u8 x i8 -> u8)"
                                               : "== conv2d / matmul (f32)",
           "case", "xN", "ms", unit);
    double net_time = 0, net_flop = 0;
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
      const conv_case *c = &convs[i];
      if (filter && !strstr(c->name, filter))
        continue;
      conv_src(src, sizeof src, c, integer);
      double OH = out_dim(c->H, c->k, c->stride, c->pad);
      double OW = out_dim(c->W, c->k, c->stride, c->pad);
      double flop = 2.0 * c->M * (c->C / c->group) * c->k * c->k * OH * OW;
      double t = run_case(src, min_time, rounds);
      if (t < 0) {
        printf("%-24s %4d %10s\n", c->name, c->count, "failed");
        continue;
      }
      printf("%-24s %4d %10.3f %9.2f\n", c->name, c->count, t * 1e3,
             flop / t * 1e-9);
      net_time += c->count * t;
      net_flop += c->count * flop;
      fflush(stdout);
    }
    for (size_t i = 0; i < sizeof gemms / sizeof gemms[0]; i++) {
      const gemm_case *c = &gemms[i];
      if ((filter && !strstr(c->name, filter)) || (integer && c->trans_b))
        continue;
      gemm_src(src, sizeof src, c, integer);
      double flop = 2.0 * c->M * c->N * c->K;
      double t = run_case(src, min_time, rounds);
      if (t < 0) {
        printf("%-24s %4d %10s\n", c->name, c->count, "failed");
        continue;
      }
      printf("%-24s %4d %10.3f %9.2f\n", c->name, c->count, t * 1e3,
             flop / t * 1e-9);
      net_time += c->count * t;
      net_flop += c->count * flop;
      fflush(stdout);
    }
    if (net_time > 0)
      printf("ResNet-18 convs+fc (sum of xN * ms): %.1f ms, %.2f GFLOP, "
             "%.2f %s\n\n",
             net_time * 1e3, net_flop * 1e-9, net_flop / net_time * 1e-9,
             unit);
  }
  return 0;
}

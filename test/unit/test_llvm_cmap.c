/*
 * test_llvm_cmap.c - depthwise 1x1 qconv2d of 8-bit values (a folded
 * BatchNorm), which targets/llvm/conv_cmap.c fits per channel to
 * (u * M + K) >> S on the x86 paths, against the reference interpreter, bit
 * for bit, for every input byte of every channel: each channel's input
 * takes all 256 values (pixel p of channel c holds (97 p + 37 c) mod 256).
 *
 * The conv sits between two identity 1x1 convs (weights the identity at
 * scale 1, result scale and zero point their input's: they copy exactly)
 * so that it reads and writes NHWC buffers, as in a network. Channels get
 * random weights (zeros, negatives, +-127 included), weight scales and
 * biases; some channels' slopes are far below or above 1 (most inputs
 * clamp, or one result), and one case's result scale makes every slope
 * large. Cases cover u8 and i8 on each side, the float and the fixed-point
 * requantization (half_even: the fit; TFLite's: a fallback, the double
 * rounding half away from zero is not one floor of a line), a clamp inside
 * the storage range (act_min / act_max), stride 2, and channel counts that
 * leave tails of every vector and group width.
 *
 * Every case runs on every path the library says the host has (the
 * portable one and the Arm paths keep the depthwise kernels), 1 and 2
 * threads.
 */
#include "llvm_harness.h"

typedef struct ccase {
  unsigned c, h, w, stride;
  const char *xs, *ys; /* storage: "u8" or "i8" */
  double xscale, yscale;
  int xzp, yzp;
  const char *fixed; /* multiplier / shift with this rounding, or NULL */
  int act_min, act_max; /* storage values; INT32_MIN / MAX: none */
  unsigned seed;
} ccase;

#define NONE_LO INT32_MIN
#define NONE_HI INT32_MAX

static const ccase ccases[] = {
    {40, 16, 16, 1, "u8", "u8", 0.0333, 0.021, 120, 0, NULL, NONE_LO, NONE_HI,
     1},
    {100, 16, 16, 1, "u8", "u8", 0.0333, 0.02, 120, 0, NULL, NONE_LO, NONE_HI,
     2},
    {8, 17, 16, 1, "i8", "i8", 0.05, 0.03, -3, 4, NULL, NONE_LO, NONE_HI, 3},
    {200, 16, 16, 1, "i8", "u8", 0.02, 0.04, 10, 7, NULL, 7, NONE_HI, 4},
    {64, 16, 16, 1, "u8", "i8", 0.03, 0.03, 128, -10, "half_even", NONE_LO,
     NONE_HI, 5},
    {33, 33, 33, 2, "u8", "u8", 0.02, 0.05, 100, 20, NULL, 20, 200, 6},
    {72, 16, 17, 1, "u8", "u8", 0.04, 0.0004, 7, 3, NULL, NONE_LO, NONE_HI,
     7},
    /* TFLite's two roundings, each half away from zero: a result that is
     * not one floor of a line (the fit leaves it to conv_dw.c) */
    {130, 16, 16, 1, "i8", "i8", 0.01, 0.02, 0, 0, "tflite", -100, 90, 8},
};

static size_t hex_bytes(char *out, size_t size, const void *data, size_t n) {
  const unsigned char *b = data;
  size_t k = (size_t)snprintf(out, size, "\"0x");
  for (size_t i = 0; i < n && k + 3 < size; i++)
    k += (size_t)snprintf(out + k, size - k, "%02X", b[i]);
  k += (size_t)snprintf(out + k, size - k, "\"");
  return k;
}

/* The identity C x C x 1 x 1 weights at scale 1 (hex). */
static void identity_weights(char *out, size_t size, unsigned C) {
  signed char *w = calloc((size_t)C * C, 1);
  for (unsigned i = 0; i < C; i++)
    w[(size_t)i * C + i] = 1;
  hex_bytes(out, size, w, (size_t)C * C);
  free(w);
}

static char *qir_text(const ccase *q) {
  size_t size = 1u << 20, n = 0;
  char *t = malloc(size), *id = malloc(size);
  rng_state = 0x9E3779B97F4A7C15ull ^ ((uint64_t)q->seed * 0x100000001B3ull);
  unsigned C = q->c, OH = (q->h - 1) / q->stride + 1,
           OW = (q->w - 1) / q->stride + 1;
  char qx[128], qy[128];
  snprintf(qx, sizeof qx, "!quant.uniform<%s:f32, %.9g:%d>", q->xs, q->xscale,
           q->xzp);
  snprintf(qy, sizeof qy, "!quant.uniform<%s:f32, %.9g:%d>", q->ys, q->yscale,
           q->yzp);
  signed char *w = malloc(C);
  int32_t *b = malloc(C * sizeof *b);
  double *ws = malloc(C * sizeof *ws);
  int32_t *mult = malloc(C * sizeof *mult);
  int *sh = malloc(C * sizeof *sh);
  for (unsigned c = 0; c < C; c++) {
    int64_t r = rnd_int(0, 9);
    w[c] = r == 0 ? 0 : r == 1 ? 127 : r == 2 ? -127 : (signed char)rnd_int(-127, 127);
    /* slopes: mostly around 1, some tiny, some huge */
    double slope = r == 3 ? 0.003 : r == 4 ? 40.0 : 0.2 + 3.0 * rnd_unit();
    ws[c] = slope * q->yscale / (q->xscale * (w[c] ? abs(w[c]) : 1));
    /* the result at the middle input: inside the range, or past it */
    double mid = (double)rnd_int(-80, 330);
    double k = ws[c] * q->xscale / q->yscale;
    b[c] = (int32_t)((mid - 128 * k * w[c]) / k);
    mult[c] = (int32_t)rnd_int(1 << 30, 0x7fffffff);
    sh[c] = (int)rnd_int(-12, 1);
  }
  n += (size_t)snprintf(t + n, size - n,
                        "func @f(%%x: tensor<1x%ux%ux%ux%s>) -> "
                        "tensor<1x%ux%ux%ux%s> {\n",
                        C, q->h, q->w, qx, C, OH, OW, qy);
  identity_weights(id, size, C);
  n += (size_t)snprintf(
      t + n, size - n,
      "  %%i = constant {value = dense<%s> : tensor<%ux%ux1x1x!quant.uniform<"
      "i8:f32, 1.0:0>>} : tensor<%ux%ux1x1x!quant.uniform<i8:f32, 1.0:0>>\n"
      "  %%a = qconv2d %%x, %%i : tensor<1x%ux%ux%ux%s>\n",
      id, C, C, C, C, C, q->h, q->w, qx);
  n += (size_t)snprintf(t + n, size - n,
                        "  %%wd = constant {value = dense<");
  n += hex_bytes(t + n, size - n, w, C);
  n += (size_t)snprintf(t + n, size - n,
                        "> : tensor<%ux1x1x1x!quant.uniform<i8:f32:0, {", C);
  char wt[1 << 16];
  size_t m = 0;
  for (unsigned c = 0; c < C; c++)
    m += (size_t)snprintf(wt + m, sizeof wt - m, "%s%.9g:0", c ? ", " : "",
                          ws[c]);
  n += (size_t)snprintf(t + n, size - n,
                        "%s}>>} : tensor<%ux1x1x1x!quant.uniform<i8:f32:0, "
                        "{%s}>>\n  %%bd = constant {value = dense<",
                        wt, C, wt);
  n += hex_bytes(t + n, size - n, b, C * sizeof *b);
  n += (size_t)snprintf(t + n, size - n,
                        "> : tensor<%uxi32>} : tensor<%uxi32>\n"
                        "  %%d = qconv2d %%a, %%wd, %%bd {group = %u, "
                        "strides = [%u, %u]",
                        C, C, C, q->stride, q->stride);
  if (q->fixed) {
    n += (size_t)snprintf(t + n, size - n,
                          ", rounding = \"%s\", multiplier = [", q->fixed);
    for (unsigned c = 0; c < C; c++)
      n += (size_t)snprintf(t + n, size - n, "%s%d", c ? ", " : "", mult[c]);
    n += (size_t)snprintf(t + n, size - n, "], shift = [");
    for (unsigned c = 0; c < C; c++)
      n += (size_t)snprintf(t + n, size - n, "%s%d", c ? ", " : "", sh[c]);
    n += (size_t)snprintf(t + n, size - n, "]");
  } else {
    n += (size_t)snprintf(t + n, size - n, ", rounding = \"half_even\"");
  }
  if (q->act_min != NONE_LO)
    n += (size_t)snprintf(t + n, size - n, ", act_min = %d", q->act_min);
  if (q->act_max != NONE_HI)
    n += (size_t)snprintf(t + n, size - n, ", act_max = %d", q->act_max);
  n += (size_t)snprintf(t + n, size - n, "} : tensor<1x%ux%ux%ux%s>\n", C, OH,
                        OW, qy);
  /* the second identity, at the result's scale */
  snprintf(t + n, size - n,
           "  %%j = constant {value = dense<%s> : tensor<%ux%ux1x1x!quant."
           "uniform<i8:f32, 1.0:0>>} : tensor<%ux%ux1x1x!quant.uniform<i8:"
           "f32, 1.0:0>>\n"
           "  %%o = qconv2d %%d, %%j : tensor<1x%ux%ux%ux%s>\n"
           "  return %%o\n}\n",
           id, C, C, C, C, C, OH, OW, qy);
  free(id);
  free(w);
  free(b);
  free(ws);
  free(mult);
  free(sh);
  return t;
}

static bool run_ccase(const ccase *q, quill_llvm_isa isa, unsigned threads) {
  char *text = qir_text(q);
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, diag_capture, (void *)1);
  bool ok = false;
  quill_module *m = quill_parse_module(ctx, text, strlen(text), "cmap", 0);
  quill_tensor in, ref, got;
  memset(&in, 0, sizeof in);
  memset(&ref, 0, sizeof ref);
  memset(&got, 0, sizeof got);
  if (!m || quill_verify_module(m)) {
    fprintf(stderr, "case %u does not parse/verify\n", q->seed);
    goto done;
  }
  quill_graph *g = quill_module_graph(m, 0);
  quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g, 0)), &in);
  bool xs = !strcmp(q->xs, "i8");
  for (unsigned c = 0; c < q->c; c++)
    for (unsigned h = 0; h < q->h; h++)
      for (unsigned w = 0; w < q->w; w++) {
        /* the pixels the conv reads (stride) number 0, 1, ... */
        unsigned ow = (q->w - 1) / q->stride + 1;
        unsigned p = h / q->stride * ow + w / q->stride;
        int64_t u = (97 * (int64_t)p + 37 * (int64_t)c) & 255;
        quill_tensor_set_i64(&in, ((size_t)c * q->h + h) * q->w + w,
                             xs ? u - 128 : u);
      }
  if (quill_ref_run(ctx, g, &in, 1, &ref, 1)) {
    fprintf(stderr, "case %u: reference failed\n", q->seed);
    goto done;
  }
  if (!jit_on_path(ctx, g, &in, 1, &got, 1, isa, threads, NULL)) {
    fprintf(stderr, "case %u: the jit failed\n", q->seed);
    goto done;
  }
  ok = ref.size == got.size && !memcmp(ref.data, got.data, ref.size);
  if (!ok) {
    size_t ne = quill_tensor_num_elements(&ref), e = first_diff(&ref, &got);
    fprintf(stderr, "case %u (isa %s, %u threads): element %zu: ref %g, llvm "
                    "%g\n",
            q->seed, quill_llvm_isa_name(isa), threads, e,
            e < ne ? quill_tensor_get_f64(&ref, e) : 0.0,
            e < ne ? quill_tensor_get_f64(&got, e) : 0.0);
  }
done:
  quill_ref_tensors_free(ctx, &in, 1);
  quill_ref_tensors_free(ctx, &ref, 1);
  quill_ref_tensors_free(ctx, &got, 1);
  if (m)
    quill_module_destroy(m);
  quill_context_destroy(ctx);
  free(text);
  return ok;
}

int main(void) {
  (void)run_case; /* the harness's random-input runner: not used here */
  quill_llvm_isa isas[QUILL_LLVM_ISA_COUNT];
  unsigned nisa = host_isas(isas);
  CHECK(nisa >= 1);
  for (size_t i = 0; i < sizeof ccases / sizeof ccases[0]; i++) {
    for (unsigned k = 0; k < nisa; k++)
      CHECK(run_ccase(&ccases[i], isas[k], 1));
    CHECK(run_ccase(&ccases[i], isas[nisa - 1], 2));
  }
  printf("test_llvm_cmap: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}

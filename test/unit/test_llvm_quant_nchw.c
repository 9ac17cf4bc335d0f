/*
 * test_llvm_quant_nchw.c - the model input's quantize (f32 NCHW -> 8 bits
 * NHWC, targets/llvm/quant_nchw.c on the x86 paths, 16 pixels a step on
 * zmm and 8 on ymm, the generic map on the portable one) against the
 * reference interpreter, bit for bit, on inputs
 * chosen to hit its edges: exact ties (k + 1/2) s, NaN, +-inf, huge and
 * tiny values, denormals, negative zero, values next to the kernel's
 * clamp bound s 2^13, and random ones.
 *
 * The quantized tensor is read through a qconv2d whose weights are the
 * identity (scale 1, the result's scale and zero point the input's, so
 * its requantization multiplies by exactly 1): the quantize stores NHWC
 * because a conv reads it, and the conv's result is the quantized tensor.
 * With pads the conv reads a haloed buffer (a row at a time in the
 * kernel); without, whole images. Shapes have pixel counts that are not
 * multiples of 16 and images longer than a task's chunk.
 *
 * Every case runs on every path the library says the host has, and on
 * the zmm paths also without AVX512-VBMI (vpshufb + vpermd) and without
 * AVX512-DQ (vmaxps / vminps for vrangeps).
 */
#include <float.h>

#include "llvm_harness.h"

typedef struct qcase {
  unsigned n, c, h, w;
  bool pad;           /* 3x3 conv with pads 1 (haloed input) */
  const char *store;  /* "u8", "i8", "i8<-127:127>", ... */
  double scale;
  int zp;
} qcase;

static const qcase qcases[] = {
    {1, 3, 7, 13, false, "u8", 0.0186, 114},    /* 91 pixels */
    {1, 3, 5, 37, true, "u8", 0.0186, 114},     /* rows of 37 */
    {2, 3, 50, 47, false, "i8", 0.017, -5},     /* 2350 px: two chunks */
    {1, 1, 9, 21, false, "u8", 0.00392156863, 0},
    {2, 1, 6, 19, true, "i8", 0.5, 3},
    {1, 2, 4, 9, false, "u8", 3.0, 255},
    {1, 4, 11, 17, true, "i8", 1e-5, -128},
    {1, 3, 3, 3, false, "i8<-127:127>", 0.03, 2},
    {1, 3, 16, 16, false, "u8<10:200>", 7e4, 100},
    {1, 3, 1, 1, true, "u8", 0.25, 128},
};

/* Value i of the input (scale s): a mix of the edges and random values. */
static float input_value(size_t i, float s) {
  switch (rnd() % 16) {
  case 0: { /* an exact tie in the reals: (k + 1/2) s, rounded to float */
    float k = (float)rnd_int(-300, 300);
    return (k + 0.5f) * s;
  }
  case 1: { /* the float next to a tie */
    float v = ((float)rnd_int(-300, 300) + 0.5f) * s;
    return nextafterf(v, (rnd() & 1) ? INFINITY : -INFINITY);
  }
  case 2: {
    static const float sp[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-40f,
                               -1e-42f, FLT_MIN, 1e30f, -1e30f, FLT_MAX,
                               -FLT_MAX, 3e38f, 1e10f, -1e10f};
    return sp[rnd() % (sizeof sp / sizeof sp[0])];
  }
  case 3:
    return (rnd() & 1) ? INFINITY : -INFINITY;
  case 4:
    return (rnd() & 1) ? NAN : -NAN;
  case 5: { /* around the kernel's bound s 2^13 */
    float b = s * 8192.0f;
    float v = (rnd() & 1) ? b : nextafterf(b, (rnd() & 1) ? 0 : INFINITY);
    return (rnd() & 1) ? v : -v;
  }
  case 6: /* integers times s */
    return (float)rnd_int(-400, 400) * s;
  default: /* uniform over a little more than the 8-bit range */
    (void)i;
    return (float)((rnd_unit() * 2 - 1) * 300.0 * s);
  }
}

static void qir_text(const qcase *q, char *buf, size_t size) {
  char qt[160], wt[160], wdata[4096];
  snprintf(qt, sizeof qt, "!quant.uniform<%s:f32, %.17g:%d>", q->store,
           q->scale, q->zp);
  snprintf(wt, sizeof wt, "%ux%ux%ux%ux!quant.uniform<i8:f32, 1.0:0>", q->c,
           q->c, q->pad ? 3 : 1, q->pad ? 3 : 1);
  /* identity: w[o][i][center] = (o == i) */
  size_t n = 0;
  unsigned k = q->pad ? 3 : 1;
  n += (size_t)snprintf(wdata + n, sizeof wdata - n, "[");
  for (unsigned o = 0; o < q->c; o++)
    for (unsigned i = 0; i < q->c; i++)
      for (unsigned t = 0; t < k * k; t++)
        n += (size_t)snprintf(wdata + n, sizeof wdata - n, "%s%d",
                              o + i + t ? ", " : "",
                              o == i && t == (k * k) / 2);
  snprintf(wdata + n, sizeof wdata - n, "]");
  snprintf(buf, size,
           "func @f(%%x: tensor<%ux%ux%ux%uxf32>) -> tensor<%ux%ux%ux%ux%s> "
           "{\n"
           "  %%q = quantize %%x : tensor<%ux%ux%ux%ux%s>\n"
           "  %%w = constant {value = dense<%s> : tensor<%s>} : tensor<%s>\n"
           "  %%y = qconv2d %%q, %%w%s : tensor<%ux%ux%ux%ux%s>\n"
           "  return %%y\n}\n",
           q->n, q->c, q->h, q->w, q->n, q->c, q->h, q->w, qt, q->n, q->c,
           q->h, q->w, qt, wdata, wt, wt,
           q->pad ? " {pads = [1, 1, 1, 1]}" : "", q->n, q->c, q->h, q->w, qt);
}

/* One case on one path (features: extra ones, or NULL). */
static bool run_qcase(const qcase *q, quill_llvm_isa isa, const char *feats,
                      unsigned threads) {
  static char text[16384];
  qir_text(q, text, sizeof text);
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, diag_capture, (void *)1);
  bool ok = false;
  quill_module *m = quill_parse_module(ctx, text, strlen(text), "qn", 0);
  quill_tensor in, ref, got;
  memset(&in, 0, sizeof in);
  memset(&ref, 0, sizeof ref);
  memset(&got, 0, sizeof got);
  if (!m || quill_verify_module(m)) {
    fprintf(stderr, "does not parse/verify:\n%s", text);
    goto done;
  }
  quill_graph *g = quill_module_graph(m, 0);
  quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g, 0)), &in);
  size_t n = quill_tensor_num_elements(&in);
  for (size_t i = 0; i < n; i++)
    ((float *)in.data)[i] = input_value(i, (float)q->scale);
  if (quill_ref_run(ctx, g, &in, 1, &ref, 1)) {
    fprintf(stderr, "reference failed:\n%s", text);
    goto done;
  }
  if (!jit_on_path(ctx, g, &in, 1, &got, 1, isa, threads, feats))
    goto done;
  ok = ref.size == got.size && !memcmp(ref.data, got.data, ref.size);
  if (!ok) {
    size_t ne = quill_tensor_num_elements(&ref), b = first_diff(&ref, &got);
    /* the conv's result is NCHW: element b is input element b */
    fprintf(stderr,
            "%ux%ux%ux%u %s %g:%d (isa %s%s%s, %u threads): element %zu: "
            "x %.9g, ref %g, llvm %g\n",
            q->n, q->c, q->h, q->w, q->store, q->scale, q->zp,
            quill_llvm_isa_name(isa), feats ? ", " : "", feats ? feats : "",
            threads, b, b < ne ? ((float *)in.data)[b] : 0.0,
            b < ne ? quill_tensor_get_f64(&ref, b) : 0.0,
            b < ne ? quill_tensor_get_f64(&got, b) : 0.0);
  }
done:
  quill_ref_tensors_free(ctx, &in, 1);
  quill_ref_tensors_free(ctx, &ref, 1);
  quill_ref_tensors_free(ctx, &got, 1);
  if (m)
    quill_module_destroy(m);
  quill_context_destroy(ctx);
  return ok;
}

int main(void) {
  (void)run_case; /* the harness's random-input runner: not used here */
  quill_llvm_isa isas[QUILL_LLVM_ISA_COUNT];
  unsigned nisa = host_isas(isas);
  CHECK(nisa >= 1);
  unsigned mask = host_path_mask(NULL);
  for (size_t i = 0; i < sizeof qcases / sizeof qcases[0]; i++) {
    const qcase *q = &qcases[i];
    for (unsigned k = 0; k < nisa; k++)
      CHECK(run_qcase(q, isas[k], NULL, 1));
    CHECK(run_qcase(q, isas[nisa - 1], NULL, 2));
    /* the zmm kernel's other forms, where the path survives without them */
    static const char *const narrowed[] = {"-avx512vbmi", "-avx512dq",
                                           "-avx512vbmi,-avx512dq"};
    for (unsigned v = 0; v < 3; v++)
      if ((mask & (1u << QUILL_LLVM_ISA_AVX512_VNNI)) &&
          (host_path_mask(narrowed[v]) & (1u << QUILL_LLVM_ISA_AVX512_VNNI)))
        CHECK(run_qcase(q, QUILL_LLVM_ISA_AVX512_VNNI, narrowed[v], 1));
  }
  printf("test_llvm_quant_nchw: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}

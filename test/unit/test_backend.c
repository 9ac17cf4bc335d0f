/*
 * test_backend.c - backend configs (backends/): every accessor on each
 * shipped config and its printed summary, lookup by name and by path
 * with the per-context cache, allocation failure, the scheme arithmetic
 * quill_quant_params_from_range and the observer names, and the context's
 * extension slots the cache lives in. The validation errors of configs
 * are test_backend_errors.c.
 *
 * Plain C (check.h): each CHECK counts a check or prints the failing
 * expression; main prints the counts and returns non-zero on any failure.
 * Diagnostics are captured as "file: message" lines (backend_harness.h);
 * the allocation-failure test fails the n-th allocation for growing n
 * until loading a config succeeds, and checks that nothing leaks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/unit/backend_harness.h"
#include "test/unit/fail_alloc.h"

/* ---- shipped configs --------------------------------------------------------- */

static unsigned count_quantized(const quill_backend *b) {
  unsigned n = 0;
  for (unsigned o = 0; o < QUILL_OP_COUNT; o++)
    n += quill_backend_quantizes(b, (quill_opcode)o);
  return n;
}

static bool fusion_is(const quill_fusion *f, unsigned len, quill_opcode a,
                      quill_opcode b, quill_opcode c) {
  return f && f->len == len && f->ops[0] == a && f->ops[1] == b &&
         (len < 3 || f->ops[2] == c);
}

static void test_shipped(void) {
  diags d;
  quill_context *ctx = new_ctx(&d);
  static const char *const names[] = {"tflite-int8", "x86-vnni", "academic",
                                      "tensorrt", "power2", "tflite-int16x8",
                                      "x86-avx2"};
  CHECK(quill_backend_num_shipped() == 7);
  for (unsigned i = 0; i < 7; i++) {
    CHECK(strcmp(quill_backend_shipped_name(i), names[i]) == 0);
    const char *text = quill_backend_shipped_text(i);
    CHECK(text && text[0] == '{');
    const quill_backend *b = quill_backend_get(ctx, names[i]);
    CHECK(b != NULL);
    if (!b)
      continue;
    CHECK(strcmp(quill_backend_name(b), names[i]) == 0);
    CHECK(strlen(quill_backend_description(b)) > 20);
    CHECK(quill_backend_get(ctx, names[i]) == b); /* cached */
    /* quill_backend_parse is not cached: a new config each time */
    const quill_backend *p =
        quill_backend_parse(ctx, text, strlen(text), "copy.json");
    CHECK(p && p != b && strcmp(quill_backend_name(p), names[i]) == 0);
    /* every config keeps layer_norm float and quantizes conv2d and gemm */
    CHECK(quill_backend_quantizes(b, QUILL_OP_CONV2D));
    CHECK(quill_backend_quantizes(b, QUILL_OP_GEMM));
    CHECK(!quill_backend_quantizes(b, QUILL_OP_LAYER_NORM));
    CHECK(!quill_backend_quantizes(b, QUILL_OP_COUNT)); /* out of range */
    CHECK(!quill_backend_shares_params(b, QUILL_OP_COUNT));
    CHECK(!quill_backend_keeps_float(b, QUILL_OP_COUNT));
    CHECK(!quill_backend_fixed_params(b, QUILL_OP_COUNT).present);
    CHECK(quill_backend_fusion(b, quill_backend_num_fusions(b)) == NULL);
    CHECK(quill_backend_bias_int32(b));
    CHECK(quill_backend_quantizes_outputs(b) == (i != 2)); /* academic */
    /* every fusion is a lowerable chain headed by a quantized op */
    for (unsigned k = 0; k < quill_backend_num_fusions(b); k++) {
      const quill_fusion *fu = quill_backend_fusion(b, k);
      CHECK(fu && fu->len >= 2 && fu->len <= 3);
      CHECK(quill_backend_quantizes(b, fu->ops[0]));
      CHECK(quill_backend_fuses(b, fu->ops[0], fu->ops[1]));
    }
    /* the summary starts with the name and lists every section */
    char *sum = NULL;
    size_t sum_len = 0;
    FILE *sf = open_memstream(&sum, &sum_len);
    quill_backend_print(b, sf);
    fclose(sf);
    char head[64];
    snprintf(head, sizeof head, "backend %s\n", names[i]);
    CHECK(strncmp(sum, head, strlen(head)) == 0);
    CHECK(strstr(sum, "\n  float_ops:") != NULL);
    free(sum);
    /* shared and fixed ops are quantized; fused ops are not kept float */
    for (unsigned o = 0; o < QUILL_OP_COUNT; o++) {
      if (quill_backend_shares_params(b, (quill_opcode)o) ||
          quill_backend_fixed_params(b, (quill_opcode)o).present)
        CHECK(quill_backend_quantizes(b, (quill_opcode)o));
      if (quill_backend_keeps_float(b, (quill_opcode)o))
        CHECK(!quill_backend_quantizes(b, (quill_opcode)o));
    }
  }
  CHECK(quill_backend_shipped_name(7) == NULL);
  CHECK(quill_backend_shipped_text(7) == NULL);
  CHECK(d.errors == 0);

  const quill_backend *b = quill_backend_get(ctx, "tflite-int8");
  /* activations: the mse observer (PP-OCRv4 rec within 0.5 points of
   * float, docs/accuracy.md) */
  check_scheme(quill_backend_activation(b), QUILL_TYPE_I8, 8, false, false,
               -128, 127, false, QUILL_OBSERVER_MSE);
  check_scheme(quill_backend_weight(b), QUILL_TYPE_I8, 8, true, true, -127,
               127, false, QUILL_OBSERVER_MINMAX);
  CHECK(quill_backend_rounding(b) == QUILL_ROUND_TFLITE);
  CHECK(quill_backend_requant(b) == QUILL_REQUANT_FIXED_POINT);
  CHECK(quill_backend_quantizes_outputs(b));
  CHECK(count_quantized(b) == 35);
  CHECK(quill_backend_quantizes(b, QUILL_OP_SUB));
  CHECK(quill_backend_keeps_float(b, QUILL_OP_LAYER_NORM));
  CHECK(quill_backend_keeps_float(b, QUILL_OP_DIV));
  CHECK(!quill_backend_keeps_float(b, QUILL_OP_CONV2D));
  CHECK(quill_backend_shares_params(b, QUILL_OP_MAXPOOL));
  CHECK(quill_backend_shares_params(b, QUILL_OP_AVGPOOL));
  CHECK(quill_backend_shares_params(b, QUILL_OP_RESHAPE));
  CHECK(!quill_backend_shares_params(b, QUILL_OP_CONCAT));
  CHECK(!quill_backend_shares_params(b, QUILL_OP_ADD));
  quill_fixed_params fp = quill_backend_fixed_params(b, QUILL_OP_SIGMOID);
  CHECK(fp.present && fp.scale == 1.0 / 256 && fp.zero_point == -128);
  fp = quill_backend_fixed_params(b, QUILL_OP_TANH);
  CHECK(fp.present && fp.scale == 1.0 / 128 && fp.zero_point == 0);
  fp = quill_backend_fixed_params(b, QUILL_OP_LOG_SOFTMAX);
  CHECK(fp.present && fp.scale == 16.0 / 256 && fp.zero_point == 127);
  CHECK(!quill_backend_fixed_params(b, QUILL_OP_ADD).present);
  CHECK(quill_backend_num_fusions(b) == 13);
  CHECK(fusion_is(quill_backend_fusion(b, 0), 3, QUILL_OP_CONV2D,
                  QUILL_OP_BATCH_NORM, QUILL_OP_RELU));
  CHECK(fusion_is(quill_backend_fusion(b, 3), 2, QUILL_OP_CONV2D,
                  QUILL_OP_RELU, 0));
  CHECK(quill_backend_fuses(b, QUILL_OP_CONV2D, QUILL_OP_RELU));
  CHECK(quill_backend_fuses(b, QUILL_OP_CONV2D, QUILL_OP_BATCH_NORM));
  CHECK(quill_backend_fuses(b, QUILL_OP_ADD, QUILL_OP_CLIP));
  CHECK(!quill_backend_fuses(b, QUILL_OP_MATMUL, QUILL_OP_RELU));
  CHECK(!quill_backend_fuses(b, QUILL_OP_BATCH_NORM, QUILL_OP_RELU));

  b = quill_backend_get(ctx, "x86-vnni");
  check_scheme(quill_backend_activation(b), QUILL_TYPE_U8, 8, false, false, 0,
               255, false, QUILL_OBSERVER_MSE);
  check_scheme(quill_backend_weight(b), QUILL_TYPE_I8, 8, true, true, -127,
               127, false, QUILL_OBSERVER_MINMAX);
  CHECK(quill_backend_rounding(b) == QUILL_ROUND_HALF_EVEN);
  CHECK(quill_backend_requant(b) == QUILL_REQUANT_FLOAT);
  CHECK(quill_backend_quantizes_outputs(b));
  CHECK(count_quantized(b) == 29);
  CHECK(!quill_backend_quantizes(b, QUILL_OP_SUB));
  fp = quill_backend_fixed_params(b, QUILL_OP_TANH);
  CHECK(fp.present && fp.scale == 1.0 / 128 && fp.zero_point == 128);
  fp = quill_backend_fixed_params(b, QUILL_OP_SIGMOID);
  CHECK(fp.present && fp.scale == 1.0 / 256 && fp.zero_point == 0);
  CHECK(quill_backend_num_fusions(b) == 11);
  CHECK(quill_backend_fuses(b, QUILL_OP_MATMUL, QUILL_OP_RELU));
  CHECK(!quill_backend_fuses(b, QUILL_OP_ADD, QUILL_OP_CLIP));

  b = quill_backend_get(ctx, "academic");
  check_scheme(quill_backend_activation(b), QUILL_TYPE_U8, 8, false, false, 0,
               255, false, QUILL_OBSERVER_PERCENTILE);
  CHECK(quill_backend_activation(b)->observer.percentile == 99.99);
  check_scheme(quill_backend_weight(b), QUILL_TYPE_I8, 8, true, false, -128,
               127, false, QUILL_OBSERVER_MINMAX);
  CHECK(quill_backend_rounding(b) == QUILL_ROUND_HALF_EVEN);
  CHECK(quill_backend_requant(b) == QUILL_REQUANT_FLOAT);
  CHECK(!quill_backend_quantizes_outputs(b));
  CHECK(count_quantized(b) == 3);
  CHECK(quill_backend_quantizes(b, QUILL_OP_CONV_TRANSPOSE2D));
  CHECK(!quill_backend_quantizes(b, QUILL_OP_RELU));
  CHECK(!quill_backend_quantizes(b, QUILL_OP_MATMUL));
  CHECK(quill_backend_num_fusions(b) == 0);
  CHECK(!quill_backend_fuses(b, QUILL_OP_CONV2D, QUILL_OP_RELU));

  b = quill_backend_get(ctx, "tensorrt");
  check_scheme(quill_backend_activation(b), QUILL_TYPE_I8, 8, true, false,
               -127, 127, false, QUILL_OBSERVER_KL);
  CHECK(quill_backend_activation(b)->observer.bins == 2048);
  check_scheme(quill_backend_weight(b), QUILL_TYPE_I8, 8, true, true, -127,
               127, false, QUILL_OBSERVER_MINMAX);
  CHECK(quill_backend_rounding(b) == QUILL_ROUND_HALF_EVEN);
  CHECK(quill_backend_requant(b) == QUILL_REQUANT_FLOAT);
  CHECK(quill_backend_keeps_float(b, QUILL_OP_SOFTMAX));
  CHECK(!quill_backend_fixed_params(b, QUILL_OP_SIGMOID).present);
  CHECK(quill_backend_num_fusions(b) == 15);
  CHECK(quill_backend_fuses(b, QUILL_OP_MUL, QUILL_OP_CLIP));

  b = quill_backend_get(ctx, "power2");
  check_scheme(quill_backend_activation(b), QUILL_TYPE_I8, 8, true, false,
               -128, 127, true, QUILL_OBSERVER_MSE);
  check_scheme(quill_backend_weight(b), QUILL_TYPE_I8, 8, true, false, -128,
               127, true, QUILL_OBSERVER_MINMAX);
  CHECK(quill_backend_rounding(b) == QUILL_ROUND_HALF_UP);
  CHECK(quill_backend_requant(b) == QUILL_REQUANT_FIXED_POINT);
  CHECK(quill_backend_keeps_float(b, QUILL_OP_SIGMOID));
  CHECK(!quill_backend_quantizes(b, QUILL_OP_MATMUL));
  CHECK(quill_backend_num_fusions(b) == 9);
  CHECK(quill_backend_fuses(b, QUILL_OP_ADD, QUILL_OP_RELU));
  CHECK(!quill_backend_fuses(b, QUILL_OP_MUL, QUILL_OP_RELU));
  CHECK(quill_backend_quantizes_outputs(b));

  /* the summary names everything */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  quill_backend_print(quill_backend_get(ctx, "academic"), f);
  fclose(f);
  CHECK(strstr(buf, "backend academic\n") == buf);
  CHECK(strstr(buf, "  activation:        u8 asymmetric per_tensor [0, 255] "
                    "observer percentile (99.99%)\n"));
  CHECK(strstr(buf, "  outputs:           float\n"));
  CHECK(strstr(buf, "  quantize_ops:      conv2d conv_transpose2d gemm\n"));
  CHECK(strstr(buf, "  fusions:           (none)\n"));
  free(buf);
  CHECK(d.errors == 0);
  quill_context_destroy(ctx);
}

/* ---- lookup by name and path ------------------------------------------------- */

/* Names and paths: unknown names list the shipped configs; paths read
 * files; both are cached. */
static void test_get(void) {
  diags d;
  quill_context *ctx = new_ctx(&d);
  CHECK(quill_backend_get(ctx, "tflite") == NULL);
  CHECK(strcmp(d.text,
               "-: unknown backend 'tflite' (shipped: tflite-int8, x86-vnni, "
               "academic, tensorrt, power2, tflite-int16x8, x86-avx2; a config "
               "file path must contain '/' or end in '.json')\n") == 0);
  d.text[0] = 0;
  CHECK(quill_backend_get(ctx, "/nonexistent/npu.json") == NULL);
  CHECK(strcmp(d.text, "/nonexistent/npu.json: cannot read backend config: "
                       "No such file or directory\n") == 0);
  d.text[0] = 0;
  d.errors = 0;
  /* a config file on disk */
  char dir[] = "/tmp/quill_test_backend_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[64];
  snprintf(path, sizeof path, "%s/npu.json", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  const char *text = quill_backend_shipped_text(1);
  fputs(text, f);
  fclose(f);
  const quill_backend *b = quill_backend_get(ctx, path);
  CHECK(b && strcmp(quill_backend_name(b), "x86-vnni") == 0);
  CHECK(quill_backend_get(ctx, path) == b);
  CHECK(quill_backend_get(ctx, "x86-vnni") != b); /* a different entry */
  remove(path);
  rmdir(dir);
  CHECK(quill_backend_get(ctx, path) == b); /* cached: not read again */
  CHECK(d.errors == 0);
  quill_context_destroy(ctx);
}

/* ---- allocation failure -------------------------------------------------------- */


static void ignore(void *ud, quill_loc loc, quill_diag_severity sev,
                   const char *msg) {
  (void)ud, (void)loc, (void)sev, (void)msg;
}

static void test_oom(void) {
  fail_alloc fa = {-1, 0};
  bool succeeded = false;
  int failed_runs = 0;
  for (long n = 1; n < 400 && !succeeded; n++) {
    fa.budget = -1;
    fa.live = 0;
    quill_context *ctx = quill_context_create(failing_alloc, &fa);
    quill_diag_set_handler(ctx, ignore, NULL);
    fa.budget = n;
    const quill_backend *b = quill_backend_get(ctx, "tflite-int8");
    succeeded = b && quill_backend_get(ctx, "tflite-int8") == b &&
                quill_backend_num_fusions(b) == 13;
    failed_runs += !b;
    fa.budget = -1;
    quill_context_destroy(ctx);
    CHECK(fa.live == 0);
  }
  CHECK(succeeded);
  CHECK(failed_runs > 3);
}

/* ---- scheme arithmetic ------------------------------------------------------------ */

static quill_quant_scheme scheme(quill_type_kind k, bool sym, int64_t qmin,
                                 int64_t qmax, bool pow2) {
  quill_quant_scheme s = {0};
  s.storage = k;
  s.bits = 8;
  s.symmetric = sym;
  s.qmin = qmin;
  s.qmax = qmax;
  s.power_of_two = pow2;
  return s;
}

static void params(const quill_quant_scheme *s, double lo, double hi,
                   double want_scale, int64_t want_zp, bool want_degen,
                   int line) {
  double sc = -1;
  int64_t zp = -999;
  bool degen = !want_degen;
  quill_status st = quill_quant_params_from_range(s, lo, hi, &sc, &zp, &degen);
  checks++;
  if (st != QUILL_OK || sc != want_scale || zp != want_zp ||
      degen != want_degen) {
    fprintf(stderr,
            "%s:%d: range [%g, %g] -> scale %.17g zp %lld degen %d (st %d), "
            "want %.17g %lld %d\n",
            __FILE__, line, lo, hi, sc, (long long)zp, degen, st, want_scale,
            (long long)want_zp, want_degen);
    failures++;
  }
}

static void test_params(void) {
  quill_quant_scheme i8 = scheme(QUILL_TYPE_I8, false, -128, 127, false);
  quill_quant_scheme u8 = scheme(QUILL_TYPE_U8, false, 0, 255, false);
  quill_quant_scheme s8 = scheme(QUILL_TYPE_I8, true, -128, 127, false);
  quill_quant_scheme n8 = scheme(QUILL_TYPE_I8, true, -127, 127, false);
  quill_quant_scheme p8 = scheme(QUILL_TYPE_I8, false, -128, 127, true);
  quill_quant_scheme pn8 = scheme(QUILL_TYPE_I8, true, -127, 127, true);
  quill_quant_scheme pu8 = scheme(QUILL_TYPE_U8, false, 0, 255, true);

  /* asymmetric: scale (hi - lo)/255, zp = -128 + 63.75 -> -64 */
  params(&i8, -1.0, 3.0, 4.0 / 255.0, -64, false, __LINE__);
  /* the range is widened to include 0 */
  params(&u8, 2.0, 5.0, 5.0 / 255.0, 0, false, __LINE__);
  params(&u8, -4.0, -1.0, 4.0 / 255.0, 255, false, __LINE__);
  params(&i8, 0.5, 0.5, 0.5 / 255.0, -128, false, __LINE__);
  /* symmetric: 2 * amax / (qmax - qmin), zp 0 */
  params(&s8, -1.0, 3.0, 6.0 / 255.0, 0, false, __LINE__);
  params(&s8, -3.0, 1.0, 6.0 / 255.0, 0, false, __LINE__);
  /* narrow range: amax / 127, TFLite's weight scale */
  params(&n8, -1.0, 3.0, 3.0 / 127.0, 0, false, __LINE__);
  params(&n8, -12.7, 0.0, 2.0 * 12.7 / 254.0, 0, false, __LINE__);
  /* power of two: rounded up, zp recomputed with the new scale */
  params(&pn8, -1.0, 3.0, 0.03125, 0, false, __LINE__); /* 3/127 -> 2^-5 */
  params(&p8, -1.0, 3.0, 0.03125, -96, false, __LINE__); /* 4/255 -> 2^-5 */
  params(&pu8, 0.0, 63.75, 0.25, 0, false, __LINE__);   /* exact: stays */
  params(&pu8, 0.0, 63.76, 0.5, 0, false, __LINE__);
  /* zero point ties round half to even: 0 + 0.25/0.5 = 0.5 -> 0, 1.5 -> 2 */
  quill_quant_scheme r4 = scheme(QUILL_TYPE_U8, false, 0, 4, false);
  params(&r4, -0.25, 1.75, 0.5, 0, false, __LINE__);
  params(&r4, -0.75, 1.25, 0.5, 2, false, __LINE__);
  /* a narrower storage range ([-8, 7] of 4 bits) */
  quill_quant_scheme i4 = scheme(QUILL_TYPE_I4, false, -8, 7, false);
  params(&i4, -3.0, 12.0, 1.0, -5, false, __LINE__);
  /* degenerate: scale 1, zp mapping 0.0 */
  params(&i8, 0.0, 0.0, 1.0, -128, true, __LINE__);
  params(&u8, -0.0, 0.0, 1.0, 0, true, __LINE__);
  params(&s8, 0.0, 0.0, 1.0, 0, true, __LINE__);
  params(&pn8, 0.0, 0.0, 1.0, 0, true, __LINE__);
  params(&u8, 0.0, 1e-320, 1.0, 0, true, __LINE__); /* underflows: zero */
  /* huge finite ranges do not overflow */
  double sc;
  int64_t zp;
  bool degen;
  CHECK(quill_quant_params_from_range(&i8, -1e308, 1e308, &sc, &zp, &degen) ==
        QUILL_OK);
  CHECK(isfinite(sc) && sc > 0 && !degen && (zp == 0 || zp == -1));
  CHECK(quill_quant_params_from_range(&s8, -1e308, 1e308, &sc, &zp, NULL) ==
        QUILL_OK);
  CHECK(isfinite(sc) && zp == 0);
  /* ... unless a power-of-two scale would exceed 2^1023 */
  quill_quant_scheme tiny = scheme(QUILL_TYPE_I8, true, -1, 1, true);
  CHECK(quill_quant_params_from_range(&tiny, -1.7e308, 1.7e308, &sc, &zp,
                                      NULL) == QUILL_ERR_INVALID);
  /* non-finite input */
  CHECK(quill_quant_params_from_range(&i8, NAN, 1.0, &sc, &zp, NULL) ==
        QUILL_ERR_INVALID);
  CHECK(quill_quant_params_from_range(&i8, -1.0, INFINITY, &sc, &zp, NULL) ==
        QUILL_ERR_INVALID);
  CHECK(quill_quant_params_from_range(&i8, -INFINITY, 1.0, &sc, &zp, NULL) ==
        QUILL_ERR_INVALID);
  CHECK(quill_quant_params_from_range(&s8, 0.0, NAN, &sc, &zp, NULL) ==
        QUILL_ERR_INVALID);

  /* observer names */
  quill_observer_kind k;
  CHECK(quill_observer_parse("kl", &k) && k == QUILL_OBSERVER_KL);
  CHECK(quill_observer_parse("ema_minmax", &k) &&
        k == QUILL_OBSERVER_EMA_MINMAX);
  CHECK(!quill_observer_parse("max", &k));
  CHECK(strcmp(quill_observer_name(QUILL_OBSERVER_PERCENTILE),
               "percentile") == 0);
  CHECK(strcmp(quill_observer_name(QUILL_OBSERVER_MSE), "mse") == 0);
}

/* ---- context extension slots -------------------------------------------------- */

static int destroyed;
static void count_destroy(quill_context *ctx, void *v) {
  (void)ctx;
  destroyed += *(int *)v;
}

static void test_slots(void) {
  static const char key_a, key_b;
  int one = 1, ten = 10, hundred = 100;
  quill_context *ctx = quill_context_create(NULL, NULL);
  CHECK(quill_context_get_slot(ctx, &key_a) == NULL);
  CHECK(quill_context_set_slot(ctx, &key_a, &one, count_destroy) == QUILL_OK);
  CHECK(quill_context_set_slot(ctx, &key_b, &ten, count_destroy) == QUILL_OK);
  CHECK(quill_context_get_slot(ctx, &key_a) == &one);
  CHECK(quill_context_get_slot(ctx, &key_b) == &ten);
  /* setting the same value again destroys nothing */
  CHECK(quill_context_set_slot(ctx, &key_a, &one, count_destroy) == QUILL_OK);
  CHECK(destroyed == 0);
  /* replacing destroys the old value */
  CHECK(quill_context_set_slot(ctx, &key_a, &hundred, count_destroy) ==
        QUILL_OK);
  CHECK(destroyed == 1);
  CHECK(quill_context_get_slot(ctx, &key_a) == &hundred);
  /* clearing destroys too */
  CHECK(quill_context_set_slot(ctx, &key_b, NULL, NULL) == QUILL_OK);
  CHECK(destroyed == 11);
  CHECK(quill_context_get_slot(ctx, &key_b) == NULL);
  quill_context_destroy(ctx);
  CHECK(destroyed == 111);
}

int main(void) {
  test_shipped();
  test_get();
  test_oom();
  test_params();
  test_slots();
  if (failures) {
    fprintf(stderr, "test_backend: %d of %d checks failed\n", failures,
            checks);
    return 1;
  }
  printf("test_backend: %d checks passed\n", checks);
  return 0;
}

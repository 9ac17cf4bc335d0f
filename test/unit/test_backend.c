/*
 * test_backend.c - backend configs (backends/): every accessor on each
 * shipped config, every validation error class with its exact message, the
 * per-context cache, allocation failure, the scheme arithmetic
 * quill_quant_params_from_range, and the context's extension slots the
 * cache lives in.
 *
 * Configs for the error cases are assembled from parts (a valid default for
 * each key, overridden per case) so that each case contains exactly one
 * mistake; diagnostics are captured as "file: message" lines.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"

static int failures, checks;
#define CHECK(c)                                                              \
  do {                                                                        \
    checks++;                                                                 \
    if (!(c)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);   \
      failures++;                                                             \
    }                                                                         \
  } while (0)

/* ---- diagnostics capture ----------------------------------------------------- */

typedef struct diags {
  char text[16384];
  unsigned errors;
} diags;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  diags *d = ud;
  size_t n = strlen(d->text);
  if (loc.file && loc.line)
    snprintf(d->text + n, sizeof d->text - n, "%s:%u:%u: %s\n", loc.file,
             (unsigned)loc.line, (unsigned)loc.col, msg);
  else
    snprintf(d->text + n, sizeof d->text - n, "%s: %s\n",
             loc.file ? loc.file : "-", msg);
  if (sev == QUILL_DIAG_ERROR)
    d->errors++;
}

static quill_context *new_ctx(diags *d) {
  memset(d, 0, sizeof *d);
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, capture, d);
  return ctx;
}

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

static void check_scheme(const quill_quant_scheme *s, quill_type_kind storage,
                         int bits, bool sym, bool per_channel, int64_t qmin,
                         int64_t qmax, bool pow2, quill_observer_kind obs) {
  CHECK(s->storage == storage);
  CHECK(s->bits == bits);
  CHECK(s->symmetric == sym);
  CHECK(s->per_channel == per_channel);
  CHECK(s->qmin == qmin);
  CHECK(s->qmax == qmax);
  CHECK(s->power_of_two == pow2);
  CHECK(s->observer.kind == obs);
}

static void test_shipped(void) {
  diags d;
  quill_context *ctx = new_ctx(&d);
  static const char *const names[] = {"tflite-int8", "x86-vnni", "academic",
                                      "tensorrt", "power2", "tflite-int16x8"};
  CHECK(quill_backend_num_shipped() == 6);
  for (unsigned i = 0; i < 6; i++) {
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
  CHECK(quill_backend_shipped_name(6) == NULL);
  CHECK(quill_backend_shipped_text(6) == NULL);
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

/* ---- loading errors ------------------------------------------------------------ */

typedef struct parts {
  const char *act, *weight, *bias, *rounding, *requant, *ops, *extra;
} parts;

static const char *build(const parts *p, char *buf, size_t n) {
  snprintf(buf, n,
           "{\"quill_backend\": 1, \"name\": \"t\",\n"
           " \"activation\": %s,\n \"weight\": %s,\n \"bias\": %s,\n"
           " \"rounding\": %s, \"requantization\": %s,\n"
           " \"quantize_ops\": %s%s}\n",
           p->act ? p->act : "{\"dtype\": \"i8\"}",
           p->weight ? p->weight : "{\"dtype\": \"i8\", \"symmetric\": true}",
           p->bias ? p->bias : "{\"dtype\": \"i32\"}",
           p->rounding ? p->rounding : "\"half_even\"",
           p->requant ? p->requant : "\"fixed_point\"",
           p->ops ? p->ops
                  : "[\"conv2d\", \"gemm\", \"add\", \"relu\", \"maxpool\", "
                    "\"sigmoid\"]",
           p->extra ? p->extra : "");
  return buf;
}

/* Parse text; expect failure with exactly the message lines `want`. */
static void expect_text(const char *text, const char *want, int line) {
  diags d;
  quill_context *ctx = new_ctx(&d);
  const quill_backend *b =
      quill_backend_parse(ctx, text, strlen(text), "t.json");
  if (b || strcmp(d.text, want) != 0) {
    fprintf(stderr,
            "%s:%d: config error mismatch\n  want: %s  got:  %s  (parsed: "
            "%s)\n",
            __FILE__, line, want, d.text, b ? "yes" : "no");
    failures++;
  }
  checks++;
  quill_context_destroy(ctx);
}

static void expect_parts(const parts *p, const char *want, int line) {
  char buf[4096];
  expect_text(build(p, buf, sizeof buf), want, line);
}

#define EXPECT(want, ...)                                                     \
  do {                                                                        \
    parts p_ = {__VA_ARGS__};                                                 \
    expect_parts(&p_, want, __LINE__);                                        \
  } while (0)

static void test_errors(void) {
  /* the default parts are valid */
  char buf[4096];
  diags d;
  quill_context *ctx = new_ctx(&d);
  parts ok = {0};
  build(&ok, buf, sizeof buf);
  const quill_backend *b = quill_backend_parse(ctx, buf, strlen(buf), "ok");
  CHECK(b && d.errors == 0);
  if (b) {
    check_scheme(quill_backend_activation(b), QUILL_TYPE_I8, 8, false, false,
                 -128, 127, false, QUILL_OBSERVER_MINMAX);
    CHECK(quill_backend_num_fusions(b) == 0);
    CHECK(strcmp(quill_backend_description(b), "") == 0);
    CHECK(quill_backend_plugin(b) == NULL);
    CHECK(quill_backend_plugin_pipeline(b) == NULL);
  }
  /* a plugin, with and without a pipeline */
  parts with = {.extra = ", \"plugin\": {\"name\": \"npu-x\", "
                         "\"pipeline\": \"cse,dce\"}"};
  build(&with, buf, sizeof buf);
  b = quill_backend_parse(ctx, buf, strlen(buf), "with");
  CHECK(b && !strcmp(quill_backend_plugin(b), "npu-x") &&
        !strcmp(quill_backend_plugin_pipeline(b), "cse,dce"));
  parts bare = {.extra = ", \"plugin\": {\"name\": \"npu-x\"}"};
  build(&bare, buf, sizeof buf);
  b = quill_backend_parse(ctx, buf, strlen(buf), "bare");
  CHECK(b && !strcmp(quill_backend_plugin(b), "npu-x") &&
        quill_backend_plugin_pipeline(b) == NULL);
  quill_context_destroy(ctx);

  /* syntax, version, structure */
  expect_text("{\"quill_backend\": 1,\n  \"name\": \"x\",,\n}",
              "t.json:2:15: invalid JSON: string or '}' expected near ','\n",
              __LINE__);
  expect_text("{\"a\": 1, \"a\": 2}",
              "t.json:1:12: invalid JSON: duplicate object key near '\"a\"'\n",
              __LINE__);
  expect_text("[1, 2]",
              "t.json: a backend config must be a JSON object, got an array\n",
              __LINE__);
  expect_text("{\"quill_backend\": 2, \"name\": 5}",
              "t.json: quill_backend: unsupported format version 2 (this "
              "Quill reads version 1)\n",
              __LINE__);
  expect_text("{\"quill_backend\": \"1\"}",
              "t.json: quill_backend: expected an integer, got a string\n",
              __LINE__);
  expect_text("{\"name\": \"x\"}",
              "t.json: quill_backend: required key is missing\n", __LINE__);
  expect_text("{\"quill_backend\": 1}",
              "t.json: name: required key is missing\n"
              "t.json: activation: required key is missing\n"
              "t.json: weight: required key is missing\n"
              "t.json: bias: required key is missing\n"
              "t.json: rounding: required key is missing\n"
              "t.json: requantization: required key is missing\n"
              "t.json: quantize_ops: required key is missing\n",
              __LINE__);

  /* unknown keys (with a suggestion when it looks like a typo) */
  EXPECT("t.json: activation.symetric: unknown key (did you mean "
         "'symmetric'?)\n",
         .act = "{\"dtype\": \"i8\", \"symetric\": false}");
  EXPECT("t.json: quantise_ops: unknown key (did you mean 'quantize_ops'?)\n",
         .extra = ", \"quantise_ops\": []");
  EXPECT("t.json: bias.scale: unknown key (valid keys: dtype)\n",
         .bias = "{\"dtype\": \"i32\", \"scale\": 1}");
  EXPECT("t.json: fixed_params.sigmoid.offset: unknown key (valid keys: "
         "scale, zero_point)\n",
         .extra = ", \"fixed_params\": {\"sigmoid\": {\"scale\": 0.5, "
                  "\"zero_point\": 0, \"offset\": 1}}");

  /* the plugin key */
  EXPECT("t.json: plugin.after: unknown key (valid keys: name, pipeline)\n",
         .extra = ", \"plugin\": {\"name\": \"p\", \"after\": \"x\"}");
  EXPECT("t.json: plugin.name: required key is missing\n",
         .extra = ", \"plugin\": {\"pipeline\": \"cse\"}");
  EXPECT("t.json: plugin: expected an object, got a string\n",
         .extra = ", \"plugin\": \"p\"");
  EXPECT("t.json: plugin.pipeline: must be one line\n",
         .extra = ", \"plugin\": {\"name\": \"p\", \"pipeline\": \"a\\nb\"}");
  EXPECT("t.json: plugin.name: 'a b' is not a valid plugin name (letters, "
         "digits, '.', '_' and '-' only)\n",
         .extra = ", \"plugin\": {\"name\": \"a b\"}");

  /* wrong types */
  EXPECT("t.json: weight.symmetric: expected a boolean, got a string\n",
         .weight = "{\"dtype\": \"i8\", \"symmetric\": \"yes\"}");
  EXPECT("t.json: quantize_ops: expected an array, got a string\n",
         .ops = "\"conv2d\"");
  EXPECT("t.json: quantize_ops[1]: expected a string, got an integer\n",
         .ops = "[\"conv2d\", 7]");
  EXPECT("t.json: activation.bits: expected an integer, got a real number\n",
         .act = "{\"dtype\": \"i8\", \"bits\": 8.0}");
  EXPECT("t.json: activation.range: expected [qmin, qmax], two integers\n",
         .act = "{\"dtype\": \"i8\", \"range\": [0]}");
  EXPECT("t.json: activation.observer: expected a string or an object, got "
         "an integer\n",
         .act = "{\"dtype\": \"i8\", \"observer\": 3}");

  /* enumerations */
  EXPECT("t.json: activation.dtype: unknown storage type 'i32' (expected "
         "one of i8, u8, i16, u16, i4, u4)\n",
         .act = "{\"dtype\": \"i32\"}");
  EXPECT("t.json: rounding: unknown rounding 'nearest' (expected one of "
         "half_even, half_away, half_up, tflite)\n",
         .rounding = "\"nearest\"");
  EXPECT("t.json: requantization: unknown requantization 'double' "
         "(expected one of fixed_point, float)\n",
         .requant = "\"double\"");
  EXPECT("t.json: bias.dtype: unknown bias dtype 'i16' (expected one of "
         "i32, float)\n",
         .bias = "{\"dtype\": \"i16\"}");
  EXPECT("t.json: weight.granularity: unknown granularity 'per_row' "
         "(expected one of per_tensor, per_channel)\n",
         .weight = "{\"dtype\": \"i8\", \"granularity\": \"per_row\"}");
  EXPECT("t.json: activation.observer: unknown observer 'max' (expected one "
         "of minmax, ema_minmax, percentile, kl, mse)\n",
         .act = "{\"dtype\": \"i8\", \"observer\": \"max\"}");

  /* op names and lists */
  EXPECT("t.json: quantize_ops[1]: unknown op 'conv' (did you mean "
         "'conv2d'?)\n",
         .ops = "[\"gemm\", \"conv\", \"conv2d\"]");
  EXPECT("t.json: float_ops[0]: unknown op 'frobnicate'\n",
         .extra = ", \"float_ops\": [\"frobnicate\"]");
  EXPECT("t.json: quantize_ops[2]: 'gemm' is listed twice (first at "
         "quantize_ops[0])\n",
         .ops = "[\"gemm\", \"conv2d\", \"gemm\"]");
  EXPECT("t.json: float_ops[1]: 'add' is also in quantize_ops\n",
         .extra = ", \"float_ops\": [\"layer_norm\", \"add\"]");
  EXPECT("t.json: shared_params_ops[1]: 'reshape' is not in quantize_ops\n",
         .extra = ", \"shared_params_ops\": [\"maxpool\", \"reshape\"]");
  EXPECT("t.json: fixed_params.tanh: 'tanh' is not in quantize_ops\n",
         .extra = ", \"fixed_params\": {\"tanh\": {\"scale\": 0.0078125, "
                  "\"zero_point\": 0}}");
  EXPECT("t.json: fixed_params.maxpool: 'maxpool' is also in "
         "shared_params_ops\n",
         .extra = ", \"shared_params_ops\": [\"maxpool\"], \"fixed_params\": "
                  "{\"maxpool\": {\"scale\": 0.5, \"zero_point\": 0}}");
  EXPECT("t.json: fixed_params.sigmod: unknown op 'sigmod' (did you mean "
         "'sigmoid'?)\n",
         .extra = ", \"fixed_params\": {\"sigmod\": {\"scale\": 0.5, "
                  "\"zero_point\": 0}}");

  /* fusions */
  EXPECT("t.json: fusions[1]: Quill cannot lower the fusion [gemm, sigmoid] "
         "(supported: [X, relu|clip] with X one of conv2d, conv_transpose2d, "
         "gemm, matmul, add, mul; [conv2d, batch_norm]; [conv2d, batch_norm, "
         "relu|clip])\n",
         .extra = ", \"fusions\": [[\"conv2d\", \"relu\"], [\"gemm\", "
                  "\"sigmoid\"]]");
  EXPECT("t.json: fusions[0]: Quill cannot lower the fusion [conv2d, "
         "batch_norm, relu, relu, relu] (supported: [X, relu|clip] with X one "
         "of conv2d, conv_transpose2d, gemm, matmul, add, mul; [conv2d, "
         "batch_norm]; [conv2d, batch_norm, relu|clip])\n",
         .extra = ", \"fusions\": [[\"conv2d\", \"batch_norm\", \"relu\", "
                  "\"relu\", \"relu\"]]");
  EXPECT("t.json: fusions[0][0]: 'matmul' is not in quantize_ops (a fusion "
         "runs as one quantized kernel)\n",
         .extra = ", \"fusions\": [[\"matmul\", \"relu\"]]");
  EXPECT("t.json: fusions[0][1]: 'relu' is in float_ops but fused into a "
         "quantized kernel\n",
         .ops = "[\"conv2d\"]",
         .extra = ", \"fusions\": [[\"conv2d\", \"relu\"]], \"float_ops\": "
                  "[\"relu\"]");
  EXPECT("t.json: fusions[0]: a fusion needs at least 2 ops, got 1\n",
         .extra = ", \"fusions\": [[\"conv2d\"]]");
  EXPECT("t.json: fusions[1]: duplicate fusion\n",
         .extra = ", \"fusions\": [[\"add\", \"relu\"], [\"add\", \"relu\"]]");

  /* schemes */
  EXPECT("t.json: activation.symmetric: symmetric quantization needs signed "
         "storage, got u8\n",
         .act = "{\"dtype\": \"u8\", \"symmetric\": true}");
  EXPECT("t.json: activation.granularity: per_channel is only supported for "
         "weights\n",
         .act = "{\"dtype\": \"i8\", \"granularity\": \"per_channel\"}");
  EXPECT("t.json: activation.range: [0, 300] does not fit 8-bit unsigned "
         "storage [0, 255]\n",
         .act = "{\"dtype\": \"u8\", \"range\": [0, 300]}");
  EXPECT("t.json: weight.range: [-100, 100] does not fit 4-bit signed "
         "quantization [-8, 7]\n",
         .weight = "{\"dtype\": \"i8\", \"bits\": 4, \"range\": [-100, 100]}");
  EXPECT("t.json: activation.range: qmin (5) must be less than qmax (5)\n",
         .act = "{\"dtype\": \"u8\", \"range\": [5, 5]}");
  EXPECT("t.json: weight.range: symmetric quantization needs a range around "
         "0, got [0, 100]\n",
         .weight = "{\"dtype\": \"i8\", \"symmetric\": true, \"range\": [0, "
                   "100]}");
  EXPECT("t.json: weight.narrow_range: conflicts with range [-128, 127] (the "
         "narrow range is [-127, 127])\n",
         .weight = "{\"dtype\": \"i8\", \"narrow_range\": true, \"range\": "
                   "[-128, 127]}");
  EXPECT("t.json: activation.narrow_range: narrow range needs signed "
         "storage, got u8\n",
         .act = "{\"dtype\": \"u8\", \"narrow_range\": true}");
  EXPECT("t.json: activation.bits: must be between 2 and 16, got 1\n",
         .act = "{\"dtype\": \"i8\", \"bits\": 1}");
  EXPECT("t.json: activation.bits: 12 bits do not fit the 8-bit storage of "
         "u8\n",
         .act = "{\"dtype\": \"u8\", \"bits\": 12}");
  EXPECT("t.json: activation.dtype: required key is missing\n",
         .act = "{\"symmetric\": false}");
  EXPECT("t.json: activation.observer.bins: not a parameter of observer "
         "'percentile' (it takes 'percentile')\n",
         .act = "{\"dtype\": \"i8\", \"observer\": {\"kind\": \"percentile\", "
                "\"bins\": 10}}");
  EXPECT("t.json: activation.observer.momentum: not a parameter of observer "
         "'minmax' (it takes none)\n",
         .act = "{\"dtype\": \"i8\", \"observer\": {\"kind\": \"minmax\", "
                "\"momentum\": 0.5}}");
  EXPECT("t.json: activation.observer.momentum: must be in (0, 1), got 1\n",
         .act = "{\"dtype\": \"i8\", \"observer\": {\"kind\": "
                "\"ema_minmax\", \"momentum\": 1}}");
  EXPECT("t.json: activation.observer.percentile: must be in (0, 100], got "
         "101\n",
         .act = "{\"dtype\": \"i8\", \"observer\": {\"kind\": "
                "\"percentile\", \"percentile\": 101}}");
  EXPECT("t.json: weight.observer.bins: must be between 16 and 1048576, got "
         "8\n",
         .weight = "{\"dtype\": \"i8\", \"observer\": {\"kind\": \"kl\", "
                   "\"bins\": 8}}");
  EXPECT("t.json: activation.observer.kind: required key is missing\n",
         .act = "{\"dtype\": \"i8\", \"observer\": {}}");

  /* rounding vs requantization, fixed params, outputs */
  EXPECT("t.json: requantization: 'tflite' rounding requires 'fixed_point' "
         "requantization, got 'float'\n",
         .rounding = "\"tflite\"", .requant = "\"float\"");
  EXPECT("t.json: fixed_params.sigmoid.scale: must be positive and finite, "
         "got 0\n",
         .extra = ", \"fixed_params\": {\"sigmoid\": {\"scale\": 0, "
                  "\"zero_point\": 0}}");
  EXPECT("t.json: fixed_params.sigmoid.zero_point: 200 is outside the "
         "activation range [-128, 127]\n",
         .extra = ", \"fixed_params\": {\"sigmoid\": {\"scale\": 0.5, "
                  "\"zero_point\": 200}}");
  EXPECT("t.json: fixed_params.sigmoid.zero_point: must be 0 with symmetric "
         "activations, got -128\n",
         .act = "{\"dtype\": \"i8\", \"symmetric\": true}",
         .extra = ", \"fixed_params\": {\"sigmoid\": {\"scale\": 0.5, "
                  "\"zero_point\": -128}}");
  EXPECT("t.json: fixed_params.sigmoid.scale: 0.3 is not a power of two "
         "(activation.power_of_two is true)\n",
         .act = "{\"dtype\": \"i8\", \"power_of_two\": true}",
         .extra = ", \"fixed_params\": {\"sigmoid\": {\"scale\": 0.3, "
                  "\"zero_point\": 0}}");
  EXPECT("t.json: fixed_params.sigmoid.zero_point: required key is "
         "missing\n",
         .extra = ", \"fixed_params\": {\"sigmoid\": {\"scale\": 0.5}}");
  EXPECT("t.json: shared_params_ops: output parameters are meaningless with "
         "quantize_outputs = false\n",
         .extra = ", \"quantize_outputs\": false, \"shared_params_ops\": "
                  "[\"maxpool\"]");
  expect_text("{\"quill_backend\": 1, \"name\": \"my npu\", \"activation\": "
              "{\"dtype\": \"i8\"}, \"weight\": {\"dtype\": \"i8\"}, \"bias\": "
              "{\"dtype\": \"float\"}, \"rounding\": \"half_up\", "
              "\"requantization\": \"float\", \"quantize_ops\": []}",
              "t.json: name: 'my npu' is not a valid name (letters, digits, "
              "'.', '_' and '-' only)\n",
              __LINE__);
  EXPECT("t.json: description: must be one line\n",
         .extra = ", \"description\": \"a\\nb\"");

  /* several independent errors are all reported, in key order */
  EXPECT("t.json: activation.symmetric: symmetric quantization needs signed "
         "storage, got u8\n"
         "t.json: quantize_ops[0]: unknown op 'conv' (did you mean 'conv2d'?)\n",
         .act = "{\"dtype\": \"u8\", \"symmetric\": true}", .ops = "[\"conv\"]");
}

/* Names and paths: unknown names list the shipped configs; paths read
 * files; both are cached. */
static void test_get(void) {
  diags d;
  quill_context *ctx = new_ctx(&d);
  CHECK(quill_backend_get(ctx, "tflite") == NULL);
  CHECK(strcmp(d.text,
               "-: unknown backend 'tflite' (shipped: tflite-int8, x86-vnni, "
               "academic, tensorrt, power2, tflite-int16x8; a config file path "
               "must contain "
               "'/' or end in '.json')\n") == 0);
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

typedef struct fail_alloc {
  long budget; /* allocations left before failing; < 0: never fail */
  long live;
} fail_alloc;

static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  fail_alloc *fa = ud;
  (void)osize;
  if (nsize == 0) {
    if (ptr)
      fa->live--;
    free(ptr);
    return NULL;
  }
  if (fa->budget == 0)
    return NULL;
  if (fa->budget > 0)
    fa->budget--;
  void *p = realloc(ptr, nsize);
  if (p && !ptr)
    fa->live++;
  return p;
}

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
  test_errors();
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

/*
 * test_backend_errors.c - validation of backend configs (backends/
 * validate*.c): every error class with its exact message - JSON syntax,
 * the format version, required and unknown keys (with did-you-mean
 * suggestions), the plugin key, wrong types, enumerations, op names and
 * op lists, fusions Quill cannot lower, inconsistent schemes and
 * observers, rounding vs requantization, fixed params, outputs and names -
 * and several independent errors reported together in key order; first,
 * that the default parts parse, with and without a plugin.
 *
 * Each error case's config is assembled from parts (a valid default for
 * each key, overridden per case: EXPECT) so that it contains exactly one
 * mistake, parsed with quill_backend_parse, and must fail with exactly the
 * expected diagnostics, captured as "file: message" lines by
 * backend_harness.h (one check per case). The shipped configs, lookup,
 * allocation failure, scheme arithmetic and context slots are
 * test_backend.c.
 */
#include <stdio.h>
#include <string.h>

#include "test/unit/backend_harness.h"

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

int main(void) {
  test_errors();
  if (failures) {
    fprintf(stderr, "test_backend_errors: %d of %d checks failed\n", failures,
            checks);
    return 1;
  }
  printf("test_backend_errors: %d checks passed\n", checks);
  return 0;
}

/*
 * test_custom_op.c - unit tests of the `custom` op and the custom op
 * registry (ir/custom_op.c) and of its reference kernel
 * (targets/reference/kernels_custom.c):
 *
 *   - name validation and quill_op_custom_name;
 *   - registration: invalid names, duplicates, lookup, listing;
 *   - a registered verify hook runs after the generic checks;
 *   - quill_ref_run evaluates custom ops through the registered evaluator
 *     (values checked), reports unregistered kinds and kinds without an
 *     evaluator before running, and an evaluator failing without a
 *     diagnostic gets one;
 *   - registries are per context.
 */
#include <stdio.h>
#include <string.h>

#include "targets/reference/ref.h"
#include "test/unit/check.h"

typedef struct diags {
  unsigned errors;
  char last[512];
} diags;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  (void)loc;
  diags *d = ud;
  if (sev == QUILL_DIAG_ERROR)
    d->errors++;
  snprintf(d->last, sizeof d->last, "%s", msg);
}

/* acme.axpb: y = a * x + b elementwise on f32, a and b from attributes. */
static quill_status eval_axpb(quill_context *ctx, const quill_op *op,
                              const quill_tensor *in, quill_tensor *out) {
  (void)ctx;
  double a = quill_op_attr_float(op, "a", 1.0);
  double b = quill_op_attr_float(op, "b", 0.0);
  size_t n = quill_tensor_num_elements(&in[0]);
  for (size_t i = 0; i < n; i++)
    quill_tensor_set_f64(&out[0], i, a * quill_tensor_get_f64(&in[0], i) + b);
  return QUILL_OK;
}

/* acme.axpb takes exactly one operand and one result of the same type. */
static quill_status verify_axpb(quill_context *ctx, const quill_op *op) {
  if (quill_op_num_operands(op) != 1 || quill_op_num_results(op) != 1)
    return quill_error(ctx, quill_op_loc(op),
                       "acme.axpb takes one operand and one result");
  return QUILL_OK;
}

static quill_status eval_silent_failure(quill_context *ctx, const quill_op *op,
                                        const quill_tensor *in,
                                        quill_tensor *out) {
  (void)ctx, (void)op, (void)in, (void)out;
  return QUILL_ERR_INVALID;
}

static const quill_custom_op axpb = {"acme.axpb", "a*x+b", verify_axpb,
                                     eval_axpb};
static const quill_custom_op no_eval = {"acme.no_eval", "verify only", NULL,
                                        NULL};
static const quill_custom_op silent = {"acme.silent", "fails quietly", NULL,
                                       eval_silent_failure};

static void test_names(void) {
  CHECK(quill_custom_op_name_valid("acme.conv_add_relu"));
  CHECK(quill_custom_op_name_valid("a.b.c9_"));
  CHECK(!quill_custom_op_name_valid("acme"));
  CHECK(!quill_custom_op_name_valid(""));
  CHECK(!quill_custom_op_name_valid(NULL));
  CHECK(!quill_custom_op_name_valid(".x"));
  CHECK(!quill_custom_op_name_valid("x."));
  CHECK(!quill_custom_op_name_valid("a..b"));
  CHECK(!quill_custom_op_name_valid("a.b-c"));
  CHECK(!quill_custom_op_name_valid("a.b c"));
}

static void test_registry(void) {
  diags d = {0};
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, capture, &d);
  CHECK(quill_custom_op_num_registered(ctx) == 0);
  CHECK(quill_custom_op_find(ctx, "acme.axpb") == NULL);
  CHECK(quill_custom_op_register(ctx, &axpb) == QUILL_OK);
  CHECK(quill_custom_op_register(ctx, &no_eval) == QUILL_OK);
  CHECK(quill_custom_op_find(ctx, "acme.axpb") == &axpb);
  CHECK(quill_custom_op_find(ctx, "acme.nope") == NULL);
  CHECK(quill_custom_op_find(ctx, NULL) == NULL);
  CHECK(quill_custom_op_num_registered(ctx) == 2);
  CHECK(quill_custom_op_registered(ctx, 1) == &no_eval);
  CHECK(quill_custom_op_registered(ctx, 2) == NULL);
  CHECK(quill_custom_op_registered_origin(ctx, 0) == NULL);
  /* duplicates and bad names are errors and register nothing */
  CHECK(quill_custom_op_register(ctx, &axpb) == QUILL_ERR_INVALID);
  CHECK(strstr(d.last, "cannot register custom op 'acme.axpb': already "
                       "registered by the application") != NULL);
  static const quill_custom_op bad = {"axpb", "no vendor", NULL, NULL};
  CHECK(quill_custom_op_register(ctx, &bad) == QUILL_ERR_INVALID);
  CHECK(strstr(d.last, "cannot register custom op 'axpb': a custom op needs "
                       "a name \"vendor.op\"") != NULL);
  CHECK(quill_custom_op_register(ctx, NULL) == QUILL_ERR_INVALID);
  CHECK(quill_custom_op_num_registered(ctx) == 2);
  CHECK(d.errors == 3);
  /* another context has its own (empty) registry */
  quill_context *other = quill_context_create(NULL, NULL);
  CHECK(quill_custom_op_find(other, "acme.axpb") == NULL);
  quill_context_destroy(other);
  quill_context_destroy(ctx);
}

static const char *const src =
    "func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
    "  %y = custom %x {name = \"acme.axpb\", a = 2.0, b = 0.5} : tensor<3xf32>\n"
    "  %z = add %y, %x : tensor<3xf32>\n"
    "  return %z\n"
    "}\n";

/* Parse src with `name` substituted for acme.axpb, run it on [1, -2, 4]. */
static quill_status run_one(quill_context *ctx, const char *name,
                            float *result) {
  char text[512];
  const char *at = strstr(src, "acme.axpb");
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - src), src, name,
           at + strlen("acme.axpb"));
  quill_module *m = quill_parse_module(ctx, text, strlen(text), "t.qir", 0);
  if (!m)
    return QUILL_ERR_INTERNAL;
  quill_status st = quill_verify_module(m);
  quill_tensor in, out = {0};
  if (!st) {
    quill_graph *g = quill_module_graph(m, 0);
    st = quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g, 0)), &in);
    if (!st) {
      float x[3] = {1, -2, 4};
      memcpy(in.data, x, sizeof x);
      st = quill_ref_run(ctx, g, &in, 1, &out, 1);
      if (!st)
        memcpy(result, out.data, 3 * sizeof(float));
      quill_tensor_free(ctx, &out);
      quill_tensor_free(ctx, &in);
    }
  }
  quill_module_destroy(m);
  return st;
}

static void test_run(void) {
  diags d = {0};
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, capture, &d);
  float y[3] = {0};
  /* not registered: reported before anything runs */
  CHECK(run_one(ctx, "acme.axpb", y) == QUILL_ERR_UNSUPPORTED);
  CHECK(strstr(d.last, "op 'custom' is not supported by target 'reference' "
                       "(no custom op of this name is registered: load the "
                       "plugin that defines it)") != NULL);
  CHECK(quill_custom_op_register(ctx, &axpb) == QUILL_OK);
  CHECK(quill_custom_op_register(ctx, &no_eval) == QUILL_OK);
  CHECK(quill_custom_op_register(ctx, &silent) == QUILL_OK);
  d.errors = 0;
  /* y = 2x + 0.5, z = y + x = 3x + 0.5 */
  CHECK(run_one(ctx, "acme.axpb", y) == QUILL_OK);
  CHECK(y[0] == 3.5f && y[1] == -5.5f && y[2] == 12.5f);
  CHECK(d.errors == 0);
  CHECK(run_one(ctx, "acme.no_eval", y) == QUILL_ERR_UNSUPPORTED);
  CHECK(strstr(d.last, "(its registered kind has no reference evaluator)"));
  CHECK(run_one(ctx, "acme.silent", y) == QUILL_ERR_INVALID);
  CHECK(strstr(d.last, "custom op 'acme.silent': its evaluator failed "
                       "without a diagnostic") != NULL);
  quill_context_destroy(ctx);
}

static void test_verify_hook(void) {
  diags d = {0};
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(ctx, capture, &d);
  static const char *const two =
      "func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
      "  %y = custom %x, %x {name = \"acme.axpb\"} : tensor<3xf32>\n"
      "  return %y\n"
      "}\n";
  quill_module *m = quill_parse_module(ctx, two, strlen(two), "t.qir", 0);
  CHECK(m != NULL);
  /* unregistered: only the generic checks */
  CHECK(m && quill_verify_module(m) == QUILL_OK);
  CHECK(quill_custom_op_register(ctx, &axpb) == QUILL_OK);
  CHECK(m && quill_verify_module(m) == QUILL_ERR_INVALID);
  CHECK(strstr(d.last, "acme.axpb takes one operand and one result"));
  /* quill_op_custom_name */
  quill_op *op = m ? quill_graph_first_op(quill_module_graph(m, 0)) : NULL;
  CHECK(op && !strcmp(quill_op_custom_name(op), "acme.axpb"));
  CHECK(op && quill_op_custom_name(quill_op_next(op)) == NULL); /* return */
  if (m)
    quill_module_destroy(m);
  quill_context_destroy(ctx);
}

int main(void) {
  test_names();
  test_registry();
  test_run();
  test_verify_hook();
  printf("test_custom_op: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}

/*
 * test_quant_report.c - the quantization report through the C API
 * (passes/quant_report.h): the SQNR arithmetic on small vectors (exact
 * values, the inf and zero-signal cases), the rows of a small model
 * (statuses, reasons, fused rows, exact SQNRs where quantization is exact
 * or its error known), keep-float, accuracy, the JSON and CSV writers, and
 * allocation failure everywhere.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "passes/quant_report.h"

static int failures;
#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      failures++;                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,       \
              #cond);                                                         \
    }                                                                         \
  } while (0)

/* ---- SQNR arithmetic ------------------------------------------------------------ */

static double db_of(const double *x, const double *xq, size_t n) {
  quill_sqnr s = {0};
  quill_sqnr_add(&s, x, xq, n);
  return quill_sqnr_db(&s);
}

static void test_sqnr(void) {
  /* signal 25, noise 0.25: exactly 20 dB */
  double a[] = {3, 4}, aq[] = {3, 4.5};
  CHECK(db_of(a, aq, 2) == 20.0);
  /* signal 30, noise 1 */
  double b[] = {1, 2, 3, 4}, bq[] = {1, 2, 3, 5};
  CHECK(fabs(db_of(b, bq, 4) - 14.771212547196624) < 1e-12);
  /* equal vectors: inf, also when all zero */
  CHECK(isinf(db_of(a, a, 2)) && db_of(a, a, 2) > 0);
  double z[] = {0, 0}, zq[] = {0.5, 0};
  CHECK(isinf(db_of(z, z, 2)) && db_of(z, z, 2) > 0);
  /* zero signal, some noise: -inf */
  CHECK(isinf(db_of(z, zq, 2)) && db_of(z, zq, 2) < 0);
  /* sums accumulate over calls (samples): (4 + 16) / (1 + 0) */
  quill_sqnr s = {0};
  double c0[] = {2}, c0q[] = {1}, c1[] = {4};
  quill_sqnr_add(&s, c0, c0q, 1);
  quill_sqnr_add(&s, c1, c1, 1);
  CHECK(s.signal == 20 && s.noise == 1 && s.count == 2);
  CHECK(fabs(quill_sqnr_db(&s) - 10 * log10(20.0)) < 1e-12);
  /* nothing added: inf (0 noise), count 0 marks "not measured" */
  quill_sqnr e = {0};
  CHECK(e.count == 0 && isinf(quill_sqnr_db(&e)));
}

/* ---- a small model ---------------------------------------------------------------- */

/* gemm (weights exact in i8: per-channel amax 127 -> scale 1) + relu (fused
 * by tflite-int8) + neg (not in quantize_ops: float). */
static const char model[] =
    "func @main(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {\n"
    "  %w = constant {value = dense<[127.0, 3.0, -5.0, 2.0, -127.0, 1.0, "
    "0.0, 64.0]> : tensor<2x4xf32>} : tensor<2x4xf32>\n"
    "  %b = constant {value = dense<[0.5, -0.5]> : tensor<2xf32>} : "
    "tensor<2xf32>\n"
    "  %y = gemm %x, %w, %b {alpha = 1.0, beta = 1.0, trans_a = 0, "
    "trans_b = 1} : tensor<1x2xf32> loc(\"fc\")\n"
    "  %r = relu %y : tensor<1x2xf32> loc(\"act\")\n"
    "  %n = neg %r : tensor<1x2xf32> loc(\"negate\")\n"
    "  return %n\n"
    "}\n";

typedef struct counter {
  long budget; /* allocations left before failing; < 0: unlimited */
} counter;

static void *count_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  counter *c = ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  if (c->budget == 0)
    return NULL;
  if (c->budget > 0)
    c->budget--;
  return realloc(ptr, nsize);
}

typedef struct fixture {
  counter cnt;
  quill_context *ctx;
  quill_module *m;
  quill_calib_dataset *ds;
  quill_tensor xs[2];
  char diag[2048];
} fixture;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  fixture *f = ud;
  (void)loc;
  size_t n = strlen(f->diag);
  snprintf(f->diag + n, sizeof f->diag - n, "%s: %s\n",
           quill_diag_severity_name(sev), msg);
}

static void teardown(fixture *f) {
  for (int i = 0; i < 2; i++)
    quill_tensor_free(f->ctx, &f->xs[i]);
  quill_calib_dataset_destroy(f->ds);
  if (f->m)
    quill_module_destroy(f->m);
  quill_context_destroy(f->ctx);
}

/* Input samples: [-128, 127, 0.5, 3] (range [-128, 127]: scale 1, zp 0;
 * 0.5 quantizes to 1 with tflite rounding) and [1, 2, -3, 4]. */
static quill_status setup(fixture *f) {
  memset(f, 0, sizeof *f);
  f->cnt.budget = -1;
  f->ctx = quill_context_create(count_alloc, &f->cnt);
  if (!f->ctx)
    return QUILL_ERR_NOMEM;
  quill_diag_set_handler(f->ctx, capture, f);
  f->m = quill_parse_module(f->ctx, model, strlen(model), "t.qir", 0);
  if (!f->m || quill_verify_module(f->m))
    return QUILL_ERR_INVALID;
  static const double v[2][4] = {{-128, 127, 0.5, 3}, {1, 2, -3, 4}};
  quill_type *t = quill_parse_type(f->ctx, "tensor<1x4xf32>", 15);
  f->ds = quill_calib_dataset_create(f->ctx, quill_module_graph(f->m, 0));
  if (!t || !f->ds)
    return QUILL_ERR_NOMEM;
  for (int i = 0; i < 2; i++) {
    quill_status st = quill_tensor_alloc(f->ctx, t, &f->xs[i]);
    if (st)
      return st;
    for (size_t k = 0; k < 4; k++)
      quill_tensor_set_f64(&f->xs[i], k, v[i][k]);
    if ((st = quill_calib_dataset_add(f->ds, &f->xs[i], 1, NULL)))
      return st;
  }
  return QUILL_OK;
}

static const quill_report_row *row_named(const quill_quant_report *r,
                                         const char *name) {
  for (size_t i = 0; i < quill_quant_report_num_rows(r); i++)
    if (!strcmp(quill_quant_report_row(r, i)->name, name))
      return quill_quant_report_row(r, i);
  return NULL;
}

/* The shipped tflite-int8 config with the minmax activation observer (the
 * shipped one is mse), written to path: the values below are computed by
 * hand from the calibration data's min and max. */
static const char *minmax_tflite(const char *path) {
  const char *text = NULL;
  for (unsigned i = 0; quill_backend_shipped_name(i); i++)
    if (!strcmp(quill_backend_shipped_name(i), "tflite-int8"))
      text = quill_backend_shipped_text(i);
  const char *obs = text ? strstr(text, "\"observer\": \"mse\"") : NULL;
  const char *name = text ? strstr(text, "\"tflite-int8\"") : NULL;
  FILE *fp = obs && name && name < obs ? fopen(path, "w") : NULL;
  if (!fp)
    return NULL;
  const char *after_name = name + strlen("\"tflite-int8\"");
  fprintf(fp, "%.*s\"tflite-int8-minmax\"%.*s\"observer\": \"minmax\"%s",
          (int)(name - text), text, (int)(obs - after_name), after_name,
          obs + strlen("\"observer\": \"mse\""));
  fclose(fp);
  return path;
}

static void test_rows(void) {
  fixture f;
  quill_quant_report *r = NULL;
  CHECK(setup(&f) == QUILL_OK);
  const char *cfg = minmax_tflite("test_quant_report-minmax.json");
  CHECK(cfg != NULL);
  quill_quantize_options o = {.backend = cfg ? cfg : "tflite-int8"};
  CHECK(quill_quant_report_create(f.ctx, f.m, &o, f.ds, &r) == QUILL_OK);
  if (!r) {
    fprintf(stderr, "%s", f.diag);
    teardown(&f);
    return;
  }
  CHECK(quill_quant_report_num_samples(r) == 2);
  CHECK(quill_quant_report_num_rows(r) == 4);
  const char *order[] = {"x", "fc", "act", "negate"};
  for (size_t i = 0; i < 4 && i < quill_quant_report_num_rows(r); i++)
    CHECK(!strcmp(quill_quant_report_row(r, i)->name, order[i]));

  /* the input: only 0.5 -> 1 is off: signal 128^2 + 127^2 + 0.25 + 9 +
   * (1 + 4 + 9 + 16), noise 0.25 */
  const quill_report_row *x = row_named(r, "x");
  CHECK(x && x->status == QUILL_REPORT_QUANTIZED && x->output_quant &&
        quill_type_quant_scales(x->output_quant)[0] == 1.0 &&
        quill_type_quant_zero_points(x->output_quant)[0] == 0);
  CHECK(x && x->sqnr.count == 8 && x->sqnr.noise == 0.25 &&
        x->sqnr.signal == 16384 + 16129 + 0.25 + 9 + 30);
  CHECK(x && !strcmp(x->reason, "graph input"));

  /* gemm: quantized, weights exact (per-axis scale 1: SQNR inf), fused relu */
  const quill_report_row *fc = row_named(r, "fc");
  CHECK(fc && fc->status == QUILL_REPORT_QUANTIZED &&
        !strcmp(fc->opcode, "gemm") && fc->activation &&
        !strcmp(fc->activation, "relu") && !strcmp(fc->reason, "in quantize_ops"));
  CHECK(fc && fc->weight_quant &&
        quill_type_quant_axis_of(fc->weight_quant) == 0 &&
        quill_type_quant_scales(fc->weight_quant)[0] == 1.0 &&
        quill_type_quant_scales(fc->weight_quant)[1] == 1.0);
  CHECK(fc && fc->weight_sqnr.count == 8 && fc->weight_sqnr.noise == 0 &&
        isinf(quill_sqnr_db(&fc->weight_sqnr)));
  CHECK(fc && fc->output_quant && fc->sqnr.count == 4 &&
        fc->sqnr.noise > 0 && quill_sqnr_db(&fc->sqnr) > 30);

  const quill_report_row *act = row_named(r, "act");
  CHECK(act && act->status == QUILL_REPORT_FUSED && act->fused_into &&
        !strcmp(act->fused_into, "fc") && act->sqnr.count == 0 &&
        !strcmp(act->reason, "fused into producer fc"));

  /* neg: float; its output is the model's output, same sums */
  const quill_report_row *neg = row_named(r, "negate");
  CHECK(neg && neg->status == QUILL_REPORT_FLOAT && !neg->output_quant &&
        !strcmp(neg->reason, "not in the backend's quantize_ops"));
  CHECK(quill_quant_report_num_outputs(r) == 1);
  const quill_report_output *out = quill_quant_report_output(r, 0);
  CHECK(out && !strcmp(out->name, "n") && neg &&
        out->sqnr.signal == neg->sqnr.signal &&
        out->sqnr.noise == neg->sqnr.noise && out->sqnr.count == 4);

  /* accuracy: argmax of -relu(gemm) per sample. Float: [0, -16574.5] ->
   * 0 and [-156.5, -130.5] -> 1. Quantized, the output scale is about
   * 127 (range [-15871, 16574.5]), so 156.5 and 130.5 both become one
   * step: a tie, argmax 0. */
  int64_t lab[2] = {0, 1};
  quill_type *lt = quill_parse_type(f.ctx, "tensor<2xi64>", 13);
  quill_tensor labels;
  CHECK(quill_tensor_alloc(f.ctx, lt, &labels) == QUILL_OK);
  for (int i = 0; i < 2; i++)
    quill_tensor_set_i64(&labels, (size_t)i, lab[i]);
  CHECK(quill_quant_report_eval_accuracy(r, f.ds, &labels) == QUILL_OK);
  const quill_report_accuracy *acc = quill_quant_report_accuracy(r);
  CHECK(acc->count == 2 && acc->float_correct == 2 &&
        acc->quant_correct == 1 && acc->agree == 1);
  quill_tensor wrong = labels;
  wrong.type = quill_parse_type(f.ctx, "tensor<1xi64>", 13);
  wrong.size = 8;
  CHECK(quill_quant_report_eval_accuracy(r, f.ds, &wrong) ==
        QUILL_ERR_INVALID);
  CHECK(strstr(f.diag, "report: 1 labels for 2 rows (2 samples x 1 rows of "
                       "the first output)") != NULL);
  quill_tensor_free(f.ctx, &labels);

  /* JSON: field names and values */
  quill_strbuf sb;
  quill_strbuf_init(&sb, f.ctx);
  CHECK(quill_quant_report_write(r, QUILL_REPORT_JSON, "t.qir", &sb) ==
        QUILL_OK);
  json_error_t err;
  json_t *j = json_loads(quill_strbuf_str(&sb), 0, &err);
  CHECK(j != NULL);
  json_t *rows = json_object_get(j, "rows");
  CHECK(json_array_size(rows) == 4);
  json_t *r1 = json_array_get(rows, 1);
  CHECK(!strcmp(json_string_value(json_object_get(r1, "name")), "fc"));
  CHECK(!strcmp(json_string_value(json_object_get(r1, "weight_sqnr_db")),
                "inf"));
  CHECK(json_integer_value(json_object_get(
            json_object_get(r1, "weight"), "channels")) == 2);
  CHECK(json_real_value(json_object_get(json_array_get(rows, 0), "noise")) ==
        0.25);
  CHECK(json_is_null(json_object_get(json_array_get(rows, 2), "sqnr_db")));
  CHECK(json_integer_value(json_object_get(json_object_get(j, "accuracy"),
                                           "count")) == 2);
  json_decref(j);

  /* CSV: the header, the fused row, the output row */
  quill_strbuf_clear(&sb);
  CHECK(quill_quant_report_write(r, QUILL_REPORT_CSV, NULL, &sb) == QUILL_OK);
  const char *csv = quill_strbuf_str(&sb);
  CHECK(!strncmp(csv, "name,opcode,activation,status,reason,fused_into,dtype,"
                      "scale,zero_point,weight_dtype,weight_channels,"
                      "weight_scale_min,weight_scale_max,weight_sqnr_db,"
                      "sqnr_db\n",
                 155));
  CHECK(strstr(csv, "\nact,relu,,fused,fused into producer fc,fc,,,,,,,,,\n"));
  CHECK(strstr(csv, "\nx,input,,quantized,graph input,,i8,1,0,,,,,,51.1"));
  CHECK(strstr(csv, "\nn,output,,output,"));
  quill_strbuf_free(&sb);
  quill_quant_report_destroy(r);
  teardown(&f);
}

static void test_keep_float(void) {
  fixture f;
  quill_quant_report *r = NULL;
  CHECK(setup(&f) == QUILL_OK);
  quill_quantize_options o = {.backend = "tflite-int8", .keep_float = "fc"};
  CHECK(quill_quant_report_create(f.ctx, f.m, &o, f.ds, &r) == QUILL_OK);
  const quill_report_row *fc = r ? row_named(r, "fc") : NULL;
  CHECK(fc && fc->status == QUILL_REPORT_FLOAT &&
        !strcmp(fc->reason, "keep-float by user") && !fc->weight_quant &&
        !fc->output_quant);
  CHECK(r && !strcmp(quill_quant_report_keep_float(r), "fc"));
  quill_quant_report_destroy(r);
  teardown(&f);
  /* an unknown backend: the config loader's error */
  CHECK(setup(&f) == QUILL_OK);
  quill_quantize_options bad = {.backend = "nope"};
  CHECK(quill_quant_report_create(f.ctx, f.m, &bad, f.ds, &r) ==
        QUILL_ERR_INVALID);
  CHECK(r == NULL && strstr(f.diag, "unknown backend 'nope'"));
  teardown(&f);
}

/* Fail at every allocation in turn: each attempt succeeds or fails with a
 * status (no crash; leaks are caught by the sanitizer build). */
static void test_oom(void) {
  bool succeeded = false;
  for (long budget = 0; budget < 20000 && !succeeded; budget++) {
    fixture f;
    if (setup(&f) != QUILL_OK) {
      CHECK(false);
      teardown(&f);
      return;
    }
    f.cnt.budget = budget;
    quill_quant_report *r = NULL;
    quill_quantize_options o = {.backend = "tflite-int8"};
    quill_status st = quill_quant_report_create(f.ctx, f.m, &o, f.ds, &r);
    CHECK((st == QUILL_OK) == (r != NULL));
    quill_strbuf sb;
    quill_strbuf_init(&sb, f.ctx);
    for (int fmt = QUILL_REPORT_TEXT; !st && fmt <= QUILL_REPORT_HTML; fmt++)
      st = quill_quant_report_write(r, (quill_report_format)fmt, "m", &sb);
    quill_strbuf_free(&sb);
    f.cnt.budget = -1;
    if (st == QUILL_OK) {
      succeeded = true;
      if (getenv("QUILL_TEST_VERBOSE"))
        fprintf(stderr, "test_oom: succeeded with budget %ld\n", budget);
    } else {
      CHECK(st == QUILL_ERR_NOMEM || st == QUILL_ERR_INVALID);
    }
    quill_quant_report_destroy(r);
    teardown(&f);
  }
  CHECK(succeeded);
}

int main(void) {
  test_sqnr();
  test_rows();
  test_keep_float();
  test_oom();
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}

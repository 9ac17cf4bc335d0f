/*
 * test_calibrate.c - calibration through the C API: pass-manager inputs,
 * in-memory datasets (passes/calib_data.h), the list-file parser
 * (passes/calib_list.h), the observers
 * (passes/observers.h), calibrate + quantize with a dataset handed over as
 * the "calibration-data" input, and allocation failure everywhere.
 *
 * Graphs are parsed from text; diagnostics are captured; the context uses a
 * counting allocator that can be told to fail after N allocations.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/calib_data.h"
#include "passes/calib_list.h"
#include "passes/observers.h"
#include "passes/pass.h"
#include "targets/reference/ref.h"

static int failures;
#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      failures++;                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,       \
              #cond);                                                         \
    }                                                                         \
  } while (0)

/* ---- fixture ------------------------------------------------------------------ */

typedef struct counter {
  size_t live;
  long budget; /* allocations left before failing; < 0: unlimited */
} counter;

static void *count_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  counter *c = ud;
  if (nsize == 0) {
    if (ptr)
      c->live -= osize;
    free(ptr);
    return NULL;
  }
  if (c->budget == 0)
    return NULL;
  if (c->budget > 0)
    c->budget--;
  void *p = realloc(ptr, nsize);
  if (p)
    c->live += nsize - (ptr ? osize : 0);
  return p;
}

typedef struct fixture {
  counter cnt;
  quill_context *ctx;
  quill_module *m;
  quill_graph *g;
  char diag[2048];
  unsigned errors, warnings;
} fixture;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  fixture *f = ud;
  size_t n = strlen(f->diag);
  snprintf(f->diag + n, sizeof f->diag - n, "%s%s%s\n",
           loc.file ? "<file>: " : "", quill_diag_severity_name(sev), msg);
  f->errors += sev == QUILL_DIAG_ERROR;
  f->warnings += sev == QUILL_DIAG_WARNING;
}

static bool saw(const fixture *f, const char *needle) {
  return strstr(f->diag, needle) != NULL;
}

static bool setup(fixture *f, const char *src) {
  memset(f, 0, sizeof *f);
  f->cnt.budget = -1;
  f->ctx = quill_context_create(count_alloc, &f->cnt);
  quill_diag_set_handler(f->ctx, capture, f);
  f->m = quill_parse_module(f->ctx, src, strlen(src), "t.qir", 0);
  if (!f->m || quill_verify_module(f->m)) {
    fprintf(stderr, "setup failed: %s\n", f->diag);
    return false;
  }
  f->g = quill_module_graph(f->m, 0);
  return true;
}

static void teardown(fixture *f) {
  if (f->m)
    quill_module_destroy(f->m);
  quill_context_destroy(f->ctx);
}

static quill_tensor make(fixture *f, const char *ty, const double *vals) {
  quill_tensor t;
  quill_type *type = quill_parse_type(f->ctx, ty, strlen(ty));
  if (!type || quill_tensor_alloc(f->ctx, type, &t) != QUILL_OK) {
    memset(&t, 0, sizeof t);
    return t;
  }
  for (size_t i = 0; i < quill_tensor_num_elements(&t); i++)
    quill_tensor_set_f64(&t, i, vals[i]);
  return t;
}

/* The n-th fake_quant (or op of opcode opc) of the graph. */
static quill_op *nth_op(const quill_graph *g, quill_opcode opc, unsigned n) {
  QUILL_GRAPH_FOREACH(g, op) {
    if (quill_op_opcode(op) == opc && n-- == 0)
      return op;
  }
  return NULL;
}

/* ---- pass-manager inputs --------------------------------------------------------- */

static void *seen_input;

static quill_status read_input(quill_pass_state *ps, quill_module *m) {
  (void)m;
  seen_input = quill_pass_input(ps, "thing");
  return QUILL_OK;
}

static const quill_pass input_reader = {.name = "input-reader",
                                        .summary = "reads 'thing'",
                                        .run = read_input};

static void test_pass_inputs(void) {
  fixture f;
  if (!setup(&f, "func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                 "  return %x\n}\n")) {
    CHECK(false);
    return;
  }
  int a = 1, b = 2;
  quill_pass_manager *pm = quill_pass_manager_create(f.ctx);
  CHECK(quill_pass_manager_add_pass(pm, &input_reader, NULL) == QUILL_OK);
  seen_input = &f;
  CHECK(quill_pass_manager_run(pm, f.m) == QUILL_OK);
  CHECK(seen_input == NULL); /* nothing set */
  CHECK(quill_pass_manager_set_input(pm, "thing", &a) == QUILL_OK);
  CHECK(quill_pass_manager_set_input(pm, "other", &b) == QUILL_OK);
  CHECK(quill_pass_manager_run(pm, f.m) == QUILL_OK);
  CHECK(seen_input == &a);
  CHECK(quill_pass_manager_set_input(pm, "thing", &b) == QUILL_OK);
  CHECK(quill_pass_manager_run(pm, f.m) == QUILL_OK);
  CHECK(seen_input == &b); /* replaced */
  CHECK(quill_pass_manager_set_input(pm, "thing", NULL) == QUILL_OK);
  CHECK(quill_pass_manager_run(pm, f.m) == QUILL_OK);
  CHECK(seen_input == NULL); /* removed */
  quill_pass_manager_destroy(pm);
  teardown(&f);
}

/* ---- datasets from memory ---------------------------------------------------------- */

static const char *two_inputs =
    "func @f(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {\n"
    "  %a = add %x, %y : tensor<2x3xf32>\n"
    "  %q = fake_quant %a {observer = \"minmax\"} : tensor<2x3xf32>\n"
    "  return %q\n}\n";

static void test_dataset_memory(void) {
  fixture f;
  if (!setup(&f, two_inputs)) {
    CHECK(false);
    return;
  }
  quill_calib_dataset *ds = quill_calib_dataset_create(f.ctx, f.g);
  CHECK(ds && quill_calib_dataset_num_inputs(ds) == 2);
  CHECK(!strcmp(quill_calib_dataset_input_name(ds, 1), "y"));
  double xv[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  double yv[6] = {-1, -2, -3, -4, -5, -6};
  quill_tensor one[2] = {make(&f, "tensor<2x3xf32>", xv),
                         make(&f, "tensor<3xf32>", yv)};
  quill_tensor two[2] = {make(&f, "tensor<4x3xf32>", xv),
                         make(&f, "tensor<6xf32>", yv)};
  CHECK(quill_calib_dataset_add(ds, one, 2, NULL) == QUILL_OK);
  CHECK(quill_calib_dataset_add(ds, two, 2, "mem") == QUILL_OK);
  CHECK(quill_calib_dataset_size(ds) == 3);
  CHECK(!strcmp(quill_calib_dataset_origin(ds, 0, 0), "sample #0"));
  CHECK(!strcmp(quill_calib_dataset_origin(ds, 2, 1), "mem[1]"));
  /* the batch is split along dimension 0: the second half of each */
  const quill_tensor *s2 = quill_calib_dataset_sample(ds, 2);
  CHECK(quill_tensor_get_f64(&s2[0], 0) == 7 &&
        quill_tensor_get_f64(&s2[0], 5) == 12);
  CHECK(quill_tensor_get_f64(&s2[1], 0) == -4);
  CHECK(s2[0].type == quill_calib_dataset_input_type(ds, 0));
  /* the data was copied: changing the caller's tensors changes nothing */
  quill_tensor_set_f64(&two[0], 6, 99);
  CHECK(quill_tensor_get_f64(&s2[0], 0) == 7);

  /* errors: wrong count, different batch sizes, wrong types */
  CHECK(quill_calib_dataset_add(ds, one, 1, NULL) == QUILL_ERR_INVALID);
  CHECK(saw(&f, "calibration sample: 1 tensors given for a graph with 2 "
                "inputs"));
  quill_tensor mixed[2] = {two[0], one[1]};
  CHECK(quill_calib_dataset_add(ds, mixed, 2, "mixed") == QUILL_ERR_INVALID);
  CHECK(saw(&f, "input 'y' holds 1 samples but input 'x' holds 2"));
  quill_tensor swapped[2] = {one[1], one[0]};
  CHECK(quill_calib_dataset_add(ds, swapped, 2, "swapped") ==
        QUILL_ERR_INVALID);
  CHECK(saw(&f, "input 'x' expects tensor<2x3xf32> (or a batch of such "
                "samples stacked along dimension 0), got tensor<3xf32>"));
  CHECK(quill_calib_dataset_size(ds) == 3);

  /* max samples: the rest of a batch is dropped */
  quill_calib_dataset_set_max_samples(ds, 4);
  CHECK(quill_calib_dataset_add(ds, two, 2, "more") == QUILL_OK);
  CHECK(quill_calib_dataset_size(ds) == 4);
  CHECK(quill_calib_dataset_check_graph(ds, f.g) == QUILL_OK);
  quill_calib_dataset_destroy(ds);
  for (unsigned i = 0; i < 2; i++) {
    quill_tensor_free(f.ctx, &one[i]);
    quill_tensor_free(f.ctx, &two[i]);
  }
  teardown(&f);
}

static void test_dataset_checks(void) {
  fixture f;
  if (!setup(&f, "func @d(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {\n"
                 "  return %x\n}\n"
                 "func @e(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
                 "  return %x\n}\n")) {
    CHECK(false);
    return;
  }
  CHECK(quill_calib_dataset_create(f.ctx, f.g) == NULL);
  CHECK(saw(&f, "input 'x' has the dynamic type tensor<?x3xf32>"));
  quill_calib_dataset *ds =
      quill_calib_dataset_create(f.ctx, quill_module_graph(f.m, 1));
  CHECK(quill_calib_dataset_check_graph(ds, f.g) == QUILL_ERR_INVALID);
  CHECK(saw(&f, "calibration input 'x' has type tensor<2x3xf32>, the "
                "graph's input 0 has tensor<?x3xf32>"));
  quill_calib_dataset_destroy(ds);
  quill_calib_dataset_destroy(NULL);
  teardown(&f);
}

/* ---- observers ----------------------------------------------------------------------- */

static void test_observers(void) {
  fixture f;
  if (!setup(&f, "func @f(%x: tensor<f32>) -> tensor<f32> {\n"
                 "  return %x\n}\n")) {
    CHECK(false);
    return;
  }
  quill_quant_scheme s = {.storage = QUILL_TYPE_I8, .bits = 8, .qmin = -128,
                          .qmax = 127};
  /* per channel along axis 1 of [2, 3, 2]: inner 2, channel (i / 2) % 3 */
  double v[12] = {1, 2, -3, 4, 5, 6, 7, -8, 9, 10, 11, 12};
  quill_tensor t = make(&f, "tensor<2x3x2xf32>", v);
  quill_observer *o = quill_observer_create(f.ctx, &s, 3);
  CHECK(o && !quill_observer_needs_histogram(o));
  quill_observer_add_range(o, &t, 2);
  double lo, hi;
  quill_observer_range(o, 0, &lo, &hi);
  CHECK(lo == -8 && hi == 7); /* 1, 2, 7, -8 */
  quill_observer_range(o, 1, &lo, &hi);
  CHECK(lo == -3 && hi == 10); /* -3, 4, 9, 10 */
  quill_observer_range(o, 2, &lo, &hi);
  CHECK(lo == 5 && hi == 12);
  quill_observer_range(o, 3, &lo, &hi); /* out of range: 0, 0 */
  CHECK(lo == 0 && hi == 0);
  quill_observer_destroy(o);

  /* ema: 0.75 * old + 0.25 * new after the first run */
  s.observer.kind = QUILL_OBSERVER_EMA_MINMAX;
  s.observer.momentum = 0.75;
  o = quill_observer_create(f.ctx, &s, 1);
  double a[2] = {-1, 1}, b[2] = {-5, 9};
  quill_tensor ta = make(&f, "tensor<2xf32>", a);
  quill_tensor tb = make(&f, "tensor<2xf32>", b);
  quill_observer_add_range(o, &ta, 2);
  quill_observer_add_range(o, &tb, 2);
  quill_observer_range(o, 0, &lo, &hi);
  CHECK(lo == -2 && hi == 3);
  quill_observer_destroy(o);

  /* percentile 50 over |x| of 0..99 (symmetric, 2048 bins of 99/2048):
   * the 50th value is 49, and the interpolation ends at the top of its
   * bin; the negative side is clipped to the data (min 0) */
  s.observer.kind = QUILL_OBSERVER_PERCENTILE;
  s.observer.percentile = 50;
  s.symmetric = true;
  s.qmin = -127;
  double r[100];
  for (int i = 0; i < 100; i++)
    r[i] = i;
  quill_tensor tr = make(&f, "tensor<100xf32>", r);
  o = quill_observer_create(f.ctx, &s, 1);
  CHECK(quill_observer_needs_histogram(o));
  quill_observer_add_range(o, &tr, 100);
  CHECK(quill_observer_start_histogram(o) == QUILL_OK);
  quill_observer_add_histogram(o, &tr, 100);
  quill_observer_range(o, 0, &lo, &hi);
  CHECK(lo == 0 && hi > 49 && hi <= 49 + 99.0 / 2048);
  quill_observer_destroy(o);
  quill_tensor_free(f.ctx, &t);
  quill_tensor_free(f.ctx, &ta);
  quill_tensor_free(f.ctx, &tb);
  quill_tensor_free(f.ctx, &tr);
  teardown(&f);
}

/* ---- calibrate + quantize from memory ------------------------------------------------ */

static const char *net =
    "func @f(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {\n"
    "  %xq = fake_quant %x {role = \"activation\", dtype = i8, qmin = -128, "
    "qmax = 127, symmetric = false, axis = -1, power_of_two = false, "
    "observer = \"minmax\"} : tensor<1x4xf32>\n"
    "  %w = constant {value = dense<[[1.0, -1.0, 0.5, 0.0], [0.25, 0.25, "
    "0.25, 0.25]]> : tensor<2x4xf32>} : tensor<2x4xf32>\n"
    "  %wq = fake_quant %w {role = \"weight\", dtype = i8, qmin = -127, "
    "qmax = 127, symmetric = true, axis = 0, power_of_two = false, observer "
    "= \"minmax\"} : tensor<2x4xf32>\n"
    "  %b = constant {value = dense<[0.5, -0.5]> : tensor<2xf32>} : "
    "tensor<2xf32>\n"
    "  %g = gemm %xq, %wq, %b {trans_b = 1} : tensor<1x2xf32>\n"
    "  %gq = fake_quant %g {role = \"activation\", dtype = i8, qmin = -128, "
    "qmax = 127, symmetric = false, axis = -1, power_of_two = false, "
    "observer = \"minmax\"} : tensor<1x2xf32>\n"
    "  return %gq\n}\n";

/* Run calibrate + quantize with an in-memory dataset; QUILL_OK or the
 * failing status. */
static quill_status quantize_in_memory(fixture *f, const quill_tensor *xs,
                                       unsigned n) {
  quill_calib_dataset *ds = quill_calib_dataset_create(f->ctx, f->g);
  quill_pass_manager *pm = ds ? quill_pass_manager_create(f->ctx) : NULL;
  quill_status st = pm ? QUILL_OK : QUILL_ERR_NOMEM;
  for (unsigned i = 0; !st && i < n; i++)
    st = quill_calib_dataset_add(ds, &xs[i], 1, NULL);
  if (!st)
    st = quill_pass_manager_parse_pipeline(pm, "calibrate,quantize");
  if (!st)
    st = quill_pass_manager_set_input(pm, "calibration-data", ds);
  if (!st)
    st = quill_pass_manager_run(pm, f->m);
  quill_pass_manager_destroy(pm);
  quill_calib_dataset_destroy(ds);
  return st;
}

static void test_calibrate_in_memory(void) {
  fixture f;
  if (!setup(&f, net)) {
    CHECK(false);
    return;
  }
  double x0[4] = {1, -2, 0.5, 3}, x1[4] = {-1, 2, 2, -0.5};
  quill_tensor xs[2] = {make(&f, "tensor<1x4xf32>", x0),
                        make(&f, "tensor<1x4xf32>", x1)};
  CHECK(quantize_in_memory(&f, xs, 2) == QUILL_OK);
  CHECK(f.errors == 0 && f.warnings == 0);
  CHECK(nth_op(f.g, QUILL_OP_FAKE_QUANT, 0) == NULL);
  /* input: [-2, 3] -> scale 5/255, zp round(-128 + 102) = -26 */
  quill_op *q = nth_op(f.g, QUILL_OP_QUANTIZE, 0);
  quill_type *qe = q ? quill_type_elem(quill_value_type(quill_op_result(q, 0)))
                     : NULL;
  CHECK(qe && quill_type_quant_scales(qe)[0] == 5.0 / 255 &&
        quill_type_quant_zero_points(qe)[0] == -26);
  /* the i32 bias: scales s_x * s_w[c] */
  quill_op *gemm = nth_op(f.g, QUILL_OP_GEMM, 0);
  quill_op *bdq = gemm ? quill_value_def(quill_op_operand(gemm, 2)) : NULL;
  CHECK(bdq && quill_op_opcode(bdq) == QUILL_OP_DEQUANTIZE);
  const quill_attr *bias =
      bdq ? quill_value_constant(quill_op_operand(bdq, 0)) : NULL;
  CHECK(bias != NULL);
  if (bias) {
    quill_type *be = quill_type_elem(quill_attr_dense_type(bias));
    double sb0 = 5.0 / 255 * (2.0 / 254), sb1 = 5.0 / 255 * (0.5 / 254);
    CHECK(quill_type_quant_scales(be)[0] == sb0 &&
          quill_type_quant_scales(be)[1] == sb1);
    CHECK(quill_attr_dense_get_i64(bias, 0) == (int64_t)lround(0.5 / sb0));
    CHECK(quill_attr_dense_get_i64(bias, 1) ==
          (int64_t)lround((float)-0.5 / (float)sb1));
  }
  /* the quantized graph runs and stays close to the float result */
  quill_tensor y;
  CHECK(quill_ref_run(f.ctx, f.g, &xs[0], 1, &y, 1) == QUILL_OK);
  double want0 = 1 + 2 + 0.25 + 0.5, want1 = 0.25 * 2.5 - 0.5;
  CHECK(fabs(quill_tensor_get_f64(&y, 0) - want0) < 0.05);
  CHECK(fabs(quill_tensor_get_f64(&y, 1) - want1) < 0.05);
  quill_tensor_free(f.ctx, &y);
  quill_tensor_free(f.ctx, &xs[0]);
  quill_tensor_free(f.ctx, &xs[1]);
  teardown(&f);
}

/* ---- list files ----------------------------------------------------------------- */

/* The list parser on text in memory (for two_inputs' x and y): rows in input order whatever the
 * order on the line, comments, blank lines, CRLF and tabs skipped,
 * relative paths joined to the base, absolute ones kept; max_rows; one
 * error per malformed line; every allocation failure a status with
 * nothing leaked (the counting allocator checks the sizes freed). */
static void test_list_parse(void) {
  fixture f;
  if (!setup(&f, two_inputs)) {
    CHECK(false);
    return;
  }
  quill_calib_dataset *ds = quill_calib_dataset_create(f.ctx, f.g);
  CHECK(ds != NULL);
  if (!ds) {
    teardown(&f);
    return;
  }
  (void)quill_loc_file(f.ctx, "l.txt", 1, 1); /* interned once, kept */
  size_t live0 = f.cnt.live;
  /* 20 rows (past the first growth), the last without a newline */
  char text[2048] = "# header\r\n\n  x=s0/x.npy\ty=/abs/y0.npy\r\n";
  for (int r = 1; r < 20; r++) {
    size_t n = strlen(text);
    snprintf(text + n, sizeof text - n, "y=s%d/y.npy x=s%d/x.npy%s", r, r,
             r < 19 ? "\n" : "");
  }
  quill_calib_list l;
  CHECK(quill_calib_list_parse(ds, text, strlen(text), "l.txt", "d/", 0,
                               &l) == QUILL_OK);
  CHECK(l.num_rows == 20 && l.num_inputs == 2);
  if (l.num_rows == 20) {
    CHECK(strcmp(l.paths[0], "d/s0/x.npy") == 0);
    CHECK(strcmp(l.paths[1], "/abs/y0.npy") == 0);
    CHECK(strcmp(l.paths[2 * 19], "d/s19/x.npy") == 0);
    CHECK(strcmp(l.paths[2 * 19 + 1], "d/s19/y.npy") == 0);
    CHECK(l.lines[0] == 3 && l.lines[1] == 4 && l.lines[19] == 22);
  }
  quill_calib_list_free(f.ctx, &l);
  CHECK(l.num_rows == 0 && l.paths == NULL);
  CHECK(f.cnt.live == live0);

  /* max_rows: parsing stops after 3 sample lines, before the bad line */
  static const char capped[] = "x=a y=b\nx=c y=d\n# c\nx=e y=f\nz=1\n";
  CHECK(quill_calib_list_parse(ds, capped, sizeof capped - 1, "l.txt", "",
                               3, &l) == QUILL_OK);
  CHECK(l.num_rows == 3 && l.lines[2] == 4);
  CHECK(l.num_rows == 3 && strcmp(l.paths[5], "f") == 0);
  quill_calib_list_free(f.ctx, &l);

  static const struct {
    const char *text;
    size_t len; /* 0: strlen */
    const char *msg;
  } bad[] = {
      {"x=a y=b\nz=1\n", 0, "no model input is named 'z'"},
      {"x=a y=b x=c\n", 0, "input 'x' is given twice"},
      {"x=a\n", 0, "no file for input 'y'"},
      {"a.npy\n", 0, "the model has 2 inputs: write NAME=FILE for each"},
      {"x= y=b\n", 0, "no file after 'x='"},
      {"x=a y=b\n\0\n", 11, "NUL byte in a list file"},
      {"# nothing\n\n", 0, "the list file names no samples"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    f.diag[0] = '\0';
    f.errors = 0;
    size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);
    CHECK(quill_calib_list_parse(ds, bad[i].text, len, "l.txt", "", 0, &l) ==
          QUILL_ERR_INVALID);
    CHECK(f.errors == 1 && saw(&f, bad[i].msg));
    CHECK(l.num_rows == 0 && l.paths == NULL && l.lines == NULL);
    CHECK(f.cnt.live == live0);
  }

  /* allocation failure at every step */
  bool succeeded = false;
  for (long budget = 0; budget < 400 && !succeeded; budget++) {
    f.cnt.budget = budget;
    quill_status st =
        quill_calib_list_parse(ds, text, strlen(text), "l.txt", "d/", 0, &l);
    f.cnt.budget = -1;
    if (st == QUILL_OK) {
      succeeded = l.num_rows == 20;
      quill_calib_list_free(f.ctx, &l);
    } else {
      CHECK(st == QUILL_ERR_NOMEM);
    }
    CHECK(f.cnt.live == live0);
  }
  CHECK(succeeded);
  quill_calib_dataset_destroy(ds);
  teardown(&f);
}

/* Fail at every allocation in turn: each attempt succeeds or fails with a
 * status (no crash; leaks are caught by the sanitizer build). */
static void test_oom(void) {
  bool succeeded = false;
  for (long budget = 0; budget < 4000 && !succeeded; budget++) {
    fixture f;
    if (!setup(&f, net)) {
      CHECK(false);
      return;
    }
    double x0[4] = {1, -2, 0.5, 3};
    quill_tensor x = make(&f, "tensor<1x4xf32>", x0);
    f.cnt.budget = budget;
    quill_status st = quantize_in_memory(&f, &x, 1);
    f.cnt.budget = -1;
    if (st == QUILL_OK) {
      succeeded = nth_op(f.g, QUILL_OP_FAKE_QUANT, 0) == NULL;
      if (getenv("QUILL_TEST_VERBOSE"))
        fprintf(stderr, "test_oom: succeeded with budget %ld\n", budget);
    }
    else
      CHECK(st == QUILL_ERR_NOMEM || st == QUILL_ERR_INVALID);
    quill_tensor_free(f.ctx, &x);
    teardown(&f);
  }
  CHECK(succeeded);
}

int main(void) {
  test_pass_inputs();
  test_dataset_memory();
  test_dataset_checks();
  test_observers();
  test_calibrate_in_memory();
  test_list_parse();
  test_oom();
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}

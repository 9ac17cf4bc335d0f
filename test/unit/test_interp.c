/*
 * test_interp.c - unit tests of the graph interpreter
 * (targets/reference/interp.c, quill_ref_run / quill_ref_run_observed).
 *
 * Each case parses a small .qir function, runs it on hand-made inputs and
 * checks the output values. The context uses a counting allocator, so
 * every case also checks that nothing stays allocated once the outputs are
 * freed (on failure: right after the run), that intermediates die after
 * their last use (peak memory seen from an observer), and that a failing
 * allocator at every possible point leaves no leak and zeroed outputs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/reference/ref.h"
#include "test/unit/check.h"

/* ---- a counting, optionally failing allocator ------------------------------ */

typedef struct counter {
  size_t live;      /* bytes currently allocated */
  size_t peak;
  long budget;      /* allocations left before failing; < 0: unlimited */
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
  if (!p)
    return NULL;
  c->live += nsize - (ptr ? osize : 0);
  if (c->live > c->peak)
    c->peak = c->live;
  return p;
}

/* ---- fixture ---------------------------------------------------------------- */

typedef struct fixture {
  counter cnt;
  quill_context *ctx;
  quill_module *m;
  quill_graph *g;
  char diag[8][256]; /* the first diagnostics */
  unsigned ndiag;
} fixture;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  fixture *f = ud;
  (void)sev;
  if (f->ndiag < 8)
    snprintf(f->diag[f->ndiag], sizeof f->diag[0], "%s: %s",
             loc.name ? loc.name : "", msg);
  f->ndiag++;
}

static bool saw(const fixture *f, const char *needle) {
  for (unsigned i = 0; i < f->ndiag && i < 8; i++)
    if (strstr(f->diag[i], needle))
      return true;
  return false;
}

static bool setup(fixture *f, const char *src) {
  memset(f, 0, sizeof *f);
  f->cnt.budget = -1;
  f->ctx = quill_context_create(count_alloc, &f->cnt);
  quill_diag_set_handler(f->ctx, capture, f);
  f->m = quill_parse_module(f->ctx, src, strlen(src), "t.qir", 0);
  if (!f->m) {
    fprintf(stderr, "parse failed: %s\n", f->diag[0]);
    return false;
  }
  f->g = quill_module_graph(f->m, 0);
  f->ndiag = 0;
  return true;
}

static void teardown(fixture *f) {
  if (f->m)
    quill_module_destroy(f->m);
  quill_context_destroy(f->ctx);
}

/* A tensor of type `ty` (parsed) filled from vals. */
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

static bool values_are(const quill_tensor *t, const double *want, size_t n) {
  if (!t->type || quill_tensor_num_elements(t) != n)
    return false;
  for (size_t i = 0; i < n; i++)
    if (fabs(quill_tensor_get_f64(t, i) - want[i]) > 1e-6) {
      fprintf(stderr, "  element %zu: got %g, want %g\n", i,
              quill_tensor_get_f64(t, i), want[i]);
      return false;
    }
  return true;
}

static bool all_zero(const quill_tensor *t, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (t[i].type || t[i].data || t[i].size)
      return false;
  return true;
}

/* ---- cases ------------------------------------------------------------------ */

/* conv -> relu -> add of the input: a residual block with real values. */
static const char *residual =
    "func @block(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {\n"
    "  %w = constant {value = dense<[0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, "
    "-1.0]> : tensor<1x1x3x3xf32>} : tensor<1x1x3x3xf32>\n"
    "  %b = constant {value = dense<[0.5]> : tensor<1xf32>} : tensor<1xf32>\n"
    "  %c = conv2d %x, %w, %b {pads = [1, 1, 1, 1]} : tensor<1x1x3x3xf32>\n"
    "  %r = relu %c : tensor<1x1x3x3xf32>\n"
    "  %y = add %r, %x : tensor<1x1x3x3xf32>\n"
    "  return %y\n}\n";

static void test_residual(void) {
  fixture f;
  if (!setup(&f, residual)) {
    CHECK(false);
    return;
  }
  double xv[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  quill_tensor x = make(&f, "tensor<1x1x3x3xf32>", xv);
  size_t before = f.cnt.live;
  quill_tensor y;
  CHECK(quill_ref_run(f.ctx, f.g, &x, 1, &y, 1) == QUILL_OK);
  /* c[i,j] = 2*x[i,j] - x[i+1,j+1] (0 outside) + 0.5; y = relu(c) + x */
  double want[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double c = 2 * xv[i * 3 + j] + 0.5;
      if (i < 2 && j < 2)
        c -= xv[(i + 1) * 3 + j + 1];
      want[i * 3 + j] = (c > 0 ? c : 0) + xv[i * 3 + j];
    }
  CHECK(values_are(&y, want, 9));
  CHECK(f.ndiag == 0);
  quill_tensor_free(f.ctx, &y);
  CHECK(f.cnt.live == before);
  quill_tensor_free(f.ctx, &x);
  teardown(&f);
}

/* Results that are an argument, a constant, the same value twice, a value
 * that is also used further on, and a split with an unused result. */
static void test_result_aliasing(void) {
  fixture f;
  const char *src =
      "func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2xf32>, "
      "tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>) {\n"
      "  %k = constant {value = dense<[7.0, 8.0]> : tensor<2xf32>} : "
      "tensor<2xf32>\n"
      "  %n = neg %x : tensor<4xf32>\n"
      "  %a = abs %n : tensor<4xf32>\n"
      "  %s0, %s1 = split %n {axis = 0} : tensor<2xf32>, tensor<2xf32>\n"
      "  return %x, %k, %n, %n, %a, %s1\n}\n";
  if (!setup(&f, src)) {
    CHECK(false);
    return;
  }
  double xv[4] = {1, -2, 3, -4};
  quill_tensor x = make(&f, "tensor<4xf32>", xv);
  size_t before = f.cnt.live;
  quill_tensor out[6];
  CHECK(quill_ref_run(f.ctx, f.g, &x, 1, out, 6) == QUILL_OK);
  double k[2] = {7, 8}, n[4] = {-1, 2, -3, 4}, a[4] = {1, 2, 3, 4},
         s1[2] = {-3, 4};
  CHECK(values_are(&out[0], xv, 4));
  CHECK(values_are(&out[1], k, 2));
  CHECK(values_are(&out[2], n, 4));
  CHECK(values_are(&out[3], n, 4));
  CHECK(values_are(&out[4], a, 4));
  CHECK(values_are(&out[5], s1, 2));
  /* every output is its own caller-owned buffer */
  CHECK(out[0].data != x.data);
  CHECK(out[2].data != out[3].data);
  for (int i = 0; i < 6; i++)
    for (int j = i + 1; j < 6; j++)
      CHECK(out[i].data != out[j].data);
  /* writing one output does not change the input or another output */
  quill_tensor_set_f64(&out[0], 0, 100);
  quill_tensor_set_f64(&out[2], 0, 100);
  CHECK(quill_tensor_get_f64(&x, 0) == 1);
  CHECK(quill_tensor_get_f64(&out[3], 0) == -1);
  quill_ref_tensors_free(f.ctx, out, 6);
  CHECK(all_zero(out, 6));
  CHECK(f.cnt.live == before);
  quill_tensor_free(f.ctx, &x);
  teardown(&f);
}

/* A graph with no arguments (all constants) and a graph with no results. */
static void test_degenerate(void) {
  fixture f;
  const char *src =
      "func @f() -> tensor<3xi32> {\n"
      "  %a = constant {value = dense<[1, 2, 3]> : tensor<3xi32>} : "
      "tensor<3xi32>\n"
      "  %b = mul %a, %a : tensor<3xi32>\n"
      "  return %b\n}\n"
      "func @g(%x: tensor<2xf32>) -> () {\n"
      "  %y = relu %x : tensor<2xf32>\n"
      "  return\n}\n";
  if (!setup(&f, src)) {
    CHECK(false);
    return;
  }
  quill_tensor y;
  CHECK(quill_ref_run(f.ctx, f.g, NULL, 0, &y, 1) == QUILL_OK);
  double want[3] = {1, 4, 9};
  CHECK(values_are(&y, want, 3));
  CHECK(quill_tensor_elem_kind(&y) == QUILL_TYPE_I32);
  quill_tensor_free(f.ctx, &y);
  quill_graph *g2 = quill_module_graph(f.m, 1);
  double xv[2] = {-1, 1};
  quill_tensor x = make(&f, "tensor<2xf32>", xv);
  size_t before = f.cnt.live;
  CHECK(quill_ref_run(f.ctx, g2, &x, 1, NULL, 0) == QUILL_OK);
  CHECK(quill_ref_check_graph(f.ctx, g2) == QUILL_OK);
  CHECK(f.cnt.live == before);
  quill_tensor_free(f.ctx, &x);
  teardown(&f);
}

/* Wrong input count, type, shape and byte size; wrong output count. */
static void test_input_checks(void) {
  fixture f;
  if (!setup(&f, residual)) {
    CHECK(false);
    return;
  }
  double v[9] = {0};
  quill_tensor out[2];
  quill_tensor good = make(&f, "tensor<1x1x3x3xf32>", v);
  quill_tensor wrong_shape = make(&f, "tensor<1x1x3x2xf32>", v);
  quill_tensor wrong_type = make(&f, "tensor<1x1x3x3xf64>", v);
  quill_value_set_name(quill_graph_arg(f.g, 0), "image");
  size_t before = f.cnt.live;

  memset(out, 0x5a, sizeof out);
  CHECK(quill_ref_run(f.ctx, f.g, NULL, 0, out, 1) == QUILL_ERR_INVALID);
  CHECK(saw(&f, "graph 'block' takes 1 input, got 0"));
  CHECK(all_zero(out, 1));

  f.ndiag = 0;
  CHECK(quill_ref_run(f.ctx, f.g, &wrong_shape, 1, out, 1) ==
        QUILL_ERR_INVALID);
  CHECK(saw(&f, "input 0 ('image') has type tensor<1x1x3x2xf32>, but graph "
                "'block' expects tensor<1x1x3x3xf32>"));
  CHECK(all_zero(out, 1));

  f.ndiag = 0;
  CHECK(quill_ref_run(f.ctx, f.g, &wrong_type, 1, out, 1) ==
        QUILL_ERR_INVALID);
  CHECK(saw(&f, "has type tensor<1x1x3x3xf64>"));

  f.ndiag = 0;
  quill_tensor short_data = good;
  short_data.size -= 4;
  CHECK(quill_ref_run(f.ctx, f.g, &short_data, 1, out, 1) ==
        QUILL_ERR_INVALID);
  CHECK(saw(&f, "has 32 data bytes, expected 36"));

  f.ndiag = 0;
  memset(out, 0x5a, sizeof out);
  CHECK(quill_ref_run(f.ctx, f.g, &good, 1, out, 2) == QUILL_ERR_INVALID);
  CHECK(saw(&f, "graph 'block' has 1 result, but 2 output tensors"));
  CHECK(all_zero(out, 2));
  CHECK(f.cnt.live == before);

  quill_tensor_free(f.ctx, &good);
  quill_tensor_free(f.ctx, &wrong_shape);
  quill_tensor_free(f.ctx, &wrong_type);
  teardown(&f);
}

/* Every unsupported op is reported, by name and location, before anything
 * runs. */
static void test_unsupported(void) {
  fixture f;
  const char *src =
      "func @f(%x: tensor<1x1x2x2xi32>, %w: tensor<1x1x1x1xi32>) -> "
      "tensor<1x1x2x2xi32> {\n"
      "  %c = conv2d %x, %w : tensor<1x1x2x2xi32> loc(\"conv_a\")\n"
      "  %n = neg %c : tensor<1x1x2x2xi32>\n"
      "  %s = softmax %n {axis = 1} : tensor<1x1x2x2xi32> loc(\"soft_b\")\n"
      "  return %s\n}\n";
  if (!setup(&f, src)) {
    CHECK(false);
    return;
  }
  double v[4] = {1, 2, 3, 4};
  quill_tensor in[2] = {make(&f, "tensor<1x1x2x2xi32>", v),
                        make(&f, "tensor<1x1x1x1xi32>", v)};
  size_t before = f.cnt.live;
  quill_tensor y;
  CHECK(quill_ref_run(f.ctx, f.g, in, 2, &y, 1) == QUILL_ERR_UNSUPPORTED);
  CHECK(f.ndiag == 2);
  CHECK(saw(&f, "conv_a: op 'conv2d' is not supported by target 'reference' "
                "(non-float element types)"));
  CHECK(saw(&f, "soft_b: op 'softmax' is not supported by target "
                "'reference'"));
  CHECK(all_zero(&y, 1));
  CHECK(f.cnt.live == before);
  /* the same report without running */
  f.ndiag = 0;
  CHECK(quill_ref_check_graph(f.ctx, f.g) == QUILL_ERR_UNSUPPORTED);
  CHECK(f.ndiag == 2 && saw(&f, "conv_a: op 'conv2d'"));
  CHECK(f.cnt.live == before);
  quill_ref_tensors_free(f.ctx, in, 2);
  teardown(&f);
}

/* A kernel failing mid-run (integer division by zero): the intermediates
 * made so far are freed, the outputs zeroed. */
static void test_kernel_failure(void) {
  fixture f;
  const char *src =
      "func @f(%x: tensor<2xi32>, %d: tensor<2xi32>) -> (tensor<2xi32>, "
      "tensor<2xi32>) {\n"
      "  %a = add %x, %x : tensor<2xi32>\n"
      "  %q = div %a, %d : tensor<2xi32> loc(\"divide\")\n"
      "  return %a, %q\n}\n";
  if (!setup(&f, src)) {
    CHECK(false);
    return;
  }
  double xv[2] = {3, 4}, dv[2] = {2, 0};
  quill_tensor in[2] = {make(&f, "tensor<2xi32>", xv),
                        make(&f, "tensor<2xi32>", dv)};
  size_t before = f.cnt.live;
  quill_tensor out[2];
  CHECK(quill_ref_run(f.ctx, f.g, in, 2, out, 2) == QUILL_ERR_INVALID);
  CHECK(saw(&f, "divide: integer division by zero in 'div'"));
  CHECK(all_zero(out, 2));
  CHECK(f.cnt.live == before);
  /* the same graph runs fine on good data */
  quill_tensor_set_f64(&in[1], 1, -3);
  CHECK(quill_ref_run(f.ctx, f.g, in, 2, out, 2) == QUILL_OK);
  double a[2] = {6, 8}, q[2] = {3, -2};
  CHECK(values_are(&out[0], a, 2));
  CHECK(values_are(&out[1], q, 2));
  quill_ref_tensors_free(f.ctx, out, 2);
  CHECK(f.cnt.live == before);
  quill_ref_tensors_free(f.ctx, in, 2);
  teardown(&f);
}

/* ---- observers ---------------------------------------------------------------- */

typedef struct obs {
  fixture *f;
  int calls;
  int stop_at;        /* stop (with QUILL_ERR_INVALID) at this call; -1 never */
  char names[16][24]; /* op mnemonics seen */
  double first[16];   /* first element of result 0 */
  size_t peak_live;   /* largest allocator live count seen */
} obs;

static quill_status observe(void *ud, const quill_op *op,
                            const quill_tensor *results, unsigned n) {
  obs *o = ud;
  if (o->calls < 16) {
    snprintf(o->names[o->calls], sizeof o->names[0], "%s", quill_op_name(op));
    o->first[o->calls] =
        n && quill_tensor_num_elements(&results[0])
            ? quill_tensor_get_f64(&results[0], 0)
            : NAN;
  }
  if (o->f->cnt.live > o->peak_live)
    o->peak_live = o->f->cnt.live;
  if (o->calls++ == o->stop_at)
    return quill_error(o->f->ctx, quill_op_loc(op), "observer: stop here");
  return QUILL_OK;
}

static void test_observer(void) {
  fixture f;
  if (!setup(&f, residual)) {
    CHECK(false);
    return;
  }
  double xv[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  quill_tensor x = make(&f, "tensor<1x1x3x3xf32>", xv);
  size_t before = f.cnt.live;
  obs o;
  memset(&o, 0, sizeof o);
  o.f = &f;
  o.stop_at = -1;
  quill_tensor y;
  CHECK(quill_ref_run_observed(f.ctx, f.g, &x, 1, &y, 1, observe, &o) ==
        QUILL_OK);
  /* constants included, in program order */
  CHECK(o.calls == 5);
  CHECK(!strcmp(o.names[0], "constant") && o.first[0] == 0.0);
  CHECK(!strcmp(o.names[1], "constant") && o.first[1] == 0.5);
  CHECK(!strcmp(o.names[2], "conv2d") && o.first[2] == 2 * 1 + 0.5 - 5);
  CHECK(!strcmp(o.names[3], "relu") && o.first[3] == 0.0);
  CHECK(!strcmp(o.names[4], "add") && o.first[4] == 1.0);
  quill_tensor_free(f.ctx, &y);

  /* stopping at the relu: its status comes back, nothing leaks */
  memset(&o, 0, sizeof o);
  o.f = &f;
  o.stop_at = 3;
  f.ndiag = 0;
  memset(&y, 0x5a, sizeof y);
  CHECK(quill_ref_run_observed(f.ctx, f.g, &x, 1, &y, 1, observe, &o) ==
        QUILL_ERR_INVALID);
  CHECK(o.calls == 4);
  CHECK(saw(&f, "observer: stop here"));
  CHECK(all_zero(&y, 1));
  CHECK(f.cnt.live == before);
  quill_tensor_free(f.ctx, &x);
  teardown(&f);
}

/* A chain of ops on a 1 MiB tensor: with free-after-last-use, no more than
 * the input, one live intermediate and the one being made coexist. */
static void test_frees_after_last_use(void) {
  fixture f;
  const char *src =
      "func @f(%x: tensor<512x512xf32>) -> tensor<512x512xf32> {\n"
      "  %a = relu %x : tensor<512x512xf32>\n"
      "  %b = neg %a : tensor<512x512xf32>\n"
      "  %c = abs %b : tensor<512x512xf32>\n"
      "  %d = neg %c : tensor<512x512xf32>\n"
      "  %e = abs %d : tensor<512x512xf32>\n"
      "  %g = neg %e : tensor<512x512xf32>\n"
      "  %h = abs %g : tensor<512x512xf32>\n"
      "  return %h\n}\n";
  if (!setup(&f, src)) {
    CHECK(false);
    return;
  }
  const size_t mb = 512 * 512 * 4;
  double *v = calloc(512 * 512, sizeof *v);
  v[0] = 3;
  quill_tensor x = make(&f, "tensor<512x512xf32>", v);
  free(v);
  size_t before = f.cnt.live;
  obs o;
  memset(&o, 0, sizeof o);
  o.f = &f;
  o.stop_at = -1;
  quill_tensor y;
  CHECK(quill_ref_run_observed(f.ctx, f.g, &x, 1, &y, 1, observe, &o) ==
        QUILL_OK);
  CHECK(o.calls == 7);
  CHECK(quill_tensor_get_f64(&y, 0) == 3);
  /* at each observation: the previous result (not yet freed) + the new one */
  CHECK(o.peak_live < before + 2 * mb + mb / 2);
  CHECK(o.peak_live >= before + mb);
  quill_tensor_free(f.ctx, &y);
  CHECK(f.cnt.live == before);
  quill_tensor_free(f.ctx, &x);
  teardown(&f);
}

/* Let the allocator fail at every allocation in turn: each run either
 * succeeds or reports QUILL_ERR_NOMEM, with zeroed outputs and no leak. */
static void test_oom(void) {
  fixture f;
  const char *src =
      "func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, "
      "tensor<2xf32>) {\n"
      "  %k = constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : "
      "tensor<2xf32>\n"
      "  %n = neg %x : tensor<4xf32>\n"
      "  %s0, %s1 = split %n {axis = 0} : tensor<2xf32>, tensor<2xf32>\n"
      "  %c = concat %s1, %k {axis = 0} : tensor<4xf32>\n"
      "  return %c, %c, %k\n}\n";
  if (!setup(&f, src)) {
    CHECK(false);
    return;
  }
  double xv[4] = {1, 2, 3, 4};
  quill_tensor x = make(&f, "tensor<4xf32>", xv);
  size_t before = f.cnt.live;
  bool succeeded = false;
  for (long budget = 0; budget < 200 && !succeeded; budget++) {
    quill_tensor out[3];
    f.cnt.budget = budget;
    quill_status st = quill_ref_run(f.ctx, f.g, &x, 1, out, 3);
    f.cnt.budget = -1;
    if (st == QUILL_OK) {
      double c[4] = {-3, -4, 1, 2}, k[2] = {1, 2};
      CHECK(values_are(&out[0], c, 4));
      CHECK(values_are(&out[1], c, 4));
      CHECK(values_are(&out[2], k, 2));
      quill_ref_tensors_free(f.ctx, out, 3);
      succeeded = true;
    } else {
      CHECK(st == QUILL_ERR_NOMEM);
      CHECK(all_zero(out, 3));
    }
    CHECK(f.cnt.live == before);
  }
  CHECK(succeeded);
  quill_tensor_free(f.ctx, &x);
  teardown(&f);
}

/* A graph whose last op is not a return. */
static void test_malformed(void) {
  fixture f;
  const char *src = "func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  %y = relu %x : tensor<2xf32>\n"
                    "  return %y\n}\n";
  if (!setup(&f, src)) {
    CHECK(false);
    return;
  }
  quill_op *ret = quill_graph_return(f.g);
  quill_op_remove(ret);
  double xv[2] = {1, 2};
  quill_tensor x = make(&f, "tensor<2xf32>", xv);
  quill_tensor y;
  CHECK(quill_ref_run(f.ctx, f.g, &x, 1, &y, 1) == QUILL_ERR_INVALID);
  CHECK(saw(&f, "graph 'f' does not end in a return"));
  CHECK(all_zero(&y, 1));
  quill_op_insert_at_end(f.g, ret);
  CHECK(quill_ref_run(f.ctx, f.g, &x, 1, &y, 1) == QUILL_OK);
  CHECK(values_are(&y, xv, 2));
  quill_tensor_free(f.ctx, &y);
  quill_tensor_free(f.ctx, &x);
  teardown(&f);
}

int main(void) {
  test_residual();
  test_result_aliasing();
  test_degenerate();
  test_input_checks();
  test_unsupported();
  test_kernel_failure();
  test_observer();
  test_frees_after_last_use();
  test_oom();
  test_malformed();
  printf("test_interp: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}

/*
 * test_passes.c - the pass registry, pipeline parsing, the pass manager
 * (properties, options, dumps, reports), the greedy rewrite driver and the
 * dce / cse / canonicalize passes, through the C API.
 *
 * Graphs are built with quill_op_create; diagnostics are captured with a
 * handler that appends them to a buffer, and manager reports are written to
 * an open_memstream() FILE so their text can be checked. Small test passes
 * defined here exercise requires / establishes / preserves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/canonicalize.h"
#include "passes/pass.h"
#include "passes/rewriter.h"

static int failures;
#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);   \
      failures++;                                                             \
    }                                                                         \
  } while (0)

/* ---- fixtures ---------------------------------------------------------------- */

typedef struct diags {
  char text[8192];
  unsigned errors, warnings;
} diags;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  (void)loc;
  diags *d = ud;
  size_t n = strlen(d->text);
  snprintf(d->text + n, sizeof d->text - n, "%s: %s\n",
           quill_diag_severity_name(sev), msg);
  if (sev == QUILL_DIAG_ERROR)
    d->errors++;
  if (sev == QUILL_DIAG_WARNING)
    d->warnings++;
}

typedef struct fixture {
  quill_context *ctx;
  quill_module *m;
  quill_graph *g;
  quill_type *t; /* tensor<4xf32> */
  diags d;
} fixture;

static void setup(fixture *f) {
  memset(f, 0, sizeof *f);
  f->ctx = quill_context_create(NULL, NULL);
  quill_diag_set_handler(f->ctx, capture, &f->d);
  f->m = quill_module_create(f->ctx);
  int64_t dims[] = {4};
  f->t = quill_type_tensor(f->ctx, quill_type_scalar(f->ctx, QUILL_TYPE_F32),
                           1, dims);
  quill_type *args[] = {f->t, f->t};
  f->g = quill_graph_create(f->m, "main", 2, args, 1, &f->t);
}

static void teardown(fixture *f) {
  quill_module_destroy(f->m);
  quill_context_destroy(f->ctx);
}

static quill_value *arg(fixture *f, unsigned i) {
  return quill_graph_arg(f->g, i);
}

static quill_op *emit(fixture *f, quill_opcode opc, unsigned n,
                      quill_value *a, quill_value *b) {
  quill_value *ops[] = {a, b};
  quill_op *op =
      quill_op_create(f->g, opc, n, ops, 1, &f->t, 0, NULL, quill_loc_unknown());
  quill_op_insert_at_end(f->g, op);
  return op;
}

static quill_value *val(quill_op *op) { return quill_op_result(op, 0); }

static quill_op *splat(fixture *f, float v) {
  float data[4] = {v, v, v, v};
  quill_named_attr a = {quill_ident_get(f->ctx, "value"),
                        quill_attr_dense(f->ctx, f->t, data, sizeof data)};
  quill_op *op = quill_op_create(f->g, QUILL_OP_CONSTANT, 0, NULL, 1, &f->t, 1,
                                 &a, quill_loc_unknown());
  quill_op_insert_at_end(f->g, op);
  return op;
}

static void ret(fixture *f, quill_value *v) {
  quill_op *op = quill_op_create(f->g, QUILL_OP_RETURN, 1, &v, 0, NULL, 0,
                                 NULL, quill_loc_unknown());
  quill_op_insert_at_end(f->g, op);
}

static quill_value *returned(fixture *f) {
  return quill_op_operand(quill_graph_return(f->g), 0);
}

/* Run a pipeline with statistics reported into *report (malloc'd). */
static quill_status run_pipeline(fixture *f, const char *pipeline,
                                 char **report) {
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  quill_pass_manager *pm = quill_pass_manager_create(f->ctx);
  quill_pass_manager_options o = {.verify_each = true, .statistics = true,
                                  .dump_stream = out};
  quill_pass_manager_set_options(pm, &o);
  quill_status st = quill_pass_manager_parse_pipeline(pm, pipeline);
  if (!st)
    st = quill_pass_manager_run(pm, f->m);
  quill_pass_manager_report(pm);
  quill_pass_manager_destroy(pm);
  fclose(out);
  if (report)
    *report = buf;
  else
    free(buf);
  return st;
}

/* ---- registry and pipeline text ---------------------------------------------- */

static void test_registry(void) {
  /* The foundation passes come first; later rows of passes.def add more. */
  const char *names[] = {"canonicalize", "constant-fold", "cse", "dce"};
  CHECK(quill_pass_registry_size() >= 4);
  for (unsigned i = 0; i < 4; ++i) {
    const quill_pass *p = quill_pass_registry_at(i);
    CHECK(p && strcmp(p->name, names[i]) == 0);
    CHECK(p && p->run && p->summary);
    CHECK(quill_pass_lookup(names[i], strlen(names[i])) == p);
  }
  for (unsigned i = 0; i < quill_pass_registry_size(); ++i) {
    const quill_pass *p = quill_pass_registry_at(i);
    CHECK(p && p->run && p->summary &&
          quill_pass_lookup(p->name, strlen(p->name)) == p);
  }
  CHECK(quill_pass_registry_at(quill_pass_registry_size()) == NULL);
  CHECK(quill_pass_lookup("cs", 2) == NULL);
  CHECK(quill_pass_lookup("csex", 4) == NULL);
  CHECK(quill_pass_lookup("cse,dce", 3) == &quill_pass_cse);
  CHECK(strcmp(quill_pass_canonicalize.options, "max-iterations=N") == 0);
}

static void expect_pipeline_error(const char *pipeline, const char *msg) {
  fixture f;
  setup(&f);
  quill_pass_manager *pm = quill_pass_manager_create(f.ctx);
  quill_status st = quill_pass_manager_parse_pipeline(pm, pipeline);
  CHECK(st == QUILL_ERR_INVALID);
  CHECK(f.d.errors == 1);
  if (!strstr(f.d.text, msg)) {
    fprintf(stderr, "pipeline '%s': expected '%s', got '%s'\n", pipeline, msg,
            f.d.text);
    failures++;
  }
  quill_pass_manager_destroy(pm);
  teardown(&f);
}

static void test_pipeline_errors(void) {
  expect_pipeline_error("cse,foo", "unknown pass 'foo' in pipeline at column 5");
  expect_pipeline_error("foo", "unknown pass 'foo' in pipeline at column 1");
  expect_pipeline_error("canonicalize{bogus=1}",
                        "unknown option 'bogus' for pass 'canonicalize'");
  expect_pipeline_error("cse{x=1}", "unknown option 'x' for pass 'cse'");
  expect_pipeline_error("canonicalize{max-iterations=x}",
                        "expects an integer, got 'x' in pipeline at column 29");
  expect_pipeline_error("canonicalize{max-iterations=2",
                        "unterminated '{' of pass 'canonicalize' in pipeline "
                        "at column 13");
  expect_pipeline_error("cse dce", "expected ',' after pass 'cse'");
  expect_pipeline_error("cse,,dce", "expected pass name, got ','");
  expect_pipeline_error("cse,", "expected pass name at end of input");
  expect_pipeline_error("{x=1}", "expected pass name, got '{' in pipeline at "
                                 "column 1");

  fixture f;
  setup(&f);
  quill_pass_manager *pm = quill_pass_manager_create(f.ctx);
  CHECK(quill_pass_manager_parse_pipeline(pm, "") == QUILL_OK);
  CHECK(quill_pass_manager_parse_pipeline(pm, "  cse , dce{} ,canonicalize"
                                              "{ max-iterations=2 }") ==
        QUILL_OK);
  CHECK(quill_pass_manager_add(pm, "nope", NULL) == QUILL_ERR_INVALID);
  CHECK(strstr(f.d.text, "unknown pass 'nope'") != NULL);
  CHECK(quill_pass_manager_add(pm, "canonicalize", "max-iterations=3") ==
        QUILL_OK);
  CHECK(quill_pass_manager_add(pm, "canonicalize", "max=3") ==
        QUILL_ERR_INVALID);
  CHECK(f.d.errors == 2);
  quill_pass_manager_destroy(pm);
  teardown(&f);
}

/* ---- test passes ------------------------------------------------------------- */

static unsigned count_dead(quill_module *m) {
  unsigned n = 0;
  for (unsigned i = 0; i < quill_module_num_graphs(m); ++i)
    QUILL_GRAPH_FOREACH(quill_module_graph(m, i), op) {
      if (quill_op_has_flag(op, QUILL_OPF_PURE) &&
          quill_op_num_results(op) == 1 &&
          !quill_value_has_uses(quill_op_result(op, 0)))
        n++;
    }
  return n;
}

static quill_status check_clean_run(quill_pass_state *ps, quill_module *m) {
  quill_pass_stat_add(ps, "dead-seen", count_dead(m));
  quill_pass_stat_add(ps, "level",
                      (uint64_t)quill_pass_option_int(ps, "level", 7, NULL));
  const char *tag = quill_pass_option(ps, "tag");
  quill_pass_stat_add(ps, tag ? tag : "untagged", 1);
  quill_pass_mark_unchanged(ps);
  return QUILL_OK;
}

/* Add one dead constant to the first graph. */
static quill_status add_dead(quill_module *m) {
  quill_graph *g = quill_module_graph(m, 0);
  quill_value *v = quill_graph_arg(g, 0);
  quill_type *t = quill_value_type(v);
  quill_op *op = quill_op_create(g, QUILL_OP_NEG, 1, &v, 1, &t, 0, NULL,
                                 quill_loc_unknown());
  if (!op)
    return QUILL_ERR_NOMEM;
  quill_op_insert_before(quill_graph_return(g), op);
  return QUILL_OK;
}

static quill_status make_dead_run(quill_pass_state *ps, quill_module *m) {
  (void)ps;
  return add_dead(m);
}

static quill_status make_dead_unchanged_run(quill_pass_state *ps,
                                            quill_module *m) {
  quill_pass_mark_unchanged(ps); /* a lie, to observe its effect */
  return add_dead(m);
}

static quill_status fail_run(quill_pass_state *ps, quill_module *m) {
  (void)m;
  return quill_error(quill_pass_context(ps), quill_loc_unknown(),
                     "test pass failed");
}

/* Insert an add with one operand: arity violation for the verifier. */
static quill_status break_ir_run(quill_pass_state *ps, quill_module *m) {
  (void)ps;
  quill_graph *g = quill_module_graph(m, 0);
  quill_value *v = quill_graph_arg(g, 0);
  quill_type *t = quill_value_type(v);
  quill_op *op = quill_op_create(g, QUILL_OP_ADD, 1, &v, 1, &t, 0, NULL,
                                 quill_loc_unknown());
  quill_op_insert_before(quill_graph_return(g), op);
  quill_op_set_operand(quill_graph_return(g), 0, quill_op_result(op, 0));
  return QUILL_OK;
}

static const quill_pass check_clean = {
    "check-clean", "count dead ops", check_clean_run, QUILL_PROP_NO_DEAD_OPS,
    0,             QUILL_PROP_ALL,   "level=N tag=NAME"};
static const quill_pass make_dead = {
    "make-dead", "add a dead op", make_dead_run, 0, 0, 0, NULL};
static const quill_pass make_dead_lying = {
    "make-dead-lying", "add a dead op, claim to preserve all", make_dead_run,
    0, 0, QUILL_PROP_ALL, NULL};
static const quill_pass make_dead_unchanged = {
    "make-dead-unchanged", "add a dead op, claim no change",
    make_dead_unchanged_run, 0, 0, 0, NULL};
static const quill_pass needs_canonical = {
    "needs-canonical", "", check_clean_run, QUILL_PROP_CANONICAL, 0, 0, NULL};
static const quill_pass needs_unknown = {
    "needs-unknown", "", check_clean_run, 1u << 20, 0, 0, NULL};
static const quill_pass failing = {"failing", "", fail_run, 0, 0, 0, NULL};
static const quill_pass break_ir = {"break-ir", "", break_ir_run, 0, 0, 0,
                                    NULL};

/* Build x -> return x with one dead op, run the given passes, and return the
 * statistics report (malloc'd). */
static char *run_custom(fixture *f, const quill_pass *const *passes,
                        const char *const *opts, unsigned n,
                        quill_status *st) {
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  quill_pass_manager *pm = quill_pass_manager_create(f->ctx);
  quill_pass_manager_options o = {.verify_each = true, .statistics = true,
                                  .dump_stream = out};
  quill_pass_manager_set_options(pm, &o);
  *st = QUILL_OK;
  for (unsigned i = 0; i < n && !*st; ++i)
    *st = quill_pass_manager_add_pass(pm, passes[i], opts ? opts[i] : NULL);
  if (!*st)
    *st = quill_pass_manager_run(pm, f->m);
  quill_pass_manager_report(pm);
  quill_pass_manager_destroy(pm);
  fclose(out);
  return buf;
}

static void setup_dead(fixture *f) {
  setup(f);
  emit(f, QUILL_OP_RELU, 1, arg(f, 0), NULL); /* dead */
  ret(f, arg(f, 0));
}

static void expect_report(const char *report, const char *needle) {
  if (!report || !strstr(report, needle)) {
    fprintf(stderr, "report lacks '%s':\n%s\n", needle,
            report ? report : "(null)");
    failures++;
  }
}

static void test_properties(void) {
  fixture f;
  quill_status st;
  char *r;

  /* requires NO_DEAD_OPS: dce runs implicitly first */
  setup_dead(&f);
  const quill_pass *p1[] = {&check_clean};
  r = run_custom(&f, p1, NULL, 1, &st);
  CHECK(st == QUILL_OK);
  expect_report(r, "dce (implicit)\n  (S) 1 num-erased\n");
  expect_report(r, "check-clean\n  (S) 0 dead-seen\n  (S) 7 level\n"
                   "  (S) 1 untagged\n");
  CHECK(quill_graph_num_ops(f.g) == 1);
  free(r);
  teardown(&f);

  /* a pass that preserves nothing invalidates: dce runs again */
  setup_dead(&f);
  const quill_pass *p2[] = {&check_clean, &make_dead, &check_clean};
  const char *o2[] = {"level=3", NULL, "tag=second"};
  r = run_custom(&f, p2, o2, 3, &st);
  CHECK(st == QUILL_OK);
  expect_report(r, "dce (implicit)\n  (S) 2 num-erased\n");
  expect_report(r, "check-clean\n  (S) 0 dead-seen\n  (S) 3 level\n");
  expect_report(r, "check-clean\n  (S) 0 dead-seen\n  (S) 7 level\n"
                   "  (S) 1 second\n");
  free(r);
  teardown(&f);

  /* a pass that claims to preserve everything is believed */
  setup_dead(&f);
  const quill_pass *p3[] = {&check_clean, &make_dead_lying, &check_clean};
  r = run_custom(&f, p3, NULL, 3, &st);
  CHECK(st == QUILL_OK);
  expect_report(r, "dce (implicit)\n  (S) 1 num-erased\n");
  expect_report(r, "check-clean\n  (S) 1 dead-seen\n");
  free(r);
  teardown(&f);

  /* quill_pass_mark_unchanged keeps every property */
  setup_dead(&f);
  const quill_pass *p4[] = {&check_clean, &make_dead_unchanged, &check_clean};
  r = run_custom(&f, p4, NULL, 3, &st);
  CHECK(st == QUILL_OK);
  expect_report(r, "check-clean\n  (S) 1 dead-seen\n");
  free(r);
  teardown(&f);

  /* requires CANONICAL: canonicalize runs implicitly and simplifies */
  setup(&f);
  quill_op *add = emit(&f, QUILL_OP_ADD, 2, arg(&f, 0), val(splat(&f, 0.0f)));
  ret(&f, val(add));
  const quill_pass *p5[] = {&needs_canonical};
  r = run_custom(&f, p5, NULL, 1, &st);
  CHECK(st == QUILL_OK);
  expect_report(r, "canonicalize (implicit)\n  (S) 1 num-rewrites\n");
  CHECK(returned(&f) == arg(&f, 0));
  CHECK(quill_graph_num_ops(f.g) == 1);
  free(r);
  teardown(&f);

  /* a property nobody establishes is an error, not a crash */
  setup_dead(&f);
  const quill_pass *p6[] = {&needs_unknown};
  free(run_custom(&f, p6, NULL, 1, &st));
  CHECK(st == QUILL_ERR_INVALID);
  CHECK(strstr(f.d.text, "requires a property no pass establishes") != NULL);
  teardown(&f);

  /* bad options on add_pass, failing passes, verifier failures */
  setup_dead(&f);
  const quill_pass *p7[] = {&check_clean};
  const char *o7[] = {"level=abc"};
  free(run_custom(&f, p7, o7, 1, &st));
  CHECK(st == QUILL_ERR_INVALID);
  CHECK(strstr(f.d.text, "expects an integer, got 'abc'") != NULL);
  teardown(&f);

  setup_dead(&f);
  const quill_pass *p8[] = {&failing, &check_clean};
  r = run_custom(&f, p8, NULL, 2, &st);
  CHECK(st == QUILL_ERR_INVALID);
  CHECK(strstr(f.d.text, "test pass failed") != NULL);
  CHECK(strstr(r, "dead-seen") == NULL); /* check-clean never ran */
  free(r);
  teardown(&f);

  setup_dead(&f);
  const quill_pass *p9[] = {&break_ir, &check_clean};
  free(run_custom(&f, p9, NULL, 2, &st));
  CHECK(st == QUILL_ERR_INVALID);
  CHECK(strstr(f.d.text, "verifier failed after pass 'break-ir'") != NULL);
  teardown(&f);
}

/* ---- dumps and timing ---------------------------------------------------------- */

static void test_dumps(void) {
  fixture f;
  setup_dead(&f);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  quill_pass_manager *pm = quill_pass_manager_create(f.ctx);
  quill_pass_manager_options o = {.verify_each = true,
                                  .print_ir_after_all = true,
                                  .print_ir_before = "dce",
                                  .time_passes = true,
                                  .dump_stream = out};
  quill_pass_manager_set_options(pm, &o);
  CHECK(quill_pass_manager_parse_pipeline(pm, "cse,dce") == QUILL_OK);
  CHECK(quill_pass_manager_run(pm, f.m) == QUILL_OK);
  quill_pass_manager_report(pm);
  quill_pass_manager_destroy(pm);
  fclose(out);
  const char *a = strstr(buf, "// -----// IR Dump After cse //----- //\nfunc @main");
  const char *b = strstr(buf, "// -----// IR Dump Before dce //----- //\n");
  const char *c = strstr(buf, "// -----// IR Dump After dce //----- //\n");
  const char *t = strstr(buf, "... Pass execution timing report ...");
  CHECK(a && b && c && t && a < b && b < c && c < t);
  CHECK(strstr(buf, "IR Dump Before cse") == NULL);
  CHECK(a && b && strstr(a, "relu") && strstr(a, "relu") < b);
  CHECK(c && !strstr(c, "relu"));
  CHECK(strstr(buf, "  ----Wall Time----  ----Name----\n") != NULL);
  CHECK(strstr(buf, "%)  cse\n") && strstr(buf, "%)  dce\n"));
  CHECK(strstr(buf, "(100.0%)  Total\n") != NULL);
  free(buf);
  teardown(&f);
}

/* ---- the three passes ------------------------------------------------------------ */

static void test_dce(void) {
  fixture f;
  setup(&f);
  quill_op *c = splat(&f, 1.0f);
  quill_op *a = emit(&f, QUILL_OP_ADD, 2, arg(&f, 0), val(c));
  emit(&f, QUILL_OP_SIGMOID, 1, val(a), NULL);
  quill_op *live = emit(&f, QUILL_OP_RELU, 1, arg(&f, 1), NULL);
  ret(&f, val(live));
  char *r;
  CHECK(run_pipeline(&f, "dce", &r) == QUILL_OK);
  expect_report(r, "dce\n  (S) 3 num-erased\n");
  CHECK(quill_graph_num_ops(f.g) == 2);
  CHECK(quill_graph_first_op(f.g) == live);
  free(r);
  /* second run: nothing to do */
  CHECK(run_pipeline(&f, "dce", &r) == QUILL_OK);
  expect_report(r, "dce\n  (S) 0 num-erased\n");
  free(r);
  teardown(&f);
}

static void test_cse(void) {
  fixture f;
  setup(&f);
  quill_op *c1 = splat(&f, 2.0f), *c2 = splat(&f, 2.0f), *c3 = splat(&f, 3.0f);
  quill_op *m1 = emit(&f, QUILL_OP_MUL, 2, arg(&f, 0), val(c1));
  quill_op *m2 = emit(&f, QUILL_OP_MUL, 2, arg(&f, 0), val(c2));
  quill_op *m3 = emit(&f, QUILL_OP_MUL, 2, arg(&f, 0), val(c3));
  quill_op *m4 = emit(&f, QUILL_OP_MUL, 2, val(c1), arg(&f, 0)); /* swapped */
  quill_op *s1 = emit(&f, QUILL_OP_ADD, 2, val(m1), val(m2));
  quill_op *s2 = emit(&f, QUILL_OP_ADD, 2, val(m3), val(m4));
  quill_op *s3 = emit(&f, QUILL_OP_ADD, 2, val(s1), val(s2));
  ret(&f, val(s3));
  char *r;
  CHECK(run_pipeline(&f, "cse", &r) == QUILL_OK);
  expect_report(r, "cse\n  (S) 2 num-cse'd\n");
  free(r);
  /* c2 merged into c1, then m2 into m1; m3 and m4 differ */
  CHECK(quill_op_operand(s1, 0) == val(m1) && quill_op_operand(s1, 1) == val(m1));
  CHECK(quill_op_operand(s2, 0) == val(m3) && quill_op_operand(s2, 1) == val(m4));
  CHECK(quill_op_operand(m4, 0) == val(c1));
  CHECK(quill_graph_num_ops(f.g) == 9);
  teardown(&f);
}

static void test_canonicalize(void) {
  fixture f;
  setup(&f);
  /* mul(1, relu(relu(identity(x)))) + 0 -> relu(x) */
  quill_op *id = emit(&f, QUILL_OP_IDENTITY, 1, arg(&f, 0), NULL);
  quill_op *r1 = emit(&f, QUILL_OP_RELU, 1, val(id), NULL);
  quill_op *r2 = emit(&f, QUILL_OP_RELU, 1, val(r1), NULL);
  quill_op *one = splat(&f, 1.0f), *zero = splat(&f, 0.0f);
  quill_op *m = emit(&f, QUILL_OP_MUL, 2, val(one), val(r2));
  quill_op *a = emit(&f, QUILL_OP_ADD, 2, val(m), val(zero));
  ret(&f, val(a));
  char *r;
  CHECK(run_pipeline(&f, "canonicalize{max-iterations=4}", &r) == QUILL_OK);
  free(r);
  CHECK(quill_graph_num_ops(f.g) == 2);
  quill_op *relu = quill_value_def(returned(&f));
  CHECK(relu == r1);
  CHECK(relu && quill_op_operand(relu, 0) == arg(&f, 0));
  teardown(&f);

  /* negative: add(x, 2) and sub(0, x) stay untouched */
  setup(&f);
  quill_op *two = splat(&f, 2.0f), *z = splat(&f, 0.0f);
  quill_op *ad = emit(&f, QUILL_OP_ADD, 2, arg(&f, 0), val(two));
  quill_op *sb = emit(&f, QUILL_OP_SUB, 2, val(z), val(ad));
  ret(&f, val(sb));
  CHECK(run_pipeline(&f, "canonicalize", &r) == QUILL_OK);
  expect_report(r, "canonicalize\n  (S) 0 num-rewrites\n");
  free(r);
  CHECK(quill_graph_num_ops(f.g) == 5);
  CHECK(quill_op_operand(sb, 0) == val(z) && quill_op_operand(sb, 1) == val(ad));
  teardown(&f);
}

/* ---- the greedy driver ------------------------------------------------------------- */

/* Toggles a bool attribute forever: never converges. */
static quill_match_result toggle(const quill_pattern *p, quill_rewriter *rw,
                                 quill_op *op) {
  (void)p;
  quill_context *ctx = quill_rewriter_context(rw);
  const quill_attr *cur = quill_op_attr(op, "flip");
  bool v = cur && quill_attr_bool_value(cur);
  if (quill_rewriter_set_attr(rw, op, "flip", quill_attr_bool(ctx, !v)))
    return QUILL_MATCH_ERROR;
  return QUILL_MATCH_SUCCESS;
}

/* Records its name in attribute "by" unless already set. */
static quill_match_result mark(const quill_pattern *p, quill_rewriter *rw,
                               quill_op *op) {
  quill_context *ctx = quill_rewriter_context(rw);
  if (quill_op_attr(op, "by"))
    return quill_rewriter_fail(rw, op, "already marked");
  quill_rewriter_set_attr(rw, op, "by",
                          quill_attr_string(ctx, p->name, strlen(p->name)));
  return QUILL_MATCH_SUCCESS;
}

static quill_match_result hard_error(const quill_pattern *p,
                                     quill_rewriter *rw, quill_op *op) {
  (void)p;
  quill_error(quill_rewriter_context(rw), quill_op_loc(op), "pattern error");
  return QUILL_MATCH_ERROR;
}

static void test_driver(void) {
  fixture f;
  setup(&f);
  quill_op *r = emit(&f, QUILL_OP_RELU, 1, arg(&f, 0), NULL);
  quill_op *n = emit(&f, QUILL_OP_NEG, 1, val(r), NULL);
  ret(&f, val(n));

  /* benefit first, then name; wildcard patterns join every opcode */
  static const quill_pattern pats[] = {
      {"b-low", QUILL_OP_RELU, 1, mark, NULL},
      {"z-high", QUILL_OP_RELU, 5, mark, NULL},
      {"a-high", QUILL_OP_RELU, 5, mark, NULL},
      {"any", -1, 3, mark, NULL},
  };
  quill_pattern_set *s = quill_pattern_set_create(f.ctx);
  for (unsigned i = 0; i < 4; ++i)
    CHECK(quill_pattern_set_add(s, &pats[i]) == QUILL_OK);
  CHECK(quill_pattern_set_size(s) == 4);
  bool changed = false;
  uint64_t nrw = 0;
  CHECK(quill_apply_patterns_greedily(f.g, s, NULL, &changed, &nrw) ==
        QUILL_OK);
  CHECK(changed && nrw == 3); /* relu, neg and return */
  size_t len;
  const quill_attr *by = quill_op_attr(r, "by");
  CHECK(by && strcmp(quill_attr_string_value(by, &len), "a-high") == 0);
  by = quill_op_attr(n, "by");
  CHECK(by && strcmp(quill_attr_string_value(by, &len), "any") == 0);
  by = quill_op_attr(quill_graph_return(f.g), "by");
  CHECK(by && strcmp(quill_attr_string_value(by, &len), "any") == 0);
  CHECK(f.d.warnings == 0);
  /* second application: fixpoint at once */
  CHECK(quill_apply_patterns_greedily(f.g, s, NULL, &changed, &nrw) ==
        QUILL_OK);
  CHECK(!changed && nrw == 0);
  quill_pattern_set_destroy(s);

  /* non-convergence is a warning, not an error */
  static const quill_pattern flip = {"flip", QUILL_OP_NEG, 1, toggle, NULL};
  s = quill_pattern_set_create(f.ctx);
  quill_pattern_set_add(s, &flip);
  quill_greedy_config cfg = {3, true, "test"};
  CHECK(quill_apply_patterns_greedily(f.g, s, &cfg, &changed, &nrw) ==
        QUILL_OK);
  CHECK(changed && nrw >= 3);
  CHECK(f.d.warnings == 1);
  CHECK(strstr(f.d.text, "did not converge after 3 iterations") != NULL);
  quill_pattern_set_destroy(s);

  /* a hard pattern error stops the driver with an error */
  static const quill_pattern bad = {"bad", QUILL_OP_RELU, 1, hard_error, NULL};
  s = quill_pattern_set_create(f.ctx);
  quill_pattern_set_add(s, &bad);
  CHECK(quill_apply_patterns_greedily(f.g, s, NULL, NULL, NULL) ==
        QUILL_ERR_INVALID);
  CHECK(strstr(f.d.text, "pattern error") != NULL);
  /* invalid patterns are refused */
  static const quill_pattern broken = {"broken", QUILL_OP_COUNT, 1, mark, NULL};
  CHECK(quill_pattern_set_add(s, &broken) == QUILL_ERR_INVALID);
  quill_pattern_set_destroy(s);

  /* remove_dead_ops = false keeps dead ops; true erases them */
  quill_op *the_ret = quill_graph_return(f.g);
  quill_op *dead = emit(&f, QUILL_OP_SIGMOID, 1, arg(&f, 1), NULL);
  quill_op_move_before(dead, the_ret);
  s = quill_pattern_set_create(f.ctx);
  quill_greedy_config keep = {1, false, NULL};
  CHECK(quill_apply_patterns_greedily(f.g, s, &keep, &changed, NULL) ==
        QUILL_OK);
  CHECK(!changed && quill_graph_num_ops(f.g) == 4);
  CHECK(quill_apply_patterns_greedily(f.g, s, NULL, &changed, NULL) ==
        QUILL_OK);
  CHECK(changed && quill_graph_num_ops(f.g) == 3);
  quill_pattern_set_destroy(s);
  teardown(&f);
}

/* ---- allocation failure ------------------------------------------------------------ */

typedef struct budget {
  long left; /* allocations still allowed; negative: unlimited */
} budget;

static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  budget *b = ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  if (b->left == 0)
    return NULL;
  if (b->left > 0)
    b->left--;
  return realloc(ptr, nsize);
}

/* Fail the k-th allocation made by pipeline parsing and running, for every
 * k until a run succeeds: every run must end cleanly with a status. */
static void test_oom(void) {
  bool succeeded = false;
  for (long k = 0; k < 400 && !succeeded; ++k) {
    budget b = {-1};
    fixture f;
    memset(&f, 0, sizeof f);
    f.ctx = quill_context_create(limited_alloc, &b);
    quill_diag_set_handler(f.ctx, capture, &f.d);
    f.m = quill_module_create(f.ctx);
    int64_t dims[] = {4};
    f.t = quill_type_tensor(f.ctx, quill_type_scalar(f.ctx, QUILL_TYPE_F32), 1,
                            dims);
    quill_type *args[] = {f.t, f.t};
    f.g = quill_graph_create(f.m, "main", 2, args, 1, &f.t);
    quill_op *c0 = splat(&f, 0.0f), *c1 = splat(&f, 0.0f);
    quill_op *a = emit(&f, QUILL_OP_ADD, 2, val(c0), arg(&f, 0));
    quill_op *a2 = emit(&f, QUILL_OP_ADD, 2, val(c1), arg(&f, 0));
    quill_op *m = emit(&f, QUILL_OP_MUL, 2, val(a), val(a2));
    emit(&f, QUILL_OP_RELU, 1, val(m), NULL);
    ret(&f, val(m));
    b.left = k;
    quill_pass_manager *pm = quill_pass_manager_create(f.ctx);
    quill_status st = QUILL_ERR_NOMEM;
    if (pm) {
      quill_pass_manager_options o = {.verify_each = true, .statistics = true,
                                      .dump_stream = NULL};
      quill_pass_manager_set_options(pm, &o);
      st = quill_pass_manager_parse_pipeline(
          pm, "cse,canonicalize{max-iterations=3},dce");
      if (!st)
        st = quill_pass_manager_run(pm, f.m);
      quill_pass_manager_destroy(pm);
    }
    CHECK(st == QUILL_OK || st == QUILL_ERR_NOMEM || st == QUILL_ERR_INVALID);
    if (st == QUILL_OK) {
      succeeded = true;
      CHECK(k > 10); /* the sweep really failed allocations first */
      CHECK(quill_value_def(returned(&f)) == m);
      CHECK(quill_op_operand(m, 0) == arg(&f, 0));
    }
    b.left = -1;
    teardown(&f);
  }
  CHECK(succeeded);
}

int main(void) {
  test_registry();
  test_pipeline_errors();
  test_properties();
  test_dumps();
  test_dce();
  test_cse();
  test_canonicalize();
  test_driver();
  test_oom();
  if (failures) {
    fprintf(stderr, "test_passes: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_passes: all passed\n");
  return 0;
}

/*
 * test_capi.c - the one-call entry points of the public C API and the
 * run-time pass/pattern registry, linked against libquill.so and using
 * nothing but <quill/quill.h> (so it also checks that these symbols are
 * exported).
 *
 *   version            quill_version() == the header's QUILL_VERSION_*
 *   models             quill_model_load_buffer (.qir text), entry graphs
 *   registry           quill_pass_register / quill_patterns_register:
 *                      lookup, listing, bad and duplicate names; a
 *                      registered pass and pattern set run by name
 *                      (apply-patterns{sets=...}); unknown set names
 *   quantize pipeline  the exact pipeline strings `quill quantize` prints
 *   run / compile      quill_run on the interpreter; unknown and pending
 *                      targets; ONNX export to memory; compile stubs
 *   exporters          quill_exporter_register / _run: output checked,
 *                      unknown names, a failing exporter leaves no file
 *   plugins            load errors (missing file) located at the path;
 *                      a failing init is rolled back, its passes, custom
 *                      ops and exporters included (the broken plugins
 *                      of test/tools/plugins/Inputs/bad_plugin.c)
 *
 * Diagnostics are captured into a buffer and checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quill/quill.h"

/* Whether the n bytes at p contain the string s. */
static bool contains(const void *p, size_t n, const char *s) {
  size_t k = strlen(s);
  for (size_t i = 0; i + k <= n; i++)
    if (!memcmp((const char *)p + i, s, k))
      return true;
  return false;
}

static int failures;
#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);   \
      failures++;                                                             \
    }                                                                         \
  } while (0)

typedef struct diags {
  char text[8192];
  unsigned errors;
} diags;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  diags *d = ud;
  size_t n = strlen(d->text);
  snprintf(d->text + n, sizeof d->text - n, "%s%s%s: %s\n",
           loc.file ? loc.file : "", loc.file ? ": " : "",
           quill_diag_severity_name(sev), msg);
  if (sev == QUILL_DIAG_ERROR)
    d->errors++;
}

static const char neg_qir[] =
    "func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %a = neg %x : tensor<4xf32>\n"
    "  %b = neg %a : tensor<4xf32>\n"
    "  %c = relu %b : tensor<4xf32>\n"
    "  return %c\n"
    "}\n"
    "func @other(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  return %x\n"
    "}\n";

/* ---- a registered pass and pattern set ---------------------------------- */

static quill_match_result double_neg(const quill_pattern *p,
                                     quill_rewriter *rw, quill_op *op) {
  (void)p;
  quill_op *inner = quill_value_def(quill_op_operand(op, 0));
  if (!inner || quill_op_opcode(inner) != QUILL_OP_NEG)
    return quill_rewriter_fail(rw, op, "operand is not a neg");
  quill_value *x = quill_op_operand(inner, 0);
  quill_rewriter_replace_op(rw, op, &x);
  return QUILL_MATCH_SUCCESS;
}

static const quill_pattern neg_patterns[] = {
    {"double-neg", QUILL_OP_NEG, 1, double_neg, NULL},
};

static quill_status count_run(quill_pass_state *ps, quill_module *m) {
  unsigned *n = quill_pass_input(ps, "counter");
  if (n)
    *n = quill_graph_num_ops(quill_module_graph(m, 0));
  quill_pass_mark_unchanged(ps);
  return QUILL_OK;
}

static const quill_pass count_pass = {
    .name = "test-count", .summary = "count", .run = count_run};
static const quill_pass bad_name_pass = {
    .name = "bad name", .summary = "x", .run = count_run};
static const quill_pass builtin_name_pass = {
    .name = "dce", .summary = "x", .run = count_run};
static const quill_pass no_run_pass = {.name = "no-run", .summary = "x"};

/* An exporter writing "graphs N ops M\n"; one that fails after writing. */
static quill_status write_counts(quill_context *ctx, const quill_module *m,
                                 FILE *out) {
  (void)ctx;
  unsigned ops = 0;
  for (unsigned i = 0; i < quill_module_num_graphs(m); i++)
    ops += quill_graph_num_ops(quill_module_graph(m, i));
  fprintf(out, "graphs %u ops %u\n", quill_module_num_graphs(m), ops);
  return QUILL_OK;
}
static quill_status write_fails(quill_context *ctx, const quill_module *m,
                                FILE *out) {
  (void)m;
  fputs("partial", out);
  return quill_error(ctx, quill_loc_unknown(), "test-fails: cannot export");
}
static const quill_exporter counts_exporter = {"test-counts", "counts",
                                               write_counts};
static const quill_exporter failing_exporter = {"test-fails", "fails",
                                                write_fails};

static unsigned count_op(quill_graph *g, quill_opcode opc) {
  unsigned n = 0;
  QUILL_GRAPH_FOREACH(g, op)
  n += quill_op_opcode(op) == opc;
  return n;
}

static quill_status run_pipeline(quill_module *m, const char *pipeline,
                                 unsigned *counter) {
  quill_pass_manager *pm = quill_pass_manager_create(quill_module_context(m));
  quill_status st = quill_pass_manager_parse_pipeline(pm, pipeline);
  if (!st && counter)
    st = quill_pass_manager_set_input(pm, "counter", counter);
  if (!st)
    st = quill_pass_manager_run(pm, m);
  quill_pass_manager_destroy(pm);
  return st;
}

static void test_registry(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  diags d = {{0}, 0};
  quill_diag_set_handler(ctx, capture, &d);
  quill_module *m =
      quill_model_load_buffer(ctx, neg_qir, sizeof neg_qir - 1, "neg.qir",
                              NULL);
  CHECK(m != NULL);

  /* Nothing registered: names are unknown, the listing is empty. */
  CHECK(quill_pass_num_registered(ctx) == 0);
  CHECK(quill_pass_find(ctx, "test-count", 10) == NULL);
  CHECK(quill_pass_find(ctx, "cse", 3) != NULL); /* built-ins are found */
  CHECK(run_pipeline(m, "test-count", NULL) == QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "unknown pass 'test-count'") != NULL);

  /* Register; bad registrations are errors that change nothing. */
  CHECK(quill_pass_register(ctx, &count_pass) == QUILL_OK);
  CHECK(quill_pass_register(ctx, &count_pass) == QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "cannot register pass 'test-count': already "
                       "registered by the application") != NULL);
  CHECK(quill_pass_register(ctx, &bad_name_pass) == QUILL_ERR_INVALID);
  CHECK(quill_pass_register(ctx, &builtin_name_pass) == QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "a built-in pass has that name") != NULL);
  CHECK(quill_pass_register(ctx, &no_run_pass) == QUILL_ERR_INVALID);
  CHECK(quill_pass_num_registered(ctx) == 1);
  CHECK(quill_pass_registered(ctx, 0) == &count_pass);
  CHECK(quill_pass_registered_origin(ctx, 0) == NULL);
  CHECK(quill_pass_find(ctx, "test-countX", 10) == &count_pass);

  CHECK(quill_patterns_register(ctx, "double-neg", neg_patterns, 1) ==
        QUILL_OK);
  CHECK(quill_patterns_register(ctx, "double-neg", neg_patterns, 1) ==
        QUILL_ERR_INVALID);
  CHECK(quill_patterns_register(ctx, "empty", neg_patterns, 0) ==
        QUILL_ERR_INVALID);
  unsigned n = 0;
  CHECK(quill_patterns_find(ctx, "double-neg", &n) == neg_patterns && n == 1);
  CHECK(quill_patterns_find(ctx, "nope", &n) == NULL && n == 0);
  CHECK(quill_patterns_num_registered(ctx) == 1);
  CHECK(!strcmp(quill_patterns_registered_name(ctx, 0), "double-neg"));

  /* They run by name in a pipeline. */
  unsigned counter = 0;
  d.text[0] = '\0';
  CHECK(run_pipeline(m, "test-count", &counter) == QUILL_OK);
  CHECK(counter == 4); /* neg, neg, relu, return */
  quill_graph *g = quill_module_entry(m, NULL);
  CHECK(g && count_op(g, QUILL_OP_NEG) == 2);
  CHECK(run_pipeline(m, "apply-patterns{sets=double-neg},test-count",
                     &counter) == QUILL_OK);
  CHECK(count_op(g, QUILL_OP_NEG) == 0);
  CHECK(counter == 2); /* relu, return */
  CHECK(run_pipeline(m, "apply-patterns{sets=double-neg,nope}", NULL) ==
        QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "unknown pattern set 'nope' (registered: "
                       "'double-neg')") != NULL);
  CHECK(run_pipeline(m, "apply-patterns", NULL) == QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "needs the option sets=") != NULL);

  /* Exporters: registered, run into a file, errors leave no file. */
  CHECK(quill_exporter_register(ctx, &counts_exporter) == QUILL_OK);
  CHECK(quill_exporter_register(ctx, &failing_exporter) == QUILL_OK);
  CHECK(quill_exporter_register(ctx, &counts_exporter) == QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "cannot register exporter 'test-counts': already "
                       "registered by the application") != NULL);
  CHECK(quill_exporter_find(ctx, "test-counts") == &counts_exporter);
  CHECK(quill_exporter_num_registered(ctx) == 2);
  CHECK(quill_exporter_registered_origin(ctx, 0) == NULL);
  char path[] = "/tmp/quill-capi-export-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0)
    close(fd);
  CHECK(quill_exporter_run(ctx, m, "test-counts", path) == QUILL_OK);
  char line[64] = {0};
  FILE *f = fopen(path, "r");
  CHECK(f && fgets(line, sizeof line, f));
  if (f)
    fclose(f);
  CHECK(!strcmp(line, "graphs 2 ops 3\n"));
  CHECK(quill_exporter_run(ctx, m, "test-fails", path) == QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "test-fails: cannot export") != NULL);
  line[0] = '\0'; /* the failed export left the old file as it was */
  f = fopen(path, "r");
  CHECK(f && fgets(line, sizeof line, f));
  if (f)
    fclose(f);
  CHECK(!strcmp(line, "graphs 2 ops 3\n"));
  unlink(path);
  CHECK(quill_exporter_run(ctx, m, "nope", path) == QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "unknown exporter 'nope' (registered: 'test-counts', "
                       "'test-fails'; exporters come from plugins") != NULL);
  CHECK(quill_exporter_run(ctx, m, "test-counts", "/nonexistent/dir/x") ==
        QUILL_ERR_IO);
  CHECK(strstr(d.text, "/nonexistent/dir/x: error: cannot write output file: "
                      "No such file or directory"));
  quill_exporter_register(ctx, NULL); /* an error, not a crash */

  /* Entry graphs. */
  CHECK(quill_module_entry(m, "other") == quill_module_graph(m, 1));
  CHECK(quill_module_entry(m, "missing") == NULL);
  CHECK(strstr(d.text, "no function named 'missing' in the module") != NULL);

  /* A registry per context: a fresh context knows none of it. */
  quill_context *ctx2 = quill_context_create(NULL, NULL);
  CHECK(quill_pass_find(ctx2, "test-count", 10) == NULL);
  CHECK(quill_patterns_find(ctx2, "double-neg", NULL) == NULL);
  quill_context_destroy(ctx2);

  /* Plugins: a missing file is an error at the path; nothing is kept. */
  d.text[0] = '\0';
  CHECK(quill_plugin_load(ctx, "/nonexistent/libx.so") == QUILL_ERR_IO);
  CHECK(strstr(d.text, "/nonexistent/libx.so: error: cannot load pass "
                       "plugin: ") != NULL);
  CHECK(quill_plugin_num_loaded(ctx) == 0);
  /* A plugin whose init fails after registering a pass: rolled back. */
  d.text[0] = '\0';
  CHECK(quill_plugin_load(ctx, QUILL_BAD_PLUGINS_DIR
                          "/libbad_init_fails.so") == QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "error: init-fails: refusing to initialize\n") &&
        strstr(d.text, "libbad_init_fails.so: note: while initializing pass "
                       "plugin 'init-fails'"));
  CHECK(quill_pass_find(ctx, "half-registered", 15) == NULL);
  CHECK(quill_custom_op_find(ctx, "half.registered") == NULL);
  CHECK(quill_exporter_find(ctx, "half-exporter") == NULL);
  CHECK(quill_plugin_num_loaded(ctx) == 0);
  CHECK(quill_pass_num_registered(ctx) == 1);
  CHECK(quill_custom_op_num_registered(ctx) == 0);
  CHECK(quill_exporter_num_registered(ctx) == 2); /* the application's */
  CHECK(quill_plugin_load(ctx, QUILL_BAD_PLUGINS_DIR "/libbad_abi.so") ==
        QUILL_ERR_INVALID);
  CHECK(quill_plugin_num_loaded(ctx) == 0);
  quill_module_destroy(m);
  quill_context_destroy(ctx);
}

/* ---- quantization pipeline ---------------------------------------------- */

static void test_pipeline(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  diags d = {{0}, 0};
  quill_diag_set_handler(ctx, capture, &d);
  quill_quantize_options o = {.backend = "tflite-int8", .calib_path = "data"};
  char *p = NULL;
  CHECK(quill_quantize_pipeline(ctx, &o, QUILL_QUANTIZE_ALL, &p) == QUILL_OK);
  CHECK(p && !strcmp(p, "canonicalize,fuse-patterns,fold-batchnorm,"
                        "fuse-activation{backend=tflite-int8},"
                        "insert-observers{backend=tflite-int8},"
                        "calibrate{data=data},quantize{backend=tflite-int8},"
                        "canonicalize,dce,fuse-qdq{backend=tflite-int8},dce"));
  quill_string_free(ctx, p);
  /* quill_quantize: argument checks come first, with diagnostics. */
  quill_module *m =
      quill_model_load_buffer(ctx, neg_qir, sizeof neg_qir - 1, "neg.qir",
                              NULL);
  CHECK(quill_quantize(ctx, m, NULL, NULL, NULL) == QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "quill_quantize: no backend"));
  CHECK(quill_quantize(ctx, m, "tflite-int8", NULL, NULL) ==
        QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "quill_quantize: no calibration data"));
  CHECK(quill_quantize(ctx, m, "x86-vnni", NULL, &o) == QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "quill_quantize: two different backends"));
  o.backend = NULL;
  CHECK(quill_quantize(ctx, m, "no-such-backend", NULL, &o) ==
        QUILL_ERR_INVALID);
  CHECK(strstr(d.text, "no-such-backend"));
  quill_module_destroy(m);
  quill_context_destroy(ctx);
}

/* ---- run and compile ---------------------------------------------------- */

static void test_run_compile(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  diags d = {{0}, 0};
  quill_diag_set_handler(ctx, capture, &d);
  quill_module *m =
      quill_model_load_buffer(ctx, neg_qir, sizeof neg_qir - 1, "neg.qir",
                              NULL);
  CHECK(m != NULL);
  quill_graph *g = quill_module_entry(m, NULL);
  quill_tensor x, y;
  memset(&y, 0, sizeof y);
  CHECK(quill_tensor_alloc(ctx, quill_value_type(quill_graph_arg(g, 0)),
                           &x) == QUILL_OK);
  float *xv = x.data;
  xv[0] = -2, xv[1] = -0.5f, xv[2] = 1.5f, xv[3] = 3;
  /* relu(neg(neg(x))) */
  CHECK(quill_run(m, NULL, &x, 1, &y, 1) == QUILL_OK);
  CHECK(y.data && quill_tensor_get_f64(&y, 0) == 0.0 &&
        quill_tensor_get_f64(&y, 2) == 1.5 &&
        quill_tensor_get_f64(&y, 3) == 3.0);
  quill_ref_tensors_free(ctx, &y, 1);
  quill_run_options ro = {"other", "reference"};
  CHECK(quill_run(m, &ro, &x, 1, &y, 1) == QUILL_OK);
  CHECK(quill_tensor_get_f64(&y, 0) == -2.0);
  quill_ref_tensors_free(ctx, &y, 1);
  ro.target = "llvm"; /* the JIT: the same values as the interpreter */
  CHECK(quill_run(m, &ro, &x, 1, &y, 1) == QUILL_OK);
  CHECK(y.data && quill_tensor_get_f64(&y, 0) == -2.0 &&
        quill_tensor_get_f64(&y, 2) == 1.5 &&
        quill_tensor_get_f64(&y, 3) == 3.0);
  quill_ref_tensors_free(ctx, &y, 1);
  ro.target = "onnx";
  CHECK(quill_run(m, &ro, &x, 1, &y, 1) == QUILL_ERR_UNSUPPORTED);
  CHECK(strstr(d.text, "target 'onnx' cannot run models"));
  quill_tensor_free(ctx, &x);

  CHECK(quill_target_available("reference") && quill_target_available("onnx"));
  CHECK(quill_target_available("llvm") && quill_target_available("tflite"));
  CHECK(!quill_target_available("nope") && !quill_target_available(NULL));

  /* ONNX export in memory: a ModelProto (field 1, ir_version). */
  quill_compile_options co;
  quill_compile_options_init(&co);
  CHECK(co.opt_level == 3 && co.threads == 1 && co.entry == NULL);
  void *data = NULL;
  size_t len = 0;
  CHECK(quill_export_onnx(m, &co, &data, &len) == QUILL_OK);
  CHECK(len > 16 && ((unsigned char *)data)[0] == 0x08);
  quill_module *back = quill_model_load_buffer(ctx, data, len, NULL, NULL);
  CHECK(back && quill_module_num_graphs(back) == 1);
  if (back)
    quill_module_destroy(back);
  quill_free(ctx, data, len);
  co.entry = "missing";
  CHECK(quill_export_onnx(m, &co, &data, &len) == QUILL_ERR_INVALID);
  CHECK(data == NULL && len == 0);

  /* Object code (the LLVM target): an ELF object in memory; bad options
   * are errors that write nothing. */
  d.text[0] = '\0';
  co.entry = NULL;
  CHECK(quill_compile_object(m, &co, &data, &len) == QUILL_OK);
  CHECK(data && len > 64 && !memcmp(data, "\x7f" "ELF", 4));
  quill_free(ctx, data, len);
  co.emit = QUILL_EMIT_LLVM_IR;
  CHECK(quill_compile_object(m, &co, &data, &len) == QUILL_OK);
  CHECK(data && len > 6 && contains(data, len, "define "));
  quill_free(ctx, data, len);
  co.emit = QUILL_EMIT_OBJECT;
  co.isa = "sse9";
  data = (void *)&len;
  CHECK(quill_compile_object(m, &co, &data, &len) == QUILL_ERR_INVALID);
  CHECK(data == NULL && len == 0 && strstr(d.text, "unknown isa 'sse9'"));
  co.isa = NULL;
  co.name = "not an identifier";
  CHECK(quill_compile_header_file(m, &co, "/nonexistent/x.h") != QUILL_OK);
  co.name = NULL;

  /* TFLite in memory: a FlatBuffer with the identifier "TFL3". */
  d.text[0] = '\0';
  CHECK(quill_compile_tflite(m, NULL, &data, &len) == QUILL_OK);
  CHECK(data && len > 8 && !memcmp((char *)data + 4, "TFL3", 4));
  quill_free(ctx, data, len);
  co.entry = "missing";
  CHECK(quill_compile_tflite(m, &co, &data, &len) == QUILL_ERR_INVALID);
  CHECK(data == NULL && len == 0);
  CHECK(quill_compile_tflite_file(m, NULL, "/nonexistent/dir/x.tflite") ==
        QUILL_ERR_IO);
  quill_module_destroy(m);

  /* Loading: bad text and missing files are located errors. */
  d.text[0] = '\0';
  CHECK(quill_model_load_buffer(ctx, "func @", 6, "bad.qir", NULL) == NULL);
  CHECK(strstr(d.text, "bad.qir: error:") != NULL);
  quill_model_options mo = {QUILL_MODEL_QIR, NULL};
  CHECK(quill_model_load(ctx, "/nonexistent/m.txt", &mo) == NULL);
  CHECK(strstr(d.text, "/nonexistent/m.txt: error: cannot open file") !=
        NULL);
  quill_context_destroy(ctx);
}

int main(void) {
  char v[32];
  snprintf(v, sizeof v, "%d.%d.%d", QUILL_VERSION_MAJOR, QUILL_VERSION_MINOR,
           QUILL_VERSION_PATCH);
  CHECK(!strcmp(quill_version(), v));
  test_registry();
  test_pipeline();
  test_run_compile();
  if (failures)
    fprintf(stderr, "test_capi: %d check(s) failed\n", failures);
  else
    printf("test_capi: ok\n");
  return failures ? 1 : 0;
}

/*
 * test_tflite_export.c - unit tests of the TFLite target (targets/tflite/).
 *
 *   coverage   every opcode 0..QUILL_OP_COUNT has a writer or is on the
 *              documented "no TFLite builtin" list (never both, never
 *              none)
 *   model      a small int8 graph exported to memory and read back with
 *              the FlatBuffers reader: file identifier, schema version,
 *              operator codes (deprecated_builtin_code and builtin_code),
 *              per-axis quantization, buffer 0 empty, constant data 16-byte
 *              aligned, subgraph inputs/outputs, signature def, metadata
 *   size       a model over the size limit (a small test limit standing in
 *              for 2 GB) is an error naming the limit, nothing returned
 *   errors     all unexportable ops are reported before the export fails
 *   oom        an allocator that fails the k-th allocation, for every k up
 *              to a successful run: each failure is QUILL_ERR_NOMEM and
 *              frees everything
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "targets/tflite/flatbuf.h"
#include "targets/tflite/schema.h"
#include "targets/tflite/tflite_export.h"

static int failures;
#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);   \
      failures++;                                                             \
    }                                                                         \
  } while (0)

typedef struct diags {
  int errors, warnings;
  char all[8192];
} diags;

static void on_diag(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  diags *d = ud;
  if (sev == QUILL_DIAG_ERROR)
    d->errors++;
  if (sev == QUILL_DIAG_WARNING)
    d->warnings++;
  size_t n = strlen(d->all);
  snprintf(d->all + n, sizeof d->all - n, "%u: %s\n", loc.line, msg);
}

static quill_module *parse(quill_context *ctx, const char *text) {
  quill_module *m = quill_parse_module(ctx, text, strlen(text), "t.qir", 0);
  CHECK(m != NULL);
  if (m && quill_verify_module(m) != QUILL_OK) {
    quill_module_destroy(m);
    m = NULL;
    CHECK(!"verifier failed");
  }
  return m;
}

static const char *model_text =
    "func @m(%x: tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5:-3>>) -> "
    "tensor<1x2x4x4x!quant.uniform<i8:f32, 0.25:1>> {\n"
    "  %w = constant {value = dense<[1, -1, 2, -2]> : "
    "tensor<2x2x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.5:0, 0.25:0}>>} : "
    "tensor<2x2x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.5:0, 0.25:0}>>\n"
    "  %b = constant {value = dense<[7, -9]> : tensor<2xi32>} : tensor<2xi32>\n"
    "  %y = qconv2d %x, %w, %b {rounding = \"tflite\", multiplier = "
    "[1073741824, 1073741824], shift = [1, 0]} : "
    "tensor<1x2x4x4x!quant.uniform<i8:f32, 0.25:1>>\n"
    "  return %y\n"
    "}\n";

/* ---- coverage ----------------------------------------------------------------- */

static void test_coverage(void) {
  for (int i = 0; i < QUILL_OP_COUNT; i++) {
    const char *why = NULL;
    bool has = quill_tflite_export_builtin((quill_opcode)i) != NULL;
    bool excluded = quill_tflite_export_op_excluded((quill_opcode)i, &why);
    if (has == excluded)
      fprintf(stderr, "op '%s': %s\n", quill_opcode_name((quill_opcode)i),
              has ? "has a writer and is excluded" : "neither written nor "
                                                     "excluded");
    CHECK(has != excluded);
    CHECK(!excluded || (why && *why));
  }
  CHECK(!strcmp(quill_tflite_export_builtin(QUILL_OP_QCONV2D),
                "CONV_2D/DEPTHWISE_CONV_2D"));
  CHECK(quill_tflite_export_builtin(QUILL_OP_COUNT) == NULL);
}

/* ---- a model read back ------------------------------------------------------------ */

static void test_model(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  diags d = {0};
  quill_diag_set_handler(ctx, on_diag, &d);
  quill_module *m = parse(ctx, model_text);
  if (!m) {
    quill_context_destroy(ctx);
    return;
  }
  void *data = NULL;
  size_t len = 0;
  CHECK(quill_tflite_export_buffer(ctx, quill_module_graph(m, 0), NULL, &data,
                                   &len) == QUILL_OK);
  CHECK(d.errors == 0 && d.warnings == 0);
  quill_fb_table model, sg, t, q;
  quill_fb_vec v, codes, tensors, bufs;
  CHECK(quill_fb_root(data, len, "TFL3", &model));
  CHECK(quill_fb_get_uint(&model, TFL_MODEL_VERSION, 4, 0) == 3);
  /* one operator code: CONV_2D version 3, both code fields set */
  CHECK(quill_fb_get_vec(&model, TFL_MODEL_OPERATOR_CODES, 4, &codes) &&
        codes.n == 1);
  CHECK(quill_fb_vec_table(&codes, 0, &t));
  CHECK(quill_fb_get_int(&t, TFL_OPCODE_BUILTIN_CODE, 4, -1) ==
        TFL_OP_CONV_2D);
  CHECK(quill_fb_get_int(&t, TFL_OPCODE_DEPRECATED_BUILTIN_CODE, 1, -1) ==
        TFL_OP_CONV_2D);
  CHECK(quill_fb_get_int(&t, TFL_OPCODE_VERSION, 4, 1) == 3);
  /* buffers: [0] empty; constant data aligned to 16 */
  CHECK(quill_fb_get_vec(&model, TFL_MODEL_BUFFERS, 4, &bufs) && bufs.n >= 3);
  CHECK(quill_fb_vec_table(&bufs, 0, &t) && !quill_fb_has(&t, TFL_BUFFER_DATA));
  for (uint32_t i = 1; i < bufs.n; i++)
    if (quill_fb_vec_table(&bufs, i, &t) &&
        quill_fb_get_vec(&t, TFL_BUFFER_DATA, 1, &v))
      CHECK(v.pos % 16 == 0);
  /* the weight tensor: OHWI [2,1,1,2], per-axis along 0 */
  CHECK(quill_fb_get_vec(&model, TFL_MODEL_SUBGRAPHS, 4, &v) && v.n == 1);
  CHECK(quill_fb_vec_table(&v, 0, &sg));
  CHECK(quill_fb_get_vec(&sg, TFL_SUBGRAPH_TENSORS, 4, &tensors));
  bool saw_w = false, saw_b = false;
  for (uint32_t i = 0; i < tensors.n; i++) {
    if (!quill_fb_vec_table(&tensors, i, &t))
      continue;
    const char *name = quill_fb_get_string(&t, TFL_TENSOR_NAME, NULL);
    if (name && !strcmp(name, "w")) {
      saw_w = true;
      CHECK(quill_fb_get_int(&t, TFL_TENSOR_TYPE, 1, 0) == TFL_INT8);
      CHECK(quill_fb_get_vec(&t, TFL_TENSOR_SHAPE, 4, &v) && v.n == 4 &&
            quill_fb_vec_int(&v, 0, 4) == 2 && quill_fb_vec_int(&v, 3, 4) == 2);
      CHECK(quill_fb_get_table(&t, TFL_TENSOR_QUANTIZATION, &q));
      CHECK(quill_fb_get_vec(&q, TFL_QUANT_SCALE, 4, &v) && v.n == 2 &&
            quill_fb_vec_f32(&v, 1) == 0.25f);
      CHECK(quill_fb_get_vec(&q, TFL_QUANT_ZERO_POINT, 8, &v) && v.n == 2 &&
            quill_fb_vec_int(&v, 0, 8) == 0);
      /* quantized_dimension 0 is the schema default: left out */
      CHECK(!quill_fb_has(&q, TFL_QUANT_QUANTIZED_DIMENSION));
    }
    if (name && !strcmp(name, "w_bias")) {
      saw_b = true;
      CHECK(quill_fb_get_int(&t, TFL_TENSOR_TYPE, 1, 0) == TFL_INT32);
      CHECK(quill_fb_get_table(&t, TFL_TENSOR_QUANTIZATION, &q));
      /* s_in * s_w[c] = 0.5 * {0.5, 0.25} */
      CHECK(quill_fb_get_vec(&q, TFL_QUANT_SCALE, 4, &v) && v.n == 2 &&
            quill_fb_vec_f32(&v, 0) == 0.25f &&
            quill_fb_vec_f32(&v, 1) == 0.125f);
    }
  }
  CHECK(saw_w && saw_b);
  /* inputs/outputs, the signature, metadata */
  CHECK(quill_fb_get_vec(&sg, TFL_SUBGRAPH_INPUTS, 4, &v) && v.n == 1);
  CHECK(quill_fb_get_vec(&model, TFL_MODEL_SIGNATURE_DEFS, 4, &v) && v.n == 1);
  CHECK(quill_fb_vec_table(&v, 0, &t));
  const char *key = quill_fb_get_string(&t, TFL_SIGDEF_SIGNATURE_KEY, NULL);
  CHECK(key && !strcmp(key, "serving_default"));
  CHECK(quill_fb_get_vec(&model, TFL_MODEL_METADATA, 4, &v) && v.n == 2);
  bool runtime = false;
  for (uint32_t i = 0; i < v.n; i++) {
    if (!quill_fb_vec_table(&v, i, &t))
      continue;
    const char *n = quill_fb_get_string(&t, TFL_METADATA_NAME, NULL);
    quill_fb_table bt;
    quill_fb_vec bd;
    uint32_t bi = (uint32_t)quill_fb_get_uint(&t, TFL_METADATA_BUFFER, 4, 0);
    if (n && !strcmp(n, "min_runtime_version") &&
        quill_fb_vec_table(&bufs, bi, &bt) &&
        quill_fb_get_vec(&bt, TFL_BUFFER_DATA, 1, &bd)) {
      runtime = bd.n == 16 && !strcmp((const char *)bd.buf + bd.pos, "1.14.0");
    }
  }
  CHECK(runtime);
  quill_free(ctx, data, len);
  quill_module_destroy(m);
  quill_context_destroy(ctx);
}

/* ---- size limit and errors ------------------------------------------------------------ */

static void test_size_limit(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  diags d = {0};
  quill_diag_set_handler(ctx, on_diag, &d);
  quill_module *m = parse(ctx, model_text);
  if (!m) {
    quill_context_destroy(ctx);
    return;
  }
  quill_tflite_export_options o = {false, 600};
  void *data = (void *)1;
  size_t len = 1;
  CHECK(quill_tflite_export_buffer(ctx, quill_module_graph(m, 0), &o, &data,
                                   &len) == QUILL_ERR_UNSUPPORTED);
  CHECK(data == NULL && len == 0);
  CHECK(d.errors == 1);
  CHECK(strstr(d.all, "too large for a TFLite FlatBuffer") != NULL);
  CHECK(strstr(d.all, "the limit is 600 bytes (2 GB)") != NULL);
  quill_module_destroy(m);
  quill_context_destroy(ctx);
}

static void test_errors(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  diags d = {0};
  quill_diag_set_handler(ctx, on_diag, &d);
  quill_module *m =
      parse(ctx, "func @e(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, "
                 "tensor<2x3xf32>) {\n"
                 "  %a = erf %x : tensor<2x3xf32>\n"
                 "  %b = hard_sigmoid %x : tensor<2x3xf32>\n"
                 "  return %a, %b\n"
                 "}\n");
  if (!m) {
    quill_context_destroy(ctx);
    return;
  }
  void *data = NULL;
  size_t len = 0;
  CHECK(quill_tflite_export_buffer(ctx, quill_module_graph(m, 0), NULL, &data,
                                   &len) == QUILL_ERR_INVALID);
  CHECK(d.errors == 2 && data == NULL);
  CHECK(strstr(d.all, "2: op 'erf' cannot be exported to TFLite") != NULL);
  CHECK(strstr(d.all, "3: op 'hard_sigmoid' cannot be exported to TFLite") !=
        NULL);
  /* with custom ops allowed: two CUSTOM codes, warnings */
  quill_tflite_export_options o = {true, 0};
  d.errors = d.warnings = 0;
  CHECK(quill_tflite_export_buffer(ctx, quill_module_graph(m, 0), &o, &data,
                                   &len) == QUILL_OK);
  CHECK(d.errors == 0 && d.warnings == 2);
  quill_fb_table model, t;
  quill_fb_vec codes;
  CHECK(quill_fb_root(data, len, "TFL3", &model) &&
        quill_fb_get_vec(&model, TFL_MODEL_OPERATOR_CODES, 4, &codes) &&
        codes.n == 2);
  CHECK(quill_fb_vec_table(&codes, 1, &t));
  const char *cc = quill_fb_get_string(&t, TFL_OPCODE_CUSTOM_CODE, NULL);
  CHECK(cc && !strcmp(cc, "quill.hard_sigmoid"));
  CHECK(quill_fb_get_int(&t, TFL_OPCODE_BUILTIN_CODE, 4, 0) == TFL_OP_CUSTOM);
  quill_free(ctx, data, len);
  quill_module_destroy(m);
  quill_context_destroy(ctx);
}

/* ---- out of memory -------------------------------------------------------------------- */

typedef struct budget {
  long left;
  size_t live;
} budget;

static void *budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  budget *b = ud;
  if (nsize == 0) {
    if (ptr)
      b->live -= osize;
    free(ptr);
    return NULL;
  }
  if (b->left == 0)
    return NULL;
  if (b->left > 0)
    b->left--;
  void *p = realloc(ptr, nsize);
  if (p)
    b->live += nsize - (ptr ? osize : 0);
  return p;
}

static void test_oom(void) {
  budget b = {-1, 0};
  quill_context *ctx = quill_context_create(budget_alloc, &b);
  diags d = {0};
  quill_diag_set_handler(ctx, on_diag, &d);
  quill_module *m = parse(ctx, model_text);
  if (!m) {
    quill_context_destroy(ctx);
    return;
  }
  bool done = false;
  int nomem = 0;
  for (long k = 0; k < 10000 && !done; k++) {
    size_t base = b.live;
    b.left = k;
    void *data = NULL;
    size_t len = 0;
    quill_status st = quill_tflite_export_buffer(ctx, quill_module_graph(m, 0),
                                                 NULL, &data, &len);
    b.left = -1;
    if (st == QUILL_OK) {
      done = true;
      quill_free(ctx, data, len);
    } else {
      CHECK(st == QUILL_ERR_NOMEM);
      CHECK(data == NULL);
      nomem++;
    }
    CHECK(b.live == base);
  }
  CHECK(done);
  CHECK(nomem >= 5);
  quill_module_destroy(m);
  quill_context_destroy(ctx);
  CHECK(b.live == 0);
}

int main(void) {
  test_coverage();
  test_model();
  test_size_limit();
  test_errors();
  test_oom();
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("test_tflite_export: all passed\n");
  return failures ? 1 : 0;
}

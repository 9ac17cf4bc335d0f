/*
 * consumer.c - a program outside the tree, built against the installed
 * Quill package (find_package(Quill) or pkg-config; install_test.sh), that
 * goes through the C API the way a user would:
 *
 *   1. import examples/digits/model.onnx                (quill_model_load)
 *   2. read test_x.npy / test_y.npy into memory, decode them, and cut rows
 *      into per-sample tensors                          (quill_npy_read_buffer)
 *   3. float accuracy on the first 50 test images       (quill_run)
 *   4. a pass registered by the application counts ops  (quill_pass_register)
 *   5. quantize for tflite-int8, calibrating on rows 100..199 held in
 *      memory (no file path)                            (quill_quantize)
 *   6. int8 accuracy on the 50 images >= 0.95, integer ops present
 *   7. quantize a second copy in the reference (QDQ) form
 *      (quill_quantize_module without the FUSE stage), export it to
 *      ONNX in memory (quill_export_onnx), check the bytes are a
 *      ModelProto, re-import them (quill_model_load_buffer) and get the
 *      same predictions
 *   8. the pending compile targets and a missing file fail with a status
 *      and a diagnostic through the installed handler
 *
 * Usage: consumer DIGITS_DIR. Prints one line per step; exit 0 when every
 * check holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <quill/quill.h>

#define ROWS_EVAL 50
#define CALIB_FIRST 100
#define CALIB_COUNT 100

static int failures;

#define CHECK(cond, ...)                                                      \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "consumer: check failed (%s:%d): ", __FILE__,          \
              __LINE__);                                                      \
      fprintf(stderr, __VA_ARGS__);                                           \
      fputc('\n', stderr);                                                    \
      failures++;                                                             \
    }                                                                         \
  } while (0)

/* The diagnostic handler: print like the default one, remember the last
 * error. */
typedef struct diags {
  quill_context *ctx;
  unsigned errors;
  char last[512];
} diags;

static void on_diag(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  diags *d = ud;
  if (sev == QUILL_DIAG_ERROR) {
    d->errors++;
    snprintf(d->last, sizeof d->last, "%s%s%s", loc.file ? loc.file : "",
             loc.file ? ": " : "", msg);
  }
  quill_diag_print(d->ctx, stderr, loc, sev, msg);
}

/* Read a whole file into malloc'd memory. */
static void *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 20, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap)
      break;
    char *nb = realloc(buf, cap * 2);
    if (!nb) {
      free(buf);
      buf = NULL;
    }
    buf = nb;
    cap *= 2;
  }
  fclose(f);
  *len = n;
  return buf;
}

/* Decode an .npy file read into memory. */
static quill_status load_npy(quill_context *ctx, const char *path,
                             quill_tensor *out) {
  size_t len = 0;
  void *data = slurp(path, &len);
  if (!data) {
    fprintf(stderr, "consumer: cannot read %s\n", path);
    return QUILL_ERR_IO;
  }
  quill_status st = quill_npy_read_buffer(ctx, data, len, path, out);
  free(data);
  return st;
}

/* Row r of images [N,1,16,16] as a new tensor of the graph input's type. */
static quill_status image_row(quill_context *ctx, quill_type *input_type,
                              const quill_tensor *images, size_t r,
                              quill_tensor *out) {
  quill_status st = quill_tensor_alloc(ctx, input_type, out);
  if (st)
    return st;
  if ((r + 1) * out->size > images->size)
    return QUILL_ERR_INVALID;
  memcpy(out->data, (const char *)images->data + r * out->size, out->size);
  return QUILL_OK;
}

static unsigned argmax10(const quill_tensor *logits) {
  unsigned best = 0;
  for (unsigned k = 1; k < 10; k++)
    if (quill_tensor_get_f64(logits, k) > quill_tensor_get_f64(logits, best))
      best = k;
  return best;
}

/* Predict the first ROWS_EVAL images; returns the number correct, -1 on
 * error. pred (may be NULL) gets the predictions. */
static int evaluate(quill_module *m, const quill_tensor *images,
                    const quill_tensor *labels, unsigned *pred) {
  quill_context *ctx = quill_module_context(m);
  quill_graph *g = quill_module_entry(m, NULL);
  if (!g || quill_graph_num_args(g) != 1 || quill_graph_num_results(g) != 1)
    return -1;
  quill_type *in_type = quill_value_type(quill_graph_arg(g, 0));
  int correct = 0;
  for (size_t r = 0; r < ROWS_EVAL; r++) {
    quill_tensor x, y;
    memset(&y, 0, sizeof y);
    if (image_row(ctx, in_type, images, r, &x))
      return -1;
    quill_status st = quill_run(m, NULL, &x, 1, &y, 1);
    quill_tensor_free(ctx, &x);
    if (st)
      return -1;
    unsigned p = argmax10(&y);
    quill_ref_tensors_free(ctx, &y, 1);
    if (pred)
      pred[r] = p;
    correct += (int64_t)p == quill_tensor_get_i64(labels, r);
  }
  return correct;
}

/* ---- a pass registered by the application ------------------------------- */

/* Counts the ops of the module into the unsigned the application handed
 * over as the pass-manager input "op-counter". */
static quill_status count_run(quill_pass_state *ps, quill_module *m) {
  unsigned *counter = quill_pass_input(ps, "op-counter");
  if (!counter)
    return quill_error(quill_pass_context(ps), quill_loc_unknown(),
                       "consumer-count-ops: no counter");
  for (unsigned i = 0; i < quill_module_num_graphs(m); i++)
    *counter += quill_graph_num_ops(quill_module_graph(m, i));
  quill_pass_mark_unchanged(ps);
  return QUILL_OK;
}

static const quill_pass count_pass = {
    .name = "consumer-count-ops",
    .summary = "count ops into the application's counter",
    .run = count_run,
    .preserves = QUILL_PROP_ALL,
};

static unsigned count_ops(quill_module *m) {
  quill_context *ctx = quill_module_context(m);
  unsigned counter = 0;
  quill_pass_manager *pm = quill_pass_manager_create(ctx);
  quill_status st = pm ? QUILL_OK : QUILL_ERR_NOMEM;
  if (!st)
    st = quill_pass_manager_parse_pipeline(pm, "dce,consumer-count-ops");
  if (!st)
    st = quill_pass_manager_set_input(pm, "op-counter", &counter);
  if (!st)
    st = quill_pass_manager_run(pm, m);
  quill_pass_manager_destroy(pm);
  return st ? 0 : counter;
}

static unsigned count_opcode(quill_module *m, quill_opcode opc) {
  unsigned n = 0;
  QUILL_GRAPH_FOREACH(quill_module_graph(m, 0), op)
  n += quill_op_opcode(op) == opc;
  return n;
}

/* A calibration dataset for m's graph from rows of `images`, in memory. */
static quill_calib_dataset *make_dataset(quill_module *m,
                                         const quill_tensor *images) {
  quill_context *ctx = quill_module_context(m);
  quill_graph *g = quill_module_graph(m, 0);
  quill_calib_dataset *ds = quill_calib_dataset_create(ctx, g);
  quill_type *in_type = quill_value_type(quill_graph_arg(g, 0));
  for (size_t r = CALIB_FIRST; ds && r < CALIB_FIRST + CALIB_COUNT; r++) {
    quill_tensor x;
    char origin[32];
    snprintf(origin, sizeof origin, "test_x[%zu]", r);
    quill_status st = image_row(ctx, in_type, images, r, &x);
    if (!st)
      st = quill_calib_dataset_add(ds, &x, 1, origin); /* copies */
    quill_tensor_free(ctx, &x);
    if (st) {
      quill_calib_dataset_destroy(ds);
      return NULL;
    }
  }
  return ds;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: consumer DIGITS_DIR\n");
    return 2;
  }
  char path[4096];
  printf("consumer: libquill %s (headers %d.%d.%d)\n", quill_version(),
         QUILL_VERSION_MAJOR, QUILL_VERSION_MINOR, QUILL_VERSION_PATCH);
  quill_context *ctx = quill_context_create(NULL, NULL);
  if (!ctx)
    return 1;
  diags d = {ctx, 0, ""};
  quill_diag_set_handler(ctx, on_diag, &d);

  /* 1-2. the model and the data */
  snprintf(path, sizeof path, "%s/model.onnx", argv[1]);
  quill_module *m = quill_model_load(ctx, path, NULL);
  CHECK(m != NULL, "cannot load %s", path);
  quill_tensor images, labels;
  memset(&images, 0, sizeof images);
  memset(&labels, 0, sizeof labels);
  snprintf(path, sizeof path, "%s/test_x.npy", argv[1]);
  CHECK(load_npy(ctx, path, &images) == QUILL_OK, "cannot decode %s", path);
  snprintf(path, sizeof path, "%s/test_y.npy", argv[1]);
  CHECK(load_npy(ctx, path, &labels) == QUILL_OK, "cannot decode %s", path);
  if (failures) {
    quill_context_destroy(ctx);
    return 1;
  }

  /* 3. float accuracy */
  int float_correct = evaluate(m, &images, &labels, NULL);
  printf("consumer: float accuracy %d/%d\n", float_correct, ROWS_EVAL);
  CHECK(float_correct >= ROWS_EVAL * 95 / 100, "float accuracy %d/%d",
        float_correct, ROWS_EVAL);

  /* 4. an application pass, by name in a pipeline */
  CHECK(quill_pass_register(ctx, &count_pass) == QUILL_OK,
        "quill_pass_register");
  CHECK(quill_pass_register(ctx, &count_pass) == QUILL_ERR_INVALID &&
            strstr(d.last, "already registered"),
        "registering twice: '%s'", d.last);
  unsigned float_ops = count_ops(m);
  printf("consumer: float model has %u ops\n", float_ops);
  CHECK(float_ops > 10, "op count %u", float_ops);

  /* 5-6. quantize from memory, int8 accuracy */
  quill_calib_dataset *ds = make_dataset(m, &images);
  CHECK(ds && quill_calib_dataset_size(ds) == CALIB_COUNT, "dataset");
  quill_status st = quill_quantize(ctx, m, "tflite-int8", ds, NULL);
  CHECK(st == QUILL_OK, "quill_quantize: status %d", (int)st);
  unsigned nq = count_opcode(m, QUILL_OP_QCONV2D);
  int int8_correct = st ? -1 : evaluate(m, &images, &labels, NULL);
  printf("consumer: int8 (tflite-int8, integer ops: %u qconv2d) accuracy "
         "%d/%d\n",
         nq, int8_correct, ROWS_EVAL);
  CHECK(nq >= 3, "expected qconv2d ops, got %u", nq);
  CHECK(int8_correct >= ROWS_EVAL * 95 / 100, "int8 accuracy %d/%d",
        int8_correct, ROWS_EVAL);

  /* 7. QDQ form -> ONNX in memory -> re-import */
  snprintf(path, sizeof path, "%s/model.onnx", argv[1]);
  quill_module *mq = quill_model_load(ctx, path, NULL);
  quill_quantize_options qo = {.backend = "tflite-int8"};
  st = mq ? quill_quantize_module(
                ctx, mq, &qo, QUILL_QUANTIZE_PREPARE | QUILL_QUANTIZE_QUANTIZE,
                ds, NULL)
          : QUILL_ERR_INVALID;
  CHECK(st == QUILL_OK, "reference quantization: status %d", (int)st);
  unsigned pred_q[ROWS_EVAL], pred_r[ROWS_EVAL];
  int ref_correct = st ? -1 : evaluate(mq, &images, &labels, pred_q);
  void *onnx = NULL;
  size_t onnx_len = 0;
  if (!st)
    st = quill_export_onnx(mq, NULL, &onnx, &onnx_len);
  CHECK(st == QUILL_OK && onnx && onnx_len > 1000, "quill_export_onnx");
  /* A ModelProto starts with field 1 (ir_version, varint): 0x08 then 8. */
  const unsigned char *b = onnx;
  CHECK(onnx_len > 2 && b[0] == 0x08 && b[1] == QUILL_ONNX_EXPORT_IR_VERSION,
        "ONNX bytes start %02x %02x", onnx_len ? b[0] : 0,
        onnx_len > 1 ? b[1] : 0);
  quill_module *mr =
      onnx ? quill_model_load_buffer(ctx, onnx, onnx_len, "qdq.onnx", NULL)
           : NULL;
  CHECK(mr != NULL, "re-importing the exported ONNX model");
  int reimport_correct = mr ? evaluate(mr, &images, &labels, pred_r) : -1;
  int same = 0;
  for (unsigned i = 0; mr && i < ROWS_EVAL; i++)
    same += pred_q[i] == pred_r[i];
  printf("consumer: QDQ accuracy %d/%d, ONNX %zu bytes, re-imported "
         "accuracy %d/%d, same predictions %d/%d\n",
         ref_correct, ROWS_EVAL, onnx_len, reimport_correct, ROWS_EVAL, same,
         ROWS_EVAL);
  CHECK(ref_correct >= ROWS_EVAL * 95 / 100, "QDQ accuracy");
  CHECK(same == ROWS_EVAL, "re-imported model predicts differently");
  quill_free(ctx, onnx, onnx_len);

  /* 8. errors: statuses and diagnostics */
  unsigned before = d.errors;
  quill_module *none = quill_model_load(ctx, "/nonexistent/model.onnx", NULL);
  CHECK(!none && d.errors > before, "loading a missing file");
  void *obj = (void *)1;
  size_t obj_len = 1;
  st = quill_compile_object(m, NULL, &obj, &obj_len);
  if (quill_target_available("llvm"))
    CHECK(st == QUILL_OK && obj_len > 4 && !memcmp(obj, "\x7f" "ELF", 4),
          "quill_compile_object: %d '%s'", (int)st, d.last);
  if (st == QUILL_OK)
    quill_free(ctx, obj, obj_len);
  else if (!quill_target_available("llvm"))
    CHECK(st == QUILL_ERR_UNSUPPORTED && !obj && !obj_len &&
              strstr(d.last, "target 'llvm' is not built into this library"),
          "quill_compile_object without the LLVM target: %d '%s'", (int)st,
          d.last);
  st = quill_compile_tflite(m, NULL, &obj, &obj_len);
  if (!quill_target_available("tflite"))
    CHECK(st == QUILL_ERR_UNSUPPORTED &&
              strstr(d.last, "target 'tflite' is not built into this library"),
          "quill_compile_tflite without the TFLite target");
  if (st == QUILL_OK)
    quill_free(ctx, obj, obj_len);
  printf("consumer: llvm %s, tflite %s\n",
         quill_target_available("llvm") ? "available" : "pending",
         quill_target_available("tflite") ? "available" : "pending");

  if (mr)
    quill_module_destroy(mr);
  if (mq)
    quill_module_destroy(mq);
  quill_calib_dataset_destroy(ds);
  quill_module_destroy(m);
  quill_tensor_free(ctx, &images);
  quill_tensor_free(ctx, &labels);
  quill_context_destroy(ctx);
  printf("consumer: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

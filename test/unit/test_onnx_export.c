/*
 * test_onnx_export.c - unit tests of the ONNX target (targets/onnx/).
 *
 *   coverage   every opcode 0..QUILL_OP_COUNT has an exporter or is on the
 *              documented "not exportable" list (never both, never none)
 *   model      a small quantized graph exported to memory and decoded again
 *              with protobuf-c: ir_version, producer, opset, metadata, node
 *              types and attributes, initializer types and bytes, graph
 *              input/output types (quantized ones as their storage type)
 *   opset      the opset follows the ops (hard_swish 14, layer_norm 17); a
 *              requested opset below that is an error naming the op
 *   errors     every unexportable op is reported, each at its location,
 *              before the export fails; a non-default quantize rounding
 *              warns but exports
 *   oom        an allocator that fails the k-th allocation, for every k up
 *              to a successful run: each failure returns QUILL_ERR_NOMEM
 *              and frees everything (live bytes back to the baseline)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

#include "ir/ir.h"
#include "targets/onnx/onnx_export.h"

static int failures;
#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);   \
      failures++;                                                             \
    }                                                                         \
  } while (0)

/* ---- diagnostics capture ------------------------------------------------------- */

typedef struct diags {
  int errors, warnings;
  char last[1024];
  char all[8192];
} diags;

static void on_diag(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  diags *d = ud;
  if (sev == QUILL_DIAG_ERROR)
    d->errors++;
  if (sev == QUILL_DIAG_WARNING)
    d->warnings++;
  snprintf(d->last, sizeof d->last, "%s", msg);
  size_t n = strlen(d->all);
  snprintf(d->all + n, sizeof d->all - n, "%u: %s\n", loc.line, msg);
}

static quill_module *parse(quill_context *ctx, const char *text) {
  quill_module *m = quill_parse_module(ctx, text, strlen(text), "t.qir", 0);
  CHECK(m != NULL);
  if (m && quill_verify_module(m) != QUILL_OK) {
    CHECK(!"verify");
    quill_module_destroy(m);
    return NULL;
  }
  return m;
}

/* ---- coverage ------------------------------------------------------------------ */

static void test_coverage(void) {
  for (unsigned i = 0; i < QUILL_OP_COUNT; i++) {
    const char *why = NULL;
    const char *t = quill_onnx_export_op_type((quill_opcode)i);
    bool excl = quill_onnx_export_op_excluded((quill_opcode)i, &why);
    if (!t == !excl)
      fprintf(stderr, "op '%s': %s\n", quill_opcode_name((quill_opcode)i),
              t ? "has an exporter and is excluded"
                : "has no exporter and is not on the excluded list");
    CHECK(!t != !excl);
    CHECK(!t || *t);
    CHECK(!excl || (why && *why));
  }
  CHECK(!strcmp(quill_onnx_export_op_type(QUILL_OP_CONV2D), "Conv"));
  CHECK(!strcmp(quill_onnx_export_op_type(QUILL_OP_QCONV2D), "QLinearConv"));
  CHECK(!quill_onnx_export_op_type(QUILL_OP_COUNT));
}

/* ---- a decoded model ------------------------------------------------------------ */

static const Onnx__TensorProto *find_init(const Onnx__GraphProto *g,
                                          const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (!strcmp(g->initializer[i]->name, name))
      return g->initializer[i];
  return NULL;
}

static const Onnx__AttributeProto *find_attr(const Onnx__NodeProto *n,
                                             const char *name) {
  for (size_t i = 0; i < n->n_attribute; i++)
    if (!strcmp(n->attribute[i]->name, name))
      return n->attribute[i];
  return NULL;
}

static const char *const model_text =
    "func @m(%x: tensor<1x2x4x4xf32>, %xq_in: tensor<2x!quant.uniform<u8:f32, "
    "0.5:3>>) -> (tensor<1x3x4x4x!quant.uniform<i8:f32, 0.25:-1>>, "
    "tensor<2xf32>) {\n"
    "  %xq = quantize %x : tensor<1x2x4x4x!quant.uniform<i8:f32, 0.125:2>>\n"
    "  %xd = dequantize %xq : tensor<1x2x4x4xf32>\n"
    "  %w = constant {value = dense<[1, -2, 3, -4, 5, -6]> : "
    "tensor<3x2x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.5:0, 0.25:0, "
    "0.125:0}>>} : tensor<3x2x1x1x!quant.uniform<i8<-127:127>:f32:0, "
    "{0.5:0, 0.25:0, 0.125:0}>>\n"
    "  %wd = dequantize %w : tensor<3x2x1x1xf32>\n"
    "  %y = conv2d %xd, %wd {activation = \"relu\"} : tensor<1x3x4x4xf32> "
    "loc(\"conv\")\n"
    "  %yq = quantize %y : tensor<1x3x4x4x!quant.uniform<i8:f32, 0.25:-1>>\n"
    "  %d2 = dequantize %xq_in : tensor<2xf32>\n"
    "  return %yq, %d2\n"
    "}\n";

static void test_model(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_module *m = parse(ctx, model_text);
  if (!m) {
    quill_context_destroy(ctx);
    return;
  }
  void *data = NULL;
  size_t len = 0;
  CHECK(quill_onnx_export_buffer(ctx, quill_module_graph(m, 0), NULL, &data,
                                 &len) == QUILL_OK);
  Onnx__ModelProto *mp = data ? onnx__model_proto__unpack(NULL, len, data)
                              : NULL;
  CHECK(mp != NULL);
  if (mp) {
    CHECK(mp->ir_version == 8);
    CHECK(!strcmp(mp->producer_name, "quill"));
    CHECK(mp->n_opset_import == 1 && mp->opset_import[0]->version == 13 &&
          !strcmp(mp->opset_import[0]->domain, ""));
    CHECK(mp->n_metadata_props == 1 &&
          !strcmp(mp->metadata_props[0]->key, "quill.graph") &&
          !strcmp(mp->metadata_props[0]->value, "m"));
    const Onnx__GraphProto *g = mp->graph;
    CHECK(!strcmp(g->name, "m"));
    /* Inputs: x float, xq_in as its storage type uint8. */
    CHECK(g->n_input == 2);
    CHECK(!strcmp(g->input[0]->name, "x") &&
          g->input[0]->type->tensor_type->elem_type ==
              ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
          g->input[0]->type->tensor_type->shape->n_dim == 4);
    CHECK(!strcmp(g->input[1]->name, "xq_in") &&
          g->input[1]->type->tensor_type->elem_type ==
              ONNX__TENSOR_PROTO__DATA_TYPE__UINT8);
    CHECK(g->n_output == 2 && !strcmp(g->output[0]->name, "yq") &&
          g->output[0]->type->tensor_type->elem_type ==
              ONNX__TENSOR_PROTO__DATA_TYPE__INT8 &&
          !strcmp(g->output[1]->name, "d2"));
    /* Nodes, in order. */
    static const char *const types[] = {
        "QuantizeLinear", "DequantizeLinear", "DequantizeLinear", "Conv",
        "Relu",           "QuantizeLinear",   "DequantizeLinear"};
    CHECK(g->n_node == sizeof types / sizeof *types);
    for (size_t i = 0; i < g->n_node && i < sizeof types / sizeof *types; i++)
      CHECK(!strcmp(g->node[i]->op_type, types[i]));
    if (g->n_node == 7) {
      /* The conv writes a temporary; Relu produces %y. */
      CHECK(!strcmp(g->node[3]->name, "conv"));
      CHECK(!strcmp(g->node[4]->name, "conv/Relu"));
      CHECK(!strcmp(g->node[3]->output[0], "y_preact") &&
            !strcmp(g->node[4]->input[0], "y_preact") &&
            !strcmp(g->node[4]->output[0], "y"));
      /* Per-axis DQ of the weights: axis 0, int8 data and zero points. */
      const Onnx__NodeProto *dq = g->node[2];
      const Onnx__AttributeProto *ax = find_attr(dq, "axis");
      CHECK(ax && ax->i == 0);
      const Onnx__TensorProto *w = find_init(g, dq->input[0]);
      CHECK(w && w->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 &&
            w->n_dims == 4 && w->raw_data.len == 6 &&
            (int8_t)w->raw_data.data[1] == -2);
      const Onnx__TensorProto *s = find_init(g, dq->input[1]);
      CHECK(s && s->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
            s->n_dims == 1 && s->dims[0] == 3 && s->raw_data.len == 12);
      if (s && s->raw_data.len == 12) {
        float f[3];
        memcpy(f, s->raw_data.data, sizeof f);
        CHECK(f[0] == 0.5f && f[1] == 0.25f && f[2] == 0.125f);
      }
      const Onnx__TensorProto *z = find_init(g, dq->input[2]);
      CHECK(z && z->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 &&
            z->n_dims == 1);
      /* Per-tensor Q of x: scalar scale and zero point, shared by its DQ. */
      const Onnx__NodeProto *q = g->node[0];
      CHECK(!find_attr(q, "axis"));
      const Onnx__TensorProto *zq = find_init(g, q->input[2]);
      CHECK(zq && zq->n_dims == 0 && zq->raw_data.len == 1 &&
            zq->raw_data.data[0] == 2);
      CHECK(!strcmp(g->node[1]->input[1], q->input[1]) &&
            !strcmp(g->node[1]->input[2], q->input[2]));
    }
    /* value_info for the intermediates, none for constants or outputs. */
    CHECK(g->n_value_info == 4); /* xq xd wd y */
    onnx__model_proto__free_unpacked(mp, NULL);
  }
  quill_free(ctx, data, len);
  /* Without value_info. */
  quill_onnx_export_options o = {0, true};
  CHECK(quill_onnx_export_buffer(ctx, quill_module_graph(m, 0), &o, &data,
                                 &len) == QUILL_OK);
  mp = data ? onnx__model_proto__unpack(NULL, len, data) : NULL;
  CHECK(mp && mp->graph->n_value_info == 0);
  if (mp)
    onnx__model_proto__free_unpacked(mp, NULL);
  quill_free(ctx, data, len);
  quill_module_destroy(m);
  quill_context_destroy(ctx);
}

/* ---- opset -------------------------------------------------------------------- */

static int64_t exported_opset(quill_context *ctx, const quill_graph *g,
                              int64_t want) {
  quill_onnx_export_options o = {want, false};
  void *data = NULL;
  size_t len = 0;
  if (quill_onnx_export_buffer(ctx, g, &o, &data, &len) != QUILL_OK)
    return -1;
  Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, data);
  int64_t v = mp ? mp->opset_import[0]->version : -2;
  if (mp)
    onnx__model_proto__free_unpacked(mp, NULL);
  quill_free(ctx, data, len);
  return v;
}

static void test_opset(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  diags d = {0};
  quill_diag_set_handler(ctx, on_diag, &d);
  quill_module *m = parse(
      ctx, "func @a(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {\n"
           "  %y = hard_swish %x : tensor<2x4xf32>\n"
           "  return %y\n"
           "}\n"
           "func @b(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> "
           "tensor<2x4xf32> {\n"
           "  %y = layer_norm %x, %s {axis = -1} : tensor<2x4xf32>\n"
           "  return %y\n"
           "}\n");
  if (m) {
    CHECK(exported_opset(ctx, quill_module_graph(m, 0), 0) == 14);
    CHECK(exported_opset(ctx, quill_module_graph(m, 0), 16) == 16);
    CHECK(exported_opset(ctx, quill_module_graph(m, 1), 0) == 17);
    CHECK(d.errors == 0);
    CHECK(exported_opset(ctx, quill_module_graph(m, 1), 13) == -1);
    CHECK(d.errors == 1 &&
          strstr(d.last, "op 'layer_norm' cannot be exported to ONNX: it "
                         "needs opset 17") != NULL);
    CHECK(exported_opset(ctx, quill_module_graph(m, 0), 18) == -1);
    CHECK(strstr(d.last, "opset 18 cannot be written") != NULL);
    quill_module_destroy(m);
  }
  quill_context_destroy(ctx);
}

/* ---- errors and warnings ------------------------------------------------------- */

static void test_errors(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  diags d = {0};
  quill_diag_set_handler(ctx, on_diag, &d);
  quill_module *m = parse(
      ctx,
      "func @e(%x: tensor<2x4xf32>, %i: tensor<4xi8>) -> (tensor<2x8xf32>, "
      "tensor<4xi4>, tensor<2x4xf32>) {\n"
      "  %p = pad %x {pads = [0, 2, 0, 2], mode = \"wrap\"} : "
      "tensor<2x8xf32>\n"
      "  %c = cast %i : tensor<4xi4>\n"
      "  %r = resize %x {coordinate_transformation_mode = "
      "\"tf_crop_and_resize\"} : tensor<2x4xf32>\n"
      "  return %p, %c, %r\n"
      "}\n");
  if (m) {
    void *data = (void *)1;
    size_t len = 1;
    CHECK(quill_onnx_export_buffer(ctx, quill_module_graph(m, 0), NULL, &data,
                                   &len) == QUILL_ERR_INVALID);
    CHECK(data == NULL && len == 0);
    /* All three ops reported, each at its line: two by the checks, the
     * resize by its builder. */
    CHECK(d.errors == 3);
    CHECK(strstr(d.all, "2: op 'pad' cannot be exported to ONNX: it needs "
                        "opset 19") != NULL);
    CHECK(strstr(d.all, "3: op 'cast' cannot be exported to ONNX: result #0 "
                        "has type tensor<4xi4>") != NULL);
    CHECK(strstr(d.all, "4: op 'resize' cannot be exported to ONNX: "
                        "coordinate_transformation_mode "
                        "\"tf_crop_and_resize\"") != NULL);
    quill_module_destroy(m);
  }
  /* Builder problems of several ops. */
  d = (diags){0};
  m = parse(ctx, "func @r(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {\n"
                 "  %r = resize %x {coordinate_transformation_mode = "
                 "\"tf_crop_and_resize\"} : tensor<1x1x4x4xf32>\n"
                 "  %s = resize %x {coordinate_transformation_mode = "
                 "\"tf_crop_and_resize\"} : tensor<1x1x4x4xf32>\n"
                 "  return %r\n"
                 "}\n");
  if (m) {
    void *data;
    size_t len;
    CHECK(quill_onnx_export_buffer(ctx, quill_module_graph(m, 0), NULL, &data,
                                   &len) == QUILL_ERR_INVALID);
    CHECK(d.errors == 2);
    CHECK(strstr(d.all, "2: op 'resize' cannot be exported to ONNX: "
                        "coordinate_transformation_mode "
                        "\"tf_crop_and_resize\"") != NULL);
    CHECK(strstr(d.all, "3: op 'resize'") != NULL);
    quill_module_destroy(m);
  }
  /* A tflite-rounding quantize exports with a warning. */
  d = (diags){0};
  m = parse(ctx, "func @w(%x: tensor<4xf32>) -> tensor<4x!quant.uniform<i8:"
                 "f32, 0.5:0>> {\n"
                 "  %q = quantize %x {rounding = \"tflite\"} : "
                 "tensor<4x!quant.uniform<i8:f32, 0.5:0>>\n"
                 "  return %q\n"
                 "}\n");
  if (m) {
    void *data = NULL;
    size_t len = 0;
    CHECK(quill_onnx_export_buffer(ctx, quill_module_graph(m, 0), NULL, &data,
                                   &len) == QUILL_OK);
    CHECK(d.errors == 0 && d.warnings == 1);
    CHECK(strstr(d.last, "rounds \"tflite\", but ONNX QuantizeLinear rounds "
                         "half to even") != NULL);
    quill_free(ctx, data, len);
    quill_module_destroy(m);
  }
  quill_context_destroy(ctx);
}

/* ---- out of memory ----------------------------------------------------------------- */

typedef struct budget {
  long left;    /* allocations that may still succeed; < 0: unlimited */
  size_t live;  /* bytes currently allocated */
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
    quill_status st =
        quill_onnx_export_buffer(ctx, quill_module_graph(m, 0), NULL, &data,
                                 &len);
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
  CHECK(nomem >= 5); /* maps, arena chunk, packed buffer */
  quill_module_destroy(m);
  quill_context_destroy(ctx);
  CHECK(b.live == 0);
}

int main(void) {
  test_coverage();
  test_model();
  test_opset();
  test_errors();
  test_oom();
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("test_onnx_export: all checks passed\n");
  return failures ? 1 : 0;
}

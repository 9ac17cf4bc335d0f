/*
 * test_onnx_bindings.c - the C API of graph-input bindings
 * (quill_onnx_options.bindings, frontends/onnx/onnx.h).
 *
 * Models are built in memory with the protobuf-c structs generated from
 * onnx.proto and packed, then imported with bindings:
 *
 *   add:   y = Add(x, w)             x, w: f32[2] graph inputs (w may also
 *                                    have an initializer)
 *   deq:   y = DequantizeLinear(q, s, z)   q: u8[2], s: f32[], z: u8[]
 *
 * Checked: a bound input becomes a constant holding a copy of the tensor
 * and leaves the graph arguments; a binding overrides an initializer;
 * bound scale and zero point become the quantized type; bindings that name
 * no input, contradict the declared type, or are not valid tensors are
 * errors with a diagnostic (and no module).
 */
#include <stdio.h>
#include <string.h>

#include "frontends/onnx/onnx.h"
#include "onnx.pb-c.h"

static int passed, failed;

#define CHECK(c)                                                              \
  do {                                                                        \
    if (c)                                                                    \
      passed++;                                                               \
    else {                                                                    \
      failed++;                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);   \
    }                                                                         \
  } while (0)

/* ---- building models ---------------------------------------------------- */

typedef struct vinfo {
  Onnx__ValueInfoProto vi;
  Onnx__TypeProto type;
  Onnx__TypeProto__Tensor tensor;
  Onnx__TensorShapeProto shape;
  Onnx__TensorShapeProto__Dimension dim, *dims[1];
} vinfo;

/* A tensor value info of `elem` with rank 0 (len < 0) or 1. */
static Onnx__ValueInfoProto *make_vi(vinfo *v, char *name, int elem,
                                     int64_t len) {
  onnx__value_info_proto__init(&v->vi);
  onnx__type_proto__init(&v->type);
  onnx__type_proto__tensor__init(&v->tensor);
  onnx__tensor_shape_proto__init(&v->shape);
  onnx__tensor_shape_proto__dimension__init(&v->dim);
  v->vi.name = name;
  v->vi.type = &v->type;
  v->type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  v->type.tensor_type = &v->tensor;
  v->tensor.has_elem_type = 1;
  v->tensor.elem_type = elem;
  v->tensor.shape = &v->shape;
  if (len >= 0) {
    v->dim.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    v->dim.dim_value = len;
    v->dims[0] = &v->dim;
    v->shape.n_dim = 1;
    v->shape.dim = v->dims;
  }
  return &v->vi;
}

/* Pack a one-node model (opset 13); returns the byte count in buf. */
static size_t pack_model(char *op, char **ins, size_t nin,
                         Onnx__ValueInfoProto **inputs, size_t ninputs,
                         Onnx__ValueInfoProto *output,
                         Onnx__TensorProto **inits, size_t ninits,
                         uint8_t *buf, size_t cap) {
  static char *outs[] = {"y"};
  Onnx__NodeProto node = ONNX__NODE_PROTO__INIT, *nodes[] = {&node};
  node.op_type = op;
  node.name = "n";
  node.n_input = nin;
  node.input = ins;
  node.n_output = 1;
  node.output = outs;
  Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
  g.name = "g";
  g.n_node = 1;
  g.node = nodes;
  g.n_input = ninputs;
  g.input = inputs;
  g.n_output = 1;
  g.output = &output;
  g.n_initializer = ninits;
  g.initializer = inits;
  Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT,
                           *opsets[] = {&opset};
  opset.domain = "";
  opset.has_version = 1;
  opset.version = 13;
  Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
  m.has_ir_version = 1;
  m.ir_version = 8;
  m.graph = &g;
  m.n_opset_import = 1;
  m.opset_import = opsets;
  size_t n = onnx__model_proto__get_packed_size(&m);
  if (n > cap)
    return 0;
  return onnx__model_proto__pack(&m, buf);
}

static size_t add_model(uint8_t *buf, size_t cap, bool with_init) {
  static char *ins[] = {"x", "w"};
  vinfo x, w, y;
  Onnx__ValueInfoProto *inputs[] = {
      make_vi(&x, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2),
      make_vi(&w, "w", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2)};
  float wv[2] = {10, 20};
  int64_t wd[1] = {2};
  Onnx__TensorProto init = ONNX__TENSOR_PROTO__INIT, *inits[] = {&init};
  init.name = "w";
  init.has_data_type = 1;
  init.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  init.n_dims = 1;
  init.dims = wd;
  init.n_float_data = 2;
  init.float_data = wv;
  return pack_model("Add", ins, 2, inputs, 2,
                    make_vi(&y, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2),
                    inits, with_init ? 1 : 0, buf, cap);
}

static size_t deq_model(uint8_t *buf, size_t cap) {
  static char *ins[] = {"q", "s", "z"};
  vinfo q, s, z, y;
  Onnx__ValueInfoProto *inputs[] = {
      make_vi(&q, "q", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 2),
      make_vi(&s, "s", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, -1),
      make_vi(&z, "z", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, -1)};
  return pack_model("DequantizeLinear", ins, 3, inputs, 3,
                    make_vi(&y, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2),
                    NULL, 0, buf, cap);
}

/* ---- helpers -------------------------------------------------------------- */

typedef struct diags {
  unsigned errors;
  char last[512];
} diags;

static void collect(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  diags *d = ud;
  (void)loc;
  if (sev == QUILL_DIAG_ERROR) {
    d->errors++;
    snprintf(d->last, sizeof d->last, "%s", msg);
  }
}

static quill_tensor make_tensor(quill_context *ctx, quill_type_kind kind,
                                unsigned rank, int64_t len) {
  quill_type *t = quill_type_tensor(ctx, quill_type_scalar(ctx, kind), rank,
                                    &len);
  quill_tensor v;
  if (quill_tensor_alloc(ctx, t, &v))
    memset(&v, 0, sizeof v);
  return v;
}

/* The op defining graph result 0's operand #i, through the return op. */
static quill_op *result_operand_def(quill_module *m, unsigned i) {
  quill_graph *g = quill_module_graph(m, 0);
  quill_op *ret = quill_graph_last_op(g);
  quill_op *y = quill_value_def(quill_op_operand(ret, 0));
  return quill_value_def(quill_op_operand(y, i));
}

/* ---- tests ---------------------------------------------------------------- */

static void test_bind_weight(bool with_init) {
  uint8_t buf[1024];
  size_t len = add_model(buf, sizeof buf, with_init);
  CHECK(len > 0);
  quill_context *ctx = quill_context_create(NULL, NULL);
  diags d = {0};
  quill_diag_set_handler(ctx, collect, &d);
  quill_tensor w = make_tensor(ctx, QUILL_TYPE_F32, 1, 2);
  quill_tensor_set_f64(&w, 0, 1.5);
  quill_tensor_set_f64(&w, 1, -2.5);
  quill_onnx_binding b = {"w", &w};
  quill_onnx_options o = {.bindings = &b, .num_bindings = 1};
  quill_module *m = quill_onnx_import_buffer(ctx, buf, len, "add", &o);
  CHECK(m != NULL);
  CHECK(d.errors == 0);
  /* The tensor was copied: changing it now does not change the module. */
  quill_tensor_set_f64(&w, 0, 99);
  quill_tensor_free(ctx, &w);
  if (m) {
    quill_graph *g = quill_module_graph(m, 0);
    CHECK(quill_graph_num_args(g) == 1);
    quill_op *c = result_operand_def(m, 1);
    CHECK(c && quill_op_opcode(c) == QUILL_OP_CONSTANT);
    const quill_attr *a = c ? quill_value_constant(quill_op_result(c, 0)) : NULL;
    CHECK(a && quill_attr_dense_get_f64(a, 0) == 1.5);
    CHECK(a && quill_attr_dense_get_f64(a, 1) == -2.5);
    quill_module_destroy(m);
  }
  quill_context_destroy(ctx);
}

static void test_bind_quant_params(void) {
  uint8_t buf[1024];
  size_t len = deq_model(buf, sizeof buf);
  quill_context *ctx = quill_context_create(NULL, NULL);
  diags d = {0};
  quill_diag_set_handler(ctx, collect, &d);
  quill_tensor s = make_tensor(ctx, QUILL_TYPE_F32, 0, 0);
  quill_tensor z = make_tensor(ctx, QUILL_TYPE_U8, 0, 0);
  quill_tensor_set_f64(&s, 0, 0.25);
  quill_tensor_set_i64(&z, 0, 3);
  quill_onnx_binding b[] = {{"s", &s}, {"z", &z}};
  quill_onnx_options o = {.bindings = b, .num_bindings = 2};
  quill_module *m = quill_onnx_import_buffer(ctx, buf, len, "deq", &o);
  CHECK(m != NULL);
  if (m) {
    /* q is scast to the quantized type made from the bound parameters. */
    quill_op *sc = result_operand_def(m, 0);
    CHECK(sc && quill_op_opcode(sc) == QUILL_OP_SCAST);
    quill_type *e = sc ? quill_type_elem(quill_value_type(quill_op_result(sc, 0)))
                       : NULL;
    CHECK(e && quill_type_is_quant(e));
    CHECK(e && quill_type_quant_scales(e)[0] == 0.25);
    CHECK(e && quill_type_quant_zero_points(e)[0] == 3);
    CHECK(quill_graph_num_args(quill_module_graph(m, 0)) == 1);
    quill_module_destroy(m);
  }
  /* Unbound, the scale is not a constant: an error naming the node. */
  d.errors = 0;
  m = quill_onnx_import_buffer(ctx, buf, len, "deq", NULL);
  CHECK(m == NULL);
  CHECK(d.errors > 0 && strstr(d.last, "must be a constant"));
  quill_tensor_free(ctx, &s);
  quill_tensor_free(ctx, &z);
  quill_context_destroy(ctx);
}

static void test_bad_bindings(void) {
  uint8_t buf[1024];
  size_t len = add_model(buf, sizeof buf, false);
  quill_context *ctx = quill_context_create(NULL, NULL);
  diags d = {0};
  quill_diag_set_handler(ctx, collect, &d);
  quill_tensor w3 = make_tensor(ctx, QUILL_TYPE_F32, 1, 3);
  quill_tensor wi = make_tensor(ctx, QUILL_TYPE_I32, 1, 2);
  quill_tensor broken = make_tensor(ctx, QUILL_TYPE_F32, 1, 2);
  broken.size = 4; /* inconsistent with its type */
  static const struct {
    const char *name;
    int which;
    const char *msg;
  } cases[] = {
      {"w", 0, "is bound to a constant of type tensor<3xf32> but the model "
               "declares FLOAT [2]"},
      {"w", 1, "is bound to a constant of type tensor<2xi32>"},
      {"nope", 0, "a constant is bound to 'nope', which is not a graph input"},
      {"w", 2, "is not a valid static tensor"},
      {"w", 3, "is not a valid static tensor"},
  };
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const quill_tensor *v = cases[i].which == 0   ? &w3
                            : cases[i].which == 1 ? &wi
                            : cases[i].which == 2 ? &broken
                                                  : NULL;
    quill_onnx_binding b = {cases[i].name, v};
    quill_onnx_options o = {.bindings = &b, .num_bindings = 1};
    d.errors = 0;
    quill_module *m = quill_onnx_import_buffer(ctx, buf, len, "add", &o);
    CHECK(m == NULL);
    CHECK(d.errors == 1 && strstr(d.last, cases[i].msg));
    if (!strstr(d.last, cases[i].msg))
      fprintf(stderr, "  case %u: got '%s'\n", i, d.last);
    if (m)
      quill_module_destroy(m);
  }
  broken.size = 8;
  quill_tensor_free(ctx, &w3);
  quill_tensor_free(ctx, &wi);
  quill_tensor_free(ctx, &broken);
  quill_context_destroy(ctx);
}

int main(void) {
  test_bind_weight(false);
  test_bind_weight(true); /* the binding overrides the initializer */
  test_bind_quant_params();
  test_bad_bindings();
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

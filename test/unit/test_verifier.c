/*
 * test_verifier.c - unit tests for the IR verifier (ir/verifier.c), the
 * op verifiers (ir/op_verify*.c) and the shape helpers (ir/shape.c).
 *
 * Graphs are built through the C API; a diagnostic handler installed on
 * the context collects messages so each test can assert the verifier's
 * status and the exact diagnostic text. Shape helpers are tested directly
 * on quill_shape values.
 */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/shape.h"

static int failures;

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,        \
              #cond);                                                         \
      failures++;                                                             \
    }                                                                         \
  } while (0)

/* ---- diagnostic capture ------------------------------------------------ */

typedef struct diags {
  char text[8192]; /* messages, one per line */
  unsigned errors, notes;
} diags;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  diags *d = ud;
  (void)loc;
  if (sev == QUILL_DIAG_ERROR)
    d->errors++;
  else if (sev == QUILL_DIAG_NOTE)
    d->notes++;
  size_t len = strlen(d->text);
  snprintf(d->text + len, sizeof d->text - len, "%s\n", msg);
}

static void reset(diags *d) { memset(d, 0, sizeof *d); }

/* Assert that `msg` was emitted (as a whole line). */
#define CHECK_DIAG(d, msg)                                                    \
  do {                                                                        \
    if (!strstr((d)->text, msg "\n")) {                                       \
      fprintf(stderr, "%s:%d: missing diagnostic \"%s\"; got:\n%s",          \
              __FILE__, __LINE__, msg, (d)->text);                            \
      failures++;                                                             \
    }                                                                         \
  } while (0)

/* ---- builders ---------------------------------------------------------- */

static quill_context *ctx;
static diags D;

static quill_type *T(const char *s) {
  quill_type *t = quill_parse_type(ctx, s, strlen(s));
  if (!t) {
    fprintf(stderr, "cannot parse type %s\n", s);
    failures++;
  }
  return t;
}

static quill_loc L(unsigned line) { return quill_loc_file(ctx, "t.qir", line, 1); }

/* Append an op with up to 3 operands and one result (rt may be NULL for
 * none); attrs optional. */
static quill_op *add_op(quill_graph *g, quill_opcode opc, unsigned n,
                        quill_value *a, quill_value *b, quill_value *c,
                        quill_type *rt, unsigned na,
                        const quill_named_attr *attrs) {
  quill_value *ops[3] = {a, b, c};
  quill_op *op = quill_op_create(g, opc, n, ops, rt ? 1 : 0, &rt, na, attrs,
                                 L(quill_graph_num_ops(g) + 2));
  quill_op_insert_at_end(g, op);
  return op;
}

static quill_value *R(quill_op *op) { return quill_op_result(op, 0); }

static quill_graph *graph1(quill_module *m, const char *name, const char *in,
                           const char *out) {
  quill_type *a = T(in), *r = T(out);
  quill_graph *g = quill_graph_create(m, name, 1, &a, 1, &r);
  quill_graph_set_loc(g, L(1));
  return g;
}

static quill_named_attr A(const char *name, const quill_attr *a) {
  quill_named_attr na = {quill_ident_get(ctx, name), a};
  return na;
}

static const quill_attr *ints(size_t n, const int64_t *v) {
  return quill_attr_int_list(ctx, n, v);
}

/* Verify a one-op graph: x -> op(x[, x2]) -> return. */
static quill_status verify_unary(quill_opcode opc, const char *in,
                                 const char *out, unsigned na,
                                 const quill_named_attr *attrs) {
  quill_module *m = quill_module_create(ctx);
  quill_graph *g = graph1(m, "f", in, out);
  quill_op *op = add_op(g, opc, 1, quill_graph_arg(g, 0), NULL, NULL, T(out),
                        na, attrs);
  add_op(g, QUILL_OP_RETURN, 1, R(op), NULL, NULL, NULL, 0, NULL);
  reset(&D);
  quill_status st = quill_verify_module(m);
  quill_module_destroy(m);
  return st;
}

/* Two-input graph with a binary-shaped op. */
static quill_status verify_binary(quill_opcode opc, const char *a,
                                  const char *b, const char *out, unsigned na,
                                  const quill_named_attr *attrs) {
  quill_module *m = quill_module_create(ctx);
  quill_type *args[2] = {T(a), T(b)}, *r = T(out);
  quill_graph *g = quill_graph_create(m, "f", 2, args, 1, &r);
  quill_op *op = add_op(g, opc, 2, quill_graph_arg(g, 0), quill_graph_arg(g, 1),
                        NULL, r, na, attrs);
  add_op(g, QUILL_OP_RETURN, 1, R(op), NULL, NULL, NULL, 0, NULL);
  reset(&D);
  quill_status st = quill_verify_module(m);
  quill_module_destroy(m);
  return st;
}

/* ---- generic checks ---------------------------------------------------- */

static void test_valid(void) {
  quill_module *m = quill_module_create(ctx);
  quill_graph *g = graph1(m, "main", "tensor<2x3xf32>", "tensor<2x3xf32>");
  quill_value *x = quill_graph_arg(g, 0);
  quill_op *r = add_op(g, QUILL_OP_RELU, 1, x, NULL, NULL,
                       T("tensor<2x3xf32>"), 0, NULL);
  quill_op *a = add_op(g, QUILL_OP_ADD, 2, R(r), x, NULL,
                       T("tensor<2x3xf32>"), 0, NULL);
  add_op(g, QUILL_OP_RETURN, 1, R(a), NULL, NULL, NULL, 0, NULL);
  reset(&D);
  CHECK(quill_verify_module(m) == QUILL_OK);
  CHECK(D.errors == 0);
  CHECK(quill_verify_op(a) == QUILL_OK);
  quill_module_destroy(m);
}

static void test_arity(void) {
  quill_module *m = quill_module_create(ctx);
  quill_graph *g = graph1(m, "main", "tensor<2xf32>", "tensor<2xf32>");
  quill_value *x = quill_graph_arg(g, 0);
  quill_op *a = add_op(g, QUILL_OP_ADD, 3, x, x, x, T("tensor<2xf32>"), 0,
                       NULL);
  quill_op *c = add_op(g, QUILL_OP_CLIP, 0, NULL, NULL, NULL,
                       T("tensor<2xf32>"), 0, NULL);
  quill_op *s = add_op(g, QUILL_OP_SPLIT, 1, x, NULL, NULL, NULL, 0, NULL);
  add_op(g, QUILL_OP_RETURN, 1, R(a), NULL, NULL, NULL, 0, NULL);
  reset(&D);
  CHECK(quill_verify_module(m) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'add' op expects 2 operands, got 3");
  CHECK_DIAG(&D, "'clip' op expects 1 to 3 operands, got 0");
  CHECK_DIAG(&D, "'split' op expects at least 1 result, got 0");
  CHECK(D.errors == 3);
  reset(&D);
  CHECK(quill_verify_op(c) == QUILL_ERR_INVALID);
  CHECK(quill_verify_op(s) == QUILL_ERR_INVALID);
  CHECK(D.errors == 2);
  quill_module_destroy(m);
}

static void test_use_before_def(void) {
  quill_module *m = quill_module_create(ctx);
  quill_graph *g = graph1(m, "main", "tensor<2xf32>", "tensor<2xf32>");
  quill_value *x = quill_graph_arg(g, 0);
  quill_type *t = T("tensor<2xf32>");
  /* %1 = relu %0 placed before %0 = neg %x */
  quill_op *neg = quill_op_create(g, QUILL_OP_NEG, 1, &x, 1, &t, 0, NULL, L(3));
  quill_value *nv = R(neg);
  quill_op *relu = quill_op_create(g, QUILL_OP_ADD, 2,
                                   (quill_value *[]){x, nv}, 1, &t, 0, NULL,
                                   L(2));
  quill_op_insert_at_end(g, relu);
  quill_op_insert_at_end(g, neg);
  add_op(g, QUILL_OP_RETURN, 1, R(relu), NULL, NULL, NULL, 0, NULL);
  reset(&D);
  CHECK(quill_verify_module(m) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "operand #1 of 'add' is used before its definition");
  CHECK(D.errors == 1);

  /* Using a value of another graph. */
  quill_graph *g2 = graph1(m, "other", "tensor<2xf32>", "tensor<2xf32>");
  add_op(g2, QUILL_OP_RETURN, 1, x, NULL, NULL, NULL, 0, NULL);
  reset(&D);
  CHECK(quill_verify_graph(g2) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "operand #0 of 'return' is defined in another graph");
  quill_module_destroy(m);
}

static void test_return_and_terminator(void) {
  quill_module *m = quill_module_create(ctx);
  quill_graph *g = graph1(m, "main", "tensor<2xf32>", "tensor<3xf32>");
  add_op(g, QUILL_OP_RETURN, 1, quill_graph_arg(g, 0), NULL, NULL, NULL, 0,
         NULL);
  reset(&D);
  CHECK(quill_verify_module(m) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'return' op operand #0 has type tensor<2xf32> but the "
                 "graph result #0 is tensor<3xf32>");

  quill_graph *g2 = graph1(m, "noret", "tensor<2xf32>", "tensor<2xf32>");
  add_op(g2, QUILL_OP_RELU, 1, quill_graph_arg(g2, 0), NULL, NULL,
         T("tensor<2xf32>"), 0, NULL);
  reset(&D);
  CHECK(quill_verify_graph(g2) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "graph @noret must end with a 'return' op");

  quill_graph *g3 = graph1(m, "early", "tensor<2xf32>", "tensor<2xf32>");
  quill_value *x = quill_graph_arg(g3, 0);
  add_op(g3, QUILL_OP_RETURN, 2, x, x, NULL, NULL, 0, NULL);
  add_op(g3, QUILL_OP_RETURN, 1, x, NULL, NULL, NULL, 0, NULL);
  reset(&D);
  CHECK(quill_verify_graph(g3) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'return' op must be the last op of graph @early");
  CHECK_DIAG(&D, "'return' op has 2 operands but graph @early returns 1 "
                 "values");
  CHECK(D.errors == 2);
  quill_module_destroy(m);
}

static void test_duplicate_graphs(void) {
  quill_module *m = quill_module_create(ctx);
  for (int i = 0; i < 2; i++) {
    quill_graph *g = graph1(m, "f", "tensor<2xf32>", "tensor<2xf32>");
    add_op(g, QUILL_OP_RETURN, 1, quill_graph_arg(g, 0), NULL, NULL, NULL, 0,
           NULL);
  }
  reset(&D);
  CHECK(quill_verify_module(m) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "redefinition of graph @f");
  CHECK(D.errors == 1 && D.notes == 1);
  quill_module_destroy(m);
}

/* ---- op verifiers ------------------------------------------------------ */

static void test_elementwise(void) {
  CHECK(verify_binary(QUILL_OP_ADD, "tensor<2x1x4xf32>", "tensor<3x1xf32>",
                      "tensor<2x3x4xf32>", 0, NULL) == QUILL_OK);
  CHECK(verify_binary(QUILL_OP_ADD, "tensor<2x3xf32>", "tensor<4xf32>",
                      "tensor<2x3xf32>", 0, NULL) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'add' op operands of types tensor<2x3xf32> and "
                 "tensor<4xf32> are not broadcast-compatible");
  CHECK(verify_binary(QUILL_OP_MUL, "tensor<2xf32>", "tensor<2xf16>",
                      "tensor<2xf32>", 0, NULL) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'mul' op expects element type f32 but operand #1 is "
                 "tensor<2xf16>");
  CHECK(verify_binary(QUILL_OP_LESS, "tensor<2xf32>", "tensor<2xf32>",
                      "tensor<2xf32>", 0, NULL) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'less' op expects result type tensor<2xbool>, got "
                 "tensor<2xf32>");
  CHECK(verify_binary(QUILL_OP_EQUAL, "tensor<2xi32>", "tensor<1xi32>",
                      "tensor<2xbool>", 0, NULL) == QUILL_OK);
  CHECK(verify_unary(QUILL_OP_RELU, "tensor<2xi32>", "tensor<2xi32>", 0,
                     NULL) == QUILL_OK);
  CHECK(verify_unary(QUILL_OP_SQRT, "tensor<2xi32>", "tensor<2xi32>", 0,
                     NULL) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'sqrt' op operand #0 must have a float or quantized "
                 "element type, got tensor<2xi32>");
  CHECK(verify_unary(QUILL_OP_CAST, "tensor<2x3xf32>", "tensor<2x3xi8>", 0,
                     NULL) == QUILL_OK);
  CHECK(verify_unary(QUILL_OP_CAST, "tensor<2x3xf32>", "tensor<3x2xi8>", 0,
                     NULL) == QUILL_ERR_INVALID);
  quill_named_attr ga = A("approximate", quill_attr_string(ctx, "exact", 5));
  CHECK(verify_unary(QUILL_OP_GELU, "tensor<2xf32>", "tensor<2xf32>", 1,
                     &ga) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'gelu' op attribute 'approximate' must be one of \"none\", "
                 "\"tanh\", got \"exact\"");
}

static void test_conv(void) {
  int64_t pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2};
  quill_named_attr at[2] = {A("pads", ints(4, pads)),
                            A("strides", ints(2, strides))};
  CHECK(verify_binary(QUILL_OP_CONV2D, "tensor<1x3x32x32xf32>",
                      "tensor<8x3x3x3xf32>", "tensor<1x8x30x30xf32>", 0,
                      NULL) == QUILL_OK);
  CHECK(verify_binary(QUILL_OP_CONV2D, "tensor<1x3x32x32xf32>",
                      "tensor<8x3x3x3xf32>", "tensor<1x8x32x32xf32>", 0,
                      NULL) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'conv2d' op expects result type tensor<1x8x30x30xf32>, got "
                 "tensor<1x8x32x32xf32>");
  CHECK(verify_binary(QUILL_OP_CONV2D, "tensor<1x3x32x32xf32>",
                      "tensor<8x3x3x3xf32>", "tensor<1x8x16x16xf32>", 2,
                      at) == QUILL_OK);
  int64_t badpads[2] = {1, 1};
  quill_named_attr bp = A("pads", ints(2, badpads));
  CHECK(verify_binary(QUILL_OP_CONV2D, "tensor<1x3x32x32xf32>",
                      "tensor<8x3x3x3xf32>", "tensor<1x8x30x30xf32>", 1,
                      &bp) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'conv2d' op attribute 'pads' must have 4 elements, got 2");
  CHECK(verify_binary(QUILL_OP_CONV2D, "tensor<1x4x8x8xf32>",
                      "tensor<8x3x3x3xf32>", "tensor<1x8x6x6xf32>", 0,
                      NULL) == QUILL_ERR_INVALID);
  CHECK(strstr(D.text, "input channels 4 do not equal weight input channels "
                       "3 times group 1") != NULL);
  CHECK(verify_binary(QUILL_OP_CONV_TRANSPOSE2D, "tensor<1x8x16x16xf32>",
                      "tensor<8x4x4x4xf32>", "tensor<1x4x32x32xf32>", 2,
                      at) == QUILL_OK);
}

static void test_data_and_quant(void) {
  int64_t perm[3] = {0, 2, 2};
  quill_named_attr pa = A("perm", ints(3, perm));
  CHECK(verify_unary(QUILL_OP_TRANSPOSE, "tensor<2x3x4xf32>",
                     "tensor<2x4x3xf32>", 1, &pa) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'transpose' op invalid attribute 'perm': perm is not a "
                 "permutation of 0..2");
  CHECK(verify_unary(QUILL_OP_TRANSPOSE, "tensor<2x3x4xf32>",
                     "tensor<4x3x2xf32>", 0, NULL) == QUILL_OK);
  CHECK(verify_unary(QUILL_OP_RESHAPE, "tensor<2x3xf32>", "tensor<6xf32>", 0,
                     NULL) == QUILL_OK);
  CHECK(verify_unary(QUILL_OP_RESHAPE, "tensor<2x3xf32>", "tensor<7xf32>", 0,
                     NULL) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'reshape' op cannot reshape tensor<2x3xf32> (6 elements) "
                 "to tensor<7xf32> (7 elements)");
  CHECK(verify_unary(QUILL_OP_QUANTIZE, "tensor<2x3xf32>",
                     "tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>", 0,
                     NULL) == QUILL_OK);
  CHECK(verify_unary(QUILL_OP_QUANTIZE, "tensor<2x3xf32>",
                     "tensor<2x3x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>>",
                     0, NULL) == QUILL_ERR_INVALID);
  CHECK_DIAG(&D, "'quantize' op result #0 has 2 quantization parameters but "
                 "dim 1 has size 3");
  CHECK(verify_unary(QUILL_OP_DEQUANTIZE,
                     "tensor<2x!quant.uniform<u8:f32, 0.5:128>>",
                     "tensor<2xf32>", 0, NULL) == QUILL_OK);
  CHECK(verify_unary(QUILL_OP_DEQUANTIZE, "tensor<2xf32>", "tensor<2xf32>", 0,
                     NULL) == QUILL_ERR_INVALID);
}

/* ---- shape helpers ----------------------------------------------------- */

static quill_shape S(unsigned rank, const int64_t *dims) {
  quill_shape s;
  quill_shape_set(&s, rank, dims);
  return s;
}

static bool shape_is(const quill_shape *s, unsigned rank,
                     const int64_t *dims) {
  if (s->rank != rank)
    return false;
  for (unsigned i = 0; i < rank; i++)
    if (s->dims[i] != dims[i])
      return false;
  return true;
}

static void test_shapes(void) {
  quill_shape out;
  /* broadcast [2,1,4] x [3,1] = [2,3,4]; [?,3] x [4,1] = [4,3] */
  quill_shape a = S(3, (int64_t[]){2, 1, 4}), b = S(2, (int64_t[]){3, 1});
  CHECK(quill_shape_broadcast(&a, &b, &out, NULL));
  CHECK(shape_is(&out, 3, (int64_t[]){2, 3, 4}));
  a = S(2, (int64_t[]){-1, 3});
  b = S(2, (int64_t[]){4, 1});
  CHECK(quill_shape_broadcast(&a, &b, &out, NULL));
  CHECK(shape_is(&out, 2, (int64_t[]){4, 3}));
  /* window dims: floor vs ceil mode, dynamic */
  CHECK(quill_shape_window_dim(32, 3, 1, 0, 0, 1, false) == 30);
  CHECK(quill_shape_window_dim(32, 3, 2, 1, 1, 1, false) == 16);
  CHECK(quill_shape_window_dim(5, 2, 2, 0, 0, 1, false) == 2);
  CHECK(quill_shape_window_dim(5, 2, 2, 0, 0, 1, true) == 3);
  CHECK(quill_shape_window_dim(32, 3, 1, 0, 0, 2, false) == 28);
  CHECK(quill_shape_window_dim(-1, 3, 1, 0, 0, 1, false) == QUILL_DIM_DYNAMIC);
  /* ceil mode drops a window starting in the end padding: in 4, k 2, s 2,
   * pads 0+1: floor -> 2, ceil -> 3 but the 3rd starts at 4 >= 4 -> 2 */
  CHECK(quill_shape_window_dim(4, 2, 2, 0, 1, 1, true) == 2);
  CHECK(quill_shape_conv_transpose_dim(16, 4, 2, 1, 1, 1, 0) == 32);
  CHECK(quill_shape_conv_transpose_dim(3, 3, 2, 0, 0, 1, 1) == 8);
  /* matmul: [2,1,3,4] x [5,4,6] = [2,5,3,6]; [4] x [4,6] = [6]; [3,4] x [4] */
  a = S(4, (int64_t[]){2, 1, 3, 4});
  b = S(3, (int64_t[]){5, 4, 6});
  CHECK(quill_shape_matmul(&a, &b, &out, NULL));
  CHECK(shape_is(&out, 4, (int64_t[]){2, 5, 3, 6}));
  a = S(1, (int64_t[]){4});
  b = S(2, (int64_t[]){4, 6});
  CHECK(quill_shape_matmul(&a, &b, &out, NULL));
  CHECK(shape_is(&out, 1, (int64_t[]){6}));
  a = S(2, (int64_t[]){3, 4});
  b = S(1, (int64_t[]){4});
  CHECK(quill_shape_matmul(&a, &b, &out, NULL));
  CHECK(shape_is(&out, 1, (int64_t[]){3}));
  b = S(1, (int64_t[]){5});
  CHECK(!quill_shape_matmul(&a, &b, &out, NULL));
  /* gemm with transposes */
  a = S(2, (int64_t[]){4, 3});
  b = S(2, (int64_t[]){5, 4});
  CHECK(quill_shape_gemm(&a, &b, true, true, &out, NULL));
  CHECK(shape_is(&out, 2, (int64_t[]){3, 5}));
  /* slice with negative steps and clamping */
  a = S(2, (int64_t[]){10, 8});
  CHECK(quill_shape_slice(&a, 2, (int64_t[]){-1, 1},
                          (int64_t[]){INT64_MIN, 1000}, NULL,
                          (int64_t[]){-3, 2}, &out, NULL));
  CHECK(shape_is(&out, 2, (int64_t[]){4, 4}));
  /* reshape with 0 and -1 */
  a = S(3, (int64_t[]){2, 3, 4});
  CHECK(quill_shape_reshape(&a, 2, (int64_t[]){0, -1}, false, &out, NULL));
  CHECK(shape_is(&out, 2, (int64_t[]){2, 12}));
  CHECK(!quill_shape_reshape(&a, 2, (int64_t[]){5, -1}, false, &out, NULL));
  /* flatten, squeeze, unsqueeze, reduce, gather, pad, concat, split */
  CHECK(quill_shape_flatten(&a, -1, &out, NULL));
  CHECK(shape_is(&out, 2, (int64_t[]){6, 4}));
  a = S(4, (int64_t[]){1, 3, 1, 5});
  CHECK(quill_shape_squeeze(&a, 0, NULL, &out, NULL));
  CHECK(shape_is(&out, 2, (int64_t[]){3, 5}));
  CHECK(!quill_shape_squeeze(&a, 1, (int64_t[]){1}, &out, NULL));
  a = S(2, (int64_t[]){3, 5});
  CHECK(quill_shape_unsqueeze(&a, 2, (int64_t[]){0, -1}, &out, NULL));
  CHECK(shape_is(&out, 4, (int64_t[]){1, 3, 5, 1}));
  a = S(3, (int64_t[]){2, 3, 4});
  CHECK(quill_shape_reduce(&a, 1, (int64_t[]){-2}, true, false, &out, NULL));
  CHECK(shape_is(&out, 3, (int64_t[]){2, 1, 4}));
  CHECK(quill_shape_reduce(&a, 0, NULL, false, false, &out, NULL));
  CHECK(out.rank == 0);
  b = S(2, (int64_t[]){5, 6});
  CHECK(quill_shape_gather(&a, &b, 1, &out, NULL));
  CHECK(shape_is(&out, 4, (int64_t[]){2, 5, 6, 4}));
  CHECK(quill_shape_pad(&a, (int64_t[]){0, 1, 2, 0, 1, -1}, &out, NULL));
  CHECK(shape_is(&out, 3, (int64_t[]){2, 5, 5}));
  quill_shape cat[2] = {S(2, (int64_t[]){2, 3}), S(2, (int64_t[]){2, 5})};
  CHECK(quill_shape_concat(2, cat, -1, &out, NULL));
  CHECK(shape_is(&out, 2, (int64_t[]){2, 8}));
  CHECK(!quill_shape_concat(2, cat, 0, &out, NULL));
  quill_shape parts[2];
  a = S(2, (int64_t[]){6, 2});
  CHECK(quill_shape_split(&a, 0, 2, (int64_t[]){2, 4}, parts, NULL));
  CHECK(shape_is(&parts[1], 2, (int64_t[]){4, 2}));
  CHECK(!quill_shape_split(&a, 0, 2, (int64_t[]){2, 3}, parts, NULL));
  CHECK(quill_shape_resize_scales(&a, 2, (double[]){2.0, 1.5}, &out, NULL));
  CHECK(shape_is(&out, 2, (int64_t[]){12, 3}));
  /* conv and pool with windows */
  quill_window w;
  quill_window_init(&w, 2);
  w.group = 2;
  a = S(4, (int64_t[]){1, 4, 9, 9});
  b = S(4, (int64_t[]){6, 2, 3, 3});
  w.strides[0] = w.strides[1] = 2;
  CHECK(quill_shape_conv(&a, &b, &w, &out, NULL));
  CHECK(shape_is(&out, 4, (int64_t[]){1, 6, 4, 4}));
  w.kernel[0] = w.kernel[1] = 3;
  w.ceil_mode = true;
  a = S(4, (int64_t[]){1, 4, 10, 10});
  CHECK(quill_shape_pool(&a, &w, &out, NULL));
  CHECK(shape_is(&out, 4, (int64_t[]){1, 4, 5, 5}));
  /* auto_pad SAME: 7 -> pads 1+1, 8 -> 0+1 (upper) or 1+0 (lower) */
  quill_window_init(&w, 2);
  w.strides[0] = w.strides[1] = 2;
  quill_window_same_pads(&w, (int64_t[]){7, 8}, (int64_t[]){3, 3}, true,
                         false);
  CHECK(w.pads[0] == 1 && w.pads[1] == 0 && w.pads[2] == 1 && w.pads[3] == 1);
  quill_window_same_pads(&w, (int64_t[]){7, 8}, (int64_t[]){3, 3}, false,
                         false);
  CHECK(w.pads[0] == 1 && w.pads[1] == 1 && w.pads[2] == 1 && w.pads[3] == 0);
  /* transpose SAME: in 4, s 2, k 3 -> total 1, output 8 */
  quill_window_same_pads(&w, (int64_t[]){4, -1}, (int64_t[]){3, 3}, true,
                         true);
  CHECK(w.pads[0] == 0 && w.pads[2] == 1 && w.pads[1] == 0 && w.pads[3] == 0);
  CHECK(quill_shape_conv_transpose_dim(4, 3, 2, w.pads[0], w.pads[2], 1, 0) ==
        8);
}

int main(void) {
  ctx = quill_context_create(NULL, NULL);
  if (!ctx)
    return 1;
  quill_diag_set_handler(ctx, capture, &D);
  test_valid();
  test_arity();
  test_use_before_def();
  test_return_and_terminator();
  test_duplicate_graphs();
  test_elementwise();
  test_conv();
  test_data_and_quant();
  test_shapes();
  quill_context_destroy(ctx);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("test_verifier: all checks passed\n");
  return 0;
}

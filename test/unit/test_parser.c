/*
 * test_parser.c - unit tests for the .qir parser and printer.
 *
 * 1. Round trip: every text of a good corpus parses, prints, reparses and
 *    reprints byte-identically; a few print to an exact expected text.
 * 2. Values: names, dropped generated names, dense bytes, quant params.
 * 3. Errors: every bad input returns NULL with exactly one error whose
 *    message contains the expected text at the expected line and column.
 * 4. Robustness: every truncation of every good text, and thousands of
 *    random byte mutations, parse without crashing (ASan/UBSan builds catch
 *    over-reads: each input is copied into an exactly sized heap buffer).
 * 5. Out of memory: an allocator that fails the Nth allocation, for every N
 *    until parsing succeeds: no crash, no leak, NULL + error on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

static int failures;
#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);   \
      failures++;                                                             \
    }                                                                         \
  } while (0)

/* ---- diagnostics capture ------------------------------------------------ */

typedef struct capture {
  unsigned errors;
  char first[512];
  quill_loc first_loc;
} capture;

static void capture_handler(void *ud, quill_loc loc, quill_diag_severity sev,
                            const char *msg) {
  capture *c = ud;
  if (sev != QUILL_DIAG_ERROR)
    return;
  if (c->errors++ == 0) {
    snprintf(c->first, sizeof c->first, "%s", msg);
    c->first_loc = loc;
  }
}

static quill_context *new_ctx(capture *c) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  memset(c, 0, sizeof *c);
  quill_diag_set_handler(ctx, capture_handler, c);
  return ctx;
}

/* Parse from an exactly sized heap copy so ASan sees any over-read. */
static quill_module *parse(quill_context *ctx, const char *text, size_t len) {
  char *copy = malloc(len ? len : 1);
  memcpy(copy, text, len);
  quill_module *m = quill_parse_module(ctx, copy, len, "t.qir", 0);
  free(copy);
  return m;
}

static char *print(const quill_module *m, bool locs) {
  quill_strbuf sb;
  quill_print_options o = {locs};
  quill_strbuf_init(&sb, quill_module_context(m));
  quill_print_module(m, &sb, &o);
  char *s = strdup(quill_strbuf_str(&sb));
  quill_strbuf_free(&sb);
  return s;
}

/* ---- corpus ------------------------------------------------------------- */

static const char *const good[] = {
    "",
    "// only a comment\n",
    "func @f() -> () {\n  return\n}\n",
    "func @main(%x: tensor<1x3x224x224xf32>) -> tensor<1x3x224x224xf32> {\n"
    "  %0 = relu %x : tensor<1x3x224x224xf32>\n  return %0\n}\n",
    "func @types(%a: f32, %b: f16, %c: bf16, %d: f64, %e: bool, %f: i4,\n"
    "  %g: i8, %h: i16, %i: i32, %j: i64, %k: u4, %l: u8, %m: u16, %n: u32,\n"
    "  %o: u64, %p: tensor<f32>, %q: tensor<?x4xf32>, %r: tensor<0x?x?xi8>)\n"
    "  -> (f32, tensor<?x4xf32>) {\n  return %a, %q\n}\n",
    "func @q(%x: tensor<8x!quant.uniform<u8:f32, 0.02:128>>,\n"
    "  %y: tensor<2x!quant.uniform<i8<-127:127>:f32, 0.5:0>>,\n"
    "  %z: tensor<2x3x!quant.uniform<i8:f32:0, {0.1:0, 0.2:-3}>>,\n"
    "  %w: tensor<4x!quant.uniform<i4:f16, 1.5e-05:-8>>)\n"
    "  -> tensor<8x!quant.uniform<u8:f32, 0.02:128>> {\n  return %x\n}\n",
    "func @attrs() -> () {\n"
    "  return {i = 42, n = -7, big = 9223372036854775807,\n"
    "    small = -9223372036854775808, f = 1.5, g = -2.0e-03, h = 1e+20,\n"
    "    pinf = inf, ninf = -inf, qnan = nan, t = true, fa = false,\n"
    "    s = \"a\\\"b\\\\c\\nd\\te\\01\\ff\", e = \"\", ty = f32,\n"
    "    tt = tensor<2xi8>, qt = !quant.uniform<u8:f32, 0.5:1>,\n"
    "    l = [1, 2, 3], el = [], nl = [[1], [2.5, \"x\"], [[]]],\n"
    "    \"odd name\" = 1}\n}\n",
    "func @dense() -> () {\n"
    "  %0 = constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : "
    "tensor<2xf32>\n"
    "  %1 = constant {value = dense<0.0> : tensor<64x64xf32>} : "
    "tensor<64x64xf32>\n"
    "  %2 = constant {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>} : "
    "tensor<2x2xi8>\n"
    "  %3 = constant {value = dense<[true, false]> : tensor<2xbool>} : "
    "tensor<2xbool>\n"
    "  %4 = constant {value = dense<[-8, 7, 0]> : tensor<3xi4>} : "
    "tensor<3xi4>\n"
    "  %5 = constant {value = dense<[18446744073709551615, 0]> : "
    "tensor<2xu64>} : tensor<2xu64>\n"
    "  %6 = constant {value = dense<[0.5, -inf, inf, nan]> : tensor<4xf16>}"
    " : tensor<4xf16>\n"
    "  %7 = constant {value = dense<[1.5, 3.0]> : tensor<2xbf16>} : "
    "tensor<2xbf16>\n"
    "  %8 = constant {value = dense<[0.1, 1e+300]> : tensor<2xf64>} : "
    "tensor<2xf64>\n"
    "  %9 = constant {value = dense<[1, 255]> : "
    "tensor<2x!quant.uniform<u8:f32, 0.5:3>>} : "
    "tensor<2x!quant.uniform<u8:f32, 0.5:3>>\n"
    "  %10 = constant {value = dense<\"0x0000803F0000004000004040000080400000"
    "A0400000C0400000E040000000410000104100002041000030410000404100005041000"
    "06041000070410000804100008841\"> : tensor<17xf32>} : tensor<17xf32>\n"
    "  %11 = constant {value = dense<[]> : tensor<0xf32>} : tensor<0xf32>\n"
    "  return\n}\n",
    "func @names(%input.1: tensor<4xf32>, %arg1: tensor<4xf32>) -> "
    "(tensor<2xf32>, tensor<2xf32>) {\n"
    "  %a, %b = split %input.1 {axis = 0} : tensor<2xf32>, tensor<2xf32> "
    "loc(\"split/1\")\n"
    "  %7 = add %a, %b : tensor<2xf32>\n"
    "  %$x = mul %7, %arg1 : tensor<2xf32>\n"
    "  return %$x, %7\n}\n",
    "func @a(%x: f32) -> f32 {\n  return %x\n}\n\n"
    "func @b(%x: f32) -> f32 {\n  %0 = neg %x : f32\n  return %0\n}\n",
};

/* (input, exact printed output) */
static const char *const exact[][2] = {
    {"func @f(%5: f32, %arg3: f32, %x: f32) -> f32 {\n"
     "  %9 = add %5, %arg3 : f32 // renumbered\n"
     "  %y = add %9, %x : f32 loc(\"n1\")\n"
     "  %3 = add %y, %y : f32 loc(\"t.onnx\":3:4)\n"
     "  return %3\n}\n",
     "func @f(%arg0: f32, %arg1: f32, %x: f32) -> f32 {\n"
     "  %0 = add %arg0, %arg1 : f32\n"
     "  %y = add %0, %x : f32 loc(\"n1\")\n"
     "  %1 = add %y, %y : f32\n"
     "  return %1\n}\n"},
    {"func @d() -> () {\n  %0 = constant {value = dense<[2.0, 2.0]> : "
     "tensor<2xf32>} : tensor<2xf32>\n  %1 = constant {value = dense<[1]> : "
     "tensor<1xi32>} : tensor<1xi32>\n  return\n}\n",
     "func @d() -> () {\n  %0 = constant {value = dense<2.0> : "
     "tensor<2xf32>} : tensor<2xf32>\n  %1 = constant {value = dense<1> : "
     "tensor<1xi32>} : tensor<1xi32>\n  return\n}\n"},
    {"func @g(%x: f32) -> f32 {\n  %z = neg %x : f32\n  return %z\n}\n"
     "func @g2(%x: f32) -> (f32) {\n  return %x\n}\n",
     "func @g(%x: f32) -> f32 {\n  %z = neg %x : f32\n  return %z\n}\n\n"
     "func @g2(%x: f32) -> f32 {\n  return %x\n}\n"},
};

/* (input, error substring, line, col) */
typedef struct bad_case {
  const char *text;
  const char *msg;
  unsigned line, col;
} bad_case;

static const bad_case bad[] = {
    {"func @f() -> () {\n  return\n", "unexpected end of file", 3, 1},
    {"func @f(", "unexpected end of file", 1, 9},
    {"func @f() -> () {\n  retur\n}\n", "unknown op 'retur'", 2, 3},
    {"func @f(%x: f33) -> () {\n  return\n}\n", "unknown type 'f33'", 1, 13},
    {"func @f() -> () {\n  return %y\n}\n", "use of undefined value '%y'", 2,
     10},
    {"func @f(%x: f32, %x: f32) -> () {\n  return\n}\n",
     "redefinition of value '%x'", 1, 18},
    {"func @f(%x: f32) -> () {\n  %a, %b = neg %x : f32\n  return\n}\n",
     "2 result name(s) but 1 result type(s)", 2, 3},
    {"func @f() -> () {\n  return {a = \"abc}\n}\n", "unterminated string", 2,
     15},
    {"func @f() -> () {\n  return {a = 99999999999999999999}\n}\n",
     "integer literal out of range", 2, 15},
    {"func @f(%x: tensor<99999999999xf32>) -> () {\n  return\n}\n",
     "dimension too large", 1, 20},
    {"func @f(%x: tensor<1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x"
     "1x1x1x1x1x1x1xf32>) -> () {\n  return\n}\n",
     "rank too large", 1, 84},
    {"func @f(%x: !quant.uniform<i8:f32, -0.5:0>) -> () {\n  return\n}\n",
     "invalid quantization parameters: scale must be positive", 1, 13},
    {"func @f(%x: !quant.uniform<i8:f32, 0.5:300>) -> () {\n  return\n}\n",
     "zero point must lie within", 1, 13},
    {"func @f() -> () {\n  return {a = 1, a = 2}\n}\n",
     "duplicate attribute 'a'", 2, 18},
    {"func @f() -> () {\n  return {a = dense<[300]> : tensor<1xi8>}\n}\n",
     "value 300 out of range for 'i8'", 2, 22},
    {"func @f() -> () {\n  return {a = dense<[1, 2]> : tensor<3xi8>}\n}\n",
     "has 2 elements but 'tensor<3xi8>' has 3", 2, 15},
    {"func @f() -> () {\n  return {a = dense<\"0x0102\"> : tensor<3xi8>}\n}\n",
     "hex dense literal has 2 bytes but 'tensor<3xi8>' needs 3", 2, 21},
    {"func @f() -> () {\n  return {a = dense<1.5> : tensor<2xi32>}\n}\n",
     "expected integer literal", 2, 21},
    {"func @f() -> () {\n  return {a = dense<1e39> : tensor<2xf32>}\n}\n",
     "out of range", 2, 21},
    {"func @f() -> () {\n  return {a = dense<1.0> : tensor<?xf32>}\n}\n",
     "statically shaped", 2, 28},
    {"func @f() -> () {\n  return {a = }\n}\n", "expected attribute value", 2,
     15},
    {"func @f() -> () {\n  return # \n}\n", "unexpected character '#'", 2, 10},
    {"fun @f() -> () {}", "expected 'func'", 1, 1},
    {"func @f() () {}", "expected '->'", 1, 11},
    {"func @f(%x: tensor<1x2f32>) -> () {}", "expected 'x' after dimension",
     1, 23},
    {"func @f(%x: tensor<tensor<f32>>) -> () {}", "tensor element type", 1,
     20},
    {"func @f() -> () {\n  return loc(\"a\":1)\n}\n", "expected ':'", 2, 19},
    {"func @f() -> () {\n  return {a = \"\\q\"}\n}\n", "invalid escape", 2, 16},
    {"func @f(%x: !foo.bar) -> () {}", "unknown type '!foo.bar'", 1, 14},
    {"func @f(%x: f32) -> () {\n  %0 = neg %x\n  return\n}\n",
     "1 result name(s) but 0 result type(s)", 2, 3},
};

/* ---- tests -------------------------------------------------------------- */

static void test_roundtrip(void) {
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    capture c;
    quill_context *ctx = new_ctx(&c);
    quill_module *m = parse(ctx, good[i], strlen(good[i]));
    CHECK(m != NULL);
    CHECK(c.errors == 0);
    if (!m) {
      fprintf(stderr, "good[%zu] failed: %s\n", i, c.first);
      quill_context_destroy(ctx);
      continue;
    }
    char *t1 = print(m, true);
    quill_module *m2 = parse(ctx, t1, strlen(t1));
    CHECK(m2 != NULL);
    char *t2 = m2 ? print(m2, true) : strdup("");
    CHECK(strcmp(t1, t2) == 0);
    if (strcmp(t1, t2) != 0)
      fprintf(stderr, "good[%zu]:\n%s---\n%s", i, t1, t2);
    free(t1);
    free(t2);
    quill_module_destroy(m);
    if (m2)
      quill_module_destroy(m2);
    quill_context_destroy(ctx);
  }
  for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
    capture c;
    quill_context *ctx = new_ctx(&c);
    quill_module *m = parse(ctx, exact[i][0], strlen(exact[i][0]));
    CHECK(m != NULL);
    if (m) {
      char *t = print(m, false);
      CHECK(strcmp(t, exact[i][1]) == 0);
      if (strcmp(t, exact[i][1]) != 0)
        fprintf(stderr, "exact[%zu] got:\n%s", i, t);
      free(t);
      quill_module_destroy(m);
    }
    quill_context_destroy(ctx);
  }
}

static void test_values(void) {
  capture c;
  quill_context *ctx = new_ctx(&c);
  const char *src = good[8]; /* @names */
  quill_module *m = parse(ctx, src, strlen(src));
  CHECK(m && quill_module_num_graphs(m) == 1);
  if (!m) {
    quill_context_destroy(ctx);
    return;
  }
  quill_graph *g = quill_module_graph(m, 0);
  CHECK(strcmp(quill_graph_name(g), "names") == 0);
  CHECK(strcmp(quill_value_name(quill_graph_arg(g, 0)), "input.1") == 0);
  CHECK(quill_value_name(quill_graph_arg(g, 1)) == NULL);
  quill_op *split = quill_graph_first_op(g);
  CHECK(quill_op_opcode(split) == QUILL_OP_SPLIT);
  CHECK(quill_op_num_results(split) == 2);
  CHECK(strcmp(quill_value_name(quill_op_result(split, 1)), "b") == 0);
  CHECK(quill_op_attr_int(split, "axis", -1) == 0);
  quill_loc l = quill_op_loc(split);
  CHECK(l.name && strcmp(l.name, "split/1") == 0);
  CHECK(l.line == 2 && l.col == 3);
  quill_op *add = quill_op_next(split);
  CHECK(quill_value_name(quill_op_result(add, 0)) == NULL);
  CHECK(quill_op_operand(add, 1) == quill_op_result(split, 1));
  quill_module_destroy(m);

  /* Dense bytes and quant params. */
  const char *d = "func @d() -> () {\n"
                  "  %0 = constant {value = dense<[[-1, 2]]> : tensor<1x2xi16>}"
                  " : tensor<1x2xi16>\n"
                  "  %1 = constant {value = dense<[1.0, -2.0]> : "
                  "tensor<2xf16>} : tensor<2xf16>\n"
                  "  return {q = !quant.uniform<i8<-127:127>:f32:1, "
                  "{0.25:1, 0.5:-2}>}\n}\n";
  m = parse(ctx, d, strlen(d));
  CHECK(m != NULL);
  if (m) {
    quill_op *op = quill_graph_first_op(quill_module_graph(m, 0));
    const quill_attr *a = quill_op_attr(op, "value");
    CHECK(quill_attr_dense_size(a) == 4);
    const int16_t *v = quill_attr_dense_data(a);
    CHECK(v[0] == -1 && v[1] == 2);
    a = quill_op_attr(quill_op_next(op), "value");
    const uint16_t *h = quill_attr_dense_data(a);
    CHECK(h[0] == 0x3C00 && h[1] == 0xC000);
    const quill_attr *qa =
        quill_op_attr(quill_graph_return(quill_module_graph(m, 0)), "q");
    quill_type *q = quill_attr_type_value(qa);
    CHECK(quill_type_is_quant(q));
    CHECK(quill_type_quant_axis_of(q) == 1);
    CHECK(quill_type_quant_num_params(q) == 2);
    CHECK(quill_type_quant_scales(q)[1] == 0.5);
    CHECK(quill_type_quant_zero_points(q)[1] == -2);
    CHECK(quill_type_quant_qmin(q) == -127 && quill_type_quant_qmax(q) == 127);
    quill_module_destroy(m);
  }

  /* quill_parse_type */
  quill_type *t = quill_parse_type(ctx, "tensor<1x?x3xf32>", 17);
  CHECK(t && quill_type_rank(t) == 3 &&
        quill_type_dim(t, 1) == QUILL_DIM_DYNAMIC && quill_type_dim(t, 2) == 3);
  unsigned before = c.errors;
  CHECK(quill_parse_type(ctx, "tensor<1xf32> x", 15) == NULL);
  CHECK(c.errors == before + 1);
  CHECK(quill_parse_type(ctx, "tensor<1x", 9) == NULL);
  quill_context_destroy(ctx);
}

static void test_errors(void) {
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    capture c;
    quill_context *ctx = new_ctx(&c);
    quill_module *m = parse(ctx, bad[i].text, strlen(bad[i].text));
    CHECK(m == NULL);
    CHECK(c.errors == 1);
    bool ok = strstr(c.first, bad[i].msg) && c.first_loc.line == bad[i].line &&
              c.first_loc.col == bad[i].col;
    CHECK(ok);
    if (!ok)
      fprintf(stderr, "bad[%zu]: got %u:%u '%s', want %u:%u '%s'\n", i,
              c.first_loc.line, c.first_loc.col, c.first, bad[i].line,
              bad[i].col, bad[i].msg);
    if (m)
      quill_module_destroy(m);
    quill_context_destroy(ctx);
  }
  /* The line offset of split-input chunks reaches diagnostics. */
  capture c;
  quill_context *ctx = new_ctx(&c);
  quill_module *m = quill_parse_module(ctx, "\nfoo", 4, "x.qir", 10);
  CHECK(!m && c.first_loc.line == 12 && c.first_loc.col == 1);
  quill_context_destroy(ctx);
}

/* Parse; on success print, reparse and compare; on failure require an
 * error. */
static void robust_one(const char *text, size_t len) {
  capture c;
  quill_context *ctx = new_ctx(&c);
  quill_module *m = parse(ctx, text, len);
  if (!m) {
    CHECK(c.errors > 0);
  } else {
    CHECK(c.errors == 0);
    char *t1 = print(m, true);
    quill_module *m2 = parse(ctx, t1, strlen(t1));
    CHECK(m2 != NULL);
    if (m2) {
      char *t2 = print(m2, true);
      CHECK(strcmp(t1, t2) == 0);
      free(t2);
      quill_module_destroy(m2);
    }
    free(t1);
    quill_module_destroy(m);
  }
  quill_context_destroy(ctx);
}

static void test_robustness(void) {
  for (size_t i = 0; i < sizeof good / sizeof *good; i++)
    for (size_t n = 0; n <= strlen(good[i]); n++)
      robust_one(good[i], n);
  static const char alphabet[] = "%@{}()[]<>,:=!?-x0123456789.e\"\\ \n/ab";
  uint64_t s = 88172645463325252u;
  char buf[4096];
  for (int iter = 0; iter < 4000; iter++) {
    const char *src = good[(size_t)iter % (sizeof good / sizeof *good)];
    size_t len = strlen(src);
    if (len == 0 || len >= sizeof buf - 8)
      continue;
    memcpy(buf, src, len);
    for (int k = 0; k < 1 + iter % 3; k++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      size_t pos = (size_t)(s % len);
      char ch = (s >> 32) & 1 ? alphabet[(s >> 40) % (sizeof alphabet - 1)]
                              : (char)(s >> 48);
      if ((s >> 33) & 1) {
        buf[pos] = ch;
      } else {
        memmove(buf + pos + 1, buf + pos, len - pos);
        buf[pos] = ch;
        len++;
      }
    }
    robust_one(buf, len);
  }
}

/* ---- out of memory ------------------------------------------------------ */

typedef struct budget {
  long left; /* allocations allowed; < 0 means unlimited */
  long live;
} budget;

static void *budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  budget *b = ud;
  if (nsize == 0) {
    if (ptr)
      b->live--;
    free(ptr);
    return NULL;
  }
  if (b->left == 0)
    return NULL;
  if (b->left > 0)
    b->left--;
  void *p = realloc(ptr, nsize);
  if (p && !ptr)
    b->live++;
  (void)osize;
  return p;
}

static void test_oom(void) {
  const char *src = good[7];
  for (long n = 0;; n++) {
    budget b = {-1, 0};
    capture c;
    memset(&c, 0, sizeof c);
    quill_context *ctx = quill_context_create(budget_alloc, &b);
    CHECK(ctx != NULL);
    quill_diag_set_handler(ctx, capture_handler, &c);
    b.left = n;
    quill_module *m = quill_parse_module(ctx, src, strlen(src), "oom", 0);
    if (m) {
      quill_module_destroy(m);
    } else {
      CHECK(c.errors > 0);
    }
    quill_context_destroy(ctx);
    CHECK(b.live == 0);
    if (m || n > 100000)
      break;
  }
}

/* Names set through the API: sanitised, uniqued, generated ones ignored. */
static void test_api_names(void) {
  capture c;
  quill_context *ctx = new_ctx(&c);
  quill_module *m = quill_module_create(ctx);
  int64_t two = 2;
  quill_type *t = quill_type_tensor(
      ctx, quill_type_scalar(ctx, QUILL_TYPE_F32), 1, &two);
  quill_type *args[4] = {t, t, t, t};
  quill_graph *g = quill_graph_create(m, "my-graph", 4, args, 1, &t);
  CHECK(quill_value_set_name(quill_graph_arg(g, 0), "a b") == QUILL_OK);
  CHECK(quill_value_set_name(quill_graph_arg(g, 1), "a_b") == QUILL_OK);
  CHECK(quill_value_set_name(quill_graph_arg(g, 2), "arg1") == QUILL_OK);
  CHECK(quill_value_set_name(quill_graph_arg(g, 3), "") == QUILL_OK);
  const char *names[] = {"7", "x", "x", NULL, "arg0", "x_1"};
  quill_value *prev = quill_graph_arg(g, 0);
  quill_op *ops[6];
  for (int i = 0; i < 6; i++) {
    ops[i] = quill_op_create(g, QUILL_OP_NEG, 1, &prev, 1, &t, 0, NULL,
                             quill_loc_unknown());
    quill_op_insert_at_end(g, ops[i]);
    prev = quill_op_result(ops[i], 0);
    if (names[i])
      CHECK(quill_value_set_name(prev, names[i]) == QUILL_OK);
  }
  quill_op *ret = quill_op_create(g, QUILL_OP_RETURN, 1, &prev, 0, NULL, 0,
                                  NULL, quill_loc_unknown());
  quill_op_insert_at_end(g, ret);
  quill_graph *g2 = quill_graph_create(m, "9lives", 0, NULL, 0, NULL);
  quill_op_insert_at_end(g2, quill_op_create(g2, QUILL_OP_RETURN, 0, NULL, 0,
                                             NULL, 0, NULL,
                                             quill_loc_unknown()));
  const char *want =
      "func @my_graph(%a_b: tensor<2xf32>, %a_b_1: tensor<2xf32>, "
      "%arg2: tensor<2xf32>, %arg3: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = neg %a_b : tensor<2xf32>\n"
      "  %x = neg %0 : tensor<2xf32>\n"
      "  %x_1 = neg %x : tensor<2xf32>\n"
      "  %1 = neg %x_1 : tensor<2xf32>\n"
      "  %arg0 = neg %1 : tensor<2xf32>\n"
      "  %x_1_1 = neg %arg0 : tensor<2xf32>\n"
      "  return %x_1_1\n"
      "}\n\n"
      "func @_9lives() -> () {\n  return\n}\n";
  char *got = print(m, false);
  CHECK(strcmp(got, want) == 0);
  if (strcmp(got, want) != 0)
    fprintf(stderr, "api names got:\n%s", got);
  /* The printed names are a fixed point. */
  quill_module *m2 = parse(ctx, got, strlen(got));
  CHECK(m2 != NULL);
  if (m2) {
    char *again = print(m2, false);
    CHECK(strcmp(again, got) == 0);
    free(again);
    quill_module_destroy(m2);
  }
  free(got);

  /* quill_print_op names like the full print. */
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_print_op(ops[2], &sb);
  CHECK(strcmp(quill_strbuf_str(&sb), "%x_1 = neg %x : tensor<2xf32>") == 0);
  quill_strbuf_clear(&sb);
  quill_print_op(ret, &sb);
  CHECK(strcmp(quill_strbuf_str(&sb), "return %x_1_1") == 0);
  quill_strbuf_free(&sb);

  /* quill_module_dump writes the same text. */
  FILE *f = tmpfile();
  CHECK(f && quill_module_dump(m, f, NULL) == QUILL_OK);
  if (f) {
    char buf[1024] = {0};
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    CHECK(n == strlen(want) && strcmp(buf, want) == 0);
    fclose(f);
  }
  quill_module_destroy(m);
  quill_context_destroy(ctx);
}

int main(void) {
  test_roundtrip();
  test_values();
  test_api_names();
  test_errors();
  test_robustness();
  test_oom();
  if (failures) {
    fprintf(stderr, "test_parser: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_parser: all passed\n");
  return 0;
}

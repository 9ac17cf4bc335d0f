/*
 * test_ir.c - unit tests for the core IR: context, strbuf, types, attrs,
 * graphs, ops table and diagnostics.
 *
 * Plain C: each CHECK counts a pass or prints the failing expression; main
 * prints "N passed, M failed" and returns non-zero on any failure. Every
 * test builds its own context, and destroys it, so the sanitizer build also
 * checks that quill_context_destroy / quill_module_destroy free everything.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

static int passed, failed;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      passed++;                                                                \
    } else {                                                                   \
      failed++;                                                                \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define CHECK_STR(got, want)                                                   \
  do {                                                                         \
    const char *g_ = (got), *w_ = (want);                                      \
    if (g_ && strcmp(g_, w_) == 0) {                                           \
      passed++;                                                                \
    } else {                                                                   \
      failed++;                                                                \
      fprintf(stderr, "%s:%d: got \"%s\", want \"%s\"\n", __FILE__, __LINE__,  \
              g_ ? g_ : "(null)", w_);                                         \
    }                                                                          \
  } while (0)

/* ---- helpers ----------------------------------------------------------- */

static quill_type *tensor(quill_context *ctx, quill_type *e, unsigned rank,
                          const int64_t *dims) {
  return quill_type_tensor(ctx, e, rank, dims);
}

static const char *type_str(quill_strbuf *sb, const quill_type *t) {
  quill_strbuf_clear(sb);
  quill_type_print(t, sb);
  return quill_strbuf_str(sb);
}

static const char *attr_str(quill_strbuf *sb, const quill_attr *a) {
  quill_strbuf_clear(sb);
  quill_attr_print(a, sb);
  return quill_strbuf_str(sb);
}

/* xorshift64*: deterministic pseudo-random bits for the float tests. */
static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * UINT64_C(2685821657736338717);
}

/* ---- context and identifiers ------------------------------------------- */

static void test_idents(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_ident a = quill_ident_get(ctx, "conv1");
  quill_ident b = quill_ident_getn(ctx, "conv1xyz", 5);
  CHECK(a && a == b);
  CHECK_STR(a, "conv1");
  CHECK(quill_ident_lookup(ctx, "conv1") == a);
  CHECK(quill_ident_lookup(ctx, "never") == NULL);
  CHECK(quill_ident_get(ctx, "conv2") != a);
  /* Force table growth and check every identifier stays unique. */
  char buf[32];
  quill_ident ids[500];
  for (int i = 0; i < 500; i++) {
    snprintf(buf, sizeof buf, "id%d", i);
    ids[i] = quill_ident_get(ctx, buf);
  }
  int ok = 1;
  for (int i = 0; i < 500; i++) {
    snprintf(buf, sizeof buf, "id%d", i);
    ok &= quill_ident_lookup(ctx, buf) == ids[i] && strcmp(ids[i], buf) == 0;
  }
  CHECK(ok);
  CHECK(quill_ident_lookup(ctx, "conv1") == a);
  char *d = quill_strdup(ctx, "hello");
  CHECK_STR(d, "hello");
  quill_string_free(ctx, d);
  quill_loc l = quill_loc_file(ctx, "f.qir", 3, 4);
  CHECK(l.file == quill_ident_lookup(ctx, "f.qir") && l.line == 3 &&
        l.col == 4 && !l.name);
  quill_loc n = quill_loc_named(ctx, "node7");
  CHECK(n.name && strcmp(n.name, "node7") == 0 && !quill_loc_is_unknown(n));
  CHECK(quill_loc_is_unknown(quill_loc_unknown()));
  quill_context_destroy(ctx);
}

/* ---- strbuf ------------------------------------------------------------ */

static const char *dstr(quill_strbuf *sb, double d) {
  quill_strbuf_clear(sb);
  quill_strbuf_put_double(sb, d);
  return quill_strbuf_str(sb);
}

static const char *fstr(quill_strbuf *sb, float f) {
  quill_strbuf_clear(sb);
  quill_strbuf_put_float(sb, f);
  return quill_strbuf_str(sb);
}

static bool looks_float(const char *s) { return strpbrk(s, ".ein") != NULL; }

static void test_strbuf(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  CHECK_STR(quill_strbuf_str(&sb), "");
  quill_strbuf_puts(&sb, "ab");
  quill_strbuf_putc(&sb, 'c');
  quill_strbuf_printf(&sb, "%d-%s", 42, "x");
  CHECK_STR(quill_strbuf_str(&sb), "abc42-x");
  quill_strbuf_clear(&sb);
  for (int i = 0; i < 1000; i++)
    quill_strbuf_printf(&sb, "%04d", i);
  CHECK(sb.len == 4000 && strncmp(sb.data + 3996, "0999", 4) == 0);
  quill_strbuf_clear(&sb);
  char big[600];
  memset(big, 'z', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  quill_strbuf_printf(&sb, "<%s>", big); /* longer than the stack buffer */
  CHECK(sb.len == 601 && sb.data[0] == '<' && sb.data[600] == '>');

  CHECK_STR(dstr(&sb, 1.0), "1.0");
  CHECK_STR(dstr(&sb, 0.1), "0.1");
  CHECK_STR(dstr(&sb, -2.5), "-2.5");
  CHECK_STR(dstr(&sb, -0.0), "-0.0");
  CHECK_STR(dstr(&sb, 0.0), "0.0");
  CHECK_STR(dstr(&sb, 1e-05), "1e-05");
  CHECK_STR(dstr(&sb, 100.0), "100.0");
  CHECK_STR(dstr(&sb, 1e300), "1e+300");
  CHECK_STR(dstr(&sb, INFINITY), "inf");
  CHECK_STR(dstr(&sb, -INFINITY), "-inf");
  CHECK_STR(dstr(&sb, NAN), "nan");
  CHECK_STR(dstr(&sb, 123456789.0), "123456789.0");
  CHECK_STR(dstr(&sb, 0.0001), "0.0001");
  CHECK_STR(dstr(&sb, 0.00012), "0.00012");
  CHECK_STR(dstr(&sb, 1234.5), "1234.5");
  CHECK_STR(dstr(&sb, 1e15), "1000000000000000.0");
  CHECK_STR(dstr(&sb, 1e16), "1e+16");
  CHECK_STR(dstr(&sb, -1.5e300), "-1.5e+300");
  CHECK_STR(dstr(&sb, 5e-324), "5e-324");
  CHECK_STR(dstr(&sb, -2e-3), "-0.002");
  CHECK_STR(dstr(&sb, 1.7976931348623157e308), "1.7976931348623157e+308");
  CHECK_STR(fstr(&sb, 1e-05f), "1e-05");
  CHECK_STR(fstr(&sb, 1.4e-45f), "1e-45");
  CHECK_STR(fstr(&sb, 0.1f), "0.1");
  CHECK_STR(fstr(&sb, 1.0f), "1.0");
  CHECK_STR(fstr(&sb, -0.0f), "-0.0");
  CHECK_STR(fstr(&sb, 16777216.0f), "16777216.0");
  CHECK_STR(fstr(&sb, 3.4028235e38f), "3.4028235e+38");

  /* Round trip over random bit patterns (and always float-looking). */
  int dok = 1, fok = 1;
  for (int i = 0; i < 20000; i++) {
    uint64_t bits = rnd();
    double d;
    memcpy(&d, &bits, 8);
    if (isnan(d))
      continue;
    const char *s = dstr(&sb, d);
    double back = strtod(s, NULL);
    if (memcmp(&back, &d, 8) != 0 || !looks_float(s)) {
      if (dok)
        fprintf(stderr, "double round trip failed: %s\n", s);
      dok = 0;
    }
    uint32_t fb = (uint32_t)rnd();
    float f;
    memcpy(&f, &fb, 4);
    if (isnan(f))
      continue;
    s = fstr(&sb, f);
    float fback = strtof(s, NULL);
    if (memcmp(&fback, &f, 4) != 0 || !looks_float(s)) {
      if (fok)
        fprintf(stderr, "float round trip failed: %s\n", s);
      fok = 0;
    }
  }
  CHECK(dok);
  CHECK(fok);
  /* Shortest: small decimal values stay short. */
  CHECK(strlen(dstr(&sb, 0.3)) == 3);
  CHECK(strlen(fstr(&sb, 0.3f)) == 3);

  quill_strbuf_clear(&sb);
  quill_strbuf_put_quoted(&sb, "a\"b\\c\nd\te\x01\xff", 11);
  CHECK_STR(quill_strbuf_str(&sb), "\"a\\\"b\\\\c\\nd\\te\\01\\FF\"");
  quill_strbuf_free(&sb);
  quill_context_destroy(ctx);
}

/* ---- types ------------------------------------------------------------- */

static void test_types(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_type *f32 = quill_type_scalar(ctx, QUILL_TYPE_F32);
  quill_type *i8 = quill_type_scalar(ctx, QUILL_TYPE_I8);
  quill_type *u8 = quill_type_scalar(ctx, QUILL_TYPE_U8);
  CHECK(f32 == quill_type_scalar(ctx, QUILL_TYPE_F32));
  CHECK(f32 != i8);
  CHECK(quill_type_is_float(f32) && !quill_type_is_integer(f32));
  CHECK(quill_type_is_integer(i8) && quill_type_is_signed(i8));
  CHECK(quill_type_is_integer(u8) && !quill_type_is_signed(u8));
  CHECK(!quill_type_is_integer(quill_type_scalar(ctx, QUILL_TYPE_BOOL)));
  CHECK(quill_type_bit_width(quill_type_scalar(ctx, QUILL_TYPE_BOOL)) == 8);
  CHECK(quill_type_bit_width(quill_type_scalar(ctx, QUILL_TYPE_I4)) == 4);
  CHECK(quill_type_elem_bytes(quill_type_scalar(ctx, QUILL_TYPE_U4)) == 1);
  CHECK(quill_type_elem_bytes(quill_type_scalar(ctx, QUILL_TYPE_F64)) == 8);
  CHECK(quill_type_int_min(i8) == -128 && quill_type_int_max(i8) == 127);
  CHECK(quill_type_int_min(u8) == 0 && quill_type_int_max(u8) == 255);
  CHECK(quill_type_int_min(quill_type_scalar(ctx, QUILL_TYPE_I4)) == -8);
  CHECK(quill_type_int_max(quill_type_scalar(ctx, QUILL_TYPE_U4)) == 15);
  CHECK(quill_type_int_min(quill_type_scalar(ctx, QUILL_TYPE_I64)) ==
        INT64_MIN);
  CHECK_STR(quill_type_scalar_name(QUILL_TYPE_BF16), "bf16");
  CHECK(quill_type_scalar_name(QUILL_TYPE_TENSOR) == NULL);

  int64_t d1[] = {1, 3, 224, 224};
  int64_t d2[] = {1, 3, 224, 224};
  int64_t d3[] = {1, 3, 224, 225};
  quill_type *t1 = tensor(ctx, f32, 4, d1);
  CHECK(t1 && t1 == tensor(ctx, f32, 4, d2));
  CHECK(t1 != tensor(ctx, f32, 4, d3));
  CHECK(t1 != tensor(ctx, i8, 4, d1));
  CHECK(t1 != tensor(ctx, f32, 3, d1));
  CHECK(quill_type_rank(t1) == 4 && quill_type_dim(t1, 2) == 224);
  CHECK(quill_type_num_elements(t1) == 3 * 224 * 224);
  CHECK(quill_type_has_static_shape(t1));
  CHECK(quill_type_elem(t1) == f32);
  CHECK(quill_type_with_elem(ctx, t1, i8) == tensor(ctx, i8, 4, d1));
  CHECK(quill_type_with_elem(ctx, t1, f32) == t1);
  CHECK_STR(type_str(&sb, t1), "tensor<1x3x224x224xf32>");
  quill_type *scalar_t = tensor(ctx, f32, 0, NULL);
  CHECK(scalar_t && quill_type_num_elements(scalar_t) == 1);
  CHECK_STR(type_str(&sb, scalar_t), "tensor<f32>");
  int64_t dyn[] = {QUILL_DIM_DYNAMIC, 4};
  quill_type *td = tensor(ctx, f32, 2, dyn);
  CHECK(!quill_type_has_static_shape(td) && quill_type_num_elements(td) == -1);
  CHECK_STR(type_str(&sb, td), "tensor<?x4xf32>");
  int64_t zero[] = {0, 5};
  CHECK(quill_type_num_elements(tensor(ctx, f32, 2, zero)) == 0);
  int64_t bad[] = {-2};
  CHECK(tensor(ctx, f32, 1, bad) == NULL);
  int64_t many[QUILL_MAX_RANK + 1] = {0};
  CHECK(tensor(ctx, f32, QUILL_MAX_RANK + 1, many) == NULL);
  CHECK(tensor(ctx, t1, 1, d1) == NULL); /* tensor of tensor */
  /* dims above QUILL_MAX_DIM (2^31 - 1) are refused; dims that fit but
   * whose product overflows int64 give -1 elements */
  int64_t huge[] = {INT64_MAX / 2, 4};
  CHECK(tensor(ctx, f32, 2, huge) == NULL);
  int64_t over[] = {QUILL_MAX_DIM + 1};
  CHECK(tensor(ctx, f32, 1, over) == NULL);
  int64_t max[] = {QUILL_MAX_DIM};
  CHECK(quill_type_num_elements(tensor(ctx, f32, 1, max)) == QUILL_MAX_DIM);
  int64_t product[] = {QUILL_MAX_DIM, QUILL_MAX_DIM, QUILL_MAX_DIM};
  CHECK(quill_type_num_elements(tensor(ctx, f32, 3, product)) == -1);

  /* Quant types. */
  quill_type *q = quill_type_quant(ctx, i8, f32, 0.5, -3, -128, 127);
  CHECK(q && q == quill_type_quant(ctx, i8, f32, 0.5, -3, -128, 127));
  CHECK(q != quill_type_quant(ctx, i8, f32, 0.5, -2, -128, 127));
  CHECK(q != quill_type_quant(ctx, i8, f32, 0.25, -3, -128, 127));
  CHECK(q != quill_type_quant(ctx, i8, f32, 0.5, -3, -127, 127));
  CHECK(quill_type_is_quant(q) && !quill_type_is_scalar(q));
  CHECK(quill_type_quant_storage(q) == i8);
  CHECK(quill_type_quant_expressed(q) == f32);
  CHECK(quill_type_quant_axis_of(q) == -1);
  CHECK(quill_type_quant_num_params(q) == 1);
  CHECK(quill_type_quant_scales(q)[0] == 0.5);
  CHECK(quill_type_quant_zero_points(q)[0] == -3);
  CHECK(quill_type_bit_width(q) == 8 && quill_type_elem_bytes(q) == 1);
  CHECK_STR(type_str(&sb, q), "!quant.uniform<i8:f32, 0.5:-3>");
  quill_type *qn = quill_type_quant(ctx, i8, f32, 0.5, 0, -127, 127);
  CHECK_STR(type_str(&sb, qn), "!quant.uniform<i8<-127:127>:f32, 0.5:0>");
  CHECK(quill_type_quant_qmin(qn) == -127 && quill_type_quant_qmax(qn) == 127);
  quill_type *qu = quill_type_quant(ctx, u8, f32, 0.02, 128, 0, 255);
  int64_t d8[] = {8};
  CHECK_STR(type_str(&sb, tensor(ctx, qu, 1, d8)),
            "tensor<8x!quant.uniform<u8:f32, 0.02:128>>");
  double scales[] = {0.1, 0.2};
  int64_t zps[] = {0, 0};
  quill_type *qa =
      quill_type_quant_axis(ctx, i8, f32, 0, 2, scales, zps, -128, 127);
  CHECK(qa && qa == quill_type_quant_axis(ctx, i8, f32, 0, 2, scales, zps, -128,
                                          127));
  CHECK(qa !=
        quill_type_quant_axis(ctx, i8, f32, 1, 2, scales, zps, -128, 127));
  CHECK(quill_type_quant_axis_of(qa) == 0 &&
        quill_type_quant_num_params(qa) == 2);
  CHECK(quill_type_quant_scales(qa)[1] == 0.2);
  CHECK_STR(type_str(&sb, qa), "!quant.uniform<i8:f32:0, {0.1:0, 0.2:0}>");
  /* A per-axis type with one entry is not the per-tensor type. */
  double s1 = 0.5;
  int64_t z1 = -3;
  CHECK(quill_type_quant_axis(ctx, i8, f32, 0, 1, &s1, &z1, -128, 127) != q);
  CHECK(quill_type_quant_axis(ctx, i8, f32, -1, 1, &s1, &z1, -128, 127) ==
        NULL);
  quill_type *q4 =
      quill_type_quant(ctx, quill_type_scalar(ctx, QUILL_TYPE_I4),
                       quill_type_scalar(ctx, QUILL_TYPE_F16), 1.0, 0, -7, 7);
  CHECK_STR(type_str(&sb, q4), "!quant.uniform<i4<-7:7>:f16, 1.0:0>");

  /* Check reasons. */
  double good = 0.5, neg = -1.0, inf = INFINITY, nan_ = NAN;
  int64_t z0 = 0, z300 = 300;
  CHECK(quill_type_quant_check(i8, f32, 1, &good, &z0, -128, 127) == NULL);
  CHECK(quill_type_quant_check(f32, f32, 1, &good, &z0, -128, 127) != NULL);
  CHECK(quill_type_quant_check(quill_type_scalar(ctx, QUILL_TYPE_I64), f32, 1,
                               &good, &z0, -128, 127) != NULL);
  CHECK(quill_type_quant_check(i8, i8, 1, &good, &z0, -128, 127) != NULL);
  CHECK_STR(quill_type_quant_check(i8, f32, 1, &neg, &z0, -128, 127),
            "scale must be positive and finite");
  CHECK(quill_type_quant_check(i8, f32, 1, &inf, &z0, -128, 127) != NULL);
  CHECK(quill_type_quant_check(i8, f32, 1, &nan_, &z0, -128, 127) != NULL);
  CHECK(quill_type_quant_check(i8, f32, 1, &good, &z300, -128, 127) != NULL);
  CHECK(quill_type_quant_check(i8, f32, 1, &good, &z0, -129, 127) != NULL);
  CHECK(quill_type_quant_check(i8, f32, 1, &good, &z0, 10, 5) != NULL);
  CHECK(quill_type_quant_check(i8, f32, 0, &good, &z0, -128, 127) != NULL);
  CHECK(quill_type_quant(ctx, i8, f32, -1.0, 0, -128, 127) == NULL);
  CHECK(quill_type_quant(ctx, f32, f32, 1.0, 0, -128, 127) == NULL);

  quill_strbuf_free(&sb);
  quill_context_destroy(ctx);
}

/* ---- attributes -------------------------------------------------------- */

static void test_attrs(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_type *f32 = quill_type_scalar(ctx, QUILL_TYPE_F32);

  const quill_attr *i42 = quill_attr_int(ctx, 42);
  CHECK(i42 && i42 == quill_attr_int(ctx, 42));
  CHECK(i42 != quill_attr_int(ctx, 43));
  CHECK(quill_attr_kind_of(i42) == QUILL_ATTR_INT &&
        quill_attr_int_value(i42) == 42);
  const quill_attr *pz = quill_attr_float(ctx, 0.0);
  const quill_attr *nz = quill_attr_float(ctx, -0.0);
  CHECK(pz && nz && pz != nz);
  CHECK(pz == quill_attr_float(ctx, 0.0));
  const quill_attr *n1 = quill_attr_float(ctx, NAN);
  CHECK(n1 && n1 == quill_attr_float(ctx, NAN));
  CHECK(isnan(quill_attr_float_value(n1)));
  CHECK(quill_attr_float(ctx, 1.0) != quill_attr_int(ctx, 1));
  CHECK(quill_attr_bool(ctx, true) == quill_attr_bool(ctx, true));
  CHECK(quill_attr_bool(ctx, true) != quill_attr_bool(ctx, false));
  const quill_attr *s = quill_attr_string(ctx, "abc", 3);
  CHECK(s == quill_attr_string(ctx, "abcd", 3));
  CHECK(s != quill_attr_string(ctx, "abd", 3));
  size_t len = 0;
  CHECK_STR(quill_attr_string_value(s, &len), "abc");
  CHECK(len == 3);
  const quill_attr *es = quill_attr_string(ctx, NULL, 0);
  CHECK(es && quill_attr_string_value(es, &len)[0] == '\0' && len == 0);
  CHECK(quill_attr_type(ctx, f32) == quill_attr_type(ctx, f32));
  CHECK(quill_attr_type_value(quill_attr_type(ctx, f32)) == f32);

  int64_t iv[] = {1, 2, 3};
  const quill_attr *l = quill_attr_int_list(ctx, 3, iv);
  CHECK(l && l == quill_attr_int_list(ctx, 3, iv));
  CHECK(l != quill_attr_int_list(ctx, 2, iv));
  CHECK(quill_attr_list_size(l) == 3 &&
        quill_attr_list_elem(l, 1) == quill_attr_int(ctx, 2));
  int64_t out[3] = {0};
  CHECK(quill_attr_get_ints(l, out, 2) == 3 && out[0] == 1 && out[1] == 2 &&
        out[2] == 0);
  const quill_attr *mixed_e[] = {quill_attr_float(ctx, 1.0), s};
  const quill_attr *mixed = quill_attr_list(ctx, 2, mixed_e);
  CHECK(quill_attr_get_ints(mixed, out, 3) == -1);
  CHECK(quill_attr_get_ints(i42, out, 3) == -1);
  CHECK(quill_attr_list(ctx, 0, NULL) == quill_attr_int_list(ctx, 0, NULL));
  int64_t long_list[40];
  for (int i = 0; i < 40; i++)
    long_list[i] = i * 3;
  const quill_attr *ll = quill_attr_int_list(ctx, 40, long_list);
  CHECK(ll && quill_attr_list_size(ll) == 40 &&
        quill_attr_int_value(quill_attr_list_elem(ll, 39)) == 117);

  CHECK_STR(attr_str(&sb, i42), "42");
  CHECK_STR(attr_str(&sb, quill_attr_int(ctx, -7)), "-7");
  CHECK_STR(attr_str(&sb, quill_attr_float(ctx, 1.5)), "1.5");
  CHECK_STR(attr_str(&sb, nz), "-0.0");
  CHECK_STR(attr_str(&sb, quill_attr_float(ctx, -INFINITY)), "-inf");
  CHECK_STR(attr_str(&sb, n1), "nan");
  CHECK_STR(attr_str(&sb, quill_attr_bool(ctx, false)), "false");
  CHECK_STR(attr_str(&sb, quill_attr_string(ctx, "a\"b", 3)), "\"a\\\"b\"");
  CHECK_STR(attr_str(&sb, l), "[1, 2, 3]");
  CHECK_STR(attr_str(&sb, quill_attr_list(ctx, 0, NULL)), "[]");
  CHECK_STR(attr_str(&sb, mixed), "[1.0, \"abc\"]");
  int64_t d2[] = {2};
  CHECK_STR(
      attr_str(&sb, quill_attr_type(
                        ctx, quill_type_tensor(
                                 ctx, quill_type_scalar(ctx, QUILL_TYPE_I8), 1,
                                 d2))),
      "tensor<2xi8>");

  /* Dense: round trip, uniquing, getters and printing. */
  quill_type *t2 = quill_type_tensor(ctx, f32, 1, d2);
  float fv[2] = {1.0f, 2.0f};
  const quill_attr *dn = quill_attr_dense(ctx, t2, fv, sizeof fv);
  CHECK(dn && dn == quill_attr_dense(ctx, t2, fv, sizeof fv));
  CHECK(quill_attr_dense(ctx, t2, fv, 4) == NULL); /* size mismatch */
  CHECK(quill_attr_dense_type(dn) == t2 && quill_attr_dense_size(dn) == 8);
  CHECK(quill_attr_dense_data(dn) != (const void *)fv);
  CHECK(memcmp(quill_attr_dense_data(dn), fv, 8) == 0);
  CHECK(quill_attr_dense_get_f64(dn, 1) == 2.0);
  CHECK(quill_attr_dense_get_i64(dn, 1) == 2);
  CHECK(!quill_attr_dense_is_splat(dn));
  CHECK_STR(attr_str(&sb, dn), "dense<[1.0, 2.0]> : tensor<2xf32>");
  fv[1] = 3.0f;
  CHECK(quill_attr_dense(ctx, t2, fv, sizeof fv) != dn);
  int64_t d64[] = {64, 64};
  quill_type *big = quill_type_tensor(ctx, f32, 2, d64);
  float *zeros = calloc(64 * 64, sizeof(float));
  const quill_attr *splat = quill_attr_dense(ctx, big, zeros, 64 * 64 * 4);
  CHECK(splat && quill_attr_dense_is_splat(splat));
  CHECK_STR(attr_str(&sb, splat), "dense<0.0> : tensor<64x64xf32>");
  free(zeros);
  int64_t d1[] = {1};
  float one = -0.5f;
  CHECK_STR(
      attr_str(&sb, quill_attr_dense(ctx, quill_type_tensor(ctx, f32, 1, d1),
                                     &one, 4)),
      "dense<-0.5> : tensor<1xf32>");
  int64_t d32[] = {32};
  float ones[32];
  for (int i = 0; i < 32; i++)
    ones[i] = i == 31 ? 2.0f : 1.0f;
  const quill_attr *hex =
      quill_attr_dense(ctx, quill_type_tensor(ctx, f32, 1, d32), ones, 128);
  const char *hs = attr_str(&sb, hex);
  CHECK(strncmp(hs, "dense<\"0x0000803F0000803F", 25) == 0);
  CHECK(strstr(hs, "00000040\"> : tensor<32xf32>") != NULL);
  CHECK(strlen(hs) == strlen("dense<\"0x\"> : tensor<32xf32>") + 256);
  int64_t d0[] = {0};
  CHECK_STR(
      attr_str(&sb, quill_attr_dense(ctx, quill_type_tensor(ctx, f32, 1, d0),
                                     NULL, 0)),
      "dense<[]> : tensor<0xf32>");

  /* Every scalar element kind. */
  int64_t d3[] = {3};
  int8_t i8v[3] = {-1, 0, 127};
  const quill_attr *ai8 = quill_attr_dense(
      ctx, quill_type_tensor(ctx, quill_type_scalar(ctx, QUILL_TYPE_I8), 1, d3),
      i8v, 3);
  CHECK_STR(attr_str(&sb, ai8), "dense<[-1, 0, 127]> : tensor<3xi8>");
  CHECK(quill_attr_dense_get_i64(ai8, 0) == -1 &&
        quill_attr_dense_get_f64(ai8, 2) == 127.0);
  uint8_t u8v[3] = {255, 0, 1};
  CHECK_STR(
      attr_str(&sb, quill_attr_dense(
                        ctx,
                        quill_type_tensor(
                            ctx, quill_type_scalar(ctx, QUILL_TYPE_U8), 1, d3),
                        u8v, 3)),
      "dense<[255, 0, 1]> : tensor<3xu8>");
  int64_t i64v[3] = {INT64_MIN, 5, -5};
  const quill_attr *ai64 = quill_attr_dense(
      ctx,
      quill_type_tensor(ctx, quill_type_scalar(ctx, QUILL_TYPE_I64), 1, d3),
      i64v, 24);
  CHECK_STR(attr_str(&sb, ai64),
            "dense<[-9223372036854775808, 5, -5]> : tensor<3xi64>");
  uint8_t bv[3] = {1, 0, 1};
  CHECK_STR(attr_str(&sb, quill_attr_dense(
                              ctx,
                              quill_type_tensor(
                                  ctx, quill_type_scalar(ctx, QUILL_TYPE_BOOL),
                                  1, d3),
                              bv, 3)),
            "dense<[true, false, true]> : tensor<3xbool>");
  double f64v[3] = {0.1, -2.0, 1e-300};
  CHECK_STR(
      attr_str(&sb, quill_attr_dense(
                        ctx,
                        quill_type_tensor(
                            ctx, quill_type_scalar(ctx, QUILL_TYPE_F64), 1, d3),
                        f64v, 24)),
      "dense<[0.1, -2.0, 1e-300]> : tensor<3xf64>");
  uint16_t hv[3] = {0x3C00, 0x3555, 0xC000}; /* 1.0, 0.333251953125, -2 */
  const quill_attr *ah = quill_attr_dense(
      ctx,
      quill_type_tensor(ctx, quill_type_scalar(ctx, QUILL_TYPE_F16), 1, d3), hv,
      6);
  CHECK_STR(attr_str(&sb, ah),
            "dense<[1.0, 0.33325195, -2.0]> : tensor<3xf16>");
  CHECK(quill_attr_dense_get_f64(ah, 1) == 0.333251953125);
  uint16_t bfv[3] = {0x3F80, 0x3DCD, 0x4049}; /* 1, 0.10009765625, 3.140625 */
  CHECK_STR(attr_str(&sb, quill_attr_dense(
                              ctx,
                              quill_type_tensor(
                                  ctx, quill_type_scalar(ctx, QUILL_TYPE_BF16),
                                  1, d3),
                              bfv, 6)),
            "dense<[1.0, 0.100097656, 3.140625]> : tensor<3xbf16>");
  quill_type *q = quill_type_quant(ctx, quill_type_scalar(ctx, QUILL_TYPE_I8),
                                   f32, 0.5, 0, -128, 127);
  const quill_attr *aq =
      quill_attr_dense(ctx, quill_type_tensor(ctx, q, 1, d3), i8v, 3);
  CHECK_STR(attr_str(&sb, aq), "dense<[-1, 0, 127]> : "
                               "tensor<3x!quant.uniform<i8:f32, 0.5:0>>");
  CHECK(quill_attr_dense_get_i64(aq, 0) == -1);
  int64_t dd[] = {QUILL_DIM_DYNAMIC};
  CHECK(quill_attr_dense(ctx, quill_type_tensor(ctx, f32, 1, dd), fv, 8) ==
        NULL);
  CHECK(quill_attr_dense(ctx, f32, fv, 4) == NULL);

  quill_strbuf_free(&sb);
  quill_context_destroy(ctx);
}

/* ---- f16 / bf16 -------------------------------------------------------- */

static void test_half(void) {
  CHECK(quill_f32_to_f16(1.0f) == 0x3C00);
  CHECK(quill_f16_to_f32(0x3C00) == 1.0f);
  CHECK(quill_f32_to_f16(65504.0f) == 0x7BFF);
  CHECK(quill_f16_to_f32(0x7BFF) == 65504.0f);
  CHECK(quill_f32_to_f16(65520.0f) == 0x7C00); /* rounds up to inf */
  CHECK(quill_f32_to_f16(65519.0f) == 0x7BFF);
  CHECK(quill_f32_to_f16(INFINITY) == 0x7C00);
  CHECK(quill_f32_to_f16(-INFINITY) == 0xFC00);
  CHECK(quill_f32_to_f16(-0.0f) == 0x8000);
  CHECK(quill_f32_to_f16(-2.0f) == 0xC000);
  uint16_t hn = quill_f32_to_f16(NAN);
  CHECK((hn & 0x7C00) == 0x7C00 && (hn & 0x3FF) != 0);
  CHECK(isnan(quill_f16_to_f32(0x7E00)));
  CHECK(isinf(quill_f16_to_f32(0x7C00)));
  /* Subnormals: smallest 2^-24, largest 1023 * 2^-24. */
  CHECK(quill_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
  CHECK(quill_f32_to_f16(ldexpf(1.0f, -24)) == 0x0001);
  CHECK(quill_f16_to_f32(0x03FF) == ldexpf(1023.0f, -24));
  CHECK(quill_f32_to_f16(ldexpf(1023.0f, -24)) == 0x03FF);
  CHECK(quill_f16_to_f32(0x8001) == -ldexpf(1.0f, -24));
  CHECK(quill_f32_to_f16(ldexpf(1.0f, -25)) == 0x0000); /* tie to even 0 */
  CHECK(quill_f32_to_f16(ldexpf(3.0f, -25)) == 0x0002); /* tie to even 2 */
  CHECK(quill_f32_to_f16(ldexpf(1.5f, -25)) == 0x0001); /* above half */
  CHECK(quill_f32_to_f16(ldexpf(1.0f, -26)) == 0x0000);
  CHECK(quill_f32_to_f16(ldexpf(1.0f, -14)) == 0x0400); /* min normal */
  /* Rounding between normals: 1 + 2^-11 is a tie -> 1.0 (even);
   * 1 + 3*2^-11 is a tie -> 1 + 2^-9 (even mantissa 2). */
  CHECK(quill_f32_to_f16(1.0f + ldexpf(1.0f, -11)) == 0x3C00);
  CHECK(quill_f32_to_f16(1.0f + ldexpf(3.0f, -11)) == 0x3C02);
  CHECK(quill_f32_to_f16(1.0f + ldexpf(1.0f, -11) + ldexpf(1.0f, -20)) ==
        0x3C01);
  /* Every finite half converts exactly to f32 and back. */
  int ok = 1;
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF))
      continue;
    ok &= quill_f32_to_f16(quill_f16_to_f32((uint16_t)h)) == h;
  }
  CHECK(ok);

  CHECK(quill_f32_to_bf16(1.0f) == 0x3F80);
  CHECK(quill_bf16_to_f32(0x3F80) == 1.0f);
  CHECK(quill_bf16_to_f32(0x4049) == 3.140625f);
  CHECK(quill_f32_to_bf16(3.14159265f) == 0x4049);
  CHECK(quill_f32_to_bf16(-0.0f) == 0x8000);
  /* 1 + 2^-8 is a tie -> 1.0; 1 + 3*2^-8 tie -> 1 + 2^-6. */
  CHECK(quill_f32_to_bf16(1.0f + ldexpf(1.0f, -8)) == 0x3F80);
  CHECK(quill_f32_to_bf16(1.0f + ldexpf(3.0f, -8)) == 0x3F82);
  CHECK(quill_f32_to_bf16(3.4028235e38f) == 0x7F80); /* rounds to inf */
  uint16_t bn = quill_f32_to_bf16(NAN);
  CHECK((bn & 0x7F80) == 0x7F80 && (bn & 0x7F) != 0);
  CHECK(isnan(quill_bf16_to_f32(bn)));
}

/* ---- graphs ------------------------------------------------------------ */

/* Check that v's use list holds exactly the given (op, index) pairs, in
 * order, and is well linked. */
static bool uses_are(const quill_value *v, unsigned n, quill_op *const *ops,
                     const unsigned *idx) {
  unsigned i = 0;
  for (quill_use *u = quill_value_first_use(v); u; u = quill_use_next(u), i++) {
    if (i >= n || quill_use_user(u) != ops[i] ||
        quill_use_operand_index(u) != idx[i] ||
        quill_op_operand(quill_use_user(u), idx[i]) != v)
      return false;
  }
  return i == n && quill_value_num_uses(v) == n;
}

static bool op_order(const quill_graph *g, unsigned n, quill_op *const *ops) {
  unsigned i = 0;
  quill_op *prev = NULL;
  QUILL_GRAPH_FOREACH(g, op) {
    if (i >= n || op != ops[i] || quill_op_prev(op) != prev)
      return false;
    prev = op;
    i++;
  }
  return i == n && quill_graph_num_ops(g) == n &&
         quill_graph_last_op(g) == prev;
}

static void test_graph(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_type *f32 = quill_type_scalar(ctx, QUILL_TYPE_F32);
  int64_t d4[] = {4};
  quill_type *t = quill_type_tensor(ctx, f32, 1, d4);
  quill_module *m = quill_module_create(ctx);
  quill_type *args[] = {t, t};
  quill_graph *g = quill_graph_create(m, "main", 2, args, 1, &t);
  CHECK(g && quill_module_num_graphs(m) == 1 && quill_module_graph(m, 0) == g);
  CHECK(quill_module_find_graph(m, "main") == g);
  CHECK(quill_module_find_graph(m, "other") == NULL);
  CHECK_STR(quill_graph_name(g), "main");
  CHECK(quill_graph_context(g) == ctx && quill_graph_module(g) == m);
  CHECK(quill_module_context(m) == ctx);
  CHECK(quill_graph_num_args(g) == 2 && quill_graph_num_results(g) == 1);
  CHECK(quill_graph_result_type(g, 0) == t);
  quill_value *x = quill_graph_arg(g, 0), *y = quill_graph_arg(g, 1);
  CHECK(quill_value_is_arg(x) && quill_value_index(y) == 1 &&
        quill_value_def(x) == NULL && quill_value_type(x) == t &&
        quill_value_graph(x) == g);
  CHECK(quill_graph_first_op(g) == NULL && quill_graph_return(g) == NULL);

  quill_value *xy[] = {x, y};
  quill_loc loc = quill_loc_named(ctx, "add0");
  quill_op *add = quill_op_create(g, QUILL_OP_ADD, 2, xy, 1, &t, 0, NULL, loc);
  CHECK(add && !quill_op_is_attached(add));
  CHECK(quill_op_opcode(add) == QUILL_OP_ADD);
  CHECK_STR(quill_op_name(add), "add");
  CHECK(quill_op_has_flag(add, QUILL_OPF_COMMUTATIVE));
  CHECK(!quill_op_has_flag(add, QUILL_OPF_TERMINATOR));
  CHECK(quill_op_loc(add).name == loc.name);
  CHECK(quill_op_graph(add) == g && quill_op_context(add) == ctx);
  quill_op_insert_at_end(g, add);
  quill_value *a = quill_op_result(add, 0);
  CHECK(quill_value_def(a) == add && !quill_value_is_arg(a) &&
        quill_value_type(a) == t && quill_value_index(a) == 0);
  quill_named_attr alpha = {quill_ident_get(ctx, "alpha"),
                            quill_attr_float(ctx, 0.1)};
  quill_op *relu = quill_op_create(g, QUILL_OP_LEAKY_RELU, 1, &a, 1, &t, 1,
                                   &alpha, quill_loc_unknown());
  quill_op_insert_at_end(g, relu);
  quill_value *r = quill_op_result(relu, 0);
  quill_op *ret = quill_op_create(g, QUILL_OP_RETURN, 1, &r, 0, NULL, 0, NULL,
                                  quill_loc_unknown());
  quill_op_insert_at_end(g, ret);
  CHECK(quill_graph_return(g) == ret);
  quill_op *order1[] = {add, relu, ret};
  CHECK(op_order(g, 3, order1));
  CHECK(quill_op_id(add) != quill_op_id(relu) &&
        quill_op_id(relu) != quill_op_id(ret));

  /* Use lists. */
  quill_op *u1[] = {add};
  unsigned i0[] = {0}, i1[] = {1};
  CHECK(uses_are(x, 1, u1, i0));
  CHECK(uses_are(y, 1, u1, i1));
  quill_op *u2[] = {relu};
  CHECK(uses_are(a, 1, u2, i0) && quill_value_has_one_use(a));
  /* add(x, x): two uses of x, y unused. */
  quill_op_set_operand(add, 1, x);
  quill_op *u3[] = {add, add};
  unsigned i01[] = {0, 1};
  CHECK(uses_are(x, 2, u3, i01) && !quill_value_has_uses(y));
  CHECK(!quill_value_has_one_use(x));
  /* Now a mul(y, x) before relu; relu uses mul's result. */
  quill_value *yx[] = {y, x};
  quill_op *mul = quill_op_create(g, QUILL_OP_MUL, 2, yx, 1, &t, 0, NULL,
                                  quill_loc_unknown());
  quill_op_insert_before(relu, mul);
  quill_op *order2[] = {add, mul, relu, ret};
  CHECK(op_order(g, 4, order2));
  quill_value *mv = quill_op_result(mul, 0);
  quill_op *u4[] = {add, add, mul};
  unsigned i011[] = {0, 1, 1};
  CHECK(uses_are(x, 3, u4, i011));
  /* Removing a use from the middle keeps the list consistent. */
  quill_op_set_operand(add, 1, y);
  quill_op *u5[] = {add, mul};
  unsigned i01b[] = {0, 1};
  CHECK(uses_are(x, 2, u5, i01b));
  quill_op *u6[] = {mul, add};
  unsigned i0_1[] = {0, 1};
  CHECK(uses_are(y, 2, u6, i0_1));
  /* replace_all_uses: every use of a moves to mv. */
  quill_value_replace_all_uses(a, mv);
  CHECK(!quill_value_has_uses(a) && quill_op_operand(relu, 0) == mv);
  CHECK(uses_are(mv, 1, u2, i0));
  /* Merging into a value that already has uses appends. */
  quill_value_replace_all_uses(y, x);
  quill_op *u7[] = {add, mul, mul, add};
  unsigned i7[] = {0, 1, 0, 1};
  CHECK(uses_are(x, 4, u7, i7) && !quill_value_has_uses(y));
  quill_value_replace_all_uses(x, x); /* no-op */
  CHECK(uses_are(x, 4, u7, i7));
  /* The add is now dead: erase it. */
  quill_op_erase(add);
  quill_op *order3[] = {mul, relu, ret};
  CHECK(op_order(g, 3, order3));
  quill_op *u8[] = {mul, mul};
  unsigned i8b[] = {1, 0};
  CHECK(uses_are(x, 2, u8, i8b));
  /* set_operands grows and shrinks, relinking correctly. */
  quill_value *three[] = {x, y, mv};
  CHECK(quill_op_set_operands(ret, 3, three) == QUILL_OK);
  CHECK(quill_op_num_operands(ret) == 3 && quill_op_operand(ret, 2) == mv);
  CHECK(!quill_value_has_uses(r) && quill_value_num_uses(mv) == 2);
  CHECK(quill_value_num_uses(y) == 1 && quill_value_num_uses(x) == 3);
  CHECK(quill_op_set_operands(ret, 1, &r) == QUILL_OK);
  CHECK(quill_op_num_operands(ret) == 1 && quill_value_num_uses(mv) == 1);
  CHECK(!quill_value_has_uses(y) && quill_value_num_uses(x) == 2);
  quill_op *u9[] = {ret};
  CHECK(uses_are(r, 1, u9, i0));

  /* Move, remove, insert_after. */
  quill_op_move_before(ret, mul); /* nonsense order, just list surgery */
  quill_op *order4[] = {ret, mul, relu};
  CHECK(op_order(g, 3, order4));
  CHECK(quill_graph_return(g) == NULL);
  quill_op_remove(ret);
  CHECK(!quill_op_is_attached(ret));
  quill_op *order5[] = {mul, relu};
  CHECK(op_order(g, 2, order5));
  quill_op_insert_after(relu, ret);
  CHECK(op_order(g, 3, order3) && quill_graph_return(g) == ret);
  quill_op *cst_dead = quill_op_create(g, QUILL_OP_RELU, 1, &x, 1, &t, 0, NULL,
                                       quill_loc_unknown());
  quill_op_insert_after(mul, cst_dead);
  quill_op *order6[] = {mul, cst_dead, relu, ret};
  CHECK(op_order(g, 4, order6));
  /* Erase while iterating (safe foreach). */
  QUILL_GRAPH_FOREACH_SAFE(g, op, nx) {
    if (op == cst_dead)
      quill_op_erase(op);
  }
  CHECK(op_order(g, 3, order3));
  CHECK(quill_value_num_uses(x) == 2);

  /* Attributes: set/replace/remove keep order. */
  CHECK(quill_op_num_attrs(relu) == 1);
  CHECK(quill_op_attr_float(relu, "alpha", -1) == 0.1);
  CHECK(quill_op_attr(relu, "never_interned_name_xyz") == NULL);
  CHECK(quill_op_attr_int(relu, "alpha", 7) == 7); /* wrong kind: default */
  CHECK(quill_op_set_attr(relu, "k", quill_attr_int(ctx, 3)) == QUILL_OK);
  int64_t pads[] = {1, 1, 2, 2};
  CHECK(quill_op_set_attr(relu, "pads", quill_attr_int_list(ctx, 4, pads)) ==
        QUILL_OK);
  CHECK(quill_op_set_attr(relu, "z", quill_attr_bool(ctx, true)) == QUILL_OK);
  CHECK(quill_op_set_attr(relu, "w", quill_attr_bool(ctx, true)) == QUILL_OK);
  CHECK(quill_op_num_attrs(relu) == 5);
  CHECK(quill_op_set_attr(relu, "k", quill_attr_int(ctx, 4)) == QUILL_OK);
  CHECK(quill_op_num_attrs(relu) == 5 && quill_op_attr_int(relu, "k", 0) == 4);
  CHECK_STR(quill_op_attr_at(relu, 1).name, "k");
  CHECK(quill_op_set_attr(relu, "alpha", NULL) == QUILL_OK);
  CHECK(quill_op_set_attr(relu, "absent_attr_q", NULL) == QUILL_OK);
  CHECK(quill_op_num_attrs(relu) == 4);
  const char *want[] = {"k", "pads", "z", "w"};
  int ok = 1;
  for (unsigned i = 0; i < 4; i++)
    ok &= strcmp(quill_op_attr_at(relu, i).name, want[i]) == 0;
  CHECK(ok);
  int64_t got[4] = {0};
  CHECK(quill_op_attr_ints(relu, "pads", got, 4) == 4 && got[3] == 2);
  CHECK(quill_op_attr_ints(relu, "k", got, 4) == -1);
  CHECK(quill_op_attr_ints(relu, "nope", got, 4) == -1);
  CHECK(quill_op_attr_ident(relu, quill_ident_get(ctx, "z")) ==
        quill_attr_bool(ctx, true));
  CHECK(quill_op_attr_float(relu, "alpha", -1) == -1);

  /* Value names, types, locs. */
  CHECK(quill_value_name(x) == NULL);
  CHECK(quill_value_set_name(x, "input") == QUILL_OK);
  CHECK_STR(quill_value_name(x), "input");
  CHECK(quill_value_set_name(x, NULL) == QUILL_OK && !quill_value_name(x));
  quill_value_set_type(mv, f32);
  CHECK(quill_value_type(mv) == f32);
  quill_op_set_loc(mul, quill_loc_file(ctx, "a.qir", 2, 3));
  CHECK(quill_op_loc(mul).line == 2);
  quill_graph_set_loc(g, quill_loc_named(ctx, "g"));
  CHECK_STR(quill_graph_loc(g).name, "g");

  /* Constants. */
  float fv[4] = {1, 2, 3, 4};
  const quill_attr *dense = quill_attr_dense(ctx, t, fv, sizeof fv);
  quill_named_attr va = {"value", dense};
  quill_op *cst = quill_op_create(g, QUILL_OP_CONSTANT, 0, NULL, 1, &t, 1, &va,
                                  quill_loc_unknown());
  quill_op_insert_before(quill_graph_first_op(g), cst);
  CHECK(quill_value_constant(quill_op_result(cst, 0)) == dense);
  CHECK(quill_value_constant(mv) == NULL && quill_value_constant(x) == NULL);

  /* Result types can change. */
  quill_type *two[] = {t, f32};
  CHECK(quill_graph_set_result_types(g, 2, two) == QUILL_OK);
  CHECK(quill_graph_num_results(g) == 2 &&
        quill_graph_result_type(g, 1) == f32);

  /* Many ops: the arena grows across chunks. */
  quill_value *cur = x;
  for (int i = 0; i < 5000; i++) {
    quill_op *o = quill_op_create(g, QUILL_OP_RELU, 1, &cur, 1, &t, 0, NULL,
                                  quill_loc_unknown());
    if (!o)
      break;
    quill_op_insert_before(ret, o);
    cur = quill_op_result(o, 0);
  }
  CHECK(quill_graph_num_ops(g) == 5004);
  void *blob = quill_graph_alloc(g, 1 << 20);
  CHECK(blob != NULL);
  memset(blob, 1, 1 << 20);

  quill_graph *g2 = quill_graph_create(m, "second", 0, NULL, 0, NULL);
  quill_graph *g3 = quill_graph_create(m, "third", 0, NULL, 0, NULL);
  CHECK(g2 && g3 && quill_module_num_graphs(m) == 3);
  quill_graph_destroy(g2);
  CHECK(quill_module_num_graphs(m) == 2 && quill_module_graph(m, 1) == g3);
  CHECK(quill_module_find_graph(m, "second") == NULL);
  quill_module_destroy(m);
  quill_context_destroy(ctx);
}

/* ---- ops table --------------------------------------------------------- */

static void test_ops_table(void) {
  int ok = 1;
  for (int i = 0; i < QUILL_OP_COUNT; i++) {
    const quill_op_info *info = quill_opcode_info((quill_opcode)i);
    quill_opcode back;
    ok &= info->mnemonic && info->verify &&
          quill_opcode_lookup(info->mnemonic, strlen(info->mnemonic), &back) &&
          back == (quill_opcode)i;
    ok &= info->max_operands == -1 || info->max_operands >= info->min_operands;
  }
  CHECK(ok);
  quill_opcode opc;
  CHECK(quill_opcode_lookup("conv2dXYZ", 6, &opc) && opc == QUILL_OP_CONV2D);
  CHECK(!quill_opcode_lookup("conv", 4, &opc));
  CHECK(!quill_opcode_lookup("nosuchop", 8, &opc));
  CHECK_STR(quill_opcode_name(QUILL_OP_RETURN), "return");
  CHECK(quill_opcode_info(QUILL_OP_RETURN)->flags & QUILL_OPF_TERMINATOR);
}

/* ---- allocation failure ------------------------------------------------ */

typedef struct fail_alloc {
  long budget; /* allocations left before failing; < 0: never fail */
  long live;   /* outstanding allocations */
} fail_alloc;

static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  fail_alloc *fa = ud;
  (void)osize;
  if (nsize == 0) {
    if (ptr)
      fa->live--;
    free(ptr);
    return NULL;
  }
  if (fa->budget == 0)
    return NULL;
  if (fa->budget > 0)
    fa->budget--;
  void *p = realloc(ptr, nsize);
  if (p && !ptr)
    fa->live++;
  return p;
}

/* Build a little IR under an allocation budget. Returns true if everything
 * succeeded; on failure every step must have reported NULL/NOMEM. */
static bool build_under_budget(quill_context *ctx) {
  quill_type *f32 = quill_type_scalar(ctx, QUILL_TYPE_F32);
  int64_t d[] = {2, 3};
  quill_type *t = quill_type_tensor(ctx, f32, 2, d);
  if (!t)
    return false;
  quill_type *q = quill_type_quant(ctx, quill_type_scalar(ctx, QUILL_TYPE_I8),
                                   f32, 0.25, 1, -128, 127);
  if (!q)
    return false;
  float data[6] = {1, 2, 3, 4, 5, 6};
  const quill_attr *dn = quill_attr_dense(ctx, t, data, sizeof data);
  if (!dn)
    return false;
  int64_t ints[20] = {0};
  if (!quill_attr_int_list(ctx, 20, ints) || !quill_attr_string(ctx, "s", 1))
    return false;
  if (!quill_ident_get(ctx, "some_identifier"))
    return false;
  quill_module *m = quill_module_create(ctx);
  if (!m)
    return false;
  bool ok = false;
  quill_graph *g = quill_graph_create(m, "f", 1, &t, 1, &t);
  if (g) {
    quill_named_attr va = {"value", dn};
    quill_op *c = quill_op_create(g, QUILL_OP_CONSTANT, 0, NULL, 1, &t, 1, &va,
                                  quill_loc_unknown());
    if (c) {
      quill_op_insert_at_end(g, c);
      quill_value *ops[] = {quill_graph_arg(g, 0), quill_op_result(c, 0)};
      quill_op *add = quill_op_create(g, QUILL_OP_ADD, 2, ops, 1, &t, 0, NULL,
                                      quill_loc_unknown());
      if (add) {
        quill_op_insert_at_end(g, add);
        ok =
            quill_op_set_attr(add, "tag", quill_attr_int(ctx, 1)) == QUILL_OK &&
            quill_value_set_name(quill_op_result(add, 0), "sum") == QUILL_OK;
      }
    }
  }
  if (ok) {
    quill_strbuf sb;
    quill_strbuf_init(&sb, ctx);
    quill_attr_print(dn, &sb);
    ok = !quill_strbuf_failed(&sb) &&
         strcmp(quill_strbuf_str(&sb),
                "dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<2x3xf32>") == 0;
    quill_strbuf_free(&sb);
  }
  quill_module_destroy(m);
  return ok;
}

static void test_oom(void) {
  fail_alloc fa = {0, 0};
  CHECK(quill_context_create(failing_alloc, &fa) == NULL);
  int succeeded_at = -1, crashes_avoided = 0;
  for (long n = 1; n < 200; n++) {
    fa.budget = n;
    fa.live = 0;
    quill_context *ctx = quill_context_create(failing_alloc, &fa);
    if (!ctx)
      continue;
    bool ok = build_under_budget(ctx);
    /* A failed run leaves the context usable: errors still report. */
    quill_context_destroy(ctx);
    if (fa.live != 0) {
      fprintf(stderr, "leak with budget %ld: %ld live\n", n, fa.live);
      crashes_avoided = -1000;
    }
    if (ok) {
      succeeded_at = (int)n;
      break;
    }
    crashes_avoided++;
  }
  CHECK(succeeded_at > 0);
  CHECK(crashes_avoided > 5);
  /* strbuf stops growing and flags the failure. */
  fa.budget = -1;
  quill_context *ctx = quill_context_create(failing_alloc, &fa);
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_strbuf_puts(&sb, "abc");
  fa.budget = 0;
  for (int i = 0; i < 100; i++)
    quill_strbuf_puts(&sb, "0123456789");
  CHECK(quill_strbuf_failed(&sb));
  CHECK(strncmp(quill_strbuf_str(&sb), "abc", 3) == 0);
  fa.budget = -1;
  quill_strbuf_free(&sb);
  fa.budget = 0;
  CHECK(quill_type_tensor(ctx, quill_type_scalar(ctx, QUILL_TYPE_F32), 0,
                          NULL) == NULL);
  CHECK(quill_type_scalar(ctx, QUILL_TYPE_F32) != NULL); /* never allocates */
  CHECK(quill_attr_int(ctx, 5) == NULL);
  CHECK(quill_module_create(ctx) == NULL);
  CHECK(quill_context_add_source(ctx, "x", "abc", 3, 0) == QUILL_ERR_NOMEM);
  CHECK(quill_debug_enable(ctx, "cse") == QUILL_ERR_NOMEM);
  fa.budget = -1;
  quill_context_destroy(ctx);
  CHECK(fa.live == 0);
}

/* An allocator that stores each block's size in a header and checks that
 * every free/realloc passes the matching osize (the funnel's contract). */
typedef struct size_check {
  long mismatches;
  long live;
} size_check;

static void *checking_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  size_check *sc = ud;
  unsigned char *base = ptr ? (unsigned char *)ptr - 16 : NULL;
  if (base) {
    size_t stored;
    memcpy(&stored, base, sizeof stored);
    if (stored != osize)
      sc->mismatches++;
  }
  if (nsize == 0) {
    if (base)
      sc->live--;
    free(base);
    return NULL;
  }
  unsigned char *nb = realloc(base, nsize + 16);
  if (!nb)
    return NULL;
  if (!base)
    sc->live++;
  memcpy(nb, &nsize, sizeof nsize);
  return nb + 16;
}

static void test_alloc_sizes(void) {
  size_check sc = {0, 0};
  quill_context *ctx = quill_context_create(checking_alloc, &sc);
  CHECK(build_under_budget(ctx));
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  for (int i = 0; i < 300; i++)
    quill_strbuf_printf(&sb, "%d,", i);
  quill_strbuf_free(&sb);
  char *d = quill_strdup(ctx, "");
  quill_string_free(ctx, d);
  void *z = quill_alloc(ctx, 0);
  z = quill_realloc(ctx, z, 0, 32);
  quill_free(ctx, z, 32);
  CHECK(quill_context_add_source(ctx, "a", "x\ny\n", 4, 0) == QUILL_OK);
  CHECK(quill_context_add_source(ctx, "a", "x\ny\nz", 5, 3) == QUILL_OK);
  CHECK(quill_context_add_source(ctx, "b", "", 0, 0) == QUILL_OK);
  CHECK(quill_debug_enable(ctx, "a,b,c,d,e,f,g,h,i,j,k") == QUILL_OK);
  quill_module *m = quill_module_create(ctx);
  for (int i = 0; i < 9; i++) {
    char name[8];
    snprintf(name, sizeof name, "g%d", i);
    CHECK(quill_graph_create(m, name, 0, NULL, 0, NULL) != NULL);
  }
  quill_graph_destroy(quill_module_graph(m, 4));
  quill_module_destroy(m);
  quill_context_destroy(ctx);
  CHECK(sc.mismatches == 0);
  CHECK(sc.live == 0);
}

/* ---- diagnostics ------------------------------------------------------- */

typedef struct diag_log {
  int count;
  quill_loc loc;
  quill_diag_severity sev;
  char msg[256];
} diag_log;

static void log_handler(void *ud, quill_loc loc, quill_diag_severity sev,
                        const char *msg) {
  diag_log *d = ud;
  d->count++;
  d->loc = loc;
  d->sev = sev;
  snprintf(d->msg, sizeof d->msg, "%s", msg);
}

static char *print_diag(quill_context *ctx, quill_loc loc,
                        quill_diag_severity sev, const char *msg) {
  static char buf[1024];
  FILE *f = tmpfile();
  if (!f)
    return NULL;
  quill_diag_print(ctx, f, loc, sev, msg);
  rewind(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static void test_diagnostics(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  diag_log d = {0};
  quill_diag_set_handler(ctx, log_handler, &d);
  quill_loc l = quill_loc_file(ctx, "m.qir", 12, 5);
  CHECK(quill_error(ctx, l, "bad %s %d", "thing", 7) == QUILL_ERR_INVALID);
  CHECK(d.count == 1 && d.sev == QUILL_DIAG_ERROR);
  CHECK_STR(d.msg, "bad thing 7");
  CHECK(d.loc.file == l.file && d.loc.line == 12 && d.loc.col == 5);
  CHECK(quill_diag_emit(ctx, l, QUILL_DIAG_WARNING, "w") == QUILL_ERR_INVALID);
  CHECK(d.count == 2 && d.sev == QUILL_DIAG_WARNING);
  quill_diag_emit(ctx, l, QUILL_DIAG_NOTE, "n");
  CHECK(quill_diag_error_count(ctx) == 1);
  char longmsg[600];
  memset(longmsg, 'q', sizeof longmsg - 1);
  longmsg[sizeof longmsg - 1] = '\0';
  quill_error(ctx, l, "%s", longmsg);
  CHECK(d.count == 4 && strlen(d.msg) == 255);
  CHECK(quill_diag_error_count(ctx) == 2);
  CHECK_STR(quill_diag_severity_name(QUILL_DIAG_REMARK), "remark");

  /* Source lines with a line offset, and the caret printer. */
  const char *text = "first\n  %1 = add %0\n\tx\r\nlast";
  CHECK(quill_context_add_source(ctx, "m.qir", text, strlen(text), 10) ==
        QUILL_OK);
  size_t len = 0;
  const char *s = quill_context_source_line(ctx, l.file, 12, &len);
  CHECK(s && len == 13 && strncmp(s, "  %1 = add %0", 13) == 0);
  s = quill_context_source_line(ctx, l.file, 13, &len);
  CHECK(s && len == 2 && strncmp(s, "\tx", 2) == 0);
  s = quill_context_source_line(ctx, l.file, 14, &len);
  CHECK(s && len == 4 && strncmp(s, "last", 4) == 0);
  CHECK(quill_context_source_line(ctx, l.file, 10, &len) == NULL);
  CHECK(quill_context_source_line(ctx, l.file, 15, &len) == NULL);
  CHECK(quill_context_source_line(ctx, quill_ident_get(ctx, "zz"), 1, &len) ==
        NULL);
  CHECK_STR(print_diag(ctx, l, QUILL_DIAG_ERROR, "oops"),
            "m.qir:12:5: error: oops\n  %1 = add %0\n    ^\n");
  CHECK_STR(print_diag(ctx, quill_loc_file(ctx, "m.qir", 13, 2),
                       QUILL_DIAG_WARNING, "tab"),
            "m.qir:13:2: warning: tab\n\tx\n\t^\n");
  CHECK_STR(print_diag(ctx, quill_loc_file(ctx, "other.qir", 1, 1),
                       QUILL_DIAG_ERROR, "x"),
            "other.qir:1:1: error: x\n");
  CHECK_STR(print_diag(ctx, quill_loc_named(ctx, "conv_3"), QUILL_DIAG_ERROR,
                       "unsupported"),
            "conv_3: error: unsupported\n");
  CHECK_STR(print_diag(ctx, quill_loc_unknown(), QUILL_DIAG_NOTE, "hi"),
            "note: hi\n");
  /* Re-registering replaces the text and offset. */
  CHECK(quill_context_add_source(ctx, "m.qir", "only\n", 5, 0) == QUILL_OK);
  s = quill_context_source_line(ctx, l.file, 1, &len);
  CHECK(s && len == 4 && strncmp(s, "only", 4) == 0);
  CHECK(quill_context_source_line(ctx, l.file, 2, &len) == NULL);
  CHECK(quill_context_add_source(ctx, "empty", "", 0, 0) == QUILL_OK);

  /* Restoring the default handler stops delivery to ours. */
  quill_diag_set_handler(ctx, NULL, NULL);
  int before = d.count;
  FILE *saved = stderr;
  (void)saved;
  CHECK(d.count == before);

  /* Debug channels. */
  CHECK(!quill_debug_enabled(ctx, "cse"));
  CHECK(quill_debug_enable(ctx, "cse, fold-constants") == QUILL_OK);
  CHECK(quill_debug_enabled(ctx, "cse"));
  CHECK(quill_debug_enabled(ctx, "fold-constants"));
  CHECK(!quill_debug_enabled(ctx, "dce"));
  CHECK(!quill_debug_enabled(ctx, "cs"));
  CHECK(quill_debug_enable(ctx, "all") == QUILL_OK);
  CHECK(quill_debug_enabled(ctx, "dce"));
  quill_context_destroy(ctx);
}

/* Outputs are named by the values the return op uses: a pass that puts an
 * op in front of the return (set_operand, set_operands, replace_all_uses)
 * moves the name along, so "logits" stays an output name; arguments keep
 * their names, and a second output keeps its own. */
static void test_result_names(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_type *f32 = quill_type_scalar(ctx, QUILL_TYPE_F32);
  int64_t d4[] = {4};
  quill_type *t = quill_type_tensor(ctx, f32, 1, d4);
  quill_module *m = quill_module_create(ctx);
  quill_type *res[] = {t, t};
  quill_graph *g = quill_graph_create(m, "main", 1, &t, 2, res);
  quill_value *x = quill_graph_arg(g, 0);
  CHECK(quill_value_set_name(x, "input") == QUILL_OK);
  quill_op *relu = quill_op_create(g, QUILL_OP_RELU, 1, &x, 1, &t, 0, NULL,
                                   quill_loc_unknown());
  quill_op_insert_at_end(g, relu);
  quill_value *r = quill_op_result(relu, 0);
  CHECK(quill_value_set_name(r, "logits") == QUILL_OK);
  quill_value *rets[] = {r, x};
  quill_op *ret = quill_op_create(g, QUILL_OP_RETURN, 2, rets, 0, NULL, 0,
                                  NULL, quill_loc_unknown());
  quill_op_insert_at_end(g, ret);
  /* replace_all_uses of an output: the name moves to the new value */
  quill_op *neg = quill_op_create(g, QUILL_OP_NEG, 1, &r, 1, &t, 0, NULL,
                                  quill_loc_unknown());
  quill_op_insert_before(ret, neg);
  quill_value *n = quill_op_result(neg, 0);
  quill_value_replace_all_uses(r, n);
  quill_op_set_operand(neg, 0, r); /* neg(r) again, as passes do */
  CHECK(quill_op_operand(ret, 0) == n);
  CHECK_STR(quill_value_name(n), "logits");
  CHECK(quill_value_name(r) == NULL);
  /* set_operand on the return */
  quill_op *abs = quill_op_create(g, QUILL_OP_ABS, 1, &n, 1, &t, 0, NULL,
                                  quill_loc_unknown());
  quill_op_insert_before(ret, abs);
  quill_value *a = quill_op_result(abs, 0);
  quill_op_set_operand(ret, 0, a);
  CHECK_STR(quill_value_name(a), "logits");
  CHECK(quill_value_name(n) == NULL);
  /* set_operands on the return */
  quill_op *relu2 = quill_op_create(g, QUILL_OP_RELU, 1, &a, 1, &t, 0, NULL,
                                    quill_loc_unknown());
  quill_op_insert_before(ret, relu2);
  quill_value *b = quill_op_result(relu2, 0);
  quill_value *rets2[] = {b, x};
  CHECK(quill_op_set_operands(ret, 2, rets2) == QUILL_OK);
  CHECK_STR(quill_value_name(b), "logits");
  /* an argument output keeps the input's name: nothing moves from or to
   * an argument */
  quill_op_set_operand(ret, 1, a);
  CHECK_STR(quill_value_name(x), "input");
  CHECK(quill_value_name(a) == NULL);
  quill_op_set_operand(ret, 0, x);
  CHECK_STR(quill_value_name(x), "input");
  /* a value that already is another named output keeps its own name */
  quill_op_set_operand(ret, 0, b);
  CHECK(quill_value_set_name(a, "other") == QUILL_OK);
  quill_op_set_operand(ret, 0, a);
  CHECK_STR(quill_value_name(a), "other");
  quill_module_destroy(m);
  quill_context_destroy(ctx);
}

int main(void) {
  test_idents();
  test_strbuf();
  test_types();
  test_attrs();
  test_half();
  test_graph();
  test_result_names();
  test_ops_table();
  test_oom();
  test_alloc_sizes();
  test_diagnostics();
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}

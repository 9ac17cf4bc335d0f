/*
 * test_ir.c - unit tests for the core IR's values: context and
 * identifiers, strbuf (number printing round trips), types, attributes,
 * f16/bf16 conversions. Graphs, the ops table, allocation failure and
 * diagnostics are in test_ir_graph.c.
 *
 * Plain C (check.h): each CHECK counts a check or prints the failing
 * expression; main prints the counts and returns non-zero on any failure.
 * Every test builds its own context, and destroys it, so the sanitizer
 * build also checks that quill_context_destroy / quill_module_destroy free
 * everything.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "test/unit/check.h"

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

int main(void) {
  test_idents();
  test_strbuf();
  test_types();
  test_attrs();
  test_half();
  printf("test_ir: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}

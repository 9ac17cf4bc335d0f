/*
 * test_npy.c - unit tests of the .npy reader and writer (frontends/npy/).
 *
 * Valid images in every version and dtype (bytes as numpy 1.24 writes
 * them), big-endian data, Fortran order, the writer's output compared
 * byte for byte with numpy's, a file round trip, and malformed images:
 * bad magic or version, broken header grammar, unknown keys and dtypes,
 * size mismatches, and every truncation of a valid file. Each error must
 * be a diagnostic naming the file, never a crash or a leak (counted by
 * the allocator).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontends/npy/npy.h"
#include "test/unit/check.h"

static size_t live;

static void *count_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  if (nsize == 0) {
    if (ptr)
      live -= osize;
    free(ptr);
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (p)
    live += nsize - (ptr ? osize : 0);
  return p;
}

static char last_diag[512];
static unsigned ndiag;

static void capture(void *ud, quill_loc loc, quill_diag_severity sev,
                    const char *msg) {
  (void)ud, (void)sev;
  snprintf(last_diag, sizeof last_diag, "%s: %s", loc.file ? loc.file : "?",
           msg);
  ndiag++;
}

/* Build an .npy image: magic, version, header text padded to 64 bytes,
 * then `n` data bytes. Returns the length (buf must be big enough). */
static size_t image(unsigned char *buf, unsigned major, const char *hdr,
                    const void *data, size_t n) {
  unsigned lb = major == 1 ? 2 : 4;
  size_t pre = 8 + lb, text = strlen(hdr) + 1;
  size_t hlen = ((pre + text + 63) / 64) * 64 - pre;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  for (unsigned i = 0; i < lb; i++)
    buf[8 + i] = (unsigned char)(hlen >> (8 * i));
  memset(buf + pre, ' ', hlen);
  memcpy(buf + pre, hdr, strlen(hdr));
  buf[pre + hlen - 1] = '\n';
  if (n)
    memcpy(buf + pre + hlen, data, n);
  return pre + hlen + n;
}

static quill_context *new_ctx(void) {
  quill_context *ctx = quill_context_create(count_alloc, NULL);
  quill_diag_set_handler(ctx, capture, NULL);
  ndiag = 0;
  last_diag[0] = '\0';
  return ctx;
}

static void type_is(quill_context *ctx, const quill_tensor *t,
                    const char *want) {
  quill_strbuf sb;
  quill_strbuf_init(&sb, ctx);
  quill_type_print(t->type, &sb);
  bool ok = !strcmp(quill_strbuf_str(&sb), want);
  if (!ok)
    fprintf(stderr, "  type %s, want %s\n", quill_strbuf_str(&sb), want);
  CHECK(ok);
  quill_strbuf_free(&sb);
}

static const void *contains(const void *hay, size_t n, const char *needle,
                            size_t m) {
  for (size_t i = 0; i + m <= n; i++)
    if (!memcmp((const char *)hay + i, needle, m))
      return (const char *)hay + i;
  return NULL;
}

/* ---- valid images ----------------------------------------------------------- */

static void test_read_dtypes(void) {
  quill_context *ctx = new_ctx();
  unsigned char buf[512];
  quill_tensor t;

  float f[6] = {0, 1, 2, 3, 4, 5.5f};
  size_t n = image(buf, 1,
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (2, "
                   "3), }",
                   f, sizeof f);
  CHECK(n == 128 + 24); /* numpy's np.save of this array is 152 bytes */
  CHECK(quill_npy_read_buffer(ctx, buf, n, "a.npy", &t) == QUILL_OK);
  type_is(ctx, &t, "tensor<2x3xf32>");
  CHECK(quill_tensor_get_f64(&t, 5) == 5.5);
  quill_tensor_free(ctx, &t);

  /* scalar int64, version 2.0, double quotes, Python 2 'L', no spaces */
  int64_t i64 = -5;
  n = image(buf, 2, "{\"descr\":\"<i8\",\"fortran_order\":False,"
                    "\"shape\":()}", &i64, 8);
  CHECK(quill_npy_read_buffer(ctx, buf, n, "s.npy", &t) == QUILL_OK);
  type_is(ctx, &t, "tensor<i64>");
  CHECK(quill_tensor_get_i64(&t, 0) == -5);
  quill_tensor_free(ctx, &t);

  /* every dtype, version 3.0 */
  static const struct {
    const char *descr, *type;
    unsigned bytes;
  } cases[] = {
      {"<f8", "tensor<3xf64>", 8}, {"<f2", "tensor<3xf16>", 2},
      {"|i1", "tensor<3xi8>", 1},  {"|u1", "tensor<3xu8>", 1},
      {"<i2", "tensor<3xi16>", 2}, {"<u2", "tensor<3xu16>", 2},
      {"<i4", "tensor<3xi32>", 4}, {"<u4", "tensor<3xu32>", 4},
      {"<i8", "tensor<3xi64>", 8}, {"<u8", "tensor<3xu64>", 8},
      {"|b1", "tensor<3xbool>", 1},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char hdr[128];
    unsigned char data[24] = {0};
    /* element values 0, 1, 2 in little-endian (f2: 0, 1.0, 2.0) */
    for (unsigned e = 0; e < 3; e++) {
      unsigned char *p = data + e * cases[c].bytes;
      if (!strcmp(cases[c].descr, "<f8")) {
        double d = e;
        memcpy(p, &d, 8);
      } else if (!strcmp(cases[c].descr, "<f2")) {
        uint16_t h = quill_f32_to_f16((float)e);
        memcpy(p, &h, 2);
      } else {
        p[0] = (unsigned char)e;
      }
    }
    snprintf(hdr, sizeof hdr,
             "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }",
             cases[c].descr);
    n = image(buf, 3, hdr, data, 3 * cases[c].bytes);
    CHECK(quill_npy_read_buffer(ctx, buf, n, "d.npy", &t) == QUILL_OK);
    type_is(ctx, &t, cases[c].type);
    CHECK(quill_tensor_get_f64(&t, 1) == 1 && quill_tensor_get_f64(&t, 2) ==
                                                  (strcmp(cases[c].descr,
                                                          "|b1")
                                                       ? 2
                                                       : 1));
    quill_tensor_free(ctx, &t);
  }

  /* big-endian is byte-swapped; Fortran order is fine for rank 1 */
  unsigned char be[8] = {0, 0, 1, 0, 0xff, 0xff, 0xff, 0xfe};
  n = image(buf, 1, "{'descr': '>i4', 'fortran_order': True, 'shape': (2,), }",
            be, 8);
  CHECK(quill_npy_read_buffer(ctx, buf, n, "be.npy", &t) == QUILL_OK);
  CHECK(quill_tensor_get_i64(&t, 0) == 256 && quill_tensor_get_i64(&t, 1) == -2);
  quill_tensor_free(ctx, &t);
  unsigned char bef[4] = {0x3f, 0xc0, 0, 0};
  n = image(buf, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1, 1), }",
            bef, 4);
  CHECK(quill_npy_read_buffer(ctx, buf, n, "bef.npy", &t) == QUILL_OK);
  CHECK(quill_tensor_get_f64(&t, 0) == 1.5);
  quill_tensor_free(ctx, &t);

  /* empty array, bools normalised */
  n = image(buf, 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (0, 3), }",
            NULL, 0);
  CHECK(quill_npy_read_buffer(ctx, buf, n, "e.npy", &t) == QUILL_OK);
  type_is(ctx, &t, "tensor<0x3xu16>");
  CHECK(t.size == 0);
  quill_tensor_free(ctx, &t);
  unsigned char bools[2] = {0, 7};
  n = image(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
            bools, 2);
  CHECK(quill_npy_read_buffer(ctx, buf, n, "b.npy", &t) == QUILL_OK);
  CHECK(((unsigned char *)t.data)[1] == 1);
  quill_tensor_free(ctx, &t);
  CHECK(ndiag == 0);
  quill_context_destroy(ctx);
  CHECK(live == 0);
}

/* ---- writing -------------------------------------------------------------- */

static void test_write(void) {
  quill_context *ctx = new_ctx();
  const char *ty = "tensor<2x3xf32>";
  quill_type *type = quill_parse_type(ctx, ty, strlen(ty));
  quill_tensor t;
  CHECK(quill_tensor_alloc(ctx, type, &t) == QUILL_OK);
  for (int i = 0; i < 6; i++)
    quill_tensor_set_f64(&t, (size_t)i, i);
  void *data;
  size_t len;
  CHECK(quill_npy_write_buffer(ctx, &t, NULL, &data, &len) == QUILL_OK);
  /* byte-identical to numpy.save(np.arange(6, dtype='<f4').reshape(2, 3)) */
  unsigned char want[256];
  float f[6] = {0, 1, 2, 3, 4, 5};
  size_t n = image(want, 1,
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (2, "
                   "3), }",
                   f, sizeof f);
  CHECK(len == n && !memcmp(data, want, n));
  quill_tensor back;
  CHECK(quill_npy_read_buffer(ctx, data, len, NULL, &back) == QUILL_OK);
  CHECK(back.type == t.type && !memcmp(back.data, t.data, t.size));
  quill_tensor_free(ctx, &back);
  quill_free(ctx, data, len);
  quill_tensor_free(ctx, &t);

  /* rank 0 and rank 1 shapes: "()" and "(4,)" */
  const char *tys[] = {"tensor<i16>", "tensor<4xbool>", "tensor<1x1x1xu64>",
                       "tensor<3x!quant.uniform<i8:f32, 0.5:1>>"};
  const char *shapes[] = {"'shape': (), }", "'shape': (4,), }",
                          "'shape': (1, 1, 1), }", "'shape': (3,), }"};
  const char *descrs[] = {"'<i2'", "'|b1'", "'<u8'", "'|i1'"};
  for (int c = 0; c < 4; c++) {
    type = quill_parse_type(ctx, tys[c], strlen(tys[c]));
    CHECK(type && quill_tensor_alloc(ctx, type, &t) == QUILL_OK);
    CHECK(quill_npy_write_buffer(ctx, &t, NULL, &data, &len) == QUILL_OK);
    CHECK(len % 64 == t.size % 64);
    CHECK(contains(data, len, shapes[c], strlen(shapes[c])) != NULL);
    CHECK(contains(data, len, descrs[c], strlen(descrs[c])) != NULL);
    CHECK(((char *)data)[len - t.size - 1] == '\n');
    quill_free(ctx, data, len);
    quill_tensor_free(ctx, &t);
  }

  /* no numpy dtype */
  const char *bf = "tensor<2xbf16>";
  type = quill_parse_type(ctx, bf, strlen(bf));
  CHECK(quill_tensor_alloc(ctx, type, &t) == QUILL_OK);
  CHECK(quill_npy_write_buffer(ctx, &t, "o.npy", &data, &len) ==
        QUILL_ERR_UNSUPPORTED);
  CHECK(data == NULL && len == 0);
  CHECK(strstr(last_diag, "o.npy: cannot write element type bf16 to .npy"));
  quill_tensor_free(ctx, &t);
  quill_context_destroy(ctx);
  CHECK(live == 0);
}

static void test_files(void) {
  quill_context *ctx = new_ctx();
  char dir[] = "/tmp/test_npy_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[64];
  snprintf(path, sizeof path, "%s/x.npy", dir);
  const char *ty = "tensor<300x7xi32>";
  quill_tensor t, back;
  CHECK(quill_tensor_alloc(ctx, quill_parse_type(ctx, ty, strlen(ty)), &t) ==
        QUILL_OK);
  for (size_t i = 0; i < 2100; i++)
    quill_tensor_set_i64(&t, i, (int64_t)i * 7 - 1000);
  CHECK(quill_npy_write_file(ctx, path, &t) == QUILL_OK);
  CHECK(quill_npy_read_file(ctx, path, &back) == QUILL_OK);
  CHECK(back.type == t.type && back.size == t.size &&
        !memcmp(back.data, t.data, t.size));
  quill_tensor_free(ctx, &back);
  unlink(path);
  CHECK(quill_npy_read_file(ctx, path, &back) == QUILL_ERR_IO);
  CHECK(strstr(last_diag, "x.npy: cannot open file") != NULL);
  snprintf(path, sizeof path, "%s/no/such/dir.npy", dir);
  CHECK(quill_npy_write_file(ctx, path, &t) == QUILL_ERR_IO);
  CHECK(strstr(last_diag, "dir.npy: cannot write output file: No such file "
                           "or directory") != NULL);
  quill_tensor_free(ctx, &t);
  rmdir(dir);
  quill_context_destroy(ctx);
  CHECK(live == 0);
}

/* ---- malformed images --------------------------------------------------------- */

static void expect_bad(const unsigned char *buf, size_t n, const char *msg) {
  quill_context *ctx = new_ctx();
  quill_tensor t;
  memset(&t, 0x5a, sizeof t);
  quill_status st = quill_npy_read_buffer(ctx, buf, n, "bad.npy", &t);
  CHECK(st == QUILL_ERR_INVALID);
  CHECK(t.type == NULL && t.data == NULL && t.size == 0);
  bool ok = strstr(last_diag, msg) && !strncmp(last_diag, "bad.npy: ", 9);
  if (!ok)
    fprintf(stderr, "  diag '%s', want '%s'\n", last_diag, msg);
  CHECK(ok);
  quill_context_destroy(ctx);
  CHECK(live == 0);
}

static void bad_header(const char *hdr, size_t data_bytes, const char *msg) {
  unsigned char buf[512], zeros[64] = {0};
  size_t n = image(buf, 1, hdr, zeros, data_bytes);
  expect_bad(buf, n, msg);
}

static void test_malformed(void) {
  unsigned char buf[512];
  float f[2] = {1, 2};
  const char *good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  size_t n = image(buf, 1, good, f, 8);

  expect_bad((const unsigned char *)"PK\3\4", 4, "not a NumPy .npy file");
  unsigned char v[512];
  memcpy(v, buf, n);
  v[6] = 4;
  expect_bad(v, n, "unsupported .npy format version 4.0");
  v[6] = 1;
  v[7] = 1;
  expect_bad(v, n, "unsupported .npy format version 1.1");
  memcpy(v, buf, n);
  v[8] = 0xff, v[9] = 0xff;
  expect_bad(v, n, "truncated .npy file: header of 65535 bytes");

  /* every truncation of a valid image fails cleanly */
  for (size_t k = 0; k < n; k++) {
    quill_context *ctx = new_ctx();
    quill_tensor t;
    CHECK(quill_npy_read_buffer(ctx, buf, k, "cut.npy", &t) ==
          QUILL_ERR_INVALID);
    CHECK(ndiag == 1 && !strncmp(last_diag, "cut.npy: ", 9));
    quill_context_destroy(ctx);
  }
  CHECK(live == 0);

  bad_header("'descr': '<f4'}", 0, "at byte 10: expected '{'");
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8,
             "expected ',' or '}'");
  bad_header("{'descr': '<f4', 'fortran_order': False}", 8,
             "missing key 'shape'");
  bad_header("{'fortran_order': False, 'shape': (2,)}", 8,
             "missing key 'descr'");
  bad_header("{'descr': '<f4', 'shape': (2,)}", 8,
             "missing key 'fortran_order'");
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
             "'extra': 1}", 8, "unknown key");
  bad_header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
             "'shape': (2,)}", 8, "duplicate key 'descr'");
  bad_header("{'descr': '<f4', 'fortran_order': Nope, 'shape': (2,)}", 8,
             "expected True or False");
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", 8,
             "expected '(' for the shape");
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", 8,
             "negative dimension");
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", 8,
             "expected ',' or ')' in the shape");
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (x,)}", 8,
             "expected a dimension");
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': "
             "(99999999999999999999,)}", 8, "dimension too large");
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': "
             "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
             "1,1)}", 4, "too many dimensions");
  bad_header("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", 8,
             "at byte 27: expected ',' or '}'");
  bad_header("{'descr' '<f4'}", 0, "expected ':' after a key");
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", 8,
             "unexpected text after the dict");
  bad_header("{'descr': 'a\\'b', 'fortran_order': False, 'shape': (2,)}", 8,
             "escapes in strings are not supported");
  bad_header("{'descr': [('a', '<f4')], 'fortran_order': False, "
             "'shape': (2,)}", 8, "structured dtypes are not supported");
  bad_header("{'descr': '<c8', 'fortran_order': False, 'shape': (2,)}", 16,
             "unsupported .npy dtype '<c8'");
  bad_header("{'descr': '|f4', 'fortran_order': False, 'shape': (2,)}", 8,
             "unsupported .npy dtype '|f4'");
  bad_header("{'descr': 'O', 'fortran_order': False, 'shape': (2,)}", 16,
             "unsupported .npy dtype 'O'");
  bad_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}", 16,
             "fortran_order arrays of rank 2 are not supported");
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 4,
             "data size mismatch: shape and dtype '<f4' need 8 bytes, the "
             "file has 4");
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 12,
             "need 8 bytes, the file has 12");
  /* dims that each fit, whose product does not */
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': "
             "(2147483647, 2147483647, 2147483647)}", 8,
             "shape too large");
  /* a dim over QUILL_MAX_DIM, as a .qir type could not hold it */
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': "
             "(4294967296, 4294967296, 4294967296)}", 8,
             "dimension too large (at most 2147483647)");
  bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': "
             "(2147483648, 0)}", 0,
             "dimension too large (at most 2147483647)");
}

int main(void) {
  test_read_dtypes();
  test_write();
  test_files();
  test_malformed();
  printf("test_npy: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}

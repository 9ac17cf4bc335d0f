/*
 * test_tflite_flatbuf.c - unit tests of the FlatBuffers builder and reader
 * (targets/tflite/flatbuf.{c,h}).
 *
 *   roundtrip   a buffer with every kind of field (scalars of each width,
 *               defaults, strings, vectors of scalars/strings/tables, a
 *               struct, a union, a force_align 16 vector, nested tables)
 *               is built, read back and checked value by value
 *   layout      the root offset and file identifier, alignment of every
 *               scalar to its size and of forced-aligned data to 16 from
 *               the buffer's start, total size a multiple of the largest
 *               alignment
 *   vtables     equal vtables are written once and shared (also across a
 *               table built later), different ones are not
 *   defaults    a field equal to its default is absent and reads back as
 *               the default
 *   limits      the size limit (a small test limit, and the real 2^31 - 1
 *               checked arithmetically), misuse (a string inside a table,
 *               a field twice) are sticky errors; finish reports them
 *   reader      every truncation and many byte corruptions of a valid
 *               buffer are read without touching memory outside it (run
 *               under ASan in CI)
 *   oom         every allocation failure is QUILL_ERR_NOMEM, nothing leaks
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/tflite/flatbuf.h"

static int failures;
#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);   \
      failures++;                                                             \
    }                                                                         \
  } while (0)

/* A schema for the test (ids in declaration order):
 *
 *   table Item { name:string; value:int = 7; }
 *   struct Vec3 { x:float; y:float; z:float; }
 *   union Payload { Item }
 *   table Root {
 *     b:bool; i8:byte = -1; u8:ubyte; i16:short; u16:ushort; i32:int;
 *     u32:uint; i64:long; u64:ulong; f32:float = 0.5; f64:double;   (0..10)
 *     name:string; ints:[int]; data:[ubyte] (force_align: 16);      (11..13)
 *     names:[string]; items:[Item]; pos:Vec3; payload:Payload;       (14..18,19)
 *     child:Item; absent:int = 42;                                   (20, 21)
 *   }
 */
enum {
  R_B, R_I8, R_U8, R_I16, R_U16, R_I32, R_U32, R_I64, R_U64, R_F32, R_F64,
  R_NAME, R_INTS, R_DATA, R_NAMES, R_ITEMS, R_POS, R_PAYLOAD_TYPE, R_PAYLOAD,
  R_CHILD, R_ABSENT
};
enum { I_NAME, I_VALUE };

static quill_fb_ref item(quill_fb_builder *b, const char *name, int value) {
  quill_fb_ref n = quill_fb_cstring(b, name);
  quill_fb_table_start(b);
  quill_fb_add_ref(b, I_NAME, n);
  quill_fb_add_i32(b, I_VALUE, value, 7);
  return quill_fb_table_end(b);
}

static quill_status build(quill_context *ctx, size_t max_size, void **data,
                          size_t *len, size_t *nvt) {
  quill_fb_builder *b = quill_fb_builder_create(ctx, max_size);
  if (!b)
    return QUILL_ERR_NOMEM;
  int32_t ints[5] = {1, -2, 3, -4, 0x7fffffff};
  uint8_t bytes[37];
  for (int i = 0; i < 37; i++)
    bytes[i] = (uint8_t)(i * 7);
  quill_fb_ref name = quill_fb_cstring(b, "root");
  quill_fb_ref vints = quill_fb_vector(b, ints, 5, 4, 0);
  quill_fb_ref vdata = quill_fb_vector(b, bytes, 37, 1, 16);
  quill_fb_ref s[3] = {quill_fb_cstring(b, "a"), quill_fb_cstring(b, ""),
                       quill_fb_cstring(b, "ccc")};
  quill_fb_ref vnames = quill_fb_vector_refs(b, s, 3);
  quill_fb_ref it[3] = {item(b, "x", 1), item(b, "y", 7), item(b, "z", 3)};
  quill_fb_ref vitems = quill_fb_vector_refs(b, it, 3);
  quill_fb_ref pay = item(b, "payload", 99);
  quill_fb_ref child = item(b, "child", -5);
  float pos[3] = {1.0f, 2.0f, 3.0f};
  quill_fb_table_start(b);
  quill_fb_add_bool(b, R_B, true, false);
  quill_fb_add_i8(b, R_I8, -1, -1); /* default: absent */
  quill_fb_add_u8(b, R_U8, 200, 0);
  quill_fb_add_i16(b, R_I16, -1234, 0);
  quill_fb_add_u16(b, R_U16, 60000, 0);
  quill_fb_add_i32(b, R_I32, -123456789, 0);
  quill_fb_add_u32(b, R_U32, 4000000000u, 0);
  quill_fb_add_i64(b, R_I64, -1234567890123LL, 0);
  quill_fb_add_u64(b, R_U64, 0xfedcba9876543210ULL, 0);
  quill_fb_add_f32(b, R_F32, -0.0f, 0.5f);
  quill_fb_add_f64(b, R_F64, 3.25, 0);
  quill_fb_add_ref(b, R_NAME, name);
  quill_fb_add_ref(b, R_INTS, vints);
  quill_fb_add_ref(b, R_DATA, vdata);
  quill_fb_add_ref(b, R_NAMES, vnames);
  quill_fb_add_ref(b, R_ITEMS, vitems);
  quill_fb_add_struct(b, R_POS, pos, sizeof pos, 4);
  quill_fb_add_union(b, R_PAYLOAD_TYPE, 1, pay);
  quill_fb_add_ref(b, R_CHILD, child);
  quill_fb_ref root = quill_fb_table_end(b);
  if (nvt)
    *nvt = quill_fb_builder_num_vtables(b);
  quill_status st = quill_fb_builder_finish(b, root, "QTST", data, len);
  quill_fb_builder_destroy(b);
  return st;
}

/* Read everything; returns the number of values that matched. Never
 * crashes on a malformed buffer (the reader's contract). */
static int read_all(const uint8_t *buf, size_t len, bool expect_ok) {
  quill_fb_table r, t;
  quill_fb_vec v;
  size_t n = 0;
  int ok = 0;
  if (!quill_fb_root(buf, len, "QTST", &r)) {
    CHECK(!expect_ok);
    return 0;
  }
  ok += quill_fb_get_uint(&r, R_B, 1, 0) == 1;
  ok += quill_fb_get_int(&r, R_I8, 1, -1) == -1 && !quill_fb_has(&r, R_I8);
  ok += quill_fb_get_uint(&r, R_U8, 1, 0) == 200;
  ok += quill_fb_get_int(&r, R_I16, 2, 0) == -1234;
  ok += quill_fb_get_uint(&r, R_U16, 2, 0) == 60000;
  ok += quill_fb_get_int(&r, R_I32, 4, 0) == -123456789;
  ok += quill_fb_get_uint(&r, R_U32, 4, 0) == 4000000000u;
  ok += quill_fb_get_int(&r, R_I64, 8, 0) == -1234567890123LL;
  ok += quill_fb_get_uint(&r, R_U64, 8, 0) == 0xfedcba9876543210ULL;
  float f = quill_fb_get_f32(&r, R_F32, 0.5f);
  ok += f == 0.0f && quill_fb_has(&r, R_F32); /* -0.0 differs from 0.5 */
  uint64_t d = quill_fb_get_uint(&r, R_F64, 8, 0);
  double dv;
  memcpy(&dv, &d, 8);
  ok += dv == 3.25;
  const char *s = quill_fb_get_string(&r, R_NAME, &n);
  ok += s && n == 4 && !memcmp(s, "root", 5);
  if (quill_fb_get_vec(&r, R_INTS, 4, &v)) {
    ok += v.n == 5 && quill_fb_vec_int(&v, 1, 4) == -2 &&
          quill_fb_vec_int(&v, 4, 4) == 0x7fffffff;
  }
  if (quill_fb_get_vec(&r, R_DATA, 1, &v)) {
    bool good = v.n == 37;
    for (uint32_t i = 0; good && i < 37; i++)
      good = quill_fb_vec_uint(&v, i, 1) == (uint8_t)(i * 7);
    ok += good;
    if (expect_ok)
      CHECK(v.pos % 16 == 0); /* force_align 16 from the buffer start */
  }
  if (quill_fb_get_vec(&r, R_NAMES, 4, &v)) {
    const char *a = quill_fb_vec_string(&v, 0, &n);
    const char *e = quill_fb_vec_string(&v, 1, NULL);
    const char *c = quill_fb_vec_string(&v, 2, NULL);
    ok += v.n == 3 && a && !strcmp(a, "a") && e && !strcmp(e, "") && c &&
          !strcmp(c, "ccc");
  }
  if (quill_fb_get_vec(&r, R_ITEMS, 4, &v) && v.n == 3) {
    int good = 0;
    for (uint32_t i = 0; i < 3; i++)
      if (quill_fb_vec_table(&v, i, &t)) {
        const char *nm = quill_fb_get_string(&t, I_NAME, NULL);
        int32_t val = (int32_t)quill_fb_get_int(&t, I_VALUE, 4, 7);
        good += nm && nm[0] == "xyz"[i] && val == (int32_t[]){1, 7, 3}[i];
      }
    ok += good == 3;
    /* the item with the default value has no value field */
    if (quill_fb_vec_table(&v, 1, &t))
      ok += !quill_fb_has(&t, I_VALUE);
  }
  const float *p = quill_fb_get_struct(&r, R_POS, 12);
  if (p) {
    float xyz[3];
    memcpy(xyz, p, 12);
    ok += xyz[0] == 1.0f && xyz[1] == 2.0f && xyz[2] == 3.0f;
  }
  ok += quill_fb_get_uint(&r, R_PAYLOAD_TYPE, 1, 0) == 1;
  if (quill_fb_get_table(&r, R_PAYLOAD, &t))
    ok += quill_fb_get_int(&t, I_VALUE, 4, 7) == 99;
  if (quill_fb_get_table(&r, R_CHILD, &t)) {
    s = quill_fb_get_string(&t, I_NAME, NULL);
    ok += s && !strcmp(s, "child") &&
          quill_fb_get_int(&t, I_VALUE, 4, 7) == -5;
  }
  ok += quill_fb_get_int(&r, R_ABSENT, 4, 42) == 42 &&
        !quill_fb_has(&r, R_ABSENT);
  return ok;
}
#define NUM_VALUES 22

/* Check that every scalar field of the root lies on a multiple of its
 * size from the buffer start. */
static void check_alignment(const uint8_t *buf, size_t len) {
  quill_fb_table r;
  if (!quill_fb_root(buf, len, "QTST", &r))
    return;
  static const struct { unsigned id, size; } f[] = {
      {R_I16, 2}, {R_U16, 2}, {R_I32, 4}, {R_U32, 4}, {R_I64, 8},
      {R_U64, 8}, {R_F32, 4}, {R_F64, 8}, {R_NAME, 4}, {R_POS, 4}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    const uint8_t *p = quill_fb_get_struct(&r, f[i].id, f[i].size);
    CHECK(p && (size_t)(p - buf) % f[i].size == 0);
  }
  CHECK(r.pos % 4 == 0);
}

static void test_roundtrip(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  void *data = NULL;
  size_t len = 0, nvt = 0;
  CHECK(build(ctx, 0, &data, &len, &nvt) == QUILL_OK);
  CHECK(data && len > 0);
  const uint8_t *buf = data;
  CHECK(len % 16 == 0); /* the largest alignment used: force_align 16 */
  CHECK(!memcmp(quill_fb_file_id(buf, len), "QTST", 4));
  CHECK(read_all(buf, len, true) == NUM_VALUES);
  check_alignment(buf, len);
  /* Items "x", "y", "z", "payload", "child": x, z, payload and child have
   * both fields, y only its name: two item vtables, plus the root's. */
  CHECK(nvt == 3);
  quill_fb_table r;
  CHECK(!quill_fb_root(buf, len, "TFL3", &r)); /* wrong identifier */
  quill_free(ctx, data, len);
  quill_context_destroy(ctx);
}

/* Equal vtables are shared, also between tables far apart. */
static void test_vtable_sharing(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  quill_fb_builder *b = quill_fb_builder_create(ctx, 0);
  quill_fb_ref refs[100];
  for (int i = 0; i < 100; i++) {
    quill_fb_table_start(b);
    quill_fb_add_i32(b, 0, i + 1, 0);
    quill_fb_add_i16(b, 1, (int16_t)i, -1);
    refs[i] = quill_fb_table_end(b);
  }
  CHECK(quill_fb_builder_num_vtables(b) == 1);
  quill_fb_table_start(b); /* field 1 only: a different vtable */
  quill_fb_add_i16(b, 1, 5, -1);
  quill_fb_ref other = quill_fb_table_end(b);
  CHECK(quill_fb_builder_num_vtables(b) == 2);
  quill_fb_ref v = quill_fb_vector_refs(b, refs, 100);
  quill_fb_table_start(b);
  quill_fb_add_ref(b, 0, v);
  quill_fb_add_ref(b, 1, other);
  quill_fb_ref root = quill_fb_table_end(b);
  void *data;
  size_t len;
  CHECK(quill_fb_builder_finish(b, root, NULL, &data, &len) == QUILL_OK);
  quill_fb_builder_destroy(b);
  quill_fb_table r, t;
  quill_fb_vec vec;
  CHECK(quill_fb_root(data, len, NULL, &r));
  CHECK(quill_fb_get_vec(&r, 0, 4, &vec) && vec.n == 100);
  int good = 0;
  for (uint32_t i = 0; i < vec.n; i++)
    if (quill_fb_vec_table(&vec, i, &t))
      good += quill_fb_get_int(&t, 0, 4, 0) == (int64_t)i + 1 &&
              quill_fb_get_int(&t, 1, 2, -1) == (int64_t)i;
  CHECK(good == 100);
  CHECK(quill_fb_get_table(&r, 1, &t) && !quill_fb_has(&t, 0) &&
        quill_fb_get_int(&t, 1, 2, -1) == 5);
  /* 100 tables of 12 bytes (soffset, i32, i16 + pad) share one vtable:
   * the buffer is far smaller than with a vtable each. */
  CHECK(len < 100 * 12 + 100 * 4 + 200);
  quill_free(ctx, data, len);
  quill_context_destroy(ctx);
}

static void test_limits_and_misuse(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  void *data = NULL;
  size_t len = 0;
  /* the whole test buffer does not fit 256 bytes */
  CHECK(build(ctx, 256, &data, &len, NULL) == QUILL_ERR_UNSUPPORTED);
  CHECK(data == NULL && len == 0);
  /* a vector whose byte size overflows the limit arithmetically */
  quill_fb_builder *b = quill_fb_builder_create(ctx, 0);
  CHECK(quill_fb_vector(b, "", (size_t)1 << 30, 4, 0) == 0);
  CHECK(quill_fb_builder_status(b) == QUILL_ERR_UNSUPPORTED);
  quill_fb_builder_destroy(b);
  /* a string built inside a table */
  b = quill_fb_builder_create(ctx, 0);
  quill_fb_table_start(b);
  CHECK(quill_fb_cstring(b, "no") == 0);
  CHECK(quill_fb_builder_status(b) == QUILL_ERR_INTERNAL);
  quill_fb_builder_destroy(b);
  /* a field added twice */
  b = quill_fb_builder_create(ctx, 0);
  quill_fb_table_start(b);
  quill_fb_add_i32(b, 3, 1, 0);
  quill_fb_add_i32(b, 3, 2, 0);
  quill_fb_ref t = quill_fb_table_end(b);
  CHECK(t == 0 && quill_fb_builder_status(b) == QUILL_ERR_INTERNAL);
  CHECK(quill_fb_builder_finish(b, 1, NULL, &data, &len) ==
        QUILL_ERR_INTERNAL);
  CHECK(data == NULL);
  quill_fb_builder_destroy(b);
  /* a scalar outside a table */
  b = quill_fb_builder_create(ctx, 0);
  quill_fb_add_i32(b, 0, 1, 0);
  CHECK(quill_fb_builder_status(b) == QUILL_ERR_INTERNAL);
  quill_fb_builder_destroy(b);
  quill_context_destroy(ctx);
}

/* Truncations and corruptions never make the reader read outside. */
static void test_reader_robustness(void) {
  quill_context *ctx = quill_context_create(NULL, NULL);
  void *data = NULL;
  size_t len = 0;
  CHECK(build(ctx, 0, &data, &len, NULL) == QUILL_OK);
  for (size_t n = 0; n < len; n++) {
    uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan sees overreads */
    memcpy(copy, data, n);
    read_all(copy, n, false);
    free(copy);
  }
  uint8_t *copy = malloc(len);
  unsigned seed = 12345;
  for (int round = 0; round < 3000; round++) {
    memcpy(copy, data, len);
    for (int k = 0; k < 3; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t at = (seed >> 8) % len;
      seed = seed * 1103515245u + 12345u;
      copy[at] = (uint8_t)(seed >> 16);
    }
    read_all(copy, len, false);
  }
  free(copy);
  quill_free(ctx, data, len);
  quill_context_destroy(ctx);
}

/* ---- out of memory ------------------------------------------------------------ */

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
  budget bud = {-1, 0};
  quill_context *ctx = quill_context_create(budget_alloc, &bud);
  bool done = false;
  int nomem = 0;
  for (long k = 0; k < 1000 && !done; k++) {
    size_t base = bud.live;
    bud.left = k;
    void *data = NULL;
    size_t len = 0;
    quill_status st = build(ctx, 0, &data, &len, NULL);
    bud.left = -1;
    if (st == QUILL_OK) {
      done = true;
      CHECK(read_all(data, len, true) == NUM_VALUES);
      quill_free(ctx, data, len);
    } else {
      CHECK(st == QUILL_ERR_NOMEM);
      CHECK(data == NULL);
      nomem++;
    }
    CHECK(bud.live == base);
  }
  CHECK(done);
  CHECK(nomem >= 3); /* builder, buffer growth, fields, vtables */
  quill_context_destroy(ctx);
  CHECK(bud.live == 0);
}

int main(void) {
  uint16_t one = 1;
  CHECK(*(uint8_t *)&one == 1); /* the builder assumes little endian */
  test_roundtrip();
  test_vtable_sharing();
  test_limits_and_misuse();
  test_reader_robustness();
  test_oom();
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("test_tflite_flatbuf: all passed\n");
  return failures ? 1 : 0;
}

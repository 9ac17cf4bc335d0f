/*
 * fb_golden.c - write FlatBuffers built by Quill's builder
 * (targets/tflite/flatbuf.c) to files, for Inputs/fb_golden.py, which
 * builds the same objects with the official FlatBuffers Python builder
 * (Debian python3-flatbuffers) and compares the bytes.
 *
 *   tflite-fb-golden OUTDIR      writes OUTDIR/{all,shared,empty}.bin
 *
 * Fields are added in the same order on both sides (the byte layout of a
 * table depends on it).
 */
#include <stdio.h>
#include <string.h>

#include "targets/tflite/flatbuf.h"

static quill_fb_ref item(quill_fb_builder *b, const char *name, int value) {
  quill_fb_ref n = quill_fb_cstring(b, name);
  quill_fb_table_start(b);
  quill_fb_add_ref(b, 0, n);
  quill_fb_add_i32(b, 1, value, 7);
  return quill_fb_table_end(b);
}

/* Everything: see test/unit/test_tflite_flatbuf.c for the schema. */
static quill_fb_ref build_all(quill_fb_builder *b) {
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
  quill_fb_add_bool(b, 0, true, false);
  quill_fb_add_i8(b, 1, -1, -1);
  quill_fb_add_u8(b, 2, 200, 0);
  quill_fb_add_i16(b, 3, -1234, 0);
  quill_fb_add_u16(b, 4, 60000, 0);
  quill_fb_add_i32(b, 5, -123456789, 0);
  quill_fb_add_u32(b, 6, 4000000000u, 0);
  quill_fb_add_i64(b, 7, -1234567890123LL, 0);
  quill_fb_add_u64(b, 8, 0xfedcba9876543210ULL, 0);
  quill_fb_add_f32(b, 9, -0.0f, 0.5f);
  quill_fb_add_f64(b, 10, 3.25, 0);
  quill_fb_add_ref(b, 11, name);
  quill_fb_add_ref(b, 12, vints);
  quill_fb_add_ref(b, 13, vdata);
  quill_fb_add_ref(b, 14, vnames);
  quill_fb_add_ref(b, 15, vitems);
  quill_fb_add_struct(b, 16, pos, sizeof pos, 4);
  quill_fb_add_union(b, 17, 1, pay);
  quill_fb_add_ref(b, 19, child);
  return quill_fb_table_end(b);
}

/* 20 tables sharing one vtable, one with another, a vector of them. */
static quill_fb_ref build_shared(quill_fb_builder *b) {
  quill_fb_ref refs[21];
  for (int i = 0; i < 20; i++) {
    quill_fb_table_start(b);
    quill_fb_add_i32(b, 0, i + 1, 0);
    quill_fb_add_i16(b, 1, (int16_t)i, -1);
    refs[i] = quill_fb_table_end(b);
  }
  quill_fb_table_start(b);
  quill_fb_add_i16(b, 1, 5, -1);
  refs[20] = quill_fb_table_end(b);
  quill_fb_ref v = quill_fb_vector_refs(b, refs, 21);
  quill_fb_table_start(b);
  quill_fb_add_ref(b, 0, v);
  return quill_fb_table_end(b);
}

/* An empty table with an empty vector and an empty string. */
static quill_fb_ref build_empty(quill_fb_builder *b) {
  quill_fb_ref s = quill_fb_cstring(b, "");
  quill_fb_ref v = quill_fb_vector(b, NULL, 0, 4, 0);
  quill_fb_table_start(b);
  quill_fb_add_ref(b, 0, v);
  quill_fb_add_ref(b, 1, s);
  return quill_fb_table_end(b);
}

static int write_one(quill_context *ctx, const char *dir, const char *name,
                     quill_fb_ref (*fn)(quill_fb_builder *)) {
  quill_fb_builder *b = quill_fb_builder_create(ctx, 0);
  quill_fb_ref root = fn(b);
  void *data;
  size_t len;
  quill_status st = quill_fb_builder_finish(b, root, "QTST", &data, &len);
  quill_fb_builder_destroy(b);
  if (st != QUILL_OK) {
    fprintf(stderr, "fb_golden: building %s failed (%d)\n", name, st);
    return 1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.bin", dir, name);
  FILE *f = fopen(path, "wb");
  int rc = !f || fwrite(data, 1, len, f) != len;
  if (f && fclose(f) != 0)
    rc = 1;
  if (rc)
    fprintf(stderr, "fb_golden: cannot write %s\n", path);
  quill_free(ctx, data, len);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tflite-fb-golden OUTDIR\n");
    return 2;
  }
  quill_context *ctx = quill_context_create(NULL, NULL);
  int rc = write_one(ctx, argv[1], "all", build_all) |
           write_one(ctx, argv[1], "shared", build_shared) |
           write_one(ctx, argv[1], "empty", build_empty);
  quill_context_destroy(ctx);
  return rc;
}

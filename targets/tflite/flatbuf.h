/*
 * flatbuf.h - a small, general FlatBuffers builder and a bounds-checked
 * reader, in C (Debian ships no C FlatBuffers library).
 *
 * The builder writes back to front, as the official one does: children
 * (strings, vectors, sub-tables) are built before the table that refers
 * to them, every reference points forward, and the finished buffer is the
 * tail of a growing array:
 *
 *   low addresses                                          high addresses
 *   [root uoffset][file id "TFL3"][vtable][table][vector]...[string]
 *    ^ finished last                                  ^ written first
 *
 * A reference (quill_fb_ref) is the object's distance from the END of
 * the buffer, which does not change while the buffer grows downward.
 *
 * Supported: tables with vtables (identical vtables are shared), scalar
 * fields with schema defaults (a field equal to its default is omitted,
 * as flatc-generated builders do), inline structs, vectors of scalars,
 * structs, strings and tables, strings, unions (a type byte plus a table
 * reference: two fields), forced alignment of vector data (force_align),
 * a 4-byte file identifier. Everything is little endian (the host must
 * be little endian; asserted by the unit test).
 *
 * Errors are sticky: an allocation failure, a buffer past the size limit
 * (2^31 - 1 bytes, FlatBuffers' maximum, or a smaller test limit) or a
 * misuse (a table started inside a table, a table over 64 KiB) is
 * recorded, later calls do nothing and quill_fb_builder_finish() reports
 * it. The builder never hands out a malformed buffer.
 *
 * The reader checks every offset against the buffer's bounds and returns
 * false (or the default) instead of reading outside it; it serves the
 * unit tests and `quill-translate --dump-tflite`, not as a full verifier.
 */
#ifndef QUILL_TARGETS_TFLITE_FLATBUF_H
#define QUILL_TARGETS_TFLITE_FLATBUF_H

#include "ir/ir.h"

/* FlatBuffers' size limit: offsets are 32-bit, and signed offsets must
 * reach across the whole buffer. */
#define QUILL_FB_MAX_SIZE ((size_t)0x7fffffff)

typedef struct quill_fb_builder quill_fb_builder;

/* A built object: its distance from the end of the buffer (0: none). */
typedef uint32_t quill_fb_ref;

/* ---- builder ------------------------------------------------------------- */

/* Create a builder allocating through ctx. `max_size` bounds the finished
 * buffer (0: QUILL_FB_MAX_SIZE); larger buffers fail with
 * QUILL_ERR_UNSUPPORTED. Returns NULL on allocation failure. Every call
 * should be paired with quill_fb_builder_destroy(). */
quill_fb_builder *quill_fb_builder_create(quill_context *ctx, size_t max_size);
void quill_fb_builder_destroy(quill_fb_builder *b);

/* The sticky status: QUILL_OK, QUILL_ERR_NOMEM, QUILL_ERR_UNSUPPORTED
 * (size limit) or QUILL_ERR_INTERNAL (misuse). No diagnostic is emitted. */
quill_status quill_fb_builder_status(const quill_fb_builder *b);
/* Bytes written so far. */
size_t quill_fb_builder_size(const quill_fb_builder *b);

/* Strings: UTF-8 bytes plus a terminating NUL (not counted in the
 * length). */
quill_fb_ref quill_fb_string(quill_fb_builder *b, const char *s, size_t len);
quill_fb_ref quill_fb_cstring(quill_fb_builder *b, const char *s);

/* A vector of n scalars or structs of elem_size bytes each, copied from
 * `data` (little endian). The data starts on a multiple of `align`
 * (a power of two; 0 means elem_size, at least 1); force_align 16 is
 * align = 16. */
quill_fb_ref quill_fb_vector(quill_fb_builder *b, const void *data, size_t n,
                             size_t elem_size, size_t align);
/* A vector of references (tables or strings), in the given order. */
quill_fb_ref quill_fb_vector_refs(quill_fb_builder *b,
                                  const quill_fb_ref *refs, size_t n);

/* Tables. Between start and end only fields may be added (build strings,
 * vectors and sub-tables first). Field ids are the schema's (0-based
 * declaration order; a union takes two ids: its _type byte, then the
 * value). A scalar equal to `dflt` is omitted. */
void quill_fb_table_start(quill_fb_builder *b);
void quill_fb_add_bool(quill_fb_builder *b, unsigned id, bool v, bool dflt);
void quill_fb_add_i8(quill_fb_builder *b, unsigned id, int8_t v, int8_t dflt);
void quill_fb_add_u8(quill_fb_builder *b, unsigned id, uint8_t v,
                     uint8_t dflt);
void quill_fb_add_i16(quill_fb_builder *b, unsigned id, int16_t v,
                      int16_t dflt);
void quill_fb_add_u16(quill_fb_builder *b, unsigned id, uint16_t v,
                      uint16_t dflt);
void quill_fb_add_i32(quill_fb_builder *b, unsigned id, int32_t v,
                      int32_t dflt);
void quill_fb_add_u32(quill_fb_builder *b, unsigned id, uint32_t v,
                      uint32_t dflt);
void quill_fb_add_i64(quill_fb_builder *b, unsigned id, int64_t v,
                      int64_t dflt);
void quill_fb_add_u64(quill_fb_builder *b, unsigned id, uint64_t v,
                      uint64_t dflt);
void quill_fb_add_f32(quill_fb_builder *b, unsigned id, float v, float dflt);
void quill_fb_add_f64(quill_fb_builder *b, unsigned id, double v,
                      double dflt);
/* A reference field (table, vector, string); ref 0 leaves it absent. */
void quill_fb_add_ref(quill_fb_builder *b, unsigned id, quill_fb_ref ref);
/* An inline struct of `size` bytes with alignment `align`. */
void quill_fb_add_struct(quill_fb_builder *b, unsigned id, const void *data,
                         size_t size, size_t align);
/* A union: the type byte at `type_id` and the value table at
 * `type_id + 1`; type 0 (NONE) writes neither. */
void quill_fb_add_union(quill_fb_builder *b, unsigned type_id, uint8_t type,
                        quill_fb_ref value);
/* Finish the table: writes (or shares) its vtable. Returns its ref. */
quill_fb_ref quill_fb_table_end(quill_fb_builder *b);

/* Finish with `root` (a table) and a 4-character file identifier (NULL:
 * none). On success *data and *len get the buffer, allocated through the
 * context (free it with quill_free(ctx, *data, *len)); the builder may
 * then only be destroyed. On failure returns the sticky status. */
quill_status quill_fb_builder_finish(quill_fb_builder *b, quill_fb_ref root,
                                     const char *file_id, void **data,
                                     size_t *len);

/* Number of vtables written (shared ones count once), for tests. */
size_t quill_fb_builder_num_vtables(const quill_fb_builder *b);

/* ---- reader -------------------------------------------------------------- */

/* A table inside a buffer. */
typedef struct quill_fb_table {
  const uint8_t *buf;
  size_t len;
  size_t pos; /* offset of the table's soffset */
} quill_fb_table;

/* A vector inside a buffer: n elements starting at buf + pos. */
typedef struct quill_fb_vec {
  const uint8_t *buf;
  size_t len;
  size_t pos; /* offset of element 0 */
  uint32_t n;
} quill_fb_vec;

/* The root table; false if the buffer is too small, the root offset or
 * the vtable is out of bounds, or `file_id` (if non-NULL) differs. */
bool quill_fb_root(const void *buf, size_t len, const char *file_id,
                   quill_fb_table *out);
/* The 4-byte file identifier (NULL if the buffer is too small). */
const char *quill_fb_file_id(const void *buf, size_t len);

/* True if field `id` is present in the table's vtable. */
bool quill_fb_has(const quill_fb_table *t, unsigned id);
/* Scalars (little endian), or `dflt` if absent or out of bounds. */
uint64_t quill_fb_get_uint(const quill_fb_table *t, unsigned id,
                           unsigned bytes, uint64_t dflt);
int64_t quill_fb_get_int(const quill_fb_table *t, unsigned id, unsigned bytes,
                         int64_t dflt);
float quill_fb_get_f32(const quill_fb_table *t, unsigned id, float dflt);
/* Pointer to an inline struct of `size` bytes, or NULL. */
const void *quill_fb_get_struct(const quill_fb_table *t, unsigned id,
                                size_t size);
/* Reference fields; false if absent or malformed. */
bool quill_fb_get_table(const quill_fb_table *t, unsigned id,
                        quill_fb_table *out);
bool quill_fb_get_vec(const quill_fb_table *t, unsigned id, size_t elem_size,
                      quill_fb_vec *out);
/* A string field (not copied; NUL-terminated in a well-formed buffer);
 * NULL if absent or malformed. */
const char *quill_fb_get_string(const quill_fb_table *t, unsigned id,
                                size_t *len);
/* Element i of a vector of tables / strings. */
bool quill_fb_vec_table(const quill_fb_vec *v, uint32_t i,
                        quill_fb_table *out);
const char *quill_fb_vec_string(const quill_fb_vec *v, uint32_t i,
                                size_t *len);
/* Scalar element i of a vector with elements of `bytes` bytes. */
uint64_t quill_fb_vec_uint(const quill_fb_vec *v, uint32_t i, unsigned bytes);
int64_t quill_fb_vec_int(const quill_fb_vec *v, uint32_t i, unsigned bytes);
float quill_fb_vec_f32(const quill_fb_vec *v, uint32_t i);

#endif /* QUILL_TARGETS_TFLITE_FLATBUF_H */

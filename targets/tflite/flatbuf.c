/*
 * flatbuf.c - the FlatBuffers builder and reader (flatbuf.h).
 *
 * Builder memory: one array of `cap` bytes whose used part is its tail,
 * buf[cap - size, cap). Writing prepends; growing doubles the array and
 * moves the tail to the new end. Offsets are kept as distances from the
 * end ("refs"), which stay valid while the buffer grows.
 *
 * Alignment follows the official builder: before writing an object of
 * `len` bytes that must be aligned to `a`, pad so that (size + len) % a
 * == 0 (pre-align); the finished buffer is padded so that its total size
 * is a multiple of the largest alignment used, which makes distances from
 * the end equal alignment from the start.
 *
 * A table is built as its fields (each aligned to its own size), then a
 * 4-byte soffset to its vtable. The vtable
 *
 *   u16 vtable size | u16 table size | u16 offset of field 0 | ...
 *
 * is compared with every vtable written so far and shared when equal; a
 * new one is written just below the table.
 */
#include <string.h>

#include "targets/tflite/flatbuf.h"

typedef struct fb_field {
  unsigned id;
  uint32_t loc; /* ref of the field's value */
} fb_field;

struct quill_fb_builder {
  quill_context *ctx;
  uint8_t *buf;
  size_t cap, size, max_size;
  size_t minalign;
  quill_status status;
  bool in_table, finished;
  size_t table_start;
  fb_field *fields;
  size_t nfields, fields_cap;
  uint32_t *vtables; /* refs of written vtables */
  size_t nvt, vt_cap;
};

/* ---- low level ------------------------------------------------------------ */

static void fail(quill_fb_builder *b, quill_status s) {
  if (b->status == QUILL_OK)
    b->status = s;
}

static bool ensure(quill_fb_builder *b, size_t n) {
  if (b->status != QUILL_OK)
    return false;
  if (n > b->max_size || b->size > b->max_size - n) {
    fail(b, QUILL_ERR_UNSUPPORTED);
    return false;
  }
  if (b->size + n <= b->cap)
    return true;
  size_t ncap = b->cap ? b->cap : 1024;
  while (ncap < b->size + n)
    ncap = ncap > SIZE_MAX / 2 ? SIZE_MAX : ncap * 2;
  uint8_t *nb = quill_alloc(b->ctx, ncap);
  if (!nb) {
    fail(b, QUILL_ERR_NOMEM);
    return false;
  }
  if (b->size)
    memcpy(nb + ncap - b->size, b->buf + b->cap - b->size, b->size);
  quill_free(b->ctx, b->buf, b->cap);
  b->buf = nb;
  b->cap = ncap;
  return true;
}

/* Prepend n bytes (data NULL: zeros). */
static void push(quill_fb_builder *b, const void *data, size_t n) {
  if (!ensure(b, n))
    return;
  b->size += n;
  uint8_t *dst = b->buf + b->cap - b->size;
  if (data)
    memcpy(dst, data, n);
  else
    memset(dst, 0, n);
}

static void track_align(quill_fb_builder *b, size_t a) {
  if (a > b->minalign)
    b->minalign = a;
}

/* Pad so that after `len` more bytes the size is a multiple of a. */
static void prealign(quill_fb_builder *b, size_t len, size_t a) {
  track_align(b, a);
  size_t pad = (a - (b->size + len) % a) % a;
  if (pad)
    push(b, NULL, pad);
}

static void align(quill_fb_builder *b, size_t a) { prealign(b, 0, a); }

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static void push_u32(quill_fb_builder *b, uint32_t v) {
  uint8_t t[4];
  put_u32(t, v);
  push(b, t, 4);
}

/* Prepend a uoffset to `ref` (4-aligned). */
static void push_uoffset(quill_fb_builder *b, quill_fb_ref ref) {
  align(b, 4);
  if (b->status != QUILL_OK)
    return;
  if (ref == 0 || ref > b->size) {
    fail(b, QUILL_ERR_INTERNAL);
    return;
  }
  push_u32(b, (uint32_t)(b->size + 4 - ref));
}

/* ---- lifetime --------------------------------------------------------------- */

quill_fb_builder *quill_fb_builder_create(quill_context *ctx,
                                          size_t max_size) {
  quill_fb_builder *b = quill_calloc(ctx, 1, sizeof *b);
  if (!b)
    return NULL;
  b->ctx = ctx;
  b->max_size = max_size && max_size < QUILL_FB_MAX_SIZE ? max_size
                                                         : QUILL_FB_MAX_SIZE;
  b->minalign = 1;
  return b;
}

void quill_fb_builder_destroy(quill_fb_builder *b) {
  if (!b)
    return;
  quill_free(b->ctx, b->buf, b->cap);
  quill_free(b->ctx, b->fields, b->fields_cap * sizeof *b->fields);
  quill_free(b->ctx, b->vtables, b->vt_cap * sizeof *b->vtables);
  quill_free(b->ctx, b, sizeof *b);
}

quill_status quill_fb_builder_status(const quill_fb_builder *b) {
  return b->status;
}

size_t quill_fb_builder_size(const quill_fb_builder *b) { return b->size; }

size_t quill_fb_builder_num_vtables(const quill_fb_builder *b) {
  return b->nvt;
}

/* Objects other than fields may not be built inside a table. */
static bool outside_table(quill_fb_builder *b) {
  if (b->in_table || b->finished) {
    fail(b, QUILL_ERR_INTERNAL);
    return false;
  }
  return b->status == QUILL_OK;
}

/* ---- strings and vectors ------------------------------------------------------ */

quill_fb_ref quill_fb_string(quill_fb_builder *b, const char *s, size_t len) {
  if (!outside_table(b))
    return 0;
  if (len >= b->max_size) {
    fail(b, QUILL_ERR_UNSUPPORTED);
    return 0;
  }
  prealign(b, len + 1, 4);
  push(b, NULL, 1);
  push(b, s, len);
  push_u32(b, (uint32_t)len);
  return b->status == QUILL_OK ? (quill_fb_ref)b->size : 0;
}

quill_fb_ref quill_fb_cstring(quill_fb_builder *b, const char *s) {
  return quill_fb_string(b, s, strlen(s));
}

quill_fb_ref quill_fb_vector(quill_fb_builder *b, const void *data, size_t n,
                             size_t elem_size, size_t alignment) {
  if (!outside_table(b))
    return 0;
  if (elem_size == 0 || n > b->max_size / elem_size) {
    fail(b, elem_size ? QUILL_ERR_UNSUPPORTED : QUILL_ERR_INTERNAL);
    return 0;
  }
  size_t a = alignment ? alignment : elem_size;
  if (a & (a - 1)) {
    fail(b, QUILL_ERR_INTERNAL);
    return 0;
  }
  size_t bytes = n * elem_size;
  prealign(b, bytes, 4);
  prealign(b, bytes, a);
  if (bytes)
    push(b, data, bytes);
  push_u32(b, (uint32_t)n);
  return b->status == QUILL_OK ? (quill_fb_ref)b->size : 0;
}

quill_fb_ref quill_fb_vector_refs(quill_fb_builder *b,
                                  const quill_fb_ref *refs, size_t n) {
  if (!outside_table(b))
    return 0;
  if (n > b->max_size / 4) {
    fail(b, QUILL_ERR_UNSUPPORTED);
    return 0;
  }
  prealign(b, n * 4, 4);
  for (size_t i = n; i-- > 0;)
    push_uoffset(b, refs[i]);
  push_u32(b, (uint32_t)n);
  return b->status == QUILL_OK ? (quill_fb_ref)b->size : 0;
}

/* ---- tables -------------------------------------------------------------------- */

void quill_fb_table_start(quill_fb_builder *b) {
  if (!outside_table(b))
    return;
  b->in_table = true;
  b->table_start = b->size;
  b->nfields = 0;
}

static void track_field(quill_fb_builder *b, unsigned id) {
  if (b->status != QUILL_OK)
    return;
  for (size_t i = 0; i < b->nfields; i++)
    if (b->fields[i].id == id) {
      fail(b, QUILL_ERR_INTERNAL); /* a field added twice */
      return;
    }
  if (b->nfields == b->fields_cap) {
    size_t ncap = b->fields_cap ? b->fields_cap * 2 : 16;
    fb_field *nf = quill_realloc(b->ctx, b->fields,
                                 b->fields_cap * sizeof *nf, ncap * sizeof *nf);
    if (!nf) {
      fail(b, QUILL_ERR_NOMEM);
      return;
    }
    b->fields = nf;
    b->fields_cap = ncap;
  }
  b->fields[b->nfields].id = id;
  b->fields[b->nfields].loc = (uint32_t)b->size;
  b->nfields++;
}

/* Add a scalar field of n bytes (little endian in `le`). */
static void add_scalar(quill_fb_builder *b, unsigned id, const void *le,
                       size_t n) {
  if (!b->in_table || id > 0x7ffe) {
    fail(b, QUILL_ERR_INTERNAL);
    return;
  }
  align(b, n);
  push(b, le, n);
  track_field(b, id);
}

#define ADD_INT(name, T)                                                      \
  void quill_fb_add_##name(quill_fb_builder *b, unsigned id, T v, T dflt) {  \
    if (v == dflt && b->in_table)                                             \
      return;                                                                 \
    uint8_t le[sizeof(T)];                                                    \
    uint64_t u = (uint64_t)v;                                                 \
    for (size_t i = 0; i < sizeof(T); i++)                                    \
      le[i] = (uint8_t)(u >> (8 * i));                                        \
    add_scalar(b, id, le, sizeof(T));                                         \
  }
ADD_INT(i8, int8_t)
ADD_INT(u8, uint8_t)
ADD_INT(i16, int16_t)
ADD_INT(u16, uint16_t)
ADD_INT(i32, int32_t)
ADD_INT(u32, uint32_t)
ADD_INT(i64, int64_t)
ADD_INT(u64, uint64_t)
#undef ADD_INT

void quill_fb_add_bool(quill_fb_builder *b, unsigned id, bool v, bool dflt) {
  quill_fb_add_u8(b, id, v ? 1 : 0, dflt ? 1 : 0);
}

void quill_fb_add_f32(quill_fb_builder *b, unsigned id, float v, float dflt) {
  uint32_t u, d;
  memcpy(&u, &v, 4);
  memcpy(&d, &dflt, 4);
  if (u == d && b->in_table) /* bitwise: -0.0 and NaN payloads are kept */
    return;
  uint8_t le[4];
  put_u32(le, u);
  add_scalar(b, id, le, 4);
}

void quill_fb_add_f64(quill_fb_builder *b, unsigned id, double v,
                      double dflt) {
  uint64_t u, d;
  memcpy(&u, &v, 8);
  memcpy(&d, &dflt, 8);
  if (u == d && b->in_table)
    return;
  uint8_t le[8];
  for (int i = 0; i < 8; i++)
    le[i] = (uint8_t)(u >> (8 * i));
  add_scalar(b, id, le, 8);
}

void quill_fb_add_ref(quill_fb_builder *b, unsigned id, quill_fb_ref ref) {
  if (ref == 0)
    return;
  if (!b->in_table) {
    fail(b, QUILL_ERR_INTERNAL);
    return;
  }
  push_uoffset(b, ref);
  track_field(b, id);
}

void quill_fb_add_struct(quill_fb_builder *b, unsigned id, const void *data,
                         size_t size, size_t alignment) {
  if (!b->in_table || !alignment || (alignment & (alignment - 1))) {
    fail(b, QUILL_ERR_INTERNAL);
    return;
  }
  prealign(b, size, alignment);
  push(b, data, size);
  track_field(b, id);
}

void quill_fb_add_union(quill_fb_builder *b, unsigned type_id, uint8_t type,
                        quill_fb_ref value) {
  if (type == 0)
    return;
  if (value == 0) {
    fail(b, QUILL_ERR_INTERNAL); /* a typed union needs its value */
    return;
  }
  quill_fb_add_ref(b, type_id + 1, value);
  quill_fb_add_u8(b, type_id, type, 0);
}

/* True if the vtable at `ref` has exactly the bytes `vt` (vt_size long). */
static bool vtable_equal(const quill_fb_builder *b, uint32_t ref,
                         const uint8_t *vt, size_t vt_size) {
  const uint8_t *p = b->buf + b->cap - ref;
  return ref >= vt_size && memcmp(p, vt, vt_size) == 0;
}

quill_fb_ref quill_fb_table_end(quill_fb_builder *b) {
  if (!b->in_table) {
    fail(b, QUILL_ERR_INTERNAL);
    return 0;
  }
  b->in_table = false;
  align(b, 4);
  push(b, NULL, 4); /* the soffset, patched below */
  if (b->status != QUILL_OK)
    return 0;
  size_t tab = b->size;
  size_t obj_size = tab - b->table_start;
  unsigned max_id = 0;
  for (size_t i = 0; i < b->nfields; i++)
    if (b->fields[i].id + 1 > max_id)
      max_id = b->fields[i].id + 1;
  size_t vt_size = 4 + 2 * (size_t)max_id;
  if (obj_size > 0xffff || vt_size > 0xffff) {
    fail(b, QUILL_ERR_INTERNAL); /* a table over 64 KiB */
    return 0;
  }
  uint8_t small[256];
  uint8_t *vt = vt_size <= sizeof small ? small : quill_alloc(b->ctx, vt_size);
  if (!vt) {
    fail(b, QUILL_ERR_NOMEM);
    return 0;
  }
  memset(vt, 0, vt_size);
  put_u16(vt, (uint16_t)vt_size);
  put_u16(vt + 2, (uint16_t)obj_size);
  for (size_t i = 0; i < b->nfields; i++)
    put_u16(vt + 4 + 2 * b->fields[i].id,
            (uint16_t)(tab - b->fields[i].loc));
  uint32_t use = 0;
  for (size_t i = 0; i < b->nvt && !use; i++)
    if (vtable_equal(b, b->vtables[i], vt, vt_size))
      use = b->vtables[i];
  if (!use) {
    push(b, vt, vt_size); /* tab is 4-aligned and vt_size even: aligned */
    if (b->nvt == b->vt_cap && b->status == QUILL_OK) {
      size_t ncap = b->vt_cap ? b->vt_cap * 2 : 16;
      uint32_t *nv = quill_realloc(b->ctx, b->vtables,
                                   b->vt_cap * sizeof *nv, ncap * sizeof *nv);
      if (!nv)
        fail(b, QUILL_ERR_NOMEM);
      else {
        b->vtables = nv;
        b->vt_cap = ncap;
      }
    }
    if (b->status == QUILL_OK) {
      use = (uint32_t)b->size;
      b->vtables[b->nvt++] = use;
    }
  }
  if (vt != small)
    quill_free(b->ctx, vt, vt_size);
  if (b->status != QUILL_OK)
    return 0;
  /* soffset = table address - vtable address = use - tab (as refs). */
  int64_t soff = (int64_t)use - (int64_t)tab;
  put_u32(b->buf + b->cap - tab, (uint32_t)(int32_t)soff);
  return (quill_fb_ref)tab;
}

/* ---- finish --------------------------------------------------------------------- */

quill_status quill_fb_builder_finish(quill_fb_builder *b, quill_fb_ref root,
                                     const char *file_id, void **data,
                                     size_t *len) {
  *data = NULL;
  *len = 0;
  if (b->in_table || b->finished || root == 0)
    fail(b, QUILL_ERR_INTERNAL);
  if (b->status != QUILL_OK)
    return b->status;
  prealign(b, 4 + (file_id ? 4 : 0), b->minalign > 4 ? b->minalign : 4);
  if (file_id)
    push(b, file_id, 4);
  push_uoffset(b, root);
  if (b->status != QUILL_OK)
    return b->status;
  b->finished = true;
  /* Move the tail to the front and shrink; copy if shrinking fails. */
  memmove(b->buf, b->buf + b->cap - b->size, b->size);
  uint8_t *out = quill_realloc(b->ctx, b->buf, b->cap, b->size);
  if (out) {
    b->buf = NULL;
    b->cap = 0;
  } else {
    out = quill_alloc(b->ctx, b->size);
    if (!out) {
      fail(b, QUILL_ERR_NOMEM);
      return b->status;
    }
    memcpy(out, b->buf, b->size);
  }
  *data = out;
  *len = b->size;
  b->size = 0;
  return QUILL_OK;
}

/* ---- reader ------------------------------------------------------------------------ */

static uint64_t get_le(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* True if [pos, pos + n) lies inside the buffer. */
static bool in_bounds(size_t len, size_t pos, size_t n) {
  return pos <= len && n <= len - pos;
}

/* Validate the table at pos: its soffset, vtable and object size. */
static bool table_at(const uint8_t *buf, size_t len, size_t pos,
                     quill_fb_table *out) {
  if (!in_bounds(len, pos, 4))
    return false;
  int32_t s = (int32_t)(uint32_t)get_le(buf + pos, 4);
  int64_t vt = (int64_t)pos - s;
  if (vt < 0 || !in_bounds(len, (size_t)vt, 4))
    return false;
  uint16_t vt_size = (uint16_t)get_le(buf + vt, 2);
  uint16_t obj_size = (uint16_t)get_le(buf + vt + 2, 2);
  if (vt_size < 4 || (vt_size & 1) || !in_bounds(len, (size_t)vt, vt_size) ||
      obj_size < 4 || !in_bounds(len, pos, obj_size))
    return false;
  out->buf = buf;
  out->len = len;
  out->pos = pos;
  return true;
}

const char *quill_fb_file_id(const void *buf, size_t len) {
  return len >= 8 ? (const char *)buf + 4 : NULL;
}

bool quill_fb_root(const void *buf, size_t len, const char *file_id,
                   quill_fb_table *out) {
  const uint8_t *p = buf;
  if (len < 8 || (file_id && memcmp(p + 4, file_id, 4) != 0))
    return false;
  return table_at(p, len, (size_t)get_le(p, 4), out);
}

/* Position of field `id` of n bytes, or 0 if absent or out of bounds. */
static size_t field_pos(const quill_fb_table *t, unsigned id, size_t n) {
  int32_t s = (int32_t)(uint32_t)get_le(t->buf + t->pos, 4);
  size_t vt = (size_t)((int64_t)t->pos - s);
  uint16_t vt_size = (uint16_t)get_le(t->buf + vt, 2);
  uint16_t obj_size = (uint16_t)get_le(t->buf + vt + 2, 2);
  if (4 + 2 * (size_t)id + 2 > vt_size)
    return 0;
  uint16_t off = (uint16_t)get_le(t->buf + vt + 4 + 2 * id, 2);
  if (off == 0 || off < 4 || (size_t)off + n > obj_size)
    return 0;
  return t->pos + off;
}

bool quill_fb_has(const quill_fb_table *t, unsigned id) {
  return field_pos(t, id, 1) != 0;
}

uint64_t quill_fb_get_uint(const quill_fb_table *t, unsigned id,
                           unsigned bytes, uint64_t dflt) {
  size_t p = field_pos(t, id, bytes);
  return p ? get_le(t->buf + p, bytes) : dflt;
}

int64_t quill_fb_get_int(const quill_fb_table *t, unsigned id, unsigned bytes,
                         int64_t dflt) {
  size_t p = field_pos(t, id, bytes);
  if (!p)
    return dflt;
  uint64_t u = get_le(t->buf + p, bytes);
  unsigned sh = 64 - 8 * bytes;
  return sh ? (int64_t)(u << sh) >> sh : (int64_t)u;
}

float quill_fb_get_f32(const quill_fb_table *t, unsigned id, float dflt) {
  size_t p = field_pos(t, id, 4);
  if (!p)
    return dflt;
  uint32_t u = (uint32_t)get_le(t->buf + p, 4);
  float f;
  memcpy(&f, &u, 4);
  return f;
}

const void *quill_fb_get_struct(const quill_fb_table *t, unsigned id,
                                size_t size) {
  size_t p = field_pos(t, id, size);
  return p ? t->buf + p : NULL;
}

/* Follow the uoffset at pos; 0 if out of bounds. */
static size_t follow(const uint8_t *buf, size_t len, size_t pos) {
  if (!in_bounds(len, pos, 4))
    return 0;
  uint64_t target = pos + get_le(buf + pos, 4);
  return target < len ? (size_t)target : 0;
}

bool quill_fb_get_table(const quill_fb_table *t, unsigned id,
                        quill_fb_table *out) {
  size_t p = field_pos(t, id, 4);
  size_t target = p ? follow(t->buf, t->len, p) : 0;
  return target && table_at(t->buf, t->len, target, out);
}

static bool vec_at(const uint8_t *buf, size_t len, size_t target,
                   size_t elem_size, quill_fb_vec *out) {
  if (!target || !in_bounds(len, target, 4))
    return false;
  uint32_t n = (uint32_t)get_le(buf + target, 4);
  if (elem_size && n > (len - target - 4) / elem_size)
    return false;
  out->buf = buf;
  out->len = len;
  out->pos = target + 4;
  out->n = n;
  return true;
}

bool quill_fb_get_vec(const quill_fb_table *t, unsigned id, size_t elem_size,
                      quill_fb_vec *out) {
  size_t p = field_pos(t, id, 4);
  return p && vec_at(t->buf, t->len, follow(t->buf, t->len, p), elem_size,
                     out);
}

static const char *string_at(const uint8_t *buf, size_t len, size_t target,
                             size_t *slen) {
  quill_fb_vec v;
  if (!vec_at(buf, len, target, 1, &v) || !in_bounds(len, v.pos, v.n + 1) ||
      buf[v.pos + v.n] != 0)
    return NULL;
  if (slen)
    *slen = v.n;
  return (const char *)buf + v.pos;
}

const char *quill_fb_get_string(const quill_fb_table *t, unsigned id,
                                size_t *len) {
  size_t p = field_pos(t, id, 4);
  return p ? string_at(t->buf, t->len, follow(t->buf, t->len, p), len) : NULL;
}

bool quill_fb_vec_table(const quill_fb_vec *v, uint32_t i,
                        quill_fb_table *out) {
  if (i >= v->n)
    return false;
  size_t target = follow(v->buf, v->len, v->pos + 4 * (size_t)i);
  return target && table_at(v->buf, v->len, target, out);
}

const char *quill_fb_vec_string(const quill_fb_vec *v, uint32_t i,
                                size_t *len) {
  if (i >= v->n)
    return NULL;
  return string_at(v->buf, v->len, follow(v->buf, v->len, v->pos + 4 * i),
                   len);
}

uint64_t quill_fb_vec_uint(const quill_fb_vec *v, uint32_t i, unsigned bytes) {
  size_t p = v->pos + (size_t)i * bytes;
  return i < v->n && in_bounds(v->len, p, bytes) ? get_le(v->buf + p, bytes)
                                                 : 0;
}

int64_t quill_fb_vec_int(const quill_fb_vec *v, uint32_t i, unsigned bytes) {
  uint64_t u = quill_fb_vec_uint(v, i, bytes);
  unsigned sh = 64 - 8 * bytes;
  return sh ? (int64_t)(u << sh) >> sh : (int64_t)u;
}

float quill_fb_vec_f32(const quill_fb_vec *v, uint32_t i) {
  uint32_t u = (uint32_t)quill_fb_vec_uint(v, i, 4);
  float f;
  memcpy(&f, &u, 4);
  return f;
}

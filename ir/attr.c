/*
 * attr.c - uniqued attributes, dense tensor data and its textual form.
 *
 * Each constructor fills a stack "key" attr, looks it up in ctx->attrs and
 * on a miss copies it (with its trailing payload, see attr_impl.h) into one
 * new allocation. Floats hash and compare by bit pattern, so -0.0 and 0.0
 * are distinct attrs and a NaN is equal to itself (same bits).
 *
 * Dense data is stored exactly as given (host little-endian layout, one byte
 * per bool / i4 / u4 element, storage integers for quant tensors). Printing
 * (docs/textual-ir.md):
 *
 *   0 elements          dense<[]> : T
 *   all equal / 1 elem  dense<v> : T           splat
 *   <= 16 elements      dense<[a, b, ...]> : T flat, row-major
 *   otherwise           dense<"0xAABB..."> : T raw bytes, uppercase hex
 *
 * The f16/bf16 conversions round to nearest even and keep NaN quiet.
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "ir/attr_impl.h"
#include "ir/context_impl.h"
#include "ir/strbuf.h"

#define PAYLOAD_ALIGN 16
#define HEADER_SIZE                                                            \
  ((sizeof(quill_attr) + PAYLOAD_ALIGN - 1) / PAYLOAD_ALIGN * PAYLOAD_ALIGN)

void quill_attrs_destroy(quill_context *ctx) {
  for (size_t i = 0; i < ctx->attrs.cap; i++) {
    quill_attr *a = ctx->attrs.slots[i].ptr;
    if (a)
      quill_free(ctx, a, a->alloc_size);
  }
  quill_uniq_free(ctx, &ctx->attrs);
}

/* ---- uniquing ---------------------------------------------------------- */

static uint64_t hash_attr(const quill_attr *k) {
  uint64_t h = quill_hash_u64(0xA7, (uint64_t)k->kind);
  switch (k->kind) {
  case QUILL_ATTR_INT:
    return quill_hash_u64(h, (uint64_t)k->u.i);
  case QUILL_ATTR_FLOAT: {
    uint64_t bits;
    memcpy(&bits, &k->u.f, sizeof bits);
    return quill_hash_u64(h, bits);
  }
  case QUILL_ATTR_BOOL:
    return quill_hash_u64(h, k->u.b);
  case QUILL_ATTR_STRING:
    return quill_hash_bytes(h, k->u.str.data, k->u.str.len);
  case QUILL_ATTR_TYPE:
    return quill_hash_u64(h, (uint64_t)(uintptr_t)k->u.type);
  case QUILL_ATTR_LIST:
    return quill_hash_bytes(h, k->u.list.elems,
                            k->u.list.n * sizeof(quill_attr *));
  case QUILL_ATTR_DENSE:
    h = quill_hash_u64(h, (uint64_t)(uintptr_t)k->u.dense.type);
    return quill_hash_bytes(h, k->u.dense.data, k->u.dense.size);
  }
  return h;
}

static bool attr_eq(const void *entry, const void *key) {
  const quill_attr *a = entry, *b = key;
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case QUILL_ATTR_INT:
    return a->u.i == b->u.i;
  case QUILL_ATTR_FLOAT:
    return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0;
  case QUILL_ATTR_BOOL:
    return a->u.b == b->u.b;
  case QUILL_ATTR_STRING:
    return a->u.str.len == b->u.str.len &&
           memcmp(a->u.str.data, b->u.str.data, a->u.str.len) == 0;
  case QUILL_ATTR_TYPE:
    return a->u.type == b->u.type;
  case QUILL_ATTR_LIST:
    return a->u.list.n == b->u.list.n &&
           (a->u.list.n == 0 ||
            memcmp(a->u.list.elems, b->u.list.elems,
                   a->u.list.n * sizeof(quill_attr *)) == 0);
  case QUILL_ATTR_DENSE:
    return a->u.dense.type == b->u.dense.type &&
           a->u.dense.size == b->u.dense.size &&
           (a->u.dense.size == 0 ||
            memcmp(a->u.dense.data, b->u.dense.data, a->u.dense.size) == 0);
  }
  return false;
}

/* Return the uniqued copy of key; `payload`/`psize` is its trailing data. */
static const quill_attr *unique(quill_context *ctx, quill_attr *key,
                                const void *payload, size_t psize) {
  uint64_t h = hash_attr(key);
  quill_attr *a = quill_uniq_lookup(&ctx->attrs, h, attr_eq, key);
  if (a)
    return a;
  size_t extra = key->kind == QUILL_ATTR_STRING ? psize + 1 : psize;
  if (extra > SIZE_MAX - HEADER_SIZE)
    return NULL;
  size_t size = HEADER_SIZE + extra;
  a = quill_alloc(ctx, size);
  if (!a)
    return NULL;
  *a = *key;
  a->alloc_size = size;
  a->hash = h;
  char *tail = (char *)a + HEADER_SIZE;
  if (psize)
    memcpy(tail, payload, psize);
  switch (a->kind) {
  case QUILL_ATTR_STRING:
    tail[psize] = '\0';
    a->u.str.data = tail;
    break;
  case QUILL_ATTR_LIST:
    a->u.list.elems = (const quill_attr **)tail;
    break;
  case QUILL_ATTR_DENSE:
    a->u.dense.data = tail;
    break;
  default:
    break;
  }
  if (quill_uniq_insert(ctx, &ctx->attrs, h, a) != QUILL_OK) {
    quill_free(ctx, a, size);
    return NULL;
  }
  return a;
}

static quill_attr make_key(quill_attr_kind kind) {
  quill_attr k;
  memset(&k, 0, sizeof k);
  k.kind = kind;
  return k;
}

/* ---- constructors ------------------------------------------------------ */

const quill_attr *quill_attr_int(quill_context *ctx, int64_t v) {
  quill_attr k = make_key(QUILL_ATTR_INT);
  k.u.i = v;
  return unique(ctx, &k, NULL, 0);
}

const quill_attr *quill_attr_float(quill_context *ctx, double v) {
  quill_attr k = make_key(QUILL_ATTR_FLOAT);
  k.u.f = v;
  return unique(ctx, &k, NULL, 0);
}

const quill_attr *quill_attr_bool(quill_context *ctx, bool v) {
  quill_attr k = make_key(QUILL_ATTR_BOOL);
  k.u.b = v;
  return unique(ctx, &k, NULL, 0);
}

const quill_attr *quill_attr_string(quill_context *ctx, const char *s,
                                    size_t len) {
  quill_attr k = make_key(QUILL_ATTR_STRING);
  k.u.str.data = len ? s : "";
  k.u.str.len = len;
  return unique(ctx, &k, s, len);
}

const quill_attr *quill_attr_type(quill_context *ctx, quill_type *t) {
  if (!t)
    return NULL;
  quill_attr k = make_key(QUILL_ATTR_TYPE);
  k.u.type = t;
  return unique(ctx, &k, NULL, 0);
}

const quill_attr *quill_attr_list(quill_context *ctx, size_t n,
                                  const quill_attr *const *elems) {
  for (size_t i = 0; i < n; i++)
    if (!elems[i])
      return NULL;
  if (n > SIZE_MAX / sizeof(quill_attr *))
    return NULL;
  quill_attr k = make_key(QUILL_ATTR_LIST);
  k.u.list.n = n;
  k.u.list.elems = (const quill_attr **)elems;
  return unique(ctx, &k, elems, n * sizeof(quill_attr *));
}

const quill_attr *quill_attr_int_list(quill_context *ctx, size_t n,
                                      const int64_t *v) {
  const quill_attr *small[16];
  const quill_attr **elems = small;
  if (n > 16) {
    if (n > SIZE_MAX / sizeof *elems)
      return NULL;
    elems = quill_alloc(ctx, n * sizeof *elems);
    if (!elems)
      return NULL;
  }
  const quill_attr *res = NULL;
  size_t i = 0;
  for (; i < n; i++)
    if (!(elems[i] = quill_attr_int(ctx, v[i])))
      break;
  if (i == n)
    res = quill_attr_list(ctx, n, elems);
  if (elems != small)
    quill_free(ctx, elems, n * sizeof *elems);
  return res;
}

const quill_attr *quill_attr_dense(quill_context *ctx, quill_type *type,
                                   const void *data, size_t size) {
  if (!quill_type_is_tensor(type) || !quill_type_has_static_shape(type))
    return NULL;
  int64_t n = quill_type_num_elements(type);
  size_t eb = quill_type_elem_bytes(quill_type_elem(type));
  if (n < 0 || (uint64_t)n > SIZE_MAX / eb || (size_t)n * eb != size)
    return NULL;
  if (size && !data)
    return NULL;
  quill_attr k = make_key(QUILL_ATTR_DENSE);
  k.u.dense.type = type;
  k.u.dense.data = data;
  k.u.dense.size = size;
  return unique(ctx, &k, data, size);
}

/* ---- accessors --------------------------------------------------------- */

quill_attr_kind quill_attr_kind_of(const quill_attr *a) { return a->kind; }

int64_t quill_attr_int_value(const quill_attr *a) {
  assert(a->kind == QUILL_ATTR_INT);
  return a->u.i;
}

double quill_attr_float_value(const quill_attr *a) {
  assert(a->kind == QUILL_ATTR_FLOAT);
  return a->u.f;
}

bool quill_attr_bool_value(const quill_attr *a) {
  assert(a->kind == QUILL_ATTR_BOOL);
  return a->u.b;
}

const char *quill_attr_string_value(const quill_attr *a, size_t *len) {
  assert(a->kind == QUILL_ATTR_STRING);
  if (len)
    *len = a->u.str.len;
  return a->u.str.data;
}

quill_type *quill_attr_type_value(const quill_attr *a) {
  assert(a->kind == QUILL_ATTR_TYPE);
  return a->u.type;
}

size_t quill_attr_list_size(const quill_attr *a) {
  assert(a->kind == QUILL_ATTR_LIST);
  return a->u.list.n;
}

const quill_attr *quill_attr_list_elem(const quill_attr *a, size_t i) {
  assert(a->kind == QUILL_ATTR_LIST && i < a->u.list.n);
  return a->u.list.elems[i];
}

quill_type *quill_attr_dense_type(const quill_attr *a) {
  assert(a->kind == QUILL_ATTR_DENSE);
  return a->u.dense.type;
}

const void *quill_attr_dense_data(const quill_attr *a) {
  assert(a->kind == QUILL_ATTR_DENSE);
  return a->u.dense.data;
}

size_t quill_attr_dense_size(const quill_attr *a) {
  assert(a->kind == QUILL_ATTR_DENSE);
  return a->u.dense.size;
}

static size_t dense_elem_bytes(const quill_attr *a) {
  return quill_type_elem_bytes(quill_type_elem(a->u.dense.type));
}

bool quill_attr_dense_is_splat(const quill_attr *a) {
  assert(a->kind == QUILL_ATTR_DENSE);
  size_t eb = dense_elem_bytes(a);
  const unsigned char *d = a->u.dense.data;
  if (a->u.dense.size < eb)
    return false;
  for (size_t off = eb; off < a->u.dense.size; off += eb)
    if (memcmp(d, d + off, eb) != 0)
      return false;
  return true;
}

int64_t quill_attr_get_ints(const quill_attr *a, int64_t *out, size_t max) {
  if (!a || a->kind != QUILL_ATTR_LIST)
    return -1;
  for (size_t i = 0; i < a->u.list.n; i++)
    if (a->u.list.elems[i]->kind != QUILL_ATTR_INT)
      return -1;
  for (size_t i = 0; i < a->u.list.n && i < max; i++)
    out[i] = a->u.list.elems[i]->u.i;
  return (int64_t)a->u.list.n;
}

/* The scalar kind dense elements are stored as (quant: its storage). */
static quill_type_kind storage_kind(const quill_attr *a) {
  quill_type *e = quill_type_elem(a->u.dense.type);
  if (quill_type_is_quant(e))
    e = quill_type_quant_storage(e);
  return quill_type_kind_of(e);
}

/* Read element i as either a double or an int64 (is_float tells which). */
static void read_elem(const quill_attr *a, size_t i, double *f, int64_t *v,
                      bool *is_float) {
  const unsigned char *p =
      (const unsigned char *)a->u.dense.data + i * dense_elem_bytes(a);
  *is_float = false;
  *f = 0;
  *v = 0;
  switch (storage_kind(a)) {
  case QUILL_TYPE_F32: {
    float x;
    memcpy(&x, p, 4);
    *f = x;
    *is_float = true;
    break;
  }
  case QUILL_TYPE_F64:
    memcpy(f, p, 8);
    *is_float = true;
    break;
  case QUILL_TYPE_F16:
  case QUILL_TYPE_BF16: {
    uint16_t h;
    memcpy(&h, p, 2);
    *f = storage_kind(a) == QUILL_TYPE_F16 ? quill_f16_to_f32(h)
                                           : quill_bf16_to_f32(h);
    *is_float = true;
    break;
  }
  case QUILL_TYPE_BOOL:
    *v = p[0] != 0;
    break;
  case QUILL_TYPE_I4:
  case QUILL_TYPE_I8:
    *v = (int8_t)p[0];
    break;
  case QUILL_TYPE_U4:
  case QUILL_TYPE_U8:
    *v = p[0];
    break;
  case QUILL_TYPE_I16: {
    int16_t x;
    memcpy(&x, p, 2);
    *v = x;
    break;
  }
  case QUILL_TYPE_U16: {
    uint16_t x;
    memcpy(&x, p, 2);
    *v = x;
    break;
  }
  case QUILL_TYPE_I32: {
    int32_t x;
    memcpy(&x, p, 4);
    *v = x;
    break;
  }
  case QUILL_TYPE_U32: {
    uint32_t x;
    memcpy(&x, p, 4);
    *v = x;
    break;
  }
  case QUILL_TYPE_I64:
  case QUILL_TYPE_U64: /* u64 above INT64_MAX wraps: documented as i64 */
    memcpy(v, p, 8);
    break;
  default:
    break;
  }
}

double quill_attr_dense_get_f64(const quill_attr *a, size_t i) {
  assert(a->kind == QUILL_ATTR_DENSE &&
         i < a->u.dense.size / dense_elem_bytes(a));
  double f;
  int64_t v;
  bool isf;
  read_elem(a, i, &f, &v, &isf);
  if (isf)
    return f;
  if (storage_kind(a) == QUILL_TYPE_U64)
    return (double)(uint64_t)v;
  return (double)v;
}

int64_t quill_attr_dense_get_i64(const quill_attr *a, size_t i) {
  assert(a->kind == QUILL_ATTR_DENSE &&
         i < a->u.dense.size / dense_elem_bytes(a));
  double f;
  int64_t v;
  bool isf;
  read_elem(a, i, &f, &v, &isf);
  if (!isf)
    return v;
  /* Truncate toward zero, saturating (NaN reads as 0). */
  if (isnan(f))
    return 0;
  if (f >= 9223372036854775808.0)
    return INT64_MAX;
  if (f < -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)f;
}

/* ---- printing ---------------------------------------------------------- */

static void print_elem(const quill_attr *a, size_t i, quill_strbuf *sb) {
  const unsigned char *p =
      (const unsigned char *)a->u.dense.data + i * dense_elem_bytes(a);
  quill_type_kind k = storage_kind(a);
  if (k == QUILL_TYPE_F64) {
    double d;
    memcpy(&d, p, 8);
    quill_strbuf_put_double(sb, d);
    return;
  }
  if (k == QUILL_TYPE_BOOL) {
    quill_strbuf_puts(sb, p[0] ? "true" : "false");
    return;
  }
  if (k == QUILL_TYPE_U64) {
    uint64_t u;
    memcpy(&u, p, 8);
    quill_strbuf_printf(sb, "%llu", (unsigned long long)u);
    return;
  }
  double f;
  int64_t v;
  bool isf;
  read_elem(a, i, &f, &v, &isf);
  if (isf)
    quill_strbuf_put_float(sb, (float)f); /* f32, f16, bf16: exact */
  else
    quill_strbuf_printf(sb, "%lld", (long long)v);
}

static void print_dense(const quill_attr *a, quill_strbuf *sb) {
  size_t eb = dense_elem_bytes(a);
  size_t n = a->u.dense.size / eb;
  quill_strbuf_puts(sb, "dense<");
  if (n == 0) {
    quill_strbuf_puts(sb, "[]");
  } else if (quill_attr_dense_is_splat(a)) {
    print_elem(a, 0, sb);
  } else if (n <= 16) {
    quill_strbuf_putc(sb, '[');
    for (size_t i = 0; i < n; i++) {
      if (i)
        quill_strbuf_puts(sb, ", ");
      print_elem(a, i, sb);
    }
    quill_strbuf_putc(sb, ']');
  } else {
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *d = a->u.dense.data;
    quill_strbuf_puts(sb, "\"0x");
    char chunk[128];
    size_t c = 0;
    for (size_t i = 0; i < a->u.dense.size; i++) {
      chunk[c++] = hex[d[i] >> 4];
      chunk[c++] = hex[d[i] & 15];
      if (c == sizeof chunk) {
        quill_strbuf_append(sb, chunk, c);
        c = 0;
      }
    }
    quill_strbuf_append(sb, chunk, c);
    quill_strbuf_putc(sb, '"');
  }
  quill_strbuf_puts(sb, "> : ");
  quill_type_print(a->u.dense.type, sb);
}

void quill_attr_print(const quill_attr *a, quill_strbuf *sb) {
  if (!a) {
    quill_strbuf_puts(sb, "<<null attr>>");
    return;
  }
  switch (a->kind) {
  case QUILL_ATTR_INT:
    quill_strbuf_printf(sb, "%lld", (long long)a->u.i);
    break;
  case QUILL_ATTR_FLOAT:
    quill_strbuf_put_double(sb, a->u.f);
    break;
  case QUILL_ATTR_BOOL:
    quill_strbuf_puts(sb, a->u.b ? "true" : "false");
    break;
  case QUILL_ATTR_STRING:
    quill_strbuf_put_quoted(sb, a->u.str.data, a->u.str.len);
    break;
  case QUILL_ATTR_TYPE:
    quill_type_print(a->u.type, sb);
    break;
  case QUILL_ATTR_LIST:
    quill_strbuf_putc(sb, '[');
    for (size_t i = 0; i < a->u.list.n; i++) {
      if (i)
        quill_strbuf_puts(sb, ", ");
      quill_attr_print(a->u.list.elems[i], sb);
    }
    quill_strbuf_putc(sb, ']');
    break;
  case QUILL_ATTR_DENSE:
    print_dense(a, sb);
    break;
  }
}

/* ---- half precision ---------------------------------------------------- */

static float bits_to_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint32_t f32_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

float quill_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  if (exp == 0) {
    float v = ldexpf((float)mant, -24); /* zero or subnormal, exact */
    return sign ? -v : v;
  }
  if (exp == 31)
    return bits_to_f32(sign | 0x7F800000u | (mant << 13));
  return bits_to_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t quill_f32_to_f16(float f) {
  uint32_t x = f32_to_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  uint32_t abs = x & 0x7FFFFFFF;
  if (abs > 0x7F800000) /* NaN: keep it quiet and keep top payload bits */
    return (uint16_t)(sign | 0x7E00 | ((abs >> 13) & 0x3FF));
  if (abs == 0x7F800000)
    return (uint16_t)(sign | 0x7C00);
  int32_t exp = (int32_t)(abs >> 23) - 127 + 15;
  uint32_t mant = abs & 0x7FFFFF;
  if (exp >= 31)
    return (uint16_t)(sign | 0x7C00);
  if (exp <= 0) {
    if (exp < -10)
      return sign; /* below half the smallest subnormal: rounds to zero */
    mant |= 0x800000;
    uint32_t shift = (uint32_t)(14 - exp); /* 14..24 */
    uint32_t h = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1)))
      h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
    h++; /* may carry into the exponent, up to infinity: correct */
  return (uint16_t)(sign | h);
}

float quill_bf16_to_f32(uint16_t h) { return bits_to_f32((uint32_t)h << 16); }

uint16_t quill_f32_to_bf16(float f) {
  uint32_t x = f32_to_bits(f);
  if ((x & 0x7FFFFFFF) > 0x7F800000)
    return (uint16_t)((x >> 16) | 0x40);
  x += 0x7FFF + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

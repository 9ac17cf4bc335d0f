/*
 * type.c - uniqued types: scalars, quantized element types, ranked tensors.
 *
 * Scalars are embedded in the context (ctx->scalars[kind]), so
 * quill_type_scalar never fails. Quant and tensor types are built as a
 * stack "key" first, looked up in ctx->types by structural hash, and only
 * allocated (one block, arrays trailing; see type_impl.h) when new:
 *
 *   key (stack) --hash--> ctx->types --hit--> existing pointer
 *                                     --miss-> copy key into a new block
 *
 * Scales are compared by bit pattern so that uniquing is exact.
 * quill_type_print produces the syntax in docs/textual-ir.md.
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "ir/context_impl.h"
#include "ir/strbuf.h"

static const char *const scalar_names[QUILL_TYPE_QUANT] = {
    [QUILL_TYPE_F32] = "f32",   [QUILL_TYPE_F16] = "f16",
    [QUILL_TYPE_BF16] = "bf16", [QUILL_TYPE_F64] = "f64",
    [QUILL_TYPE_BOOL] = "bool", [QUILL_TYPE_I4] = "i4",
    [QUILL_TYPE_I8] = "i8",     [QUILL_TYPE_I16] = "i16",
    [QUILL_TYPE_I32] = "i32",   [QUILL_TYPE_I64] = "i64",
    [QUILL_TYPE_U4] = "u4",     [QUILL_TYPE_U8] = "u8",
    [QUILL_TYPE_U16] = "u16",   [QUILL_TYPE_U32] = "u32",
    [QUILL_TYPE_U64] = "u64",
};

static const unsigned scalar_bits[QUILL_TYPE_QUANT] = {
    [QUILL_TYPE_F32] = 32, [QUILL_TYPE_F16] = 16, [QUILL_TYPE_BF16] = 16,
    [QUILL_TYPE_F64] = 64, [QUILL_TYPE_BOOL] = 8, [QUILL_TYPE_I4] = 4,
    [QUILL_TYPE_I8] = 8,   [QUILL_TYPE_I16] = 16, [QUILL_TYPE_I32] = 32,
    [QUILL_TYPE_I64] = 64, [QUILL_TYPE_U4] = 4,   [QUILL_TYPE_U8] = 8,
    [QUILL_TYPE_U16] = 16, [QUILL_TYPE_U32] = 32, [QUILL_TYPE_U64] = 64,
};

void quill_types_init(quill_context *ctx) {
  for (int k = 0; k < QUILL_TYPE_QUANT; k++) {
    quill_type *t = &ctx->scalars[k];
    memset(t, 0, sizeof *t);
    t->kind = (quill_type_kind)k;
    t->hash = quill_hash_u64(0, (uint64_t)k);
  }
}

void quill_types_destroy(quill_context *ctx) {
  for (size_t i = 0; i < ctx->types.cap; i++) {
    quill_type *t = ctx->types.slots[i].ptr;
    if (t)
      quill_free(ctx, t, t->alloc_size);
  }
  quill_uniq_free(ctx, &ctx->types);
}

quill_type_kind quill_type_kind_of(const quill_type *t) { return t->kind; }

quill_type *quill_type_scalar(quill_context *ctx, quill_type_kind kind) {
  if ((unsigned)kind >= QUILL_TYPE_QUANT)
    return NULL;
  return &ctx->scalars[kind];
}

/* ---- uniquing ---------------------------------------------------------- */

static uint64_t hash_type(const quill_type *k) {
  uint64_t h = quill_hash_u64(0x51, (uint64_t)k->kind);
  if (k->kind == QUILL_TYPE_QUANT) {
    h = quill_hash_u64(h, (uint64_t)(uintptr_t)k->u.quant.storage);
    h = quill_hash_u64(h, (uint64_t)(uintptr_t)k->u.quant.expressed);
    h = quill_hash_u64(h, (uint64_t)(int64_t)k->u.quant.axis);
    h = quill_hash_u64(h, (uint64_t)k->u.quant.qmin);
    h = quill_hash_u64(h, (uint64_t)k->u.quant.qmax);
    h = quill_hash_bytes(h, k->u.quant.scales, k->u.quant.n * sizeof(double));
    h = quill_hash_bytes(h, k->u.quant.zero_points,
                         k->u.quant.n * sizeof(int64_t));
  } else {
    h = quill_hash_u64(h, (uint64_t)(uintptr_t)k->u.tensor.elem);
    h = quill_hash_bytes(h, k->u.tensor.dims,
                         k->u.tensor.rank * sizeof(int64_t));
  }
  return h;
}

static bool type_eq(const void *entry, const void *key) {
  const quill_type *a = entry, *b = key;
  if (a->kind != b->kind)
    return false;
  if (a->kind == QUILL_TYPE_QUANT) {
    return a->u.quant.storage == b->u.quant.storage &&
           a->u.quant.expressed == b->u.quant.expressed &&
           a->u.quant.axis == b->u.quant.axis &&
           a->u.quant.qmin == b->u.quant.qmin &&
           a->u.quant.qmax == b->u.quant.qmax && a->u.quant.n == b->u.quant.n &&
           memcmp(a->u.quant.scales, b->u.quant.scales,
                  a->u.quant.n * sizeof(double)) == 0 &&
           memcmp(a->u.quant.zero_points, b->u.quant.zero_points,
                  a->u.quant.n * sizeof(int64_t)) == 0;
  }
  /* rank 0: dims may be NULL, which memcmp must not get even for 0 bytes */
  return a->u.tensor.elem == b->u.tensor.elem &&
         a->u.tensor.rank == b->u.tensor.rank &&
         (a->u.tensor.rank == 0 ||
          memcmp(a->u.tensor.dims, b->u.tensor.dims,
                 a->u.tensor.rank * sizeof(int64_t)) == 0);
}

/* Return the uniqued copy of `key` (whose arrays point at caller memory). */
static quill_type *unique(quill_context *ctx, quill_type *key) {
  uint64_t h = hash_type(key);
  quill_type *t = quill_uniq_lookup(&ctx->types, h, type_eq, key);
  if (t)
    return t;
  size_t extra;
  if (key->kind == QUILL_TYPE_QUANT)
    extra = key->u.quant.n * (sizeof(double) + sizeof(int64_t));
  else
    extra = key->u.tensor.rank * sizeof(int64_t);
  size_t size = sizeof *t + extra;
  t = quill_alloc(ctx, size);
  if (!t)
    return NULL;
  *t = *key;
  t->alloc_size = size;
  t->hash = h;
  char *tail = (char *)(t + 1);
  if (key->kind == QUILL_TYPE_QUANT) {
    size_t n = key->u.quant.n;
    t->u.quant.scales = (double *)tail;
    t->u.quant.zero_points = (int64_t *)(tail + n * sizeof(double));
    memcpy(t->u.quant.scales, key->u.quant.scales, n * sizeof(double));
    memcpy(t->u.quant.zero_points, key->u.quant.zero_points,
           n * sizeof(int64_t));
  } else {
    t->u.tensor.dims = (int64_t *)tail;
    if (key->u.tensor.rank)
      memcpy(t->u.tensor.dims, key->u.tensor.dims,
             key->u.tensor.rank * sizeof(int64_t));
  }
  if (quill_uniq_insert(ctx, &ctx->types, h, t) != QUILL_OK) {
    quill_free(ctx, t, size);
    return NULL;
  }
  return t;
}

/* ---- constructors ------------------------------------------------------ */

static bool valid_storage(const quill_type *s) {
  if (!s)
    return false;
  switch (s->kind) {
  case QUILL_TYPE_I4:
  case QUILL_TYPE_I8:
  case QUILL_TYPE_I16:
  case QUILL_TYPE_I32:
  case QUILL_TYPE_U4:
  case QUILL_TYPE_U8:
  case QUILL_TYPE_U16:
    return true;
  default:
    return false;
  }
}

const char *quill_type_quant_check(const quill_type *storage,
                                   const quill_type *expressed, size_t n,
                                   const double *scales,
                                   const int64_t *zero_points, int64_t qmin,
                                   int64_t qmax) {
  if (!valid_storage(storage))
    return "storage type must be one of i4, i8, i16, i32, u4, u8, u16";
  if (!expressed || !quill_type_is_float(expressed))
    return "expressed type must be a float type";
  if (n == 0 || !scales || !zero_points)
    return "at least one scale and zero point is required";
  if (qmin > qmax)
    return "storage range is empty (min > max)";
  if (qmin < quill_type_int_min(storage) || qmax > quill_type_int_max(storage))
    return "storage range exceeds the storage type's range";
  for (size_t i = 0; i < n; i++) {
    if (!(scales[i] > 0) || !isfinite(scales[i]))
      return "scale must be positive and finite";
    if (zero_points[i] < qmin || zero_points[i] > qmax)
      return "zero point must lie within the storage range";
  }
  return NULL;
}

quill_type *quill_type_quant(quill_context *ctx, quill_type *storage,
                             quill_type *expressed, double scale,
                             int64_t zero_point, int64_t qmin, int64_t qmax) {
  if (quill_type_quant_check(storage, expressed, 1, &scale, &zero_point, qmin,
                             qmax))
    return NULL;
  quill_type key;
  memset(&key, 0, sizeof key);
  key.kind = QUILL_TYPE_QUANT;
  key.u.quant.storage = storage;
  key.u.quant.expressed = expressed;
  key.u.quant.axis = -1;
  key.u.quant.n = 1;
  key.u.quant.scales = &scale;
  key.u.quant.zero_points = &zero_point;
  key.u.quant.qmin = qmin;
  key.u.quant.qmax = qmax;
  return unique(ctx, &key);
}

quill_type *quill_type_quant_axis(quill_context *ctx, quill_type *storage,
                                  quill_type *expressed, int32_t axis, size_t n,
                                  const double *scales,
                                  const int64_t *zero_points, int64_t qmin,
                                  int64_t qmax) {
  if (axis < 0 || quill_type_quant_check(storage, expressed, n, scales,
                                         zero_points, qmin, qmax))
    return NULL;
  if (n > (SIZE_MAX / 2 - sizeof(quill_type)) / 16)
    return NULL;
  quill_type key;
  memset(&key, 0, sizeof key);
  key.kind = QUILL_TYPE_QUANT;
  key.u.quant.storage = storage;
  key.u.quant.expressed = expressed;
  key.u.quant.axis = axis;
  key.u.quant.n = n;
  key.u.quant.scales = (double *)scales;
  key.u.quant.zero_points = (int64_t *)zero_points;
  key.u.quant.qmin = qmin;
  key.u.quant.qmax = qmax;
  return unique(ctx, &key);
}

quill_type *quill_type_tensor(quill_context *ctx, quill_type *elem,
                              unsigned rank, const int64_t *dims) {
  if (!elem || elem->kind == QUILL_TYPE_TENSOR || rank > QUILL_MAX_RANK ||
      (rank && !dims))
    return NULL;
  for (unsigned i = 0; i < rank; i++)
    if ((dims[i] < 0 && dims[i] != QUILL_DIM_DYNAMIC) || dims[i] > QUILL_MAX_DIM)
      return NULL;
  quill_type key;
  memset(&key, 0, sizeof key);
  key.kind = QUILL_TYPE_TENSOR;
  key.u.tensor.elem = elem;
  key.u.tensor.rank = rank;
  key.u.tensor.dims = (int64_t *)dims;
  return unique(ctx, &key);
}

quill_type *quill_type_with_elem(quill_context *ctx, const quill_type *t,
                                 quill_type *elem) {
  assert(t->kind == QUILL_TYPE_TENSOR);
  if (t->u.tensor.elem == elem)
    return (quill_type *)t;
  return quill_type_tensor(ctx, elem, t->u.tensor.rank, t->u.tensor.dims);
}

/* ---- queries ----------------------------------------------------------- */

bool quill_type_is_scalar(const quill_type *t) {
  return t && t->kind < QUILL_TYPE_QUANT;
}

bool quill_type_is_float(const quill_type *t) {
  return t && (t->kind == QUILL_TYPE_F32 || t->kind == QUILL_TYPE_F16 ||
               t->kind == QUILL_TYPE_BF16 || t->kind == QUILL_TYPE_F64);
}

bool quill_type_is_integer(const quill_type *t) {
  return t && t->kind >= QUILL_TYPE_I4 && t->kind <= QUILL_TYPE_U64;
}

bool quill_type_is_signed(const quill_type *t) {
  return t && t->kind >= QUILL_TYPE_I4 && t->kind <= QUILL_TYPE_I64;
}

bool quill_type_is_quant(const quill_type *t) {
  return t && t->kind == QUILL_TYPE_QUANT;
}

bool quill_type_is_tensor(const quill_type *t) {
  return t && t->kind == QUILL_TYPE_TENSOR;
}

unsigned quill_type_bit_width(const quill_type *t) {
  if (t->kind == QUILL_TYPE_QUANT)
    return quill_type_bit_width(t->u.quant.storage);
  if (t->kind == QUILL_TYPE_TENSOR)
    return quill_type_bit_width(t->u.tensor.elem);
  return scalar_bits[t->kind];
}

size_t quill_type_elem_bytes(const quill_type *t) {
  unsigned bits = quill_type_bit_width(t);
  return bits < 8 ? 1 : bits / 8;
}

const char *quill_type_scalar_name(quill_type_kind kind) {
  if ((unsigned)kind >= QUILL_TYPE_QUANT)
    return NULL;
  return scalar_names[kind];
}

int64_t quill_type_int_min(const quill_type *t) {
  if (t->kind == QUILL_TYPE_QUANT)
    return t->u.quant.qmin;
  if (t->kind == QUILL_TYPE_BOOL || !quill_type_is_signed(t))
    return 0;
  unsigned bits = scalar_bits[t->kind];
  return bits >= 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
}

int64_t quill_type_int_max(const quill_type *t) {
  if (t->kind == QUILL_TYPE_QUANT)
    return t->u.quant.qmax;
  if (t->kind == QUILL_TYPE_BOOL)
    return 1;
  unsigned bits = scalar_bits[t->kind];
  if (quill_type_is_signed(t))
    return bits >= 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
  /* u64 saturates at INT64_MAX: the range is reported as int64_t. */
  return bits >= 63 ? INT64_MAX : (INT64_C(1) << bits) - 1;
}

quill_type *quill_type_elem(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_TENSOR);
  return t->u.tensor.elem;
}

unsigned quill_type_rank(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_TENSOR);
  return t->u.tensor.rank;
}

int64_t quill_type_dim(const quill_type *t, unsigned i) {
  assert(t->kind == QUILL_TYPE_TENSOR && i < t->u.tensor.rank);
  return t->u.tensor.dims[i];
}

const int64_t *quill_type_dims(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_TENSOR);
  return t->u.tensor.dims;
}

bool quill_type_has_static_shape(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_TENSOR);
  for (unsigned i = 0; i < t->u.tensor.rank; i++)
    if (t->u.tensor.dims[i] == QUILL_DIM_DYNAMIC)
      return false;
  return true;
}

int64_t quill_type_num_elements(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_TENSOR);
  int64_t n = 1;
  for (unsigned i = 0; i < t->u.tensor.rank; i++) {
    int64_t d = t->u.tensor.dims[i];
    if (d < 0)
      return -1;
    if (d && n > INT64_MAX / d)
      return -1;
    n *= d;
  }
  return n;
}

quill_type *quill_type_quant_storage(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_QUANT);
  return t->u.quant.storage;
}

quill_type *quill_type_quant_expressed(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_QUANT);
  return t->u.quant.expressed;
}

int32_t quill_type_quant_axis_of(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_QUANT);
  return t->u.quant.axis;
}

size_t quill_type_quant_num_params(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_QUANT);
  return t->u.quant.n;
}

const double *quill_type_quant_scales(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_QUANT);
  return t->u.quant.scales;
}

const int64_t *quill_type_quant_zero_points(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_QUANT);
  return t->u.quant.zero_points;
}

int64_t quill_type_quant_qmin(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_QUANT);
  return t->u.quant.qmin;
}

int64_t quill_type_quant_qmax(const quill_type *t) {
  assert(t->kind == QUILL_TYPE_QUANT);
  return t->u.quant.qmax;
}

/* ---- printing ---------------------------------------------------------- */

/*   !quant.uniform<i8:f32, 0.5:-3>
 *   !quant.uniform<i8<-127:127>:f32, 0.5:0>
 *   !quant.uniform<i8:f32:0, {0.1:0, 0.2:0}>                              */
static void print_quant(const quill_type *t, quill_strbuf *sb) {
  const quill_type *st = t->u.quant.storage;
  quill_strbuf_puts(sb, "!quant.uniform<");
  quill_strbuf_puts(sb, scalar_names[st->kind]);
  if (t->u.quant.qmin != quill_type_int_min(st) ||
      t->u.quant.qmax != quill_type_int_max(st))
    quill_strbuf_printf(sb, "<%lld:%lld>", (long long)t->u.quant.qmin,
                        (long long)t->u.quant.qmax);
  quill_strbuf_putc(sb, ':');
  quill_strbuf_puts(sb, scalar_names[t->u.quant.expressed->kind]);
  if (t->u.quant.axis >= 0)
    quill_strbuf_printf(sb, ":%d, {", (int)t->u.quant.axis);
  else
    quill_strbuf_puts(sb, ", ");
  for (size_t i = 0; i < t->u.quant.n; i++) {
    if (i)
      quill_strbuf_puts(sb, ", ");
    quill_strbuf_put_double(sb, t->u.quant.scales[i]);
    quill_strbuf_printf(sb, ":%lld", (long long)t->u.quant.zero_points[i]);
  }
  if (t->u.quant.axis >= 0)
    quill_strbuf_putc(sb, '}');
  quill_strbuf_putc(sb, '>');
}

void quill_type_print(const quill_type *t, quill_strbuf *sb) {
  if (!t) {
    quill_strbuf_puts(sb, "<<null type>>");
    return;
  }
  if (t->kind < QUILL_TYPE_QUANT) {
    quill_strbuf_puts(sb, scalar_names[t->kind]);
  } else if (t->kind == QUILL_TYPE_QUANT) {
    print_quant(t, sb);
  } else {
    quill_strbuf_puts(sb, "tensor<");
    for (unsigned i = 0; i < t->u.tensor.rank; i++) {
      if (t->u.tensor.dims[i] == QUILL_DIM_DYNAMIC)
        quill_strbuf_putc(sb, '?');
      else
        quill_strbuf_printf(sb, "%lld", (long long)t->u.tensor.dims[i]);
      quill_strbuf_putc(sb, 'x');
    }
    quill_type_print(t->u.tensor.elem, sb);
    quill_strbuf_putc(sb, '>');
  }
}

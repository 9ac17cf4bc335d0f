/*
 * tensor.c - ONNX tensors and types for the importer: data type mapping,
 * TensorProto -> dense attribute (raw_data, the typed repeated fields, or
 * external data files), the --input-shape parser, the name map and the
 * protobuf-c allocator.
 *
 * Where a TensorProto keeps its elements:
 *
 *   data_location == EXTERNAL   file `location` (relative to the model dir),
 *                               bytes [offset, offset + length); the file
 *                               must resolve (realpath) inside the model
 *                               dir and be a regular file (ir/readfile.h)
 *   raw_data                    little-endian bytes, bool one byte each
 *   float_data                  FLOAT
 *   int32_data                  INT32 INT16 INT8 UINT16 UINT8 BOOL, and the
 *                               bit patterns of FLOAT16 / BFLOAT16
 *   int64_data                  INT64
 *   double_data                 DOUBLE
 *   uint64_data                 UINT32 UINT64
 *
 * Everything is copied into one host buffer of num_elements * elem_bytes
 * bytes and handed to quill_attr_dense (which copies it again into the
 * context). The host is assumed little-endian, as ir/attr.h does.
 */
#define _DEFAULT_SOURCE /* realpath() */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontends/onnx/onnx_impl.h"
#include "ir/readfile.h"

/* ---- name map (ir/hmap.h with string keys) ------------------------------- */

void onnx_map_init(onnx_map *m, quill_context *ctx) {
  memset(m, 0, sizeof *m);
  m->ctx = ctx;
}

void onnx_map_free(onnx_map *m) { quill_hmap_free(m->ctx, &m->h); }

void *onnx_map_get(const onnx_map *m, const char *key) {
  return quill_hmap_get(&m->h, key, true);
}

quill_status onnx_map_put(onnx_map *m, const char *key, void *val) {
  return quill_hmap_put(m->ctx, &m->h, key, val, true) ? QUILL_OK
                                                       : QUILL_ERR_NOMEM;
}

/* ---- protobuf-c allocator over the quill funnel ------------------------- */

/* protobuf-c frees without a size; the funnel wants one: keep it in a
 * header in front of the block. */
#define PB_HDR 16

static void *pb_alloc(void *ud, size_t size) {
  if (size > SIZE_MAX - PB_HDR)
    return NULL;
  unsigned char *p = quill_alloc(ud, size + PB_HDR);
  if (!p)
    return NULL;
  memcpy(p, &size, sizeof size);
  return p + PB_HDR;
}

static void pb_free(void *ud, void *ptr) {
  if (!ptr)
    return;
  unsigned char *p = (unsigned char *)ptr - PB_HDR;
  size_t size;
  memcpy(&size, p, sizeof size);
  quill_free(ud, p, size + PB_HDR);
}

ProtobufCAllocator onnx_pb_allocator(quill_context *ctx) {
  ProtobufCAllocator al = {pb_alloc, pb_free, ctx};
  return al;
}

/* ---- data types ---------------------------------------------------------- */

typedef struct dtype_info {
  const char *name;
  quill_type_kind kind; /* QUILL_TYPE_KIND_COUNT: unsupported */
} dtype_info;

static const dtype_info dtypes[] = {
    [ONNX__TENSOR_PROTO__DATA_TYPE__UNDEFINED] = {"UNDEFINED", QUILL_TYPE_KIND_COUNT},
    [ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT] = {"FLOAT", QUILL_TYPE_F32},
    [ONNX__TENSOR_PROTO__DATA_TYPE__UINT8] = {"UINT8", QUILL_TYPE_U8},
    [ONNX__TENSOR_PROTO__DATA_TYPE__INT8] = {"INT8", QUILL_TYPE_I8},
    [ONNX__TENSOR_PROTO__DATA_TYPE__UINT16] = {"UINT16", QUILL_TYPE_U16},
    [ONNX__TENSOR_PROTO__DATA_TYPE__INT16] = {"INT16", QUILL_TYPE_I16},
    [ONNX__TENSOR_PROTO__DATA_TYPE__INT32] = {"INT32", QUILL_TYPE_I32},
    [ONNX__TENSOR_PROTO__DATA_TYPE__INT64] = {"INT64", QUILL_TYPE_I64},
    [ONNX__TENSOR_PROTO__DATA_TYPE__STRING] = {"STRING", QUILL_TYPE_KIND_COUNT},
    [ONNX__TENSOR_PROTO__DATA_TYPE__BOOL] = {"BOOL", QUILL_TYPE_BOOL},
    [ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16] = {"FLOAT16", QUILL_TYPE_F16},
    [ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE] = {"DOUBLE", QUILL_TYPE_F64},
    [ONNX__TENSOR_PROTO__DATA_TYPE__UINT32] = {"UINT32", QUILL_TYPE_U32},
    [ONNX__TENSOR_PROTO__DATA_TYPE__UINT64] = {"UINT64", QUILL_TYPE_U64},
    [ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64] = {"COMPLEX64", QUILL_TYPE_KIND_COUNT},
    [ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX128] = {"COMPLEX128", QUILL_TYPE_KIND_COUNT},
    [ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16] = {"BFLOAT16", QUILL_TYPE_BF16},
};

#define NUM_DTYPES (sizeof dtypes / sizeof dtypes[0])

const char *onnx_data_type_name(int32_t dt) {
  if (dt >= 0 && (size_t)dt < NUM_DTYPES && dtypes[dt].name)
    return dtypes[dt].name;
  return "unknown";
}

quill_type *onnx_elem_type(quill_context *ctx, int32_t dt) {
  if (dt <= 0 || (size_t)dt >= NUM_DTYPES || !dtypes[dt].name ||
      dtypes[dt].kind == QUILL_TYPE_KIND_COUNT)
    return NULL;
  return quill_type_scalar(ctx, dtypes[dt].kind);
}

/* ---- tensor data --------------------------------------------------------- */

/* Which typed field holds elements of this data type. */
typedef enum field { F_NONE, F_FLOAT, F_INT32, F_INT64, F_DOUBLE, F_UINT64 } field;

static field typed_field(int32_t dt) {
  switch (dt) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
    return F_FLOAT;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
    return F_INT64;
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
    return F_DOUBLE;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64:
    return F_UINT64;
  default:
    return F_INT32;
  }
}

/* True if the relative path stays below its base (no absolute path, no
 * ".." component). */
static bool safe_relative_path(const char *p) {
  if (!*p || p[0] == '/')
    return false;
  for (const char *s = p; *s;) {
    const char *e = strchr(s, '/');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    if (n == 2 && s[0] == '.' && s[1] == '.')
      return false;
    s += n;
    while (*s == '/')
      s++;
  }
  return true;
}

/* Resolve path (realpath: symlinks followed) into real (PATH_MAX bytes)
 * and check that it lies inside the model's directory, itself resolved: a
 * symlink such as `link -> /etc/passwd` is refused as `../x` is. */
static quill_status inside_base(onnx_importer *im, const char *tname,
                                quill_loc loc, const char *path,
                                char *real) {
  quill_context *ctx = im->ctx;
  char base[PATH_MAX];
  if (!realpath(im->base_dir, base))
    return quill_error(ctx, loc,
                       "initializer '%s': cannot open the model directory "
                       "'%s' for external data: %s",
                       tname, im->base_dir, strerror(errno));
  if (!realpath(path, real))
    return quill_error(ctx, loc,
                       "initializer '%s': cannot open external data file '%s': "
                       "%s",
                       tname, path, strerror(errno));
  size_t n = strcmp(base, "/") ? strlen(base) : 0; /* "/": all inside */
  if (strncmp(real, base, n) != 0 || real[n] != '/')
    return quill_error(ctx, loc,
                       "initializer '%s': external data file '%s' resolves to "
                       "'%s', outside the model directory '%s'",
                       tname, path, real, base);
  return QUILL_OK;
}

/* Read `size` bytes of external data into a new buffer *out (size + 1
 * bytes, freed by the caller), after checking that the file holds them. */
static quill_status read_external(onnx_importer *im, const Onnx__TensorProto *t,
                                  const char *tname, quill_loc loc,
                                  size_t size, unsigned char **out) {
  *out = NULL;
  quill_context *ctx = im->ctx;
  const char *location = NULL;
  int64_t offset = 0, length = -1;
  for (size_t i = 0; i < t->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = t->external_data[i];
    if (!e->key || !e->value)
      continue;
    char *end;
    if (!strcmp(e->key, "location")) {
      location = e->value;
    } else if (!strcmp(e->key, "offset") || !strcmp(e->key, "length")) {
      errno = 0;
      long long v = strtoll(e->value, &end, 10);
      if (errno || *end || end == e->value || v < 0)
        return quill_error(ctx, loc,
                           "initializer '%s': invalid external data %s '%s'",
                           tname, e->key, e->value);
      *(e->key[0] == 'o' ? &offset : &length) = v;
    }
  }
  if (!location)
    return quill_error(ctx, loc,
                       "initializer '%s': external data has no 'location'",
                       tname);
  if (!safe_relative_path(location))
    return quill_error(ctx, loc,
                       "initializer '%s': external data location '%s' must be "
                       "a relative path inside the model directory",
                       tname, location);
  if (length >= 0 && (uint64_t)length != size)
    return quill_error(ctx, loc,
                       "initializer '%s': external data length %lld does not "
                       "match the tensor size %zu",
                       tname, (long long)length, size);
  size_t plen = strlen(im->base_dir) + strlen(location) + 2;
  char *path = quill_alloc(ctx, plen);
  if (!path)
    return QUILL_ERR_NOMEM;
  size_t blen = strlen(im->base_dir);
  snprintf(path, plen, "%s%s%s", im->base_dir,
           blen && im->base_dir[blen - 1] == '/' ? "" : "/", location);
  char real[PATH_MAX];
  int fd = -1;
  quill_status st = inside_base(im, tname, loc, path, real);
  uint64_t fsize = 0;
  int err = st ? 0 : quill_open_regular(real, QUILL_READ_MAX_DATA, &fd, &fsize);
  if (err)
    st = quill_error(ctx, loc,
                     "initializer '%s': cannot open external data file '%s': "
                     "%s",
                     tname, path, quill_read_strerror(err, 0));
  /* The file's size first: the tensor's declared size is not to be
   * trusted with an allocation. offset <= fsize, then size <= the rest:
   * no sum that can overflow. */
  unsigned char *buf = NULL;
  if (!st && ((uint64_t)offset > fsize || fsize - (uint64_t)offset < size))
    st = quill_error(ctx, loc,
                     "initializer '%s': external data file '%s' is too "
                     "short (need %zu bytes at offset %lld, the file has "
                     "%llu)",
                     tname, path, size, (long long)offset,
                     (unsigned long long)fsize);
  else if (!st && !(buf = quill_alloc(ctx, size + 1)))
    st = QUILL_ERR_NOMEM;
  for (size_t got = 0; !st && got < size;) {
    ssize_t r = pread(fd, buf + got, size - got, (off_t)(offset + got));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      st = quill_error(ctx, loc,
                       "initializer '%s': cannot read external data file "
                       "'%s'%s%s",
                       tname, path, r < 0 ? ": " : " (it shrank)",
                       r < 0 ? strerror(errno) : "");
    else
      got += (size_t)r;
  }
  if (fd >= 0)
    close(fd);
  if (st)
    quill_free(ctx, buf, buf ? size + 1 : 0);
  else
    *out = buf;
  quill_free(ctx, path, plen);
  return st;
}

/* The number of values in the typed field that holds t's elements. */
static size_t typed_count(const Onnx__TensorProto *t) {
  switch (typed_field(t->data_type)) {
  case F_FLOAT: return t->n_float_data;
  case F_INT64: return t->n_int64_data;
  case F_DOUBLE: return t->n_double_data;
  case F_UINT64: return t->n_uint64_data;
  default: return t->n_int32_data;
  }
}

/* Copy the typed field's values (typed_count(t) == count) into buf. */
static void fill_typed(const Onnx__TensorProto *t, quill_type *elem,
                       unsigned char *buf, size_t count) {
  field f = typed_field(t->data_type);
  size_t eb = quill_type_elem_bytes(elem);
  for (size_t i = 0; i < count; i++) {
    unsigned char *p = buf + i * eb;
    switch (f) {
    case F_FLOAT: memcpy(p, &t->float_data[i], 4); break;
    case F_INT64: memcpy(p, &t->int64_data[i], 8); break;
    case F_DOUBLE: memcpy(p, &t->double_data[i], 8); break;
    case F_UINT64:
      if (eb == 8) {
        memcpy(p, &t->uint64_data[i], 8);
      } else {
        uint32_t v = (uint32_t)t->uint64_data[i];
        memcpy(p, &v, 4);
      }
      break;
    default: {
      /* int32_data holds the value (or f16/bf16 bits) widened to 32 bits:
       * keep the low eb bytes (little endian). */
      uint32_t v = (uint32_t)t->int32_data[i];
      if (quill_type_kind_of(elem) == QUILL_TYPE_BOOL)
        v = v != 0;
      memcpy(p, &v, eb);
      break;
    }
    }
  }
}

quill_status onnx_tensor_to_attr(onnx_importer *im, const Onnx__TensorProto *t,
                                 quill_loc loc, const quill_attr **out) {
  quill_context *ctx = im->ctx;
  const char *tname = t->name && *t->name ? t->name : "<unnamed>";
  *out = NULL;
  quill_type *elem = onnx_elem_type(ctx, t->data_type);
  if (!elem)
    return quill_error(ctx, loc, "initializer '%s' has unsupported data type %s",
                       tname, onnx_data_type_name(t->data_type));
  if (t->n_dims > QUILL_MAX_RANK)
    return quill_error(ctx, loc, "initializer '%s' has rank %zu (at most %d)",
                       tname, t->n_dims, QUILL_MAX_RANK);
  if (t->segment)
    return quill_error(ctx, loc, "initializer '%s' is segmented (unsupported)",
                       tname);
  size_t count = 1, eb = quill_type_elem_bytes(elem);
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0)
      return quill_error(ctx, loc, "initializer '%s' has negative dimension "
                                   "%lld",
                         tname, (long long)t->dims[i]);
    if (t->dims[i] > QUILL_MAX_DIM)
      return quill_error(ctx, loc,
                         "initializer '%s' has dimension %lld at index %zu "
                         "(at most %lld)",
                         tname, (long long)t->dims[i], i,
                         (long long)QUILL_MAX_DIM);
    if (t->dims[i] && count > (SIZE_MAX / 16) / (size_t)t->dims[i])
      return quill_error(ctx, loc, "initializer '%s' is too large", tname);
    count *= (size_t)t->dims[i];
  }
  quill_type *type = quill_type_tensor(ctx, elem, (unsigned)t->n_dims, t->dims);
  if (!type)
    return QUILL_ERR_NOMEM;
  size_t size = count * eb;
  bool external = t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  /* Sanity bounds before allocating: inline data must be in the message
   * (external data in its file, checked by read_external). */
  if (!external && t->has_raw_data && t->raw_data.len != size)
    return quill_error(ctx, loc,
                       "initializer '%s' has %zu bytes of raw_data, expected "
                       "%zu",
                       tname, t->raw_data.len, size);
  if (!external && !t->has_raw_data && typed_count(t) != count)
    return quill_error(ctx, loc,
                       "initializer '%s' has %zu values for %zu elements",
                       tname, typed_count(t), count);
  unsigned char *buf = NULL;
  quill_status st = QUILL_OK;
  if (external) {
    st = read_external(im, t, tname, loc, size, &buf);
    if (st)
      return st;
  } else {
    buf = quill_alloc(ctx, size + 1);
    if (!buf)
      return QUILL_ERR_NOMEM;
    if (t->has_raw_data && size)
      memcpy(buf, t->raw_data.data, size);
    else
      fill_typed(t, elem, buf, count);
  }
  if (!st && quill_type_kind_of(elem) == QUILL_TYPE_BOOL)
    for (size_t i = 0; i < count; i++)
      buf[i] = buf[i] != 0;
  if (!st) {
    *out = quill_attr_dense(ctx, type, buf, size);
    if (!*out)
      st = QUILL_ERR_NOMEM;
  }
  quill_free(ctx, buf, size + 1);
  return st;
}

/* ---- --input-shape name=d0,d1,... ----------------------------------------- */

quill_status onnx_parse_input_shape(quill_context *ctx, const char *spec,
                                    const char **name, size_t *name_len,
                                    quill_shape *shape) {
  const char *eq = strrchr(spec, '=');
  if (!eq || eq == spec)
    return quill_error(ctx, quill_loc_unknown(),
                       "invalid input shape '%s': expected name=d0,d1,...",
                       spec);
  *name = spec;
  *name_len = (size_t)(eq - spec);
  shape->rank = 0;
  const char *p = eq + 1;
  while (*p) {
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno || v < 0 || (*end && *end != ',') ||
        shape->rank == QUILL_MAX_RANK)
      return quill_error(ctx, quill_loc_unknown(),
                         "invalid input shape '%s': dimensions must be "
                         "non-negative integers separated by ','",
                         spec);
    if (v > QUILL_MAX_DIM)
      return quill_error(ctx, quill_loc_unknown(),
                         "invalid input shape '%s': dimension %lld is too "
                         "large (at most %lld)",
                         spec, v, (long long)QUILL_MAX_DIM);
    shape->dims[shape->rank++] = v;
    p = *end ? end + 1 : end;
    if (*end && !*p)
      return quill_error(ctx, quill_loc_unknown(),
                         "invalid input shape '%s': trailing ','", spec);
  }
  return QUILL_OK;
}

/*
 * proto.c - building blocks of the ONNX exporter: the arena every
 * protobuf-c message lives in and the name/value maps (ir/arena.h and
 * ir/hmap.h, with out-of-memory recorded in ex->nomem), and helpers that make
 * NodeProto / AttributeProto / TensorProto / ValueInfoProto messages.
 *
 * protobuf-c's generated structs are filled in by hand (INIT macro, then
 * fields) and packed once by export.c; nothing here is ever freed one by
 * one. They live in the exporter's arena (ir/arena.h: chunks allocated
 * through the context funnel):
 *
 *   ex->arena -> [chunk: NodeProto, "conv1", AttributeProto, ...] -> ...
 *
 * Growable arrays (ex_vec, node attribute lists) double into a new arena
 * block and leave the old one behind: at most 2x waste, no frees.
 * An allocation failure sets ex->nomem; callers check it once at the end.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "targets/onnx/export_impl.h"

/* ---- arena (ir/arena.h; a failure sets nomem) ------------------------------- */

void *ex_alloc(onnx_exporter *ex, size_t size) {
  void *p = quill_arena_alloc(&ex->arena, size);
  ex->nomem |= !p;
  return p;
}

char *ex_strdup(onnx_exporter *ex, const char *s) {
  char *p = quill_arena_strdup(&ex->arena, s);
  ex->nomem |= !p;
  return p;
}

char *ex_printf(onnx_exporter *ex, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = quill_arena_vprintf(&ex->arena, fmt, ap);
  va_end(ap);
  ex->nomem |= !p;
  return p;
}

void ex_vec_push(onnx_exporter *ex, ex_vec *v, void *item) {
  if (v->n == v->cap) {
    size_t ncap = v->cap ? v->cap * 2 : 16;
    void **ni = ex_alloc(ex, ncap * sizeof *ni);
    if (!ni)
      return;
    if (v->n)
      memcpy(ni, v->items, v->n * sizeof *ni);
    v->items = ni;
    v->cap = ncap;
  }
  v->items[v->n++] = item;
}

/* ---- maps (ir/hmap.h) -------------------------------------------------------- */

void *ex_smap_get(const ex_map *m, const char *key) {
  return quill_hmap_get(m, key, true);
}
void ex_smap_put(onnx_exporter *ex, ex_map *m, const char *key, void *val) {
  ex->nomem |= !quill_hmap_put(ex->ctx, m, key, val, true);
}
void *ex_pmap_get(const ex_map *m, const void *key) {
  return quill_hmap_get(m, key, false);
}
void ex_pmap_put(onnx_exporter *ex, ex_map *m, const void *key, void *val) {
  ex->nomem |= !quill_hmap_put(ex->ctx, m, key, val, false);
}
void ex_map_free(onnx_exporter *ex, ex_map *m) { quill_hmap_free(ex->ctx, m); }

/* ---- data types --------------------------------------------------------------- */

static const int32_t dtypes[QUILL_TYPE_KIND_COUNT] = {
    [QUILL_TYPE_F32] = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
    [QUILL_TYPE_F16] = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16,
    [QUILL_TYPE_BF16] = ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16,
    [QUILL_TYPE_F64] = ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE,
    [QUILL_TYPE_BOOL] = ONNX__TENSOR_PROTO__DATA_TYPE__BOOL,
    [QUILL_TYPE_I8] = ONNX__TENSOR_PROTO__DATA_TYPE__INT8,
    [QUILL_TYPE_I16] = ONNX__TENSOR_PROTO__DATA_TYPE__INT16,
    [QUILL_TYPE_I32] = ONNX__TENSOR_PROTO__DATA_TYPE__INT32,
    [QUILL_TYPE_I64] = ONNX__TENSOR_PROTO__DATA_TYPE__INT64,
    [QUILL_TYPE_U8] = ONNX__TENSOR_PROTO__DATA_TYPE__UINT8,
    [QUILL_TYPE_U16] = ONNX__TENSOR_PROTO__DATA_TYPE__UINT16,
    [QUILL_TYPE_U32] = ONNX__TENSOR_PROTO__DATA_TYPE__UINT32,
    [QUILL_TYPE_U64] = ONNX__TENSOR_PROTO__DATA_TYPE__UINT64,
    /* i4 / u4: ONNX has INT4/UINT4 only from IR version 10 (0 = none). */
};

int32_t ex_dtype(const quill_type *elem) {
  if (quill_type_is_quant(elem))
    elem = quill_type_quant_storage(elem);
  quill_type_kind k = quill_type_kind_of(elem);
  return k < QUILL_TYPE_KIND_COUNT ? dtypes[k] : 0;
}

/* ---- nodes and attributes ----------------------------------------------------- */

/* Reserve a node name: the name itself, else "<name>#2", "#3"... */
static const char *unique_node_name(onnx_exporter *ex, const char *name) {
  const char *n = name;
  for (unsigned k = 2; n && ex_smap_get(&ex->node_names, n); k++)
    n = ex_printf(ex, "%s#%u", name, k);
  if (!n)
    return NULL;
  n = n == name ? ex_strdup(ex, name) : n;
  if (n)
    ex_smap_put(ex, &ex->node_names, n, (void *)n);
  return n;
}

Onnx__NodeProto *ex_node(onnx_exporter *ex, const char *op_type, unsigned nin,
                         const char *const *in, unsigned nout,
                         const char *const *out) {
  Onnx__NodeProto *n = ex_alloc(ex, sizeof *n);
  char **ins = ex_alloc(ex, (nin ? nin : 1) * sizeof *ins);
  char **outs = ex_alloc(ex, (nout ? nout : 1) * sizeof *outs);
  bool aux = ex->main_named || ex->aux_mode;
  const char *name =
      aux ? ex_printf(ex, "%s/%s", ex->node_base, op_type) : ex->node_base;
  name = name ? unique_node_name(ex, name) : NULL;
  if (!n || !ins || !outs || !name)
    return NULL;
  if (!ex->aux_mode)
    ex->main_named = true;
  Onnx__NodeProto init = ONNX__NODE_PROTO__INIT;
  *n = init;
  for (unsigned i = 0; i < nin; i++)
    ins[i] = (char *)(in[i] ? in[i] : "");
  for (unsigned i = 0; i < nout; i++)
    outs[i] = (char *)out[i];
  n->n_input = nin;
  n->input = ins;
  n->n_output = nout;
  n->output = outs;
  n->name = (char *)name;
  n->op_type = (char *)op_type;
  ex_vec_push(ex, &ex->nodes, n);
  return n;
}

static Onnx__AttributeProto *new_attr(onnx_exporter *ex, Onnx__NodeProto *n,
                                      const char *name,
                                      Onnx__AttributeProto__AttributeType t) {
  Onnx__AttributeProto *a = ex_alloc(ex, sizeof *a);
  if (!a || !n)
    return NULL;
  Onnx__AttributeProto init = ONNX__ATTRIBUTE_PROTO__INIT;
  *a = init;
  a->name = (char *)name;
  a->has_type = 1;
  a->type = t;
  /* Grow the node's attribute array (powers of two from 4). */
  size_t k = n->n_attribute;
  if (k == 0 || (k >= 4 && (k & (k - 1)) == 0)) {
    size_t cap = k ? 2 * k : 4;
    Onnx__AttributeProto **na = ex_alloc(ex, cap * sizeof *na);
    if (!na)
      return NULL;
    if (k)
      memcpy(na, n->attribute, k * sizeof *na);
    n->attribute = na;
  }
  n->attribute[n->n_attribute++] = a;
  return a;
}

void ex_attr_int(onnx_exporter *ex, Onnx__NodeProto *n, const char *name,
                 int64_t v) {
  Onnx__AttributeProto *a =
      new_attr(ex, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  if (a) {
    a->has_i = 1;
    a->i = v;
  }
}

void ex_attr_float(onnx_exporter *ex, Onnx__NodeProto *n, const char *name,
                   double v) {
  Onnx__AttributeProto *a =
      new_attr(ex, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  if (a) {
    a->has_f = 1;
    a->f = (float)v;
  }
}

void ex_attr_ints(onnx_exporter *ex, Onnx__NodeProto *n, const char *name,
                  size_t count, const int64_t *v) {
  Onnx__AttributeProto *a =
      new_attr(ex, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  int64_t *d = ex_alloc(ex, (count ? count : 1) * sizeof *d);
  if (a && d) {
    if (count)
      memcpy(d, v, count * sizeof *d);
    a->n_ints = count;
    a->ints = d;
  }
}

void ex_attr_floats(onnx_exporter *ex, Onnx__NodeProto *n, const char *name,
                    size_t count, const double *v) {
  Onnx__AttributeProto *a =
      new_attr(ex, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  float *d = ex_alloc(ex, (count ? count : 1) * sizeof *d);
  if (a && d) {
    for (size_t i = 0; i < count; i++)
      d[i] = (float)v[i];
    a->n_floats = count;
    a->floats = d;
  }
}

void ex_attr_string(onnx_exporter *ex, Onnx__NodeProto *n, const char *name,
                    const char *s, size_t len) {
  Onnx__AttributeProto *a =
      new_attr(ex, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  if (a) {
    a->has_s = 1;
    a->s.data = (uint8_t *)s;
    a->s.len = len;
  }
}

void ex_attr_tensor(onnx_exporter *ex, Onnx__NodeProto *n, const char *name,
                    Onnx__TensorProto *t) {
  Onnx__AttributeProto *a =
      new_attr(ex, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  if (a)
    a->t = t;
}

bool ex_attr_from_quill(onnx_exporter *ex, Onnx__NodeProto *n,
                        const char *name, const quill_attr *a) {
  switch (quill_attr_kind_of(a)) {
  case QUILL_ATTR_INT:
    ex_attr_int(ex, n, name, quill_attr_int_value(a));
    return true;
  case QUILL_ATTR_BOOL:
    ex_attr_int(ex, n, name, quill_attr_bool_value(a) ? 1 : 0);
    return true;
  case QUILL_ATTR_FLOAT:
    ex_attr_float(ex, n, name, quill_attr_float_value(a));
    return true;
  case QUILL_ATTR_STRING: {
    size_t len;
    const char *s = quill_attr_string_value(a, &len);
    ex_attr_string(ex, n, name, s, len);
    return true;
  }
  case QUILL_ATTR_LIST: {
    size_t cnt = quill_attr_list_size(a);
    bool ints = true, nums = true;
    for (size_t i = 0; i < cnt; i++) {
      quill_attr_kind k = quill_attr_kind_of(quill_attr_list_elem(a, i));
      ints = ints && k == QUILL_ATTR_INT;
      nums = nums && (k == QUILL_ATTR_INT || k == QUILL_ATTR_FLOAT);
    }
    if (!nums)
      return false;
    if (ints) {
      int64_t *v = ex_alloc(ex, (cnt ? cnt : 1) * sizeof *v);
      if (!v)
        return true;
      quill_attr_get_ints(a, v, cnt);
      ex_attr_ints(ex, n, name, cnt, v);
      return true;
    }
    double *v = ex_alloc(ex, cnt * sizeof *v);
    if (!v)
      return true;
    for (size_t i = 0; i < cnt; i++) {
      const quill_attr *e = quill_attr_list_elem(a, i);
      v[i] = quill_attr_kind_of(e) == QUILL_ATTR_INT
                 ? (double)quill_attr_int_value(e)
                 : quill_attr_float_value(e);
    }
    ex_attr_floats(ex, n, name, cnt, v);
    return true;
  }
  case QUILL_ATTR_TYPE:
  case QUILL_ATTR_DENSE:
    break;
  }
  return false;
}

/* ---- tensors and initializers ------------------------------------------------- */

Onnx__TensorProto *ex_tensor(onnx_exporter *ex, const char *name,
                             int32_t dtype, unsigned rank, const int64_t *dims,
                             const void *data, size_t nbytes, bool copy) {
  Onnx__TensorProto *t = ex_alloc(ex, sizeof *t);
  int64_t *d = ex_alloc(ex, (rank ? rank : 1) * sizeof *d);
  void *bytes = copy && nbytes ? ex_alloc(ex, nbytes) : (void *)data;
  if (!t || !d || (nbytes && !bytes))
    return NULL;
  Onnx__TensorProto init = ONNX__TENSOR_PROTO__INIT;
  *t = init;
  if (rank)
    memcpy(d, dims, rank * sizeof *d);
  if (copy && nbytes)
    memcpy(bytes, data, nbytes);
  t->n_dims = rank;
  t->dims = d;
  t->has_data_type = 1;
  t->data_type = dtype;
  t->name = (char *)name;
  t->has_raw_data = 1;
  t->raw_data.len = nbytes;
  t->raw_data.data = bytes;
  return t;
}

const char *ex_init(onnx_exporter *ex, const char *base, int32_t dtype,
                    unsigned rank, const int64_t *dims, const void *data,
                    size_t nbytes, bool copy) {
  const char *name = ex_fresh(ex, base);
  Onnx__TensorProto *t =
      name ? ex_tensor(ex, name, dtype, rank, dims, data, nbytes, copy) : NULL;
  if (!t)
    return NULL;
  ex_vec_push(ex, &ex->inits, t);
  return name;
}

const char *ex_init_i64s(onnx_exporter *ex, const char *base, size_t n,
                         const int64_t *v) {
  int64_t dim = (int64_t)n;
  return ex_init(ex, base, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, &dim, v,
                 n * sizeof *v, true);
}

const char *ex_init_f32s(onnx_exporter *ex, const char *base, bool scalar,
                         size_t n, const double *v) {
  float *f = ex_alloc(ex, (n ? n : 1) * sizeof *f);
  if (!f)
    return NULL;
  for (size_t i = 0; i < n; i++)
    f[i] = (float)v[i];
  int64_t dim = (int64_t)n;
  return ex_init(ex, base, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
                 scalar ? 0 : 1, &dim, f, n * sizeof *f, false);
}

const char *ex_init_scalar(onnx_exporter *ex, const char *base,
                           const quill_type *elem, double v) {
  if (quill_type_is_quant(elem))
    elem = quill_type_quant_storage(elem);
  unsigned char buf[8] = {0};
  size_t nb = quill_type_elem_bytes(elem);
  quill_type_kind k = quill_type_kind_of(elem);
  if (k == QUILL_TYPE_F32) {
    float f = (float)v;
    memcpy(buf, &f, 4);
  } else if (k == QUILL_TYPE_F64) {
    memcpy(buf, &v, 8);
  } else if (k == QUILL_TYPE_F16 || k == QUILL_TYPE_BF16) {
    uint16_t h = k == QUILL_TYPE_F16 ? quill_f32_to_f16((float)v)
                                     : quill_f32_to_bf16((float)v);
    memcpy(buf, &h, 2);
  } else if (k == QUILL_TYPE_BOOL) {
    buf[0] = v != 0;
  } else {
    int64_t i = (int64_t)v; /* little-endian: the low bytes come first */
    memcpy(buf, &i, 8);
  }
  return ex_init(ex, base, ex_dtype(elem), 0, NULL, buf, nb, true);
}

Onnx__ValueInfoProto *ex_value_info(onnx_exporter *ex, const char *name,
                                    const quill_type *t) {
  Onnx__ValueInfoProto *vi = ex_alloc(ex, sizeof *vi);
  Onnx__TypeProto *tp = ex_alloc(ex, sizeof *tp);
  Onnx__TypeProto__Tensor *tt = ex_alloc(ex, sizeof *tt);
  Onnx__TensorShapeProto *sp = ex_alloc(ex, sizeof *sp);
  unsigned rank = quill_type_rank(t);
  Onnx__TensorShapeProto__Dimension **dims =
      ex_alloc(ex, (rank ? rank : 1) * sizeof *dims);
  if (!vi || !tp || !tt || !sp || !dims)
    return NULL;
  Onnx__ValueInfoProto vinit = ONNX__VALUE_INFO_PROTO__INIT;
  Onnx__TypeProto tinit = ONNX__TYPE_PROTO__INIT;
  Onnx__TypeProto__Tensor ttinit = ONNX__TYPE_PROTO__TENSOR__INIT;
  Onnx__TensorShapeProto sinit = ONNX__TENSOR_SHAPE_PROTO__INIT;
  *vi = vinit;
  *tp = tinit;
  *tt = ttinit;
  *sp = sinit;
  for (unsigned i = 0; i < rank; i++) {
    Onnx__TensorShapeProto__Dimension *d = ex_alloc(ex, sizeof *d);
    if (!d)
      return NULL;
    Onnx__TensorShapeProto__Dimension dinit =
        ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    *d = dinit;
    int64_t dim = quill_type_dim(t, i);
    if (dim != QUILL_DIM_DYNAMIC) {
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      d->dim_value = dim;
    }
    dims[i] = d;
  }
  sp->n_dim = rank;
  sp->dim = dims;
  tt->has_elem_type = 1;
  tt->elem_type = ex_dtype(quill_type_elem(t));
  tt->shape = sp;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  vi->name = (char *)name;
  vi->type = tp;
  return vi;
}

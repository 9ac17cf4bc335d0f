/*
 * export.c - the TFLite exporter's driver: arena and maps (ir/arena.h,
 * ir/hmap.h, with out-of-memory recorded in ex->nomem), diagnostics,
 * tensors and ops of the lowered model, effective operands (QDQ folding
 * and aliases), and the export entry points.
 *
 *   quill_tflite_export_buffer(g)
 *     1. fold (fold.c): dequantize -> float op -> quantize patterns become
 *        int8 ops; identities alias their operand
 *     2. layout (layout.c): NCHW or NHWC per value
 *     3. graph arguments become the subgraph's input tensors
 *     4. ops in program order through tx_table (op_table.c); problems
 *        are reported op by op, the export fails at the end
 *     5. size check (2 GB), operator versions, serialization (writer.c)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/quant.h"
#include "ir/writefile.h"
#include "targets/tflite/export_impl.h"

/* ---- arena (ir/arena.h; a failure sets nomem) ------------------------------------- */

void *tx_alloc(tflite_exporter *ex, size_t size) {
  void *p = quill_arena_alloc(&ex->arena, size);
  ex->nomem |= !p;
  return p;
}

char *tx_strdup(tflite_exporter *ex, const char *s) {
  char *d = quill_arena_strdup(&ex->arena, s);
  ex->nomem |= !d;
  return d;
}

char *tx_printf(tflite_exporter *ex, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = quill_arena_vprintf(&ex->arena, fmt, ap);
  va_end(ap);
  ex->nomem |= !s;
  return s;
}

/* ---- maps (ir/hmap.h) ------------------------------------------------------------- */

void *tx_map_get(const tx_map *m, const void *key) {
  return quill_hmap_get(m, key, false);
}
void tx_map_put(tflite_exporter *ex, tx_map *m, const void *key, void *val) {
  ex->nomem |= !quill_hmap_put(ex->ctx, m, key, val, false);
}
void *tx_smap_get(const tx_map *m, const char *key) {
  return quill_hmap_get(m, key, true);
}
void tx_smap_put(tflite_exporter *ex, tx_map *m, const char *key, void *val) {
  ex->nomem |= !quill_hmap_put(ex->ctx, m, key, val, true);
}

/* Grow an array of `esz`-byte elements to hold n + 1. */
static bool grow(tflite_exporter *ex, void **arr, size_t *cap, size_t n,
                 size_t esz) {
  if (n < *cap)
    return true;
  size_t ncap = *cap ? *cap * 2 : 64;
  void *na = quill_realloc(ex->ctx, *arr, *cap * esz, ncap * esz);
  if (!na) {
    ex->nomem = true;
    return false;
  }
  *arr = na;
  *cap = ncap;
  return true;
}

/* ---- diagnostics ---------------------------------------------------------------------- */

quill_status tx_error(tflite_exporter *ex, const quill_op *op,
                      const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ex->errors++;
  return quill_error(ex->ctx, quill_op_loc(op),
                     "op '%s' cannot be exported to TFLite: %s",
                     quill_op_name(op), msg);
}

quill_status tx_spec_error(tflite_exporter *ex, const quill_op *op,
                           const char *rule, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ex->errors++;
  return quill_error(ex->ctx, quill_op_loc(op),
                     "op '%s' breaks the TFLite int8 spec: %s: %s",
                     quill_op_name(op), rule, msg);
}

void tx_warning(tflite_exporter *ex, const quill_op *op, const char *fmt,
                ...) {
  va_list ap;
  va_start(ap, fmt);
  quill_diag_emitv(ex->ctx, quill_op_loc(op), QUILL_DIAG_WARNING, fmt, ap);
  va_end(ap);
}

/* ---- tensors ----------------------------------------------------------------------------- */

int tx_tensor_type(const quill_type *elem) {
  if (quill_type_is_quant(elem))
    elem = quill_type_quant_storage(elem);
  switch (quill_type_kind_of(elem)) {
  case QUILL_TYPE_F32: return TFL_FLOAT32;
  case QUILL_TYPE_F16: return TFL_FLOAT16;
  case QUILL_TYPE_BF16: return TFL_BFLOAT16;
  case QUILL_TYPE_F64: return TFL_FLOAT64;
  case QUILL_TYPE_BOOL: return TFL_BOOL;
  case QUILL_TYPE_I4: return TFL_INT4;
  case QUILL_TYPE_I8: return TFL_INT8;
  case QUILL_TYPE_I16: return TFL_INT16;
  case QUILL_TYPE_I32: return TFL_INT32;
  case QUILL_TYPE_I64: return TFL_INT64;
  case QUILL_TYPE_U8: return TFL_UINT8;
  case QUILL_TYPE_U16: return TFL_UINT16;
  case QUILL_TYPE_U32: return TFL_UINT32;
  case QUILL_TYPE_U64: return TFL_UINT64;
  default: return -1;
  }
}

/* A unique tensor name from base (sanitised: control characters -> '_'). */
static const char *unique_name(tflite_exporter *ex, const char *base) {
  char *b = tx_strdup(ex, base && *base ? base : "t");
  if (!b)
    return NULL;
  for (char *c = b; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      *c = '_';
  const char *n = b;
  for (unsigned long k = 1; n && tx_smap_get(&ex->names, n); k++)
    n = tx_printf(ex, "%s_%lu", b, k);
  if (n)
    tx_smap_put(ex, &ex->names, n, (void *)n);
  return n;
}

int32_t tx_tensor_new(tflite_exporter *ex, const char *base, int type,
                      unsigned rank, const int64_t *dims) {
  if (!grow(ex, (void **)&ex->tensors, &ex->tensors_cap, ex->ntensors,
            sizeof *ex->tensors))
    return -1;
  tx_tensor *t = &ex->tensors[ex->ntensors];
  memset(t, 0, sizeof *t);
  t->name = unique_name(ex, base);
  t->type = (int8_t)type;
  t->rank = rank;
  t->shape = tx_alloc(ex, (rank ? rank : 1) * sizeof *t->shape);
  if (!t->name || !t->shape)
    return -1;
  for (unsigned i = 0; i < rank; i++)
    t->shape[i] = dims[i] < 0 ? -1 : (int32_t)dims[i];
  return (int32_t)ex->ntensors++;
}

int32_t tx_const(tflite_exporter *ex, const char *base, int type,
                 unsigned rank, const int64_t *dims, const void *data,
                 size_t size, bool copy) {
  int32_t t = tx_tensor_new(ex, base, type, rank, dims);
  if (t < 0)
    return -1;
  if (copy && size) {
    void *d = tx_alloc(ex, size);
    if (!d)
      return -1;
    memcpy(d, data, size);
    data = d;
  }
  if (ex->nbuffers == 0) { /* buffers[0]: the empty sentinel */
    if (!grow(ex, (void **)&ex->buffers, &ex->buffers_cap, 0,
              sizeof *ex->buffers))
      return -1;
    ex->buffers[0].data = NULL;
    ex->buffers[0].size = 0;
    ex->nbuffers = 1;
  }
  if (!grow(ex, (void **)&ex->buffers, &ex->buffers_cap, ex->nbuffers,
            sizeof *ex->buffers))
    return -1;
  ex->buffers[ex->nbuffers].data = data;
  ex->buffers[ex->nbuffers].size = size;
  ex->data_bytes += size;
  ex->tensors[t].buffer = (uint32_t)ex->nbuffers++;
  return t;
}

int32_t tx_const_i32(tflite_exporter *ex, const char *base, size_t n,
                     const int32_t *v) {
  int64_t d = (int64_t)n;
  return tx_const(ex, base, TFL_INT32, 1, &d, v, n * 4, true);
}

int32_t tx_const_f32_scalar(tflite_exporter *ex, const char *base, float v) {
  return tx_const(ex, base, TFL_FLOAT32, 0, NULL, &v, 4, true);
}

void tx_tensor_set_quant(tflite_exporter *ex, int32_t t, const quill_type *q,
                         int32_t qdim) {
  if (t < 0 || !quill_type_is_quant(q))
    return;
  tx_tensor *tt = &ex->tensors[t];
  size_t n = quill_type_quant_num_params(q);
  tt->scale = tx_alloc(ex, n * sizeof *tt->scale);
  tt->zero_point = tx_alloc(ex, n * sizeof *tt->zero_point);
  if (!tt->scale || !tt->zero_point)
    return;
  const double *s = quill_type_quant_scales(q);
  const int64_t *z = quill_type_quant_zero_points(q);
  for (size_t i = 0; i < n; i++) {
    tt->scale[i] = tx_scale_f32(s[i]);
    tt->zero_point[i] = z[i];
  }
  tt->nq = (unsigned)n;
  tt->qdim = quill_type_quant_axis_of(q) >= 0 ? qdim : 0;
}

/* ---- ops ---------------------------------------------------------------------------------- */

tx_op *tx_emit(tflite_exporter *ex, int32_t builtin, unsigned nin,
               const int32_t *ins, unsigned nout, const int32_t *outs) {
  for (unsigned i = 0; i < nout; i++)
    if (outs[i] < 0)
      return NULL;
  for (unsigned i = 0; i < nin; i++)
    if (ins[i] < -1)
      return NULL;
  if (!grow(ex, (void **)&ex->ops, &ex->ops_cap, ex->nops, sizeof *ex->ops))
    return NULL;
  tx_op *o = &ex->ops[ex->nops];
  memset(o, 0, sizeof *o);
  o->builtin = builtin;
  o->src = ex->op;
  o->inputs = tx_alloc(ex, (nin ? nin : 1) * sizeof *o->inputs);
  o->outputs = tx_alloc(ex, (nout ? nout : 1) * sizeof *o->outputs);
  if (!o->inputs || !o->outputs)
    return NULL;
  memcpy(o->inputs, ins, nin * sizeof *ins);
  memcpy(o->outputs, outs, nout * sizeof *outs);
  o->nin = nin;
  o->nout = nout;
  ex->nops++;
  return o;
}

static tx_opt *new_opt(tflite_exporter *ex, tx_op *o) {
  if (!o)
    return NULL;
  if (o->nopts == o->opts_cap) {
    unsigned ncap = o->opts_cap ? o->opts_cap * 2 : 8;
    tx_opt *n = tx_alloc(ex, ncap * sizeof *n);
    if (!n)
      return NULL;
    if (o->nopts)
      memcpy(n, o->opts, o->nopts * sizeof *n);
    o->opts = n;
    o->opts_cap = ncap;
  }
  tx_opt *p = &o->opts[o->nopts++];
  memset(p, 0, sizeof *p);
  return p;
}

void tx_opt_int(tflite_exporter *ex, tx_op *o, unsigned id, uint8_t kind,
                int64_t v, int64_t dflt) {
  tx_opt *p = new_opt(ex, o);
  if (p) {
    p->id = (uint16_t)id;
    p->kind = kind;
    p->i = v;
    p->dflt_i = dflt;
  }
}

void tx_opt_f32(tflite_exporter *ex, tx_op *o, unsigned id, float v,
                float dflt) {
  tx_opt *p = new_opt(ex, o);
  if (p) {
    p->id = (uint16_t)id;
    p->kind = TXO_F32;
    p->f = v;
    p->dflt_f = dflt;
  }
}

void tx_opt_vec(tflite_exporter *ex, tx_op *o, unsigned id, size_t n,
                const int32_t *v) {
  tx_opt *p = new_opt(ex, o);
  int32_t *copy = tx_alloc(ex, (n ? n : 1) * sizeof *copy);
  if (p && copy) {
    memcpy(copy, v, n * sizeof *v);
    p->id = (uint16_t)id;
    p->kind = TXO_VEC_I32;
    p->vec = copy;
    p->nvec = n;
  }
}

/* ---- values --------------------------------------------------------------------------------- */

tx_vinfo *tx_info(tflite_exporter *ex, const quill_value *v) {
  tx_vinfo *vi = tx_map_get(&ex->vinfo, v);
  if (vi)
    return vi;
  vi = tx_alloc(ex, sizeof *vi);
  if (!vi)
    return NULL;
  vi->index = ex->nvalues++;
  vi->tensor[0] = vi->tensor[1] = -1;
  tx_map_put(ex, &ex->vinfo, v, vi);
  return vi;
}

tx_opinfo *tx_op_info(tflite_exporter *ex, const quill_op *op) {
  tx_opinfo *oi = tx_map_get(&ex->opinfo, op);
  if (oi)
    return oi;
  oi = tx_alloc(ex, sizeof *oi);
  if (oi)
    tx_map_put(ex, &ex->opinfo, op, oi);
  return oi;
}

const quill_value *tx_resolve(tflite_exporter *ex, const quill_value *v) {
  for (int guard = 0; v && guard < 1000; guard++) {
    tx_vinfo *vi = tx_map_get(&ex->vinfo, v);
    if (!vi || !vi->alias)
      return v;
    v = vi->alias;
  }
  return v;
}

const quill_value *tx_ein(tflite_exporter *ex, const quill_op *op,
                          unsigned i) {
  tx_opinfo *oi = tx_map_get(&ex->opinfo, op);
  if (oi && oi->folded)
    return tx_resolve(ex, oi->ein[i]);
  return tx_resolve(ex, quill_op_operand(op, i));
}

const quill_value *tx_eout(tflite_exporter *ex, const quill_op *op,
                           unsigned i) {
  tx_opinfo *oi = tx_map_get(&ex->opinfo, op);
  if (oi && oi->folded && i == 0)
    return oi->eout;
  return quill_op_result(op, i);
}

quill_type *tx_in_type(tflite_exporter *ex, const quill_op *op, unsigned i) {
  return quill_value_type(tx_ein(ex, op, i));
}

quill_type *tx_out_type(tflite_exporter *ex, const quill_op *op, unsigned i) {
  return quill_value_type(tx_eout(ex, op, i));
}

int tx_layout_of(tflite_exporter *ex, const quill_value *v) {
  v = tx_resolve(ex, v);
  tx_vinfo *vi = tx_info(ex, v);
  return vi ? vi->layout : TX_NATIVE;
}

/* A base name for the tensor of value v. */
static const char *value_base(tflite_exporter *ex, const quill_value *v) {
  const char *n = quill_value_name(v);
  if (n && *n)
    return n;
  quill_op *def = quill_value_def(v);
  if (def) {
    quill_loc l = quill_op_loc(def);
    if (l.name && quill_op_num_results(def) == 1)
      return l.name;
    return tx_printf(ex, "%s_%u", quill_op_name(def), quill_op_id(def));
  }
  return tx_printf(ex, "arg%u", quill_value_index(v));
}

/* A constant value's tensor in a layout (data permuted for NHWC). */
static int32_t const_tensor(tflite_exporter *ex, const quill_value *v,
                            const quill_attr *a, int layout) {
  quill_type *t = quill_value_type(v);
  quill_type *elem = quill_type_elem(t);
  int type = tx_tensor_type(elem);
  if (type < 0) {
    tx_error(ex, quill_value_def(v), "element type has no TFLite tensor type");
    return -1;
  }
  unsigned rank = quill_type_rank(t);
  const int64_t *dims = quill_type_dims(t);
  int64_t pd[QUILL_MAX_RANK];
  tx_phys_dims(rank, dims, layout, pd);
  const void *data = quill_attr_dense_data(a);
  size_t size = quill_attr_dense_size(a);
  bool copy = false;
  if (layout == TX_NHWC && rank == 4) {
    void *d = tx_alloc(ex, size);
    if (!d)
      return -1;
    static const int perm[4] = {0, 2, 3, 1};
    tx_transpose_data(data, dims, 4, perm, quill_type_elem_bytes(elem), d);
    data = d;
  }
  int32_t tt = tx_const(ex, value_base(ex, v), type, rank, pd, data, size,
                        copy);
  if (quill_type_is_quant(elem) && tt >= 0) {
    int32_t ax = quill_type_quant_axis_of(elem);
    tx_tensor_set_quant(ex, tt, elem,
                        ax >= 0 ? tx_phys_axis(rank, ax, layout) : 0);
  }
  return tt;
}

/* The tensor of a non-constant value in its own layout (made on first
 * request: graph arguments and op results). */
static int32_t own_tensor(tflite_exporter *ex, const quill_value *v) {
  tx_vinfo *vi = tx_info(ex, v);
  if (!vi)
    return -1;
  int layout = tx_layout_of(ex, v);
  if (layout == TX_FLAT) /* same dims, stored in slot 0 */
    layout = TX_NATIVE;
  if (vi->tensor[layout] >= 0)
    return vi->tensor[layout];
  quill_type *t = quill_value_type(v);
  quill_type *elem = quill_type_elem(t);
  int type = tx_tensor_type(elem);
  const quill_op *at = quill_value_def(v) ? quill_value_def(v) : ex->op;
  if (type < 0) {
    if (at)
      tx_error(ex, at, "element type has no TFLite tensor type");
    return -1;
  }
  unsigned rank = quill_type_rank(t);
  int64_t pd[QUILL_MAX_RANK];
  tx_phys_dims(rank, quill_type_dims(t), layout, pd);
  int32_t tt = tx_tensor_new(ex, value_base(ex, v), type, rank, pd);
  if (tt >= 0 && quill_type_is_quant(elem)) {
    int32_t ax = quill_type_quant_axis_of(elem);
    tx_tensor_set_quant(ex, tt, elem,
                        ax >= 0 ? tx_phys_axis(rank, ax, layout) : 0);
  }
  vi->tensor[layout] = tt;
  return tt;
}

/* The constant behind value v: its dense attribute, or for v =
 * dequantize(quantized constant) the dequantized values (tx_dequantized) as
 * a float constant; NULL otherwise. */
static const quill_attr *value_const(tflite_exporter *ex,
                                     const quill_value *v) {
  const quill_attr *a = quill_value_constant(v);
  quill_op *d = quill_value_def(v);
  if (a || !d || quill_op_opcode(d) != QUILL_OP_DEQUANTIZE)
    return a;
  /* dequantize(constant) feeding an op that is not folded: dequantize at
   * compile time (a float constant). */
  const quill_attr *q = quill_value_constant(quill_op_operand(d, 0));
  if (!q)
    return NULL;
  quill_type *qt = quill_attr_dense_type(q), *qe = quill_type_elem(qt);
  if (!quill_type_is_quant(qe))
    return NULL;
  size_t n = (size_t)quill_type_num_elements(qt);
  float *f = tx_dequantized(ex, q);
  if (!f)
    return NULL;
  quill_type *ft = quill_type_with_elem(
      ex->ctx, qt, quill_type_scalar(ex->ctx, QUILL_TYPE_F32));
  a = ft ? quill_attr_dense(ex->ctx, ft, f, n * sizeof *f) : NULL;
  if (!a)
    ex->nomem = true;
  return a;
}

int32_t tx_value(tflite_exporter *ex, const quill_value *v, int want) {
  v = tx_resolve(ex, v);
  tx_vinfo *vi = tx_info(ex, v);
  if (!vi)
    return -1;
  unsigned rank = quill_type_rank(quill_value_type(v));
  if (want == TX_ANY || rank != 4)
    want = rank == 4 ? vi->layout : TX_NATIVE;
  if (vi->tensor[want] >= 0)
    return vi->tensor[want];
  const quill_attr *a = value_const(ex, v);
  if (a) {
    vi->tensor[want] = const_tensor(ex, v, a, want);
    return vi->tensor[want];
  }
  int32_t own = own_tensor(ex, v);
  if (own < 0 || rank != 4 || want == vi->layout)
    return own;
  /* Needed in the other layout: a runtime TRANSPOSE. */
  if (!vi->warned && ex->op) {
    vi->warned = true;
    tx_warning(ex, ex->op,
               "value '%s' is needed in both NCHW and NHWC layouts: a "
               "TRANSPOSE is inserted",
               ex->tensors[own].name);
  }
  quill_type *t = quill_value_type(v);
  int64_t pd[4];
  tx_phys_dims(4, quill_type_dims(t), want, pd);
  int32_t tt = tx_tensor_new(ex, tx_printf(ex, "%s_%s", ex->tensors[own].name,
                                           want == TX_NHWC ? "nhwc" : "nchw"),
                             ex->tensors[own].type, 4, pd);
  quill_type *elem = quill_type_elem(t);
  if (tt >= 0 && quill_type_is_quant(elem)) {
    int32_t ax = quill_type_quant_axis_of(elem);
    tx_tensor_set_quant(ex, tt, elem, ax >= 0 ? tx_phys_axis(4, ax, want) : 0);
  }
  /* NHWC from NCHW: perm [0,2,3,1]; NCHW from NHWC: [0,3,1,2]. */
  int32_t perm[4] = {0, 2, 3, 1};
  if (want == TX_NATIVE) {
    perm[1] = 3;
    perm[2] = 1;
    perm[3] = 2;
  }
  int32_t pt = tx_const_i32(ex, tx_printf(ex, "%s_perm", ex->tensors[own].name),
                            4, perm);
  int32_t ins[2] = {own, pt};
  tx_op *o = tx_emit(ex, TFL_OP_TRANSPOSE, 2, ins, 1, &tt);
  if (o)
    o->opt_type = TFL_OPT_TransposeOptions;
  vi->tensor[want] = tt;
  return tt;
}

int32_t tx_in(tflite_exporter *ex, const quill_op *op, unsigned i, int want) {
  return tx_value(ex, tx_ein(ex, op, i), want);
}

int32_t tx_out(tflite_exporter *ex, const quill_op *op, unsigned i) {
  return own_tensor(ex, tx_resolve(ex, tx_eout(ex, op, i)));
}

float *tx_dequantized(tflite_exporter *ex, const quill_attr *q) {
  quill_type *qt = quill_attr_dense_type(q), *qe = quill_type_elem(qt);
  size_t n = (size_t)quill_type_num_elements(qt);
  float *f = tx_alloc(ex, (n ? n : 1) * sizeof *f);
  if (!f)
    return NULL;
  int32_t ax = quill_type_quant_axis_of(qe);
  size_t inner = 1, len = 1;
  if (ax >= 0) {
    len = (size_t)quill_type_dim(qt, (unsigned)ax);
    for (unsigned k = (unsigned)ax + 1; k < quill_type_rank(qt); k++)
      inner *= (size_t)quill_type_dim(qt, k);
  }
  bool f64 = quill_type_kind_of(quill_type_quant_expressed(qe)) ==
             QUILL_TYPE_F64;
  for (size_t k = 0; k < n; k++) {
    size_t c = ax >= 0 ? (k / inner) % len : 0;
    f[k] = (float)quill_dequantize_value(
        quill_attr_dense_get_i64(q, k), quill_type_quant_scales(qe)[c],
        quill_type_quant_zero_points(qe)[c], f64);
  }
  return f;
}

const quill_attr *tx_in_const(tflite_exporter *ex, const quill_op *op,
                              unsigned i) {
  return value_const(ex, tx_ein(ex, op, i));
}

/* ---- driver ---------------------------------------------------------------------------------- */

static void exporter_free(tflite_exporter *ex) {
  quill_free(ex->ctx, ex->tensors, ex->tensors_cap * sizeof *ex->tensors);
  quill_free(ex->ctx, ex->ops, ex->ops_cap * sizeof *ex->ops);
  quill_free(ex->ctx, ex->buffers, ex->buffers_cap * sizeof *ex->buffers);
  quill_hmap_free(ex->ctx, &ex->vinfo);
  quill_hmap_free(ex->ctx, &ex->opinfo);
  quill_hmap_free(ex->ctx, &ex->names);
  quill_arena_free(&ex->arena);
}

/* An op without a writer: a CUSTOM op (allow_custom_ops) or an error. */
static quill_status write_unsupported(tflite_exporter *ex, const quill_op *op) {
  const char *why = NULL;
  quill_tflite_export_op_excluded(quill_op_opcode(op), &why);
  if (!ex->opts.allow_custom_ops) {
    bool quant = false;
    for (unsigned i = 0; i < quill_op_num_operands(op); i++)
      quant |= quill_type_is_quant(
          quill_type_elem(quill_value_type(quill_op_operand(op, i))));
    const char *name = quill_op_loc(op).name;
    if (quant)
      return tx_error(ex, op,
                      "no TFLite builtin (%s); keep it float with "
                      "--keep-float=%s, or write it as a custom op "
                      "'quill.%s' with --allow-custom-ops",
                      why ? why : "not supported",
                      name ? name : quill_op_name(op), quill_op_name(op));
    return tx_error(ex, op,
                    "no TFLite builtin (%s); write it as a custom op "
                    "'quill.%s' with --allow-custom-ops",
                    why ? why : "not supported", quill_op_name(op));
  }
  tx_warning(ex, op,
             "op '%s' has no TFLite builtin: written as custom op 'quill.%s' "
             "(the runtime needs a registered kernel for it)",
             quill_op_name(op), quill_op_name(op));
  const char *code = tx_printf(ex, "quill.%s", quill_op_name(op));
  return code ? tx_write_as_custom(ex, op, code) : QUILL_ERR_NOMEM;
}

static quill_status lower(tflite_exporter *ex) {
  const quill_graph *g = ex->graph;
  tx_fold_analyze(ex);
  if (ex->nomem)
    return QUILL_ERR_NOMEM;
  quill_status st = tx_layout_run(ex);
  if (st)
    return st;
  unsigned na = quill_graph_num_args(g);
  ex->inputs = tx_alloc(ex, (na ? na : 1) * sizeof *ex->inputs);
  if (!ex->inputs)
    return QUILL_ERR_NOMEM;
  for (unsigned i = 0; i < na; i++) {
    quill_value *a = quill_graph_arg(g, i);
    ex->op = NULL;
    int32_t t = own_tensor(ex, a);
    if (t < 0) {
      ex->errors++;
      quill_error(ex->ctx, quill_graph_loc(g),
                  "graph argument #%u cannot be a TFLite tensor", i);
    }
    ex->inputs[ex->ninputs++] = t;
  }
  QUILL_GRAPH_FOREACH(g, op) {
    ex->op = op;
    quill_opcode opc = quill_op_opcode(op);
    if (opc == QUILL_OP_RETURN) {
      unsigned n = quill_op_num_operands(op);
      ex->outputs = tx_alloc(ex, (n ? n : 1) * sizeof *ex->outputs);
      if (!ex->outputs)
        return QUILL_ERR_NOMEM;
      for (unsigned i = 0; i < n; i++)
        ex->outputs[ex->noutputs++] =
            tx_value(ex, quill_op_operand(op, i), TX_ANY);
      continue;
    }
    tx_opinfo *oi = tx_map_get(&ex->opinfo, op);
    if (oi && oi->skip)
      continue;
    size_t errors = ex->errors;
    quill_status s = tx_table[opc].write ? tx_table[opc].write(ex, op)
                                         : write_unsupported(ex, op);
    if (ex->nomem || s == QUILL_ERR_NOMEM)
      return QUILL_ERR_NOMEM;
    if (s && ex->errors == errors) /* a failure without a diagnostic */
      tx_error(ex, op, "internal error while writing it");
  }
  ex->op = NULL;
  return ex->errors ? QUILL_ERR_INVALID : QUILL_OK;
}

quill_status quill_tflite_export_buffer(quill_context *ctx,
                                        const quill_graph *g,
                                        const quill_tflite_export_options *opts,
                                        void **data, size_t *len) {
  *data = NULL;
  *len = 0;
  tflite_exporter ex;
  memset(&ex, 0, sizeof ex);
  ex.ctx = ctx;
  quill_arena_init(&ex.arena, ctx);
  ex.graph = g;
  if (opts)
    ex.opts = *opts;
  if (!ex.opts.max_size || ex.opts.max_size > QUILL_FB_MAX_SIZE)
    ex.opts.max_size = QUILL_FB_MAX_SIZE;
  quill_status st = lower(&ex);
  if (st == QUILL_OK && ex.nomem)
    st = QUILL_ERR_NOMEM;
  if (st == QUILL_OK) {
    /* The constant data alone must fit: FlatBuffers cannot address more
     * than 2^31 - 1 bytes. */
    size_t estimate = ex.data_bytes + 16 * ex.nbuffers + 256 * ex.ntensors +
                      256 * ex.nops + 1024;
    if (ex.data_bytes > ex.opts.max_size || estimate > ex.opts.max_size) {
      quill_error(ctx, quill_graph_loc(g),
                  "the model is too large for a TFLite FlatBuffer: %zu bytes "
                  "of constant data (about %zu bytes in all), the limit is "
                  "%zu bytes (2 GB); TFLite's external-buffer format for "
                  "larger models is not supported",
                  ex.data_bytes, estimate, ex.opts.max_size);
      st = QUILL_ERR_UNSUPPORTED;
    }
  }
  if (st == QUILL_OK) {
    for (size_t i = 0; i < ex.nops; i++)
      ex.ops[i].version = tx_op_version(&ex, &ex.ops[i]);
    st = tx_write_model(&ex, data, len);
    if (st == QUILL_ERR_UNSUPPORTED)
      quill_error(ctx, quill_graph_loc(g),
                  "the model is too large for a TFLite FlatBuffer: the "
                  "limit is %zu bytes (2 GB)",
                  ex.opts.max_size);
  }
  exporter_free(&ex);
  return st;
}

quill_status quill_tflite_export_file(quill_context *ctx, const quill_graph *g,
                                      const char *path,
                                      const quill_tflite_export_options *opts) {
  void *data;
  size_t len;
  quill_status st = quill_tflite_export_buffer(ctx, g, opts, &data, &len);
  if (st)
    return st;
  st = quill_write_file(ctx, path, data, len);
  quill_free(ctx, data, len);
  return st;
}

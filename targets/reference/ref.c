/*
 * ref.c - the reference target's kernel table, op evaluation and the host
 * tensor helpers every kernel uses.
 *
 * Three parts:
 *
 *   1. Element access. A tensor's bytes are read and written one element at
 *      a time through get/set functions that switch on the element *type
 *      kind* (never on the opcode), converting to and from double or
 *      int64. That keeps each kernel type-generic at the price of speed,
 *      which is the right trade for a reference interpreter.
 *
 *   2. Numpy broadcasting. quill_ref_bcast walks the output index space
 *      like an odometer and keeps, per input, the element index matching
 *      the current output element (stride 0 along broadcast dims):
 *
 *        out 2x3, in a 2x1, in b 3:   strides a = [1, 0], b = [0, 1]
 *        out (1,2) -> a[1], b[2]
 *
 *   3. The opcode-indexed table quill_ref_kernels (designated initializers,
 *      holes are unsupported opcodes) and quill_ref_eval_op, which checks
 *      that the kernel exists and accepts the op, and that every tensor's
 *      byte size agrees with its type, before dispatching; afterwards it
 *      applies the op's fused activation (`activation` = relu / clip), so
 *      no kernel has to know about fusion.
 */
#include <math.h>
#include <string.h>

#include "targets/reference/kernels.h"

/* ---- tensors -------------------------------------------------------------- */

/* The byte size of a static tensor type; SIZE_MAX when elements x element
 * size does not fit a size_t (no allocation can have that size). */
static size_t type_bytes(const quill_type *t) {
  int64_t n = quill_type_num_elements(t);
  if (n < 0)
    return 0;
  size_t eb = quill_type_elem_bytes(quill_type_elem(t));
  if (eb && (uint64_t)n > (uint64_t)(SIZE_MAX / eb))
    return SIZE_MAX;
  return (size_t)n * eb;
}

static bool is_static_tensor(const quill_type *t) {
  return t && quill_type_is_tensor(t) && quill_type_has_static_shape(t) &&
         quill_type_num_elements(t) >= 0;
}

quill_status quill_tensor_alloc(quill_context *ctx, quill_type *type,
                                quill_tensor *t) {
  memset(t, 0, sizeof *t);
  if (!is_static_tensor(type))
    return QUILL_ERR_INVALID;
  size_t size = type_bytes(type);
  if (size == SIZE_MAX)
    return QUILL_ERR_NOMEM;
  if (size) {
    t->data = quill_calloc(ctx, 1, size);
    if (!t->data)
      return QUILL_ERR_NOMEM;
  }
  t->type = type;
  t->size = size;
  return QUILL_OK;
}

void quill_tensor_free(quill_context *ctx, quill_tensor *t) {
  if (t->data)
    quill_free(ctx, t->data, t->size);
  memset(t, 0, sizeof *t);
}

quill_tensor quill_tensor_from_attr(const quill_attr *dense) {
  quill_tensor t;
  t.type = quill_attr_dense_type(dense);
  t.data = (void *)quill_attr_dense_data(dense); /* read-only by contract */
  t.size = quill_attr_dense_size(dense);
  return t;
}

const quill_attr *quill_tensor_to_attr(quill_context *ctx,
                                       const quill_tensor *t) {
  return quill_attr_dense(ctx, t->type, t->data, t->size);
}

size_t quill_tensor_num_elements(const quill_tensor *t) {
  int64_t n = quill_type_num_elements(t->type);
  return n < 0 ? 0 : (size_t)n;
}

quill_type_kind quill_tensor_elem_kind(const quill_tensor *t) {
  quill_type *e = quill_type_elem(t->type);
  if (quill_type_is_quant(e))
    e = quill_type_quant_storage(e);
  return quill_type_kind_of(e);
}

/* ---- element access ------------------------------------------------------- */

/* Range of an integer kind as int64 (u64's upper end is clamped: callers
 * handle u64 on their own). */
static void int_range(quill_type_kind k, int64_t *lo, int64_t *hi) {
  switch (k) {
  case QUILL_TYPE_BOOL: *lo = 0; *hi = 1; break;
  case QUILL_TYPE_I4: *lo = -8; *hi = 7; break;
  case QUILL_TYPE_I8: *lo = INT8_MIN; *hi = INT8_MAX; break;
  case QUILL_TYPE_I16: *lo = INT16_MIN; *hi = INT16_MAX; break;
  case QUILL_TYPE_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
  case QUILL_TYPE_U4: *lo = 0; *hi = 15; break;
  case QUILL_TYPE_U8: *lo = 0; *hi = UINT8_MAX; break;
  case QUILL_TYPE_U16: *lo = 0; *hi = UINT16_MAX; break;
  case QUILL_TYPE_U32: *lo = 0; *hi = UINT32_MAX; break;
  case QUILL_TYPE_U64: *lo = 0; *hi = INT64_MAX; break;
  default: *lo = INT64_MIN; *hi = INT64_MAX; break;
  }
}

/* Store an integer, wrapping to the width of kind (memcpy keeps it free
 * of alignment and aliasing trouble). */
static void store_int(void *p, quill_type_kind k, int64_t v) {
  uint64_t u = (uint64_t)v;
  switch (k) {
  case QUILL_TYPE_BOOL: { uint8_t b = v != 0; memcpy(p, &b, 1); break; }
  case QUILL_TYPE_I4: {
    int8_t b = (int8_t)((u & 0x8) ? (u & 0xf) - 16 : (u & 0xf));
    memcpy(p, &b, 1);
    break;
  }
  case QUILL_TYPE_U4: { uint8_t b = (uint8_t)(u & 0xf); memcpy(p, &b, 1); break; }
  case QUILL_TYPE_I8: case QUILL_TYPE_U8: {
    uint8_t b = (uint8_t)u; memcpy(p, &b, 1); break;
  }
  case QUILL_TYPE_I16: case QUILL_TYPE_U16: {
    uint16_t b = (uint16_t)u; memcpy(p, &b, 2); break;
  }
  case QUILL_TYPE_I32: case QUILL_TYPE_U32: {
    uint32_t b = (uint32_t)u; memcpy(p, &b, 4); break;
  }
  default: memcpy(p, &u, 8); break;
  }
}

static int64_t load_int(const void *p, quill_type_kind k) {
  switch (k) {
  case QUILL_TYPE_BOOL: { uint8_t b; memcpy(&b, p, 1); return b != 0; }
  case QUILL_TYPE_I4: {
    uint8_t b; memcpy(&b, p, 1); b &= 0xf; return (b & 0x8) ? b - 16 : b;
  }
  case QUILL_TYPE_U4: { uint8_t b; memcpy(&b, p, 1); return b & 0xf; }
  case QUILL_TYPE_I8: { int8_t b; memcpy(&b, p, 1); return b; }
  case QUILL_TYPE_U8: { uint8_t b; memcpy(&b, p, 1); return b; }
  case QUILL_TYPE_I16: { int16_t b; memcpy(&b, p, 2); return b; }
  case QUILL_TYPE_U16: { uint16_t b; memcpy(&b, p, 2); return b; }
  case QUILL_TYPE_I32: { int32_t b; memcpy(&b, p, 4); return b; }
  case QUILL_TYPE_U32: { uint32_t b; memcpy(&b, p, 4); return b; }
  default: { int64_t b; memcpy(&b, p, 8); return b; }
  }
}

/* Truncate toward zero and saturate to the range of kind (NaN -> 0). */
static int64_t f64_to_int(double v, quill_type_kind k) {
  int64_t lo, hi;
  if (k == QUILL_TYPE_BOOL) /* NaN is "nonzero", as in numpy */
    return v != 0.0;
  if (isnan(v))
    return 0;
  if (k == QUILL_TYPE_U64) {
    if (v <= 0.0)
      return 0;
    if (v >= 18446744073709551616.0)
      return (int64_t)UINT64_MAX;
    return (int64_t)(uint64_t)v;
  }
  int_range(k, &lo, &hi);
  if (v <= (double)lo)
    return lo;
  if (v >= (double)hi) /* (double)INT64_MAX rounds up to 2^63 */
    return hi;
  return (int64_t)v;
}

static void *elem_ptr(const quill_tensor *t, size_t i) {
  return (char *)t->data + i * quill_type_elem_bytes(quill_type_elem(t->type));
}

double quill_tensor_get_f64(const quill_tensor *t, size_t i) {
  quill_type_kind k = quill_tensor_elem_kind(t);
  const void *p = elem_ptr(t, i);
  switch (k) {
  case QUILL_TYPE_F32: { float f; memcpy(&f, p, 4); return f; }
  case QUILL_TYPE_F64: { double d; memcpy(&d, p, 8); return d; }
  case QUILL_TYPE_F16: { uint16_t h; memcpy(&h, p, 2); return quill_f16_to_f32(h); }
  case QUILL_TYPE_BF16: { uint16_t h; memcpy(&h, p, 2); return quill_bf16_to_f32(h); }
  case QUILL_TYPE_U64: { uint64_t u; memcpy(&u, p, 8); return (double)u; }
  default: return (double)load_int(p, k);
  }
}

int64_t quill_tensor_get_i64(const quill_tensor *t, size_t i) {
  quill_type_kind k = quill_tensor_elem_kind(t);
  switch (k) {
  case QUILL_TYPE_F32: case QUILL_TYPE_F64: case QUILL_TYPE_F16:
  case QUILL_TYPE_BF16:
    return f64_to_int(quill_tensor_get_f64(t, i), QUILL_TYPE_I64);
  default:
    return load_int(elem_ptr(t, i), k);
  }
}

void quill_tensor_set_f64(quill_tensor *t, size_t i, double v) {
  quill_type_kind k = quill_tensor_elem_kind(t);
  void *p = elem_ptr(t, i);
  switch (k) {
  case QUILL_TYPE_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
  case QUILL_TYPE_F64: memcpy(p, &v, 8); break;
  case QUILL_TYPE_F16: { uint16_t h = quill_f32_to_f16((float)v); memcpy(p, &h, 2); break; }
  case QUILL_TYPE_BF16: { uint16_t h = quill_f32_to_bf16((float)v); memcpy(p, &h, 2); break; }
  default: store_int(p, k, f64_to_int(v, k)); break;
  }
}

void quill_tensor_set_i64(quill_tensor *t, size_t i, int64_t v) {
  quill_type_kind k = quill_tensor_elem_kind(t);
  void *p = elem_ptr(t, i);
  switch (k) {
  case QUILL_TYPE_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
  case QUILL_TYPE_F64: { double d = (double)v; memcpy(p, &d, 8); break; }
  case QUILL_TYPE_F16: case QUILL_TYPE_BF16:
    quill_tensor_set_f64(t, i, (double)(float)v);
    break;
  default: store_int(p, k, v); break;
  }
}

void quill_ref_strides(const quill_type *t, int64_t *strides) {
  unsigned r = quill_type_rank(t);
  int64_t s = 1;
  for (unsigned i = r; i-- > 0;) {
    strides[i] = s;
    s *= quill_type_dim(t, i);
  }
}

/* ---- broadcasting --------------------------------------------------------- */

bool quill_ref_bcast_init(quill_ref_bcast *it, const quill_type *out,
                          unsigned n, const quill_type *const *ins) {
  memset(it, 0, sizeof *it);
  if (n > QUILL_REF_BCAST_MAX_INPUTS || !is_static_tensor(out))
    return false;
  it->rank = quill_type_rank(out);
  it->num_inputs = n;
  it->count = (size_t)quill_type_num_elements(out);
  for (unsigned d = 0; d < it->rank; d++)
    it->dims[d] = quill_type_dim(out, d);
  for (unsigned k = 0; k < n; k++) {
    const quill_type *t = ins[k];
    if (!is_static_tensor(t))
      return false;
    unsigned r = quill_type_rank(t);
    if (r > it->rank)
      return false;
    int64_t s = 1;
    for (unsigned j = r; j-- > 0;) {
      unsigned d = it->rank - r + j; /* aligned from the right */
      int64_t dim = quill_type_dim(t, j);
      if (dim != 1 && dim != it->dims[d])
        return false;
      it->stride[k][d] = dim == 1 ? 0 : s;
      s *= dim;
    }
  }
  return true;
}

void quill_ref_bcast_next(quill_ref_bcast *it) {
  for (unsigned d = it->rank; d-- > 0;) {
    it->index[d]++;
    for (unsigned k = 0; k < it->num_inputs; k++)
      it->offset[k] += (size_t)it->stride[k][d];
    if (it->index[d] < it->dims[d])
      return;
    /* carry: rewind this dim */
    for (unsigned k = 0; k < it->num_inputs; k++)
      it->offset[k] -= (size_t)(it->stride[k][d] * it->dims[d]);
    it->index[d] = 0;
  }
}

/* ---- helpers for the nn kernels -------------------------------------------- */

quill_status quill_ref_fbuf_read(quill_context *ctx, const quill_tensor *t,
                                 quill_ref_fbuf *b) {
  b->n = quill_tensor_num_elements(t);
  b->scratch = false;
  if (quill_tensor_elem_kind(t) == QUILL_TYPE_F32 &&
      !quill_type_is_quant(quill_type_elem(t->type))) {
    b->p = t->data;
    return QUILL_OK;
  }
  b->p = quill_alloc(ctx, (b->n ? b->n : 1) * sizeof(float));
  if (!b->p)
    return QUILL_ERR_NOMEM;
  b->scratch = true;
  for (size_t i = 0; i < b->n; i++)
    b->p[i] = (float)quill_tensor_get_f64(t, i);
  return QUILL_OK;
}

quill_status quill_ref_fbuf_write(quill_context *ctx, quill_tensor *t,
                                  quill_ref_fbuf *b) {
  b->n = quill_tensor_num_elements(t);
  b->scratch = false;
  if (quill_tensor_elem_kind(t) == QUILL_TYPE_F32 &&
      !quill_type_is_quant(quill_type_elem(t->type))) {
    b->p = t->data;
    return QUILL_OK;
  }
  b->p = quill_calloc(ctx, b->n ? b->n : 1, sizeof(float));
  if (!b->p)
    return QUILL_ERR_NOMEM;
  b->scratch = true;
  return QUILL_OK;
}

void quill_ref_fbuf_release(quill_context *ctx, quill_tensor *t,
                            quill_ref_fbuf *b) {
  if (b->scratch) {
    if (t)
      for (size_t i = 0; i < b->n; i++)
        quill_tensor_set_f64(t, i, b->p[i]);
    quill_free(ctx, b->p, (b->n ? b->n : 1) * sizeof(float));
  }
  memset(b, 0, sizeof *b);
}

const char *quill_ref_attr_str(const quill_op *op, const char *name,
                               const char *dflt) {
  const quill_attr *a = quill_op_attr(op, name);
  if (a && quill_attr_kind_of(a) == QUILL_ATTR_STRING)
    return quill_attr_string_value(a, NULL);
  return dflt;
}

quill_status quill_ref_op_error(quill_context *ctx, const quill_op *op,
                                const char *what) {
  return quill_error(ctx, quill_op_loc(op), "reference: '%s': %s",
                     quill_op_name(op), what);
}

const char *quill_ref_supports_float(const quill_op *op) {
  for (unsigned i = 0; i < quill_op_num_operands(op); i++)
    if (!quill_type_is_float(
            quill_type_elem(quill_value_type(quill_op_operand(op, i)))))
      return quill_type_is_quant(quill_type_elem(
                 quill_value_type(quill_op_operand(op, i))))
                 ? "quantized element types"
                 : "non-float element types";
  return NULL;
}

/* ---- the table ------------------------------------------------------------ */

#define UNARY {quill_ref_kernel_unary, quill_ref_supports_unary}
#define BINARY {quill_ref_kernel_binary, quill_ref_supports_scalar}
#define COMPARE {quill_ref_kernel_compare, quill_ref_supports_scalar}
#define COPY {quill_ref_kernel_copy, NULL}

const quill_ref_kernel quill_ref_kernels[QUILL_OP_COUNT] = {
    /* structure */
    [QUILL_OP_CONSTANT] = {quill_ref_kernel_constant, NULL},
    [QUILL_OP_IDENTITY] = COPY,
    /* elementwise unary */
    [QUILL_OP_RELU] = UNARY,
    [QUILL_OP_LEAKY_RELU] = UNARY,
    [QUILL_OP_CLIP] = {quill_ref_kernel_clip, quill_ref_supports_scalar},
    [QUILL_OP_SIGMOID] = UNARY,
    [QUILL_OP_TANH] = UNARY,
    [QUILL_OP_HARD_SIGMOID] = UNARY,
    [QUILL_OP_HARD_SWISH] = UNARY,
    [QUILL_OP_GELU] = UNARY,
    [QUILL_OP_ERF] = UNARY,
    [QUILL_OP_SQRT] = UNARY,
    [QUILL_OP_EXP] = UNARY,
    [QUILL_OP_LOG] = UNARY,
    [QUILL_OP_NEG] = UNARY,
    [QUILL_OP_ABS] = UNARY,
    [QUILL_OP_RECIPROCAL] = UNARY,
    [QUILL_OP_FLOOR] = UNARY,
    [QUILL_OP_CEIL] = UNARY,
    [QUILL_OP_CAST] = {quill_ref_kernel_cast, quill_ref_supports_scalar},
    /* elementwise binary */
    [QUILL_OP_ADD] = BINARY,
    [QUILL_OP_SUB] = BINARY,
    [QUILL_OP_MUL] = BINARY,
    [QUILL_OP_DIV] = BINARY,
    [QUILL_OP_POW] = BINARY,
    [QUILL_OP_MAX] = BINARY,
    [QUILL_OP_MIN] = BINARY,
    [QUILL_OP_PRELU] = BINARY,
    [QUILL_OP_EQUAL] = COMPARE,
    [QUILL_OP_LESS] = COMPARE,
    [QUILL_OP_GREATER] = COMPARE,
    [QUILL_OP_WHERE] = {quill_ref_kernel_where, NULL},
    /* data movement */
    [QUILL_OP_CONCAT] = {quill_ref_kernel_concat, NULL},
    [QUILL_OP_SPLIT] = {quill_ref_kernel_split, NULL},
    [QUILL_OP_SLICE] = {quill_ref_kernel_slice, NULL},
    [QUILL_OP_PAD] = {quill_ref_kernel_pad, NULL},
    [QUILL_OP_RESHAPE] = COPY,
    [QUILL_OP_FLATTEN] = COPY,
    [QUILL_OP_TRANSPOSE] = {quill_ref_kernel_transpose, NULL},
    [QUILL_OP_SQUEEZE] = COPY,
    [QUILL_OP_UNSQUEEZE] = COPY,
    [QUILL_OP_GATHER] = {quill_ref_kernel_gather, quill_ref_supports_gather},
    [QUILL_OP_RESIZE] = {quill_ref_kernel_resize, quill_ref_supports_resize},
    /* linear algebra and normalization */
    [QUILL_OP_CONV2D] = {quill_ref_kernel_conv2d, quill_ref_supports_float},
    [QUILL_OP_CONV_TRANSPOSE2D] = {quill_ref_kernel_conv_transpose2d,
                                   quill_ref_supports_float},
    [QUILL_OP_MATMUL] = {quill_ref_kernel_matmul, quill_ref_supports_linalg},
    [QUILL_OP_GEMM] = {quill_ref_kernel_gemm, quill_ref_supports_linalg},
    [QUILL_OP_BATCH_NORM] = {quill_ref_kernel_batch_norm, quill_ref_supports_float},
    [QUILL_OP_LAYER_NORM] = {quill_ref_kernel_layer_norm, quill_ref_supports_float},
    [QUILL_OP_LSTM] = {quill_ref_kernel_lstm, quill_ref_supports_float},
    /* pooling and reductions */
    [QUILL_OP_MAXPOOL] = {quill_ref_kernel_pool, quill_ref_supports_pool},
    [QUILL_OP_AVGPOOL] = {quill_ref_kernel_pool, quill_ref_supports_pool},
    [QUILL_OP_GLOBAL_AVGPOOL] = {quill_ref_kernel_global_pool, quill_ref_supports_pool},
    [QUILL_OP_GLOBAL_MAXPOOL] = {quill_ref_kernel_global_pool, quill_ref_supports_pool},
    [QUILL_OP_REDUCE_MEAN] = {quill_ref_kernel_reduce, quill_ref_supports_scalar},
    [QUILL_OP_REDUCE_SUM] = {quill_ref_kernel_reduce, quill_ref_supports_scalar},
    [QUILL_OP_REDUCE_MAX] = {quill_ref_kernel_reduce, quill_ref_supports_scalar},
    [QUILL_OP_REDUCE_MIN] = {quill_ref_kernel_reduce, quill_ref_supports_scalar},
    [QUILL_OP_SOFTMAX] = {quill_ref_kernel_softmax, quill_ref_supports_softmax},
    [QUILL_OP_LOG_SOFTMAX] = {quill_ref_kernel_softmax, quill_ref_supports_softmax},
    /* quantization */
    [QUILL_OP_QUANTIZE] = {quill_ref_kernel_quantize, NULL},
    [QUILL_OP_DEQUANTIZE] = {quill_ref_kernel_dequantize, NULL},
    [QUILL_OP_REQUANTIZE] = {quill_ref_kernel_requantize, NULL},
    [QUILL_OP_FAKE_QUANT] = {quill_ref_kernel_fake_quant, NULL},
    /* integer ops */
    [QUILL_OP_QCONV2D] = {quill_ref_kernel_qconv2d, NULL},
    [QUILL_OP_QMATMUL] = {quill_ref_kernel_qmatmul, NULL},
    [QUILL_OP_QADD] = {quill_ref_kernel_qbinary, NULL},
    [QUILL_OP_QMUL] = {quill_ref_kernel_qbinary, NULL},
    [QUILL_OP_LUT] = {quill_ref_kernel_lut, NULL},
    [QUILL_OP_QLAYER_NORM] = {quill_ref_kernel_qlayer_norm, NULL},
    [QUILL_OP_QLSTM] = {quill_ref_kernel_qlstm, NULL},
    [QUILL_OP_SCAST] = {quill_ref_kernel_scast, NULL},
    [QUILL_OP_DYNAMIC_QUANTIZE] = {quill_ref_kernel_dynamic_quantize, NULL},
    /* extension: the evaluator registered for the op's name */
    [QUILL_OP_CUSTOM] = {quill_ref_kernel_custom, quill_ref_supports_custom},
};

#undef UNARY
#undef BINARY
#undef COMPARE
#undef COPY

bool quill_ref_op_supported(const quill_op *op, const char **why) {
  const quill_ref_kernel *k = &quill_ref_kernels[quill_op_opcode(op)];
  const char *reason = NULL;
  if (!k->eval)
    reason = "no kernel";
  else if (k->supports)
    reason = k->supports(op);
  if (why)
    *why = reason;
  return reason == NULL;
}

/* A tensor is well-formed if it has a static tensor type and exactly the
 * bytes that type needs. */
static bool tensor_ok(const quill_tensor *t) {
  return is_static_tensor(t->type) && t->size == type_bytes(t->type) &&
         (t->data || t->size == 0);
}

/* The fused activation of `fuse-activation` (docs/quantization.md section
 * 2): relu or clip applied to every float output after the kernel ran, the
 * way the relu and clip kernels compute it (relu maps NaN to 0, clip lets
 * it through; f16/bf16/f32 clamp against f32 bounds, f64 in f64). */
static quill_status apply_fused_activation(quill_context *ctx,
                                           const quill_op *op,
                                           quill_tensor *out) {
  const quill_attr *a = quill_op_attr(op, "activation");
  if (!a)
    return QUILL_OK;
  const char *act = quill_ref_attr_str(op, "activation", "");
  bool relu = strcmp(act, "relu") == 0;
  if (!relu && strcmp(act, "clip") != 0)
    return quill_ref_op_error(ctx, op, "unknown fused activation");
  double lo = quill_op_attr_number(op, "activation_min", -INFINITY);
  double hi = quill_op_attr_number(op, "activation_max", INFINITY);
  for (unsigned r = 0; r < quill_op_num_results(op); r++) {
    quill_tensor *t = &out[r];
    quill_type_kind k = quill_tensor_elem_kind(t);
    if (!quill_type_is_float(quill_type_elem(t->type)))
      continue;
    size_t n = quill_tensor_num_elements(t);
    for (size_t i = 0; i < n; i++) {
      double v = quill_tensor_get_f64(t, i);
      if (relu) {
        v = v > 0 ? v : 0.0;
      } else if (k == QUILL_TYPE_F64) {
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
      } else {
        float f = (float)v;
        f = f < (float)lo ? (float)lo : f;
        f = f > (float)hi ? (float)hi : f;
        v = f;
      }
      quill_tensor_set_f64(t, i, v);
    }
  }
  return QUILL_OK;
}

quill_status quill_ref_eval_op(quill_context *ctx, const quill_op *op,
                               const quill_tensor *in, quill_tensor *out) {
  const quill_ref_kernel *k = &quill_ref_kernels[quill_op_opcode(op)];
  if (!k->eval) {
    quill_error(ctx, quill_op_loc(op),
                "op '%s' is not supported by target 'reference'",
                quill_op_name(op));
    return QUILL_ERR_UNSUPPORTED;
  }
  const char *why = k->supports ? k->supports(op) : NULL;
  if (why) {
    quill_error(ctx, quill_op_loc(op),
                "op '%s' is not supported by target 'reference' (%s)",
                quill_op_name(op), why);
    return QUILL_ERR_UNSUPPORTED;
  }
  for (unsigned i = 0; i < quill_op_num_operands(op); i++)
    if (!tensor_ok(&in[i]))
      return quill_error(ctx, quill_op_loc(op),
                         "reference: input %u of '%s' is not a statically "
                         "shaped tensor matching its type",
                         i, quill_op_name(op));
  for (unsigned i = 0; i < quill_op_num_results(op); i++)
    if (!tensor_ok(&out[i]))
      return quill_error(ctx, quill_op_loc(op),
                         "reference: output %u of '%s' is not a statically "
                         "shaped tensor matching its type",
                         i, quill_op_name(op));
  quill_status st = k->eval(ctx, op, in, out);
  if (st == QUILL_OK)
    st = apply_fused_activation(ctx, op, out);
  return st;
}

quill_status quill_ref_outputs_alloc(quill_context *ctx, const quill_op *op,
                                     quill_tensor *out) {
  unsigned n = quill_op_num_results(op);
  for (unsigned i = 0; i < n; i++) {
    quill_type *t = quill_value_type(quill_op_result(op, i));
    quill_status st = quill_tensor_alloc(ctx, t, &out[i]);
    if (st != QUILL_OK) {
      for (unsigned j = 0; j < i; j++)
        quill_tensor_free(ctx, &out[j]);
      if (st == QUILL_ERR_INVALID)
        quill_error(ctx, quill_op_loc(op),
                    "reference: result %u of '%s' has no static shape", i,
                    quill_op_name(op));
      return st;
    }
  }
  return QUILL_OK;
}

void quill_ref_outputs_free(quill_context *ctx, const quill_op *op,
                            quill_tensor *out) {
  for (unsigned i = 0; i < quill_op_num_results(op); i++)
    quill_tensor_free(ctx, &out[i]);
}

void quill_ref_tensors_free(quill_context *ctx, quill_tensor *t, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    quill_tensor_free(ctx, &t[i]);
}

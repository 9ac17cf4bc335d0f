/*
 * type.h - uniqued types: scalar element types, quantized element types and
 * ranked tensors.
 *
 * Types are immutable and uniqued in the context, so two structurally equal
 * types are the same pointer and `==` is type equality. They live as long as
 * the context.
 *
 * Textual forms (see ir/printer.c):
 *   f32 f16 bf16 f64 i1 i4 i8 i16 i32 i64 u4 u8 u16 u32 u64 bool
 *   !quant.uniform<i8:f32, 0.5:-3>                    per tensor
 *   !quant.uniform<i8<-127:127>:f32, 0.5:0>           with storage range
 *   !quant.uniform<i8:f32:0, {0.1:0, 0.2:0}>          per axis (axis 0)
 *   tensor<1x3x224x224xf32>  tensor<f32>  tensor<?x4xf32>
 *   tensor<8x!quant.uniform<i8:f32, 0.5:0>>
 */
#ifndef QUILL_IR_TYPE_H
#define QUILL_IR_TYPE_H

#include "types_fwd.h"

QUILL_BEGIN_DECLS

typedef enum quill_type_kind {
  /* scalar element types */
  QUILL_TYPE_F32,
  QUILL_TYPE_F16,
  QUILL_TYPE_BF16,
  QUILL_TYPE_F64,
  QUILL_TYPE_BOOL,
  QUILL_TYPE_I4,
  QUILL_TYPE_I8,
  QUILL_TYPE_I16,
  QUILL_TYPE_I32,
  QUILL_TYPE_I64,
  QUILL_TYPE_U4,
  QUILL_TYPE_U8,
  QUILL_TYPE_U16,
  QUILL_TYPE_U32,
  QUILL_TYPE_U64,
  /* quantized element type (storage integer + expressed float) */
  QUILL_TYPE_QUANT,
  /* ranked tensor of an element type */
  QUILL_TYPE_TENSOR,
  QUILL_TYPE_KIND_COUNT
} quill_type_kind;

/* A dimension of unknown size (printed `?`). */
#define QUILL_DIM_DYNAMIC INT64_C(-1)
/* Dimensions above this (2^31 - 1) are rejected by the constructors, the
 * .qir parser and the importers: targets index with 32-bit dims (TFLite's
 * shapes are int32) and the text form must parse back. */
#define QUILL_MAX_DIM INT64_C(2147483647)
/* Ranks above this are rejected by the constructors (a sanity bound on
 * input, not a limit of the data structure). */
#define QUILL_MAX_RANK 32

quill_type_kind quill_type_kind_of(const quill_type *t);

/* Scalar element types. Never NULL for a scalar kind. */
quill_type *quill_type_scalar(quill_context *ctx, quill_type_kind kind);

/* Quantized element type, per tensor. `storage` is an integer scalar type
 * (i4..i32, u4..u16); `expressed` a float scalar type; qmin/qmax must lie
 * within the storage type's range. Returns NULL (with no diagnostic) on an
 * invalid combination or allocation failure: use quill_type_quant_check()
 * first to get a reason. */
quill_type *quill_type_quant(quill_context *ctx, quill_type *storage,
                             quill_type *expressed, double scale,
                             int64_t zero_point, int64_t qmin, int64_t qmax);
/* Quantized element type, per axis: n scales and zero points along `axis`. */
quill_type *quill_type_quant_axis(quill_context *ctx, quill_type *storage,
                                  quill_type *expressed, int32_t axis,
                                  size_t n, const double *scales,
                                  const int64_t *zero_points, int64_t qmin,
                                  int64_t qmax);
/* Return NULL if the parameters are valid, else a static string naming the
 * problem ("scale must be positive and finite", ...). */
const char *quill_type_quant_check(const quill_type *storage,
                                   const quill_type *expressed, size_t n,
                                   const double *scales,
                                   const int64_t *zero_points, int64_t qmin,
                                   int64_t qmax);

/* Ranked tensor. dims may contain QUILL_DIM_DYNAMIC; other dims must be in
 * [0, QUILL_MAX_DIM].
 * Returns NULL on invalid input (rank > QUILL_MAX_RANK, bad dim, non-element
 * type) or allocation failure. */
quill_type *quill_type_tensor(quill_context *ctx, quill_type *elem,
                              unsigned rank, const int64_t *dims);

/* ---- queries ----------------------------------------------------------- */

bool quill_type_is_scalar(const quill_type *t);
bool quill_type_is_float(const quill_type *t);   /* f16 bf16 f32 f64 */
bool quill_type_is_integer(const quill_type *t); /* iN uN (not bool) */
bool quill_type_is_signed(const quill_type *t);  /* iN */
bool quill_type_is_quant(const quill_type *t);
bool quill_type_is_tensor(const quill_type *t);
/* Bit width of a scalar type (bool: 8, storage width of a quant type). */
unsigned quill_type_bit_width(const quill_type *t);
/* Bytes per element in memory (i4/u4 take one byte each; quant: storage). */
size_t quill_type_elem_bytes(const quill_type *t);
/* Keyword of a scalar type ("f32"), NULL for non-scalars. */
const char *quill_type_scalar_name(quill_type_kind kind);
/* Min and max representable value of an integer scalar type. */
int64_t quill_type_int_min(const quill_type *t);
int64_t quill_type_int_max(const quill_type *t);

/* Tensor accessors (t must be a tensor type). */
quill_type *quill_type_elem(const quill_type *t);
unsigned quill_type_rank(const quill_type *t);
int64_t quill_type_dim(const quill_type *t, unsigned i);
const int64_t *quill_type_dims(const quill_type *t);
bool quill_type_has_static_shape(const quill_type *t);
/* Number of elements, or -1 if a dim is dynamic (or on overflow). */
int64_t quill_type_num_elements(const quill_type *t);
/* Same tensor shape, different element type. */
quill_type *quill_type_with_elem(quill_context *ctx, const quill_type *t,
                                 quill_type *elem);

/* Quant accessors (t must be a quant element type). */
quill_type *quill_type_quant_storage(const quill_type *t);
quill_type *quill_type_quant_expressed(const quill_type *t);
/* -1 for per-tensor, else the quantized axis. */
int32_t quill_type_quant_axis_of(const quill_type *t);
size_t quill_type_quant_num_params(const quill_type *t); /* 1 if per-tensor */
const double *quill_type_quant_scales(const quill_type *t);
const int64_t *quill_type_quant_zero_points(const quill_type *t);
int64_t quill_type_quant_qmin(const quill_type *t);
int64_t quill_type_quant_qmax(const quill_type *t);

/* Append the textual form of a type to a string buffer. */
void quill_type_print(const quill_type *t, quill_strbuf *sb);

QUILL_END_DECLS

#endif /* QUILL_IR_TYPE_H */

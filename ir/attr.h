/*
 * attr.h - uniqued, immutable attributes: ints, floats, bools, strings,
 * types, lists and dense tensors (constants and weights).
 *
 * Attributes are uniqued in the context like types: equal attributes are the
 * same pointer (floats compare by bit pattern, so -0.0 and 0.0 differ and a
 * NaN equals itself). Dense data is copied into the context and stays valid
 * as long as the context.
 *
 * Textual forms:
 *   42   -7   1.5   -2.0e-03   inf   -inf   nan   true   false   "str"
 *   f32   tensor<2xi8>                       (type attributes)
 *   [1, 2, 3]   []   [1.0, "a"]              (lists)
 *   dense<[1.0, 2.0]> : tensor<2xf32>        (up to 16 elements, flat)
 *   dense<0.0> : tensor<64x64xf32>           (splat)
 *   dense<"0x0000803F..."> : tensor<...>     (hex blob, little endian)
 */
#ifndef QUILL_IR_ATTR_H
#define QUILL_IR_ATTR_H

#include "types_fwd.h"

QUILL_BEGIN_DECLS

typedef enum quill_attr_kind {
  QUILL_ATTR_INT,
  QUILL_ATTR_FLOAT,
  QUILL_ATTR_BOOL,
  QUILL_ATTR_STRING,
  QUILL_ATTR_TYPE,
  QUILL_ATTR_LIST,
  QUILL_ATTR_DENSE,
} quill_attr_kind;

/* An attribute attached to an op under an interned name. */
typedef struct quill_named_attr {
  quill_ident name;
  const quill_attr *attr;
} quill_named_attr;

/* Constructors. All return NULL only on allocation failure (or, for dense,
 * on a size mismatch). */
const quill_attr *quill_attr_int(quill_context *ctx, int64_t v);
const quill_attr *quill_attr_float(quill_context *ctx, double v);
const quill_attr *quill_attr_bool(quill_context *ctx, bool v);
const quill_attr *quill_attr_string(quill_context *ctx, const char *s,
                                    size_t len);
const quill_attr *quill_attr_type(quill_context *ctx, quill_type *t);
const quill_attr *quill_attr_list(quill_context *ctx, size_t n,
                                  const quill_attr *const *elems);
/* Convenience: a list of ints. */
const quill_attr *quill_attr_int_list(quill_context *ctx, size_t n,
                                      const int64_t *v);
/* Dense tensor: `type` is a statically shaped tensor type; `data` holds
 * num_elements * elem_bytes bytes in row-major order, host (little-endian)
 * layout; bool is one byte per element; quantized tensors hold their storage
 * integers. The data is copied. */
const quill_attr *quill_attr_dense(quill_context *ctx, quill_type *type,
                                   const void *data, size_t size);

/* Accessors. Calling the wrong accessor for a kind is an internal error
 * (asserted). */
quill_attr_kind quill_attr_kind_of(const quill_attr *a);
int64_t quill_attr_int_value(const quill_attr *a);
double quill_attr_float_value(const quill_attr *a);
bool quill_attr_bool_value(const quill_attr *a);
const char *quill_attr_string_value(const quill_attr *a, size_t *len);
quill_type *quill_attr_type_value(const quill_attr *a);
size_t quill_attr_list_size(const quill_attr *a);
const quill_attr *quill_attr_list_elem(const quill_attr *a, size_t i);
quill_type *quill_attr_dense_type(const quill_attr *a);
const void *quill_attr_dense_data(const quill_attr *a);
size_t quill_attr_dense_size(const quill_attr *a);
/* True if every element of the dense attr has the same bytes. */
bool quill_attr_dense_is_splat(const quill_attr *a);

/* If `a` is a list of ints, copy up to `max` of them into out and return
 * the list length; else return -1. */
int64_t quill_attr_get_ints(const quill_attr *a, int64_t *out, size_t max);

/* Read element i of a dense attr of any scalar type, converted. */
double quill_attr_dense_get_f64(const quill_attr *a, size_t i);
int64_t quill_attr_dense_get_i64(const quill_attr *a, size_t i);

/* Append the textual form to a string buffer. */
void quill_attr_print(const quill_attr *a, quill_strbuf *sb);

/* IEEE half and bfloat16 conversions (round to nearest even). */
float quill_f16_to_f32(uint16_t h);
uint16_t quill_f32_to_f16(float f);
float quill_bf16_to_f32(uint16_t h);
uint16_t quill_f32_to_bf16(float f);

QUILL_END_DECLS

#endif /* QUILL_IR_ATTR_H */

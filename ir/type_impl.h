/*
 * type_impl.h - the private body of quill_type (ir/ *.c only).
 *
 * Scalar types are embedded in the context (one per kind). Quant and tensor
 * types are single allocations with their arrays trailing the struct:
 *
 *   [ struct quill_type | scales[n] | zero_points[n] ]     quant
 *   [ struct quill_type | dims[rank] ]                     tensor
 *
 * and are uniqued in ctx->types by structural hash + equality.
 */
#ifndef QUILL_IR_TYPE_IMPL_H
#define QUILL_IR_TYPE_IMPL_H

#include "ir/type.h"

struct quill_type {
  quill_type_kind kind;
  size_t alloc_size; /* bytes of this allocation; 0 for embedded scalars */
  uint64_t hash;
  union {
    struct {
      quill_type *storage;
      quill_type *expressed;
      int32_t axis; /* -1: per tensor */
      size_t n;     /* number of scale/zero-point pairs */
      double *scales;
      int64_t *zero_points;
      int64_t qmin, qmax;
    } quant;
    struct {
      quill_type *elem;
      unsigned rank;
      int64_t *dims;
    } tensor;
  } u;
};

#endif /* QUILL_IR_TYPE_IMPL_H */

/*
 * attr_impl.h - the private body of quill_attr (ir/ *.c only).
 *
 * Every attribute is one allocation uniqued in ctx->attrs. Variable-size
 * payloads trail the struct (16-byte aligned):
 *
 *   [ struct quill_attr | string bytes + NUL ]        string
 *   [ struct quill_attr | elems[n] ]                  list
 *   [ struct quill_attr | pad | dense bytes ]         dense
 */
#ifndef QUILL_IR_ATTR_IMPL_H
#define QUILL_IR_ATTR_IMPL_H

#include "ir/attr.h"

struct quill_attr {
  quill_attr_kind kind;
  size_t alloc_size; /* bytes of this allocation */
  uint64_t hash;
  union {
    int64_t i;
    double f;
    bool b;
    struct {
      const char *data; /* NUL-terminated, may contain NULs */
      size_t len;
    } str;
    quill_type *type;
    struct {
      size_t n;
      const quill_attr **elems;
    } list;
    struct {
      quill_type *type;
      const void *data;
      size_t size;
    } dense;
  } u;
};

#endif /* QUILL_IR_ATTR_IMPL_H */

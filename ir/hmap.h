/*
 * hmap.h - a hash map from borrowed keys to pointers, for builders that
 * look things up by address or by name (the ONNX and TFLite exporters:
 * value -> tensor, names in use).
 *
 * Open addressing with linear probing over a power-of-two slot array that
 * doubles (from 64) before it is half full. Keys are pointers compared by
 * address, or (str_key) NUL-terminated strings compared by content; one
 * map uses one kind, and the keys must outlive it. Entries cannot be
 * removed. Slots come from the context's funnel: quill_hmap_free them.
 * (ir/strmap.h is the parser's map of (pointer, length) keys.)
 */
#ifndef QUILL_IR_HMAP_H
#define QUILL_IR_HMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/context.h"

typedef struct quill_hmap_slot {
  const void *key; /* NULL: empty */
  void *val;
} quill_hmap_slot;

/* Zero-initialize. */
typedef struct quill_hmap {
  quill_hmap_slot *slots;
  size_t cap, count;
} quill_hmap;

/* The value of key, or NULL (also for a NULL key). */
void *quill_hmap_get(const quill_hmap *m, const void *key, bool str_key);
/* Insert or replace; false when out of memory (the map is unchanged). */
bool quill_hmap_put(quill_context *ctx, quill_hmap *m, const void *key,
                    void *val, bool str_key);
/* Free the slots (not the keys or values); the map is empty afterwards. */
void quill_hmap_free(quill_context *ctx, quill_hmap *m);

#endif

/*
 * strmap.h - a small string-keyed hash map private to ir/ (parser value
 * tables, printer name sets).
 *
 * Open addressing with linear probing over a power-of-two slot array, FNV-1a
 * hashes. Keys are (pointer, length) byte strings that the map does NOT copy:
 * they must outlive the map (the parser points into the source text, the
 * printer into names it owns). Entries cannot be removed; clear the whole
 * map instead. Slots are allocated through the context funnel.
 */
#ifndef QUILL_IR_STRMAP_H
#define QUILL_IR_STRMAP_H

#include "ir/types_fwd.h"

typedef struct quill_strmap_entry {
  const char *key; /* NULL marks an empty slot */
  size_t len;
  uint64_t hash;
  void *val;     /* caller's payload */
  quill_loc loc; /* caller's payload (the parser keeps definitions here) */
} quill_strmap_entry;

typedef struct quill_strmap {
  quill_context *ctx;
  quill_strmap_entry *slots;
  size_t cap;   /* number of slots, 0 or a power of two */
  size_t count; /* occupied slots */
} quill_strmap;

void quill_strmap_init(quill_strmap *m, quill_context *ctx);
/* Free the slots (not the keys). The map can be reused after init. */
void quill_strmap_free(quill_strmap *m);
/* Forget every entry, keeping the slot array. */
void quill_strmap_clear(quill_strmap *m);
/* The entry for key, or NULL. */
quill_strmap_entry *quill_strmap_find(const quill_strmap *m, const char *key,
                                      size_t len);
/* Find or insert key. *existed tells which. Returns NULL on allocation
 * failure. The returned pointer is valid until the next insert. */
quill_strmap_entry *quill_strmap_insert(quill_strmap *m, const char *key,
                                        size_t len, bool *existed);

#endif /* QUILL_IR_STRMAP_H */

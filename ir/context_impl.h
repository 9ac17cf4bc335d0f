/*
 * context_impl.h - the private body of quill_context and the small helpers
 * (hashing, uniquing tables) shared by ir/context.c, ir/type.c, ir/attr.c.
 *
 * Only ir/ *.c may include this file.
 *
 * A uniquing table is an open-addressing hash set of pointers, each stored
 * with its full 64-bit hash so that growth never recomputes hashes:
 *
 *   slots: [ {h, p} | {0, NULL} | {h, p} | ... ]   cap is a power of two,
 *                                                   load factor <= 1/2
 *
 * Lookups take an equality callback comparing an entry with a caller key.
 */
#ifndef QUILL_IR_CONTEXT_IMPL_H
#define QUILL_IR_CONTEXT_IMPL_H

#include "ir/context.h"
#include "ir/type_impl.h"

typedef struct quill_uniq_slot {
  uint64_t hash;
  void *ptr; /* NULL: empty */
} quill_uniq_slot;

typedef struct quill_uniq_table {
  quill_uniq_slot *slots;
  size_t cap;   /* 0 or a power of two */
  size_t count; /* live entries */
} quill_uniq_table;

typedef bool (*quill_uniq_eq_fn)(const void *entry, const void *key);

/* Find an entry with hash h for which eq(entry, key) holds, or NULL. */
void *quill_uniq_lookup(const quill_uniq_table *t, uint64_t h,
                        quill_uniq_eq_fn eq, const void *key);
/* Add p (not already present) under hash h; QUILL_ERR_NOMEM on failure. */
quill_status quill_uniq_insert(quill_context *ctx, quill_uniq_table *t,
                               uint64_t h, void *p);
/* Free the slot array (not the entries). */
void quill_uniq_free(quill_context *ctx, quill_uniq_table *t);

/* 64-bit hashing helpers (deterministic, seedless). */
uint64_t quill_hash_bytes(uint64_t h, const void *data, size_t n);
static inline uint64_t quill_hash_u64(uint64_t h, uint64_t v) {
  h ^= v + UINT64_C(0x9E3779B97F4A7C15) + (h << 6) + (h >> 2);
  h *= UINT64_C(0xBF58476D1CE4E5B9);
  return h ^ (h >> 31);
}

/* A registered source buffer (see quill_context_add_source). */
typedef struct quill_source {
  quill_ident file;
  char *text;
  size_t len;
  uint32_t line_offset;
  size_t *line_starts; /* offset of each line's first byte */
  size_t num_lines;
} quill_source;

/* An extension slot (see quill_context_set_slot). */
typedef struct quill_slot {
  const void *key;
  void *value;
  quill_slot_destroy_fn destroy;
} quill_slot;

struct quill_context {
  quill_alloc_fn alloc;
  void *alloc_ud;

  quill_uniq_table idents; /* entries: char * (NUL-terminated) */
  quill_uniq_table types;  /* entries: quill_type * (quant and tensor) */
  quill_uniq_table attrs;  /* entries: quill_attr * */
  quill_type scalars[QUILL_TYPE_QUANT]; /* one per scalar kind */

  quill_source *sources;
  size_t num_sources, cap_sources;

  quill_diag_handler diag_handler; /* NULL: default (stderr) */
  void *diag_ud;
  unsigned num_errors;

  quill_ident *debug_channels;
  size_t num_debug, cap_debug;
  bool debug_all;

  quill_slot *slots; /* in order of creation */
  size_t num_slots, cap_slots;
};

/* Teardown hooks for the uniqued objects (ir/type.c, ir/attr.c). */
void quill_types_destroy(quill_context *ctx);
void quill_attrs_destroy(quill_context *ctx);
/* Initialise ctx->scalars (ir/type.c). */
void quill_types_init(quill_context *ctx);

#endif /* QUILL_IR_CONTEXT_IMPL_H */

/*
 * strmap.c - string-keyed open-addressing hash map (see strmap.h).
 *
 * Linear probing; the table doubles when it would become more than half
 * full, so probe sequences stay short. The hash of every entry is cached so
 * growing never touches the keys again.
 */
#include <string.h>

#include "ir/context.h"
#include "ir/strmap.h"

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = UINT64_C(1469598103934665603);
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= UINT64_C(1099511628211);
  }
  return h;
}

void quill_strmap_init(quill_strmap *m, quill_context *ctx) {
  m->ctx = ctx;
  m->slots = NULL;
  m->cap = 0;
  m->count = 0;
}

void quill_strmap_free(quill_strmap *m) {
  if (m->slots)
    quill_free(m->ctx, m->slots, m->cap * sizeof *m->slots);
  m->slots = NULL;
  m->cap = 0;
  m->count = 0;
}

void quill_strmap_clear(quill_strmap *m) {
  if (m->slots)
    memset(m->slots, 0, m->cap * sizeof *m->slots);
  m->count = 0;
}

static quill_strmap_entry *probe(const quill_strmap *m, const char *key,
                                 size_t len, uint64_t h) {
  size_t mask = m->cap - 1;
  for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
    quill_strmap_entry *e = &m->slots[i];
    if (!e->key)
      return e;
    if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0)
      return e;
  }
}

quill_strmap_entry *quill_strmap_find(const quill_strmap *m, const char *key,
                                      size_t len) {
  if (m->cap == 0)
    return NULL;
  quill_strmap_entry *e = probe(m, key, len, hash_bytes(key, len));
  return e->key ? e : NULL;
}

static bool grow(quill_strmap *m) {
  size_t ncap = m->cap ? m->cap * 2 : 16;
  quill_strmap_entry *ns = quill_calloc(m->ctx, ncap, sizeof *ns);
  if (!ns)
    return false;
  quill_strmap old = *m;
  m->slots = ns;
  m->cap = ncap;
  for (size_t i = 0; i < old.cap; i++) {
    quill_strmap_entry *e = &old.slots[i];
    if (e->key)
      *probe(m, e->key, e->len, e->hash) = *e;
  }
  if (old.slots)
    quill_free(m->ctx, old.slots, old.cap * sizeof *old.slots);
  return true;
}

quill_strmap_entry *quill_strmap_insert(quill_strmap *m, const char *key,
                                        size_t len, bool *existed) {
  uint64_t h = hash_bytes(key, len);
  if (m->cap) {
    quill_strmap_entry *e = probe(m, key, len, h);
    if (e->key) {
      *existed = true;
      return e;
    }
  }
  *existed = false;
  if ((m->count + 1) * 2 > m->cap && !grow(m))
    return NULL;
  quill_strmap_entry *e = probe(m, key, len, h);
  e->key = key;
  e->len = len;
  e->hash = h;
  e->val = NULL;
  e->loc = (quill_loc){0, 0, 0, 0};
  m->count++;
  return e;
}

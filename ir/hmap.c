/*
 * hmap.c - the hash map of hmap.h: pointers hashed with a 64-bit mix,
 * strings with FNV-1a; growth rehashes every key into a slot array twice
 * as large and frees the old one.
 */
#include "ir/hmap.h"

#include <stdint.h>
#include <string.h>

static uint64_t hash_key(const void *key, bool str) {
  uint64_t h;
  if (str) {
    h = 1469598103934665603ull;
    for (const char *s = key; *s; s++)
      h = (h ^ (unsigned char)*s) * 1099511628211ull;
  } else {
    h = (uint64_t)(uintptr_t)key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  }
  return h;
}

static quill_hmap_slot *slot_of(const quill_hmap *m, const void *key,
                                bool str) {
  size_t mask = m->cap - 1;
  for (size_t i = (size_t)hash_key(key, str) & mask;; i = (i + 1) & mask) {
    const void *k = m->slots[i].key;
    if (!k || (str ? !strcmp(k, key) : k == key))
      return &m->slots[i];
  }
}

void *quill_hmap_get(const quill_hmap *m, const void *key, bool str_key) {
  if (!m->cap || !key)
    return NULL;
  quill_hmap_slot *s = slot_of(m, key, str_key);
  return s->key ? s->val : NULL;
}

bool quill_hmap_put(quill_context *ctx, quill_hmap *m, const void *key,
                    void *val, bool str_key) {
  if ((m->count + 1) * 2 > m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 64;
    quill_hmap_slot *ns = quill_calloc(ctx, ncap, sizeof *ns);
    if (!ns)
      return false;
    quill_hmap old = *m;
    m->slots = ns;
    m->cap = ncap;
    for (size_t i = 0; i < old.cap; i++)
      if (old.slots[i].key)
        *slot_of(m, old.slots[i].key, str_key) = old.slots[i];
    quill_free(ctx, old.slots, old.cap * sizeof *old.slots);
  }
  quill_hmap_slot *s = slot_of(m, key, str_key);
  if (!s->key)
    m->count++;
  s->key = key;
  s->val = val;
  return true;
}

void quill_hmap_free(quill_context *ctx, quill_hmap *m) {
  quill_free(ctx, m->slots, m->cap * sizeof *m->slots);
  memset(m, 0, sizeof *m);
}

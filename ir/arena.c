/*
 * arena.c - the chunked bump allocator of arena.h.
 *
 * A chunk is a header followed by its blocks; `used` counts bytes handed
 * out, header included. Allocation rounds the size up to 16, takes it from
 * the head chunk when it fits, else allocates a new chunk: a regular one of
 * next_size bytes (which then doubles, up to ARENA_MAX_CHUNK) that becomes
 * the head, or, for a request over half of next_size, a dedicated chunk of
 * exactly the request linked behind the head.
 */
#include "ir/arena.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct quill_arena_chunk {
  quill_arena_chunk *next; /* older chunk */
  size_t size;             /* bytes in this allocation, header included */
  size_t used;             /* bytes handed out, header included */
};

#define ARENA_ALIGN 16
#define ARENA_MIN_CHUNK 4096
#define ARENA_MAX_CHUNK (1u << 20)
#define CHUNK_HEADER                                                           \
  ((sizeof(quill_arena_chunk) + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN)

void quill_arena_init(quill_arena *a, quill_context *ctx) {
  memset(a, 0, sizeof *a);
  a->ctx = ctx;
}

static void *chunk_alloc(quill_arena *a, size_t size) {
  quill_arena_chunk *c = a->head;
  if (c && c->size - c->used >= size) {
    void *p = (char *)c + c->used;
    c->used += size;
    return p;
  }
  if (!a->next_size)
    a->next_size = ARENA_MIN_CHUNK;
  size_t csize = CHUNK_HEADER + size;
  bool dedicated = csize > a->next_size / 2;
  if (!dedicated)
    csize = a->next_size;
  quill_arena_chunk *nc = quill_alloc(a->ctx, csize);
  if (!nc)
    return NULL;
  nc->size = csize;
  nc->used = CHUNK_HEADER + size;
  if (dedicated && c) {
    /* keep the current chunk's free space available: link behind it */
    nc->next = c->next;
    c->next = nc;
  } else {
    nc->next = c;
    a->head = nc;
    if (a->next_size < ARENA_MAX_CHUNK)
      a->next_size *= 2;
  }
  return (char *)nc + CHUNK_HEADER;
}

void *quill_arena_alloc(quill_arena *a, size_t size) {
  void *p = NULL;
  if (size <= SIZE_MAX / 2) {
    size = (size + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    p = chunk_alloc(a, size ? size : ARENA_ALIGN);
  }
  if (!p) {
    a->failed = true;
    return NULL;
  }
  return memset(p, 0, size ? size : ARENA_ALIGN);
}

char *quill_arena_strdup(quill_arena *a, const char *s) {
  size_t n = strlen(s);
  char *d = quill_arena_alloc(a, n + 1);
  if (d)
    memcpy(d, s, n + 1);
  return d;
}

char *quill_arena_vprintf(quill_arena *a, const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (n < 0) {
    a->failed = true;
    return NULL;
  }
  char *s = quill_arena_alloc(a, (size_t)n + 1);
  if (s)
    vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

char *quill_arena_printf(quill_arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = quill_arena_vprintf(a, fmt, ap);
  va_end(ap);
  return s;
}

void quill_arena_free(quill_arena *a) {
  for (quill_arena_chunk *c = a->head, *n; c; c = n) {
    n = c->next;
    quill_free(a->ctx, c, c->size);
  }
  a->head = NULL;
  a->next_size = 0;
  a->failed = false;
}


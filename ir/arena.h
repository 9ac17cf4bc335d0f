/*
 * arena.h - bump allocation for data that dies all at once: a graph's ops,
 * values and uses, an exporter's protobuf messages and FlatBuffer tables.
 *
 * An arena is a list of chunks allocated through the context's funnel
 * (quill_alloc). Chunks start at 4 KiB and double up to 1 MiB; a request
 * larger than half the next chunk gets a dedicated chunk linked behind the
 * current one, so the current one's free space stays in use:
 *
 *   head -> [hdr | a | b | c | free ...] -> [dedicated big block] -> older
 *
 * Memory comes back zeroed and 16-byte aligned. Nothing is freed one by
 * one; quill_arena_free releases every chunk. An allocation failure
 * returns NULL and sets `failed`, so a builder can check once at the end.
 */
#ifndef QUILL_IR_ARENA_H
#define QUILL_IR_ARENA_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "ir/context.h"

typedef struct quill_arena_chunk quill_arena_chunk;

typedef struct quill_arena {
  quill_context *ctx;
  quill_arena_chunk *head;
  size_t next_size; /* size of the next regular chunk (doubles, capped) */
  bool failed;      /* an allocation returned NULL */
} quill_arena;

void quill_arena_init(quill_arena *a, quill_context *ctx);
/* size bytes, zeroed, 16-byte aligned; NULL (and a->failed) when out of
 * memory. */
void *quill_arena_alloc(quill_arena *a, size_t size);
/* A copy of s, or of the formatted text, in the arena (NULL on failure). */
char *quill_arena_strdup(quill_arena *a, const char *s);
char *quill_arena_printf(quill_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *quill_arena_vprintf(quill_arena *a, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Release every chunk; the arena is empty (and reusable) afterwards. */
void quill_arena_free(quill_arena *a);

#endif

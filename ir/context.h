/*
 * context.h - the Quill context: allocator funnel, identifier interning,
 * diagnostics and source buffers.
 *
 * There is no global mutable state in Quill. Everything that would be global
 * (the allocator, uniqued types and attributes, the diagnostic handler, the
 * set of enabled debug channels) hangs off a quill_context that is passed
 * explicitly, as lua_State is in Lua.
 */
#ifndef QUILL_IR_CONTEXT_H
#define QUILL_IR_CONTEXT_H

#include <stdarg.h>
#include <stdio.h>

#include "types_fwd.h"

QUILL_BEGIN_DECLS

/* ---- allocator funnel -------------------------------------------------- */

/* The one allocation function, in Lua's style: with nsize == 0 it frees ptr
 * and returns NULL; otherwise it (re)allocates ptr from osize to nsize bytes
 * and returns NULL on failure (leaving ptr untouched). */
typedef void *(*quill_alloc_fn)(void *ud, void *ptr, size_t osize,
                                size_t nsize);

/* Create a context. With alloc == NULL the C library allocator is used.
 * Returns NULL only if the very first allocation fails. Every call should be
 * paired with quill_context_destroy(). */
quill_context *quill_context_create(quill_alloc_fn alloc, void *ud);
void quill_context_destroy(quill_context *ctx);

/* Allocate through the context's funnel. Return NULL on failure (no
 * diagnostic is emitted: callers turn that into QUILL_ERR_NOMEM). */
void *quill_alloc(quill_context *ctx, size_t size);
void *quill_calloc(quill_context *ctx, size_t n, size_t size);
void *quill_realloc(quill_context *ctx, void *ptr, size_t osize, size_t nsize);
void quill_free(quill_context *ctx, void *ptr, size_t size);
/* Duplicate a string through the funnel; free with quill_string_free(). */
char *quill_strdup(quill_context *ctx, const char *s);
void quill_string_free(quill_context *ctx, char *s);

/* ---- identifiers ------------------------------------------------------- */

/* Intern a string; the result lives as long as the context. Returns NULL
 * only on allocation failure. */
quill_ident quill_ident_get(quill_context *ctx, const char *s);
quill_ident quill_ident_getn(quill_context *ctx, const char *s, size_t n);
/* Look an identifier up without creating it (NULL if never interned). */
quill_ident quill_ident_lookup(quill_context *ctx, const char *s);

/* ---- locations --------------------------------------------------------- */

quill_loc quill_loc_file(quill_context *ctx, const char *file, uint32_t line,
                         uint32_t col);
quill_loc quill_loc_named(quill_context *ctx, const char *name);
static inline quill_loc quill_loc_unknown(void) {
  quill_loc l = {0, 0, 0, 0};
  return l;
}
static inline bool quill_loc_is_unknown(quill_loc l) {
  return !l.file && !l.name;
}

/* ---- source buffers ---------------------------------------------------- */

/* Register the text of a file so that diagnostics can show the offending
 * line with a caret. The context copies the text. `line_offset` is added to
 * line numbers within the buffer (used by --split-input-file so that chunk
 * diagnostics carry whole-file line numbers): a buffer registered with
 * line_offset 10 holds lines 11, 12, ... of `file`. Registering a file again
 * replaces the text (returns QUILL_ERR_NOMEM on allocation failure). */
quill_status quill_context_add_source(quill_context *ctx, const char *file,
                                      const char *text, size_t len,
                                      uint32_t line_offset);
/* Return the text of line `line` of `file` (not NUL-terminated; *len gets
 * its length), or NULL if unknown. */
const char *quill_context_source_line(quill_context *ctx, quill_ident file,
                                      uint32_t line, size_t *len);

/* ---- diagnostics ------------------------------------------------------- */

typedef enum quill_diag_severity {
  QUILL_DIAG_ERROR,
  QUILL_DIAG_WARNING,
  QUILL_DIAG_NOTE,
  QUILL_DIAG_REMARK,
} quill_diag_severity;

const char *quill_diag_severity_name(quill_diag_severity sev);

/* A diagnostic handler receives every diagnostic. `msg` is only valid for
 * the duration of the call. */
typedef void (*quill_diag_handler)(void *ud, quill_loc loc,
                                   quill_diag_severity sev, const char *msg);

/* Install a handler (NULL restores the default, which prints to stderr as
 *   file:line:col: error: message
 *   <source line>
 *       ^
 * ). Returns nothing; the previous handler is dropped. */
void quill_diag_set_handler(quill_context *ctx, quill_diag_handler h,
                            void *ud);
/* Print a diagnostic the way the default handler does, to `out`: a file
 * without a line and a node name (an imported model's node) print as
 * "m.onnx: /fc/Gemm: error: message". */
void quill_diag_print(quill_context *ctx, FILE *out, quill_loc loc,
                      quill_diag_severity sev, const char *msg);

/* Emit a diagnostic (printf-style). Always returns QUILL_ERR_INVALID so
 * callers can write `return quill_diag_emit(...)` for errors. */
quill_status quill_diag_emit(quill_context *ctx, quill_loc loc,
                             quill_diag_severity sev, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
quill_status quill_diag_emitv(quill_context *ctx, quill_loc loc,
                              quill_diag_severity sev, const char *fmt,
                              va_list ap);
/* Shorthand for an error. */
quill_status quill_error(quill_context *ctx, quill_loc loc, const char *fmt,
                         ...) __attribute__((format(printf, 3, 4)));
/* Number of errors emitted so far on this context. */
unsigned quill_diag_error_count(const quill_context *ctx);

/* ---- extension slots ---------------------------------------------------- */

/* Components outside ir/ (backend configs, caches) keep per-context state in
 * slots instead of globals. A slot is keyed by the address of a static
 * object of the owning file, so keys of different components never clash:
 *
 *   static const char cache_key;      // its address is the key
 *   my_cache *c = quill_context_get_slot(ctx, &cache_key);
 *   if (!c && quill_context_set_slot(ctx, &cache_key, new_cache, free_cache))
 *     ...NOMEM...
 *
 * The context owns a slot's value through its destructor, which is called
 * once with (ctx, value) when the value is replaced or cleared, or when the
 * context is destroyed (slots in reverse order of creation, before types,
 * attributes and identifiers are freed, so a destructor may still use the
 * context's allocator and identifiers). */
typedef void (*quill_slot_destroy_fn)(quill_context *ctx, void *value);

/* Set (or replace) the value under `key`. A replaced value different from
 * the new one is destroyed with its own destructor. value == NULL clears the
 * slot. Returns QUILL_ERR_NOMEM (nothing changed, `value` not destroyed) if
 * a new slot cannot be allocated. */
quill_status quill_context_set_slot(quill_context *ctx, const void *key,
                                    void *value, quill_slot_destroy_fn destroy);
/* The value under `key`, or NULL if none. */
void *quill_context_get_slot(const quill_context *ctx, const void *key);

/* ---- debug channels (--debug-only=NAME) -------------------------------- */

/* Enable a comma-separated list of channel names ("all" enables every one). */
quill_status quill_debug_enable(quill_context *ctx, const char *names);
bool quill_debug_enabled(quill_context *ctx, const char *channel);
/* Print "[channel] message\n" to stderr if the channel is enabled. */
void quill_debug(quill_context *ctx, const char *channel, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

QUILL_END_DECLS

#endif /* QUILL_IR_CONTEXT_H */

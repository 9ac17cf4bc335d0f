/*
 * strbuf.h - a growable string buffer used by the printer and diagnostics.
 *
 * Allocation goes through the context funnel. On allocation failure the
 * buffer stops growing and remembers the failure (quill_strbuf_failed), so
 * printing code does not have to check every append.
 */
#ifndef QUILL_IR_STRBUF_H
#define QUILL_IR_STRBUF_H

#include <stdarg.h>

#include "types_fwd.h"

QUILL_BEGIN_DECLS

struct quill_strbuf {
  quill_context *ctx;
  char *data; /* NUL-terminated when len > 0 or after any append */
  size_t len;
  size_t cap;
  bool failed; /* an allocation failed; contents are truncated */
};

void quill_strbuf_init(quill_strbuf *sb, quill_context *ctx);
void quill_strbuf_free(quill_strbuf *sb);
void quill_strbuf_clear(quill_strbuf *sb);
void quill_strbuf_append(quill_strbuf *sb, const char *s, size_t n);
void quill_strbuf_puts(quill_strbuf *sb, const char *s);
void quill_strbuf_putc(quill_strbuf *sb, char c);
void quill_strbuf_printf(quill_strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void quill_strbuf_vprintf(quill_strbuf *sb, const char *fmt, va_list ap);
/* The contents ("" if empty). Valid until the next append. */
const char *quill_strbuf_str(const quill_strbuf *sb);
static inline bool quill_strbuf_failed(const quill_strbuf *sb) {
  return sb->failed;
}

/* Append the shortest decimal text that parses back (strtod) to exactly d:
 * always contains '.', 'e', "inf" or "nan" so it reads as a float. */
void quill_strbuf_put_double(quill_strbuf *sb, double d);
/* Same for a float (strtof round trip). */
void quill_strbuf_put_float(quill_strbuf *sb, float f);
/* Append a C-style quoted string with \" \\ \n \t and \xx hex escapes. */
void quill_strbuf_put_quoted(quill_strbuf *sb, const char *s, size_t n);

QUILL_END_DECLS

#endif /* QUILL_IR_STRBUF_H */

/*
 * strbuf.c - growable string buffer, plus the float and string formatting
 * that the printer needs to be exact.
 *
 * Growth doubles the capacity through the context funnel. If an allocation
 * fails, the buffer keeps what it had, sets `failed` and ignores further
 * appends, so printing code checks once at the end.
 *
 * Floats: put_double tries 1..17 significant digits with "%.*e" and keeps
 * the first text that strtod reads back to the same bits (the shortest
 * round-trip decimal); put_float does the same with 1..9 digits and strtof.
 * The digits are then laid out so the text always reads as a float:
 * fixed notation with a dot for exponents -4..15 ("1.0", "-0.0", "100.0",
 * "0.00012"), else scientific ("1e-06", "1.5e+300"); plus inf/-inf/nan.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/context.h"
#include "ir/strbuf.h"

void quill_strbuf_init(quill_strbuf *sb, quill_context *ctx) {
  sb->ctx = ctx;
  sb->data = NULL;
  sb->len = 0;
  sb->cap = 0;
  sb->failed = false;
}

void quill_strbuf_free(quill_strbuf *sb) {
  if (sb->data)
    quill_free(sb->ctx, sb->data, sb->cap);
  sb->data = NULL;
  sb->len = sb->cap = 0;
}

void quill_strbuf_clear(quill_strbuf *sb) {
  sb->len = 0;
  if (sb->data)
    sb->data[0] = '\0';
  sb->failed = false;
}

/* Make room for n more bytes plus the NUL. */
static bool reserve(quill_strbuf *sb, size_t n) {
  if (sb->failed)
    return false;
  if (n > SIZE_MAX - sb->len - 1) {
    sb->failed = true;
    return false;
  }
  size_t need = sb->len + n + 1;
  if (need <= sb->cap)
    return true;
  size_t ncap = sb->cap ? sb->cap : 64;
  while (ncap < need)
    ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
  char *nd = quill_realloc(sb->ctx, sb->data, sb->cap, ncap);
  if (!nd) {
    sb->failed = true;
    return false;
  }
  sb->data = nd;
  sb->cap = ncap;
  return true;
}

void quill_strbuf_append(quill_strbuf *sb, const char *s, size_t n) {
  if (!reserve(sb, n))
    return;
  if (n)
    memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

void quill_strbuf_puts(quill_strbuf *sb, const char *s) {
  quill_strbuf_append(sb, s, strlen(s));
}

void quill_strbuf_putc(quill_strbuf *sb, char c) {
  quill_strbuf_append(sb, &c, 1);
}

void quill_strbuf_vprintf(quill_strbuf *sb, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    sb->failed = true;
    return;
  }
  if ((size_t)n < sizeof small) {
    quill_strbuf_append(sb, small, (size_t)n);
    return;
  }
  if (!reserve(sb, (size_t)n))
    return;
  vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
  sb->len += (size_t)n;
}

void quill_strbuf_printf(quill_strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  quill_strbuf_vprintf(sb, fmt, ap);
  va_end(ap);
}

const char *quill_strbuf_str(const quill_strbuf *sb) {
  return sb->data ? sb->data : "";
}

/* ---- floats ------------------------------------------------------------ */

static bool put_nonfinite(quill_strbuf *sb, double d) {
  if (isnan(d)) {
    quill_strbuf_puts(sb, "nan");
    return true;
  }
  if (isinf(d)) {
    quill_strbuf_puts(sb, d < 0 ? "-inf" : "inf");
    return true;
  }
  return false;
}

/* Lay out the "%.*e" text `e` (d.ddde+XX, the shortest round-trip digits)
 * as fixed notation when the exponent is moderate (0.0001 .. <1e16), else as
 * a trimmed scientific form ("1e-05", "1.5e+300"). */
static void put_digits(quill_strbuf *sb, const char *e) {
  char digits[32];
  size_t nd = 0;
  const char *p = e;
  if (*p == '-')
    quill_strbuf_putc(sb, *p++);
  for (; *p && *p != 'e'; p++)
    if (*p >= '0' && *p <= '9' && nd + 1 < sizeof digits)
      digits[nd++] = *p;
  int exp = *p == 'e' ? atoi(p + 1) : 0;
  while (nd > 1 && digits[nd - 1] == '0')
    nd--;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      quill_strbuf_puts(sb, "0.");
      for (int i = -1; i > exp; i--)
        quill_strbuf_putc(sb, '0');
      quill_strbuf_append(sb, digits, nd);
      return;
    }
    size_t ip = (size_t)exp + 1; /* digits before the point */
    for (size_t i = 0; i < ip; i++)
      quill_strbuf_putc(sb, i < nd ? digits[i] : '0');
    quill_strbuf_putc(sb, '.');
    if (nd > ip)
      quill_strbuf_append(sb, digits + ip, nd - ip);
    else
      quill_strbuf_putc(sb, '0');
    return;
  }
  quill_strbuf_putc(sb, digits[0]);
  if (nd > 1) {
    quill_strbuf_putc(sb, '.');
    quill_strbuf_append(sb, digits + 1, nd - 1);
  }
  quill_strbuf_printf(sb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
}

void quill_strbuf_put_double(quill_strbuf *sb, double d) {
  if (put_nonfinite(sb, d))
    return;
  char buf[48];
  for (int prec = 0; prec <= 16; prec++) {
    snprintf(buf, sizeof buf, "%.*e", prec, d);
    double back = strtod(buf, NULL);
    if (memcmp(&back, &d, sizeof d) == 0)
      break;
  }
  put_digits(sb, buf);
}

void quill_strbuf_put_float(quill_strbuf *sb, float f) {
  if (put_nonfinite(sb, (double)f))
    return;
  char buf[48];
  for (int prec = 0; prec <= 8; prec++) {
    snprintf(buf, sizeof buf, "%.*e", prec, (double)f);
    float back = strtof(buf, NULL);
    if (memcmp(&back, &f, sizeof f) == 0)
      break;
  }
  put_digits(sb, buf);
}

/* ---- strings ----------------------------------------------------------- */

void quill_strbuf_put_quoted(quill_strbuf *sb, const char *s, size_t n) {
  static const char hex[] = "0123456789ABCDEF";
  quill_strbuf_putc(sb, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '"':
      quill_strbuf_puts(sb, "\\\"");
      break;
    case '\\':
      quill_strbuf_puts(sb, "\\\\");
      break;
    case '\n':
      quill_strbuf_puts(sb, "\\n");
      break;
    case '\t':
      quill_strbuf_puts(sb, "\\t");
      break;
    default:
      if (c < 0x20 || c >= 0x7F) {
        char e[3] = {'\\', hex[c >> 4], hex[c & 15]};
        quill_strbuf_append(sb, e, 3);
      } else {
        quill_strbuf_putc(sb, (char)c);
      }
    }
  }
  quill_strbuf_putc(sb, '"');
}

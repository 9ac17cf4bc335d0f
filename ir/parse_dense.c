/*
 * parse_dense.c - dense<...> : tensor<...> literals of the .qir parser.
 *
 * Dense literals are parsed in two steps: first the literal is collected
 * as a flat list of element tokens (nested lists are flattened), then, once
 * the `: tensor<...>` type is known, every element is range-checked and
 * encoded into the exact byte layout quill_attr_dense() expects (f16/bf16
 * as halves, i4/u4/bool one byte each, quantized tensors as their storage
 * integers). Hex blobs ("0x...") must have exactly the right byte size.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/parser_impl.h"

/* Dense payloads above this are rejected (a sanity bound on text input).
 * Lists and hex blobs are bounded by the text anyway; splats are not, so
 * the bytes expanded from all splats of one parse share the same bound. */
#define DENSE_MAX_BYTES ((size_t)1 << 28)

/* One collected element: a numeric or identifier token, with `neg` set for
 * `-inf` / `-nan`. */
typedef struct delem {
  quill_token tok;
  bool neg;
} delem;

typedef struct dlist {
  delem *v;
  size_t len, cap;
} dlist;

static bool dlist_push(quill_parser *p, dlist *l, delem e) {
  if (l->len == l->cap) {
    size_t nc = l->cap ? l->cap * 2 : 16;
    delem *nv = quill_realloc(p->ctx, l->v, l->cap * sizeof *nv,
                              nc * sizeof *nv);
    if (!nv) {
      quill_parser_nomem(p);
      return false;
    }
    l->v = nv;
    l->cap = nc;
  }
  l->v[l->len++] = e;
  return true;
}

/* dense-elem ::= INT | FLOAT | 'true' | 'false' | 'inf' | 'nan'
 *              | '-' ('inf' | 'nan') | '[' (dense-elem (',' dense-elem)*)? ']'
 */
static bool parse_dense_elems(quill_parser *p, dlist *l) {
  if (quill_tok_is_punct(&p->tok, '[')) {
    if (++p->depth > QUILL_PARSE_MAX_DEPTH) {
      quill_parser_error(p, &p->tok, "dense literal nested too deeply");
      return false;
    }
    quill_parser_next(p);
    if (!quill_parser_accept(p, ']')) {
      do {
        if (!parse_dense_elems(p, l))
          return false;
      } while (quill_parser_accept(p, ','));
      if (!quill_parser_expect(p, ']'))
        return false;
    }
    p->depth--;
    return true;
  }
  delem e = {p->tok, false};
  if (quill_tok_is_punct(&p->tok, '-')) {
    quill_parser_next(p);
    if (!quill_tok_is(&p->tok, "inf") && !quill_tok_is(&p->tok, "nan")) {
      quill_parser_expected(p, "'inf' or 'nan' after '-'");
      return false;
    }
    e.tok = p->tok;
    e.neg = true;
  } else if (p->tok.kind != QUILL_TOK_INT && p->tok.kind != QUILL_TOK_FLOAT &&
             !quill_tok_is(&p->tok, "true") &&
             !quill_tok_is(&p->tok, "false") &&
             !quill_tok_is(&p->tok, "inf") && !quill_tok_is(&p->tok, "nan")) {
    quill_parser_expected(p, "dense element");
    return false;
  }
  quill_parser_next(p);
  return dlist_push(p, l, e);
}

static void type_text(quill_parser *p, const quill_type *t) {
  quill_strbuf_clear(&p->scratch);
  quill_type_print(t, &p->scratch);
}

static void elem_error(quill_parser *p, const delem *e, const quill_type *et,
                       const char *what) {
  type_text(p, et);
  quill_parser_error(p, &e->tok, "%s for element type '%s'", what,
                     quill_strbuf_str(&p->scratch));
}

/* Encode an integer element into nbytes at dst after a range check. */
static bool encode_int(quill_parser *p, const delem *e, const quill_type *et,
                       void *dst, size_t nbytes) {
  bool neg;
  uint64_t mag;
  if (e->tok.kind != QUILL_TOK_INT) {
    elem_error(p, e, et, "expected integer literal");
    return false;
  }
  if (!quill_parser_int_parts(p, &e->tok, &neg, &mag))
    return false;
  bool fits;
  if (quill_type_kind_of(et) == QUILL_TYPE_U64)
    fits = !neg || mag == 0;
  else if (neg)
    fits = mag <= (uint64_t)INT64_MAX + 1 &&
           (int64_t)(0 - mag) >= quill_type_int_min(et);
  else
    fits = mag <= (uint64_t)quill_type_int_max(et);
  if (!fits) {
    type_text(p, et);
    quill_parser_error(p, &e->tok, "value %.*s out of range for '%s'",
                       (int)e->tok.len, e->tok.text,
                       quill_strbuf_str(&p->scratch));
    return false;
  }
  uint64_t u = neg ? 0 - mag : mag;
  if (nbytes == 1) {
    uint8_t b = (uint8_t)u;
    memcpy(dst, &b, 1);
  } else if (nbytes == 2) {
    uint16_t h = (uint16_t)u;
    memcpy(dst, &h, 2);
  } else if (nbytes == 4) {
    uint32_t w = (uint32_t)u;
    memcpy(dst, &w, 4);
  } else {
    memcpy(dst, &u, 8);
  }
  return true;
}

/* Encode a float element (f16 bf16 f32 f64). */
static bool encode_float(quill_parser *p, const delem *e, const quill_type *et,
                         void *dst) {
  quill_type_kind k = quill_type_kind_of(et);
  double d = 0;
  float f = 0;
  bool special = e->tok.kind == QUILL_TOK_IDENT;
  if (special) {
    if (quill_tok_is(&e->tok, "inf"))
      d = INFINITY;
    else if (quill_tok_is(&e->tok, "nan"))
      d = NAN;
    else {
      elem_error(p, e, et, "expected floating point literal");
      return false;
    }
    if (e->neg)
      d = -d;
    f = (float)d;
  } else {
    const char *s = quill_parser_cstr(p, e->tok.text, e->tok.len);
    if (!s)
      return false;
    if (k == QUILL_TYPE_F64)
      d = strtod(s, NULL);
    else
      f = strtof(s, NULL);
    if (k == QUILL_TYPE_F64 ? isinf(d) : isinf(f)) {
      elem_error(p, e, et, "floating point literal out of range");
      return false;
    }
  }
  /* Every NaN becomes the canonical positive one: the printer writes all
   * NaNs as `nan`, so payloads and signs could not round-trip anyway. */
  if (isnan(d) || isnan(f))
    d = NAN, f = NAN;
  if (k == QUILL_TYPE_F64) {
    memcpy(dst, &d, 8);
  } else if (k == QUILL_TYPE_F32) {
    memcpy(dst, &f, 4);
  } else {
    uint16_t h = k == QUILL_TYPE_F16 ? quill_f32_to_f16(f)
                                     : quill_f32_to_bf16(f);
    float back = k == QUILL_TYPE_F16 ? quill_f16_to_f32(h)
                                     : quill_bf16_to_f32(h);
    if (isinf(back) && !isinf(f)) {
      elem_error(p, e, et, "floating point literal out of range");
      return false;
    }
    memcpy(dst, &h, 2);
  }
  return true;
}

/* Encode one element of scalar type et (a quant type's storage for
 * quantized tensors) into dst. */
static bool encode_elem(quill_parser *p, const delem *e, const quill_type *et,
                        void *dst, size_t nbytes) {
  if (quill_type_is_float(et))
    return encode_float(p, e, et, dst);
  if (quill_type_kind_of(et) == QUILL_TYPE_BOOL) {
    uint8_t b;
    if (quill_tok_is(&e->tok, "true") && !e->neg)
      b = 1;
    else if (quill_tok_is(&e->tok, "false") && !e->neg)
      b = 0;
    else if (e->tok.kind == QUILL_TOK_INT && e->tok.len == 1 &&
             (e->tok.text[0] == '0' || e->tok.text[0] == '1'))
      b = (uint8_t)(e->tok.text[0] - '0');
    else {
      elem_error(p, e, et, "expected 'true' or 'false'");
      return false;
    }
    memcpy(dst, &b, 1);
    return true;
  }
  return encode_int(p, e, et, dst, nbytes);
}

/* Check the bytes of a hex blob for element types narrower than a byte. */
static bool check_hex_bytes(quill_parser *p, const quill_token *tok,
                            const quill_type *et, const uint8_t *data,
                            size_t size) {
  quill_type_kind k = quill_type_kind_of(et);
  int lo, hi;
  if (k == QUILL_TYPE_BOOL || k == QUILL_TYPE_U4)
    lo = 0, hi = k == QUILL_TYPE_BOOL ? 1 : 15;
  else if (k == QUILL_TYPE_I4)
    lo = -8, hi = 7;
  else
    return true;
  for (size_t i = 0; i < size; i++) {
    int v = k == QUILL_TYPE_I4 ? (int)(int8_t)data[i] : (int)data[i];
    if (v < lo || v > hi) {
      type_text(p, et);
      quill_parser_error(p, tok, "hex byte %zu (0x%02x) out of range for '%s'",
                         i, data[i], quill_strbuf_str(&p->scratch));
      return false;
    }
  }
  return true;
}

/* Replace every NaN in a hex blob of float elements by the canonical NaN
 * that the text `nan` produces, so that print -> parse -> print stays a
 * fixed point (the printer writes all NaNs as `nan`). */
static void canonicalize_nans(const quill_type *et, uint8_t *data,
                              size_t size) {
  quill_type_kind k = quill_type_kind_of(et);
  for (size_t off = 0; quill_type_is_float(et) && off < size;) {
    if (k == QUILL_TYPE_F64) {
      double d;
      memcpy(&d, data + off, 8);
      if (isnan(d)) {
        d = NAN;
        memcpy(data + off, &d, 8);
      }
      off += 8;
    } else if (k == QUILL_TYPE_F32) {
      float f;
      memcpy(&f, data + off, 4);
      if (isnan(f)) {
        f = NAN;
        memcpy(data + off, &f, 4);
      }
      off += 4;
    } else {
      uint16_t h;
      memcpy(&h, data + off, 2);
      bool half = k == QUILL_TYPE_F16;
      if (isnan(half ? quill_f16_to_f32(h) : quill_bf16_to_f32(h))) {
        h = half ? quill_f32_to_f16(NAN) : quill_f32_to_bf16(NAN);
        memcpy(data + off, &h, 2);
      }
      off += 2;
    }
  }
}

/* The value of hex digit c, or 16 for any other character; with masks
 * rather than branches (weights are random digits: a branch on "digit or
 * letter" mispredicts half the time). */
static unsigned hex_digit(unsigned c) {
  unsigned d = c - '0', a = (c | 0x20) - 'a';
  unsigned md = 0u - (unsigned)(d < 10), ma = 0u - (unsigned)(a < 6);
  return (d & md) | ((a + 10) & ma) | (16u & ~(md | ma));
}

/* Decode a hex-string dense body ("0x...") into exactly `size` bytes. */
static bool decode_hex(quill_parser *p, const quill_token *tok,
                       const quill_type *type, uint8_t *out, size_t size) {
  size_t n;
  const char *s = quill_parser_string(p, tok, &n);
  if (!s)
    return false;
  if (n < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) {
    quill_parser_error(p, tok, "hex dense literal must start with '0x'");
    return false;
  }
  s += 2, n -= 2;
  if (n % 2 != 0 || n / 2 != size) {
    size_t have = n / 2;
    type_text(p, type);
    quill_parser_error(p, tok,
                       "hex dense literal has %s%zu bytes but '%s' needs %zu",
                       n % 2 ? "an odd number of digits, " : "", have,
                       quill_strbuf_str(&p->scratch), size);
    return false;
  }
  /* one branch-free pass (megabytes of weights go through here): an
   * invalid digit reads 16 and leaves its mark in `bad` */
  unsigned bad = 0;
  for (size_t i = 0; i < size; i++) {
    unsigned hi = hex_digit((unsigned char)s[2 * i]);
    unsigned lo = hex_digit((unsigned char)s[2 * i + 1]);
    bad |= hi | lo;
    out[i] = (uint8_t)(hi << 4 | (lo & 15));
  }
  if (bad >= 16) {
    quill_parser_error(p, tok, "invalid hex digit in dense literal");
    return false;
  }
  return true;
}

/* dense-attr ::= 'dense' '<' (dense-elem | string) '>' ':' type */
const quill_attr *quill_parser_dense(quill_parser *p) {
  quill_token start = p->tok;
  quill_parser_next(p); /* 'dense' */
  if (!quill_parser_expect(p, '<'))
    return NULL;
  dlist l = {0};
  quill_token hex = p->tok;
  bool is_hex = p->tok.kind == QUILL_TOK_STRING;
  bool is_list = quill_tok_is_punct(&p->tok, '[');
  const quill_attr *a = NULL;
  uint8_t *data = NULL;
  size_t size = 0;
  if (is_hex)
    quill_parser_next(p);
  else if (!parse_dense_elems(p, &l))
    goto out;
  if (!quill_parser_expect(p, '>') || !quill_parser_expect(p, ':'))
    goto out;
  quill_token tt = p->tok;
  quill_type *type = quill_parser_type(p);
  if (!type)
    goto out;
  if (!quill_type_is_tensor(type) || !quill_type_has_static_shape(type)) {
    quill_parser_error(p, &tt,
                       "dense attribute needs a statically shaped tensor type");
    goto out;
  }
  quill_type *et = quill_type_elem(type);
  if (quill_type_is_quant(et))
    et = quill_type_quant_storage(et);
  int64_t n = quill_type_num_elements(type);
  size_t eb = quill_type_elem_bytes(et);
  if (n < 0 || eb == 0 || (uint64_t)n > DENSE_MAX_BYTES / eb) {
    quill_parser_error(p, &tt, "dense attribute too large");
    goto out;
  }
  size = (size_t)n * eb;
  if (!is_hex && !is_list) {
    if (size > DENSE_MAX_BYTES - p->splat_bytes) {
      quill_parser_error(p, &tt, "dense attribute too large (splats in one "
                                 "input may expand to at most 256 MiB)");
      goto out;
    }
    p->splat_bytes += size;
  }
  data = quill_alloc(p->ctx, size ? size : 1);
  if (!data) {
    quill_parser_nomem(p);
    goto out;
  }
  if (is_hex) {
    if (!decode_hex(p, &hex, type, data, size) ||
        !check_hex_bytes(p, &hex, et, data, size))
      goto out;
    canonicalize_nans(et, data, size);
  } else if (!is_list) {
    /* Splat: encode once, then replicate. */
    if (n > 0) {
      if (!encode_elem(p, &l.v[0], et, data, eb))
        goto out;
      for (size_t i = 1; i < (size_t)n; i++)
        memcpy(data + i * eb, data, eb);
    }
  } else {
    if (l.len != (size_t)n) {
      type_text(p, type);
      quill_parser_error(p, &start,
                         "dense literal has %zu elements but '%s' has %lld",
                         l.len, quill_strbuf_str(&p->scratch), (long long)n);
      goto out;
    }
    for (size_t i = 0; i < l.len; i++)
      if (!encode_elem(p, &l.v[i], et, data + i * eb, eb))
        goto out;
  }
  a = quill_attr_dense(p->ctx, type, data, size);
  if (!a)
    quill_parser_nomem(p);
out:
  if (l.v)
    quill_free(p->ctx, l.v, l.cap * sizeof *l.v);
  if (data)
    quill_free(p->ctx, data, size ? size : 1);
  return p->failed ? NULL : a;
}

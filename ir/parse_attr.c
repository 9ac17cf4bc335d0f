/*
 * parse_attr.c - the type and attribute half of the .qir parser.
 *
 * Types:       f32 ... u64, tensor<1x3x?xf32>, !quant.uniform<...>
 * Attributes:  ints, floats (incl. inf/nan/-inf), bools, strings, types,
 *              lists, and dense<...> : tensor<...> literals.
 *
 * Tensor shapes do not fit the token grammar (`1x3xf32` would lex as 1 and
 * x3xf32), so after `tensor<` the lexer is rewound and the dims are scanned
 * byte by byte with quill_lexer_dim().
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

/* ---- numbers ------------------------------------------------------------- */

/* Parse a numeric token (INT or FLOAT) as a double. */
static bool token_double(quill_parser *p, const quill_token *t, double *out) {
  const char *s = quill_parser_cstr(p, t->text, t->len);
  if (!s)
    return false;
  errno = 0;
  double d = strtod(s, NULL);
  if (errno == ERANGE && isinf(d)) {
    quill_parser_error(p, t, "floating point literal out of range");
    return false;
  }
  *out = d;
  return true;
}

/* float ::= FLOAT | INT | 'inf' | 'nan' | '-' ('inf' | 'nan')
 * Consumes the literal and returns true if the current token starts a
 * float; returns false without consuming (and without error) otherwise. */
static bool accept_float(quill_parser *p, bool *ok, double *out) {
  *ok = false;
  if (p->tok.kind == QUILL_TOK_INT || p->tok.kind == QUILL_TOK_FLOAT) {
    *ok = token_double(p, &p->tok, out);
    quill_parser_next(p);
    return true;
  }
  bool neg = false;
  if (quill_tok_is_punct(&p->tok, '-')) {
    neg = true;
    quill_parser_next(p);
    if (!quill_tok_is(&p->tok, "inf") && !quill_tok_is(&p->tok, "nan")) {
      quill_parser_expected(p, "'inf' or 'nan' after '-'");
      return true;
    }
  }
  if (quill_tok_is(&p->tok, "inf") || quill_tok_is(&p->tok, "nan")) {
    double v = quill_tok_is(&p->tok, "inf") ? INFINITY : NAN;
    *out = neg ? -v : v;
    *ok = true;
    quill_parser_next(p);
    return true;
  }
  return false;
}

/* ---- types --------------------------------------------------------------- */

static bool scalar_kind(const quill_token *t, quill_type_kind *out) {
  if (t->kind != QUILL_TOK_IDENT)
    return false;
  for (int k = 0; k < QUILL_TYPE_QUANT; k++) {
    const char *n = quill_type_scalar_name((quill_type_kind)k);
    if (n && strlen(n) == t->len && memcmp(n, t->text, t->len) == 0) {
      *out = (quill_type_kind)k;
      return true;
    }
  }
  return false;
}

bool quill_parser_at_type(const quill_parser *p) {
  quill_type_kind k;
  return scalar_kind(&p->tok, &k) || quill_tok_is(&p->tok, "tensor") ||
         quill_tok_is_punct(&p->tok, '!');
}

static void unknown_type(quill_parser *p) {
  if (p->tok.kind == QUILL_TOK_IDENT)
    quill_parser_error(p, &p->tok, "unknown type '%.*s'", (int)p->tok.len,
                       p->tok.text);
  else
    quill_parser_expected(p, "type");
}

/* scalar-type ::= 'f32' | 'f16' | 'bf16' | 'f64' | 'bool' | 'i4' ... 'u64' */
static quill_type *parse_scalar(quill_parser *p) {
  quill_type_kind k;
  if (!scalar_kind(&p->tok, &k)) {
    unknown_type(p);
    return NULL;
  }
  quill_parser_next(p);
  return quill_type_scalar(p->ctx, k);
}

/* One `scale:zero_point` pair of a quantized type. */
static bool parse_quant_param(quill_parser *p, double *scale, int64_t *zp) {
  bool ok;
  if (!accept_float(p, &ok, scale)) {
    quill_parser_expected(p, "scale");
    return false;
  }
  if (!ok || !quill_parser_expect(p, ':'))
    return false;
  if (p->tok.kind != QUILL_TOK_INT) {
    quill_parser_expected(p, "integer zero point");
    return false;
  }
  if (!quill_parser_int64(p, &p->tok, zp))
    return false;
  quill_parser_next(p);
  return true;
}

/* Parse an INT token into [lo, hi] and consume it. */
static bool small_int(quill_parser *p, const char *what, int64_t lo,
                      int64_t hi, int64_t *out) {
  if (p->tok.kind != QUILL_TOK_INT) {
    quill_parser_expected(p, what);
    return false;
  }
  if (!quill_parser_int64(p, &p->tok, out))
    return false;
  if (*out < lo || *out > hi) {
    quill_parser_error(p, &p->tok, "%s out of range", what);
    return false;
  }
  quill_parser_next(p);
  return true;
}

/* quant-type   ::= '!' 'quant.uniform' '<' scalar-type storage-range? ':'
 *                  scalar-type (':' int)? ',' quant-params '>'
 * storage-range ::= '<' int ':' int '>'
 * quant-params ::= float ':' int | '{' float ':' int (',' float ':' int)* '}'
 */
static quill_type *parse_quant(quill_parser *p) {
  quill_loc loc = quill_parser_loc(p);
  quill_parser_next(p); /* '!' */
  if (!quill_tok_is(&p->tok, "quant.uniform")) {
    if (p->tok.kind == QUILL_TOK_IDENT)
      quill_parser_error(p, &p->tok, "unknown type '!%.*s'", (int)p->tok.len,
                         p->tok.text);
    else
      quill_parser_expected(p, "'quant.uniform'");
    return NULL;
  }
  quill_parser_next(p);
  if (!quill_parser_expect(p, '<'))
    return NULL;
  quill_type *storage = parse_scalar(p);
  if (!storage)
    return NULL;
  /* A non-integer storage type is reported by quill_type_quant_check. */
  int64_t qmin = 0, qmax = 0;
  if (quill_type_is_integer(storage)) {
    qmin = quill_type_int_min(storage);
    qmax = quill_type_int_max(storage);
  }
  if (quill_parser_accept(p, '<')) {
    if (!small_int(p, "storage minimum", INT64_MIN, INT64_MAX, &qmin) ||
        !quill_parser_expect(p, ':') ||
        !small_int(p, "storage maximum", INT64_MIN, INT64_MAX, &qmax) ||
        !quill_parser_expect(p, '>'))
      return NULL;
  }
  if (!quill_parser_expect(p, ':'))
    return NULL;
  quill_type *expressed = parse_scalar(p);
  if (!expressed)
    return NULL;
  int64_t axis = -1;
  if (quill_parser_accept(p, ':') &&
      !small_int(p, "quantization axis", 0, QUILL_MAX_RANK - 1, &axis))
    return NULL;
  if (!quill_parser_expect(p, ','))
    return NULL;

  double scale1;
  int64_t zp1;
  double *scales = &scale1;
  int64_t *zps = &zp1;
  size_t n = 0, scap = 0, zcap = 0;
  quill_type *t = NULL;
  if (axis < 0) {
    if (!parse_quant_param(p, &scale1, &zp1))
      return NULL;
    n = 1;
  } else {
    if (!quill_parser_expect(p, '{'))
      return NULL;
    scales = NULL, zps = NULL;
    do {
      if (n == scap) {
        double *ns = quill_realloc(p->ctx, scales, scap * sizeof *ns,
                                   (scap ? scap * 2 : 8) * sizeof *ns);
        if (!ns) {
          quill_parser_nomem(p);
          goto out;
        }
        scales = ns;
        scap = scap ? scap * 2 : 8;
      }
      if (n == zcap) {
        int64_t *nz = quill_realloc(p->ctx, zps, zcap * sizeof *nz,
                                    (zcap ? zcap * 2 : 8) * sizeof *nz);
        if (!nz) {
          quill_parser_nomem(p);
          goto out;
        }
        zps = nz;
        zcap = zcap ? zcap * 2 : 8;
      }
      if (!parse_quant_param(p, &scales[n], &zps[n]))
        goto out;
      n++;
    } while (quill_parser_accept(p, ','));
    if (!quill_parser_expect(p, '}'))
      goto out;
  }
  if (!quill_parser_expect(p, '>'))
    goto out;
  const char *why = quill_type_quant_check(storage, expressed, n, scales, zps,
                                           qmin, qmax);
  if (why) {
    quill_parser_error_at(p, loc, "invalid quantization parameters: %s", why);
    goto out;
  }
  if (axis < 0)
    t = quill_type_quant(p->ctx, storage, expressed, scale1, zp1, qmin, qmax);
  else
    t = quill_type_quant_axis(p->ctx, storage, expressed, (int32_t)axis, n,
                              scales, zps, qmin, qmax);
  if (!t)
    quill_parser_error_at(p, loc, "invalid quantized type");
out:
  if (axis >= 0) {
    if (scales)
      quill_free(p->ctx, scales, scap * sizeof *scales);
    if (zps)
      quill_free(p->ctx, zps, zcap * sizeof *zps);
  }
  return p->failed ? NULL : t;
}

/* tensor-type ::= 'tensor' '<' (dim 'x')* elem-type '>'
 * dim         ::= [0-9]+ | '?'
 * elem-type   ::= scalar-type | quant-type */
static quill_type *parse_tensor(quill_parser *p) {
  quill_parser_next(p); /* 'tensor' */
  if (!quill_parser_expect(p, '<'))
    return NULL;
  int64_t dims[QUILL_MAX_RANK];
  unsigned rank = 0;
  if (p->failed)
    return NULL;
  quill_lexer_rewind(&p->lx, &p->tok);
  for (;;) {
    quill_loc here = quill_lexer_here(&p->lx);
    int64_t d;
    int r = quill_lexer_dim(&p->lx, &d);
    if (r < 0) {
      p->failed = true;
      return NULL;
    }
    if (r == 0)
      break;
    if (rank == QUILL_MAX_RANK) {
      quill_parser_error_at(p, here, "tensor rank too large (maximum is %d)",
                            QUILL_MAX_RANK);
      return NULL;
    }
    dims[rank++] = d;
  }
  quill_parser_next(p);
  quill_type *elem;
  if (quill_tok_is_punct(&p->tok, '!'))
    elem = parse_quant(p);
  else if (quill_tok_is(&p->tok, "tensor")) {
    quill_parser_error(p, &p->tok,
                       "tensor element type must be scalar or quantized");
    return NULL;
  } else
    elem = parse_scalar(p);
  if (!elem || !quill_parser_expect(p, '>'))
    return NULL;
  quill_type *t = quill_type_tensor(p->ctx, elem, rank, dims);
  if (!t)
    quill_parser_nomem(p);
  return t;
}

/* type ::= scalar-type | tensor-type | quant-type */
quill_type *quill_parser_type(quill_parser *p) {
  if (p->failed)
    return NULL;
  if (quill_tok_is(&p->tok, "tensor"))
    return parse_tensor(p);
  if (quill_tok_is_punct(&p->tok, '!'))
    return parse_quant(p);
  return parse_scalar(p);
}

/* ---- dense literals ------------------------------------------------------- */

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
static const quill_attr *parse_dense(quill_parser *p) {
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

/* ---- attributes ---------------------------------------------------------- */

/* list-attr ::= '[' (attr (',' attr)*)? ']' */
static const quill_attr *parse_list(quill_parser *p) {
  if (++p->depth > QUILL_PARSE_MAX_DEPTH) {
    quill_parser_error(p, &p->tok, "attribute nested too deeply");
    return NULL;
  }
  quill_parser_next(p); /* '[' */
  const quill_attr **v = NULL;
  size_t n = 0, cap = 0;
  const quill_attr *res = NULL;
  if (!quill_parser_accept(p, ']')) {
    do {
      const quill_attr *a = quill_parser_attr(p);
      if (!a)
        goto out;
      if (n == cap) {
        size_t nc = cap ? cap * 2 : 8;
        const quill_attr **nv = quill_realloc(p->ctx, v, cap * sizeof *v,
                                              nc * sizeof *v);
        if (!nv) {
          quill_parser_nomem(p);
          goto out;
        }
        v = nv;
        cap = nc;
      }
      v[n++] = a;
    } while (quill_parser_accept(p, ','));
    if (!quill_parser_expect(p, ']'))
      goto out;
  }
  res = quill_attr_list(p->ctx, n, v);
  if (!res)
    quill_parser_nomem(p);
  p->depth--;
out:
  if (v)
    quill_free(p->ctx, v, cap * sizeof *v);
  return p->failed ? NULL : res;
}

/* attr ::= INT | float | 'true' | 'false' | string | type | list-attr
 *        | dense-attr
 * float ::= FLOAT | 'inf' | 'nan' | '-' ('inf' | 'nan') */
const quill_attr *quill_parser_attr(quill_parser *p) {
  if (p->failed)
    return NULL;
  const quill_attr *a = NULL;
  quill_token t = p->tok;
  if (t.kind == QUILL_TOK_INT) {
    int64_t v;
    if (!quill_parser_int64(p, &t, &v))
      return NULL;
    quill_parser_next(p);
    a = quill_attr_int(p->ctx, v);
  } else if (t.kind == QUILL_TOK_STRING) {
    size_t n;
    const char *s = quill_parser_string(p, &t, &n);
    if (!s)
      return NULL;
    a = quill_attr_string(p->ctx, s, n);
    quill_parser_next(p);
  } else if (quill_tok_is(&t, "true") || quill_tok_is(&t, "false")) {
    quill_parser_next(p);
    a = quill_attr_bool(p->ctx, quill_tok_is(&t, "true"));
  } else if (quill_tok_is_punct(&t, '[')) {
    return parse_list(p);
  } else if (quill_tok_is(&t, "dense")) {
    return parse_dense(p);
  } else if (quill_parser_at_type(p)) {
    quill_type *ty = quill_parser_type(p);
    if (!ty)
      return NULL;
    a = quill_attr_type(p->ctx, ty);
  } else {
    double d;
    bool ok;
    if (!accept_float(p, &ok, &d)) {
      quill_parser_expected(p, "attribute value");
      return NULL;
    }
    if (!ok)
      return NULL;
    a = quill_attr_float(p->ctx, d);
  }
  if (!a && !p->failed)
    quill_parser_nomem(p);
  return p->failed ? NULL : a;
}

/*
 * parse_attr.c - the type and attribute half of the .qir parser.
 *
 * Types:       f32 ... u64, tensor<1x3x?xf32>, !quant.uniform<...>
 * Attributes:  ints, floats (incl. inf/nan/-inf), bools, strings, types,
 *              lists, and dense<...> : tensor<...> literals (parse_dense.c).
 *
 * Tensor shapes do not fit the token grammar (`1x3xf32` would lex as 1 and
 * x3xf32), so after `tensor<` the lexer is rewound and the dims are scanned
 * byte by byte with quill_lexer_dim().
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/parser_impl.h"

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
    return quill_parser_dense(p);
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

/*
 * parser.c - recursive-descent parser for the textual IR (.qir): modules,
 * graphs, ops and value names. Types and attributes are in parse_attr.c.
 *
 * The grammar (docs/textual-ir.md) is LL(1), so each rule is one function
 * with its production in the comment above it, as in chibicc. Tokens come on
 * demand from lexer.c; the current token is p->tok.
 *
 * Values are looked up by their spelling in a per-graph table (a strmap
 * whose keys point into the source text), so `%0`, `%arg3` and `%conv1` are
 * all just keys. Only real names are kept on the values: all-digit names,
 * and `argN` names of graph arguments, are dropped so that the printer's
 * renumbering is stable. Ops are created with quill_op_create() as soon as
 * they are parsed, without arity checks (the verifier reports those).
 *
 * Error handling: the first error is reported at its exact position and
 * ends the parse; the partial module is destroyed and NULL returned.
 */
#include <stdarg.h>
#include <string.h>

#include "ir/parser_impl.h"
#include "ir/strmap.h"

/* ---- shared helpers (declared in parser_impl.h) --------------------------- */

void quill_parser_next(quill_parser *p) {
  if (p->failed) {
    p->tok.kind = QUILL_TOK_ERROR;
    return;
  }
  p->tok = quill_lexer_next(&p->lx);
  if (p->tok.kind == QUILL_TOK_ERROR)
    p->failed = true;
}

quill_loc quill_parser_loc(const quill_parser *p) {
  return quill_lexer_loc(&p->lx, &p->tok);
}

static void verror(quill_parser *p, quill_loc loc, const char *fmt,
                   va_list ap) {
  if (!p->failed)
    quill_diag_emitv(p->ctx, loc, QUILL_DIAG_ERROR, fmt, ap);
  p->failed = true;
}

void quill_parser_error(quill_parser *p, const quill_token *tok,
                        const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, quill_lexer_loc(&p->lx, tok), fmt, ap);
  va_end(ap);
}

void quill_parser_error_at(quill_parser *p, quill_loc loc, const char *fmt,
                           ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, loc, fmt, ap);
  va_end(ap);
}

void quill_parser_nomem(quill_parser *p) {
  quill_parser_error_at(p, quill_parser_loc(p), "out of memory");
}

void quill_parser_expected(quill_parser *p, const char *what) {
  const quill_token *t = &p->tok;
  if (t->kind == QUILL_TOK_EOF) {
    quill_parser_error(p, t, "unexpected end of file, expected %s", what);
    return;
  }
  /* Show the token as written, including its '%' or '@' sigil. */
  const char *s = p->lx.buf + t->pos;
  size_t n = (size_t)(t->text + t->len - s);
  if (n > 40)
    n = 40;
  quill_parser_error(p, t, "expected %s, found '%.*s'", what, (int)n, s);
}

bool quill_parser_accept(quill_parser *p, char c) {
  if (!quill_tok_is_punct(&p->tok, c))
    return false;
  quill_parser_next(p);
  return true;
}

bool quill_parser_expect(quill_parser *p, char c) {
  if (quill_parser_accept(p, c))
    return true;
  char what[4] = {'\'', c, '\'', 0};
  quill_parser_expected(p, what);
  return false;
}

const char *quill_parser_cstr(quill_parser *p, const char *s, size_t n) {
  quill_strbuf_clear(&p->scratch);
  quill_strbuf_append(&p->scratch, s, n);
  if (quill_strbuf_failed(&p->scratch)) {
    quill_parser_nomem(p);
    return NULL;
  }
  return quill_strbuf_str(&p->scratch);
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return c - 'A' + 10; /* the lexer only lets hex digits through */
}

const char *quill_parser_string(quill_parser *p, const quill_token *tok,
                                size_t *len) {
  quill_strbuf_clear(&p->scratch);
  quill_strbuf_append(&p->scratch, "", 0);
  /* The lexer validated the escapes; the token includes both quotes. */
  for (size_t i = 1; i + 1 < tok->len; i++) {
    char c = tok->text[i];
    if (c != '\\') { /* a run without escapes, appended at once */
      const char *run = tok->text + i;
      const char *esc = memchr(run, '\\', tok->len - 1 - i);
      size_t n = esc ? (size_t)(esc - run) : tok->len - 1 - i;
      quill_strbuf_append(&p->scratch, run, n);
      i += n - 1;
      continue;
    }
    char d = tok->text[++i];
    if (d == 'n')
      c = '\n';
    else if (d == 't')
      c = '\t';
    else if (d == '"' || d == '\\')
      c = d;
    else {
      c = (char)(hex_value(d) * 16 + hex_value(tok->text[i + 1]));
      i++;
    }
    quill_strbuf_putc(&p->scratch, c);
  }
  if (quill_strbuf_failed(&p->scratch)) {
    quill_parser_nomem(p);
    return NULL;
  }
  *len = p->scratch.len;
  return quill_strbuf_str(&p->scratch);
}

bool quill_parser_int_parts(quill_parser *p, const quill_token *tok,
                            bool *neg, uint64_t *mag) {
  size_t i = 0;
  *neg = false;
  if (tok->len > 0 && tok->text[0] == '-') {
    *neg = true;
    i = 1;
  }
  uint64_t v = 0;
  for (; i < tok->len; i++) {
    unsigned d = (unsigned)(tok->text[i] - '0');
    if (v > (UINT64_MAX - d) / 10) {
      quill_parser_error(p, tok, "integer literal out of range");
      return false;
    }
    v = v * 10 + d;
  }
  *mag = v;
  return true;
}

bool quill_parser_int64(quill_parser *p, const quill_token *tok,
                        int64_t *out) {
  bool neg;
  uint64_t mag;
  if (!quill_parser_int_parts(p, tok, &neg, &mag))
    return false;
  if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX) {
    quill_parser_error(p, tok, "integer literal out of range");
    return false;
  }
  *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
  return true;
}

/* ---- growable arrays ----------------------------------------------------- */

typedef struct vec {
  void *data;
  size_t len, cap;
} vec;

static bool vec_push(quill_parser *p, vec *v, const void *x, size_t size) {
  if (v->len == v->cap) {
    size_t ncap = v->cap ? v->cap * 2 : 8;
    void *nd = quill_realloc(p->ctx, v->data, v->cap * size, ncap * size);
    if (!nd) {
      quill_parser_nomem(p);
      return false;
    }
    v->data = nd;
    v->cap = ncap;
  }
  memcpy((char *)v->data + v->len * size, x, size);
  v->len++;
  return true;
}

static void vec_free(quill_parser *p, vec *v, size_t size) {
  if (v->data)
    quill_free(p->ctx, v->data, v->cap * size);
  v->data = NULL;
  v->len = v->cap = 0;
}

/* Per-graph state: the value table plus scratch arrays reused by every op. */
typedef struct graph_state {
  quill_graph *g;
  quill_strmap values; /* spelling -> quill_value*, loc = definition */
  vec names;           /* quill_token */
  vec vals;            /* quill_value* */
  vec types;           /* quill_type* */
  vec attrs;           /* quill_named_attr */
} graph_state;

/* ---- value names ---------------------------------------------------------- */

static bool all_digits(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

/* Names the printer generates, which must not stick to the value. */
static bool generated_name(const quill_token *t, bool is_arg) {
  if (all_digits(t->text, t->len))
    return true;
  return is_arg && t->len > 3 && memcmp(t->text, "arg", 3) == 0 &&
         all_digits(t->text + 3, t->len - 3);
}

/* Bind the spelling of `t` (a VALUE token) to v. */
static bool define_value(quill_parser *p, graph_state *gs,
                         const quill_token *t, quill_value *v, bool is_arg) {
  bool existed;
  quill_strmap_entry *e = quill_strmap_insert(&gs->values, t->text, t->len,
                                              &existed);
  if (!e) {
    quill_parser_nomem(p);
    return false;
  }
  if (existed) {
    bool first = !p->failed;
    quill_parser_error(p, t, "redefinition of value '%%%.*s'", (int)t->len,
                       t->text);
    if (first)
      quill_diag_emit(p->ctx, e->loc, QUILL_DIAG_NOTE,
                      "previous definition is here");
    return false;
  }
  e->val = v;
  e->loc = quill_lexer_loc(&p->lx, t);
  if (generated_name(t, is_arg))
    return true;
  const char *name = quill_parser_cstr(p, t->text, t->len);
  if (!name)
    return false;
  if (quill_value_set_name(v, name) != QUILL_OK) {
    quill_parser_nomem(p);
    return false;
  }
  return true;
}

/* ---- locations ------------------------------------------------------------ */

/* Parse a line or column number of a file location. */
static bool loc_number(quill_parser *p, uint32_t *out) {
  int64_t v;
  if (p->tok.kind != QUILL_TOK_INT) {
    quill_parser_expected(p, "integer");
    return false;
  }
  if (!quill_parser_int64(p, &p->tok, &v))
    return false;
  if (v < 0 || v > (int64_t)UINT32_MAX) {
    quill_parser_error(p, &p->tok, "location number out of range");
    return false;
  }
  *out = (uint32_t)v;
  quill_parser_next(p);
  return true;
}

/* loc ::= 'loc' '(' string ')'
 *       | 'loc' '(' string ':' int ':' int ')'
 * A name loc keeps `at` (the op's position in this text) as its file part,
 * so diagnostics still point into the file. */
static bool parse_loc(quill_parser *p, quill_loc at, quill_loc *out) {
  quill_parser_next(p); /* 'loc' */
  if (!quill_parser_expect(p, '('))
    return false;
  if (p->tok.kind != QUILL_TOK_STRING) {
    quill_parser_expected(p, "string in location");
    return false;
  }
  quill_token str = p->tok;
  quill_parser_next(p);
  if (quill_parser_accept(p, ':')) {
    uint32_t line, col;
    if (!loc_number(p, &line) || !quill_parser_expect(p, ':') ||
        !loc_number(p, &col) || !quill_parser_expect(p, ')'))
      return false;
    size_t n;
    const char *file = quill_parser_string(p, &str, &n);
    if (!file)
      return false;
    *out = quill_loc_file(p->ctx, file, line, col);
    return true;
  }
  if (!quill_parser_expect(p, ')'))
    return false;
  size_t n;
  const char *name = quill_parser_string(p, &str, &n);
  if (!name)
    return false;
  quill_loc named = quill_loc_named(p->ctx, name);
  named.file = at.file;
  named.line = at.line;
  named.col = at.col;
  *out = named;
  return true;
}

/* ---- ops ----------------------------------------------------------------- */

/* attr-dict ::= '{' (attr-entry (',' attr-entry)*)? '}'
 * attr-entry ::= (ident | string) '=' attr */
static bool parse_attr_dict(quill_parser *p, graph_state *gs) {
  quill_parser_next(p); /* '{' */
  if (quill_parser_accept(p, '}'))
    return true;
  do {
    quill_token nt = p->tok;
    quill_ident name = NULL;
    if (nt.kind == QUILL_TOK_IDENT) {
      name = quill_ident_getn(p->ctx, nt.text, nt.len);
    } else if (nt.kind == QUILL_TOK_STRING) {
      size_t n;
      const char *s = quill_parser_string(p, &nt, &n);
      if (!s)
        return false;
      if (memchr(s, 0, n)) {
        quill_parser_error(p, &nt, "attribute name must not contain NUL");
        return false;
      }
      name = quill_ident_getn(p->ctx, s, n);
    } else {
      quill_parser_expected(p, "attribute name");
      return false;
    }
    if (!name) {
      quill_parser_nomem(p);
      return false;
    }
    const quill_named_attr *prev = gs->attrs.data;
    for (size_t i = 0; i < gs->attrs.len; i++) {
      if (prev[i].name == name) {
        quill_parser_error(p, &nt, "duplicate attribute '%s'", name);
        return false;
      }
    }
    quill_parser_next(p);
    if (!quill_parser_expect(p, '='))
      return false;
    quill_named_attr na = {name, quill_parser_attr(p)};
    if (!na.attr || !vec_push(p, &gs->attrs, &na, sizeof na))
      return false;
  } while (quill_parser_accept(p, ','));
  return quill_parser_expect(p, '}');
}

/* op ::= (value-name (',' value-name)* '=')? mnemonic operands? attr-dict?
 *        (':' type (',' type)*)? loc?
 * operands ::= value-name (',' value-name)* */
static bool parse_op(quill_parser *p, graph_state *gs) {
  quill_token start = p->tok;
  quill_loc loc = quill_parser_loc(p);
  gs->names.len = gs->vals.len = gs->types.len = gs->attrs.len = 0;

  if (p->tok.kind == QUILL_TOK_VALUE) {
    for (;;) {
      if (p->tok.kind != QUILL_TOK_VALUE) {
        quill_parser_expected(p, "value name");
        return false;
      }
      if (!vec_push(p, &gs->names, &p->tok, sizeof p->tok))
        return false;
      quill_parser_next(p);
      if (!quill_parser_accept(p, ','))
        break;
    }
    if (!quill_parser_expect(p, '='))
      return false;
  }

  quill_opcode opc;
  if (p->tok.kind != QUILL_TOK_IDENT) {
    quill_parser_expected(p, "op name");
    return false;
  }
  if (!quill_opcode_lookup(p->tok.text, p->tok.len, &opc)) {
    quill_parser_error(p, &p->tok, "unknown op '%.*s'", (int)p->tok.len,
                       p->tok.text);
    return false;
  }
  quill_parser_next(p);

  if (p->tok.kind == QUILL_TOK_VALUE) {
    for (;;) {
      if (p->tok.kind != QUILL_TOK_VALUE) {
        quill_parser_expected(p, "operand");
        return false;
      }
      quill_strmap_entry *e =
          quill_strmap_find(&gs->values, p->tok.text, p->tok.len);
      if (!e) {
        quill_parser_error(p, &p->tok, "use of undefined value '%%%.*s'",
                           (int)p->tok.len, p->tok.text);
        return false;
      }
      quill_value *v = e->val;
      if (!vec_push(p, &gs->vals, &v, sizeof v))
        return false;
      quill_parser_next(p);
      if (!quill_parser_accept(p, ','))
        break;
    }
  }

  if (quill_tok_is_punct(&p->tok, '{') && !parse_attr_dict(p, gs))
    return false;

  if (quill_parser_accept(p, ':')) {
    do {
      quill_type *t = quill_parser_type(p);
      if (!t || !vec_push(p, &gs->types, &t, sizeof t))
        return false;
    } while (quill_parser_accept(p, ','));
  }

  if (quill_tok_is(&p->tok, "loc") && !parse_loc(p, loc, &loc))
    return false;
  if (p->failed)
    return false;

  if (gs->names.len != gs->types.len) {
    quill_parser_error(p, &start,
                       "op has %zu result name(s) but %zu result type(s)",
                       gs->names.len, gs->types.len);
    return false;
  }

  quill_op *op = quill_op_create(
      gs->g, opc, (unsigned)gs->vals.len, gs->vals.data,
      (unsigned)gs->types.len, gs->types.data, (unsigned)gs->attrs.len,
      gs->attrs.data, loc);
  if (!op) {
    quill_parser_nomem(p);
    return false;
  }
  quill_op_insert_at_end(gs->g, op);
  const quill_token *names = gs->names.data;
  for (size_t i = 0; i < gs->names.len; i++)
    if (!define_value(p, gs, &names[i], quill_op_result(op, (unsigned)i),
                      false))
      return false;
  return true;
}

/* ---- graphs and modules --------------------------------------------------- */

/* result-types ::= type | '(' (type (',' type)*)? ')' */
static bool parse_result_types(quill_parser *p, vec *types) {
  if (!quill_parser_accept(p, '(')) {
    quill_type *t = quill_parser_type(p);
    return t && vec_push(p, types, &t, sizeof t);
  }
  if (quill_parser_accept(p, ')'))
    return true;
  do {
    quill_type *t = quill_parser_type(p);
    if (!t || !vec_push(p, types, &t, sizeof t))
      return false;
  } while (quill_parser_accept(p, ','));
  return quill_parser_expect(p, ')');
}

/* graph ::= 'func' '@' name '(' (arg (',' arg)*)? ')' '->' result-types
 *           '{' op* '}'
 * arg   ::= value-name ':' type */
static bool parse_graph(quill_parser *p, quill_module *m, graph_state *gs) {
  quill_loc loc = quill_parser_loc(p);
  if (!quill_tok_is(&p->tok, "func")) {
    quill_parser_expected(p, "'func'");
    return false;
  }
  quill_parser_next(p);
  if (p->tok.kind != QUILL_TOK_GLOBAL) {
    quill_parser_expected(p, "function name '@name'");
    return false;
  }
  quill_token name = p->tok;
  quill_parser_next(p);

  /* Arguments: their tokens go to gs->names, their types to gs->vals. */
  vec arg_types = {0}, res_types = {0};
  gs->names.len = 0;
  bool ok = quill_parser_expect(p, '(');
  if (ok && !quill_parser_accept(p, ')')) {
    do {
      if (p->tok.kind != QUILL_TOK_VALUE) {
        quill_parser_expected(p, "argument name");
        ok = false;
        break;
      }
      quill_token at = p->tok;
      quill_parser_next(p);
      quill_type *t = NULL;
      ok = quill_parser_expect(p, ':') && (t = quill_parser_type(p)) &&
           vec_push(p, &gs->names, &at, sizeof at) &&
           vec_push(p, &arg_types, &t, sizeof t);
    } while (ok && quill_parser_accept(p, ','));
    ok = ok && quill_parser_expect(p, ')');
  }
  if (ok && p->tok.kind != QUILL_TOK_ARROW) {
    quill_parser_expected(p, "'->'");
    ok = false;
  }
  if (ok) {
    quill_parser_next(p);
    ok = parse_result_types(p, &res_types) && quill_parser_expect(p, '{');
  }
  const char *gname = ok ? quill_parser_cstr(p, name.text, name.len) : NULL;
  if (gname) {
    gs->g = quill_graph_create(m, gname, (unsigned)arg_types.len,
                               arg_types.data, (unsigned)res_types.len,
                               res_types.data);
    if (!gs->g)
      quill_parser_nomem(p);
  }
  vec_free(p, &arg_types, sizeof(quill_type *));
  vec_free(p, &res_types, sizeof(quill_type *));
  if (!gname || !gs->g)
    return false;
  quill_graph_set_loc(gs->g, loc);

  quill_strmap_clear(&gs->values);
  const quill_token *args = gs->names.data;
  for (size_t i = 0; i < gs->names.len; i++)
    if (!define_value(p, gs, &args[i], quill_graph_arg(gs->g, (unsigned)i),
                      true))
      return false;

  while (!quill_parser_accept(p, '}')) {
    if (p->tok.kind == QUILL_TOK_EOF) {
      quill_parser_expected(p, "'}'");
      return false;
    }
    if (!parse_op(p, gs))
      return false;
  }
  return !p->failed;
}

/* Set up a parser over a registered source buffer. */
static bool parser_init(quill_parser *p, quill_context *ctx, const char *text,
                        size_t len, const char *filename,
                        uint32_t line_offset) {
  memset(p, 0, sizeof *p);
  p->ctx = ctx;
  quill_strbuf_init(&p->scratch, ctx);
  if (!text)
    text = "", len = 0;
  quill_ident file = quill_ident_get(ctx, filename);
  if (!file || quill_context_add_source(ctx, filename, text, len,
                                        line_offset) != QUILL_OK) {
    quill_error(ctx, quill_loc_unknown(), "out of memory");
    return false;
  }
  quill_lexer_init(&p->lx, ctx, text, len, file, line_offset);
  quill_parser_next(p);
  return true;
}

/* module ::= graph* */
quill_module *quill_parse_module(quill_context *ctx, const char *text,
                                 size_t len, const char *filename,
                                 uint32_t line_offset) {
  quill_parser p;
  if (!parser_init(&p, ctx, text, len, filename ? filename : "<input>",
                   line_offset)) {
    quill_strbuf_free(&p.scratch);
    return NULL;
  }
  quill_module *m = quill_module_create(ctx);
  if (!m)
    quill_parser_nomem(&p);
  graph_state gs;
  memset(&gs, 0, sizeof gs);
  quill_strmap_init(&gs.values, ctx);
  while (m && !p.failed && p.tok.kind != QUILL_TOK_EOF)
    parse_graph(&p, m, &gs);
  quill_strmap_free(&gs.values);
  vec_free(&p, &gs.names, sizeof(quill_token));
  vec_free(&p, &gs.vals, sizeof(quill_value *));
  vec_free(&p, &gs.types, sizeof(quill_type *));
  vec_free(&p, &gs.attrs, sizeof(quill_named_attr));
  quill_strbuf_free(&p.scratch);
  if (p.failed && m) {
    quill_module_destroy(m);
    m = NULL;
  }
  return m;
}

quill_type *quill_parse_type(quill_context *ctx, const char *text,
                             size_t len) {
  quill_parser p;
  quill_type *t = NULL;
  if (parser_init(&p, ctx, text, len, "<type>", 0)) {
    t = quill_parser_type(&p);
    if (t && p.tok.kind != QUILL_TOK_EOF) {
      quill_parser_expected(&p, "end of type");
      t = NULL;
    }
  }
  quill_strbuf_free(&p.scratch);
  return p.failed ? NULL : t;
}

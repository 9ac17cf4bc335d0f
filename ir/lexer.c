/*
 * lexer.c - tokenizer for the textual IR (.qir).
 *
 * A hand-written, on-demand scanner in the style of chibicc's tokenize():
 * skip blanks and `//` comments, then classify by the first byte:
 *
 *   %name  @name  ident  number  "string"  ->  single-char punctuation
 *
 * Every read is bounds-checked against `len` (the buffer is not
 * NUL-terminated). Lexical errors are reported here, once, at the exact
 * position, and surface as a QUILL_TOK_ERROR token that the parser treats
 * as "already diagnosed". Lines and columns are 1-based and count bytes;
 * the line offset of --split-input-file chunks is applied in
 * quill_lexer_loc().
 */
#include <string.h>

#include "ir/context.h"
#include "ir/lexer.h"
#include "ir/type.h"

/* Largest dimension accepted in a tensor type. */
#define MAX_DIM QUILL_MAX_DIM

void quill_lexer_init(quill_lexer *lx, quill_context *ctx, const char *buf,
                      size_t len, quill_ident file, uint32_t line_offset) {
  lx->ctx = ctx;
  lx->buf = buf;
  lx->len = len;
  lx->pos = 0;
  lx->line = 1;
  lx->line_start = 0;
  lx->file = file;
  lx->line_offset = line_offset;
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_alpha(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_name_char(int c) {
  return is_alpha(c) || is_digit(c) || c == '.' || c == '$';
}

static int peek_at(const quill_lexer *lx, size_t off) {
  size_t i = lx->pos + off;
  return i < lx->len ? (unsigned char)lx->buf[i] : -1;
}

static quill_loc loc_at(const quill_lexer *lx, uint32_t line, uint32_t col) {
  quill_loc l = {lx->file, line + lx->line_offset, col, NULL};
  return l;
}

quill_loc quill_lexer_loc(const quill_lexer *lx, const quill_token *tok) {
  return loc_at(lx, tok->line, tok->col);
}

quill_loc quill_lexer_here(const quill_lexer *lx) {
  return loc_at(lx, lx->line, (uint32_t)(lx->pos - lx->line_start + 1));
}

void quill_lexer_rewind(quill_lexer *lx, const quill_token *tok) {
  lx->pos = tok->pos;
  lx->line = tok->line;
  lx->line_start = tok->pos - (tok->col - 1);
}

static void skip_blanks(quill_lexer *lx) {
  while (lx->pos < lx->len) {
    int c = (unsigned char)lx->buf[lx->pos];
    if (c == '\n') {
      lx->pos++;
      lx->line++;
      lx->line_start = lx->pos;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      lx->pos++;
    } else if (c == '/' && peek_at(lx, 1) == '/') {
      while (lx->pos < lx->len && lx->buf[lx->pos] != '\n')
        lx->pos++;
    } else {
      break;
    }
  }
}

static quill_token make(const quill_lexer *lx, quill_tok_kind k, size_t start,
                        size_t text_start) {
  quill_token t;
  t.kind = k;
  t.text = lx->buf + text_start;
  t.len = lx->pos - text_start;
  t.pos = start;
  t.line = lx->line;
  t.col = (uint32_t)(start - lx->line_start + 1);
  return t;
}

static quill_token error_tok(quill_lexer *lx, size_t start) {
  quill_token t = make(lx, QUILL_TOK_ERROR, start, start);
  t.len = 0;
  return t;
}

/* number ::= '-'? digit+ ('.' digit*)? ([eE] [+-]? digit+)? */
static quill_token lex_number(quill_lexer *lx, size_t start) {
  bool is_float = false;
  if (peek_at(lx, 0) == '-')
    lx->pos++;
  while (is_digit(peek_at(lx, 0)))
    lx->pos++;
  if (peek_at(lx, 0) == '.') {
    is_float = true;
    lx->pos++;
    while (is_digit(peek_at(lx, 0)))
      lx->pos++;
  }
  int e = peek_at(lx, 0);
  if (e == 'e' || e == 'E') {
    size_t k = 1;
    if (peek_at(lx, 1) == '+' || peek_at(lx, 1) == '-')
      k = 2;
    if (is_digit(peek_at(lx, k))) {
      is_float = true;
      lx->pos += k;
      while (is_digit(peek_at(lx, 0)))
        lx->pos++;
    }
  }
  return make(lx, is_float ? QUILL_TOK_FLOAT : QUILL_TOK_INT, start, start);
}

static bool is_hex(int c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* string ::= '"' (char | '\' ( '"' | '\' | 'n' | 't' | hex hex ))* '"'
 * A raw newline or the end of the buffer before the closing quote is an
 * "unterminated string" error reported at the opening quote. */
static quill_token lex_string(quill_lexer *lx, size_t start) {
  quill_loc open = quill_lexer_here(lx);
  lx->pos++; /* opening quote */
  for (;;) {
    int c = peek_at(lx, 0);
    if (c < 0 || c == '\n') {
      quill_error(lx->ctx, open, "unterminated string");
      return error_tok(lx, start);
    }
    if (c == '"')
      break;
    if (c != '\\') { /* a run of plain characters (hex blobs: megabytes) */
      const char *b = lx->buf;
      size_t i = lx->pos + 1;
      while (i < lx->len && b[i] != '"' && b[i] != '\\' && b[i] != '\n')
        i++;
      lx->pos = i;
      continue;
    }
    int d = peek_at(lx, 1); /* an escape */
    if (d == '"' || d == '\\' || d == 'n' || d == 't') {
      lx->pos += 2;
    } else if (is_hex(d) && is_hex(peek_at(lx, 2))) {
      lx->pos += 3;
    } else if (d < 0 || d == '\n') {
      quill_error(lx->ctx, open, "unterminated string");
      return error_tok(lx, start);
    } else {
      quill_error(lx->ctx, quill_lexer_here(lx),
                  "invalid escape sequence in string");
      return error_tok(lx, start);
    }
  }
  lx->pos++; /* closing quote */
  return make(lx, QUILL_TOK_STRING, start, start);
}

quill_token quill_lexer_next(quill_lexer *lx) {
  skip_blanks(lx);
  size_t start = lx->pos;
  int c = peek_at(lx, 0);
  if (c < 0)
    return make(lx, QUILL_TOK_EOF, start, start);

  if (c == '%' || c == '@') {
    lx->pos++;
    size_t ts = lx->pos;
    int d = peek_at(lx, 0);
    bool ok = c == '%' ? is_name_char(d) : (is_alpha(d) || d == '.' || d == '$');
    if (!ok) {
      quill_error(lx->ctx, loc_at(lx, lx->line, (uint32_t)(start - lx->line_start + 1)),
                  c == '%' ? "expected value name after '%%'"
                           : "expected function name after '@'");
      return error_tok(lx, start);
    }
    while (is_name_char(peek_at(lx, 0)))
      lx->pos++;
    return make(lx, c == '%' ? QUILL_TOK_VALUE : QUILL_TOK_GLOBAL, start, ts);
  }
  if (is_alpha(c)) {
    while (is_name_char(peek_at(lx, 0)))
      lx->pos++;
    return make(lx, QUILL_TOK_IDENT, start, start);
  }
  if (is_digit(c) || (c == '-' && is_digit(peek_at(lx, 1))))
    return lex_number(lx, start);
  if (c == '"')
    return lex_string(lx, start);
  if (c == '-' && peek_at(lx, 1) == '>') {
    lx->pos += 2;
    return make(lx, QUILL_TOK_ARROW, start, start);
  }
  if (strchr("(){}[]<>,:=!?-", c) && c != 0) {
    lx->pos++;
    return make(lx, QUILL_TOK_PUNCT, start, start);
  }
  quill_loc here = quill_lexer_here(lx);
  if (c >= 0x20 && c < 0x7f)
    quill_error(lx->ctx, here, "unexpected character '%c'", c);
  else
    quill_error(lx->ctx, here, "unexpected character '\\x%02x'", c);
  return error_tok(lx, start);
}

int quill_lexer_dim(quill_lexer *lx, int64_t *dim) {
  int c = peek_at(lx, 0);
  quill_loc here = quill_lexer_here(lx);
  if (c == '?') {
    lx->pos++;
    *dim = QUILL_DIM_DYNAMIC;
  } else if (is_digit(c)) {
    int64_t v = 0;
    bool big = false;
    while (is_digit(peek_at(lx, 0))) {
      int d = peek_at(lx, 0) - '0';
      if (v > (MAX_DIM - d) / 10)
        big = true;
      else
        v = v * 10 + d;
      lx->pos++;
    }
    if (big) {
      quill_error(lx->ctx, here, "dimension too large (maximum is %lld)",
                  (long long)MAX_DIM);
      return -1;
    }
    *dim = v;
  } else {
    return 0;
  }
  if (peek_at(lx, 0) != 'x') {
    quill_error(lx->ctx, quill_lexer_here(lx),
                "expected 'x' after dimension in tensor shape");
    return -1;
  }
  lx->pos++;
  return 1;
}

bool quill_tok_is(const quill_token *tok, const char *s) {
  size_t n = strlen(s);
  return tok->kind == QUILL_TOK_IDENT && tok->len == n &&
         memcmp(tok->text, s, n) == 0;
}

bool quill_tok_is_punct(const quill_token *tok, char c) {
  return tok->kind == QUILL_TOK_PUNCT && tok->text[0] == c;
}

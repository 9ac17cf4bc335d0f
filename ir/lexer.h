/*
 * lexer.h - tokens of the textual IR, private to ir/ (used by parser.c).
 *
 * The lexer is on demand: the parser asks for one token at a time, which
 * lets it rewind to a token and rescan the raw characters where the token
 * grammar does not fit (tensor shapes such as `1x3x224x224xf32`, which
 * would otherwise lex as the integer 1 and the identifier x3x224x224xf32).
 * The input is `len` bytes that need not be NUL-terminated; the lexer never
 * reads past them. Errors (unterminated string, stray character) are
 * emitted as located diagnostics and produce a QUILL_TOK_ERROR token.
 */
#ifndef QUILL_IR_LEXER_H
#define QUILL_IR_LEXER_H

#include "ir/types_fwd.h"

typedef enum quill_tok_kind {
  QUILL_TOK_EOF,
  QUILL_TOK_ERROR,  /* a diagnostic was already emitted */
  QUILL_TOK_IDENT,  /* [A-Za-z_][A-Za-z0-9_.$]*  (keywords, mnemonics) */
  QUILL_TOK_VALUE,  /* %name; text excludes the '%' */
  QUILL_TOK_GLOBAL, /* @name; text excludes the '@' */
  QUILL_TOK_INT,    /* -?[0-9]+ */
  QUILL_TOK_FLOAT,  /* -?[0-9]+(.[0-9]*)?([eE][+-]?[0-9]+)? with '.' or 'e' */
  QUILL_TOK_STRING, /* "..."; text includes the quotes, escapes undecoded */
  QUILL_TOK_PUNCT,  /* one of ( ) { } [ ] < > , : = ! ? - */
  QUILL_TOK_ARROW,  /* -> */
} quill_tok_kind;

typedef struct quill_token {
  quill_tok_kind kind;
  const char *text; /* points into the buffer */
  size_t len;
  size_t pos;     /* byte offset of the token start (incl. '%', '@', '"') */
  uint32_t line;  /* 1-based, within the buffer (no line offset) */
  uint32_t col;   /* 1-based byte column */
} quill_token;

typedef struct quill_lexer {
  quill_context *ctx;
  const char *buf;
  size_t len;
  size_t pos;
  uint32_t line;
  size_t line_start; /* offset of the current line's first byte */
  quill_ident file;
  uint32_t line_offset;
} quill_lexer;

void quill_lexer_init(quill_lexer *lx, quill_context *ctx, const char *buf,
                      size_t len, quill_ident file, uint32_t line_offset);
/* Lex the next token, skipping whitespace and // comments. */
quill_token quill_lexer_next(quill_lexer *lx);
/* Rewind so that the next scan starts at tok. */
void quill_lexer_rewind(quill_lexer *lx, const quill_token *tok);
/* The location of a token (line offset applied). */
quill_loc quill_lexer_loc(const quill_lexer *lx, const quill_token *tok);
/* Location of the current raw position. */
quill_loc quill_lexer_here(const quill_lexer *lx);

/* Raw shape scanning at the current position (no whitespace skipped):
 * if the next byte is a digit or '?', read one dimension followed by 'x'
 * and return 1 with *dim set (QUILL_DIM_DYNAMIC for '?'); return 0 if the
 * next byte starts something else; return -1 after emitting an error
 * (missing 'x', dimension too large). */
int quill_lexer_dim(quill_lexer *lx, int64_t *dim);

/* True if the token is the identifier / punctuation `s` / `c`. */
bool quill_tok_is(const quill_token *tok, const char *s);
bool quill_tok_is_punct(const quill_token *tok, char c);

#endif /* QUILL_IR_LEXER_H */

/*
 * parser_impl.h - state shared by the two halves of the .qir parser, private
 * to ir/: parser.c (module, graphs, ops, value names) and parse_attr.c
 * (types, attributes, dense literals).
 *
 * The parser stops at the first error: every error helper emits only if no
 * error was emitted yet and then marks the parser failed, so one bad input
 * yields exactly one error diagnostic (plus notes), which keeps
 * --verify-diagnostics tests exact.
 */
#ifndef QUILL_IR_PARSER_IMPL_H
#define QUILL_IR_PARSER_IMPL_H

#include "ir/ir.h"
#include "ir/lexer.h"

/* Bound on nested lists in attributes and dense literals. */
#define QUILL_PARSE_MAX_DEPTH 64

typedef struct quill_parser {
  quill_context *ctx;
  quill_lexer lx;
  quill_token tok;      /* the current (lookahead) token */
  bool failed;          /* an error has been emitted */
  unsigned depth;       /* current attribute nesting */
  size_t splat_bytes;   /* dense bytes expanded from splats so far */
  quill_strbuf scratch; /* NUL-terminated copies of token text */
} quill_parser;

/* Advance to the next token (marks the parser failed on a lexer error). */
void quill_parser_next(quill_parser *p);
/* Emit an error at the token / location unless one was emitted already;
 * always marks the parser failed. */
void quill_parser_error(quill_parser *p, const quill_token *tok,
                        const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void quill_parser_error_at(quill_parser *p, quill_loc loc, const char *fmt,
                           ...) __attribute__((format(printf, 3, 4)));
/* "expected WHAT, found 'tok'" (or "unexpected end of file, expected WHAT")
 * at the current token. */
void quill_parser_expected(quill_parser *p, const char *what);
/* Consume punctuation c or report "expected 'c'". */
bool quill_parser_expect(quill_parser *p, char c);
/* If the current token is punctuation c, consume it and return true. */
bool quill_parser_accept(quill_parser *p, char c);
/* Location of the current token. */
quill_loc quill_parser_loc(const quill_parser *p);
/* A NUL-terminated copy of n bytes, valid until the next call. NULL (with
 * an error) on allocation failure. */
const char *quill_parser_cstr(quill_parser *p, const char *s, size_t n);
/* Decode a STRING token's escapes; returns the bytes (NUL-terminated, but
 * may contain NULs; *len gets the length), valid until the next call of
 * this or quill_parser_cstr. NULL with an error on allocation failure. */
const char *quill_parser_string(quill_parser *p, const quill_token *tok,
                                size_t *len);
/* Report an allocation failure. */
void quill_parser_nomem(quill_parser *p);

/* Split an INT token into sign and magnitude; false (with an error) if the
 * magnitude does not fit in 64 bits. */
bool quill_parser_int_parts(quill_parser *p, const quill_token *tok,
                            bool *neg, uint64_t *mag);
/* Parse an INT token as an int64 ("integer literal out of range"). */
bool quill_parser_int64(quill_parser *p, const quill_token *tok, int64_t *out);

/* In parse_attr.c: */
quill_type *quill_parser_type(quill_parser *p);
const quill_attr *quill_parser_attr(quill_parser *p);
/* In parse_dense.c: a dense literal, at its `dense` keyword. */
const quill_attr *quill_parser_dense(quill_parser *p);
/* True if the current token can start a type. */
bool quill_parser_at_type(const quill_parser *p);

#endif /* QUILL_IR_PARSER_IMPL_H */

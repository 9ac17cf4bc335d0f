/*
 * parser.h - the textual IR (.qir) parser.
 *
 * Errors are reported as `file:line:col: error: ...` with a caret line
 * through the context's diagnostic handler. The parser never crashes on bad
 * text and frees everything it built when it fails.
 */
#ifndef QUILL_IR_PARSER_H
#define QUILL_IR_PARSER_H

#include "types_fwd.h"

QUILL_BEGIN_DECLS

/* Parse `len` bytes of `text` (need not be NUL-terminated) as a module.
 * `filename` names the text in diagnostics; `line_offset` is added to every
 * line number (for --split-input-file chunks). The text is registered with
 * the context as a source buffer for caret lines. Returns the module
 * (caller destroys it with quill_module_destroy) or NULL after emitting at
 * least one error diagnostic. The module is NOT verified. */
quill_module *quill_parse_module(quill_context *ctx, const char *text,
                                 size_t len, const char *filename,
                                 uint32_t line_offset);

/* Parse just a type, e.g. "tensor<1x3xf32>" (for tools and tests). */
quill_type *quill_parse_type(quill_context *ctx, const char *text, size_t len);

QUILL_END_DECLS

#endif /* QUILL_IR_PARSER_H */

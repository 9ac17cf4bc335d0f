/*
 * printer.h - the textual IR (.qir) printer.
 *
 * print -> parse -> print is byte-identical. Floats are printed as the
 * shortest text that reads back to the same bits; dense tensors of more
 * than 16 elements print as hex blobs. See ir/printer.c for the grammar.
 */
#ifndef QUILL_IR_PRINTER_H
#define QUILL_IR_PRINTER_H

#include <stdio.h>

#include "types_fwd.h"

QUILL_BEGIN_DECLS

typedef struct quill_print_options {
  bool print_locs; /* print file locations too (name locs always print) */
} quill_print_options;

/* Append the module / one graph / one op to sb. opts may be NULL. */
void quill_print_module(const quill_module *m, quill_strbuf *sb,
                        const quill_print_options *opts);
void quill_print_graph(const quill_graph *g, quill_strbuf *sb,
                       const quill_print_options *opts);
/* Prints the op alone, without indentation or newline. Values get the
 * names they would have in a full print of the op's graph (values outside
 * the graph's op list, e.g. results of a detached op, are numbered after). */
void quill_print_op(const quill_op *op, quill_strbuf *sb);

/* Print a module to a stream; QUILL_ERR_IO or QUILL_ERR_NOMEM on failure. */
quill_status quill_module_dump(const quill_module *m, FILE *out,
                               const quill_print_options *opts);

QUILL_END_DECLS

#endif /* QUILL_IR_PRINTER_H */

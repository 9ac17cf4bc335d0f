/*
 * dot.h - graph pictures: a module as Graphviz DOT (and SVG through the
 * Graphviz `dot` program), for `quill-opt --view-graph` and
 * `quill report --graph`.
 *
 *   %input ──1x1x16x16xf32──> [quantize] ──1x1x16x16xi8 0.01225:-51──>
 *       [dequantize] ──1x1x16x16xf32──> [conv2d+relu | /stem/stem.0/Conv |
 *                                        #1 const 16x1x3x3xi8 per-axis(16)]
 *
 * Ops are nodes labelled with the opcode (plus a fused activation), the
 * location name and, one line each, the constant operands folded in (a
 * constant, or a dequantize of a constant, is not drawn as a node of its
 * own: its type goes on the user's label, with its values when it has at
 * most 4 elements). Values are edges labelled with their type: dims, then
 * the element type; quantized types show `scale:zp` (per tensor) or
 * `per-axis(n)`. Graph arguments and the return are ellipses. Colours:
 * quantized ops light blue, quantize/dequantize/requantize/fake_quant grey,
 * float ops in a graph that holds quantization orange (kept float), float
 * ops of a purely float graph white. Several graphs become clusters.
 */
#ifndef QUILL_IR_DOT_H
#define QUILL_IR_DOT_H

#include "ir.h"

QUILL_BEGIN_DECLS

/* How an op relates to quantization, judged from the graph alone (the
 * DOT colours; passes/quant_report.c knows the backend config and decides
 * itself). */
typedef enum quill_op_qclass {
  QUILL_OP_QCLASS_FLOAT,     /* anything else: computes in float */
  QUILL_OP_QCLASS_QUANTIZED, /* an operand or result of quantized element
                                type (integer ops); or a quantized weight
                                operand (dequantize or fake_quant of a
                                constant, not i32); or, with no float
                                constant operand, an operand from
                                dequantize / fake_quant and every use of
                                its result a quantize / fake_quant (the QDQ
                                pattern). A kept-float op without weights
                                between quantized ops looks quantized: the
                                QDQ form cannot tell them apart */
  QUILL_OP_QCLASS_CAST,      /* quantize, dequantize, requantize,
                                fake_quant, scast, dynamic_quantize */
  QUILL_OP_QCLASS_CONSTANT,  /* constant */
  QUILL_OP_QCLASS_OTHER,     /* the return */
} quill_op_qclass;

quill_op_qclass quill_op_quant_class(const quill_op *op);
/* True if an operand or result of op has a quantized element type. */
bool quill_op_has_quant_types(const quill_op *op);

/* An extra label line for an op (e.g. the report's SQNR), or NULL. The
 * string is copied before the next call. */
typedef const char *(*quill_dot_note_fn)(void *ud, const quill_op *op);

typedef struct quill_dot_options {
  quill_dot_note_fn note; /* NULL: no extra lines */
  void *note_ud;          /* passed to note and classify */
  /* The class that picks an op's colour (NULL: quill_op_quant_class). */
  quill_op_qclass (*classify)(void *ud, const quill_op *op);
  const char *dot_program; /* the Graphviz program for .svg (NULL: "dot",
                              looked up on PATH) */
} quill_dot_options;

/* Append the module as one DOT digraph to sb. o may be NULL. */
void quill_dot_print_module(const quill_module *m, quill_strbuf *sb,
                            const quill_dot_options *o);

/* Write the module's picture to `path`: SVG when the name ends in ".svg"
 * (the DOT text is piped through `dot -Tsvg -o PATH`), DOT text otherwise
 * ("-": stdout). Errors are diagnostics located at the path:
 * QUILL_ERR_IO if the file cannot be written, QUILL_ERR_UNSUPPORTED if the
 * dot program cannot be started ("Graphviz 'dot' was not found ...
 * (install graphviz, or write a .dot file)"), QUILL_ERR_IO if it fails. */
quill_status quill_dot_write_file(const quill_module *m, const char *path,
                                  const quill_dot_options *o);

QUILL_END_DECLS

#endif /* QUILL_IR_DOT_H */

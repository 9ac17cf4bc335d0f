/*
 * quill/ir.h - the IR: contexts (allocator funnel, interning, diagnostics),
 * uniqued types and attributes, modules, graphs, ops and values, the
 * textual form (printer, parser) and the verifier; plus the integer
 * arithmetic of quantization (ir/quant.h), graph pictures (Graphviz
 * DOT/SVG, ir/dot.h) and bounded file reads (ir/readfile.h).
 */
#ifndef QUILL_API_IR_H
#define QUILL_API_IR_H

#include "ir/ir.h"
#include "ir/quant.h"
#include "ir/dot.h"
#include "ir/readfile.h"

QUILL_BEGIN_DECLS

/* The graph a module runs or compiles: the one named `name`, or the
 * module's first graph if name is NULL. Borrowed from the module. NULL
 * after an error diagnostic ("no function named 'x' in the module", "the
 * module has no function"). */
quill_graph *quill_module_entry(const quill_module *m, const char *name);

QUILL_END_DECLS

#endif /* QUILL_API_IR_H */

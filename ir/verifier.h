/*
 * verifier.h - structural and op-specific IR verification.
 *
 * Generic checks (for every op): operand and result counts against ops.def,
 * operands defined in the same graph before their use (dominance in a
 * single-block graph), non-null types, exactly one terminator at the end,
 * return operand types equal the graph's result types, unique graph names.
 * Then each op's verifier from ops.def runs. All problems are reported as
 * located diagnostics; nothing aborts.
 */
#ifndef QUILL_IR_VERIFIER_H
#define QUILL_IR_VERIFIER_H

#include "types_fwd.h"

QUILL_BEGIN_DECLS

/* QUILL_OK if valid, else QUILL_ERR_INVALID with diagnostics emitted.
 * Keeps going after the first error to report as many as it can. */
quill_status quill_verify_module(const quill_module *m);
quill_status quill_verify_graph(const quill_graph *g);
quill_status quill_verify_op(const quill_op *op);

QUILL_END_DECLS

#endif /* QUILL_IR_VERIFIER_H */

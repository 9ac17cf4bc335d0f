/*
 * ir.h - umbrella header for the Quill IR.
 *
 * Public headers include each other by relative paths ("types_fwd.h",
 * "../ir/ir.h"), so they work both in the source tree and installed under
 * <prefix>/include/quill/ (docs/c-api.md).
 */
#ifndef QUILL_IR_IR_H
#define QUILL_IR_IR_H

#include "types_fwd.h"
#include "context.h"
#include "type.h"
#include "attr.h"
#include "ops.h"
#include "graph.h"
#include "strbuf.h"
#include "writefile.h"
#include "printer.h"
#include "parser.h"
#include "verifier.h"
#include "custom_op.h"

#endif /* QUILL_IR_IR_H */

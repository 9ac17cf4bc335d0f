/*
 * ir.h - umbrella header for the Quill IR.
 */
#ifndef QUILL_IR_IR_H
#define QUILL_IR_IR_H

#include "ir/types_fwd.h"
#include "ir/context.h"
#include "ir/type.h"
#include "ir/attr.h"
#include "ir/ops.h"
#include "ir/graph.h"
#include "ir/strbuf.h"
#include "ir/printer.h"
#include "ir/parser.h"
#include "ir/verifier.h"

#endif /* QUILL_IR_IR_H */

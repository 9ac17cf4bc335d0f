/*
 * custom_op_registry.h - the parts of the custom op registry
 * (ir/custom_op.c) that only the plugin loader (passes/plugin.c) uses:
 * registering on behalf of a plugin, and cutting the registry back when a
 * plugin's load fails. Not a public header (hidden in libquill.so).
 */
#ifndef QUILL_IR_CUSTOM_OP_REGISTRY_H
#define QUILL_IR_CUSTOM_OP_REGISTRY_H

#include "ir/custom_op.h"

/* quill_custom_op_register with the registering plugin's name as origin
 * (NULL: the application), errors located at `loc` and prefixed by `who`
 * ("pass plugin 'x': " or ""). */
quill_status quill_custom_op_register_from(quill_context *ctx,
                                           const quill_custom_op *op,
                                           const char *origin, quill_loc loc,
                                           const char *who);

/* Forget every kind registered after the first n (a failed plugin load). */
void quill_custom_op_truncate(quill_context *ctx, unsigned n);

#endif /* QUILL_IR_CUSTOM_OP_REGISTRY_H */

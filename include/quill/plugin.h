/*
 * quill/plugin.h - what a plugin includes: the IR, passes, patterns, the
 * plugin ABI (QUILL_PLUGIN, passes/plugin.h), custom ops (ir/custom_op.h)
 * with host tensors and the integer arithmetic their evaluators use
 * (targets/reference/ref.h, ir/quant.h via ir.h), and backend configs. See
 * examples/plugins/ (passes) and examples/backends/acme-npu/ (a vendor
 * backend: fusions, a custom op, an exporter) for complete plugins and
 * their CMakeLists.txt.
 */
#ifndef QUILL_API_PLUGIN_H
#define QUILL_API_PLUGIN_H

#include "passes.h"
#include "run.h"
#include "backends/backend.h"

#endif /* QUILL_API_PLUGIN_H */

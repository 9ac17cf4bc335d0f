/*
 * quill/plugin.h - what a pass plugin includes: the IR, passes, patterns
 * and the plugin ABI (QUILL_PLUGIN, passes/plugin.h). See
 * examples/plugins/ for complete plugins and their CMakeLists.txt.
 */
#ifndef QUILL_API_PLUGIN_H
#define QUILL_API_PLUGIN_H

#include "passes.h"

#endif /* QUILL_API_PLUGIN_H */

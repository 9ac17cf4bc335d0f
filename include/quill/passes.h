/*
 * quill/passes.h - passes and pipelines (the pass manager), rewrite
 * patterns and the greedy driver, and passes and pattern sets registered
 * at run time, by the application or by pass plugins.
 */
#ifndef QUILL_API_PASSES_H
#define QUILL_API_PASSES_H

#include "ir.h"
#include "passes/pass.h"
#include "passes/rewriter.h"
#include "passes/plugin.h"

#endif /* QUILL_API_PASSES_H */

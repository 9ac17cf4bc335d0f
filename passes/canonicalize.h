/*
 * canonicalize.h - the canonicalization patterns, for reuse outside the
 * `canonicalize` pass (e.g. a pass that wants them mixed with its own).
 */
#ifndef QUILL_PASSES_CANONICALIZE_H
#define QUILL_PASSES_CANONICALIZE_H

#include "passes/rewriter.h"

/* Add every canonicalization pattern to `set` (static patterns; the set
 * only keeps pointers). Returns QUILL_ERR_NOMEM on allocation failure. */
quill_status quill_populate_canonicalize_patterns(quill_pattern_set *set);

#endif /* QUILL_PASSES_CANONICALIZE_H */

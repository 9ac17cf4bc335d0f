/*
 * registry.c - the table of built-in passes, generated from passes.def.
 *
 * passes/passes.def lists every built-in pass once:
 *
 *   QUILL_PASS(cse, "cse", "Merge identical pure ops ...")
 *
 * Including it here with QUILL_PASS expanding to `&quill_pass_<id>,` yields
 * the registry array in --help order. Each descriptor is a const object
 * defined in passes/<id>.c, so adding a pass means one .def row and one
 * file; there is no hand-kept registration list. The table is const: the
 * registry holds no mutable state.
 */
#include <string.h>

#include "passes/pass.h"

static const quill_pass *const registry[] = {
#define QUILL_PASS(id, name, summary) &quill_pass_##id,
#include "passes/passes.def"
#undef QUILL_PASS
};

/* The names in passes.def, used to cross-check the descriptors' own
 * `.name` fields (a mismatch would make lookup by pipeline name and
 * --help disagree). */
static const char *const registry_names[] = {
#define QUILL_PASS(id, name, summary) name,
#include "passes/passes.def"
#undef QUILL_PASS
};

unsigned quill_pass_registry_size(void) {
  return (unsigned)(sizeof registry / sizeof registry[0]);
}

const quill_pass *quill_pass_registry_at(unsigned i) {
  if (i >= quill_pass_registry_size())
    return NULL;
  return registry[i];
}

/* Linear search: the registry has a handful of entries, and pipelines are
 * parsed once per run. */
const quill_pass *quill_pass_lookup(const char *name, size_t len) {
  if (!name)
    return NULL;
  for (unsigned i = 0; i < quill_pass_registry_size(); ++i) {
    const char *n = registry_names[i];
    if (strlen(n) == len && memcmp(n, name, len) == 0)
      return registry[i];
  }
  return NULL;
}

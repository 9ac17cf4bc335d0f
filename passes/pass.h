/*
 * pass.h - passes, the pass registry and the pass manager.
 *
 * A pass is a const descriptor. The registry (passes/passes.def) lists the
 * built-in passes once; it feeds the manager's name lookup and quill-opt's
 * --help. Passes declare the IR properties they require and preserve; the
 * manager runs the pass that establishes a missing required property first
 * (e.g. a pass requiring QUILL_PROP_NO_DEAD_OPS gets `dce` run before it)
 * and invalidates whatever a pass does not preserve (libfirm's assure /
 * confirm, in declarative form).
 *
 *   quill_pass_manager *pm = quill_pass_manager_create(ctx);
 *   quill_pass_manager_parse_pipeline(pm, "canonicalize{max-iterations=4},cse,dce");
 *   status = quill_pass_manager_run(pm, module);
 *   quill_pass_manager_destroy(pm);
 */
#ifndef QUILL_PASSES_PASS_H
#define QUILL_PASSES_PASS_H

#include <stdio.h>

#include "../ir/ir.h"

QUILL_BEGIN_DECLS

/* IR properties a pass may require, establish or preserve. */
enum {
  QUILL_PROP_NO_DEAD_OPS = 1u << 0,   /* no pure op without uses (dce) */
  QUILL_PROP_NO_COMMON_SUBEXPR = 1u << 1, /* no two equal pure ops (cse) */
  QUILL_PROP_CONSTANTS_FOLDED = 1u << 2,  /* no foldable op (constant-fold) */
  QUILL_PROP_CANONICAL = 1u << 3,     /* canonicalize reached a fixpoint */
  QUILL_PROP_ALL = 0xffffffffu,
};

typedef struct quill_pass_state quill_pass_state;

typedef struct quill_pass {
  const char *name;    /* pipeline name, e.g. "constant-fold" */
  const char *summary; /* one line for --help */
  /* Run over the whole module. Return QUILL_OK or an error status after
   * emitting a diagnostic. */
  quill_status (*run)(quill_pass_state *ps, quill_module *m);
  unsigned requires;    /* QUILL_PROP_* the manager must establish first */
  unsigned establishes; /* QUILL_PROP_* true after a successful run */
  unsigned preserves;   /* QUILL_PROP_* left valid (others invalidated) */
  /* Documented options, e.g. "max-iterations=N other=BOOL", or NULL. The
   * manager accepts only these keys; a value documented as N must be an
   * integer and one documented as BOOL true/false (checked when parsing). */
  const char *options;
} quill_pass;

/* ---- registry ---------------------------------------------------------- */

#define QUILL_PASS(id, name, summary) extern const quill_pass quill_pass_##id;
#include "passes.def"
#undef QUILL_PASS

/* Built-in passes in registry order. */
unsigned quill_pass_registry_size(void);
const quill_pass *quill_pass_registry_at(unsigned i);
/* Find a built-in pass by name (NULL if none). Passes registered at run
 * time (passes/plugin.h) are found with quill_pass_find(ctx, ...). */
const quill_pass *quill_pass_lookup(const char *name, size_t len);

/* ---- what a running pass sees ------------------------------------------ */

quill_context *quill_pass_context(quill_pass_state *ps);
const quill_pass *quill_pass_current(quill_pass_state *ps);
/* Pass options from the pipeline text ("name{key=value key2=value2}"). */
const char *quill_pass_option(quill_pass_state *ps, const char *key);
/* Integer option with default; an unparsable value is reported and the
 * default returned with *err set (err may be NULL). */
int64_t quill_pass_option_int(quill_pass_state *ps, const char *key,
                              int64_t dflt, quill_status *err);
/* A non-string input handed to the manager with quill_pass_manager_set_input
 * (e.g. "calibration-data", a quill_calib_dataset *), or NULL if none was
 * set under `key`. Borrowed: the pass must not free it. */
void *quill_pass_input(quill_pass_state *ps, const char *key);
/* Add n to the named statistic of the current pass (--pass-statistics). */
void quill_pass_stat_add(quill_pass_state *ps, const char *stat, uint64_t n);
/* Mark that the pass changed nothing (lets the manager keep properties). */
void quill_pass_mark_unchanged(quill_pass_state *ps);
/* Debug output on the pass's own channel (--debug-only=<pass name>). */
void quill_pass_debug(quill_pass_state *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- the manager -------------------------------------------------------- */

typedef struct quill_pass_manager quill_pass_manager;

/* Every call should be paired with quill_pass_manager_destroy(). */
quill_pass_manager *quill_pass_manager_create(quill_context *ctx);
void quill_pass_manager_destroy(quill_pass_manager *pm);

/* Append a pass by name with an option string (may be NULL). The name is
 * looked up with quill_pass_find (built-in passes, then passes registered
 * with the context: passes/plugin.h). Unknown name: error diagnostic,
 * QUILL_ERR_INVALID. */
quill_status quill_pass_manager_add(quill_pass_manager *pm, const char *name,
                                    const char *options);
/* Append a pass by descriptor (for plugins and tests). */
quill_status quill_pass_manager_add_pass(quill_pass_manager *pm,
                                         const quill_pass *pass,
                                         const char *options);
/* Parse "a,b{k=v},c" and append each pass. Reports the column of errors. */
quill_status quill_pass_manager_parse_pipeline(quill_pass_manager *pm,
                                               const char *pipeline);

/* Hand a non-string input to the passes of this manager under `key` (the
 * key is copied). Pipeline text can only carry strings; this carries what
 * cannot be written in it, such as an in-memory calibration dataset. Keys
 * in use:
 *
 *   "calibration-data"   quill_calib_dataset * (passes/calib_data.h), read
 *                        by `calibrate`, `equalize` and `bias-correction`
 *                        when they have no data= option
 *   "accuracy-log"       quill_strbuf *: `equalize` and `bias-correction`
 *                        append a line for each pair / layer they change
 *
 * The value is borrowed: the caller keeps ownership and must keep it alive
 * until the last quill_pass_manager_run() returns. Setting a key again
 * replaces the value; value NULL removes it. QUILL_ERR_NOMEM on allocation
 * failure (nothing changed). */
quill_status quill_pass_manager_set_input(quill_pass_manager *pm,
                                          const char *key, void *value);

typedef struct quill_pass_manager_options {
  bool verify_each;         /* verify after each pass (default true) */
  bool print_ir_after_all;  /* dump IR after every pass */
  bool print_ir_before_all; /* dump IR before every pass */
  const char *print_ir_before; /* comma-separated pass names, or NULL */
  const char *print_ir_after;  /* comma-separated pass names, or NULL */
  bool time_passes;         /* collect wall-clock time per pass */
  bool statistics;          /* collect and report pass statistics */
  FILE *dump_stream;        /* where IR dumps and reports go (stderr if NULL) */
} quill_pass_manager_options;

void quill_pass_manager_set_options(quill_pass_manager *pm,
                                    const quill_pass_manager_options *o);
/* Run the pipeline. Stops at the first failing pass or verifier failure
 * (which is reported as "verifier failed after pass 'X'"). */
quill_status quill_pass_manager_run(quill_pass_manager *pm, quill_module *m);
/* Print the --time-passes and --pass-statistics reports (if enabled). */
void quill_pass_manager_report(quill_pass_manager *pm);

QUILL_END_DECLS

#endif /* QUILL_PASSES_PASS_H */

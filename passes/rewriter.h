/*
 * rewriter.h - rewrite patterns, the rewriter and the greedy driver.
 *
 * A pattern matches an op DAG rooted at one op and rewrites it. Its rule
 * (MLIR's): match first, mutate only after committing, and mutate only
 * through quill_rewriter_* so the driver sees every change. A pattern that
 * does not apply returns quill_rewriter_fail(rw, op, "reason"), which logs the
 * reason on the debug channel.
 *
 * The greedy driver keeps a worklist of ops, applies the highest-benefit
 * matching pattern to each, re-enqueues what a rewrite touched (new ops,
 * users of replaced values, defining ops of erased operands) and erases
 * trivially dead pure ops, until nothing changes or max_iterations sweeps.
 */
#ifndef QUILL_PASSES_REWRITER_H
#define QUILL_PASSES_REWRITER_H

#include "../ir/ir.h"

QUILL_BEGIN_DECLS

typedef struct quill_rewriter quill_rewriter;

typedef enum quill_match_result {
  QUILL_MATCH_FAILURE = 0, /* did not apply; IR untouched */
  QUILL_MATCH_SUCCESS = 1, /* applied */
  QUILL_MATCH_ERROR = -1,  /* a hard error (diagnostic emitted) */
} quill_match_result;

typedef struct quill_pattern quill_pattern;
struct quill_pattern {
  const char *name;
  int root;         /* a quill_opcode, or -1 to be tried on every op */
  unsigned benefit; /* higher is tried first */
  quill_match_result (*match_and_rewrite)(const quill_pattern *p,
                                          quill_rewriter *rw, quill_op *op);
  const void *data; /* pattern-specific constant data */
};

/* ---- pattern sets -------------------------------------------------------- */

typedef struct quill_pattern_set quill_pattern_set;
/* Every call should be paired with quill_pattern_set_destroy(). */
quill_pattern_set *quill_pattern_set_create(quill_context *ctx);
void quill_pattern_set_destroy(quill_pattern_set *s);
/* The set keeps the pointer: patterns must outlive the set (usually static
 * const). */
quill_status quill_pattern_set_add(quill_pattern_set *s, const quill_pattern *p);
unsigned quill_pattern_set_size(const quill_pattern_set *s);

/* ---- the rewriter (what a pattern may do) -------------------------------- */

quill_context *quill_rewriter_context(quill_rewriter *rw);
/* Report why a pattern did not apply; returns QUILL_MATCH_FAILURE. */
quill_match_result quill_rewriter_fail(quill_rewriter *rw, const quill_op *op,
                                       const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* New ops are inserted before the insertion point (by default: before the
 * op being rewritten). */
void quill_rewriter_set_insertion_point(quill_rewriter *rw, quill_op *before);
/* Create and insert an op; NULL on allocation failure. */
quill_op *quill_rewriter_create_op(quill_rewriter *rw, quill_opcode opc,
                                   unsigned num_operands,
                                   quill_value *const *operands,
                                   unsigned num_results,
                                   quill_type *const *result_types,
                                   unsigned num_attrs,
                                   const quill_named_attr *attrs,
                                   quill_loc loc);
/* Create a constant op holding a dense attr; returns its result or NULL. */
quill_value *quill_rewriter_create_constant(quill_rewriter *rw,
                                            const quill_attr *dense,
                                            quill_loc loc);
/* Replace every result of op by the given values, then erase op. */
void quill_rewriter_replace_op(quill_rewriter *rw, quill_op *op,
                               quill_value *const *new_values);
/* Replace uses of one value. */
void quill_rewriter_replace_all_uses(quill_rewriter *rw, quill_value *from,
                                     quill_value *to);
/* Erase an op whose results have no uses. */
void quill_rewriter_erase_op(quill_rewriter *rw, quill_op *op);
/* In-place updates. */
void quill_rewriter_set_operand(quill_rewriter *rw, quill_op *op, unsigned i,
                                quill_value *v);
quill_status quill_rewriter_set_attr(quill_rewriter *rw, quill_op *op,
                                     const char *name, const quill_attr *a);
void quill_rewriter_set_result_type(quill_rewriter *rw, quill_op *op,
                                    unsigned i, quill_type *t);

/* ---- the greedy driver ---------------------------------------------------- */

typedef struct quill_greedy_config {
  unsigned max_iterations; /* sweeps over the worklist; 0 means 10 */
  bool remove_dead_ops;    /* erase pure ops without uses (default true) */
  const char *debug_channel; /* channel for match logs (NULL: "rewriter") */
} quill_greedy_config;

/* Apply patterns to every op of g until a fixpoint. *changed (may be NULL)
 * tells whether anything changed; *num_rewrites (may be NULL) counts
 * successful rewrites. Not converging within max_iterations is reported as a
 * warning and is not an error. */
quill_status quill_apply_patterns_greedily(quill_graph *g,
                                           const quill_pattern_set *patterns,
                                           const quill_greedy_config *cfg,
                                           bool *changed,
                                           uint64_t *num_rewrites);
/* quill_apply_patterns_greedily on every graph of m in turn, stopping at
 * the first error. *changed (may be NULL): whether any graph changed;
 * *num_rewrites (may be NULL): the rewrites of all graphs. */
quill_status quill_apply_patterns_module(quill_module *m,
                                         const quill_pattern_set *patterns,
                                         const quill_greedy_config *cfg,
                                         bool *changed,
                                         uint64_t *num_rewrites);

QUILL_END_DECLS

#endif /* QUILL_PASSES_REWRITER_H */
